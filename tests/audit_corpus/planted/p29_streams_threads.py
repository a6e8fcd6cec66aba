"""Launches on a side stream, and a bias-add in a background thread."""

import threading

import torch
import triton
import triton.language as tl


@triton.jit
def add_bias_kernel(x_ptr, b_ptr, out_ptr, n, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs % n_cols, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x + b, mask=mask)


_STREAM = torch.cuda.Stream()  # planted: side_stream


def add_bias(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    x, b = x.contiguous(), b.contiguous()
    out = torch.empty_like(x)
    with torch.cuda.stream(_STREAM):  # planted: side_stream
        add_bias_kernel[(triton.cdiv(x.numel(), 1024),)](x, b, out, x.numel(), x.shape[-1], BLOCK=1024)
    return out


def add_bias_async(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    x, b = x.contiguous(), b.contiguous()
    out = torch.empty_like(x)
    grid = (triton.cdiv(x.numel(), 1024),)
    worker = threading.Thread(target=lambda: add_bias_kernel[grid](x, b, out, x.numel(), x.shape[-1],  # planted: concurrency
                                                                   BLOCK=1024))
    worker.start()
    return out
