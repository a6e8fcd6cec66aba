"""The compile child: compiles recorded launches for a GPU target in a fresh process, GPU or not.

Run as `python -m pytorch_to_triton.worker.target_compile_child` with a JSON request on stdin
({"jobs": [LaunchSpec.as_dict(), ...], "targets": [90, ...]}); answers JSON on stdout (one object: per job and
target, one row per config). Why a child process: the worker runs Triton's interpreter, whose patches and
InterpretedFunction objects must not reach a real compile, and an MLIR abort on a user's kernel must not kill the
worker. Without TRITON_INTERPRET the candidate's module is imported as a GPU would import it, so an @autotune
kernel offers its GPU configs (files often offer one config to the interpreter).

Per config: success, or the compiler's message with the line in the kernel's file; registers, spills ((stack +
local bytes) / 4, as Triton's own n_spills), shared memory (Triton's dynamic allocation), local memory, from the cubin
(cuobjdump --dump-resource-usage, shipped in Triton's wheel); warnings raised while compiling.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

_RESOURCE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def _load(spec: dict[str, Any], cache: dict[str, Any]) -> Any:
    """The module that defines the kernel: by file path (a script or a task folder), else by module name."""
    path = spec["file"]
    if path in cache:
        return cache[path]
    mod = None
    if path and Path(path).is_file():
        d = str(Path(path).parent)
        if d not in sys.path:
            sys.path.insert(0, d)
        name = f"_p2t_target_{len(cache)}_{Path(path).stem}"
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is not None and loader_spec.loader is not None:
            mod = importlib.util.module_from_spec(loader_spec)
            sys.modules[name] = mod
            try:
                loader_spec.loader.exec_module(mod)
            except ImportError:  # a package module with relative imports: import it by its own name
                mod = None
    if mod is None:
        mod = importlib.import_module(spec["module"])
    cache[path] = mod
    return mod


def _find(mod: Any, qualname: str) -> tuple[Any, Any]:
    """(outermost object at the qualname, the JITFunction under it)."""
    obj = mod
    for part in qualname.split("."):
        if part == "<locals>":
            raise LookupError(f"{qualname} is defined inside a function: a fresh import cannot reach it")
        obj = getattr(obj, part)
    from triton.runtime.jit import JITFunction

    inner = obj
    for _ in range(8):
        if isinstance(inner, JITFunction):
            return obj, inner
        inner = getattr(inner, "fn", None)
    raise LookupError(f"{qualname} is no @triton.jit kernel outside the interpreter")


def _configs(outer: Any, spec: dict[str, Any]) -> list[Any]:
    """The configs a GPU would try: the autotuner's full list (before pruning), else the launch's own options."""
    for _ in range(8):
        if outer is None:
            break
        if type(outer).__name__ == "Autotuner":
            return list(outer.configs)
        outer = getattr(outer, "fn", None)
    return [None]


def _describe(cfg: Any, spec: dict[str, Any]) -> str:
    if cfg is None:
        opts = spec["options"]
        consts = [f"{p['name']}={p['value']}" for p in spec["params"] if p["type"] == "constexpr"
                  and isinstance(p["value"], (int, bool, str))][:8]
        return ", ".join(consts + [f"{k}={opts[k]}" for k in ("num_warps", "num_stages") if k in opts]) or \
            "the launch's options"
    kw = cfg.all_kwargs() if hasattr(cfg, "all_kwargs") else dict(cfg.kwargs)
    return ", ".join(f"{k}={v}" for k, v in kw.items() if k != "ir_override")


def _rebuild(v: Any) -> Any:
    if isinstance(v, dict) and "tl_dtype" in v:
        import triton.language as tl

        return getattr(tl, v["tl_dtype"]) if hasattr(tl, v["tl_dtype"]) else tl.str_to_ty(v["tl_dtype"])
    if isinstance(v, list):
        return tuple(_rebuild(x) for x in v)
    return v


def _error_line(exc: BaseException, file: str) -> tuple[int | None, str]:
    """The line of the kernel's file the compiler points at (innermost CompilationError), and its message."""
    inner, e = None, exc
    seen = 0
    while e is not None and seen < 16:
        if type(e).__name__ == "CompilationError":
            inner = e
        e = e.__cause__ or e.__context__
        seen += 1
    msg = str(exc).strip()
    if inner is None or not getattr(inner, "src", None) or not file:
        return None, msg
    node = getattr(inner, "node", None)
    rel = getattr(node, "lineno", None)
    first = inner.src.splitlines()[0].strip() if inner.src.strip() else ""
    try:
        lines = Path(file).read_text().splitlines()
    except OSError:
        return None, msg
    start = next((i + 1 for i, ln in enumerate(lines) if ln.strip() == first), None)
    if start is None or rel is None:
        return None, msg
    return start + rel - 1, msg


def _resources(cubin: bytes, tool: str | None) -> dict[str, int]:
    """REG/STACK/SHARED/LOCAL of the cubin's kernel (cuobjdump); {} when the tool is missing."""
    if not tool or not cubin:
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    try:
        out = subprocess.run([tool, "--dump-resource-usage", f.name], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)
    m = _RESOURCE.search(out.stdout)
    if not m:
        return {}
    regs, stack, static_shared, local = (int(x) for x in m.groups())
    # Triton's own n_spills is the driver's local size per thread / 4, which counts the stack frame (where ptxas
    # puts spilled registers) and local arrays together
    return {"n_regs": regs, "stack": stack, "static_shared": static_shared, "local_bytes": local,
            "n_spills": (stack + local) // 4}


def _cuobjdump() -> str | None:
    import triton

    bundled = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    return str(bundled) if bundled.exists() else shutil.which("cuobjdump")


def compile_one(spec: dict[str, Any], cfg: Any, cc: int, jit: Any, tool: str | None) -> dict[str, Any]:
    """Compile one (launch, config) for sm_<cc>; a row with ok, the error or the resources, and the warnings."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend
    from triton.compiler import compile as triton_compile

    row: dict[str, Any] = {"config": _describe(cfg, spec), "target": f"sm_{cc}", "ok": False}
    target = GPUTarget("cuda", cc, 32)
    backend = make_backend(target)
    kwargs: dict[str, Any] = {k: _rebuild(v) for k, v in spec["options"].items()}
    values = {p["name"]: _rebuild(p["value"]) for p in spec["params"] if p["type"] == "constexpr"}
    if cfg is not None:
        for k, v in cfg.all_kwargs().items() if hasattr(cfg, "all_kwargs") else cfg.kwargs.items():
            if k == "ir_override":
                continue
            (values if k in values else kwargs)[k] = v
    kwargs.update(values)
    specialization = [("constexpr", values[p["name"]]) if p["type"] == "constexpr" else
                      (_rebuild(p["type"]), _rebuild(p["attr"])) for p in spec["params"]]
    bound = {p["name"]: values.get(p["name"]) for p in spec["params"]}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            options, signature, constexprs, attrs = jit._pack_args(backend, kwargs, bound, specialization,
                                                                   backend.parse_options(kwargs))
            kernel = triton_compile(ASTSource(jit, signature, constexprs, attrs), target=target,
                                    options=options.__dict__)
        except Exception as e:  # noqa: BLE001 - the compiler's verdict on the user's kernel is the result
            line, msg = _error_line(e, spec["file"])
            row.update(error=f"{type(e).__name__}: {msg[-1500:]}", line=line)
            kernel = None
    row["compile_s"] = round(time.perf_counter() - t0, 3)
    row["warnings"] = sorted({str(w.message)[:300] for w in caught if _is_user_warning(w)})
    if kernel is None:
        return row
    md = kernel.metadata
    row.update(ok=True, shared=int(getattr(md, "shared", 0) or 0), num_warps=getattr(md, "num_warps", None),
               num_stages=getattr(md, "num_stages", None))
    row.update(_resources(kernel.asm.get("cubin", b""), tool))
    return row


def _is_user_warning(w: Any) -> bool:
    """Warnings about the kernel's code (Triton's deprecations), not the machinery's own."""
    where = str(getattr(w, "filename", "")).replace(os.sep, "/")
    return "/triton/language/" in where  # raised while building the user's code; the compiler's own are machinery


def _row_key(jit: Any, spec: dict[str, Any], cfg: Any, cc: int) -> str:
    """The key of one row: what Triton's own cache keys on (the kernel's and its callees' source via
    JITFunction.cache_key, the specialisation, the options), the target and this Triton."""
    import hashlib

    import triton

    cfg_kw = {} if cfg is None else (cfg.all_kwargs() if hasattr(cfg, "all_kwargs") else dict(cfg.kwargs))
    text = json.dumps([jit.cache_key, spec["params"], spec["options"], sorted((k, str(v)) for k, v in cfg_kw.items()),
                       cc, triton.__version__], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _cached_compile(spec: dict[str, Any], cfg: Any, cc: int, jit: Any, tool: str | None, rows_dir: Path | None
                    ) -> dict[str, Any]:
    """compile_one behind a per-row cache: a row is kept only once compiled here, so its warnings are the
    frontend's (a hit in Triton's own cache skips the frontend and would lose them)."""
    if rows_dir is None:
        return compile_one(spec, cfg, cc, jit, tool)
    path = rows_dir / f"{_row_key(jit, spec, cfg, cc)}.json"
    try:
        return dict(json.loads(path.read_text()), row_cached=True)
    except (OSError, ValueError):
        pass
    row = compile_one(spec, cfg, cc, jit, tool)
    if row.get("ok") is not None:
        try:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(row, default=str))
            tmp.replace(path)
        except OSError:
            pass
    return row


def run(request: dict[str, Any]) -> dict[str, Any]:
    """Every job for every target; a job that cannot be loaded gives one row with its reason."""
    import triton

    tool = _cuobjdump()
    rows_dir = Path(request["rows_cache"]) if request.get("rows_cache") else None
    if rows_dir is not None:
        rows_dir.mkdir(parents=True, exist_ok=True)
    modules: dict[str, Any] = {}
    out: list[dict[str, Any]] = []
    for spec in request["jobs"]:
        rows: list[dict[str, Any]] = []
        try:
            outer, jit = _find(_load(spec, modules), spec["qualname"])
        except Exception as e:  # noqa: BLE001 - a kernel a fresh import cannot reach is a note, not a failure
            out.append({"job": spec.get("id"), "unreachable": f"{type(e).__name__}: {str(e)[:300]}", "rows": []})
            continue
        configs = _configs(outer, spec) if spec.get("autotuned") else [None]
        for cc in request["targets"]:
            for cfg in configs:
                try:
                    rows.append(_cached_compile(spec, cfg, int(cc), jit, tool, rows_dir))
                except Exception as e:  # noqa: BLE001 - a fault of this tool, named per row
                    rows.append({"config": _describe(cfg, spec), "target": f"sm_{cc}", "ok": None,
                                 "internal": f"{type(e).__name__}: {e}"[:300] + traceback.format_exc()[-600:]})
        out.append({"job": spec.get("id"), "rows": rows, "pruned": _has_prune(outer)})
    return {"triton_version": triton.__version__, "cuobjdump": tool, "results": out}


def _has_prune(outer: Any) -> bool:
    """Whether an autotuner prunes its configs per call (a config it drops never compiles on the GPU)."""
    for _ in range(8):
        if outer is None:
            return False
        if type(outer).__name__ == "Autotuner":
            return bool(getattr(outer, "early_config_prune", None) or getattr(outer, "perf_model", None))
        outer = getattr(outer, "fn", None)
    return False


def main() -> int:
    """Read the request on stdin, answer on stdout (the only output of this process)."""
    os.environ.pop("TRITON_INTERPRET", None)
    request = json.loads(sys.stdin.read())
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # the user's module may print at import: keep stdout for the answer
    try:
        answer = run(request)
    finally:
        sys.stdout = real_stdout
    real_stdout.write(json.dumps(answer, default=str))
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
