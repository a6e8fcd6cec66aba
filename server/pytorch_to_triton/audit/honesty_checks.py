"""KernelBench-style honesty checks: does the forward path really run the Triton kernel, and is the timing fair?

A candidate can look fast by computing in PyTorch, falling back on errors, working on a side stream or in
threads the benchmark does not wait for, patching the timers, or returning a cached output. These checks read
the host code of the file (functions on the forward path, plus module-level assignments for patches).
"""

from __future__ import annotations

import ast

from .context import AuditContext
from .names import canon, dotted, short, walk_local
from .structure import HostFunc

TORCH_COMPUTE = {
    "matmul", "mm", "bmm", "addmm", "baddbmm", "einsum", "tensordot", "dot", "outer", "softmax", "log_softmax",
    "sum", "mean", "prod", "exp", "exp2", "log", "log2", "log1p", "sqrt", "rsqrt", "cumsum", "cumprod", "logsumexp",
    "layer_norm", "group_norm", "rms_norm", "batch_norm", "conv1d", "conv2d", "conv3d", "linear", "relu", "gelu",
    "silu", "sigmoid", "tanh", "max", "min", "amax", "amin", "argmax", "argmin", "norm", "var", "std", "add", "sub",
    "mul", "div", "pow", "maximum", "minimum", "clamp", "topk", "sort", "cross_entropy", "nll_loss", "abs", "neg",
    "square", "scaled_dot_product_attention", "dropout", "where", "erf", "addcmul", "lerp", "cdist",
}
TENSOR_METHODS = {
    "sum", "mean", "softmax", "log_softmax", "exp", "log", "matmul", "mm", "bmm", "cumsum", "logsumexp", "norm",
    "var", "std", "relu", "sigmoid", "tanh", "amax", "amin", "max", "min", "argmax", "prod", "add", "sub", "mul",
    "div", "pow", "sqrt", "rsqrt", "abs", "clamp", "addmm", "masked_fill", "add_", "mul_", "div_", "sub_", "exp_",
    "clamp_", "relu_", "topk", "cumprod", "dot", "outer", "square",
}
NN_COMPUTE = {"Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose2d", "LayerNorm", "BatchNorm1d", "BatchNorm2d",
              "GroupNorm", "RMSNorm", "Softmax", "LogSoftmax", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid",
              "MultiheadAttention", "LSTM", "GRU", "Dropout", "Embedding", "MaxPool2d", "AvgPool2d", "Bilinear"}
# The ops run_validation's composition judge (worker/validation/composition.py LIBRARY) discloses as a library
# design (cuBLAS matmul, cuDNN convolution, SDPA attention) when Triton kernels do the rest: allowed unless the task
# requires all_triton. The static check defers to that judge where a Triton launch reads the op's result.
LIBRARY_OPS = {"matmul": "matmul (cuBLAS)", "mm": "matmul (cuBLAS)", "bmm": "matmul (cuBLAS)",
               "addmm": "matmul (cuBLAS)", "baddbmm": "matmul (cuBLAS)", "einsum": "matmul (cuBLAS)",
               "linear": "matmul (cuBLAS)", "conv1d": "convolution (cuDNN)", "conv2d": "convolution (cuDNN)",
               "conv3d": "convolution (cuDNN)", "scaled_dot_product_attention": "attention (SDPA)"}
_PATCH_ROOTS = ("time.", "timeit.", "torch.cuda.", "triton.testing.", "triton.runtime.", "torch.Tensor.")
_STREAMS = {"torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.StreamContext", "torch.cuda.ExternalStream",
            "torch.cuda.set_stream", "torch.Stream", "torch.cuda.streams.Stream"}
_CONCURRENCY = ("threading.", "multiprocessing.", "concurrent.futures.", "torch.multiprocessing.", "_thread.")
_SYNC_METHODS = {"item", "cpu", "tolist", "numpy"}
_SPAWN = {"Thread", "Timer", "Process", "Pool", "ThreadPool", "ThreadPoolExecutor", "ProcessPoolExecutor",
          "start_new_thread", "spawn", "start_processes"}


def check_honesty(ctx: AuditContext) -> None:
    """The forward-path checks (files with kernels) and the timer patches (any file)."""
    model = ctx.model
    _patches(ctx)
    if not model.kernels:
        return
    modules = _nn_modules(ctx)
    for q in sorted(model.forward_path()):
        fn = model.funcs[q]
        _pytorch_compute(ctx, fn, modules.get(fn.cls or "", set()))
        _host_sync(ctx, fn)
        for node in walk_local(fn.node):
            if isinstance(node, ast.Try):
                ctx.add("try_except_fallback", node, q, evidence="try: ... except ...",
                        why="a try/except in the forward path can hide a failing kernel behind another "
                            "implementation (or a wrong result): the benchmark then times something else")
        _cache_decorators(ctx, fn)
        _data_ptr_cache(ctx, fn)
        _streams_threads(ctx, walk_local(fn.node), q)
    _streams_threads(ctx, _module_level(model.tree), None)
    _no_launch(ctx)


def _module_level(tree: ast.Module):
    """Nodes of module-level statements, not inside functions or classes."""
    for stmt in tree.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield stmt
            yield from walk_local(stmt)


def _receiver_is_module(ctx: AuditContext, f: ast.Attribute) -> bool:
    root = f.value
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id in ctx.model.aliases


def _tensor_names(ctx: AuditContext, fn: HostFunc) -> set[str]:
    """Names that hold tensors: passed to a kernel, or made by torch allocations and views of those."""
    names: set[str] = set()
    for ln in fn.launches:
        facts = ctx.facts.get(ln.kernel)
        for p, a in ln.bind(facts.decl.params if facts else []).items():
            if isinstance(a, ast.Name) and facts is not None and p in facts.pointer_params:
                names.add(a.id)
    for node in walk_local(fn.node):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            name = canon(node.value.func, ctx.model.aliases)
            if name.startswith("torch.") and short(name) in ("empty", "empty_like", "zeros", "zeros_like", "ones",
                                                              "full", "randn", "rand", "tensor"):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _launch_inputs(fn: HostFunc) -> dict[str, str]:
    """Name -> kernel, for the names fn passes to a Triton launch (bare, or as `y.contiguous()`-style receivers)."""
    out: dict[str, str] = {}
    for ln in fn.launches:
        for a in [*ln.args, *ln.keywords.values()]:
            while isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute):
                a = a.func.value
            if isinstance(a, ast.Name):
                out.setdefault(a.id, ln.kernel)
    return out


def _library_feeding_triton(ctx: AuditContext, fn: HostFunc, node: ast.Call, name: str) -> str:
    """'' unless `y = <library op>(...)` and a Triton launch in fn reads y: then the disclosure, in validate's words."""
    kind = LIBRARY_OPS.get(short(name))
    if kind is None:
        return ""
    inputs = _launch_inputs(fn)
    for st in walk_local(fn.node):
        if isinstance(st, ast.Assign) and st.value is node:
            for t in st.targets:
                if isinstance(t, ast.Name) and t.id in inputs:
                    return (f"design: the {kind} in the library, its result read by the Triton kernel "
                            f"{inputs[t.id]}: run_validation discloses it as library_compute (allowed; require "
                            "all_triton to forbid)")
    return ""


def _pytorch_compute(ctx: AuditContext, fn: HostFunc, module_attrs: set[str]) -> None:
    tensors = _tensor_names(ctx, fn)
    # Argument checks (`assert t.max() < n`) compute nothing the caller gets back; device_assert_sync covers them.
    in_assert = {id(n) for a in walk_local(fn.node) if isinstance(a, ast.Assert) for n in ast.walk(a)}
    for node in walk_local(fn.node):
        if id(node) in in_assert:
            continue
        if isinstance(node, ast.Call):
            name = canon(node.func, ctx.model.aliases)
            s = short(name)
            what = None
            if name.startswith("F.") or name.startswith("torch.nn.functional."):
                what = name if s not in ("pad",) else None
            elif name.startswith("torch.") and s in TORCH_COMPUTE and name.count(".") <= 2 and \
                    not name.startswith(("torch.cuda.", "torch.backends.")):
                what = name
            elif isinstance(node.func, ast.Attribute) and s in TENSOR_METHODS and \
                    not _receiver_is_module(ctx, node.func) and not isinstance(node.func.value, ast.Constant):
                what = f".{s}()"
            elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and \
                    node.func.value.id == "self" and node.func.attr in module_attrs:
                what = f"self.{node.func.attr} (a torch.nn module)"
            design = _library_feeding_triton(ctx, fn, node, name) if what else ""
            if design:  # P2: the validator fails it only where PyTorch produces the result itself, or all_triton
                ctx.add("pytorch_compute", node, fn.qualname, why=design,
                        fix="nothing unless the task requires all_triton: then compute it in a Triton kernel",
                        verify="run_validation with the task reference judges it (it fails pytorch_compute only "
                               "where PyTorch produces the result itself, or the task requires all_triton)")
            elif what:
                ctx.add("pytorch_compute", node, fn.qualname,
                        why=f"{what} computes part of the result in PyTorch inside the candidate's forward path: "
                            "the Triton kernel is not what produces it, and a speedup would not be the kernel's")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            ctx.add("pytorch_compute", node, fn.qualname,
                    why="`@` is a PyTorch matmul in the forward path: the Triton kernel is not what computes it")
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and \
                isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
            sides = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.target, node.value]
            if any(_is_tensor(s, tensors) for s in sides):
                ctx.add("pytorch_compute", node, fn.qualname,
                        why="tensor arithmetic in the forward path runs a PyTorch kernel: that part of the result "
                            "is not computed by Triton")


def _is_tensor(e: ast.expr, tensors: set[str]) -> bool:
    if isinstance(e, ast.Name):
        return e.id in tensors
    return isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and e.value.id in tensors


def _nn_modules(ctx: AuditContext) -> dict[str, set[str]]:
    """Class -> attributes assigned a computing torch.nn module in its methods (self.fc = nn.Linear(...))."""
    out: dict[str, set[str]] = {}
    for fn in ctx.model.funcs.values():
        if not fn.cls:
            continue
        for node in walk_local(fn.node):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                name = canon(node.value.func, ctx.model.aliases)
                if name.startswith("torch.nn.") and short(name) in NN_COMPUTE:
                    for t in node.targets:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            out.setdefault(fn.cls, set()).add(t.attr)
    return out


def _off_by_default(ctx: AuditContext, fn: HostFunc) -> dict[int, str]:
    """id(node) -> flag, for the nodes under `if flag:` where `flag` is a parameter of fn that defaults to False or
    None, that no call in the file passes (by keyword or position) with another value, and whose block only
    validates (asserts): debug paths such as megatron's check_bounds, off unless a caller asks (issue 26,
    held_out_11)."""
    args = fn.node.args
    pos = [a.arg for a in args.posonlyargs + args.args]
    defaults = dict(zip(pos[len(pos) - len(args.defaults):], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    off = {n for n, d in defaults.items() if isinstance(d, ast.Constant) and d.value in (False, None)}
    name = fn.qualname.rsplit(".", 1)[-1]
    for call in ast.walk(ctx.model.tree):
        if not isinstance(call, ast.Call) or not off:
            continue
        callee = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
        if callee != name:
            continue
        for k in call.keywords:
            if k.arg in off and not (isinstance(k.value, ast.Constant) and k.value.value in (False, None)):
                off.discard(k.arg)
        for i, a in enumerate(call.args):
            if i < len(pos) and pos[i] in off and not (isinstance(a, ast.Constant) and a.value in (False, None)):
                off.discard(pos[i])
    out: dict[int, str] = {}
    for node in walk_local(fn.node):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id in off and \
                _only_checks(node.body):
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    out[id(sub)] = node.test.id
    return out


def _only_checks(body: list[ast.stmt]) -> bool:
    """A block that only validates (asserts or raises, and the assignments and loops that feed them): a debug path,
    not one that computes the result (colossalai's `if is_prompts:` sizes its output: no check block)."""
    def ok(st: ast.stmt) -> bool:
        if isinstance(st, (ast.Assert, ast.Raise, ast.Assign, ast.AnnAssign, ast.Pass)):
            return True
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            return True
        if isinstance(st, (ast.For, ast.If)):
            return all(ok(s) for s in st.body + st.orelse)
        return False

    checks = any(isinstance(n, (ast.Assert, ast.Raise)) for st in body for n in ast.walk(st))
    return checks and all(ok(st) for st in body)


def _cpu_made(expr: ast.expr) -> bool:
    """A call that makes a tensor on the CPU by name (`device="cpu"`): reading it back waits on no GPU queue."""
    return isinstance(expr, ast.Call) and any(
        k.arg == "device" and isinstance(k.value, ast.Constant) and k.value.value == "cpu" for k in expr.keywords)


def _on_host(recv: ast.expr, fn: HostFunc) -> bool:
    """The receiver of .item()/.tolist() is a CPU tensor made in this function (protenix's dropout seed,
    `torch.randint(..., device="cpu").item()`: issue 26, held_out_20), directly or through one local name."""
    if _cpu_made(recv):
        return True
    if not isinstance(recv, ast.Name):
        return False
    made = [n.value for n in walk_local(fn.node) if isinstance(n, ast.Assign) and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name) and n.targets[0].id == recv.id]
    return bool(made) and all(_cpu_made(v) for v in made)


def _host_sync(ctx: AuditContext, fn: HostFunc) -> None:
    guarded = _off_by_default(ctx, fn)
    for node in walk_local(fn.node):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name = canon(node.func, ctx.model.aliases)
        s = node.func.attr
        to_cpu = s == "to" and any(isinstance(a, ast.Constant) and a.value == "cpu" for a in node.args)
        if (s in _SYNC_METHODS and not _receiver_is_module(ctx, node.func)) or s == "synchronize" or to_cpu:
            if s == "synchronize" and not (name.startswith("torch.cuda") or not _receiver_is_module(ctx, node.func)):
                continue
            if s in _SYNC_METHODS and _on_host(node.func.value, fn):
                continue
            call = f"{name}()" if s == "synchronize" else f".{s}()"
            flag = guarded.get(id(node))
            ctx.add("host_sync", node, fn.qualname,
                    why=f"{call} in the forward path blocks the host until the GPU has finished: the launch queue "
                        "drains on every call, and CUDA graphs cannot capture it",
                    verify=(f"only under `if {flag}:`, a parameter that defaults to off and that no call in this file "
                            "turns on: a cost only for callers that pass it" if flag else ""))


def _cache_decorators(ctx: AuditContext, fn: HostFunc) -> None:
    for d in fn.node.decorator_list:
        name = canon(d.func if isinstance(d, ast.Call) else d, ctx.model.aliases)
        if short(name) in ("lru_cache", "cache") and ctx.model.reaches_launch(fn.qualname):
            ctx.add("output_cache", d, fn.qualname, evidence=f"@{name}",
                    why=f"@{short(name)} on {fn.qualname} returns the previous result for the same tensor "
                        "objects: repeated benchmark calls skip the kernel, and in-place changes return stale data")


def _no_launch(ctx: AuditContext) -> None:
    for q, fn in ctx.model.funcs.items():
        if fn.cls and short(q) == "forward" and not ctx.model.reaches_launch(q):
            ctx.add("no_kernel_launch", fn.node, q, evidence=f"def {q}(...)",
                    why=f"{q} launches no @triton.jit kernel of the file, directly or through the functions it "
                        "calls: the module is not a Triton implementation")


def _streams_threads(ctx: AuditContext, nodes, function: str | None) -> None:
    aliases = ctx.model.aliases
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        name = canon(node.func, aliases)
        if name in _STREAMS or (isinstance(node.func, ast.Attribute) and node.func.attr == "wait_stream"):
            ctx.add("side_stream", node, function,
                    why=f"{name or node.func.attr} puts work on another CUDA stream: the benchmark's events "
                        "on the current stream do not time it, and outputs may be read before it finishes")
        elif name.startswith(_CONCURRENCY) and short(name) in _SPAWN:
            ctx.add("concurrency", node, function,
                    why=f"{name} runs work in another thread or process: it can continue after the call "
                        "returns, outside the benchmark's timing")


def _patches(ctx: AuditContext) -> None:
    aliases = ctx.model.aliases
    for node in ast.walk(ctx.model.tree):
        if isinstance(node, ast.Call):
            name = canon(node.func, aliases)
            if short(name) == "setattr" and node.args and _patched(canon(node.args[0], aliases) + "."):
                ctx.add("timer_patch", node, None,
                        why=f"setattr on {canon(node.args[0], aliases)} patches a timer or a library function the "
                            "benchmark and the reference rely on")
            elif short(name) == "patch" and "mock" in name and node.args and isinstance(node.args[0], ast.Constant) \
                    and _patched(str(node.args[0].value)):
                ctx.add("timer_patch", node, None,
                        why=f"mock.patch({node.args[0].value!r}) replaces what the benchmark measures with")
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                name = canon(t, aliases) if isinstance(t, ast.Attribute) else ""
                if name and _patched(name):
                    ctx.add("timer_patch", node, None, evidence=ctx.text(node)[:160],
                            why=f"assigning {name} replaces a timer or a PyTorch/Triton function: the benchmark (or "
                                "the reference it compares with) no longer measures what it claims")


def _patched(name: str) -> bool:
    if name.startswith("torch.backends.") or name.startswith("torch._"):
        return False
    if name.startswith(_PATCH_ROOTS):
        return True
    head, _, tail = name.rpartition(".")
    return head in ("torch", "F", "torch.nn.functional") and tail in TORCH_COMPUTE


def _data_ptr_cache(ctx: AuditContext, fn: HostFunc) -> None:
    """data_ptr()/id() used as a lookup key: a subscript, a dict key, an `in` test or .get()."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(fn.node):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    keyed: dict[str, ast.Call] = {}  # key = (x.data_ptr(), ...): the name -> its data_ptr call
    for node in walk_local(fn.node):
        if isinstance(node, ast.Assign):
            calls = [n for n in ast.walk(node.value) if _addr_call(n)]
            for t in node.targets:
                if calls and isinstance(t, ast.Name):
                    keyed[t.id] = calls[0]
    for node in walk_local(fn.node):
        call = node if _addr_call(node) else (keyed.get(node.id) if isinstance(node, ast.Name) and
                                              isinstance(node.ctx, ast.Load) else None)
        if call is not None and _used_as_key(node, parents):
            ctx.add("output_cache", call, fn.qualname, line=call.lineno,
                    why=f"{ctx.text(call)} is used as a cache key: a call with the same buffer returns the "
                        "stored output instead of running the kernel (the benchmark times a lookup; in-place "
                        "changes to the input return stale results)")


def _addr_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == "data_ptr") or dotted(node.func) == "id")


def _used_as_key(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    child, p = node, parents.get(id(node))
    for _ in range(4):
        if p is None:
            return False
        if isinstance(p, ast.Subscript) and child is p.slice:
            return True
        if isinstance(p, ast.Dict) and child in p.keys:
            return True
        if isinstance(p, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in p.ops):
            return True
        if isinstance(p, ast.Call) and isinstance(p.func, ast.Attribute) and \
                p.func.attr in ("get", "setdefault", "pop", "__contains__") and child in p.args:
            return True
        if not isinstance(p, (ast.Tuple, ast.Call, ast.JoinedStr, ast.FormattedValue)):
            return False
        child, p = p, parents.get(id(p))
    return False
