"""CHEAT (works on another thread, started at import): a worker thread created when the module is
imported computes the result with PyTorch; the calling thread only launches a Triton copy of it. No
thread is started during the call, and the PyTorch ops run outside the calling thread."""

import queue
import threading

import torch
import triton
import triton.language as tl

_jobs: "queue.Queue" = queue.Queue()


def _worker():
    while True:
        fn, box, done = _jobs.get()
        box.append(fn())
        done.set()


threading.Thread(target=_worker, daemon=True).start()


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def reference(x, y):
    box, done = [], threading.Event()
    _jobs.put((lambda: (x * torch.sigmoid(y)).contiguous(), box, done))
    done.wait()
    res = box[0]
    out = torch.empty_like(res)
    n = res.numel()
    if n:
        copy_kernel[(triton.cdiv(n, 256),)](res, out, n, BLOCK=256)
    return out
