"""libdevice math under Triton's CPU interpreter (installed only there).

Kernels call `libdevice.tanh(x)` (GELU-tanh, softcap), `libdevice.erf`, `libdevice.pow`... through
`triton.language.extra.libdevice` (stubs the compiler binds to the GPU's library: under the interpreter they return
None, so `libdevice.tanh(x) * 2` fails with "unsupported operand type(s) for *: 'NoneType'") or
`triton.language.extra.cuda.libdevice` (extern calls: "extern_elementwise not supported in interpreter mode"). On a
GPU those kernels are right, so the validator failed correct kernels and the audit reported interpreter gaps as P0s
(sglang's softcap, issue 26). This binds the common functions to NumPy, computed in float64 and cast back to the
argument's dtype, which is what the GPU's correctly rounded (or 1-2 ulp) functions give within any tolerance the
validator uses. Functions not listed stay as Triton has them (the error then names the function).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
_tgamma = np.vectorize(math.gamma, otypes=[np.float64])


def _round_half_away(a: np.ndarray) -> np.ndarray:
    return np.sign(a) * np.floor(np.abs(a) + 0.5)


UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh, "exp": np.exp, "exp2": np.exp2, "exp10": lambda a: np.power(10.0, a), "expm1": np.expm1,
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt,
    "rsqrt": lambda a: 1.0 / np.sqrt(a), "cbrt": np.cbrt, "rcbrt": lambda a: 1.0 / np.cbrt(a),
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "sinpi": lambda a: np.sin(np.pi * a), "cospi": lambda a: np.cos(np.pi * a),
    "erf": _erf, "erfc": _erfc, "lgamma": _lgamma, "tgamma": _tgamma,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint, "nearbyint": np.rint,
    "round": _round_half_away, "abs": np.abs, "fabs": np.abs, "saturatef": lambda a: np.clip(a, 0.0, 1.0),
    "fast_expf": np.exp, "fast_logf": np.log, "fast_log2f": np.log2, "fast_log10f": np.log10,
    "fast_exp10f": lambda a: np.power(10.0, a), "fast_sinf": np.sin, "fast_cosf": np.cos, "fast_tanf": np.tan,
    "rcp_rn": lambda a: 1.0 / a, "sqrt_rn": np.sqrt,
}
BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "pow": np.power, "fast_powf": np.power, "atan2": np.arctan2, "hypot": np.hypot, "fmod": np.fmod,
    "remainder": lambda a, b: a - b * np.rint(a / b), "copysign": np.copysign, "fmax": np.fmax, "fmin": np.fmin,
    "fdim": lambda a, b: np.maximum(a - b, 0.0), "div_rn": np.divide, "fast_dividef": np.divide,
    "nextafter": np.nextafter,
}
PREDICATES: dict[str, Callable[[np.ndarray], np.ndarray]] = {  # int32 0/1, as libdevice returns them
    "isnan": np.isnan, "isinf": np.isinf, "signbit": np.signbit, "finitef": np.isfinite, "isfinited": np.isfinite,
}
MODULES = ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice")


def _operand(x: Any) -> tuple[np.ndarray, Any, Any]:
    """(data, scalar dtype, type) of an interpreter tensor; a Python number becomes a float32 scalar."""
    import triton.language as tl

    if isinstance(x, tl.core.constexpr):
        x = x.value
    if isinstance(x, tl.core.tensor):
        return np.asarray(x.handle.data), x.type.scalar, x.type
    return np.asarray(x, dtype=np.float32), tl.float32, tl.float32


def _result(data: np.ndarray, scalar: Any, like: Any) -> Any:
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    ty = tl.core.block_type(scalar, list(like.shape)) if like.is_block() else scalar
    return tl.core.tensor(TensorHandle(data, scalar), ty)


def _unary(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[..., Any]:
    def call(arg0: Any, _semantic: Any = None, **_: Any) -> Any:
        data, scalar, ty = _operand(arg0)
        with np.errstate(all="ignore"):
            out = fn(data.astype(np.float64)).astype(data.dtype)
        return _result(out, scalar, ty)

    return call


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., Any]:
    def call(arg0: Any, arg1: Any, _semantic: Any = None, **_: Any) -> Any:
        (a, sa, ta), (b, sb, tb) = _operand(arg0), _operand(arg1)
        scalar, ty, dt = (sa, ta, a.dtype) if (ta.is_block() or not tb.is_block()) else (sb, tb, b.dtype)
        if not sa.is_floating() and sb.is_floating():
            scalar, dt = sb, b.dtype
        with np.errstate(all="ignore"):
            out = fn(a.astype(np.float64), b.astype(np.float64)).astype(dt)
        shape_ty = ta if ta.is_block() else tb
        return _result(out, scalar, shape_ty)

    return call


def _predicate(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[..., Any]:
    import triton.language as tl

    def call(arg0: Any, _semantic: Any = None, **_: Any) -> Any:
        data, _, ty = _operand(arg0)
        return _result(fn(data).astype(np.int32), tl.int32, ty)

    return call


def install() -> str:
    """Bind the functions above in every libdevice module this Triton has; returns what was done."""
    import importlib

    done = []
    for name in MODULES:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        if getattr(mod, "_p2t_numpy", False):
            done.append(name.rsplit(".", 2)[-2] if name.endswith("cuda.libdevice") else "libdevice")
            continue
        for table, wrap in ((UNARY, _unary), (BINARY, _binary), (PREDICATES, _predicate)):
            for fname, fn in table.items():
                if hasattr(mod, fname):
                    setattr(mod, fname, wrap(fn))
        mod._p2t_numpy = True  # type: ignore[attr-defined]
        done.append(name.rsplit(".", 2)[-2] if name.endswith("cuda.libdevice") else "libdevice")
    n = len(UNARY) + len(BINARY) + len(PREDICATES)
    return f"{n} libdevice functions in NumPy ({', '.join(done)})" if done else "no libdevice module"
