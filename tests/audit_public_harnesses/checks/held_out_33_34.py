"""The known problems and the labelling checks of the held_out_33 (late-interaction-kernels 0.4.5) and held_out_34
(cuda-triton-multiarch 0.1.3) batches, one subcommand each, run on the corpus copies (tests/audit_public_corpus/...)
with the callers' inputs built by the batches' harnesses (tests/audit_public_harnesses/...).

Each subcommand exits 1 while the problem shows (wrong result, out-of-bounds write, run-to-run difference), 0 when
it does not, 2 when it cannot run here (it needs a GPU). Without CUDA the kernels run under Triton's interpreter
(TRITON_INTERPRET=1 is set here then, with the audit worker's untimed autotuner, the first pruned config, and its
bf16 dots that multiply values).

  python benchmarks/held_out.py 33_34 lik_examples      # late-interaction: the four entries at callers' sizes
  python benchmarks/held_out.py 33_34 lik_plaid_bitorder  # maxsim_residual on ColBERTv2-packed residuals (P0)
  python benchmarks/held_out.py 33_34 lik_plaid_fp32q   # maxsim_residual: a float32 Q runs its dot in bf16
  python benchmarks/held_out.py 33_34 lik_varlen_repeat # varlen / score_pairs backward: float atomics (P1s; GPU)
  python benchmarks/held_out.py 33_34 fa_headdim        # flash_attention_triton: head_dim 128 (P0)
  python benchmarks/held_out.py 33_34 fa_ragged         # flash_attention_triton: T % 64 != 0, padded keys (P0)
  python benchmarks/held_out.py 33_34 fa_oob            # flash_attention_triton: rows past T written (P0)
  python benchmarks/held_out.py 33_34 fa_layout         # flash_attention_triton: a transposed q (P0)
  python benchmarks/held_out.py 33_34 rms_magnitude     # rmsnorm_triton: fp16 sum of squares overflows (P0)
  python benchmarks/held_out.py 33_34 swiglu_fp32       # swiglu_triton: float32 inputs, fp16 store (P0)
  python benchmarks/held_out.py 33_34 softmax_rows      # softmax_triton: 2-D rows (ok) and N-D (a note)

Several names run in one process, each followed by `rc NAME=N` (benchmarks/held_out.py 33_34 does so).
"""

from __future__ import annotations

import importlib.util
import sys
from itertools import product
from pathlib import Path

import torch
from _common import CORPUS, CUDA, DEV, HARNESSES, ROOT, Check

REPEAT_N = 64  # queries and documents of lik_varlen_repeat


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _pair(project: str, name: str):
    """(harness, corpus module): the harness first, so that its stand-ins are in place when the file imports."""
    if not CUDA:  # as the audit's worker does under the interpreter
        sys.path.insert(0, str(ROOT / "server"))
        from pytorch_to_triton.worker.device import interp_autotune, interp_compat, interp_tf32
        interp_autotune.install()
        interp_compat.install()
        interp_tf32.install()  # bf16 dots multiply values, not bit patterns (Triton 3.9's interpreter)
    h = _load(HARNESSES / project / f"{name}.py", f"h_{project}_{name}")
    return h, _load(CORPUS / project / f"{name}.py", f"k_{project}_{name}")


def _unit(*shape, dtype=torch.float16, gen=None):
    return torch.nn.functional.normalize(torch.randn(*shape, generator=gen), dim=-1).to(DEV, dtype)


def _report(name: str, rows: list[tuple[str, float, float]], limit: float) -> int:
    """Print `name: label err=.. (ref ..) ok|WRONG` per row; 1 if any row is over `limit`."""
    bad = False
    for label, err, scale in rows:
        wrong = not err <= limit  # NaN counts as wrong
        bad |= wrong
        print(f"{name}: {label} max abs err {err:.3e} (|ref| up to {scale:.3g}) {'WRONG' if wrong else 'ok'}")
    return 1 if bad else 0


# ---------------------------------------------------------------- late-interaction-kernels (held_out_33)


def lik_examples() -> int:
    """The four entries at the callers' sizes and a few more (d 96, an empty document, q_mask, repeated pairs): no
    known problem."""
    g = torch.Generator().manual_seed(0)
    rows = []
    hf, kf = _pair("late_interaction_kernels", "forward")
    for nq, lq, nd, ld, d in [(2, 32, 3, 180, 128), (3, 32, 4, 300, 96), (1, 20, 2, 1030, 128)]:
        q, docs = _unit(nq, lq, d, gen=g), _unit(nd, ld, d, gen=g)
        dm = torch.arange(ld, device=DEV)[None] < torch.tensor([ld, ld // 2, 7, 1][:nd], device=DEV)[:, None]
        qm = torch.ones(nq, lq, dtype=torch.bool, device=DEV)
        qm[0, lq // 2:] = False
        s, _ = kf.maxsim_forward(q, docs, qm, dm)
        r, _ = hf.reference(q, docs, qm, dm)
        rows.append((f"maxsim_forward {nq}x{lq} vs {nd}x{ld} d{d}", float((s - r).abs().max()), float(r.abs().max())))
    hv, kv = _pair("late_interaction_kernels", "varlen")
    lq, ld = torch.tensor([32, 20, 0, 32]), torch.tensor([180, 7, 300, 0, 64])
    q, docs = _unit(int(lq.sum()), 128, gen=g), _unit(int(ld.sum()), 128, gen=g)
    cq, cd = hv._cu(lq).to(DEV), hv._cu(ld).to(DEV)
    s, r = kv.maxsim_varlen(q, docs, cq, cd), hv.reference(q, docs, cq, cd)
    rows.append(("maxsim_varlen with empty query and document", float((s - r).abs().max()), float(r.abs().max())))
    hs, ks = _pair("late_interaction_kernels", "score_pairs")
    pq = torch.tensor([0, 1, 3, 0, 2, 1], dtype=torch.int32, device=DEV)
    pd = torch.tensor([0, 1, 4, 2, 3, 0], dtype=torch.int32, device=DEV)
    s, r = ks.score_pairs_packed(q, docs, cq, cd, pq, pd), hs.reference(q, docs, cq, cd, pq, pd)
    rows.append(("score_pairs_packed, repeated and empty pairs", float((s - r).abs().max()), float(r.abs().max())))
    s = ks.score_pairs_packed(q, docs, cq, cd, pq, pd, max_seqlen_q=32, max_seqlen_d=300)  # as maxsim_padded passes
    rows.append(("score_pairs_packed with max_seqlen_*", float((s - r).abs().max()), float(r.abs().max())))
    hp, kp = _pair("late_interaction_kernels", "plaid")

    class _Case:
        shape, device = (2, 32, 5, 120, 128), DEV

        def randn(self, *shape, dtype=torch.float32):
            return torch.randn(*shape, generator=g).to(DEV, dtype)

        def randint(self, lo, hi, shape, dtype=torch.int64):
            return torch.randint(lo, hi, shape, generator=g).to(DEV, dtype)

    args = hp.make_inputs(_Case())
    s, r = kp.maxsim_residual(*args), hp.reference(*args)
    rows.append(("maxsim_residual nbits 2, 5 docs of <= 120 tokens", float((s - r).abs().max()), float(r.abs().max())))
    return _report("lik_examples", rows, 2e-3)


def _colbert_pack(bucket_idx: torch.Tensor, nbits: int) -> torch.Tensor:
    """ColBERTv2's ResidualCodec.binarize (colbert-ai 0.2.22, indexing/codecs/residual.py:186-202), CPU path: each
    bucket code's nbits bits LSB first, all bits of a token packed MSB first by np.packbits."""
    import numpy as np

    bits = (bucket_idx.to(torch.uint8).unsqueeze(-1) >> torch.arange(nbits, dtype=torch.uint8)) & 1
    packed = np.packbits(np.asarray(bits.contiguous().flatten()))
    return torch.as_tensor(packed, dtype=torch.uint8).reshape(bucket_idx.shape[0], bucket_idx.shape[1] // 8 * nbits)


def _colbert_unpack(packed: torch.Tensor, nbits: int) -> torch.Tensor:
    """ColBERTv2's decompress, CPU path (residual.py:52-91 builds reversed_bit_map and decompression_lookup_table;
    264-266 apply them): the bucket index of every feature, in feature order."""
    mask, rbm = (1 << nbits) - 1, []
    for i in range(256):
        z = 0
        for j in range(8, 0, -nbits):
            x = (i >> (j - nbits)) & mask
            z |= sum(((x >> (nbits - k - 1)) & 1) * (2 ** k) for k in range(nbits - 1, -1, -1))
            if j > nbits:
                z <<= nbits
        rbm.append(z)
    lut = torch.tensor(list(product(range(1 << nbits), repeat=8 // nbits)), dtype=torch.uint8)
    return lut[torch.tensor(rbm, dtype=torch.uint8)[packed.long()].long()].reshape(packed.shape[0], -1)


def lik_plaid_bitorder() -> int:
    """maxsim_residual on residuals packed as ColBERTv2's ResidualCodec packs them (the docstring: "Compressed format
    (PLAID / ColBERTv2)"; the launcher: "int32 matches the on-disk ColBERTv2 / fast-plaid format"), against the
    embeddings ColBERTv2's own decompress rebuilds from the same bytes."""
    _, kp = _pair("late_interaction_kernels", "plaid")
    from late_interaction_kernels.reference import maxsim_reference  # the corpus copy, through the stand-in package

    g = torch.Generator().manual_seed(0)
    rows = []
    for nbits in (2, 4):
        d, nd, ld, ncent = 128, 3, 40, 16
        bw = torch.linspace(-0.05, 0.05, 1 << nbits)
        cents = torch.nn.functional.normalize(torch.randn(ncent, d, generator=g), dim=-1)
        codes = torch.randint(0, ncent, (nd, ld), generator=g)
        bidx = torch.randint(0, 1 << nbits, (nd * ld, d), generator=g)
        packed = _colbert_pack(bidx, nbits)
        assert torch.equal(_colbert_unpack(packed, nbits).long(), bidx)  # ColBERTv2's own round trip holds
        emb = torch.nn.functional.normalize((cents[codes.reshape(-1)] + bw[bidx]).reshape(nd, ld, d), dim=-1)
        q = _unit(2, 32, d, gen=g)
        lens = torch.tensor([40, 33, 7])
        s = kp.maxsim_residual(q, codes.to(DEV), packed.reshape(nd, ld, -1).to(DEV), lens.to(DEV),
                               cents.to(DEV, torch.float16), bw.to(DEV), nbits)
        dm = (torch.arange(ld)[None] < lens[:, None]).to(DEV)
        r = maxsim_reference(q.float(), emb.to(DEV, torch.float16).float(), d_mask=dm)
        rows.append((f"nbits {nbits}: score vs ColBERTv2's decoding", float((s - r).abs().max()), float(r.abs().max())))
    return _report("lik_plaid_bitorder", rows, 1e-2)


def lik_plaid_fp32q() -> int:
    """A labelling note, not a known problem: maxsim_residual picks bf16 for the dot unless Q is fp16 (plaid.py: a
    float32 Q, e.g. a PyLate encoder's float32 output, is rounded to bf16 with the rebuilt tokens), where
    maxsim_forward's pick_compute_dtype picks fp16 for float32 inputs. Prints both errors against float64; exit 1 if
    the float32 Q is over 1e-2 off."""
    hp, kp = _pair("late_interaction_kernels", "plaid")
    g = torch.Generator().manual_seed(1)

    class _Case:
        shape, device = (2, 32, 4, 180, 128), DEV

        def randn(self, *shape, dtype=torch.float32):
            return torch.randn(*shape, generator=g).to(DEV, dtype)

        def randint(self, lo, hi, shape, dtype=torch.int64):
            return torch.randint(lo, hi, shape, generator=g).to(DEV, dtype)

    args = list(hp.make_inputs(_Case()))
    rows = []
    for dt in (torch.float16, torch.float32):
        args[0] = args[0].to(dt)
        s, r = kp.maxsim_residual(*args), hp.reference(*args)
        rows.append((f"Q {str(dt)[6:]}", float((s - r).abs().max()), float(r.abs().max())))
    return _report("lik_plaid_fp32q", rows, 1e-2)


def lik_varlen_repeat() -> int:
    """maxsim_varlen's backward adds grad_D rows with float tl.atomic_add (varlen.py, _varlen_bwd_dD_kernel), and
    score_pairs_packed's adds both grad_Q and grad_D rows so (score_pairs.py): a doc token that is the max of several
    query tokens gets its adds in arrival order. GPU only (the interpreter runs programs in order): 64 queries x 64
    docs of ColBERT sizes in float32 (all pairs for varlen, 8 candidates per query for the pairs), three backward runs each,
    compared bit for bit; exit 1 if either differs."""
    if not CUDA:
        print("lik_varlen_repeat: needs a GPU (the interpreter runs programs in order)")
        return 2
    _, kv = _pair("late_interaction_kernels", "varlen")
    hv = sys.modules["h_late_interaction_kernels_varlen"]
    g = torch.Generator().manual_seed(2)
    n = REPEAT_N
    lq, ld = torch.full((n,), 32), torch.randint(60, 181, (n,), generator=g)
    # float32 embeddings (a PyLate training run's default): the gradients come back in float32, so an fp16 cast
    # cannot hide last-bit differences
    q, docs = (_unit(int(n_), 128, dtype=torch.float32, gen=g) for n_ in (lq.sum(), ld.sum()))
    cq, cd = hv._cu(lq).to(DEV), hv._cu(ld).to(DEV)
    _, ks = _pair("late_interaction_kernels", "score_pairs")
    pq = torch.arange(n, dtype=torch.int32, device=DEV).repeat_interleave(8)
    pd = torch.randint(0, n, (8 * n,), generator=g).to(DEV, torch.int32)
    calls = (("maxsim_varlen grad_D", lambda qq, dd: kv.maxsim_varlen(qq, dd, cq, cd), 1),
             ("score_pairs_packed grad_Q", lambda qq, dd: ks.score_pairs_packed(qq, dd, cq, cd, pq, pd), 0),
             ("score_pairs_packed grad_D", lambda qq, dd: ks.score_pairs_packed(qq, dd, cq, cd, pq, pd), 1))
    bad = False
    for label, fn, which in calls:
        grads = []
        for _ in range(3):
            qq, dd = q.clone().requires_grad_(), docs.clone().requires_grad_()
            fn(qq, dd).sum().backward()
            grads.append((qq.grad, dd.grad)[which].clone())
        same = all(torch.equal(grads[0], x) for x in grads[1:])
        diff = max(float((grads[0].float() - x.float()).abs().max()) for x in grads[1:])
        bad |= not same
        print(f"lik_varlen_repeat: {label} bitwise equal over 3 runs: {same} (max diff {diff:.3e})")
    return 1 if bad else 0


# ---------------------------------------------------------------- cuda-triton-multiarch (held_out_34)


def _attn_ref(q, k, v):
    return torch.softmax(q.double() @ k.double().T / q.shape[-1] ** 0.5, dim=-1) @ v.double()


def _fa_rows(kf, shapes, gen) -> list[tuple[str, float, float]]:
    rows = []
    for t, d in shapes:
        q, k, v = (torch.randn(t, d, generator=gen).to(DEV, torch.float16) for _ in range(3))
        o = kf.flash_attention_triton(q, k, v)
        r = _attn_ref(q, k, v)
        rows.append((f"T {t} head_dim {d}", float((o.double() - r).abs().max()), float(r.abs().max())))
    return rows


def fa_headdim() -> int:
    """BLOCK_DK = 64 fixed: head_dim 128 (Llama's, KVQuant's models) uses half the dims and leaves the output's
    columns 64-127 as torch.empty_like left them. T 256 (no ragged block); head_dim 64 is the control."""
    _, kf = _pair("cuda_triton_multiarch", "flash_attention")
    return _report("fa_headdim", _fa_rows(kf, [(256, 64), (256, 128)], torch.Generator().manual_seed(0)), 1e-2)


def fa_ragged() -> int:
    """T % 64 != 0 with T < 64 (a short prompt: no out-of-bounds row, see fa_oob): the padded key rows load as 0 and
    their scores enter the softmax unmasked. head_dim 64; T 128 is the control."""
    _, kf = _pair("cuda_triton_multiarch", "flash_attention")
    return _report("fa_ragged", _fa_rows(kf, [(128, 64), (40, 64), (7, 64)], torch.Generator().manual_seed(1)), 1e-2)


def fa_oob() -> int:
    """T > 64 with T % 64 != 0: mask_row = offsets_row < seq_len has no block offset, so the last query block reads Q
    rows past T and stores its rows past the end of the output (torch.empty_like(Q)). The output is given a guard
    region here (torch.empty_like, for this call only, answers a view at the start of a larger buffer filled with a
    sentinel): exit 1 when the guard changes. Unpatched, T 200 corrupts the interpreter's heap ("double free or
    corruption")."""
    _, kf = _pair("cuda_triton_multiarch", "flash_attention")
    g = torch.Generator().manual_seed(3)
    bad = False
    for t in (192, 200):
        d = 64
        q, k, v = (torch.randn(t, d, generator=g).to(DEV, torch.float16) for _ in range(3))
        # Q, K, V also sit at the start of larger buffers, so the reads past T stay in memory we own
        qb, kb, vb = (torch.zeros(t + 64, d, device=DEV, dtype=torch.float16) for _ in range(3))
        for buf, x in ((qb, q), (kb, k), (vb, v)):
            buf[:t] = x
        guard = torch.full((t + 64, d), 7.0, device=DEV, dtype=torch.float16)
        real = torch.empty_like

        def _guarded(x, *a, _g=guard, _shape=(t, d), _real=real, **kw):
            return _g[: x.shape[0]] if x.shape == _shape else _real(x, *a, **kw)

        torch.empty_like = _guarded
        try:
            o = kf.flash_attention_triton(qb[:t], kb[:t], vb[:t])
        finally:
            torch.empty_like = real
        if CUDA:
            torch.cuda.synchronize()
        written = int((guard[t:] != 7.0).any(dim=1).sum())
        err = float((o.double() - _attn_ref(q, k, v)).abs().max())
        bad |= written > 0
        print(f"fa_oob: T {t}: {written} rows written past the output's {t} rows; max abs err of the {t} rows {err:.3e}"
              f" {'WRONG' if written else 'ok'}")
    return 1 if bad else 0


def fa_layout() -> int:
    """flash_attention_bhsd passes q_half[b, h]: for the usual q = proj(x).view(B, T, H, d).transpose(1, 2) (fp16, so
    .half() returns the same view) that is a [T, d] slice with row stride H * d, read by the kernel as dense (stride
    = d_k). T 128, head_dim 64 (no other problem at that size); the contiguous slice is the control."""
    _, kf = _pair("cuda_triton_multiarch", "flash_attention")
    g = torch.Generator().manual_seed(4)
    b, t, h, d = 1, 128, 4, 64
    q, k, v = (torch.randn(b, t, h, d, generator=g).to(DEV, torch.float16).transpose(1, 2) for _ in range(3))
    rows = []
    for label, (qq, kk, vv) in (("contiguous slice", (q[0, 1].contiguous(), k[0, 1].contiguous(), v[0, 1].contiguous())),
                                ("transposed view's slice (row stride H*d)", (q[0, 1], k[0, 1], v[0, 1]))):
        o = kf.flash_attention_triton(qq, kk, vv)
        r = _attn_ref(qq, kk, vv)
        rows.append((label, float((o.double() - r).abs().max()), float(r.abs().max())))
    return _report("fa_layout", rows, 1e-2)


def rms_magnitude() -> int:
    """rmsnorm_triton sums x * x in x's dtype: fp16 overflows to inf once the row's sum of squares passes 65504 (RMS
    above 4 at hidden 4096) or one value passes 256 (a "massive activation": Llama-2's residual stream carries
    values in the thousands in a few channels), and the row comes out 0. Unit scale is the control."""
    hr, kr = _pair("cuda_triton_multiarch", "rmsnorm")
    g = torch.Generator().manual_seed(5)
    w = (1.0 + 0.1 * torch.randn(4096, generator=g)).to(DEV, torch.float16)
    rows = []
    for label, scale, spike in (("unit scale", 1.0, None), ("RMS 4.5", 4.5, None), ("unit scale, one value 300", 1.0, 300.0)):
        x = (torch.randn(8, 4096, generator=g) * scale).to(DEV, torch.float16)
        if spike is not None:
            x[:, 7] = spike
        o, r = kr.rmsnorm_triton(x, w, 1e-6), hr.reference(x, w, 1e-6)
        rows.append((label, float((o.float() - r.float()).abs().max()), float(r.float().abs().max())))
    return _report("rms_magnitude", rows, 2e-2)


def swiglu_fp32() -> int:
    """swiglu_triton stores output.to(tl.float16) into an output of x's dtype: float32 inputs come back rounded to
    fp16 (relative error up to 2**-11 against the float32 result, where float32 owes ~1e-6). fp16 is the control."""
    _, ks = _pair("cuda_triton_multiarch", "swiglu")
    g = torch.Generator().manual_seed(6)
    bad = False
    for dt, limit in ((torch.float16, 2e-3), (torch.float32, 1e-5)):
        x, gate = (torch.randn(8, 11008, generator=g).to(DEV, dt) for _ in range(2))
        o = ks.swiglu_triton(x, gate)
        r = x.double() * torch.nn.functional.silu(gate.double())
        big = r.abs() > 1e-2  # relative error where it means something
        rel = float(((o.double() - r).abs()[big] / r.abs()[big]).max())
        bad |= rel > limit
        print(f"swiglu_fp32: {str(dt)[6:]} max relative err {rel:.3e} (the dtype's limit {limit:g}) "
              f"{'WRONG' if rel > limit else 'ok'}")
    return 1 if bad else 0


def softmax_rows() -> int:
    """softmax_triton on contiguous 2-D rows (the callers' use): right. A note, printed, not counted: a 3-D input
    gets only x.shape[0] rows computed (grid = (x.shape[0],), stride = x.shape[-1]), the rest left as
    torch.empty_like made them, though the file's own softmax_pytorch takes any rank."""
    hs, ks = _pair("cuda_triton_multiarch", "softmax")
    g = torch.Generator().manual_seed(7)
    rows = []
    for shape in ((16, 4096), (5, 1000), (64, 32000)):
        x = torch.randn(*shape, generator=g).to(DEV, torch.float16)
        o, r = ks.softmax_triton(x), hs.reference(x)
        rows.append((f"{shape}", float((o.double() - r.double()).abs().max()), float(r.abs().max())))
    x = torch.randn(2, 8, 64, generator=g).to(DEV, torch.float16)
    o = ks.softmax_triton(x)
    r = torch.softmax(x.double(), -1)
    print(f"softmax_rows: note: 3-D [2, 8, 64]: rows right {int(((o.double() - r).abs().amax(-1) < 1e-3).sum())} of 16")
    return _report("softmax_rows", rows, 2e-3)


# ---- the labeller's check of held_out_33: the host_sync P1s of varlen.py:304/308 and score_pairs.py:297/301 (the
# `.item()` calls that size the loops when max_seqlen_* are left out), measured with set_sync_debug_mode("error").

class _SyncCase:
    device = DEV

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape, self.g = shape, torch.Generator().manual_seed(0)

    def randn(self, *shape, dtype=torch.float32):
        return torch.randn(*shape, generator=self.g).to(DEV, dtype)

    def randint(self, lo, hi, shape, dtype=torch.int64):
        return torch.randint(lo, hi, shape, generator=self.g).to(DEV, dtype)


def _syncs(fn, path: str) -> tuple[int, str]:
    """(.item() calls made from `path` during fn(), what the GPU's sync debug mode said or '' on the CPU)."""
    hits = [0]
    orig = torch.Tensor.item

    def item(self):
        if any(f.filename.endswith(path) for f in _frames()):
            hits[0] += 1
        return orig(self)

    torch.Tensor.item = item
    verdict = ""
    try:
        if CUDA:
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("error")
        try:
            fn()
            verdict = "no sync" if CUDA else ""
        except RuntimeError as e:
            if not CUDA or "synchroniz" not in str(e):
                raise
            verdict = "syncs"
    finally:
        torch.Tensor.item = orig
        if CUDA:
            torch.cuda.set_sync_debug_mode(0)
    return hits[0], verdict


def _frames():
    import inspect

    return inspect.stack(0)[2:8]


def lik_sync() -> int:
    hv, kv = _pair("late_interaction_kernels", "varlen")
    hs, ks = _pair("late_interaction_kernels", "score_pairs")
    v = hv.make_inputs(_SyncCase(hv.AUDIT_SHAPE))
    s = hs.make_inputs(_SyncCase(hs.AUDIT_SHAPE))
    q_len, d_len = (s[2][1:] - s[2][:-1]), (s[3][1:] - s[3][:-1])
    mq, md = torch.stack([q_len.max(), d_len.max()]).tolist()  # pack_padded's one combined fetch, before the call
    kv.maxsim_varlen(*v), ks.score_pairs_packed(*s)  # compile first: the counts are of a warm call
    rows = [("maxsim_varlen(Q, D, cu_q, cu_d), positional", *_syncs(lambda: kv.maxsim_varlen(*v), "varlen.py")),
            ("score_pairs_packed(...), positional (the harness)",
             *_syncs(lambda: ks.score_pairs_packed(*s), "score_pairs.py")),
            ("score_pairs_packed(..., max_seqlen_q=, max_seqlen_d=) as maxsim_padded",
             *_syncs(lambda: ks.score_pairs_packed(*s, max_seqlen_q=mq, max_seqlen_d=md), "score_pairs.py"))]
    for label, n, verdict in rows:
        print(f"lik_sync: {label}: {n} .item() call(s) of the corpus file{'; ' + verdict if verdict else ''}")
    hold = rows[0][1] == 2 and rows[1][1] == 2 and rows[2][1] == 0
    if CUDA:
        hold = hold and rows[0][2] == rows[1][2] == "syncs" and rows[2][2] == "no sync"
    return 1 if hold else 0


GPU_RUN = None
CHECKS = {
    "lik_examples": Check(lik_examples, "0: the four entries right at the callers' sizes", 70),
    "lik_plaid_bitorder": Check(lik_plaid_bitorder, "1: ColBERTv2-packed residuals decoded wrong (0.1-0.3 off)", 70),
    "lik_plaid_fp32q": Check(lik_plaid_fp32q, "1: a float32 Q runs its dot in bf16 (~4e-2 off)", 70),
    "lik_varlen_repeat": Check(lik_varlen_repeat, "1: the float atomics differ run to run (the two known P1s; a "
                               "line with True makes that one paper-only)", 70),
    "fa_headdim": Check(fa_headdim, "1 (the known P0: head_dim 128)", 40),
    "fa_ragged": Check(fa_ragged, "1 (the known P0: T % 64 != 0)", 40),
    "fa_oob": Check(fa_oob, "1 (rows written into the guard past the output)", 40),
    "fa_layout": Check(fa_layout, "1 (a transposed q)", 40),
    "rms_magnitude": Check(rms_magnitude, "1: the fp16 sum of squares overflows (0: read the lines)", 40),
    "swiglu_fp32": Check(swiglu_fp32, "1: float32 inputs come back fp16-rounded", 40),
    "softmax_rows": Check(softmax_rows, "0 (its N-D line is a note)", 40),
    "lik_sync": Check(lik_sync, "1: varlen positional 2 .item() and syncs; score_pairs positional 2 and syncs; with "
                      "max_seqlen_* 0 and no sync (varlen.py:304/308 real, score_pairs.py:297/301 false)", 50),
}
