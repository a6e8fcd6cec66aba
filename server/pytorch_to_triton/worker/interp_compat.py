"""Fixes to Triton's interpreter that older Tritons need with current NumPy (installed only under the interpreter).

Triton 3.6's interpreter makes every scalar a shape-(1,) array and converts a tensor used as an int (a `range` /
`tl.range` bound, an index) with `int(data)`; NumPy 2.4 refuses that for arrays of rank > 0 ("only 0-dimensional
arrays can be converted to Python scalars"), so every loop whose bound comes from program_id failed there: the
gallery's persistent kernels and cross-entropy, and any user kernel written that way. Triton 3.9 converts
`int(data.squeeze())`; this installs the same conversion on Tritons that lack it (a no-op where it is already so).
"""

from __future__ import annotations

from typing import Any


def _index(self: Any) -> int:
    data = self.handle.data
    if getattr(data, "size", None) == 1:
        return int(data.reshape(-1)[0])
    return int(data)  # a block used as an int: the same error Triton gives


def install() -> str:
    """Wrap the interpreter's tensor patching so `__index__` converts one-element arrays; returns what was done."""
    try:
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover - every Triton 3.x has it
        return "no interpreter module"
    orig = getattr(interpreter, "_patch_lang_tensor", None)
    if orig is None or getattr(orig, "_p2t_index", False):
        return "tensor __index__ left as is" if orig is None else "tensor __index__ converts one-element arrays"

    def _patch_lang_tensor(tensor: Any, scope: Any, *rest: Any, **kw: Any) -> Any:
        out = orig(tensor, scope, *rest, **kw)
        scope.set_attr(tensor, "__index__", _index)
        return out

    _patch_lang_tensor._p2t_index = True  # type: ignore[attr-defined]
    interpreter._patch_lang_tensor = _patch_lang_tensor
    return "tensor __index__ converts one-element arrays"
