"""Kernels for benchmarks/explore/gpu_facts.sh: an out-of-bounds load, its clean twin, a shared-memory race
candidate (tl.atomic-free reduction through a scratch row), the register count of the H200's own compile, and
one causal D128 attention stage-3 forward beside SDPA (for ncu)."""

import sys

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if MASKED:
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(y_ptr + offs, x, mask=offs < n)
    else:
        x = tl.load(x_ptr + offs)  # reads past n on the last block
        tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def race_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # every program writes out[0]: a global write-write race between blocks
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0))
    tl.store(out_ptr, s)


def main(mode: str) -> None:
    n = 1000
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    if mode in ("oob", "clean"):
        copy_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, MASKED=(mode == "clean"))
        torch.cuda.synchronize()
        print("done", mode)
    elif mode == "race":
        out = torch.zeros(1, device="cuda")
        race_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
        torch.cuda.synchronize()
        print("done race")
    elif mode == "regs":
        k = copy_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256, MASKED=True)
        print("copy_kernel n_regs", k.n_regs, "n_spills", k.n_spills, "shared", k.metadata.shared)
    elif mode == "attn":
        sys.path.insert(0, "examples/flash_attention")
        import stage3

        q, k, v = (torch.randn(4, 32, 4096, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        for _ in range(3):
            stage3.attention(q, k, v)
            torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        torch.cuda.synchronize()
        print("done attn")


if __name__ == "__main__":
    main(sys.argv[1])
