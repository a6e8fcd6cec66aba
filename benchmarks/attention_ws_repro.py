"""An sm_90 compile of flash attention stage 3's plans on the CPU (issue 47; tests/test_attention_plans.py runs it).

    PYTHONPATH=$PWD/server python benchmarks/attention_ws_repro.py [--plans [--candidates]]

Triton's Hopper warp specialization (3.6 and 3.9) takes one key loop with no dot after it whose row max or sum is
broadcast back (examples/flash_attention/README.md, round 5), so the causal forward runs one loop masked throughout:
the `masked_loop` case, which must compile to 384 threads (a TMA producer warpgroup, two consumers) with setmaxnreg.
--plans compiles stage 3's plan tables, --candidates the sweep's too, each job in a child process (an MLIR abort kills
only it): OK with the compiled facts (specialized, threads, setmaxnreg, registers, spill bytes, shared memory) or FAIL.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGE3 = ROOT / "examples" / "flash_attention" / "stage3.py"
SMEM_LIMIT = 232448  # H100/H200 per-block dynamic shared memory (227 KiB)
CASES = ["masked_loop"]

os.environ.pop("TRITON_INTERPRET", None)  # a real compile, whatever the caller's environment says

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def ws_repro_kernel(q_ptr, k_ptr, o_ptr, N, CASE: tl.constexpr, BLOCK: tl.constexpr, D: tl.constexpr):
    """Rows [start, start + BLOCK) against keys [0, start + BLOCK) (a causal tile) in one warp-specialized loop,
    the causal mask applied in every block (CASE 0: masked_loop)."""
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[N, D], strides=[D, 1], block_shape=[BLOCK, D])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[N, D], strides=[D, 1], block_shape=[BLOCK, D])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[N, D], strides=[D, 1], block_shape=[BLOCK, D])
    start = tl.program_id(0) * BLOCK
    offs_m = start + tl.arange(0, BLOCK)
    q = q_desc.load([start, 0])
    acc = tl.zeros((BLOCK, D), dtype=tl.float32)
    m_i = tl.zeros((BLOCK,), dtype=tl.float32)
    for start_n in tl.range(0, start + BLOCK, BLOCK, warp_specialize=True):
        k = k_desc.load([start_n, 0])
        qk = tl.where(offs_m[:, None] >= (start_n + tl.arange(0, BLOCK))[None, :], tl.dot(q, tl.trans(k)),
                      float("-inf"))
        m_i = tl.maximum(m_i, tl.max(qk, axis=1))
        acc = tl.dot(tl.exp2(qk - m_i[:, None]).to(k.dtype), k, acc)
    o_desc.store([start, 0], acc.to(o_desc.dtype))


def compile_sm90(fn, signature: dict, constexprs: dict, num_warps: int, num_stages: int, **options) -> dict:
    """Compile a @triton.jit function for sm_90 in this process (no GPU needed); the compiled facts."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig = {**signature, **{k: "constexpr" for k in constexprs}}
    # divisibility 16 where the benchmark's real launch has it (pointers, strides, S, H): the JIT's specialization
    attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n, t in signature.items()
             if t.startswith("*") or n.startswith("stride") or n in ("S", "H", "N")}
    k = triton.compile(ASTSource(fn, sig, constexprs, attrs), target=GPUTarget("cuda", 90, 32),
                       options=dict(num_warps=num_warps, num_stages=num_stages, **options))
    ttgir, ptx = k.asm["ttgir"], k.asm["ptx"]
    threads = re.search(r"\.(?:maxntid|reqntid)\s+(\d+)", ptx)
    facts = {"ws": "ttg.warp_specialize" in ttgir, "threads": int(threads.group(1)) if threads else 32 * num_warps,
             "setmaxnreg": sorted({f"{a}{b}" for a, b in re.findall(r"setmaxnreg\.(inc|dec)\S*\s+(\d+)", ptx)}),
             "shared": int(k.metadata.shared), "wgmma": ptx.count("wgmma.mma_async")}
    facts.update(_resources(k.asm.get("cubin", b"")))
    if facts["shared"] > SMEM_LIMIT:
        facts["over_smem"] = True
    return facts


def _resources(cubin: bytes) -> dict:
    """Registers and spill bytes (stack + local) from the cubin, through the cuobjdump in Triton's wheel."""
    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    if not cubin or not tool.exists():
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    try:
        out = subprocess.run([str(tool), "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    m = re.search(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)", out)
    return {"regs": int(m.group(1)), "spill_bytes": int(m.group(2)) + int(m.group(4))} if m else {}


@functools.lru_cache(maxsize=1)
def _stage3():
    spec = importlib.util.spec_from_file_location("p2t_fa_stage3_compile", STAGE3)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _signature(fn, constexprs: dict, fp32_ptrs: tuple[str, ...] = ("lse_ptr", "delta_ptr")) -> dict:
    """The non-constexpr arguments' types as the JIT would see them for bf16 (B, H, S, D) tensors with unit last
    stride (stride_*d: the constant 1 a real launch specializes)."""
    sig = {}
    for name in fn.arg_names:
        if name in constexprs:
            continue
        if name.endswith(("_ptr", "_desc")):
            sig[name] = "*fp32" if name in fp32_ptrs else "*bf16"
        elif name in ("qk_scale", "sm_scale"):
            sig[name] = "fp32"
        else:
            sig[name] = "i32"
    return sig


def plan_launch(st3, causal: bool, d: int, plan, S: int = 4096) -> tuple:
    """(kernel, signature, constexprs, options) of the forward launch a FwdPlan makes at (B4 H32) S, D, bf16."""
    if plan.kind == "tma":
        fn = st3.attention_fwd_tma_kernel
        const = dict(HEAD_DIM=d, CAUSAL=causal, STORE_LSE=True, DESC_4D=plan.desc == "4d",
                     DEVICE_DESC=plan.device_desc, WARP_SPECIALIZE=plan.ws, PERSISTENT=bool(plan.persistent),
                     EVEN_N=S % plan.block_n == 0, BLOCK_M=plan.block_m, BLOCK_N=plan.block_n)
        if not plan.device_desc:
            raise ValueError("host TensorDescriptor plans are not compiled here (device_desc=True only)")
    else:
        fn = st3.attention_fwd_split_kernel if plan.kind == "split" else st3.attention_fwd_kernel
        const = dict(HEAD_DIM=d, CAUSAL=causal, EVEN_S=S % max(plan.block_m, plan.block_n) == 0, STORE_LSE=True,
                     UPCAST_DOT=False, BLOCK_M=plan.block_m, BLOCK_N=plan.block_n, LAZY_TAU=float(plan.lazy))
        const.update({n: 1 for n in fn.arg_names if n.startswith("stride_") and n.endswith("d")})
    const["EXP2_EMUL"] = plan.emul
    opts = {} if plan.maxnreg is None else {"maxnreg": plan.maxnreg}
    return fn, _signature(fn, const), const, dict(num_warps=plan.warps, num_stages=plan.stages, **opts)


def bwd_launches(st3, causal: bool, d: int, plan, S: int = 4096) -> list[tuple]:
    """[(name, kernel, signature, constexprs, options)] of the backward kernels a BwdPlan launches."""
    out = []
    if plan.kind == "tma":
        bm, bn, w, st = plan.dkdv
        fn = st3.attention_bwd_dkdv_tma_kernel
        const = dict(HEAD_DIM=d, CAUSAL=causal, WARP_SPECIALIZE=plan.ws, FUSED_DQ=plan.fused_dq, BLOCK_M=bm,
                     BLOCK_N=bn, EXP2_EMUL=plan.emul)
        fp32 = ("lse_ptr", "delta_ptr") + (("dq_ptr",) if plan.fused_dq else ())
        out.append(("dkdv_tma", fn, _signature(fn, const, fp32), const, dict(num_warps=w, num_stages=st)))
    else:
        bm, bn, w, st = plan.dkdv
        fn = st3.attention_bwd_dkdv_kernel
        const = dict(HEAD_DIM=d, CAUSAL=causal, EVEN_S=S % bn == 0, UPCAST_DOT=False, BLOCK_M=bm, BLOCK_N=bn,
                     EXP2_EMUL=plan.emul)
        const.update({n: 1 for n in fn.arg_names if n.startswith("stride_") and n.endswith("d")})
        out.append(("dkdv", fn, _signature(fn, const), const, dict(num_warps=w, num_stages=st)))
    if plan.dq_ws:
        bm, bn, w, st = plan.dq
        fn = st3.attention_bwd_dq_tma_kernel
        const = dict(HEAD_DIM=d, CAUSAL=causal, WARP_SPECIALIZE=True, BLOCK_M=bm, BLOCK_N=bn, EXP2_EMUL=plan.emul)
        out.append(("dq_tma", fn, _signature(fn, const), const, dict(num_warps=w, num_stages=st)))
    elif not plan.fused_dq:
        bm, bn, w, st = plan.dq
        fn = st3.attention_bwd_dq_kernel
        const = dict(HEAD_DIM=d, CAUSAL=causal, EVEN_S=S % bm == 0, UPCAST_DOT=False, BLOCK_M=bm, BLOCK_N=bn,
                     EXP2_EMUL=plan.emul)
        const.update({n: 1 for n in fn.arg_names if n.startswith("stride_") and n.endswith("d")})
        out.append(("dq", fn, _signature(fn, const), const, dict(num_warps=w, num_stages=st)))
    return out


def compile_jobs(jobs: list[dict]) -> list[dict]:
    """Compile the jobs in child processes, one after another in one child (torch and stage 3 imported once); a
    child killed by an MLIR abort loses only its current job, which is answered with the pass's message."""
    rows: list[dict] = []
    code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import attention_ws_repro as r; r._run_jobs()"
    while len(rows) < len(jobs):
        rest = jobs[len(rows):]
        done = subprocess.run([sys.executable, "-c", code], input=json.dumps(rest), capture_output=True, text=True,
                              timeout=120 + 60 * len(rest), env={**os.environ, "TRITON_DEFAULT_FP_FUSION": "1"})
        got = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
        # the pass's own words (the assertion's file:line, the pass that failed), in order of the failed jobs
        why = [re.sub(r"^.*?(\w+\.cpp:\d+)", r"\1", ln).strip()[:160] for ln in done.stderr.splitlines()
               if "Assertion" in ln or "Pipeline failed while executing" in ln]
        for row in got:
            if not row["ok"] and why:
                take = 2 if len(why) > 1 and "Assertion" in why[0] else 1
                row["error"] = " | ".join([row["error"]] + why[:take])
                why = why[take:]
        if len(got) < len(rest):  # the child died on the next job
            got.append({"ok": False, "error": " | ".join([f"the compile process died (rc {done.returncode})"]
                                                         + why[:2])})
        rows.extend(got)
    return rows


def _run_jobs() -> None:
    for job in json.loads(sys.stdin.read()):
        print(json.dumps(_one(job)), flush=True)


def _one(job: dict) -> dict:
    try:
        if job["what"] == "case":
            facts = compile_sm90(ws_repro_kernel, {"q_ptr": "*bf16", "k_ptr": "*bf16", "o_ptr": "*bf16", "N": "i32"},
                                 dict(CASE=CASES.index(job["case"]), BLOCK=128, D=64), num_warps=4, num_stages=2)
        else:
            st3 = _stage3()
            causal, d = job["causal"], job["d"]
            if job["what"] == "fwd":
                fn, sig, const, opts = plan_launch(st3, causal, d, eval(job["plan"], vars(st3)))  # noqa: S307
            else:
                launches = bwd_launches(st3, causal, d, eval(job["plan"], vars(st3)))  # noqa: S307
                _, fn, sig, const, opts = launches[job["index"]]
            facts = compile_sm90(fn, sig, const, **opts)
        return {"ok": True, **facts}
    except Exception as e:  # noqa: BLE001 - a compile failure is the answer
        return {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:240] if str(e) else ''}"}


def fmt(row: dict) -> str:
    if not row["ok"]:
        return f"FAIL {row['error']}"
    return (f"OK ws={row['ws']} threads={row['threads']} setmaxnreg={','.join(row['setmaxnreg']) or '-'} "
            f"regs={row.get('regs')} spill_bytes={row.get('spill_bytes')} smem={row['shared']}"
            + (" OVER-SMEM" if row.get("over_smem") else ""))


def main() -> int:
    print(f"triton {triton.__version__}, sm_90, CPU compile")
    if "--plans" not in sys.argv:
        for case, row in zip(CASES, compile_jobs([{"what": "case", "case": c} for c in CASES])):
            print(f"{case:16s} {fmt(row)}")
        return 0
    st3 = _stage3()
    jobs = list(st3.FWD_PLANS.items()) + list(st3.BWD_PLANS.items())
    if "--candidates" in sys.argv:  # and every plan the GPU sweep will time, for both causal and not
        spec = importlib.util.spec_from_file_location("p2t_attention_sweep", Path(__file__).parent / "attention_sweep.py")
        sweep = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sweep)
        for causal, d in sweep.COMBOS:
            jobs += [((causal, d), p) for p in sweep.FWD_CANDIDATES.get(d, []) + sweep.BWD_CANDIDATES.get(d, [])]
    labels, todo, seen = [], [], set()
    for (causal, d), plan in jobs:
        key = (causal, d, repr(plan))
        if key in seen:
            continue
        seen.add(key)
        tag = f"causal={causal!s:5s} D{d:<3d}"
        if not hasattr(plan, "dkdv"):
            labels.append(f"fwd {tag} {plan}")
            todo.append(dict(what="fwd", causal=causal, d=d, plan=repr(plan)))
            continue
        for i, (name, *_rest) in enumerate(bwd_launches(st3, causal, d, plan)):
            labels.append(f"bwd {tag} {name} {plan}")
            todo.append(dict(what="bwd", causal=causal, d=d, plan=repr(plan), index=i))
    for label, row in zip(labels, compile_jobs(todo)):
        print(f"{label}: {fmt(row)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
