"""Pydantic models: what the tools return (the MCP output schemas) and what they accept."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Open(BaseModel):
    # Worker records may carry extra diagnostic keys; keep them rather than fail the call.
    model_config = ConfigDict(extra="allow")


class CaseSpec(BaseModel):
    """A user-supplied validation or benchmark case."""

    name: str | None = Field(None, description="case name, e.g. 'big_rows'")
    shape: list[int] | dict[str, int] | None = Field(None, description="the case's shape as make_inputs expects it, "
                                                     "e.g. [4096, 1000] (function-form references)")
    sizes: dict[str, int] | None = Field(None, description="KernelBench references: module-level size overrides for "
                                         "this case, e.g. {'batch_size': 7}, on top of the main case's sizes")
    dtype: str | None = Field(None, description="dtype for this case only, e.g. 'bfloat16'")
    scale: float = Field(1.0, description="magnitude of random values (e.g. 1e4 to test overflow)")
    values: dict[str, str] | None = Field(None, description="value recipes per input (parameter name or position): "
                                          "{'targets': '25% = -100'}, {'x': 'scale 1e4'}, {'mask': 'tril'}")


class Tolerance(BaseModel):
    """An assert_close-style tolerance: |out - ref| <= atol + rtol * |ref|."""

    rtol: float = Field(ge=0)
    atol: float = Field(ge=0)


class Finding(_Open):
    """A named check that failed (severity 'fail') or deserves a look ('warn')."""

    check: str
    severity: Literal["fail", "warn"] = "fail"
    message: str
    case: str | None = None
    evidence: Any = None
    count: int = 1
    fix: str = ""
    variant: Any = Field(None, description="the variant the finding is on and what it changes (layout, sizes, "
                         "values)")


class CaseResult(_Open):
    """One case (name, dtype, trial) of one candidate."""

    name: str
    dtype: str
    trial: int = 0
    seed: int = 0
    ok: bool
    shape: list[list[int]] = []
    time_ms: float | None = None
    max_abs_err: float | str | None = None
    max_rel_err: float | str | None = None
    rel_l2_err: float | str | None = None
    mismatches: int | None = None
    nonfinite: int | None = None
    unwritten: int | None = None
    worst: list[dict[str, Any]] = []
    error: dict[str, Any] | None = None
    peak_mem_bytes: int | None = Field(None, description="peak memory of this case (CUDA max_memory_allocated; on "
                                       "CPU the host RSS high-water mark), to set against io_bytes")
    io_bytes: int | None = Field(None, description="bytes of the case's inputs plus the reference's outputs")
    # Filled by the worker when they apply (typed loosely: the output must never fail over a diagnostic).
    launches: Any = Field(None, description="Triton launches the candidate made in this case")
    outputs: Any = Field(None, description="per output: the metrics above plus the rtol/atol used")
    mem_estimate_bytes: Any = Field(None, description="memory the case was estimated to need before it ran")
    peak_mem_source: Any = Field(None, description="what peak_mem_bytes measured")
    skipped: Any = Field(None, description="true when the reference rejects this variant (a note says why)")
    composition: Any = Field(None, description="Triton kernels vs library ops of this case's candidate call")
    harness_fault: Any = Field(None, description="the reference crashed the worker on this case (skipped; no "
                               "candidate blamed)")
    running_since: Any = Field(None, description="the case was running when the call timed out or died: since when")
    running_for_s: Any = Field(None, description="... and for how many seconds")
    tier: Literal["contract", "robustness"] = Field("contract", description="contract: the problem's own inputs "
                                                    "(decides ok); robustness: inputs it never produces (reported)")
    robustness_kind: Any = Field(None, description="on a robustness case: layouts, empty, nan or extreme")
    values: Any = Field(None, description="a case of yours that changed input values: its recipes (and hook file)")
    tolerance_widened: Any = Field(None, description="true when 4x PyTorch's own error against float64 exceeds atol "
                                   "somewhere in this case: each element was also allowed 4x PyTorch's error in its "
                                   "64-element window (references/tolerances.md)")


class RobustnessFinding(_Open):
    """A check that failed on inputs the problem never produces (layouts, empty dims, NaN/inf, extreme values)."""

    kind: str = Field(description="layouts | empty | nan | extreme: what `require` / strict names to make it count")
    title: str = Field(description="what the verdict line says, e.g. 'non-contiguous input'")
    check: str
    message: str
    case: str | None = None
    evidence: Any = None
    count: int = 1
    fix: str = ""
    variant: Any = Field(None, description="the variant the finding is on and what it changes (layout, sizes, "
                         "values), as in Finding")


class CandidateReport(_Open):
    """All cases of one candidate file."""

    candidate: str
    ok: bool
    cases: list[CaseResult] = []
    findings: list[Finding] = []
    verdict_line: str = Field("", description="pass, fail, or 'pass; not robust to: ...'")
    robustness: list[RobustnessFinding] = Field([], description="failures on inputs the problem never produces: "
                                                "reported beside the verdict, failing it only under strict/require")
    notes: list[str] = []
    error: dict[str, Any] | None = None
    time_s: float | None = None
    launched_kernels: Any = Field(None, description="names of the Triton kernels the candidate launched")
    tf32: Any = Field(None, description="interpreter only: fp32 tl.dot executions and how TF32 was emulated")
    worker_output: Any = Field(None, description="what the candidate printed (the worker's stdout/stderr, capped)")
    worker_memory: Any = Field(None, description="device memory of the worker before/after the call (bytes)")
    worker_device: Any = Field(None, description="the worker slot that ran it, e.g. 'cuda:0' or 'cpu'")
    worker_restarts: Any = Field(None, description="how often that slot's worker was replaced so far")
    runtime: Any = Field(None, description="the worker's device, interpreter flag and versions")
    composition: Any = Field(None, description="what the candidate is made of: Triton kernels, library ops (cuBLAS "
                             "matmuls, ...), Triton's share of the GPU time; `line` summarizes it")
    worker_replacements: Any = Field(None, description="workers replaced after a crash inside a case, and where")
    full_size: Any = Field(None, description="the dry run at the problem's full size (no GPU: fake tensors): its sizes, "
                           "launches and the contract findings it raised, or why it could not run")
    target_compile: Any = Field(None, description="interpreter only: each launched specialisation compiled for the "
                                "target GPU(s) (sm_90 unless target_gpus says otherwise) by this Triton: per kernel, "
                                "config and target: ok or the compiler's error and line, registers, spills, shared "
                                "memory, occupancy")


class ValidationReport(_Open):
    """run_validation's result."""

    ok: bool = Field(description="true only when every candidate passed every case and check")
    verdict: str
    first_fix: str | None = Field(None, description="the first thing to fix, when a candidate failed")
    interpreter: bool = Field(description="true when kernels ran under Triton's CPU interpreter (no GPU)")
    device: str
    reference: str
    candidates: list[CandidateReport]
    seed: int
    trials: int
    runtime: dict[str, Any] = {}
    reproduce: str = Field("", description="CLI command that reproduces this run")
    summary: str = ""
    sidecar: Any = Field(None, description="the task sidecar read beside the reference: file, what was used, notes")


class Timing(_Open):
    """One implementation's timing on one case."""

    impl: str
    case: str
    ok: bool
    median_ms: float | None = None
    min_ms: float | None = None
    p20_ms: float | None = None
    p80_ms: float | None = None
    spread_pct: float | None = None
    repeats_ms: list[float] = []
    first_call_ms: float | None = None
    host_ms_per_call: float | None = None  # CPU time to issue one call; near median_ms means host-bound
    gbps: float | None = None
    tflops: float | None = None
    pct_peak_bw: float | None = None
    pct_peak_flops: float | None = None
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    significant_vs_eager: bool | None = None
    significant_vs_compile: bool | None = None
    peak_mem_mb: float | None = None
    suspect: list[str] = []
    error: str | None = None
    autotune: dict[str, Any] | None = None
    x: float | None = None  # the swept value (sweep runs)
    shape: list[list[int]] = []
    dtype: str | None = None
    input_sets: int | None = None  # input sets rotated between calls (small cases: defeat L2 reuse)
    timer: str | None = None
    bytes: float | None = None  # bytes the case moves (the GB/s numerator)
    flops: float | None = None  # FLOPs of the case (None: no matmul/conv/attention work)
    bytes_source: str | None = None  # "declared" (reference BYTES / sidecar) or "counted"
    flops_source: str | None = None  # "declared" (FLOPS) or "counted" (FlopCounterMode); None without FLOPs
    roofline_ms: float | None = None  # the least time this GPU needs for bytes and flops at its measured peaks
    info: list[str] = []  # facts worth a look that cast no doubt on the number (e.g. a large win over eager)
    patched: list[str] | None = None


class CompileKernel(_Open):
    """One call of torch.compile's generated code: a kernel Inductor wrote or a library call it kept."""

    name: str = Field(description="kernel name (triton_poi_fused_sub_0, cpp_fused_..._1) or the library call "
                      "(extern_kernels.convolution, extern_kernels.mm, torch.ops.mkldnn._convolution_pointwise)")
    kind: str = Field(description="triton pointwise | triton reduction | triton persistent reduction | triton template "
                      "| C++ kernel | extern | library op")
    role: str = Field("", description="what it does in the plan: convolution, GEMM, epilogue, pooling, reduction, ...")
    library: str | None = Field(None, description="cuDNN, cuBLAS (GPU), oneDNN, MKL (CPU) for a library call")
    template: bool = False
    nodes: list[str] = Field([], description="the reference's source nodes it fused (Inductor's comment)")
    aten: list[str] = Field([], description="the ATen ops it fused")
    ms: float | None = Field(None, description="device time per call (GPU, torch.profiler); None on the CPU")
    share_pct: float | None = None


class CompilePlan(_Open):
    """What torch.compile did with the reference (run_benchmark explain=true): the plan a stage 3 has to beat."""

    case: str = ""
    device: str = ""
    compile_mode: str = "default"
    launches: list[CompileKernel] = Field([], description="the generated code's calls, in order")
    channels_last: list[dict[str, Any]] = Field([], description="channels-last buffers (4-d/5-d, channel stride 1)")
    uses_cudnn: bool = False
    uses_cublas: bool = False
    templates: list[str] = Field([], description="Inductor's Triton templates used (max-autotune mm/conv)")
    total_ms: float | None = Field(None, description="device time of every kernel per call (GPU)")
    timing: str = Field("", description="where the times come from, or 'CPU interpreter: no timings'")
    plan: str = Field("", description="the plan in words, and what a stage 3 has to do to beat it")
    error: str | None = None


class BenchmarkReport(_Open):
    """run_benchmark's result."""

    ok: bool
    verdict: str
    device: str
    reference: str
    timings: list[Timing] = []
    peaks: dict[str, Any] = {}
    environment: dict[str, Any] = {}
    runtime: dict[str, Any] = Field({}, description="the worker that ran the user code: device, versions, and "
                                    "`sandbox`, what confined it (references/sandbox.md)")
    notes: list[str] = []
    plot: str | None = None
    results_file: str | None = None
    reproduce: str = ""
    summary: str = ""
    sidecar: Any = Field(None, description="the task sidecar read beside the reference: file, what was used, notes")
    explain: CompilePlan | None = Field(None, description="with explain=true: the kernels torch.compile generated for "
                                        "the reference (each one's time on a GPU, what it fused, cuDNN/cuBLAS calls, "
                                        "channels-last, templates): what stage 3 must beat")


class AuditFinding(_Open):
    """One audit finding. `check` names it, as in run_validation's findings; `id` is its deprecated alias."""

    check: str = Field(description="the check's name, e.g. 'unmasked_access' (audit-guide.md has one entry per name)")
    id: str | None = Field(None, description="deprecated alias of `check` (its older name); read `check`")
    category: str
    severity: Literal["P0", "P1", "P2", "info"]  # info: a host-code note (AuditResult.host_code), never a problem
    file: str
    line: int
    function: str | None = None
    evidence: str = ""
    why: str = ""
    fix: str = ""
    snippet: str = ""
    reproducer: str = Field("", description="a probe's failing input as one command (exits 1 while it fails)")
    probe: str = Field("", description="the probe whose failure this finding reports or confirms")
    accepted: str = Field("", description="in AuditResult.accepted: the sidecar's reason for the dispute")
    assumed: str = Field("", description="the contract the finding was judged against, in one line ('assumed: w "
                         "contiguous (wrapper calls .contiguous()); ...'): dispute it with [audit] require / assume")

    @model_validator(mode="before")
    @classmethod
    def _one_name(cls, data: Any) -> Any:
        # The audit package names the field `id`; every tool's output names it `check` (and keeps `id`).
        if isinstance(data, dict):
            name = data.get("check") or data.get("id")
            data = {**data, "check": name, "id": name}
        return data


class AuditResult(_Open):
    """audit_kernel's result: the static report plus compiled analysis when a GPU ran it."""

    file: str
    verdict: str
    counts: dict[str, Any] = {}
    findings: list[AuditFinding] = []
    host_code: list[AuditFinding] = Field(default_factory=list, description=(
        "honesty checks of a file that is not a benchmark candidate (no ModelNew, no reference=): information about "
        "its host code at severity 'info', not problems and not counted"))
    candidate: bool = False
    checked: list[str] = []
    not_checked: list[str] = []
    compiled: list[dict[str, Any]] = []
    markdown: str = ""
    summary: str = ""
    kernels: Any = Field(None, description="per @triton.jit function: name, line, autotune, constexprs, helper, "
                         "launched")
    task_notes: Any = Field(None, description="the task sidecar's notes (the assistant's assumptions), when found")
    probes: list[dict[str, Any]] = Field(default_factory=list, description=(
        "what each probe did when the entry ran: name, covered, ran, failures, notes, not_run"))
    accepted: list[AuditFinding] = Field(default_factory=list, description=(
        "findings disputed in the task sidecar ([audit] accept), with the reason; not counted"))
    runtime: dict[str, Any] = Field({}, description="the worker that ran the user code: device, versions, and "
                                    "`sandbox`, what confined it (references/sandbox.md)")
    robustness: list[RobustnessFinding] = Field(default_factory=list, description=(
        "probe failures on inputs outside the contract (a strided weight, a transposed view, an empty batch, odd "
        "sizes where the example's are even, TF32 dots): named with the input (case), the fix, the reproducer and "
        "the contract assumed; never P0/P1 (the same tiers as run_validation's robustness)"))
    contract: list[str] = Field(default_factory=list, description=(
        "the contract the audit judged against, line by line: stated ([audit] require/assume, the harness's "
        "CONTRACT), read from the file's wrappers and call sites, or the tool's defaults"))
    validation: dict[str, Any] | None = Field(None, description=(
        "run_validation's verdict on this file when its task reference judged it (reference=, or the reference.py "
        "beside it): verdict, ok, reproduce (the validate command), seconds. Its contract failures are the audit's "
        "P0s, in its words; None when no task reference ran"))


class DocsReport(_Open):
    """fetch_triton_docs's result."""

    cache_dir: str
    files: list[str] = []
    source: str = ""
    triton_version_docs: str | None = None
    triton_version_installed: str | None = None
    warnings: list[str] = []
    sections: list[dict[str, Any]] = []
    truncated: bool = False
    summary: str = ""
    pages_cached_files: Any = Field(None, description="how many per-page files the cache holds besides `files`")


class SuiteRow(_Open):
    """One (problem, candidate) of a suite: our verdict, KernelBench's plain criterion, the timings."""

    problem: str
    candidate: str
    key: str = Field(description="content hash of reference + candidate (+ settings): the resume key")
    verdict: Literal["pass", "fail", "error", "no candidate", "not run"]
    failing_check: str | None = Field(None, description="the first failing check (fix it first), e.g. 'mismatch'")
    failing_checks: list[str] = Field([], description="every failing check, in the order to fix them")
    robustness: list[str] = Field([], description="robustness kinds it failed (layouts, empty, nan, extreme): inputs "
                                  "the problem never produces, reported beside the verdict, not counted in fast_p")
    message: str = ""
    kernelbench: Literal["pass", "fail", "n/a", "skipped"] = Field(
        "skipped", description="KernelBench's criterion (5 seeds, torch.allclose at atol=rtol=1e-2) for the same file")
    kernelbench_detail: str = ""
    median_ms: float | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    pct_peak: float | None = Field(None, description="% of this GPU's measured peak (bandwidth or bf16 FLOP/s, "
                                   "whichever is higher)")
    peak_mem_mb: float | None = Field(None, description="GPU memory: the candidate's own call when timed, else the "
                                      "largest validation case's peak (harness copies included)")
    timed: bool = False
    device: str = ""
    interpreter: bool = False
    time_s: float = 0.0
    resumed: bool = Field(False, description="taken from the suite's journal, not re-run")
    notes: list[str] = []


class SuiteReport(_Open):
    """run_suite's result: one row per (problem, candidate), fast_p against both baselines, the spread of the work."""

    ok: bool = Field(description="true when every problem ran to a verdict (a failing kernel is still a verdict)")
    name: str
    directory: str
    layout: str
    problems: int
    rows: list[SuiteRow]
    counts: dict[str, int] = {}
    fast_p: dict[str, dict[str, float | None]] = Field(
        {}, description="{'eager': {'0': share, '1': ..., '1.5': ..., '2': ...}, 'torch.compile': {...}}: share of "
        "problems whose best validated candidate is more than p times faster (p = 0: validated at all)")
    kernelbench_fast_0: float | None = Field(None, description="share of problems with a candidate passing "
                                             "KernelBench's criterion alone")
    caught_by_stricter_checks: list[str] = Field([], description="candidates KernelBench's criterion passes and our "
                                                 "validation fails")
    spread: dict[str, Any] = Field({}, description="how the work was spread over the workers (devices, per device)")
    interpreter: bool = False
    journal: str = ""
    results_file: str | None = None
    markdown_file: str | None = None
    plot: str | None = None
    markdown: str = ""
    notes: list[str] = []
    summary: str = ""
    runtime: dict[str, Any] = Field({}, description="the worker that ran the user code: device, versions, and "
                                    "`sandbox`, what confined it (references/sandbox.md)")
