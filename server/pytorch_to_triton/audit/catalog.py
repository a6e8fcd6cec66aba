"""The checklist: every check id with its category, severity, why it matters, the fix and a corrected snippet.

references/audit-guide.md explains the same ids for people, with a bad and a good snippet each;
tests/test_audit.py keeps the two in step. A finding may carry a snippet written for its own line
(the load with `other=` corrected, the grid with triton.cdiv); the snippet here is the fallback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    id: str
    category: str
    severity: str
    title: str
    why: str
    fix: str
    snippet: str
    scope: str = "kernel"  # kernel, host, honesty, compiled, file


def _c(*args: str, scope: str = "kernel") -> Check:
    return Check(*args, scope=scope)


CHECKS: dict[str, Check] = {c.id: c for c in [
    # ---- inside @triton.jit functions -------------------------------------------------------------
    _c("unmasked_access", "correctness", "P0", "load/store at tl.arange offsets without a mask",
       "the last block reads or writes past the end whenever the size is not a multiple of the block",
       "mask every access whose offsets come from tl.arange (and give loads an other=), or use a block "
       "pointer with boundary_check",
       "offs = pid * BLOCK + tl.arange(0, BLOCK)\nmask = offs < n\nx = tl.load(x_ptr + offs, mask=mask, other=0.0)\n"
       "tl.store(y_ptr + offs, x, mask=mask)"),
    _c("masked_load_other", "correctness", "P0", "masked load with the wrong other= for what consumes it",
       "masked-off lanes take the other= value and then join the reduction (or the tl.dot): it must be the "
       "identity, -inf for max, +inf for min, 0 for sum and dot; without other= they are undefined",
       "use other=-float('inf') before tl.max, float('inf') before tl.min, 0.0 before tl.sum or tl.dot",
       "x = tl.load(x_ptr + offs, mask=mask, other=-float(\"inf\")).to(tl.float32)\nm = tl.max(x, axis=0)"),
    _c("masked_lanes_in_reduction", "correctness", "P0", "reduction over lanes that hold padding mixed with data",
       "the padded lanes were combined with real data (x - mean, x + bias) or filled with a value that is not "
       "the reduction's identity, so they add a wrong term to the result",
       "re-zero the padded lanes with tl.where(mask, value, identity) right before the reduction",
       "xc = tl.where(mask, x - mean, 0.0)\nvar = tl.sum(xc * xc, axis=0) / n_cols"),
    _c("unshifted_exp", "numerical_stability", "P0", "exp of raw inputs summed without subtracting the max",
       "exp overflows to inf above ~88 in fp32 (~11 in fp16), so softmax/logsumexp return NaN or inf for large "
       "inputs; subtracting the row max gives the same result without overflow",
       "subtract the row max (or the running max of an online softmax) before exp",
       "x = tl.load(x_ptr + offs, mask=mask, other=-float(\"inf\")).to(tl.float32)\nx = x - tl.max(x, axis=0)\n"
       "e = tl.exp(x)\ny = e / tl.sum(e, axis=0)"),
    _c("low_precision_accumulator", "numerical_stability", "P0", "accumulation in fp16/bf16",
       "a 16-bit accumulator rounds at every step (bf16 keeps 8 bits: 256 + 1 == 256) and fp16 overflows at "
       "65504, so long reductions and matmuls lose digits",
       "accumulate in tl.float32 (tl.zeros(..., dtype=tl.float32), tl.dot's default out_dtype, "
       "tl.sum(x.to(tl.float32))) and cast once when storing",
       "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\nacc = tl.dot(a, b, acc)\n"
       "tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)"),
    _c("missing_eps", "numerical_stability", "P0", "rsqrt / division by sqrt of a reduction without epsilon",
       "a zero (or all-padding) row makes the variance 0 and the result inf/NaN",
       "add the epsilon inside the square root",
       "rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)"),
    _c("nonconstexpr_arange", "correctness", "P0", "tl.arange bound not a constexpr power of two",
       "tl.arange needs compile-time bounds whose difference is a power of 2: a runtime size or a literal such as "
       "100 fails to compile",
       "pass a tl.constexpr block of triton.next_power_of_2(n) and mask the tail",
       "BLOCK_N: tl.constexpr  # host: BLOCK_N=triton.next_power_of_2(n_cols)\ncols = tl.arange(0, BLOCK_N)\n"
       "mask = cols < n_cols"),
    _c("ignored_strides", "memory_access", "P0", "stride arguments taken but not used to index",
       "the kernel receives strides but computes addresses as if the tensor were contiguous: transposed or "
       "sliced inputs give wrong results",
       "index with the strides you pass (or drop them and make the wrapper call .contiguous())",
       "x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=cols < n_cols, other=0.0)"),
    _c("atomic_order", "correctness", "P1", "float atomics: order-dependent results",
       "float atomic adds happen in whatever order programs arrive: results change in the last bits from run "
       "to run, and contention on one address serializes the programs",
       "write per-program partials and reduce them in a fixed order in a second pass",
       "tl.store(part_ptr + pid, tl.sum(x, axis=0))  # pass 1: one partial per program\n"
       "# pass 2 (one program): tl.sum(tl.load(part_ptr + offs, mask=offs < n_parts, other=0.0), axis=0)"),
    _c("global_roundtrip", "memory_access", "P1", "intermediate stored to global memory and loaded back",
       "the value is written to HBM and read again in the same kernel: two extra memory passes, and a race when "
       "other threads or programs wrote the lanes read back",
       "keep the intermediate in registers (a variable) instead of a buffer",
       "y = x * scale          # stays in registers\nz = tl.exp(y - tl.max(y, axis=0))\n"
       "tl.store(out_ptr + offs, z, mask=mask)"),
    _c("block_ptr_boundary", "correctness", "P0", "block-pointer load/store without boundary_check",
       "tl.load/tl.store of a tl.make_block_ptr without boundary_check touches the whole block: when the "
       "dimension (a sequence length, M, N) is not a multiple of the block, the last block reads or writes past "
       "the tensor",
       "pass boundary_check for the dimensions that may be ragged (padding_option=\"zero\" on loads), or assert "
       "in the wrapper that the size is a multiple of the block",
       "q = tl.load(q_block_ptr, boundary_check=(0, 1), padding_option=\"zero\")\n"
       "tl.store(o_block_ptr, acc.to(o_ptr.dtype.element_ty), boundary_check=(0, 1))"),
    _c("low_precision_partials", "numerical_stability", "P1", "partial sums combined in fp16/bf16",
       "gradient (or other) partials summed across programs in 16 bits, by tl.atomic_add of a value cast to "
       "fp16/bf16 or into a 16-bit buffer: every addition rounds to 8 (bf16) or 11 (fp16) bits, so dW/db of many "
       "rows loses digits",
       "accumulate the partials in a float32 buffer (atomic_add of fp32, or per-program fp32 partials summed "
       "afterwards) and cast the finished sum once",
       "dw_part = tl.sum(dy * x_hat, axis=0)  # fp32\ntl.atomic_add(dw32_ptr + cols, dw_part, mask=mask)  "
       "# dw32: torch.zeros(..., dtype=torch.float32)\n# host: dw = dw32.to(w.dtype)"),
    _c("uncoalesced_access", "memory_access", "P1", "lanes stride along a non-contiguous dimension",
       "the offsets' tl.arange is multiplied by a size (H, D, n_cols...): neighbouring lanes read addresses that "
       "far apart, so every lane needs its own memory transaction instead of sharing a 128-byte line",
       "make the contiguous (unit-stride) dimension the tl.arange axis of the block, e.g. load a [BLOCK_T, BLOCK_H] "
       "tile whose last axis is the contiguous one, or transpose the layout on the host",
       "offs = rows[:, None] * row_stride + cols[None, :]  # cols: the unit-stride axis\n"
       "x = tl.load(x_ptr + offs, mask=(rows[:, None] < n) & (cols[None, :] < d), other=0.0)"),
    _c("int32_offset_overflow", "memory_access", "P2", "program_id * stride in int32",
       "tl.program_id is int32: program_id * stride wraps past 2**31 elements (an 8192 x 262144 tensor) and "
       "the kernel reads the wrong memory",
       "widen to int64 before multiplying",
       "row = tl.program_id(0).to(tl.int64)\nx_row = x_ptr + row * stride_x"),
    # ---- host code that launches the kernels ----------------------------------------------------
    _c("grid_floor_division", "correctness", "P0", "grid from floor division",
       "n // BLOCK programs leave the last partial block unprocessed (and launch none when n < BLOCK)",
       "round up with triton.cdiv",
       "grid = (triton.cdiv(n, BLOCK),)", scope="host"),
    _c("grid_axis_mismatch", "correctness", "P0", "kernel reads a program_id axis the grid does not launch",
       "tl.program_id(axis) is always 0 along an axis the grid does not have: only the first slice of that "
       "dimension is computed",
       "give the grid one entry per program_id axis the kernel reads",
       "grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))  # kernel reads program_id(0) and (1)",
       scope="host"),
    _c("assumed_contiguous", "memory_access", "P0", "wrapper passes tensors without strides or .contiguous()",
       "the kernel takes no strides, so it indexes its inputs as dense row-major; a transposed or sliced "
       "input is read wrongly",
       "call .contiguous() on the inputs (or check .is_contiguous()) or pass their strides",
       "x = x.contiguous()\nout = torch.empty_like(x)\nkernel[grid](x, out, x.numel(), BLOCK=1024)", scope="host"),
    _c("host_sync", "performance", "P1", "host-device sync in the launch wrapper",
       ".item(), .cpu(), .tolist(), .numpy() and torch.cuda.synchronize() stall the host until the GPU drains: "
       "the launch queue empties on every call and CUDA graphs cannot capture it",
       "keep values on the device (pass a pointer and tl.load the scalar in the kernel); return tensors",
       "kernel[grid](out, x, scale_t, n, BLOCK=1024)  # scale_t: a device tensor read with tl.load(scale_ptr)\n"
       "return out", scope="host"),
    _c("constexpr_recompile", "performance", "P1", "per-call value passed as a tl.constexpr",
       "every distinct value of a constexpr compiles a new kernel (hundreds of ms each): a raw size such as "
       "x.shape[0] recompiles for every new shape",
       "make it a runtime argument (drop tl.constexpr), or round it (triton.next_power_of_2) when it must be "
       "a compile-time block",
       "def kernel(x_ptr, n, BLOCK: tl.constexpr): ...  # n is a runtime int\n"
       "kernel[grid](x, x.shape[0], BLOCK=1024)", scope="host"),
    _c("autotune_key", "performance", "P1", "autotune key misses the sizes the configs depend on",
       "the autotuner benchmarks once per distinct key: a config picked for the first shape is reused for "
       "every other shape when the size it depends on is not in key",
       "list in key every size argument the tuned blocks tile (M, N, K; n_cols)",
       "@triton.autotune(configs=CONFIGS, key=[\"M\", \"N\", \"K\"])", scope="host"),
    _c("num_warps_mismatch", "performance", "P1", "num_warps out of proportion to the block",
       "a block of B elements over num_warps * 32 threads: fewer than 1 element per thread leaves threads idle, "
       "hundreds per thread spill registers",
       "aim for 4-64 elements per thread: num_warps = BLOCK // 256 clamped to [1, 16]",
       "BLOCK = 4096\nkernel[grid](x, out, n, BLOCK=BLOCK, num_warps=8)  # 16 elements per thread", scope="host"),
    _c("unfused_intermediate", "performance", "P1", "full-size intermediate between two kernels",
       "the first kernel writes a full-size buffer that only the second reads: an extra HBM write and read of "
       "the whole tensor that a fused kernel keeps in registers",
       "fuse the two kernels (compute the intermediate and consume it in the same program)",
       "fused_kernel[grid](x, out, n, BLOCK=1024)  # y = f(x) and g(y) in one pass", scope="host"),
    _c("device_assert_sync", "performance", "P1", "assert on GPU tensor values in the wrapper",
       "`assert (x > 0).all()`, `assert t.max() < n` or `.item()` in an assert copies the value to the host: the "
       "host waits for the GPU on every call (and CUDA graphs cannot capture it); asserts on shapes cost nothing",
       "check tensor values in a debug path (or tl.device_assert in the kernel); keep host asserts on shapes, "
       "dtypes and strides",
       "assert target.dim() == 1 and target.dtype == torch.int64  # metadata only: no sync\n"
       "if DEBUG:\n    assert int(target.max()) < n_classes", scope="host"),
    _c("backward_ignores_flag", "correctness", "P0", "backward does not honour a flag the forward honours",
       "the forward passes a mode flag (causal, IS_CAUSAL, a window...) to its kernel, but the backward never "
       "reads it: gradients are computed for the other mode whenever the flag is not the default",
       "save the flag on ctx in forward and pass it to the backward kernels (as the same constexpr)",
       "ctx.causal = causal  # forward\n_attn_bwd[grid](..., CAUSAL=ctx.causal)  # backward", scope="host"),
    _c("missing_autotune", "performance", "P2", "shape-sensitive kernel without autotune",
       "one fixed BLOCK/num_warps is right for at most one shape",
       "autotune over a few configs keyed on the size arguments (not a defect in stage 1)",
       "@triton.autotune(configs=[triton.Config({\"BLOCK\": b}, num_warps=w) for b, w in ((1024, 4), (4096, 8))],\n"
       "                 key=[\"n\"])\n@triton.jit\ndef kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr): ...",
       scope="host"),
    # ---- honesty of the forward path (KernelBench-style) ------------------------------------------------
    _c("pytorch_compute", "best_practices", "P0", "PyTorch computes part of the result",
       "the candidate's forward path computes with PyTorch (matmul, softmax, reductions, tensor arithmetic, an "
       "nn module): the Triton kernel is then not what runs, and speedups are meaningless",
       "move the computation into the Triton kernel; allocation, views and .contiguous() are fine",
       "out = torch.empty_like(x)\nsoftmax_kernel[(M,)](out, x, N, BLOCK_N=triton.next_power_of_2(N))\nreturn out",
       scope="honesty"),
    _c("try_except_fallback", "best_practices", "P1", "try/except in the forward path",
       "a try/except around the launch turns a compile error or a bad launch into a silent fallback: the "
       "benchmark then times something else",
       "check preconditions explicitly and let errors surface",
       "if not x.is_contiguous():\n    raise ValueError(\"expects a contiguous tensor\")\n"
       "kernel[grid](x, out, n, BLOCK=1024)", scope="honesty"),
    _c("side_stream", "best_practices", "P0", "work on a side CUDA stream",
       "kernels launched on another stream escape the benchmark's events on the current stream: the measured "
       "time excludes them (and results may be read before they finish)",
       "launch on the current stream; remove torch.cuda.Stream / torch.cuda.stream",
       "kernel[grid](x, out, n, BLOCK=1024)  # on the caller's current stream", scope="honesty"),
    _c("concurrency", "best_practices", "P0", "threads or processes in the forward path",
       "threading/multiprocessing lets work continue after the call returns or overlap with the timer: the "
       "benchmark no longer measures the kernel",
       "do the work synchronously in the call; parallelism belongs inside the kernel's grid",
       "kernel[grid](x, out, n, BLOCK=1024)\nreturn out", scope="honesty"),
    _c("timer_patch", "best_practices", "P0", "timers or PyTorch functions patched",
       "assigning to time.perf_counter, torch.cuda.Event, triton.testing.do_bench or torch functions changes "
       "what the benchmark or the reference measures",
       "remove the patch", "# no assignment to time.*, torch.cuda.*, triton.testing.* or torch functions",
       scope="honesty"),
    _c("output_cache", "best_practices", "P0", "outputs cached on the input's address",
       "a cache keyed on data_ptr()/id() returns the previous output when the benchmark passes the same buffer "
       "again: it times a dictionary lookup, and returns stale results when the data changed in place",
       "compute the output on every call",
       "def forward(x):\n    out = torch.empty_like(x)\n    kernel[grid](x, out, x.numel(), BLOCK=1024)\n    return out",
       scope="honesty"),
    _c("no_kernel_launch", "best_practices", "P0", "forward launches no Triton kernel",
       "the module's forward never launches a @triton.jit kernel (directly or through a helper in the file): "
       "the candidate is not a Triton implementation",
       "launch the kernel from forward",
       "def forward(self, x):\n    out = torch.empty_like(x)\n    kernel[grid](x, out, x.numel(), BLOCK=1024)\n"
       "    return out", scope="honesty"),
    _c("syntax_error", "correctness", "P0", "file does not parse",
       "nothing else could be checked", "fix the line the finding names and re-run the audit",
       "@triton.jit\ndef kernel(x_ptr, BLOCK: tl.constexpr):\n    pass", scope="file"),
]}

# Found by the worker's compiled analysis (worker/device/compiled.py); their corrected snippets live here.
COMPILED: dict[str, Check] = {c.id: c for c in [
    _c("register_spills", "performance", "P1", "register spills",
       "spills go to local memory (L1/L2/HBM) on every access",
       "smaller tiles, fewer num_stages, or more num_warps",
       "triton.Config({\"BLOCK_N\": 4096}, num_warps=8)  # was BLOCK_N=65536 with 4 warps", scope="compiled"),
    _c("low_occupancy", "performance", "P1", "low occupancy",
       "too few resident warps to hide memory latency", "fewer pipeline stages or smaller tiles",
       "triton.Config({\"BLOCK_M\": 128, \"BLOCK_N\": 128, \"BLOCK_K\": 64, \"GROUP_M\": 8}, num_warps=8, num_stages=3)",
       scope="compiled"),
    _c("unvectorized_loads", "memory_access", "P1", "no vectorized loads",
       "scalar loads use a fraction of each memory transaction",
       "make the contiguous dimension the fastest-varying one of the tl.arange offsets",
       "offs = rows[:, None] * stride_r + cols[None, :]  # cols: the unit-stride axis, last", scope="compiled"),
    _c("no_wgmma", "performance", "P1", "tl.dot without wgmma on Hopper",
       "mma.sync reaches a fraction of the H100/H200 tensor-core rate",
       "BLOCK_M >= 64, num_warps a multiple of 4, fp16/bf16 operands",
       "triton.Config({\"BLOCK_M\": 128, \"BLOCK_N\": 128, \"BLOCK_K\": 64, \"GROUP_M\": 8}, num_warps=8, num_stages=3)",
       scope="compiled"),
]}


def lookup(check_id: str) -> Check | None:
    return CHECKS.get(check_id) or COMPILED.get(check_id)
