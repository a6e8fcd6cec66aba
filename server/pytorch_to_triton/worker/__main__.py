"""Worker entry point: `python -m pytorch_to_triton.worker REQ_FD RES_FD` (see protocol.py)."""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any


def main() -> int:
    """Serve requests until shutdown or EOF."""
    req_fd, res_fd = int(sys.argv[1]), int(sys.argv[2])
    os.dup2(2, 1)  # user prints go to stderr, which the server caps; fd res_fd is protocol only
    sys.stdout = sys.stderr
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))

    from ..protocol import write_message
    from . import poison
    from .runtime import setup

    rt = setup()
    poison.install()
    from .guards import PatchWatch

    patches = PatchWatch()
    reader = os.fdopen(req_fd, "rb", buffering=0)
    buf = b""
    while True:
        chunk = reader.read(1 << 16)
        if not chunk:
            return 0
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if not line.strip():
                continue
            req = json.loads(line)
            if req.get("op") == "shutdown":
                return 0
            _serve(req, rt, patches, res_fd, write_message)
            if rt.device == "cuda" and not _cuda_healthy():
                # An illegal address or device assert poisons the CUDA context for good: let this process die
                # so the server starts a fresh one for the next call.
                os._exit(17)


def _cuda_healthy() -> bool:
    import torch

    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").add_(1).item()
        return True
    except Exception:  # noqa: BLE001
        return False


def _serve(req: dict[str, Any], rt: Any, patches: Any, res_fd: int, write: Any) -> None:
    rid = req.get("id", 0)

    def emit(kind: str, **fields: Any) -> None:
        write(res_fd, {"id": rid, "type": kind, **fields})

    from .tasks import TaskError

    try:
        result = _dispatch(req.get("op", ""), req.get("args") or {}, rt, patches, emit)
        result.setdefault("runtime", _runtime_info(rt))
        write(res_fd, {"id": rid, "type": "result", "result": result})
    except TaskError as e:
        write(res_fd, {"id": rid, "type": "error", "error": {"usage": e.usage, "phase": e.phase,
                                                             "type": "TaskError", "message": str(e)}})
    except Exception as e:  # noqa: BLE001 - anything else is reported, the worker stays up
        write(res_fd, {"id": rid, "type": "error", "error": {
            "phase": "worker", "type": type(e).__name__, "message": f"{e}\n{traceback.format_exc()[-3000:]}"}})


def _runtime_info(rt: Any) -> dict[str, Any]:
    return {"device": rt.device, "interpreter": rt.interpreter, "torch": rt.torch_version,
            "triton": rt.triton_version, "gpu": rt.gpu_name, **rt.info}


def _dispatch(op: str, args: dict[str, Any], rt: Any, patches: Any, emit: Any) -> dict[str, Any]:
    if op == "ping":
        return {"pong": True}
    if op == "validate":
        from .validate import validate_candidate

        return validate_candidate(args, rt, emit, patches)
    if op == "benchmark":
        from .bench import run_benchmark

        return run_benchmark(args, rt, emit, patches)
    if op == "compiled":
        from .bench import compiled_analysis

        return compiled_analysis(args, rt, emit, patches)
    raise ValueError(f"unknown op {op!r}")


if __name__ == "__main__":
    sys.exit(main())
