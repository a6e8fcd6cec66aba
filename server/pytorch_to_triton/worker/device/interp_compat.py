"""Fixes to Triton's interpreter that older Tritons need with current NumPy (installed only under the interpreter).

Triton 3.6's interpreter makes every scalar a shape-(1,) array and converts a tensor used as an int (a `range` /
`tl.range` bound, an index) with `int(data)`; NumPy 2.4 refuses that for arrays of rank > 0 ("only 0-dimensional
arrays can be converted to Python scalars"), so every loop whose bound comes from program_id failed there: the
gallery's persistent kernels and cross-entropy, and any user kernel written that way. Triton 3.9 converts
`int(data.squeeze())`; this installs the same conversion on Tritons that lack it (a no-op where it is already so).

Loop variables (Triton 3.9 and older): `for tile in range(n):` gives a Python int under the interpreter, so
`tile.to(tl.int64)`, valid on a GPU where the induction variable is an int32 tensor, raises "'int' object has no
attribute 'to'" (issue 40). A `range`/`tl.range` loop's variable is made a tensor at the top of each iteration, as
the interpreter already does for every assigned value; `tl.static_range` keeps its Python int (it is unrolled).

Boolean splats (Triton 3.9 and older): a comparison of two int64 scalars (`valid = t != -100` with `t` loaded from
an int64 tensor) keeps int64 as its handle's dtype, so splatting it to a block (`(cols < V) & valid`) builds an
int64 array and the mask reaches tl.load as integers: "mask has unsupported dtype", although the mask's type is
int1 and the GPU compiles it as such. A splat whose result type is int1 is built as bool here.

float32 -> float8e4nv (Triton 3.9 and older): the interpreter's bit-level conversion adds the rounding carry to the
mantissa alone, so a carry into the exponent is lost (0.4914 -> 0.25, where the GPU and torch give 0.5), values past
the largest finite one become 256 or NaN (500 -> 256; the GPU's cvt.rn.satfinite gives 448) and subnormals flush to 0
(0.001 -> 0, not 2**-9). A round-to-nearest-even conversion (the default, and fp_downcast_rounding="rtne") of a
float32, float16 or bfloat16 block to float8e4nv is done here by torch's float8_e4m3fn cast after clamping to +-448:
round-to-nearest-even with the GPU's saturation, NaN kept. Other fp8 formats and "rtz" stay the interpreter's own.
"""

from __future__ import annotations

from typing import Any


def _index(self: Any) -> int:
    data = self.handle.data
    if getattr(data, "size", None) == 1:
        return int(data.reshape(-1)[0])
    return int(data)  # a block used as an int: the same error Triton gives


def install_bool_splat() -> str:
    """Make a splat to an int1 block produce bool data, as its type says; returns what was done."""
    try:
        import numpy as np
        import triton.language as tl
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover - every Triton 3.x has it
        return "no interpreter module"
    builder = getattr(interpreter, "InterpreterBuilder", None)
    orig = getattr(builder, "create_splat", None)
    if orig is None or getattr(orig, "_p2t_bool", False):
        return "bool splat left as is" if orig is None else "int1 splats are bool"

    def create_splat(self: Any, ret_ty: Any, arg: Any) -> Any:
        out = orig(self, ret_ty, arg)
        if getattr(ret_ty, "scalar", None) == tl.int1 and out.data.dtype != np.bool_:
            return interpreter.TensorHandle(out.data.astype(np.bool_), tl.int1)
        return out

    create_splat._p2t_bool = True  # type: ignore[attr-defined]
    builder.create_splat = create_splat
    return "int1 splats are bool"


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


def install_list_grid() -> str:
    """Accept a grid given as a list (`kernel[[n]](...)`, or a grid function returning one), as compiled Triton
    does: the interpreter's launcher appends `(1,)` to it and fails with "can only concatenate list (not 'tuple')"
    (lmdeploy's multinomial sampling, issue 26). Returns what was done."""
    try:
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover - every Triton 3.x has it
        return "no interpreter module"
    cls = getattr(interpreter, "GridExecutor", None)
    orig = getattr(cls, "__init__", None)
    if orig is None or getattr(orig, "_p2t_list_grid", False):
        return "grids left as is" if orig is None else "list grids are tuples"

    def __init__(self: Any, fn: Any, arg_names: Any, grid: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(grid, list):
            grid = tuple(grid)
        elif callable(grid):
            user_grid = grid

            def grid(meta: Any) -> Any:
                g = user_grid(meta)
                return tuple(g) if isinstance(g, list) else g

        orig(self, fn, arg_names, grid, *args, **kwargs)

    __init__._p2t_list_grid = True  # type: ignore[attr-defined]
    cls.__init__ = __init__
    return "list grids are tuples"


def install_cuda_device_noop() -> str:
    """`with torch.cuda.device(x.device.index):`, which GPU code wraps its launches in (mamba's ops), fails on a machine
    without CUDA (the index of a CPU tensor is None); under the interpreter there is no device to switch to, so it is
    a no-op context manager here, as it is on a GPU for the current device. Only where CUDA is absent."""
    import torch

    if torch.cuda.is_available() or getattr(torch.cuda.device, "_p2t_noop", False):
        return "torch.cuda.device left as is"

    class device:  # noqa: N801 - stands in for torch.cuda.device
        _p2t_noop = True

        def __init__(self, index: Any = None) -> None:
            self.idx = index

        def __enter__(self) -> None:
            return None

        def __exit__(self, *exc: Any) -> bool:
            return False

    torch.cuda.device = device  # type: ignore[misc,assignment]
    return "torch.cuda.device is a no-op (no CUDA)"


def _is_range(func: Any) -> bool:
    import ast

    return ((isinstance(func, ast.Name) and func.id == "range")
            or (isinstance(func, ast.Attribute) and func.attr == "range"))


def install_range_tensor() -> str:
    """Make the variable of a `range`/`tl.range` loop a tensor under the interpreter (see the module docstring);
    returns what was done."""
    import ast

    try:
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover - every Triton 3.x has it
        return "no interpreter module"
    cls = getattr(interpreter, "ASTTransformer", None)
    if cls is None or not hasattr(interpreter, "FunctionRewriter"):
        return "loop variables left as is (no AST rewriter in this Triton)"
    if getattr(getattr(cls, "visit_For", None), "_p2t_range", False):
        return "range loop variables are tensors"

    def visit_For(self: Any, node: Any) -> Any:
        node = self.generic_visit(node)
        if isinstance(node.iter, ast.Call) and _is_range(node.iter.func) and isinstance(node.target, ast.Name):
            name = node.target.id
            wrap = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=ast.Call(
                func=ast.Attribute(value=ast.Name(id="interpreter_semantic", ctx=ast.Load()), attr="to_tensor",
                                   ctx=ast.Load()),
                args=[ast.Name(id=name, ctx=ast.Load()), ast.Constant(value=False)], keywords=[]))
            node.body.insert(0, ast.fix_missing_locations(ast.copy_location(wrap, node.body[0])))
        return node

    visit_For._p2t_range = True  # type: ignore[attr-defined]
    cls.visit_For = visit_For
    return "range loop variables are tensors"


E4NV_MAX = 448.0  # the largest finite float8e4nv (e4m3fn): where the GPU's satfinite conversion saturates


def _to_e4nv(data: Any, src: Any, tl: Any) -> Any:
    """float8e4nv bytes (uint8) of a float32/float16/bfloat16 block, rounded to nearest even, saturated at +-448."""
    import numpy as np
    import torch

    if src == tl.bfloat16:  # stored as its 16 bits
        wide = (np.asarray(data).astype(np.uint32) << 16).view(np.float32)
    else:
        wide = np.asarray(data, dtype=np.float32)
    t = torch.from_numpy(np.ascontiguousarray(wide)).clamp(-E4NV_MAX, E4NV_MAX)  # clamp keeps NaN
    return t.to(torch.float8_e4m3fn).view(torch.uint8).numpy().reshape(np.shape(data))


def install_fp8_rounding() -> str:
    """Convert float32/float16/bfloat16 to float8e4nv as the GPU does (see the module docstring); returns what was
    done."""
    try:
        import torch
        import triton.language as tl
        from triton._C.libtriton import ir
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover - every Triton 3.x has them
        return "no interpreter module"
    builder = getattr(interpreter, "InterpreterBuilder", None)
    orig = getattr(builder, "create_fp_to_fp", None)
    rtne = getattr(getattr(ir, "ROUNDING_MODE", None), "RTNE", None)
    if orig is None or rtne is None or not hasattr(torch, "float8_e4m3fn"):
        return "float8 conversions left as is"
    if getattr(orig, "_p2t_fp8", False):
        return "float32 -> float8e4nv rounds to nearest even, saturating"

    def create_fp_to_fp(self: Any, src: Any, dst_type: Any, rounding_mode: Any) -> Any:
        s, d = src.dtype.scalar, dst_type.scalar
        if d == tl.float8e4nv and s in (tl.float32, tl.float16, tl.bfloat16) and rounding_mode in (rtne, None):
            return interpreter.TensorHandle(_to_e4nv(src.data, s, tl), d)
        return orig(self, src, dst_type, rounding_mode)

    create_fp_to_fp._p2t_fp8 = True  # type: ignore[attr-defined]
    builder.create_fp_to_fp = create_fp_to_fp
    return "float32 -> float8e4nv rounds to nearest even, saturating"


def fp8_faithful() -> tuple[str, ...]:
    """The float8 formats (torch dtype names) whose conversions from float32 this interpreter rounds as the GPU does."""
    try:
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover
        return ()
    fn = getattr(getattr(interpreter, "InterpreterBuilder", None), "create_fp_to_fp", None)
    return ("float8_e4m3fn",) if getattr(fn, "_p2t_fp8", False) else ()
