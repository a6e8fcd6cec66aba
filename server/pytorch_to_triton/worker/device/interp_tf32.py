"""TF32-faithful tl.dot under Triton's CPU interpreter (and bf16 dots that multiply values, not bit patterns).

Triton's interpreter computes every tl.dot with np.matmul in full fp32 (InterpreterBuilder.create_dot ignores
input_precision in Triton 3.6 and 3.9), so a kernel whose fp32 dot runs in TF32 on the GPU passes a tight fp32
tolerance on CPU and fails it on the GPU. We wrap create_dot and round the operands the way the GPU does:

* "tf32" (the default input_precision for fp32 operands, and allow_tf32=True): Triton feeds the fp32 registers or
  shared-memory tiles straight into mma.sync / wgmma with the .tf32 operand type, without a conversion
  (third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/DotOpToLLVM/WGMMA.cpp, getMmaOperandType: f32 + allowTF32 ->
  WGMMAEltType::tf32; MMAv2 keeps TF32 operands as f32 in shared memory too); the tensor core then uses only the top 10 mantissa bits, i.e. it
  truncates (the low 13 bits are ignored). benchmarks/gpu_tf32.py checks this bit for bit on the GPU.
* "tf32x3": lib/Dialect/TritonGPU/Transforms/F32DotTC.cpp splits each operand into big = cvt.rna.tf32(x) and
  small = x - big, and computes dot(aSmall, bBig, 0) -> dot(aBig, bSmall, .) -> NaN -> 0 -> dot(aBig, bBig, .)
  -> + C: the correction starts from zero and the accumulator C is added last (Triton 3.2 and later; before that
  C went into the first dot and no NaN was masked). A NaN already in C therefore stays NaN, as on the GPU; only
  NaNs the correction makes (inf * 0 from a split inf) are dropped.
* "ieee": exact fp32, as before.

install() returns a description of what is emulated, or raises NotEmulated when the interpreter's internals are not
the ones we know (then validation says "TF32 not emulated" instead of passing silently).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

# How a TF32 dot reads an fp32 operand; benchmarks/gpu_tf32.py measures it ("truncate" matched the sources).
TF32_OPERAND_ROUNDING = "truncate"  # or "rna" (cvt.rna.tf32.f32)
_TRUNC_MASK = np.uint32(0xFFFFE000)  # keep sign, exponent and the top 10 mantissa bits
_EXP_MASK = np.uint32(0x7F800000)


class NotEmulated(RuntimeError):
    """The interpreter's dot cannot be wrapped; the reason is the message."""


class DotStats:
    """How many dot executions (program instances x tl.dot calls) ran in each precision since reset()."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def reset(self) -> None:
        """Forget the counts (called at the start of each validation)."""
        with self.lock:
            self.counts = {}

    def add(self, key: str) -> None:
        """Count one dot execution."""
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1

    def snapshot(self) -> dict[str, int]:
        """A copy of the counts."""
        with self.lock:
            return dict(self.counts)


STATS = DotStats()
STATE: dict[str, Any] = {"installed": False, "reason": "not installed (not running under the interpreter)"}


def tf32_truncate(x: np.ndarray) -> np.ndarray:
    """fp32 -> TF32 as the tensor core reads an fp32 operand: the low 13 mantissa bits dropped (toward zero)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    special = (bits & _EXP_MASK) == _EXP_MASK  # Inf/NaN keep their bits (a NaN must not become Inf)
    return np.where(special, bits, bits & _TRUNC_MASK).view(np.float32)


def tf32_round_rna(x: np.ndarray) -> np.ndarray:
    """fp32 -> TF32 like PTX cvt.rna.tf32.f32: round to nearest, ties away from zero."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    special = (bits & _EXP_MASK) == _EXP_MASK
    rounded = (bits + np.uint32(0x1000)) & _TRUNC_MASK
    return np.where(special, bits, rounded).view(np.float32)


def _bf16_bits_to_f32(data: np.ndarray) -> np.ndarray:
    # The interpreter stores bfloat16 as its raw uint16 pattern; a bf16 value is the top half of an fp32.
    return (data.astype(np.uint32) << np.uint32(16)).view(np.float32)


def _scalar(dtype: Any) -> Any:
    return getattr(dtype, "scalar", dtype)


def _precision_name(p: Any) -> str:
    name = getattr(p, "name", None) or str(p).rsplit(".", 1)[-1]
    return str(name).lower()


def _make_wrapper(orig: Any, tl: Any) -> Any:
    def create_dot(self: Any, a: Any, b: Any, d: Any, input_precision: Any, max_num_imprecise_acc: Any) -> Any:
        a_ty, b_ty = _scalar(a.dtype), _scalar(b.dtype)
        handle = type(a)
        if a_ty == tl.bfloat16 and b_ty == tl.bfloat16 and a.data.dtype == np.uint16:
            # bf16 x bf16 products are exact in fp32 and the GPU accumulates them in fp32: multiply the values.
            STATS.add("bf16")
            a = handle(_bf16_bits_to_f32(a.data), tl.float32)
            b = handle(_bf16_bits_to_f32(b.data), tl.float32)
            return orig(self, a, b, d, input_precision, max_num_imprecise_acc)
        if not (a_ty == tl.float32 and b_ty == tl.float32):
            return orig(self, a, b, d, input_precision, max_num_imprecise_acc)
        prec = _precision_name(input_precision)
        if prec == "tf32":
            STATS.add("tf32")
            cut = tf32_truncate if TF32_OPERAND_ROUNDING == "truncate" else tf32_round_rna
            a = handle(cut(a.data), a.dtype)
            b = handle(cut(b.data), b.dtype)
            return orig(self, a, b, d, input_precision, max_num_imprecise_acc)
        if prec == "tf32x3":
            STATS.add("tf32x3")
            return _tf32x3(self, orig, a, b, d, input_precision, max_num_imprecise_acc, handle)
        STATS.add("ieee" if prec == "ieee" else prec)
        return orig(self, a, b, d, input_precision, max_num_imprecise_acc)

    create_dot._p2t_tf32 = True  # type: ignore[attr-defined]
    return create_dot


def _tf32x3(self: Any, orig: Any, a: Any, b: Any, d: Any, prec: Any, imprecise: Any, handle: type) -> Any:
    """F32DotTC's lowering: dot(aS, bB, 0) -> dot(aB, bS, .) -> NaN -> 0 -> dot(aB, bB, .) -> + C, each in TF32."""
    with np.errstate(invalid="ignore", over="ignore"):
        a_big, b_big = tf32_round_rna(a.data), tf32_round_rna(b.data)
        a_small = tf32_truncate((a.data.astype(np.float32) - a_big).astype(np.float32))
        b_small = tf32_truncate((b.data.astype(np.float32) - b_big).astype(np.float32))

        def dot(x: np.ndarray, y: np.ndarray, acc: Any) -> Any:
            return orig(self, handle(x, a.dtype), handle(y, b.dtype), acc, prec, imprecise)

        zero = handle(np.zeros_like(d.data), d.dtype)
        d1 = dot(a_small, b_big, zero)
        d2 = dot(a_big, b_small, d1)
        d2 = handle(np.where(np.isnan(d2.data), np.zeros_like(d2.data), d2.data), d2.dtype)
        d3 = dot(a_big, b_big, d2)
        # The accumulator joins last (arith.addf dot3, C): a NaN or inf already in it survives, as on the GPU.
        return handle((d3.data + d.data).astype(d3.data.dtype), d3.dtype)


def install() -> dict[str, Any]:
    """Wrap the interpreter's create_dot (idempotent); returns STATE, raises NotEmulated when not possible."""
    try:
        import inspect

        import triton.language as tl
        from triton.runtime import interpreter
    except ImportError as e:  # pragma: no cover - every Triton 3.x has it
        STATE.update(installed=False, reason=f"triton.runtime.interpreter not importable: {e}")
        raise NotEmulated(STATE["reason"]) from e
    builder = getattr(interpreter, "InterpreterBuilder", None)
    orig = getattr(builder, "create_dot", None)
    if orig is None:
        STATE.update(installed=False, reason="InterpreterBuilder.create_dot not found in this Triton")
        raise NotEmulated(STATE["reason"])
    if getattr(orig, "_p2t_tf32", False):
        return STATE
    params = list(inspect.signature(orig).parameters)
    if params[:4] != ["self", "a", "b", "d"] or len(params) != 6:
        STATE.update(installed=False, reason=f"InterpreterBuilder.create_dot{tuple(params)} is not the signature "
                     "we know (self, a, b, d, input_precision, max_num_imprecise_acc)")
        raise NotEmulated(STATE["reason"])
    builder.create_dot = _make_wrapper(orig, tl)
    STATE.update(installed=True, reason="", mode="tf32: operands truncated to a 10-bit mantissa; tf32x3: 3xTF32 "
                 "split; bf16: values, not bit patterns")
    return STATE


def validation_summary(interpreter_active: bool) -> tuple[dict[str, Any], str | None]:
    """The report's `tf32` field and a note for it (None when nothing worth saying happened)."""
    counts = STATS.snapshot()
    tf32 = counts.get("tf32", 0) + counts.get("tf32x3", 0)
    info: dict[str, Any] = {"interpreter": interpreter_active, "emulated": bool(STATE.get("installed")),
                            "dot_calls": counts}
    if not interpreter_active:
        info["emulated"] = False
        return info, None
    if not STATE.get("installed"):
        info["reason"] = STATE.get("reason")
        return info, None  # the caller decides whether the candidate uses tl.dot (then: "TF32 not emulated")
    if counts.get("tf32"):
        return info, (f"TF32 emulated: {counts['tf32']} tl.dot executions on fp32 operands ran in tf32 (the default "
                      "input_precision on the GPU unless TRITON_F32_DEFAULT or the kernel says 'ieee'); the "
                      "interpreter truncated their operands to a 10-bit mantissa as the GPU's tensor cores do, so "
                      "the errors here are the GPU's. A deliberate TF32 kernel declares TOLERANCES = "
                      "{'float32': 'tf32'}; for fp32 accuracy use tl.dot(..., input_precision='ieee') or 'tf32x3'")
    if tf32:
        return info, (f"TF32 emulated: {counts['tf32x3']} tl.dot executions in tf32x3, computed as the GPU does "
                      "(3 TF32 dots of the operands' rounded big and small parts)")
    if counts.get("bf16"):
        return info, (f"{counts['bf16']} bf16 tl.dot executions: the interpreter's own dot multiplies bf16 bit "
                      "patterns; they were computed on the values (fp32 accumulate), as on the GPU")
    return info, None


def not_emulated_note(reason: str) -> str:
    """The note for a candidate that calls tl.dot when emulation is off."""
    return (f"TF32 not emulated ({reason}): the interpreter computed fp32 tl.dot exactly, but on the GPU an fp32 "
            "tl.dot without input_precision='ieee' runs in TF32 (10-bit mantissa, about 1e-3 relative error); a "
            "pass here does not show that the GPU result is within an fp32 tolerance. Validate on a GPU, or use "
            "input_precision='ieee'")
