"""What torch.compile did with the reference: the plan a stage 3 has to beat (run_benchmark explain=true, issue 47).

Inductor's generated module (the wrapper, captured with GraphLowering.save_output_code, the hook behind
torch._inductor.utils.run_and_get_code) is read for:
- the kernels it defines: Triton (`triton_poi_*` pointwise, `triton_red_*` reduction, `triton_per_*` persistent
  reduction, `triton_tem_*` a template: Inductor's own Triton mm/conv, max-autotune) or C++ on the CPU (`cpp_fused_*`),
  each with the source nodes and ATen ops it fused (the `# Topologically Sorted Source Nodes: [...], Original ATen:
  [...]` comment Inductor writes above each kernel and each call; the C++ kernels' names carry the ops instead);
- the calls of `call()` in order: those kernels, and the library calls Inductor kept (`extern_kernels.convolution`:
  cuDNN on a GPU, oneDNN on the CPU; `extern_kernels.mm / addmm / bmm`: cuBLAS or MKL; `torch.ops.<ns>.<op>` fallbacks);
- the layouts of its buffers: a 4-d (5-d) buffer whose channel stride is 1 is channels-last.
On a GPU the compiled call then runs under torch.profiler: each Triton kernel's time by name, each library call's
time from the device kernels its CPU op launched (a cuDNN conv shows as sm90_xmma_fprop_..., never by its ATen
name). On the CPU nothing is run or timed: the capture stops before the C++ kernels would be compiled (which took
minutes on the dev VM), and the report says "CPU interpreter: no timings".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import torch

KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(triton|cpp_pybinding|cpp|cuda|rocm|halide)\(", re.M)
SOURCE_NODES = re.compile(r"#\s*Topologically Sorted Source Nodes: \[(.*?)\], Original ATen: \[(.*?)\]")
LAYOUT = re.compile(r"(?:(\w+) = empty_strided_\w+|assert_size_stride)\((?:(\w+), )?\(([\d, ]*)\), \(([\d, ]*)\)")
PROFILE_RUNS = 10  # compiled calls under the profiler: per-call times are the totals over this many
# ATen ops that reduce (a kernel fusing one is a reduction kernel whatever its prefix says)
REDUCTIONS = {"sum", "mean", "amax", "amin", "max", "min", "var", "var_mean", "std", "prod", "argmax", "argmin",
              "_softmax", "_log_softmax", "logsumexp", "native_layer_norm", "native_group_norm", "_native_batch_norm_legit",
              "_native_batch_norm_legit_no_training", "cumsum", "norm", "linalg_vector_norm", "any", "all"}
POOLS = {"max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool2d", "avg_pool3d", "_adaptive_avg_pool2d",
         "adaptive_max_pool2d", "max_pool1d", "avg_pool1d", "_low_memory_max_pool2d_with_offsets"}
CONVS = {"convolution", "_convolution", "convolution_backward", "mkldnn_convolution", "_convolution_pointwise"}
GEMMS = {"mm", "addmm", "bmm", "baddbmm", "_mm_plus_mm", "_int_mm", "_scaled_mm", "linear", "_linear_pointwise",
         "_mkl_linear", "matmul"}
TRITON_KINDS = {"poi": "triton pointwise", "red": "triton reduction", "per": "triton persistent reduction",
                "tem": "triton template"}


# ---------------------------------------------------------------------------------------------- capture
class _Captured(Exception):
    """Raised from the code hook on the CPU: the generated code is all explain needs, not the C++ build."""


def capture(fn: Callable[..., Any], inputs: list[Any], mode: str | None, run: bool) -> tuple[list[str], Any]:
    """(the generated wrapper modules' sources, the compiled callable or None). run=False stops Inductor once it has
    written its code (before compiling any kernel); run=True compiles and runs it once (GPU)."""
    from unittest import mock

    from torch._inductor.graph import GraphLowering

    codes: list[str] = []

    def save(code: str) -> None:
        codes.append(code)
        if not run:
            raise _Captured()

    torch._dynamo.reset()  # a compile of its own: the hook sees Inductor's code generation, not a cached callable
    compiled = torch.compile(fn, mode=None if mode in (None, "default") else mode)
    with mock.patch.object(GraphLowering, "save_output_code", save), torch.no_grad():
        try:
            compiled(*inputs)
        except Exception:  # noqa: BLE001 - _Captured arrives wrapped (InductorError / BackendCompilerFailed)
            if run or not codes:
                raise
    return codes, (compiled if run else None)


# ---------------------------------------------------------------------------------------------- parse
def _ops_from_comment(text: str) -> tuple[list[str], list[str]] | None:
    m = SOURCE_NODES.search(text)
    if m is None:
        return None
    nodes = [s.strip() for s in m.group(1).split(",") if s.strip()]
    aten = [s.strip().removeprefix("aten.") for s in m.group(2).split(",") if s.strip()]
    return nodes, aten


def _ops_from_name(name: str) -> list[str]:
    """The ops a kernel's name lists (cpp_fused_hardswish_max_pool2d_with_indices_mish_sub_1 -> 'hardswish',
    'max_pool2d_with_indices', 'mish', 'sub'): Inductor joins the fused ops' names with '_' in sorted order, so
    known multi-word ATen names are matched first, the rest split on '_'."""
    body = re.sub(r"^(triton_(poi|red|per|tem)_fused|cpp_fused|fused)_?", "", re.sub(r"_\d+$", "", name))
    ops: list[str] = []
    known = sorted(REDUCTIONS | POOLS | CONVS | GEMMS | {"native_dropout", "leaky_relu", "log_softmax", "hardswish",
                                                         "hardtanh", "hardsigmoid", "group_norm", "layer_norm",
                                                         "batch_norm", "clamp_min", "clamp_max"},
                   key=len, reverse=True)
    while body:
        hit = next((k for k in known if body == k or body.startswith(k + "_")), None)
        token = hit or ("_" + body[1:].split("_", 1)[0] if body.startswith("_") else body.split("_", 1)[0])
        if token.strip("_"):
            ops.append(token)
        body = body[len(token) + 1:]  # the op and the one '_' that joins it to the next
    return ops


def _kind_of(name: str, how: str) -> str:
    if how != "triton":
        return "C++ kernel" if how.startswith("cpp") else f"{how} kernel"
    m = re.match(r"triton_(poi|red|per|tem)_", name)
    return TRITON_KINDS.get(m.group(1), "triton kernel") if m else "triton kernel"


def _definitions(code: str) -> dict[str, dict[str, Any]]:
    """Kernel name -> {kind, nodes, aten} from each `name = async_compile.X(` and the comment block above it."""
    out: dict[str, dict[str, Any]] = {}
    for m in KERNEL_DEF.finditer(code):
        name, how = m.group(1), m.group(2)
        above = code[max(0, m.start() - 3000):m.start()]
        above = above[above.rfind("'''") + 3:] if "'''" in above else above  # after the previous kernel's source
        parsed = _ops_from_comment(above)
        start = code.find("'''", m.end())  # the kernel's source: the next triple-quoted string
        end = code.find("'''", start + 3) if start >= 0 else -1
        source = code[start + 3:end] if end > start >= 0 else ""

        out[name] = {"kind": _kind_of(name, how), "nodes": parsed[0] if parsed else [],
                     "aten": parsed[1] if parsed else _ops_from_name(name),
                     "ops_from": "comment" if parsed else "name",
                     "template": "triton_heuristics.template" in source or name.startswith("triton_tem_")}
    return out


def _call_body(code: str) -> str:
    """The body of the generated `call(args)` (a function, or since torch 2.9 a Runner method)."""
    m = re.search(r"^([ \t]*)def call\((?:self, )?args\)", code, re.M)
    if m is None:
        return ""
    indent = len(m.group(1))
    body = []
    for line in code[m.end():].splitlines()[1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return "\n".join(body)


def _launches(code: str, defs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The calls of call() in order: kernels this module defined, extern library calls, ATen fallbacks."""
    body = _call_body(code)
    out: list[dict[str, Any]] = []
    comment: tuple[list[str], list[str]] | None = None
    pattern = re.compile(r"^\s*(?:(\w+)\s*=\s*)?(extern_kernels\.(\w+)|torch\.ops\.(\w+)\.(\w+)(?:\.\w+)?|aten\.(\w+)"
                         r"(?:\.\w+)?|(\w+)\.run|(\w+))\(")
    for line in body.splitlines():
        parsed = _ops_from_comment(line)
        if parsed is not None:
            comment = parsed
            continue
        m = pattern.match(line)
        if m is None:
            continue
        out_buf, _, ext, ns, nsop, aten_op, run_name, plain = m.groups()
        name = run_name or plain
        if name is not None and name in defs:
            d = defs[name]
            out.append({"name": name, "kind": d["kind"], "library": None, "template": d["template"],
                        "nodes": (comment or (d["nodes"], d["aten"]))[0] or d["nodes"],
                        "aten": (comment or (d["nodes"], d["aten"]))[1] or d["aten"], "buffer": out_buf})
        elif ext or nsop or aten_op:
            op = ext or nsop or aten_op
            full = (f"extern_kernels.{ext}" if ext else f"torch.ops.{ns}.{nsop}" if nsop else f"aten.{aten_op}")
            out.append({"name": full, "kind": "extern" if ext else "library op", "library": None, "template": False,
                        "op": op, "namespace": ns, "nodes": comment[0] if comment else [],
                        "aten": comment[1] if comment else [op], "buffer": out_buf})
        else:
            continue
        comment = None
    return out


def _layouts(code: str) -> list[dict[str, Any]]:
    """Channels-last buffers of call(): 4-d or 5-d, channel stride 1, more than one channel."""
    found, seen = [], set()
    for m in LAYOUT.finditer(_call_body(code)):
        buf = m.group(1) or m.group(2)
        try:
            size = [int(v) for v in m.group(3).replace(" ", "").split(",") if v]
            stride = [int(v) for v in m.group(4).replace(" ", "").split(",") if v]
        except ValueError:
            continue
        if len(size) in (4, 5) and len(stride) == len(size) and stride[1] == 1 and size[1] > 1 and buf not in seen:
            seen.add(buf)
            found.append({"buffer": buf, "size": size, "stride": stride,
                          "format": "channels_last" if len(size) == 4 else "channels_last_3d"})
    return found


def _library(launch: dict[str, Any], device: str) -> str | None:
    op = launch.get("op") or ""
    if op in CONVS or "convolution" in op:
        return "cuDNN" if device == "cuda" else "oneDNN"
    if op in GEMMS:
        return "cuBLAS" if device == "cuda" else ("oneDNN" if launch.get("namespace") == "mkldnn" else "MKL/oneDNN")
    if "scaled_dot_product" in op or "flash" in op:
        return "SDPA (flash/cuDNN/efficient)"
    return None


def _role(launch: dict[str, Any], after_library: bool) -> str:
    ops = {a.split(".")[0] for a in launch.get("aten") or []}
    if launch["kind"] in ("extern", "library op"):
        op = launch.get("op", "")
        return "convolution" if op in CONVS or "convolution" in op else "GEMM" if op in GEMMS else "library op"
    if launch.get("template"):
        return "convolution (Triton template)" if ops & CONVS else "GEMM (Triton template)" if ops & GEMMS else "template"
    pool, red = bool(ops & POOLS), bool(ops & REDUCTIONS) or "reduction" in launch["kind"]
    rest = ops - POOLS - REDUCTIONS - CONVS - GEMMS
    if ops and ops <= CONVS | GEMMS:
        return "layout/bias for the library call" if not after_library else "epilogue (bias) of the library call"
    parts = ["epilogue" if after_library and rest else "pointwise" if rest else ""]
    parts += ["pooling"] if pool else []
    parts += ["reduction"] if red else []
    return " + ".join(p for p in parts if p) or "pointwise"


def parse(codes: list[str], device: str) -> dict[str, Any]:
    """The kernels, library calls and layouts of Inductor's generated modules (one per compiled graph)."""
    launches: list[dict[str, Any]] = []
    layouts: list[dict[str, Any]] = []
    for i, code in enumerate(codes):
        defs = _definitions(code)
        after_library = False
        for ln in _launches(code, defs):
            ln["graph"] = i
            ln["library"] = _library(ln, device) if ln["kind"] in ("extern", "library op") else None
            ln["role"] = _role(ln, after_library)
            after_library = after_library or ln["library"] is not None or bool(ln.get("template"))
            launches.append(ln)
        layouts += [{**lay, "graph": i} for lay in _layouts(code)]
    conv_out = {ln["buffer"] for ln in launches if ln.get("role") == "convolution" and ln.get("buffer")}
    for lay in layouts:
        if lay["buffer"] in conv_out:
            lay["what"] = "the convolution's output"
    return {"graphs": len(codes), "launches": launches, "channels_last": layouts}


# ---------------------------------------------------------------------------------------------- profile (GPU)
def profile(compiled: Callable[..., Any], inputs: list[Any], runs: int = PROFILE_RUNS) -> dict[str, Any]:
    """Device time per kernel name over `runs` calls, and which library op launched which device kernels."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as tprofile

    with torch.no_grad():
        for _ in range(3):  # warm: autotuning and first launches outside the profile
            compiled(*inputs)
        torch.cuda.synchronize()
        with tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(runs):
                compiled(*inputs)
            torch.cuda.synchronize()
    kernels: dict[str, list[float]] = {}
    by_op: dict[str, set[str]] = {}
    for e in prof.events():
        if e.device_type == DeviceType.CUDA:
            us = float(getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0.0) or 0.0)
            k = kernels.setdefault(e.name, [0.0, 0])
            k[0] += us / 1e3
            k[1] += 1
        elif getattr(e, "kernels", None):
            chain, p = [], e
            while p is not None:
                chain.append(p.name.split("::")[-1])
                p = getattr(p, "cpu_parent", None)
            op = next((c for c in reversed(chain) if c in CONVS | GEMMS or "convolution" in c
                       or "scaled_dot_product" in c), None)
            if op is not None:
                by_op.setdefault(op, set()).update(k.name for k in e.kernels)
    return {"runs": runs, "kernels": {n: {"ms": round(v[0] / runs, 5), "launches_per_call": v[1] / runs}
                                      for n, v in kernels.items()},
            "library_kernels": {op: sorted(names) for op, names in by_op.items()}}


def _attach_times(info: dict[str, Any], prof: dict[str, Any]) -> None:
    kernels = dict(prof["kernels"])
    used: set[str] = set()
    for ln in info["launches"]:
        k = kernels.get(ln["name"])
        if k is not None:
            ln["ms"] = k["ms"]
            used.add(ln["name"])
    for ln in info["launches"]:
        if ln["kind"] not in ("extern", "library op"):
            continue
        same = [x for x in info["launches"] if x.get("op") == ln.get("op")]
        names = {n for op, ns in prof["library_kernels"].items() for n in ns
                 if op == ln.get("op") or (ln.get("op") in CONVS and "convolution" in op)
                 or (ln.get("op") in GEMMS and op in GEMMS)}
        if names:
            ln["device_kernels"] = sorted(names)
            ln["ms"] = round(sum(kernels[n]["ms"] for n in names if n in kernels) / len(same), 5)
            used |= names
    other = {n: k for n, k in kernels.items() if n not in used}
    if other:
        info["other_kernels"] = [{"name": n[:120], **k} for n, k in sorted(other.items(), key=lambda kv: -kv[1]["ms"])]
    total = sum(k["ms"] for k in kernels.values())
    info["total_ms"] = round(total, 5)
    for ln in info["launches"]:
        if ln.get("ms") is not None and total > 0:
            ln["share_pct"] = round(100 * ln["ms"] / total, 1)


# ---------------------------------------------------------------------------------------------- the plan in words
def plan_text(info: dict[str, Any]) -> str:
    """What compile ran and what a stage 3 has to do to beat it, in a few sentences."""
    launches = info["launches"]
    if not launches:
        return "torch.compile generated no kernels here (the graph may have fallen back to eager)"
    timed = info.get("total_ms") is not None

    def t(ln: dict[str, Any]) -> str:
        return f" {ln['ms']:.4f} ms ({ln.get('share_pct', 0):.0f} %)" if ln.get("ms") is not None else ""

    parts = []
    for ln in launches:
        what = ln.get("library") or ln["kind"]
        ops = ", ".join(ln.get("aten") or [])
        parts.append(f"{ln['name']} [{what}; {ln['role']}{': ' + ops if ops else ''}]{t(ln)}")
    lines = [f"torch.compile ran {len(launches)} kernel call(s) per call"
             + (f", {info['total_ms']:.4f} ms of device time" if timed else "") + ": " + "; ".join(parts) + "."]
    libs = [ln for ln in launches if ln.get("library")]
    own = [ln for ln in launches if not ln.get("library")]
    first_lib = next((i for i, ln in enumerate(launches) if ln.get("library")), len(launches))
    after = [ln for ln in launches[first_lib:] if not ln.get("library")]  # the epilogue side of the library call
    templates = [ln for ln in launches if ln.get("template")]
    if info.get("channels_last"):
        lay = next((x for x in info["channels_last"] if x.get("what")), info["channels_last"][0])
        lines.append(f"Layout: channels-last ({lay['buffer']} {tuple(lay['size'])} stride {tuple(lay['stride'])}"
                     f"{', ' + lay['what'] if lay.get('what') else ''}; {len(info['channels_last'])} such buffer(s)).")
    if templates:
        lines.append("Inductor used its own Triton template for " + ", ".join(ln["name"] for ln in templates)
                     + " (max-autotune): that template's tile choice is the bar for the GEMM/conv part.")
    conv = [ln for ln in libs if ln["role"] == "convolution"]
    gemm = [ln for ln in libs if ln["role"] == "GEMM"]
    lib_ms = sum(ln.get("ms") or 0 for ln in libs)
    own_ms = sum(ln.get("ms") or 0 for ln in own)
    if conv or gemm:
        lib = "convolution in the library (cuDNN on a GPU)" if conv else "GEMM in the library (cuBLAS on a GPU)"
        share = (f" The library call is {lib_ms:.4f} ms of it and Inductor's own kernels {own_ms:.4f} ms: only those "
                 "are left to win while the library call stays." if timed else "")
        lines.append(
            f"To beat it: keep the {lib}{', channels-last,' if conv else ''} and fuse everything after it into ONE "
            f"kernel that reads its output once (Inductor ran {len(after)} kernel(s) after it"
            f"{', fusing ' + ', '.join(sorted({a for ln in after for a in ln.get('aten') or []})) if after else ''}); "
            f"or put the epilogue on the accumulator of your own "
            f"{'implicit-GEMM conv' if conv else 'Triton matmul'} so its output never goes to memory. Time both: "
            f"the library is hard to beat on the {'conv' if conv else 'GEMM'} itself.{share}")
    elif own:
        lines.append(f"Inductor's own kernels only ({len(own)}): beat them with fewer passes over memory (one read of "
                     "each input, one write of each output), a fused backward, and tiles sized for the shape; the "
                     "floor is the compulsory bytes over the copy bandwidth.")
    if not timed:
        lines.append("CPU interpreter: no timings (the kernels were generated for the CPU: C++ instead of Triton, "
                     "oneDNN instead of cuDNN; run_benchmark on a GPU shows the CUDA plan with each kernel's time).")
    return " ".join(lines)


# ---------------------------------------------------------------------------------------------- entry points
def explain_call(fn: Callable[..., Any], inputs: list[Any], device: str, mode: str | None, case: str) -> dict[str, Any]:
    """The explain section for one reference call: kernels, library calls, layouts, and on a GPU their times."""
    info: dict[str, Any] = {"case": case, "device": device, "compile_mode": mode or "default",
                            "shapes": [list(x.shape) for x in inputs if isinstance(x, torch.Tensor)]}
    try:
        codes, compiled = capture(fn, inputs, mode, run=device == "cuda")
    except Exception as e:  # noqa: BLE001 - the benchmark stands without its explanation
        info.update(error=f"torch.compile of the reference failed: {type(e).__name__}: {str(e)[:400]}", launches=[])
        return info
    info.update(parse(codes, device))
    if device == "cuda" and compiled is not None:
        try:
            prof = profile(compiled, inputs)
            _attach_times(info, prof)
            info["timing"] = f"torch.profiler, device time per call over {prof['runs']} calls"
        except Exception as e:  # noqa: BLE001
            info["timing"] = f"no timings: the profiler failed ({type(e).__name__}: {str(e)[:200]})"
    else:
        info["timing"] = "CPU interpreter: no timings"
    info["uses_cudnn"] = any(ln.get("library") == "cuDNN" for ln in info["launches"])
    info["uses_cublas"] = any(ln.get("library") == "cuBLAS" for ln in info["launches"])
    info["templates"] = [ln["name"] for ln in info["launches"] if ln.get("template")]
    info["plan"] = plan_text(info)
    torch._dynamo.reset()  # the explain compile holds the reference's parameters: gone with it
    return info


def explain_reference(args: dict[str, Any], rt: Any, emit: Any, patches: Any) -> dict[str, Any]:
    """Worker op "explain" (the CPU path; a GPU run_benchmark explains inside its timing loop): the reference at the
    benchmark's first case, compiled, its plan read."""
    from pathlib import Path

    from ..validation import cases as cs
    from ..validation import kernelbench as kbench
    from ..validation.loader import load_task
    from ..validation.tasks import Case, dtype_from_name, dtype_name
    from .specs import bench_cases

    task = load_task(Path(args["reference"]), None, args.get("reference_entry"), None, rt.device)
    asked = dtype_from_name(args["dtype"]) if args.get("dtype") else None
    specs = bench_cases(task, {k: args.get(k) for k in ("cases", "sweep", "sizes")})
    name, shape, _ = specs[0]
    note = ""
    if task.kernelbench:
        dtype = kbench.bench_setup(task, [], specs, args, asked)
        if rt.device != "cuda":  # dynamo traces real inputs: on the CPU, the validated (runnable) size
            small = cs.plan(task.ref_mod, rt.device, args.get("sizes"), None).main.sizes
            if small != shape:
                name, shape, note = "main", small, "the validated (shrunk) sizes: the CPU traces real inputs"
        kbench.prepare_for_bench(task, [], Case(name, shape, dtype, rt.device, 0))
    else:
        dtype = asked or dtype_from_name((getattr(task.ref_mod, "DTYPES", None) or ["float32"])[0])
        if rt.device != "cuda" and _meta_bytes(task, shape, dtype) > CPU_MAX_INPUT_BYTES:
            fits = [sp for sp in cs.form_a_specs(task.ref_mod, [dtype_name(dtype)], None, False)
                    if _meta_bytes(task, sp.shape, dtype) <= CPU_MAX_INPUT_BYTES]
            if fits:
                name, shape = fits[-1].name, fits[-1].shape
                note = f"validation case {name}: the benchmark's inputs are over {CPU_MAX_INPUT_BYTES >> 20} MiB"
    emit("progress", message=f"explain: torch.compile of the reference at case {name}")
    inputs = task.make_inputs(Case(name, shape, dtype, rt.device, 0))
    fn = getattr(task.ref_fn, "__wrapped__", task.ref_fn)
    info = explain_call(fn, inputs, rt.device, args.get("compile"), name)
    if note:
        info["sizes_note"] = note
    return {"explain": info}


CPU_MAX_INPUT_BYTES = 256 << 20  # the CPU's explain allocates the case's inputs (dynamo traces them), nothing more


def _meta_bytes(task: Any, shape: Any, dtype: torch.dtype) -> float:
    from ..validation.nest import tensors_in
    from ..validation.tasks import Case

    try:
        ins = task.make_inputs(Case("meta", shape, dtype, "meta", 0))
    except Exception:  # noqa: BLE001 - a make_inputs the meta device cannot run: try the real one
        return 0.0
    return float(sum(t.numel() * t.element_size() for t in tensors_in(ins)))
