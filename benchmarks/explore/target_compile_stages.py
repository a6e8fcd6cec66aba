"""Where one target compile (sm_90, CPU) spends its time: frontend (AST -> TTIR), TTIR/TTGIR passes, LLVM, PTX, ptxas.

Reads the launches a validation dumped (P2T_DUMP_LAUNCH_SPECS=DIR, P2T_SANDBOX=0) and compiles each distinct
specialisation (every autotune config of the first) in this process, with a fresh Triton cache, timing each stage.

    P2T_SANDBOX=0 P2T_DUMP_LAUNCH_SPECS=/tmp/specs pytorch-to-triton validate examples/layernorm/reference.py \
        examples/layernorm/stage3.py
    PYTHONPATH=$PWD/server python benchmarks/explore/target_compile_stages.py /tmp/specs/*.json [--max 12]
"""

from __future__ import annotations

import argparse
import collections
import inspect
import json
import os
import sys
import tempfile
import time

os.environ.pop("TRITON_INTERPRET", None)
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="p2t_stage_prof_")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--max", type=int, default=12, help="configs per specialisation")
    a = ap.parse_args()
    import triton.backends.nvidia.compiler as nv
    from triton.compiler import compiler as tcomp

    from pytorch_to_triton.worker.device import target_compile_child as child

    spent: dict[str, float] = collections.defaultdict(float)

    def timed(name, f):
        def g(*args, **kw):
            t0 = time.perf_counter()
            try:
                return f(*args, **kw)
            finally:
                spent[name] += time.perf_counter() - t0
        return g

    tcomp.ASTSource.make_ir = timed("frontend", tcomp.ASTSource.make_ir)
    for st in ("make_ttir", "make_ttgir", "make_llir", "make_ptx", "make_cubin"):
        raw = inspect.getattr_static(nv.CUDABackend, st)
        wrapped = timed(st, raw.__func__ if isinstance(raw, staticmethod) else raw)
        setattr(nv.CUDABackend, st, staticmethod(wrapped) if isinstance(raw, staticmethod) else wrapped)
    tool = child._cuobjdump()
    mods: dict = {}
    for path in a.dumps:
        d = json.load(open(path))
        seen = set()
        for s in d["specs"]:
            if s["key"] in seen or s.get("error"):
                continue
            seen.add(s["key"])
            outer, jit = child._find(child._load(s, mods), s["qualname"])
            cfgs = child._configs(outer, s) if s["autotuned"] and len(seen) == 1 else [None]
            for cfg in cfgs[: a.max]:
                spent.clear()
                t0 = time.perf_counter()
                row = child.compile_one(s, cfg, 90, jit, tool)
                total = time.perf_counter() - t0
                print(json.dumps({"kernel": s["kernel"], "config": row["config"][:60], "ok": row["ok"],
                                  "total": round(total, 3), **{k: round(v, 3) for k, v in spent.items()},
                                  "shared": row.get("shared"), "regs": row.get("n_regs"),
                                  "error": (row.get("error") or "")[-200:]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
