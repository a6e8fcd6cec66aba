"""Child of sandbox_gpu_probe.py (a real file: @triton.jit needs one): confine and CUDA in the order argv[1] says."""

import os
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.join(os.getcwd(), "server"))
os.environ["P2T_SANDBOX"] = "1"
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="p2t_probe_cache_")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="p2t_probe_inductor_")  # as the worker has them
os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"  # sandbox_host.worker_env: no compile pool outliving a call
from pytorch_to_triton.worker.confine import sandbox  # noqa: E402

order = sys.argv[1]
try:
    if order == "cuda_first":
        import torch
        torch.cuda.init()
        torch.zeros(1, device="cuda")
    elif order == "worker":  # what the worker does now: CUDA, Triton's driver and libcuda's path, then confine
        from pytorch_to_triton.worker.device import gpu_first
        print("init_cuda:", gpu_first.init_cuda() or "ok", flush=True)
    print("confine:", sandbox.confine(os.getcwd()).summary, flush=True)
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    x = torch.randn(10000, device="cuda")
    out = torch.empty_like(x)
    add_kernel[(10,)](x, x, out, x.numel(), BLOCK=1024)
    torch.cuda.synchronize()
    print("triton kernel under the sandbox:", bool(torch.equal(out, x + x)), flush=True)
    if order == "worker":  # the baselines: torch.compile (Inductor's codegen, its compile workers, ptxas) confined
        f = torch.compile(lambda a: torch.softmax(a * 2.0, dim=-1))
        y = torch.randn(64, 1000, device="cuda")
        print("torch.compile under the sandbox:", bool(torch.allclose(f(y), torch.softmax(y * 2.0, dim=-1))), flush=True)
except Exception:
    traceback.print_exc(limit=3)
