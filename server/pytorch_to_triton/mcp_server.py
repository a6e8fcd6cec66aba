"""The MCP server (stdio): four thin tools over service.py, plus resources and prompts.

Never print to stdout here: it is the protocol channel. Logs go to stderr and to the client.
"""

from __future__ import annotations

import base64
import logging
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources import FileResource, FunctionResource
from mcp_types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import Field

from . import __version__
from .errors import P2TError
from .schemas import AuditResult, BenchmarkReport, CaseSpec, DocsReport, SuiteReport, Tolerance, ValidationReport
from .service import Service
from .skill_files import references_dir

log = logging.getLogger("pytorch_to_triton")
T = TypeVar("T")

INSTRUCTIONS = (
    "Turns PyTorch code into validated, benchmarked Triton kernels and audits Triton kernels. Workflow (SKILL.md): "
    "fetch_triton_docs -> write reference.py (task format: resource p2t://references/task-format.md) -> stage1.py -> "
    "run_validation -> stage2.py -> run_validation + run_benchmark -> stage3.py -> run_validation + run_benchmark "
    "vs torch.compile -> audit_kernel. Paths are relative to the server's workspace."
)


async def _run(ctx: Context, fn: Callable[..., T], **kwargs: Any) -> T:
    """Run a blocking service call in a thread, forwarding progress; cancel kills the worker."""
    cancel = threading.Event()

    def on_event(message: str, progress: float | None, total: float | None) -> None:
        try:
            anyio.from_thread.run(ctx.report_progress, float(progress or 0), total, message)
        except Exception:  # noqa: BLE001 - a client that went away must not break the run
            pass

    try:
        return await anyio.to_thread.run_sync(lambda: fn(on_event=on_event, cancel=cancel, **kwargs),
                                              abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        cancel.set()
        raise
    except P2TError as e:
        raise ToolError(str(e)) from e
    except Exception as e:  # noqa: BLE001 - a bug of ours must still answer the call, not kill the server
        log.exception("internal error in %s", getattr(fn, "__name__", "tool"))
        raise ToolError(f"internal error ({type(e).__name__}: {e}); the server is still running. Please report this "
                        "with the call's arguments") from e


def _result(model: Any, summary: str, image: str | None = None) -> CallToolResult:
    content: list[Any] = [TextContent(type="text", text=summary)]
    if image and Path(image).is_file():
        content.append(ImageContent(type="image", data=base64.b64encode(Path(image).read_bytes()).decode(),
                                    mime_type="image/png"))
    return CallToolResult(content=content, structured_content=model.model_dump(mode="json"))


def build_server(service: Service) -> MCPServer:
    """The MCP server bound to one Service (one workspace, one worker pool)."""
    server = MCPServer("pytorch-to-triton", instructions=INSTRUCTIONS, version=__version__)

    @server.tool(
        name="fetch_triton_docs",
        title="Fetch and search Triton docs",
        annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True, open_world_hint=True,
                                    destructive_hint=False),
    )
    async def fetch_triton_docs(
        ctx: Context,
        topic: Annotated[str | None, Field(description="what to look up, e.g. 'tl.dot', 'autotune', 'atomic_add', "
                                           "'associative_scan'; omit to only make sure the cache is filled")] = None,
        refresh: Annotated[bool, Field(description="re-fetch even if the cache is fresh")] = False,
        offline: Annotated[bool, Field(description="never touch the network: use the cache, else build the "
                                       "language reference from the installed triton package")] = False,
        cache_dir: Annotated[str, Field(description="cache directory, relative to the workspace")] = "docs/.triton_docs",
        max_chars: Annotated[int, Field(ge=200, le=200_000, description="size budget of the returned sections")] = 12000,
    ) -> Annotated[CallToolResult, DocsReport]:
        """Make sure docs/.triton_docs holds Triton's language reference, tutorials and our best-practices guide
        (fetched over the network, or built from the installed triton when offline), then return only the sections
        matching `topic`. Call this before writing a kernel and whenever you need an API's exact signature."""
        rep = await _run(ctx, _no_cancel(service.docs), topic=topic, refresh=refresh, offline=offline,
                         cache_dir=cache_dir, max_chars=max_chars)
        return _result(rep, rep.summary or f"docs cache at {rep.cache_dir}")

    @server.tool(
        name="run_validation",
        title="Validate Triton candidates against the PyTorch reference",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False,
                                    destructive_hint=False),
    )
    async def run_validation(
        ctx: Context,
        reference: Annotated[str | None, Field(description="path of reference.py (task format: make_inputs(case) + "
                                               "reference(...), or KernelBench's Model/get_inputs)")] = None,
        candidates: Annotated[list[str] | None, Field(description="candidate files to check, e.g. ['stage1.py']")] = None,
        reference_code: Annotated[str | None, Field(description="reference source inline instead of a path")] = None,
        candidate_code: Annotated[str | None, Field(description="one candidate's source inline")] = None,
        reference_entry: Annotated[str | None, Field(description="reference function name if not 'reference'")] = None,
        candidate_entry: Annotated[str | None, Field(description="candidate function name if not the reference's "
                                                     "name or 'candidate'")] = None,
        dtypes: Annotated[list[str] | None, Field(description="dtypes to check, e.g. ['float32','bfloat16']; default "
                                                  "the reference's DTYPES")] = None,
        cases: Annotated[list[CaseSpec] | None, Field(description="extra cases (or replacements with replace_cases); "
                                                      "KernelBench: named size overrides, e.g. [{'name': 'odd', "
                                                      "'sizes': {'batch_size': 7}}]")] = None,
        replace_cases: Annotated[bool, Field(description="run only `cases`, not the reference's SHAPES")] = False,
        only_cases: Annotated[list[str] | None, Field(description="run only these case names (e.g. the failing "
                                                      "one)")] = None,
        trials: Annotated[int, Field(ge=1, le=20, description="seeded trials per case")] = 3,
        seed: Annotated[int, Field(description="base seed; the report prints each case's seed")] = 0,
        tolerances: Annotated[dict[str, Tolerance | Literal["tf32"]] | None,
                              Field(description="per-dtype overrides, e.g. {'bfloat16': {'rtol': 2e-2, 'atol': 2e-2}} "
                                    "or {'float32': 'tf32'} for fp32 tl.dot")] = None,
        gradients: Annotated[bool, Field(description="also compare input gradients (autograd.Function candidates)")] = False,
        large_offsets: Annotated[bool, Field(description="add a case past 2**31 elements (GPU, if memory allows)")] = False,
        sizes: Annotated[dict[str, int] | None, Field(description="KernelBench references: override the problem's "
                                                      "module-level sizes, e.g. {'batch_size': 7, 'dim': 1000}, for the main "
                                                      "case (no-GPU shrinking leaves them alone; odd/small/1/0 "
                                                      "variants still vary them); a case's `sizes` go on top")] = None,
        strict: Annotated[bool, Field(description="make robustness part of the verdict: non-contiguous layouts, "
                                      "empty dims, NaN/inf and extreme values then fail it. Yes for a library "
                                      "kernel called from unknown code; no for a model's hot path with known "
                                      "inputs (the default reports them beside the verdict)")] = False,
        target_gpus: Annotated[list[str] | None, Field(description="without a GPU: the GPUs every launched kernel is "
                                                       "compiled for (each autotune config), e.g. ['sm_90', 'sm_100'] "
                                                       "or ['H100']; default sm_90 or the sidecar's target_gpus; "
                                                       "['none'] skips it")] = None,
        timeout_s: Annotated[float, Field(ge=1, le=3600, description="wall-clock limit per candidate")] = 600,
        budget_s: Annotated[float | None, Field(ge=0, le=3600, description="no GPU: seconds the interpreter's "
                                                "cases may take (default 120; the sidecar's budget = ...); cases "
                                                "predicted not to fit are left out and named; 0 = no budget")] = None,
        device: Annotated[str | None, Field(description="worker device, e.g. 'cuda:1'; default any idle one")] = None,
    ) -> Annotated[CallToolResult, ValidationReport]:
        """The stage gate: run each candidate and the reference on every case (standard, odd sizes, empty, single,
        non-contiguous, each dtype) over seeded trials; compare against a float64 reference with per-dtype
        tolerances; poison outputs, run twice, and apply honesty checks. ok is decided by the problem's own inputs
        (contract cases); failures on inputs it never produces (layouts, empty dims, NaN/inf) are listed under
        `robustness` with their fix, and fail it only with strict=true. A failing kernel returns ok=false with
        named findings and `first_fix`; fix that first and call again."""
        rep = await _run(ctx, service.validate, reference=reference, candidates=candidates,
                         reference_code=reference_code, candidate_code=candidate_code, reference_entry=reference_entry,
                         candidate_entry=candidate_entry, dtypes=dtypes, cases=cases, replace_cases=replace_cases,
                         only_cases=only_cases, trials=trials, seed=seed, tolerances=tolerances, gradients=gradients,
                         large_offsets=large_offsets, sizes=sizes, strict=strict, target_gpus=target_gpus,
                         timeout_s=timeout_s, budget_s=budget_s, device=device)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # logging is deprecated in 2026-07 MCP, still read by older clients
            await ctx.info(rep.summary.splitlines()[0])
        return _result(rep, rep.summary)

    @server.tool(
        name="run_benchmark",
        title="Benchmark Triton candidates vs eager and torch.compile",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False,
                                    destructive_hint=False),
    )
    async def run_benchmark(
        ctx: Context,
        reference: Annotated[str | None, Field(description="path of reference.py")] = None,
        candidates: Annotated[list[str] | None, Field(description="candidate files, e.g. ['stage1.py','stage2.py']")] = None,
        reference_code: Annotated[str | None, Field(description="reference source inline")] = None,
        candidate_code: Annotated[str | None, Field(description="one candidate's source inline")] = None,
        reference_entry: Annotated[str | None, Field(description="reference function name")] = None,
        candidate_entry: Annotated[str | None, Field(description="candidate function name")] = None,
        cases: Annotated[list[CaseSpec] | None, Field(description="shapes to time; default BENCH_SHAPES, else the "
                                                      "'large' case")] = None,
        sweep: Annotated[dict[str, Any] | None, Field(description="size sweep, e.g. {'param': 'N', 'values': [256, "
                                                      "1024, 4096], 'shape': [4096, 'N']}; returns a plot")] = None,
        dtype: Annotated[str | None, Field(description="dtype to time; default the reference's first DTYPES")] = None,
        compile: Annotated[Literal["default", "max-autotune", "reduce-overhead", "none"],
                           Field(description="torch.compile mode of the reference baseline")] = "default",
        cuda_graph: Annotated[bool, Field(description="time with CUDA graphs (tiny kernels, launch-bound)")] = False,
        repeats: Annotated[int, Field(ge=1, le=20, description="independent repetitions, for the spread")] = 3,
        sizes: Annotated[dict[str, int] | None, Field(description="KernelBench references: time at these module-level "
                                                      "sizes instead of the problem's own, e.g. {'batch_size': 7}")] = None,
        strict: Annotated[bool, Field(description="as run_validation's strict (the pre-timing output check "
                                      "runs the problem's own inputs)")] = False,
        timeout_s: Annotated[float, Field(ge=1, le=3600, description="wall-clock limit")] = 600,
        device: Annotated[str | None, Field(description="GPU to use, e.g. 'cuda:0'")] = None,
        gpu: Annotated[str | None, Field(description="no GPU here: the GPU the roofline ESTIMATE divides by, e.g. "
                                         "'H200', 'H100', 'A100', 'L4', 'RTX 4090' (default H200)")] = None,
        explain: Annotated[bool, Field(description="also list torch.compile's kernels for the reference: each one's "
                                       "time (GPU), what it fused, cuDNN/cuBLAS calls, channels-last, templates, and "
                                       "the plan stage 3 must beat (`explain`); costs one more compile")] = False,
    ) -> Annotated[CallToolResult, BenchmarkReport]:
        """Re-validate then time each candidate with triton.testing.do_bench (median, min, p20, p80; L2 flushed)
        against eager PyTorch and torch.compile of the reference; reports GB/s, TFLOP/s and % of this GPU's measured
        peaks, speedups with significance, peak memory, autotune choices. Without a GPU: a roofline ESTIMATE per
        candidate instead (bytes and tl.dot FLOPs counted under the interpreter, scaled to full size, divided by
        `gpu`'s datasheet peaks): it ranks stages by traffic and work, it is not their time."""
        rep = await _run(ctx, service.benchmark, reference=reference, candidates=candidates,
                         reference_code=reference_code, candidate_code=candidate_code, reference_entry=reference_entry,
                         candidate_entry=candidate_entry, cases=cases, sweep=sweep, dtype=dtype, compile=compile,
                         cuda_graph=cuda_graph, repeats=repeats, sizes=sizes, strict=strict, timeout_s=timeout_s,
                         device=device, gpu=gpu, explain=explain)
        return _result(rep, rep.summary or rep.verdict, rep.plot)

    @server.tool(
        name="audit_kernel",
        title="Audit a Triton kernel",
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False,
                                    destructive_hint=False),
    )
    async def audit_kernel(
        ctx: Context,
        path: Annotated[str | None, Field(description="Triton source file to audit")] = None,
        code: Annotated[str | None, Field(description="source inline instead of a path")] = None,
        compile: Annotated[bool, Field(description="also compile on the GPU for registers, spills, vectorization, "
                                       "wgmma (needs reference); without a GPU, the probes' launches compiled for the "
                                       "target GPU (sm_90 or the sidecar's target_gpus): does not compile, spills, "
                                       "configs over shared memory")] = True,
        reference: Annotated[str | None, Field(description="the task's reference.py: the file is then judged by "
                                                   "run_validation itself (its failing cases are the P0s, as validate "
                                                   "reports them) and the probes add robustness; default: the "
                                                   "reference.py beside the file")] = None,
        timeout_s: Annotated[float, Field(ge=1, le=3600)] = 300,
        harness: Annotated[str | None, Field(description=(
            "the entry's example call: a file with make_inputs(case), ENTRY = '<function of the audited file>' and "
            "AUDIT_SHAPE (references/audit-guide.md 'Probes'); default: the sidecar's [audit] or the task "
            "reference"))] = None,
        probe: Annotated[bool, Field(description="run the entry on inputs that expose the static suspects")] = True,
    ) -> Annotated[CallToolResult, AuditResult]:
        """Five-category review (correctness, performance, memory access, numerical stability, best practices) of a
        Triton file: static suspects from its AST, confirmed by running its entry on inputs that expose them (probes:
        layouts, batch splits, block-boundary and empty sizes, sentinels, magnitudes, defaults); compiled facts on a
        GPU. With a task reference the verdict is run_validation's (one judge: the same P0s as validate). A P0
        carries a failing input and a reproducer; an unconfirmed suspect is P2 'verify:'. Dispute a finding with
        [audit] accept in the task sidecar. Fix P0s first, then re-validate."""
        rep = await _run(ctx, service.audit, path=path, code=code, compile=compile, reference=reference,
                         timeout_s=timeout_s, harness=harness, probe=probe)
        return _result(rep, rep.markdown or rep.summary)

    _register_suite_tool(server, service)
    _register_resources(server, service)
    _register_prompts(server)
    _register_scaffold_prompt(server, service)
    return server


def _register_suite_tool(server: MCPServer, service: Service) -> None:
    from .suite import run_suite as suite_fn

    @server.tool(
        name="run_suite",
        title="Score a whole directory of problems (validation, KernelBench criterion, benchmark)",
        annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True, open_world_hint=False,
                                    destructive_hint=False),
    )
    async def run_suite(
        ctx: Context,
        directory: Annotated[str, Field(description="DIR/<problem>/reference.py with candidate files beside it, or "
                                        "KernelBench level folders (with candidates_dir)")],
        candidates_dir: Annotated[str | None, Field(description="KernelBench layout: folder of ModelNew files named "
                                                    "like the problems (level1/19_ReLU.py)")] = None,
        name: Annotated[str | None, Field(description="suite name; its journal is .pytorch-to-triton/suites/<name>/")]
        = None,
        problems: Annotated[list[str] | None, Field(description="only these problem names")] = None,
        redo: Annotated[bool, Field(description="re-run problems already journaled (default: resume, skip them)")]
        = False,
        timeout_s: Annotated[float, Field(ge=1, le=3600, description="limit per problem candidate (validation + "
                                          "KernelBench criterion + benchmark)")] = 900,
        benchmark: Annotated[bool, Field(description="time validated candidates on a GPU vs eager and "
                                         "torch.compile")] = True,
        kernelbench: Annotated[bool, Field(description="also run KernelBench's plain criterion (5 seeds, allclose "
                                           "1e-2)")] = True,
        trials: Annotated[int, Field(ge=1, le=20, description="validation trials per case")] = 3,
        compile: Annotated[Literal["default", "max-autotune", "reduce-overhead", "none"],
                           Field(description="torch.compile mode of the baseline")] = "default",
        repeats: Annotated[int, Field(ge=1, le=20, description="benchmark repetitions")] = 3,
        sizes: Annotated[dict[str, Any] | None, Field(description="size overrides: one set for all, e.g. "
                                                      "{'batch_size': 7}, or per problem {'gelu': {'dim': 1000}}")]
        = None,
        all_triton: Annotated[bool, Field(description="fail candidates that keep any PyTorch compute (a cuBLAS "
                                          "matmul included); by default a library op beside Triton kernels is "
                                          "disclosed in the composition, not failed")] = False,
        strict: Annotated[bool, Field(description="count robustness (layouts, empty dims, NaN/inf, extreme values) in "
                                      "pass/fast_p; by default it is its own column")] = False,
    ) -> Annotated[CallToolResult, SuiteReport]:
        """Score every candidate of every problem in a directory: run_validation, KernelBench's own criterion beside
        it, and run_benchmark vs eager and torch.compile when it validated (GPU). Resumable: finished problems are
        journaled and skipped on the next call unless redo=true. Returns a markdown table, fast_p for p = 0, 1, 1.5, 2
        against both baselines, and a speedup plot."""
        rep = await _run(ctx, suite_fn, service=service, directory=directory, candidates_dir=candidates_dir,
                         name=name, problems=problems, redo=redo, timeout_s=timeout_s, benchmark=benchmark,
                         kernelbench=kernelbench, trials=trials, compile=compile, repeats=repeats, sizes=sizes,
                         all_triton=all_triton, strict=strict)
        return _result(rep, rep.summary + "\n\n" + rep.markdown, rep.plot)


def _no_cancel(fn: Callable[..., T]) -> Callable[..., T]:
    def call(*, cancel: threading.Event | None = None, **kwargs: Any) -> T:
        return fn(**kwargs)

    return call


def _register_resources(server: MCPServer, service: Service) -> None:
    try:
        refs = sorted(references_dir().glob("*.md"))
    except FileNotFoundError:
        refs = []
    for f in refs:
        server.add_resource(FileResource(uri=f"p2t://references/{f.name}", name=f"references/{f.name}",
                                         description=f"skill reference guide {f.stem}", mime_type="text/markdown",
                                         path=f))
    cache = service.ws.root / "docs" / ".triton_docs"
    for name in ("triton-lang-guide.md", "triton-tutorials.md", "triton-best-practices.md"):

        def read(name: str = name) -> str:
            p = cache / name
            if not p.is_file():
                return f"{name} is not cached yet: call the fetch_triton_docs tool first."
            return p.read_text(encoding="utf-8")

        server.add_resource(FunctionResource(uri=f"p2t://docs/{name}", name=f"docs/{name}", fn=read,
                                             description=f"cached Triton docs: {name}", mime_type="text/markdown"))

    @server.resource("p2t://report/{task}", name="run-journal report", mime_type="text/markdown",
                     description="markdown table of a task's stages (verdict, time, speedups, % of peak)")
    def report(task: str) -> str:
        from . import journal

        return journal.render_report(service.ws.root, task)


def _register_prompts(server: MCPServer) -> None:
    @server.prompt(name="convert-pytorch", title="Convert PyTorch code to Triton")
    def convert(path: str, what: str = "the main operation") -> str:
        """Open the three-stage conversion workflow on a PyTorch file."""
        return (
            f"Convert {what} in {path} to Triton following the pytorch-to-triton skill (SKILL.md). Steps: call "
            "fetch_triton_docs; read the code and record assumptions (shapes, dtypes, device); write reference.py in "
            "the task format (resource p2t://references/task-format.md), or, for a KernelBench file or an nn.Module "
            "class, scaffold the task with the new-task prompt (`pytorch-to-triton new`) and keep that file "
            "unchanged (notes, cases, sizes, tolerances go in reference.p2t.toml); write stage1.py (naive, correct) "
            "and call "
            "run_validation; then stage2.py (basic optimization) with run_validation and run_benchmark against "
            "stage1; then stage3.py (advanced) with run_validation and run_benchmark against torch.compile; finish "
            "with audit_kernel and show the run journal (resource p2t://report/<task>)."
        )

    @server.prompt(name="audit-kernel", title="Audit a Triton kernel")
    def audit(path: str) -> str:
        """Open audit mode on an existing Triton kernel."""
        return (
            f"Audit the Triton kernel in {path} with the audit_kernel tool (checklist: p2t://references/audit-guide.md). "
            "Report the findings by priority (P0 wrong results first), propose the fixes with corrected snippets, and "
            "if a PyTorch reference exists, re-run run_validation and run_benchmark after each fix."
        )


def _register_scaffold_prompt(server: MCPServer, service: Service) -> None:
    @server.prompt(name="new-task", title="Start a task from a KernelBench file or your nn.Module")
    def new_task(source: str, inputs: str = "", init: str = "", dest: str = "") -> str:
        """Scaffold a task folder (reference.py unchanged, reference.p2t.toml, stage1-3.py), then convert it.
        source: a KernelBench file, or path/to/model.py:ClassName with inputs such as "x=float32[batch=8,dim=1024]"."""
        from .scaffold import scaffold

        try:
            made = scaffold(source, dest or None, inputs=inputs or None, init=init or None,
                            root=service.ws.root).summary(service.ws.root)
        except P2TError as e:
            made = f"pytorch-to-triton new {source} did not scaffold: {e}"
        return (
            f"{made}\n\nConvert this task following the pytorch-to-triton skill (SKILL.md). reference.py and the "
            "problem or model file stay unchanged: write your assumptions in the sidecar's notes, extra cases, "
            "size overrides and tolerances (each with a reason) in reference.p2t.toml (resource "
            "p2t://references/task-format.md). Fill stage1.py and call run_validation on it; then stage2.py and "
            "stage3.py, each validated, benchmarked on a GPU (run_benchmark) and audited (audit_kernel); finish "
            "with the run journal (resource p2t://report/<task>)."
        )


def serve(workspace: Path | str = ".", cluster: str | None = None, service: Service | None = None) -> None:
    """Run the stdio server until the client disconnects (on `service` when given: its worker may be running)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    service = service or Service(workspace, cluster=cluster)
    service.pool.prestart()  # no-op when already started: the first call must not wait for torch's import
    try:
        build_server(service).run("stdio")
    finally:
        service.close()
