"""Pydantic models: what the tools return (the MCP output schemas) and what they accept."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    # Worker records may carry extra diagnostic keys; keep them rather than fail the call.
    model_config = ConfigDict(extra="allow")


class CaseSpec(BaseModel):
    """A user-supplied validation or benchmark case."""

    name: str | None = Field(None, description="case name, e.g. 'big_rows'")
    shape: list[int] | dict[str, int] = Field(description="the case's shape as make_inputs expects it, e.g. [4096, 1000]")
    dtype: str | None = Field(None, description="dtype for this case only, e.g. 'bfloat16'")
    scale: float = Field(1.0, description="magnitude of random values (e.g. 1e4 to test overflow)")


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


class CandidateReport(_Open):
    """All cases of one candidate file."""

    candidate: str
    ok: bool
    cases: list[CaseResult] = []
    findings: list[Finding] = []
    notes: list[str] = []
    error: dict[str, Any] | None = None
    time_s: float | None = None


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


class BenchmarkReport(_Open):
    """run_benchmark's result."""

    ok: bool
    verdict: str
    device: str
    reference: str
    timings: list[Timing] = []
    peaks: dict[str, Any] = {}
    environment: dict[str, Any] = {}
    notes: list[str] = []
    plot: str | None = None
    results_file: str | None = None
    reproduce: str = ""
    summary: str = ""


class AuditResult(_Open):
    """audit_kernel's result: the static report plus compiled analysis when a GPU ran it."""

    file: str
    verdict: str
    counts: dict[str, Any] = {}
    findings: list[dict[str, Any]] = []
    checked: list[str] = []
    not_checked: list[str] = []
    compiled: list[dict[str, Any]] = []
    markdown: str = ""
    summary: str = ""


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
