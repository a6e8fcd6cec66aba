"""The known problems and the labelling checks of the held_out_31 (xfuser 0.7.0, flash-colsum 0.1.0) and held_out_32
(siglip-kernel 0.1.2, memeff 0.3.1) batches, one subcommand each, run on the corpus copies
(tests/audit_public_corpus/...) with the callers' inputs built by the batches' harnesses
(tests/audit_public_harnesses/...).

Each subcommand exits 1 while the problem shows (wrong result, crash, run-to-run difference), 0 when it does not, 2
when it cannot run here (it needs a GPU). Without CUDA the kernels run under Triton's interpreter (TRITON_INTERPRET=1
is set here then, with the audit worker's NumPy libdevice, bf16 dots and no-op torch.cuda.device).

  python benchmarks/held_out.py 31_32 colsum_ragged        # flash-colsum non-causal: S % 128 != 0 (P0)
  python benchmarks/held_out.py 31_32 colsum_headdim       # flash-colsum non-causal: head_dim > 64 (P0)
  python benchmarks/held_out.py 31_32 colsum_causal_d128   # flash-colsum causal: the README's head_dim 128 (P0)
  python benchmarks/held_out.py 31_32 colsum_causal_qlen   # flash-colsum causal: Q_len % 16 != 0 -> NaN (P0)
  python benchmarks/held_out.py 31_32 colsum_repeat        # flash-colsum: float atomics, fp16 output (note)
  python benchmarks/held_out.py 31_32 memeff_denom_repeat  # memeff _launch_denom: float atomics (P1; GPU)
  python benchmarks/held_out.py 31_32 block_mask_ragged    # xfuser sparge pool/sim: ragged last block
  python benchmarks/held_out.py 31_32 vsa_pool             # xfuser VSA-H3 tile pooling at a real geometry
  python benchmarks/held_out.py 31_32 siglip_chunk         # siglip-kernel BCE chunk at B = 16384
  python benchmarks/held_out.py 31_32 clip_fa              # memeff FA backward, fp16, batch 4096
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import torch
from _common import CORPUS, CUDA, DEV, HARNESSES, ROOT, Check


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
        from pytorch_to_triton.worker.device import interp_compat, interp_libdevice, interp_tf32
        interp_libdevice.install()
        interp_compat.install_cuda_device_noop()
        interp_tf32.install()
    h = _load(HARNESSES / project / f"{name}.py", f"h_{project}_{name}")
    return h, _load(CORPUS / project / f"{name}.py", f"k_{project}_{name}")


def _case(shape, dtype, seed=0):
    sys.path.insert(0, str(ROOT / "server"))
    from pytorch_to_triton.worker.validation.tasks import Case
    return Case("explore", shape, dtype, DEV, seed)


def _rel(out, ref) -> float:
    out, ref = (out,) if torch.is_tensor(out) else out, (ref,) if torch.is_tensor(ref) else ref
    return max(((a.double() - b.double()).abs().max() / b.double().abs().max().clamp_min(1e-30)).item()
               for a, b in zip(out, ref))


def _colsum(name: str, shapes) -> int:
    """Run one flash-colsum entry at each shape against the harness's float64 reference; 1 if any is wrong."""
    h, k = _pair("flash_colsum", name)
    bad = 0
    for shape in shapes:
        args = h.make_inputs(_case(shape, torch.float16))
        out, ref = getattr(k, h.ENTRY)(*args), h.reference(*args)
        err = (out.double() - ref.double()).abs().max().item()
        wrong = not err <= 2e-5 + 2e-3 * ref.double().abs().max().item()  # the harness's fp16 tolerance; NaN is wrong
        where = "GPU" if CUDA else "interpreter"
        print(f"{sys._getframe(1).f_code.co_name}: {shape} max error {err:.2e} (means up to "
              f"{ref.double().abs().max().item():.2e}), column means sum to {out.double().sum().item():.4f} "
              f"(float64: {ref.double().sum().item():.4f}) {'WRONG' if wrong else 'ok'} ({where})")
        bad += wrong
    return 1 if bad else 0


def colsum_ragged() -> int:
    """_flash_colsum_non_batched counts the zero-loaded padded keys (S % 128 != 0) in every row's softmax denominator:
    CLIP ViT-B/16 (197 tokens) and SigLIP at 384 px (729) are wrong, 256 is right (head_dim 64 each)."""
    return _colsum("kernel_noncausal", [(2, 197, 64), (2, 729, 64), (2, 256, 64)])


def colsum_headdim() -> int:
    """_flash_colsum_non_batched reads only the first BLOCK_D = 64 dims of the head: SigLIP's 72 and 128 are wrong at
    S 256 (a multiple of 128, so the padded-key problem stays out), 64 is right."""
    return _colsum("kernel_noncausal", [(2, 256, 72), (2, 256, 128), (2, 256, 64)])


def colsum_causal_d128() -> int:
    """_flash_colsum_causal reads only the first 64 dims: the README's causal example has head_dim 128 (here 2 heads,
    32 queries, 320 keys); head_dim 64 is right."""
    return _colsum("kernel_causal", [(2, 32, 320, 128), (2, 32, 320, 64)])


def colsum_causal_qlen() -> int:
    """_flash_colsum_causal with Q_len not a multiple of 16: the padded query rows of the last block give NaN that the
    column sums add everywhere (Q_len 20, 40); 32 is right (head_dim 64)."""
    return _colsum("kernel_causal", [(2, 20, 320, 64), (2, 40, 320, 64), (2, 32, 320, 64)])


def colsum_repeat() -> int:
    """_flash_colsum_non_batched adds each query block's fp32 column sums with tl.atomic_add (H x S/128 adds per
    column, in arrival order), then divides and casts to fp16: do repeats differ in the fp16 output on a GPU, or does
    the cast hide the order? A labelling note (exit 1 if any fp16 value differs: then label an atomic_order finding
    on line 94 real, as memeff's); the interpreter runs programs in order (exit 2 there)."""
    h, k = _pair("flash_colsum", "kernel_noncausal")
    shape = (16, 4096, 64) if CUDA else (2, 256, 64)
    args = h.make_inputs(_case(shape, torch.float16))
    runs = [k._flash_colsum_non_batched(*args) for _ in range(5)]
    differ = sum(int(not torch.equal(r, runs[0])) for r in runs[1:])
    vals = max(int((r != runs[0]).sum()) for r in runs[1:])
    print(f"colsum_repeat: {shape}, {differ} of 4 repeats differ from the first in fp16 (up to {vals} of "
          f"{runs[0].numel()} values) ({'GPU' if CUDA else 'interpreter'})")
    if not CUDA:
        return 2 if differ == 0 else 1
    return 1 if differ else 0


def memeff_denom_repeat() -> int:
    """_launch_denom adds every 128 x 128 block's row and column sums of exp2(x.y/T - 1/T) into float32 buffers with
    tl.atomic_add: at batch 16384 each row gets 128 adds in arrival order, so sum_exp_row / sum_exp_col (the loss's
    denominators, and the backward's divisors) differ in the last bits from run to run on a GPU. The interpreter runs
    the programs in order: the same bits every time there."""
    h, k = _pair("memeff", "distributed_clip_loss")
    n = 16384 if CUDA else 512
    x, y, _, _, inv_t = h.make_inputs(_case((n, 512), torch.float16))
    runs = []
    for _ in range(5):
        row, col = torch.zeros(n, device=DEV), torch.zeros(n, device=DEV)
        k._launch_denom(x, y, row, col, inv_t)
        runs.append((row, col))
    ref_row, ref_col = torch.zeros(n, device=DEV), torch.zeros(n, device=DEV)
    h.reference(x, y, ref_row, ref_col, inv_t)
    differ = sum(int(not (torch.equal(r, runs[0][0]) and torch.equal(c, runs[0][1]))) for r, c in runs[1:])
    bits = max(int((r != runs[0][0]).sum()) + int((c != runs[0][1]).sum()) for r, c in runs[1:])
    print(f"memeff_denom_repeat: batch {n}, {differ} of 4 repeats differ from the first (up to {bits} of {2 * n} "
          f"sums), error vs float64 {_rel(runs[0], (ref_row, ref_col)):.2e} ({'GPU' if CUDA else 'interpreter'})")
    if not CUDA:
        return 2 if differ == 0 else 1
    return 1 if differ else 0


def block_mask_ragged() -> int:
    """get_pool_sim_triton_simmean at the SpargeAttention caller's sizes: Wan 2.1 14B at 480p (40 heads, head_dim 128,
    21 x 30 x 52 = 32,760 image tokens, blocks of 256: the last block holds 248 rows). The kernel loads the block with
    mask= and no other=: the masked rows' values are what the hardware gives; the pool and the similarity are right
    only if they load as 0 (or NaN, which the kernel zeroes). Expected 0 (no problem)."""
    h, k = _pair("xfuser", "block_mask")
    shape = (1, 40, 32760, 128) if CUDA else (1, 2, 600, 128)
    args = h.make_inputs(_case(shape, torch.bfloat16))
    pool, sim = k.get_pool_sim_triton_simmean(*args)
    rp, rs = h.reference(*args)
    err, flips = _rel(pool, rp), int((sim != rs).sum())
    print(f"block_mask_ragged: {shape}, pool error {err:.2e}, {flips} of {sim.numel()} similarity flags differ "
          f"(last block: {int(sim[..., -1].sum())} similar heads of {shape[1]}) ({'GPU' if CUDA else 'interpreter'})")
    return 1 if err > 1e-2 or flips else 0


def vsa_pool() -> int:
    """triton_pool_h3_vsa_tiles on the backend's transposed [B, H, S, D] view at a FastH3-like geometry (56 heads,
    head_dim 128, prefix text 512 + audio 200, a 21 x 30 x 52 latent video): the tile means against a float64
    gather. Expected 0."""
    h, k = _pair("xfuser", "vsa_h3_triton")
    h.PREFIX = (512, 200) if CUDA else h.PREFIX
    shape = (1, 56, 21, 30, 52, 128) if CUDA else h.AUDIT_SHAPE
    args = h.make_inputs(_case(shape, torch.bfloat16))
    err = _rel(k.triton_pool_h3_vsa_tiles(*args), h.reference(*args))
    print(f"vsa_pool: {shape}, S {args[1].total_seq_length}, {args[1].num_tiles} tiles, error {err:.2e} "
          f"({'GPU' if CUDA else 'interpreter'})")
    return 1 if err > 1e-5 else 0


def siglip_chunk() -> int:
    """sigmoid_bce_forward on the last 4096-row chunk of B = 16384 (the chunk the package picks on SM90), bf16 raw
    logits, temperature 10, bias -10, out slices of [B] buffers: loss, scalar grads and the in-place gradient against
    float64. Expected 0."""
    h, k = _pair("siglip_kernel", "triton_sigmoid_bce")
    shape = (4096, 16384) if CUDA else h.AUDIT_SHAPE
    args = list(h.make_inputs(_case(shape, torch.bfloat16)))
    ref_args = list(args)
    ref_args[0], ref_args[6] = args[0].clone(), tuple(o.clone() for o in args[6])
    out, ref = k.sigmoid_bce_forward(*args), h.reference(*ref_args)
    err = _rel(out, ref)
    grad_err = (args[0].double() - ref_args[0].double()).abs().max().item()
    print(f"siglip_chunk: {shape}, loss/scalar-grad error {err:.2e}, in-place gradient max abs error {grad_err:.2e} "
          f"(bf16 ulp at 10/B: {2 ** -8 * 10 / shape[1]:.1e}) ({'GPU' if CUDA else 'interpreter'})")
    return 1 if err > 1e-3 or grad_err > 10 / shape[1] * 2 ** -7 else 0


def clip_fa() -> int:
    """_fa_backward (clip_fa_grad_kernel for both towers) at batch 4096, d 512, fp16 features (blocks 64 x 64 on
    SM90), against the harness reference (prob rounded to fp16 as the kernel does) and against float64 with no
    rounding of prob (how much the fp16 cast of prob * grad_scale, ~1e-7 for a typical negative at this batch, costs:
    a labelling note, not a check). Expected 0."""
    h, k = _pair("memeff", "clip_loss")
    shape = (4096, 512) if CUDA else h.AUDIT_SHAPE
    args = h.make_inputs(_case(shape, torch.float16))
    out = k._fa_backward(*args)
    err = _rel(out, h.reference(*args))
    exact = h.reference(*(a.double() if torch.is_tensor(a) and a.ndim == 2 else a for a in args))
    print(f"clip_fa: {shape}, error vs the harness reference {err:.2e}, vs float64 without the fp16 cast of prob "
          f"{_rel(out, exact):.2e} ({'GPU' if CUDA else 'interpreter'})")
    return 1 if err > 1e-2 else 0


# ---- the labeller's checks: static atomic_order P1s labelled real by reading, whose run-to-run difference the
# interpreter cannot show (it runs programs in order). 1 = some of 5 repeats differ bitwise (the label holds),
# 0 = all agree on the GPU (relabel false), 2 = they agree under the interpreter (no evidence).

def _verdict(name: str, what: str, runs: list[tuple[torch.Tensor, ...]]) -> int:
    """Print how many of the repeats differ from the first; the exit code described in the module docstring."""
    first = runs[0]
    differ = [any(not torch.equal(a, b) for a, b in zip(r, first, strict=True)) for r in runs[1:]]
    vals = max(sum(int((a != b).sum()) for a, b in zip(r, first, strict=True)) for r in runs[1:])
    total = sum(t.numel() for t in first)
    print(f"{name}: {what}, {sum(differ)} of {len(differ)} repeats differ from the first (up to {vals} of {total} "
          f"values) ({'GPU' if CUDA else 'interpreter'})")
    if not CUDA:
        return 1 if any(differ) else 2
    return 1 if any(differ) else 0


def colsum_causal_repeat() -> int:
    """_flash_colsum_causal at the README's causal size (32 heads, 128 queries, 4096 keys; head_dim 64 here, the size
    the kernel handles right): 32 x 8 programs add fp32 column sums per key with tl.atomic_add, then the wrapper divides
    and casts to fp16. Does the fp16 output change from run to run (as kernel_noncausal's did in 3 of 4 repeats)?"""
    h, k = _pair("flash_colsum", "kernel_causal")
    shape = (32, 128, 4096, 64) if CUDA else (2, 32, 320, 64)
    args = h.make_inputs(_case(shape, torch.float16))
    runs = [(k._flash_colsum_causal(*args),) for _ in range(5)]
    return _verdict("colsum_causal_repeat", f"{shape}", runs)


def _features(n: int, d: int):
    h, _ = _pair("memeff", "distributed_clip_loss")
    x, y, _, _, inv_t = h.make_inputs(_case((n, d), torch.float16))
    return x, y, inv_t


def grad_both_repeat() -> int:
    """_ring_backward (clip_grad_both_kernel: the distributed ring's backward, and the single-GPU loss's above the FA
    cap) on one rank at batch 8192, d 512: dX and dY_partial are accumulated with float tl.atomic_add per block."""
    _, k = _pair("memeff", "distributed_clip_loss")
    n, d = (8192, 512) if CUDA else (256, 64)
    x, y, inv_t = _features(n, d)
    row, col = torch.zeros(n, device=DEV), torch.zeros(n, device=DEV)
    k._launch_denom(x, y, row, col, inv_t)
    orig = math.sqrt(n / 0.07)
    runs = [k._ring_backward(x, y, row, col, 0, n, inv_t, orig, n) for _ in range(5)]
    return _verdict("grad_both_repeat", f"batch {n}, d {d}", runs)


def qwen3_denom_repeat() -> int:
    """launch_qwen3_denom (the Qwen3 losses' denominators) at batch 16384, d 512: masked row sums with float atomics."""
    _, k = _pair("memeff", "distributed_clip_loss")
    c = sys.modules["memeff._common"]
    n, d = (16384, 512) if CUDA else (256, 64)
    q, dd, inv_t = _features(n, d)
    pos = (q.float() * dd.float()).sum(dim=1)
    runs = []
    for _ in range(5):
        row = torch.zeros(n, device=DEV)
        c.launch_qwen3_denom(q, dd, pos, row, inv_t, 0.1)
        runs.append((row,))
    return _verdict("qwen3_denom_repeat", f"batch {n}, d {d}", runs)


def qwen3_grad_repeat() -> int:
    """launch_qwen3_grad two-sided (the Qwen3 losses' backward above the FA cap and in the ring) at batch 8192, d 512:
    dA and dB accumulated with float tl.atomic_add per block."""
    _, k = _pair("memeff", "distributed_clip_loss")
    c = sys.modules["memeff._common"]
    n, d = (8192, 512) if CUDA else (256, 64)
    q, dd, inv_t = _features(n, d)
    pos = (q.float() * dd.float()).sum(dim=1)
    row = torch.zeros(n, device=DEV)
    c.launch_qwen3_denom(q, dd, pos, row, inv_t, 0.1)
    runs = []
    for _ in range(5):
        da, db = torch.zeros(n, d, device=DEV), torch.zeros(n, d, device=DEV)
        c.launch_qwen3_grad(q, dd, pos, row, da, db, inv_t, 0.1, 1.0 / n, two_sided=True)
        runs.append((da, db))
    return _verdict("qwen3_grad_repeat", f"batch {n}, d {d}", runs)


GPU_RUN = "2026-12-06 11:06 H100"
PENDING = ["colsum_causal_repeat", "grad_both_repeat", "qwen3_denom_repeat", "qwen3_grad_repeat"]  # never run on a GPU yet
CHECKS = {
    "colsum_ragged": Check(colsum_ragged, "1: WRONG at S 197 (the known P0)", 20),
    "colsum_headdim": Check(colsum_headdim, "1: WRONG at head_dim 72/128 (the known P0)", 20),
    "colsum_causal_d128": Check(colsum_causal_d128, "1: WRONG at head_dim 128 (the known P0)", 20),
    "colsum_causal_qlen": Check(colsum_causal_qlen, "1: NaN at Q_len 20/40 (the known P0)", 20),
    "colsum_repeat": Check(colsum_repeat, "0 or 1 (a labelling note: 1 = the fp16 output changes run to run)", 20),
    "memeff_denom_repeat": Check(memeff_denom_repeat, "1: the float atomic sums differ run to run (the known P1)", 20),
    "block_mask_ragged": Check(block_mask_ragged, "0: the ragged last block reads 0 (no problem)", 20),
    "vsa_pool": Check(vsa_pool, "0: right at the callers' sizes", 20),
    "siglip_chunk": Check(siglip_chunk, "0: right at the callers' sizes", 20),
    "clip_fa": Check(clip_fa, "0: right; prints the fp16 cast's cost (a note)", 20),
    "colsum_causal_repeat": Check(colsum_causal_repeat, "1: kernel_causal.py:93 real (0: relabel false)", 45),
    "grad_both_repeat": Check(grad_both_repeat, "1: distributed_clip_loss.py:125, 127 real", 45),
    "qwen3_denom_repeat": Check(qwen3_denom_repeat, "1: memeff _common.py:307 real", 45),
    "qwen3_grad_repeat": Check(qwen3_grad_repeat, "1: memeff _common.py:355, 362 real", 45),
}
