"""The compile child: compiles recorded launches for a GPU target in a fresh process, GPU or not.

Run as `python -m pytorch_to_triton.worker.device.target_compile_child`; reads JSON lines on stdin while it works:
{"jobs": [LaunchSpec.as_dict() + id, ...], "targets": [90, ...], "share": 0.15 | null, "elapsed_s": ...} (more jobs
may follow, one line each), then {"finish": true, "elapsed_s": ...} (or the end of stdin); answers one JSON object on
stdout (per job and target, one row per config). Why a child process: the worker runs Triton's interpreter, whose
patches and InterpretedFunction objects must not reach a real compile, and an MLIR abort on a user's kernel must not
kill the worker. Without TRITON_INTERPRET the candidate's module is imported as a GPU would import it, so an
@autotune kernel offers its GPU configs (files often offer one config to the interpreter). One child per validation:
torch, Triton and the user's module are imported once (about 3 s here), not once per batch of new launches.

Two levels per config (issue 36's cost bar; measured on layer_norm_fwd_kernel's configs, this CPU: Triton's frontend
AST -> TTIR 0.02-0.06 s, TTGIR 0.1-0.2 s, LLVM 0.2-1.5 s, PTX 0.01-0.3 s, ptxas 0.07-0.9 s):
- "front": Triton's frontend and the TTIR passes, for every config of every job. It raises the CompilationErrors
  the interpreter lets through (a float global, a non-constexpr shape, ...) and the deprecation warnings; it knows
  no resources. Its TTIR text, with the backend options, is the config's binary's identity: two configs with the
  same are compiled once (a loop-free kernel's num_stages changes nothing: the pipeliner works on loops).
- "full": the whole pipeline to a cubin (registers, spills, shared memory, local memory from cuobjdump). Always for
  the config the interpreter ran and the two configs most likely to overflow (largest tile x num_stages: shared
  memory; largest tile per warp: spills); for the others while the budget lasts: `share` x the validation's time
  (share null: every config). What the budget left at "front" is named in the answer, never passed over silently.

Per config: success, or the compiler's message with the line in the kernel's file; registers, spills ((stack +
local bytes) / 4, as Triton's own n_spills), shared memory (Triton's dynamic allocation), local memory, from the cubin
(cuobjdump --dump-resource-usage, shipped in Triton's wheel); warnings raised while compiling.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

ROW_VERSION = 2  # 2: rows carry their config's meta-parameters and options (_settings)
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

        if hasattr(tl, v["tl_dtype"]):
            return getattr(tl, v["tl_dtype"])
        try:
            return tl.str_to_ty(v["tl_dtype"])  # Triton 3.6: str_to_ty(name)
        except TypeError:
            return tl.str_to_ty(v["tl_dtype"], None)  # Triton 3.9: str_to_ty(name, c)
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


def _prepare(spec: dict[str, Any], cfg: Any, cc: int, jit: Any) -> tuple[Any, Any, Any, Any]:
    """(target, backend, ASTSource, options dict) of one (launch, config) for sm_<cc>: the JIT's own packing."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource, make_backend

    target = GPUTarget("cuda", cc, 32)
    backend = make_backend(target)
    kwargs: dict[str, Any] = {k: _rebuild(v) for k, v in spec["options"].items()}
    values = {p["name"]: _rebuild(p["value"]) for p in spec["params"] if p["type"] == "constexpr"}
    if cfg is not None:
        for k, v in _cfg_kwargs(cfg).items():
            (values if k in values else kwargs)[k] = v
    kwargs.update(values)
    specialization = [("constexpr", values[p["name"]]) if p["type"] == "constexpr" else
                      (_rebuild(p["type"]), _rebuild(p["attr"])) for p in spec["params"]]
    bound = {p["name"]: values.get(p["name"]) for p in spec["params"]}
    options, signature, constexprs, attrs = jit._pack_args(backend, kwargs, bound, specialization,
                                                           backend.parse_options(kwargs))
    return target, backend, ASTSource(jit, signature, constexprs, attrs), options.__dict__


def _cfg_kwargs(cfg: Any) -> dict[str, Any]:
    if cfg is None:
        return {}
    kw = cfg.all_kwargs() if hasattr(cfg, "all_kwargs") else dict(cfg.kwargs)
    return {k: v for k, v in kw.items() if k != "ir_override"}


def compile_one(spec: dict[str, Any], cfg: Any, cc: int, jit: Any, tool: str | None) -> dict[str, Any]:
    """Compile one (launch, config) for sm_<cc> to a cubin; a row with ok, the error or the resources, and the
    warnings (level "full")."""
    from triton.compiler import compile as triton_compile

    row: dict[str, Any] = {"config": _describe(cfg, spec), "target": f"sm_{cc}", "ok": False, "level": "full",
                           **_settings(cfg, spec)}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            target, _, src, options = _prepare(spec, cfg, cc, jit)
            kernel = triton_compile(src, target=target, options=options)
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


def front_one(spec: dict[str, Any], cfg: Any, cc: int, jit: Any) -> dict[str, Any]:
    """Triton's frontend (AST -> TTIR) and the TTIR passes for one (launch, config): a row with ok or the error and
    the line, the warnings, the TTIR's hash and whether it loops. Uses what triton.compile uses (ASTSource.make_ir,
    backend.add_stages' "ttir"), present from Triton 3.6 to 3.9. Neither reads num_warps, num_stages, num_ctas or
    maxnreg (3.6 and 3.9: the frontend's options are arch, debug, fp and dot-precision settings), so configs that
    differ only there share one frontend run (Session)."""
    from triton._C.libtriton import ir

    row: dict[str, Any] = {"config": _describe(cfg, spec), "target": f"sm_{cc}", "ok": False, "level": "front",
                           **_settings(cfg, spec)}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            target, backend, src, opt_dict = _prepare(spec, cfg, cc, jit)
            options = backend.parse_options(dict(opt_dict, **src.parse_options()))
            context = ir.context()
            ir.load_dialects(context)
            backend.load_dialects(context)
            module = src.make_ir(target, options, backend.get_codegen_implementation(options),
                                 backend.get_module_map(), context)
            stages: dict[str, Any] = {}
            backend.add_stages(stages, options, src.language)
            ttir = str(stages["ttir"](module, {"target": target, **options.__dict__}))
        except Exception as e:  # noqa: BLE001 - the compiler's verdict on the user's kernel is the result
            line, msg = _error_line(e, spec["file"])
            row.update(error=f"{type(e).__name__}: {msg[-1500:]}", line=line)
            ttir = None
    row["compile_s"] = round(time.perf_counter() - t0, 3)
    row["warnings"] = sorted({str(w.message)[:300] for w in caught if _is_user_warning(w)})
    if ttir is None:
        return row
    row.update(ok=True, ttir=hashlib.sha256(ttir.encode()).hexdigest()[:24],
               loops="scf.for" in ttir or "scf.while" in ttir)
    return row


def _settings(cfg: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """A config's meta-parameters (plain values) and its num_warps / num_stages (the launch's own without a config):
    what the estimate counts each config at (worker/benchmark/estimate.py)."""
    meta, opts = _split(cfg, spec)
    opts = {**{k: v for k, v in spec["options"].items() if k in ("num_warps", "num_stages")}, **opts}
    return {"meta": {k: v for k, v in meta.items() if isinstance(v, (int, float, bool, str))},
            **{k: opts[k] for k in ("num_warps", "num_stages") if k in opts}}


def _split(cfg: Any, spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the config's meta-parameters: constexprs of the kernel, its options: num_warps, num_stages, ...)."""
    names = {p["name"] for p in spec["params"] if p["type"] == "constexpr"}
    kw = _cfg_kwargs(cfg)
    return {k: v for k, v in kw.items() if k in names}, {k: v for k, v in kw.items() if k not in names}


def binary_key(front: dict[str, Any], spec: dict[str, Any], cfg: Any, cc: int) -> str:
    """What decides a config's cubin: its TTIR (which holds the meta-parameters) and the backend options; a
    loop-free kernel's num_stages changes nothing (software pipelining, all it does, works on loops)."""
    opts = dict(spec["options"], **_split(cfg, spec)[1])
    if not front.get("loops"):
        opts.pop("num_stages", None)
    return hashlib.sha256(json.dumps([front.get("ttir"), cc, sorted((k, str(v)) for k, v in opts.items())])
                          .encode()).hexdigest()[:24]


def _is_user_warning(w: Any) -> bool:
    """Warnings about the kernel's code (Triton's deprecations), not the machinery's own."""
    where = str(getattr(w, "filename", "")).replace(os.sep, "/")
    return "/triton/language/" in where  # raised while building the user's code; the compiler's own are machinery


def _row_key(jit: Any, spec: dict[str, Any], cfg: Any, cc: int, level: str) -> str:
    """The key of one row: what Triton's own cache keys on (the kernel's and its callees' source via
    JITFunction.cache_key, the specialisation, the options), the target, this Triton and the level."""
    import triton

    text = json.dumps([ROW_VERSION, jit.cache_key, spec["params"], spec["options"],
                       sorted((k, str(v)) for k, v in _cfg_kwargs(cfg).items()), cc, triton.__version__, level],
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _cached(level: str, spec: dict[str, Any], cfg: Any, cc: int, jit: Any, tool: str | None,
            rows_dir: Path | None) -> dict[str, Any]:
    """front_one / compile_one behind a per-row cache: a row is kept only once compiled here, so its warnings are
    the frontend's (a hit in Triton's own cache skips the frontend and would lose them)."""
    def make() -> dict[str, Any]:
        return front_one(spec, cfg, cc, jit) if level == "front" else compile_one(spec, cfg, cc, jit, tool)

    if rows_dir is None:
        return make()
    path = rows_dir / f"{_row_key(jit, spec, cfg, cc, level)}.json"
    try:
        return dict(json.loads(path.read_text()), row_cached=True)
    except (OSError, ValueError):
        pass
    row = make()
    if row.get("ok") is not None:
        try:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(row, default=str))
            tmp.replace(path)
        except OSError:
            pass
    return row


def _ints(cfg: Any) -> tuple[int, int, int]:
    """(product of the config's int meta-parameters >= 2, num_stages, num_warps): the tile a config asks for."""
    kw = _cfg_kwargs(cfg)
    tile = 1
    for k, v in kw.items():
        if isinstance(v, int) and not isinstance(v, bool) and v >= 2 and k not in ("num_warps", "num_stages",
                                                                                    "num_ctas", "maxnreg"):
            tile *= v
    return tile, int(kw.get("num_stages") or 1), int(kw.get("num_warps") or 4)


def _launched(configs: list[Any], spec: dict[str, Any]) -> int:
    """Index of the config the interpreter ran (its meta-parameters and options match the launch's), else 0."""
    values = {p["name"]: p["value"] for p in spec["params"] if p["type"] == "constexpr"}
    values.update(spec["options"])
    for i, cfg in enumerate(configs):
        if cfg is not None and all(values.get(k) == v for k, v in _cfg_kwargs(cfg).items()
                                   if isinstance(v, (int, bool, str))):
            return i
    return 0


def must_compile(configs: list[Any], spec: dict[str, Any]) -> list[int]:
    """Configs compiled to a cubin whatever the budget (for a kernel's first specialisation): the one the
    interpreter ran, the largest tile x num_stages (shared memory) and the largest tile per warp (spills)."""
    if len(configs) <= 1:
        return list(range(len(configs)))
    shape = [_ints(c) for c in configs]
    smem = max(range(len(configs)), key=lambda i: (shape[i][0] * shape[i][1], -i))
    spill = max(range(len(configs)), key=lambda i: (shape[i][0] / shape[i][2], -i))
    return list(dict.fromkeys([_launched(configs, spec), smem, spill]))


class Session:
    """The jobs of one validation: the frontend of every config first, then full compiles, must-compile ones first,
    the rest while full compiles have taken less than share x the validation's time (share None: all of them)."""

    def __init__(self, targets: list[int], share: float | None, elapsed_s: float, rows_dir: Path | None):
        self.targets, self.share, self.rows_dir = [int(c) for c in targets], share, rows_dir
        self.t0 = time.perf_counter() - float(elapsed_s or 0.0)  # when the validation started, on this clock
        self.frozen: float | None = None  # the validation's length, once it is over
        self.tool = _cuobjdump()
        self.modules: dict[str, Any] = {}
        self.jobs: list[dict[str, Any]] = []  # per job: spec, configs, rows by (cc, i), queues
        self.front: list[tuple[int, int, int]] = []  # (job, cc, config index) still to check
        self.must: list[tuple[int, int, int]] = []
        self.optional: list[tuple[int, int, int]] = []
        self.full_s = self.front_s = self.load_s = 0.0
        self.binaries: dict[str, dict[str, Any]] = {}  # front's binary hash -> the full row compiled for it

    def add(self, specs: list[dict[str, Any]]) -> None:
        """New jobs (a job that cannot be loaded gets its reason, no rows)."""
        for spec in specs:
            job: dict[str, Any] = {"spec": spec, "rows": {}, "configs": [None], "fronts": {}}
            self.jobs.append(job)
            n = len(self.jobs) - 1
            t0 = time.perf_counter()
            try:
                outer, job["jit"] = _find(_load(spec, self.modules), spec["qualname"])
            except Exception as e:  # noqa: BLE001 - a kernel a fresh import cannot reach is a note, not a failure
                job["unreachable"] = f"{type(e).__name__}: {str(e)[:300]}"
                continue
            finally:
                self.load_s += time.perf_counter() - t0
            job["pruned"] = _has_prune(outer)
            if spec.get("autotuned"):
                job["configs"] = _configs(outer, spec)
                if spec.get("kept"):  # the configs this launch's pruning kept: the only ones a GPU compiles for it
                    from .launch_specs import config_signature

                    kept = set(spec["kept"])
                    job["configs"] = [c for c in job["configs"] if config_signature(c) in kept] or job["configs"]
            must = must_compile(job["configs"], spec)
            rest = sorted(set(range(len(job["configs"]))) - set(must),  # likeliest to overflow first
                          key=lambda i: tuple(-x for x in _ints(job["configs"][i])[:2]) + (i,))
            if not spec.get("must", True):  # a later specialisation of a kernel: its configs only while the budget lasts
                must, rest = [], must + rest
            if spec.get("front_only"):  # a case's specialisation beside the full size's: Triton's frontend only
                must, rest = [], []
            for cc in self.targets:
                self.front += [(n, cc, i) for i in range(len(job["configs"]))]
                self.must += [(n, cc, i) for i in must]
                self.optional += [(n, cc, i) for i in rest]

    def allowance(self) -> float:
        """Seconds of optional full compiles allowed so far: share x the validation's time (inf without a share)."""
        if self.share is None:
            return float("inf")
        length = self.frozen if self.frozen is not None else time.perf_counter() - self.t0
        return self.share * length

    def step(self) -> bool:
        """One piece of work, if any is due now; False when idle (nothing left, or the budget spent for now)."""
        while self.front:
            if self._row("front", *self.front.pop(0)):
                return True
        if self.must:
            self._row("full", *self.must.pop(0))
            return True
        while self.optional and self.full_s < self.allowance():
            n, cc, i = self.optional.pop(0)
            if self._row("full", n, cc, i):
                return True
        return False

    def _row(self, level: str, n: int, cc: int, i: int) -> bool:
        """Compile (n, cc, i) at this level; False when nothing was compiled (same binary as one compiled, or a
        frontend failure that a full compile would only repeat)."""
        job = self.jobs[n]
        cfg, spec = job["configs"][i], job["spec"]
        if level == "front":
            meta = json.dumps(sorted((k, str(v)) for k, v in _split(cfg, spec)[0].items()))
            twin = job["fronts"].get((cc, meta))
            if twin is not None:  # same meta-parameters: the same frontend run
                row = dict(job["rows"][twin], config=_describe(cfg, spec), compile_s=0.0,
                           front_of=job["rows"][twin]["config"], **_settings(cfg, spec))
            else:
                t0 = time.perf_counter()
                row = self._compile(level, job, cc, i)
                self.front_s += time.perf_counter() - t0
                job["fronts"][(cc, meta)] = (cc, i)
            if row.get("ok"):
                row["binary"] = binary_key(row, spec, cfg, cc)
            job["rows"][(cc, i)] = row
            return twin is None
        have = job["rows"].get((cc, i))
        if level == "full" and have is not None:
            if have.get("ok") is False:
                return False  # the frontend refused it: the full compile would fail the same way
            same = self.binaries.get(have.get("binary", ""))
            if same is not None:
                job["rows"][(cc, i)] = dict(same, config=have["config"], warnings=have.get("warnings", []),
                                            same_binary_as=same["config"], row_cached=have.get("row_cached"),
                                            **_settings(cfg, spec))
                return False
        t0 = time.perf_counter()
        row = self._compile(level, job, cc, i)
        if level == "full":
            self.full_s += time.perf_counter() - t0
            if have is not None:
                row["warnings"] = sorted(set(row.get("warnings") or []) | set(have.get("warnings") or []))
                if have.get("binary"):
                    row["binary"] = have["binary"]
                    if row.get("ok") is not None:
                        self.binaries.setdefault(have["binary"], row)
        job["rows"][(cc, i)] = row
        return True

    def _compile(self, level: str, job: dict[str, Any], cc: int, i: int) -> dict[str, Any]:
        cfg, spec = job["configs"][i], job["spec"]
        try:
            return _cached(level, spec, cfg, cc, job["jit"], self.tool, self.rows_dir)
        except Exception as e:  # noqa: BLE001 - a fault of this tool, named per row
            return {"config": _describe(cfg, spec), "target": f"sm_{cc}", "ok": None, "level": level,
                    "internal": f"{type(e).__name__}: {e}"[:300] + traceback.format_exc()[-600:]}

    def finish(self, elapsed_s: float | None) -> None:
        """The validation is over: the frontend of everything, the must-compile configs, then optional ones while
        the budget (share x the validation's length) lasts."""
        if elapsed_s is not None:
            self.t0 = time.perf_counter() - float(elapsed_s)
        self.frozen = time.perf_counter() - self.t0
        while self.step():
            pass
        for n, cc, i in self.optional:  # left by the budget: those whose binary is one compiled cost nothing
            row = self.jobs[n]["rows"].get((cc, i)) or {}
            same = self.binaries.get(row.get("binary", ""))
            if row.get("ok") and same is not None:
                cfg, spec = self.jobs[n]["configs"][i], self.jobs[n]["spec"]
                self.jobs[n]["rows"][(cc, i)] = dict(same, config=row["config"], warnings=row.get("warnings", []),
                                                     same_binary_as=same["config"], **_settings(cfg, spec))

    def answer(self) -> dict[str, Any]:
        """Per job: rows in config order per target, and the configs the budget left at the frontend."""
        import triton

        out = []
        for job in self.jobs:
            if "unreachable" in job:
                out.append({"job": job["spec"].get("id"), "unreachable": job["unreachable"], "rows": []})
                continue
            rows = [job["rows"][(cc, i)] for cc in self.targets for i in range(len(job["configs"]))
                    if (cc, i) in job["rows"]]
            out.append({"job": job["spec"].get("id"), "rows": rows, "pruned": job.get("pruned", False)})
        return {"triton_version": triton.__version__, "cuobjdump": self.tool, "results": out,
                "share": self.share, "seconds": {"import": round(self.load_s, 3), "front": round(self.front_s, 3),
                                                 "full": round(self.full_s, 3)}}


def run(request: dict[str, Any]) -> dict[str, Any]:
    """Every job for every target at once (no budget unless the request names a share)."""
    sess = _session(request)
    sess.add(request.get("jobs", []))
    sess.finish(request.get("elapsed_s"))
    return sess.answer()


def _session(request: dict[str, Any]) -> Session:
    rows_dir = Path(request["rows_cache"]) if request.get("rows_cache") else None
    if rows_dir is not None:
        rows_dir.mkdir(parents=True, exist_ok=True)
    return Session(request.get("targets") or [90], request.get("share"), request.get("elapsed_s") or 0.0, rows_dir)


def _has_prune(outer: Any) -> bool:
    """Whether an autotuner prunes its configs per call (a config it drops never compiles on the GPU)."""
    for _ in range(8):
        if outer is None:
            return False
        if type(outer).__name__ == "Autotuner":
            return bool(getattr(outer, "early_config_prune", None) or getattr(outer, "perf_model", None))
        outer = getattr(outer, "fn", None)
    return False


def serve(lines: Any) -> dict[str, Any]:
    """The streaming form: the first line opens the session, later lines add jobs, {"finish": ...} (or the end of
    the input) ends it; work goes on between lines."""
    inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read() -> None:  # up to the finish line: what follows on a zygote's pipe is the next session's
        for line in lines:
            if line.strip():
                msg = json.loads(line)
                inbox.put(msg)
                if msg.get("finish"):
                    return
        inbox.put(None)

    threading.Thread(target=read, daemon=True).start()
    first = inbox.get()
    if first is None:
        return {"results": []}
    sess = _session(first)
    for path in first.get("preload") or []:  # the candidate's module, imported while the worker runs its cases
        try:
            _load({"file": path, "module": ""}, sess.modules)
        except Exception:  # noqa: BLE001, S110 - a job that needs the module says why it could not load
            pass
    sess.add(first.get("jobs", []))
    while True:
        busy = sess.step()
        try:  # idle: wait for the next line (the budget grows meanwhile: look again every second)
            msg = inbox.get_nowait() if busy else inbox.get(timeout=1.0)
        except queue.Empty:
            continue
        if msg is None or msg.get("finish"):
            sess.finish(None if msg is None else msg.get("elapsed_s"))
            return sess.answer()
        sess.add(msg.get("jobs", []))


def preload() -> None:
    """Import what every compile needs (the compile zygote does it once for all its children)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend

    make_backend(GPUTarget("cuda", 90, 32))  # loads the NVIDIA backend's modules
    _cuobjdump()


def main() -> int:
    """Read the request lines on stdin, answer on stdout (the only output of this process)."""
    os.environ.pop("TRITON_INTERPRET", None)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # the user's module may print at import: keep stdout for the answer
    try:
        answer = serve(sys.stdin)
    finally:
        sys.stdout = real_stdout
    real_stdout.write(json.dumps(answer, default=str) + "\n")  # one line: the reader stops at it, not at EOF
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
