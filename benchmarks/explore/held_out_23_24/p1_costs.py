"""Issue 35, held_out_23/24 labels: the cost of two P1 findings labelled false by reading (GPU only; NOT the audit).

    python benchmarks/explore/held_out_23_24/p1_costs.py roundtrip | autotune

roundtrip  minference/flash_attn_triton.py's _fwd_kernel stores acc_o_scale / o_scale to TMP and loads them back at
           once (lines 159-160, 190-191: the global_roundtrip P1s). Times _flash_attn_triton_decoding as the file
           ships it and as a copy without the two store/load pairs, on a decode step (bsz 1, q 1, kv 4096, 32 heads,
           d 128) and a causal prefill (q = kv = 4096); the outputs must be equal. The label (false: 512 B per
           128 x 128 K/V tile pair of 64 KB, < 1% of the traffic) holds if the copy is < 5% faster on both.
autotune   fp_quant mxfp4 / nvfp4: @triton.autotune(key=[]) tunes BLOCK_SIZE (1024 .. 16384) once, at the first call
           (the autotune_key P1s). Times every config at the callers' sizes (activations 1, 48, 2048, 8192 tokens x
           4096; a weight 4096 x 4096 and 14336 x 4096) and prints, for each size, the best config and the worst
           slowdown of keeping the config the first call at another size would pick. The label (false: no size's
           pick is much worse at another) holds if that slowdown stays under 1.2x at every pair.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

import torch
import triton
import triton.testing

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE))
from gpu_checks import case, pair  # noqa: E402


def _load_text(text: str, name: str):
    path = Path(tempfile.mkdtemp()) / "minference" / "flash_attn_triton.py"  # the harness's stand-in keys on this
    path.parent.mkdir()
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _bench_fa(mod, q, k, v, causal: bool) -> float:
    return triton.testing.do_bench(lambda: mod._flash_attn_triton_decoding(q, k, v, 0.0, None, causal))


def _launcher(fn, kind: str, args, x, out, n: int, blk: int):
    """One launch of the un-tuned kernel at BLOCK_SIZE blk, with the arguments its wrapper passes."""
    hm, grid = args[1], (triton.cdiv(n, blk),)
    if kind == "mxfp4":
        mask = torch.empty_like(x, dtype=torch.bool)
        return lambda: fn[grid](x, hm, out, mask, n_elements=n, hadamard_dim=hm.shape[-1], group_size=32,
                                gaussian_scale=args[3], quest=args[4], BLOCK_SIZE=blk)
    return lambda: fn[grid](x, hm, args[2], out, n_elements=n, hadamard_dim=hm.shape[-1], BLOCK_SIZE=blk)


def roundtrip() -> None:
    t, h = pair("minference/flash_attn_triton.py")
    src = (ROOT / "tests/audit_public_corpus/minference/flash_attn_triton.py").read_text()
    cut = src.replace("        tl.store(t_ptrs, acc_o_scale)\n        acc_o_scale = tl.load(t_ptrs)\n", "")
    cut = cut.replace("    tl.store(t_ptrs, o_scale)\n    o_scale = tl.load(t_ptrs)\n", "")
    assert cut.count("tl.store(t_ptrs") == 0, "the round trips were not found: the file changed"
    t2 = _load_text(cut, "fa_triton_no_roundtrip")
    print("| call | as shipped ms | without TMP round trip ms | shipped / without | outputs equal |")
    print("|---|---|---|---|---|")
    for label, shape, causal in (("decode q1 kv4096", (1, 1, 4096, 32, 128), False),
                                 ("prefill q=kv=4096 causal", (1, 4096, 4096, 32, 128), True)):
        q, k, v = h.make_inputs(case(shape))[:3]
        a = t._flash_attn_triton_decoding(q, k, v, 0.0, None, causal)
        b = t2._flash_attn_triton_decoding(q, k, v, 0.0, None, causal)
        ms_a, ms_b = _bench_fa(t, q, k, v, causal), _bench_fa(t2, q, k, v, causal)
        print(f"| {label} | {ms_a:.4f} | {ms_b:.4f} | {ms_a / ms_b:.3f} | {torch.equal(a, b)} |")


def autotune() -> None:
    sizes = ((1, 4096), (48, 4096), (2048, 4096), (8192, 4096), (4096, 4096), (14336, 4096))
    for rel, wrapper_name in (("fp_quant/mxfp4.py", "mxfp4"), ("fp_quant/nvfp4.py", "nvfp4")):
        t, h = pair(rel)
        tuner = getattr(t, f"{wrapper_name}_forward_kernel")
        blocks = [c.kwargs["BLOCK_SIZE"] for c in tuner.configs]
        times: dict[tuple[int, int], dict[int, float]] = {}
        for shape in sizes:
            args = h.make_inputs(case(shape))
            x = args[0].contiguous()
            out, n = torch.empty_like(x), x.numel()
            times[shape] = {blk: triton.testing.do_bench(_launcher(tuner.fn, wrapper_name, args, x, out, n, blk))
                            for blk in blocks}
        print(f"{wrapper_name}: ms per BLOCK_SIZE")
        print("| size | " + " | ".join(str(b) for b in blocks) + " | best | worst kept-from-another-size / best |")
        print("|---|" + "---|" * (len(blocks) + 2))
        worst_all = 1.0
        for shape, per in times.items():
            best = min(per, key=per.get)
            picks = {min(p, key=p.get) for p in times.values()}  # the config a first call at each size would keep
            worst = max(per[b] for b in picks) / per[best]
            worst_all = max(worst_all, worst)
            print(f"| {shape} | " + " | ".join(f"{per[b]:.4f}" for b in blocks) + f" | {best} | {worst:.2f} |")
        print(f"{wrapper_name} worst slowdown of the first call's pick at another size: {worst_all:.2f}x "
              f"(label false holds under 1.2x)")


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("p1_costs: needs a GPU (timings)")
        sys.exit(2)
    {"roundtrip": roundtrip, "autotune": autotune}[sys.argv[1]]()
