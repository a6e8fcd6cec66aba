"""The gallery attention's forward plans (examples/flash_attention/stage3.py, issue 38): every kind of plan computes
attention, the plan table is one a sweep's line can be pasted into, and a plan that cannot run here says why.

TMA descriptors and warp specialization only compile for a Hopper GPU; their kernel logic still runs under Triton's
interpreter when launched directly (_forward_tma), which is what the CPU test does. Whether the GPU's compiler
really warp-specializes is measured by benchmarks/explore/attention_sweep.py (PART=attn), not asserted here.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STAGE3 = ROOT / "examples" / "flash_attention" / "stage3.py"
RMS3 = ROOT / "examples" / "rmsnorm" / "stage3.py"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# A process of its own: TRITON_INTERPRET is read when triton.jit decorates.
_INTERPRETED = r"""
import importlib.util, math, torch, torch.nn.functional as F
spec = importlib.util.spec_from_file_location("st3", STAGE3)
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
P = m.FwdPlan
torch.manual_seed(0)
plans = [P("split", 64, 32, 4, 1), P("split", 32, 16, 4, 1), P("ptr", 64, 32, 4, 1, maxnreg=128),
         P("tma", 64, 32, 4, 2, desc="4d", ws=True), P("tma", 64, 32, 4, 2, desc="4d", ws=True, device_desc=True),
         P("tma", 64, 32, 4, 2, desc="2d", ws=True, device_desc=True)]
for causal in (True, False):
    for S in (77, 128):  # 77: partial query and key blocks (masked tails), 128: every block full
        for plan in plans:
            if plan.desc == "2d" and S % plan.block_m:
                continue  # 2-D descriptors need S % BLOCK_M == 0 (tma_refusal says so)
            q, k, v = (torch.randn(1, 2, S, 32, dtype=torch.float16) for _ in range(3))
            if plan.kind == "tma":
                o, lse = torch.empty_like(q), torch.empty(2, S)
                m._forward_tma(q, k, v, o, lse, causal, plan)
            else:
                o, lse = m.forward(q, k, v, causal, store_lse=True, plan=plan)
            qf, kf, vf = q.float(), k.float(), v.float()
            ref = F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal)
            s = qf @ kf.transpose(-1, -2) / math.sqrt(32)
            if causal:
                s = s.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
            lse_ref = (torch.logsumexp(s, -1) * m.LOG2E).reshape(2, S)
            err, lerr = (o.float() - ref).abs().max().item(), (lse - lse_ref).abs().max().item()
            assert err < 5e-3 and lerr < 1e-3, (causal, S, plan, err, lerr)
print("ok")
"""


# The corpus command: every attention plan of the gallery's stage 3 under the interpreter; the gallery's whole
# validation is in the corpus command too.
@pytest.mark.corpus
def test_every_plan_kind_computes_attention_under_the_interpreter() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    code = f"STAGE3 = {str(STAGE3)!r}\n" + _INTERPRETED
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_plan_tables_hold_runnable_entries() -> None:
    st3 = _load(STAGE3, "p2t_test_fa_stage3_tables")
    for (causal, d), plan in {**st3.FWD_PLANS, **{(None, k): p for k, p in st3.PTR_FALLBACK.items()}}.items():
        assert isinstance(plan, st3.FwdPlan), (causal, d, plan)
        assert plan.kind in ("ptr", "split", "tma"), plan
        assert plan.block_m % plan.block_n == 0, f"{plan}: the causal diagonal pass needs BLOCK_M % BLOCK_N == 0"
        for side in (plan.block_m, plan.block_n, plan.warps):
            assert side > 0 and side & (side - 1) == 0, f"{plan}: tile sides and num_warps are powers of 2"
        assert plan.desc in ("2d", "4d") and plan.stages >= 1
        if plan.kind == "split":
            assert plan.block_m >= 32, f"{plan}: each half feeds tl.dot, which needs 16+ rows"
    assert all(p.kind != "tma" for p in st3.PTR_FALLBACK.values()), "the fallback must run without TMA"
    for pair in st3.BWD_PLANS.values():
        dkdv, dq = pair
        assert dkdv[1] % dkdv[0] == 0 and dq[0] % dq[1] == 0, pair


def test_a_tma_plan_off_hopper_is_refused_with_the_reason() -> None:
    import torch

    st3 = _load(STAGE3, "p2t_test_fa_stage3_refusal")
    q = torch.zeros(1, 1, 128, 64, dtype=torch.float16)
    plan = st3.FwdPlan("tma", 128, 64, 4, 2, ws=True, device_desc=True)
    assert "compute-capability-9" in st3.tma_refusal(q, q, q, plan)
    with pytest.raises(ValueError, match="cannot run here: TMA descriptors need"):
        st3.forward(q, q, q, True, plan=plan)
    with pytest.raises(ValueError, match="kind must be"):
        st3.forward(q, q, q, True, plan=st3.FwdPlan("wgmma", 128, 64, 8, 3))
    # the gallery's default path never takes a plan it cannot run: off Hopper a "tma" entry falls back
    saved = st3.FWD_PLANS[(True, 64)]
    try:
        st3.FWD_PLANS[(True, 64)] = plan
        chosen = st3.plan_for(q, q, q, True)
        assert chosen is None or chosen.kind != "tma", chosen
    finally:
        st3.FWD_PLANS[(True, 64)] = saved


def test_rmsnorm_pin_tables_hold_runnable_entries() -> None:
    import torch

    rms = _load(RMS3, "p2t_test_rms_stage3_tables")
    for (block_n, dtype), pin in rms.FWD_PINS.items():
        assert isinstance(dtype, torch.dtype), f"FWD_PINS keys are (BLOCK_N, x dtype), got {dtype!r}"
        assert block_n & (block_n - 1) == 0 and set(pin) <= {"ROWS", "PPS", "RBLOCK", "num_warps", "LATE_W"}, pin
        if pin["RBLOCK"]:
            assert pin["ROWS"] == 1 and pin["PPS"] == 0, f"{pin}: two passes run one row per program"
            assert pin["RBLOCK"] <= block_n
        cfg = rms._pin_config(pin)
        assert cfg.num_warps == pin["num_warps"] and "num_warps" not in cfg.kwargs
    for block_n, (rows, per_sm, warps) in rms.BWD_PINS.items():
        assert rows >= 1 and per_sm >= 1 and warps & (warps - 1) == 0 and rows * block_n <= 16384
