"""The static checks. Each walks the AST of one @triton.jit function or of a host function."""

from __future__ import annotations

import ast

from .model import AuditReport, Finding

HOST_SYNC = {"item", "cpu", "tolist", "numpy", "synchronize"}
TORCH_COMPUTE = {"matmul", "mm", "bmm", "softmax", "log_softmax", "layer_norm", "cross_entropy", "einsum",
                 "scaled_dot_product_attention", "cumsum", "logsumexp", "conv2d", "linear"}
CHECKS = ["unmasked_access", "masked_load_other", "unshifted_exp", "low_precision_accumulator",
          "int32_offset_overflow", "atomic_order", "grid_floor_division", "host_sync", "pytorch_compute",
          "try_except_fallback", "missing_autotune", "nonconstexpr_arange"]


def _name(node: ast.AST) -> str:
    """Dotted name of a call target: 'tl.load', 'x.item'."""
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _name(node.func)
    return ""


def _decorators(fn: ast.FunctionDef) -> list[str]:
    return [_name(d) for d in fn.decorator_list]


def _is_jit(fn: ast.FunctionDef) -> bool:
    return any(d.split(".")[-1] == "jit" for d in _decorators(fn))


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _src(source: str, node: ast.AST) -> str:
    return (ast.get_source_segment(source, node) or "").strip().splitlines()[0][:160]


class _Ctx:
    def __init__(self, source: str, filename: str, report: AuditReport):
        self.source, self.file, self.report = source, filename, report

    def add(self, check: str, category: str, severity: str, node: ast.AST, fn: str, why: str, fix: str,
            snippet: str = "") -> None:
        self.report.findings.append(Finding(id=check, category=category, severity=severity, file=self.file,
                                            line=getattr(node, "lineno", 0), function=fn,
                                            evidence=_src(self.source, node), why=why, fix=fix, snippet=snippet))


def _check_kernel(ctx: _Ctx, fn: ast.FunctionDef) -> None:
    arange_names: set[str] = set()
    loads: dict[str, ast.Call] = {}
    constexprs = {a.arg for a in fn.args.args if a.annotation is not None and "constexpr" in _name(a.annotation)}
    has_max = False
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    if _name(node.value).endswith("load"):
                        loads[t.id] = node.value
        if isinstance(node, ast.Assign):
            if any(isinstance(n, ast.Call) and _name(n).endswith("arange") for n in ast.walk(node.value)):
                arange_names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        if not isinstance(node, ast.Call):
            continue
        name = _name(node)
        short = name.split(".")[-1]
        if short in ("max", "maximum") and name.startswith("tl."):
            has_max = True
        if name in ("tl.load", "tl.store"):
            ptr = node.args[0] if node.args else _kw(node, "pointer")
            uses_arange = ptr is not None and any(isinstance(n, ast.Name) and n.id in arange_names
                                                  for n in ast.walk(ptr))
            if uses_arange and _kw(node, "mask") is None and _kw(node, "boundary_check") is None \
                    and not (name == "tl.load" and len(node.args) > 1) and not (name == "tl.store" and len(node.args) > 2):
                ctx.add("unmasked_access", "correctness", "P0", node, fn.name,
                        f"{name} of offsets from tl.arange without a mask reads/writes past the end when the size is "
                        "not a multiple of the block", "add mask=offs < n (and other= for loads)",
                        "mask = offs < n_elements\nx = tl.load(x_ptr + offs, mask=mask, other=0.0)")
        if name == "tl.arange":
            for a in node.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, int) and a.value & (a.value - 1):
                    ctx.add("nonconstexpr_arange", "correctness", "P0", node, fn.name,
                            "tl.arange bounds must be powers of two", "pad to triton.next_power_of_2 and mask")
                if isinstance(a, ast.Name) and a.id not in constexprs and a.id.isupper() is False:
                    ctx.add("nonconstexpr_arange", "correctness", "P0", node, fn.name,
                            f"tl.arange bound {a.id} is not a tl.constexpr parameter",
                            f"declare {a.id}: tl.constexpr (a power of two) and mask the tail")
        if name in ("tl.exp", "tl.exp2"):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Name) and arg.id in loads:
                ctx.add("unshifted_exp", "numerical_stability", "P0", node, fn.name,
                        "exp of raw loaded values overflows for inputs above ~88 (fp32); softmax/logsumexp must "
                        "subtract the row max first", "x = x - tl.max(x, axis=0); e = tl.exp(x)")
        if name == "tl.zeros":
            dt = _kw(node, "dtype") or (node.args[1] if len(node.args) > 1 else None)
            if dt is not None and _name(dt) in ("tl.float16", "tl.bfloat16"):
                ctx.add("low_precision_accumulator", "numerical_stability", "P0", node, fn.name,
                        "accumulating in fp16/bf16 loses precision and overflows on long reductions",
                        "accumulate in tl.float32 and cast when storing")
        if name.startswith("tl.atomic_"):
            ctx.add("atomic_order", "correctness", "P1", node, fn.name,
                    "float atomics add in a different order each run: results are not bitwise reproducible",
                    "reduce per-program partials into a buffer and sum them in a second pass")
        if short in ("max", "min", "sum") and name.startswith("tl.") and node.args:
            arg = node.args[0]
            src = loads.get(arg.id) if isinstance(arg, ast.Name) else None
            if src is not None and _kw(src, "mask") is not None:
                other = _kw(src, "other")
                val = other.value if isinstance(other, ast.Constant) else None
                text = _src(ctx.source, other) if other is not None else ""
                bad = (short == "max" and (other is None or val == 0)) or (short == "min" and (other is None or val == 0)) \
                    or (short == "sum" and "inf" in text)
                if bad:
                    ctx.add("masked_load_other", "correctness", "P0", src, fn.name,
                            f"masked lanes load other={text or 'undefined'} and then feed tl.{short}",
                            "use other=-float('inf') for max, float('inf') for min, 0.0 for sum")
    _ = has_max
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            sides = [node.left, node.right]
            if any(isinstance(s, ast.Call) and _name(s) == "tl.program_id" for s in sides) and not any(
                    "int64" in _src(ctx.source, s) for s in sides):
                ctx.add("int32_offset_overflow", "memory_access", "P2", node, fn.name,
                        "program_id * stride is computed in int32 and overflows past 2**31 elements",
                        "pid = tl.program_id(0).to(tl.int64) before multiplying by a stride")
                break


def _check_host(ctx: _Ctx, fn: ast.FunctionDef, kernels: set[str]) -> None:
    launches = [n for n in ast.walk(fn) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                and n.value.id in kernels]
    if not launches:
        return
    for sub in launches:
        for n in ast.walk(sub.slice):
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv):
                ctx.add("grid_floor_division", "correctness", "P0", n, fn.name,
                        "a grid of n // BLOCK programs skips the tail when n is not a multiple of BLOCK",
                        "use triton.cdiv(n, BLOCK)", "grid = (triton.cdiv(n, BLOCK),)")
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            name = _name(node)
            short = name.split(".")[-1]
            if short in HOST_SYNC and isinstance(node.func, ast.Attribute) and (short != "synchronize" or "cuda" in name):
                ctx.add("host_sync", "performance", "P1", node, fn.name,
                        f".{short}() in the launch wrapper blocks the host until the GPU is done",
                        "keep values on the device; pass tensors, not Python numbers")
            if short in TORCH_COMPUTE and (name.startswith(("torch.", "F.")) or ".functional." in name):
                ctx.add("pytorch_compute", "best_practices", "P0", node, fn.name,
                        f"{name} computes in PyTorch inside the Triton candidate's forward path",
                        "move the computation into the Triton kernel")
        if isinstance(node, ast.Try):
            ctx.add("try_except_fallback", "best_practices", "P1", node, fn.name,
                    "a try/except in the wrapper can silently fall back to another path",
                    "let errors surface; validate inputs explicitly")


def audit_source(source: str, filename: str = "<inline>") -> AuditReport:
    """Audit Triton source statically (AST only; the code is never executed)."""
    report = AuditReport(file=filename, checked=list(CHECKS))
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        report.findings.append(Finding(id="syntax_error", category="correctness", severity="P0", file=filename,
                                       line=e.lineno or 0, evidence=(e.text or "").strip(), why=str(e.msg),
                                       fix="fix the syntax error"))
        return report.finalize()
    ctx = _Ctx(source, filename, report)
    funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    kernels = {f.name for f in funcs if _is_jit(f)}
    for f in funcs:
        if _is_jit(f):
            decos = _decorators(f)
            report.kernels.append({"name": f.name, "line": f.lineno, "autotune": any("autotune" in d for d in decos),
                                   "constexprs": [a.arg for a in f.args.args if a.annotation is not None
                                                  and "constexpr" in _name(a.annotation)]})
            _check_kernel(ctx, f)
        else:
            _check_host(ctx, f, kernels)
    if kernels and not any(k["autotune"] for k in report.kernels):
        k0 = report.kernels[0]
        report.findings.append(Finding(id="missing_autotune", category="performance", severity="P2", file=filename,
                                       line=k0["line"], function=k0["name"], evidence=f"def {k0['name']}",
                                       why="block sizes and num_warps tuned for one shape are slow on others",
                                       fix="wrap the kernel in @triton.autotune(configs=[...], key=[size args])"))
    if not kernels:
        report.not_checked.append("no @triton.jit function found in the file")
    return report.finalize()
