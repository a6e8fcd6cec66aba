"""Memory discipline: chunked comparison, refusal of cases that cannot fit, per-case peaks, truthful verdicts."""

from __future__ import annotations

import math
import os
import re
import shutil
from pathlib import Path

import pytest

from pytorch_to_triton.errors import UsageError

FIX = Path(__file__).parent / "memory_fixtures"
TASKS = Path(__file__).parent / "tasks"


def _ws(tmp_path: Path) -> Path:
    for f in FIX.glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(TASKS / "add_reference.py", tmp_path / "add_reference.py")
    shutil.copy(TASKS / "add_stage1.py", tmp_path / "add_stage1.py")
    return tmp_path


@pytest.fixture(scope="module")
def mem_service(tmp_path_factory: pytest.TempPathFactory):
    """One worker (no spare: this module's faults never kill it) over a workspace holding the fixtures."""
    from pytorch_to_triton.service import Service
    from pytorch_to_triton.worker_client import Limits

    svc = Service(_ws(tmp_path_factory.mktemp("memory_ws")), limits=Limits(spare=False))
    yield svc
    svc.close()


# ---- compare.py: slices give the same numbers as one pass -------------------------------------------------

def _planted(seed: int = 1):
    import torch

    g = torch.Generator().manual_seed(seed)
    ref = torch.randn(3, 1000, 37, generator=g)
    out = ref + 1e-6 * torch.randn(ref.shape, generator=g)
    flat, rflat = out.view(-1), ref.view(-1)
    for i, delta in [(5, 1.0), (12345, -3.0), (50, 0.5), (110000, 2.0), (77777, 0.01)]:
        flat[i] += delta  # planted mismatches of distinct sizes: the worst order is unambiguous
    flat[70000], flat[99999] = float("nan"), float("inf")  # non-finite where the reference is finite
    rflat[200] = flat[200] = float("inf")  # agreeing infinities and NaNs are not errors
    rflat[300] = flat[300] = float("nan")
    return out, ref


@pytest.mark.parametrize("chunk", [4096, 65536, 110999])
def test_chunked_compare_matches_one_pass(chunk: int) -> None:
    from pytorch_to_triton.worker.validation import compare as cmp

    out, ref = _planted()
    whole = cmp.compare(out, ref.double(), 1e-4, 1e-4)  # n < CHUNK_ELEMS: a single slice, today's computation
    part = cmp.compare(out, ref.double(), 1e-4, 1e-4, chunk=chunk)
    assert whole["mismatches"] == 7 and whole["nonfinite"] == 2 and not whole["ok"]
    for key in ("numel", "max_abs_err", "max_rel_err", "mismatches", "nonfinite", "ok", "worst", "first_bad_index"):
        assert part[key] == whole[key], key
    assert math.isclose(part["rel_l2_err"], whole["rel_l2_err"], rel_tol=1e-9)
    assert whole["first_bad_index"] == [0, 0, 5]


def test_chunked_helpers_match_one_pass() -> None:
    import torch

    from pytorch_to_triton.worker.validation import compare as cmp

    a, _ = _planted()
    b = a.clone()
    b.view(-1)[[3, 40000, 99998]] = -7777.0  # run B's poison where A holds NaN -> unwritten
    a.view(-1)[[3, 40000, 99998]] = float("nan")
    for chunk in (None, 13, 4096):
        assert cmp.unwritten(a, b, math.nan, -7777.0, chunk=chunk) == (3, 3)
        assert cmp.same_bits(a, a.clone(), chunk=chunk) and not cmp.same_bits(a, b, chunk=chunk)
        same, worst = cmp.same_within_rounding(a, b, chunk=chunk)
        assert not same and worst == math.inf
    ints = torch.arange(10_000, dtype=torch.int32)
    assert cmp.fingerprint(ints, chunk=97) == cmp.fingerprint(ints.clone(), chunk=None)
    swapped = ints.clone()
    swapped[[1, 2]] = swapped[[2, 1]]  # same sum, other order: the position weights tell them apart
    assert cmp.fingerprint(swapped) != cmp.fingerprint(ints)


# ---- refusal before anything is allocated ----------------------------------------------------------------

def test_huge_kernelbench_case_is_refused_with_the_estimate(tmp_path: Path) -> None:
    """get_inputs() at 2**40 elements: refused from fake tensors (no TypeError on case.shape None, no allocation)."""
    os.environ.setdefault("TRITON_INTERPRET", "1")
    import torch

    from pytorch_to_triton.worker.device.runtime import setup
    from pytorch_to_triton.worker.validation import memory
    from pytorch_to_triton.worker.validation.guards import PatchWatch
    from pytorch_to_triton.worker.validation.loader import load_task
    from pytorch_to_triton.worker.validation.tasks import TaskError
    from pytorch_to_triton.worker.validation.validate import Validator

    ws = _ws(tmp_path)
    rt = setup()
    args = {"workspace": str(ws), "reference": str(ws / "kb_huge_reference.py"),
            "candidate": str(ws / "kb_relu_candidate.py"), "candidate_display": "kb_relu_candidate.py"}
    v = Validator(args, rt, lambda *a, **k: None, PatchWatch())
    task = load_task(v.ref_path, v.cand_path, None, None, rt.device)
    if task.kb is not None:  # the models are built for the case's sizes first, as validate_candidate does
        task.kb.prepare(task, {}, torch.float32)
    rss0 = memory._rss_self()
    with pytest.raises(TaskError) as exc:
        v.run_case(task, "kernelbench", {} if task.kb is not None else None, torch.float32, 1.0, 0)
    assert exc.value.usage
    msg = str(exc.value)
    assert re.search(r"case kernelbench \(get_inputs\(\) at the module's sizes\) needs about [\d.]+ GiB \(inputs "
                     r"4096\.00 GiB, outputs 4096\.00 GiB;.* but [\d.]+ GiB of host memory.* are free; shrink the "
                     r"case: pass sizes=\{\.\.\.\}", msg), msg
    assert memory._rss_self() - rss0 < 512 << 20  # nothing of the 4 TiB was allocated


def test_small_inputs_huge_outputs_refused_when_the_case_ran_before_its_estimate(tmp_path: Path, monkeypatch) -> None:
    """A worker's first request runs a small-input case before its estimate (no torch._dynamo yet, validate.py):
    an outer product of 64 TiB then runs out of memory in the reference and is refused with the fake estimate."""
    os.environ.setdefault("TRITON_INTERPRET", "1")
    import torch

    from pytorch_to_triton.worker.device.runtime import setup
    from pytorch_to_triton.worker.validation import memory, validate
    from pytorch_to_triton.worker.validation.guards import PatchWatch
    from pytorch_to_triton.worker.validation.loader import load_task
    from pytorch_to_triton.worker.validation.tasks import TaskError

    monkeypatch.setattr(memory, "dynamo_loaded", lambda: False)  # as in a fresh worker
    monkeypatch.setattr(validate, "_ESTIMATES", {})
    deferred: list[bool] = []
    orig = validate.Validator._can_defer
    monkeypatch.setattr(validate.Validator, "_can_defer", lambda *a: deferred.append(orig(*a)) or deferred[-1])
    ws = _ws(tmp_path)
    rt = setup()
    args = {"workspace": str(ws), "reference": str(ws / "outer_huge_reference.py"),
            "candidate": str(ws / "add_stage1.py"), "candidate_display": "add_stage1.py"}
    v = validate.Validator(args, rt, lambda *a, **k: None, PatchWatch())
    task = load_task(v.ref_path, v.cand_path, None, None, rt.device)
    with pytest.raises(TaskError) as exc:
        v.run_case(task, "big", (1 << 22,), torch.float32, 1.0, 0)
    assert deferred == [True]  # it did run before its estimate
    assert exc.value.usage
    assert re.search(r"case big \[4194304\] needs about [\d.]+ GiB \(inputs 0\.03 GiB, outputs 65536\.00 GiB;.* "
                     r"are free; shrink the case", str(exc.value)), str(exc.value)


def test_huge_case_through_the_service_is_a_usage_error(mem_service) -> None:
    with pytest.raises(UsageError, match=r"case huge \[1099511627776\] needs about [\d.]+ GiB \(inputs 8192\.00 GiB, "
                                         r"outputs 4096\.00 GiB.* are free; shrink the case"):
        mem_service.validate(reference="add_reference.py", candidates=["add_stage1.py"], trials=1,
                             cases=[{"name": "huge", "shape": [1 << 40]}], only_cases=["huge"])
    rep = mem_service.validate(reference="add_reference.py", candidates=["add_stage1.py"], trials=1)
    assert rep.ok, rep.summary


def test_harness_oom_is_a_usage_error_naming_the_case(mem_service) -> None:
    with pytest.raises(UsageError, match=r"case small \(float32\) ran out of host memory.* in the harness itself "
                                         r"\(the reference.*not the candidate\).* shrink the case"):
        mem_service.validate(reference="oom_reference.py", candidates=["add_stage1.py"], trials=1)


# ---- per-case memory, candidate OOM, the next call --------------------------------------------------------

def test_case_records_carry_peak_and_io_bytes_and_candidate_oom_is_its_own(mem_service) -> None:
    rep = mem_service.validate(reference="add_reference.py", candidates=["add_stage1.py"], trials=1)
    assert rep.ok, rep.summary
    by = {c.name: c for c in rep.candidates[0].cases}
    assert by["small"].io_bytes == 3 * 1000 * 4  # two fp32 inputs + one fp32 output
    assert by["edge_empty"].io_bytes == 0
    for c in rep.candidates[0].cases:
        assert c.peak_mem_bytes is None or c.peak_mem_bytes >= 0
        assert c.peak_mem_source
    assert rep.candidates[0].worker_memory is not None
    bad = mem_service.validate(reference="add_reference.py", candidates=["oom_candidate.py"], trials=1)
    f = bad.candidates[0].findings[0]
    assert f.check == "exception" and "can't allocate memory" in f.message
    assert "the candidate asked for more than" in f.message and bad.first_fix.startswith("oom_candidate.py")
    again = mem_service.validate(reference="add_reference.py", candidates=["add_stage1.py"], trials=1)
    assert again.ok, again.summary  # no call fails because of an earlier one


def test_kernelbench_small_case_passes_with_memory_fields(mem_service) -> None:
    rep = mem_service.validate(reference="kb_relu_reference.py", candidates=["kb_relu_candidate.py"], trials=1)
    assert rep.ok, rep.summary
    full = [c for c in rep.candidates[0].cases if c.io_bytes]
    # cases that built their own inputs were estimated first (layout variants get theirs handed in)
    assert full and all(c.mem_estimate_bytes for c in full if ":" not in c.name)


# ---- verdicts tell where they ran -------------------------------------------------------------------------

# The corpus command: a worker killed mid-call on a GPU-named slot (about a minute on 2 cores); the default command
# keeps the memory refusals and records.
@pytest.mark.corpus
def test_dead_worker_verdict_uses_the_slot_then_what_the_worker_reported(tmp_path: Path) -> None:
    from pytorch_to_triton.service import Service

    _ws(tmp_path)
    from pytorch_to_triton.worker_client import Limits

    # A slot named cuda:0 (on a machine without a GPU its worker runs the interpreter); the spare makes the
    # restart after the crash cheap.
    svc = Service(tmp_path, device="0", limits=Limits(spare=True))
    try:
        # The worker dies loading the candidate, before any case (a crash inside a case is resumed in a fresh
        # worker since h25b, and that worker answers): nothing was reported, so where it ran comes from the slot.
        rep = svc.validate(reference="add_reference.py", candidates=["crash_at_import_candidate.py"], trials=1)
        assert not rep.ok and rep.verdict == "fail" and rep.device == "cuda:0" and not rep.interpreter
        assert "interpreter" not in rep.summary and "on cuda:0" in rep.summary
        assert rep.candidates[0].error["device"] == "cuda:0"
        good = svc.validate(reference="add_reference.py", candidates=["add_stage1.py"], trials=1)
        assert good.ok and good.interpreter == (good.runtime.get("device") == "cpu")
        # a GPU slot whose worker found no CUDA (a fake cuda slot here) warns, and the call still passes
        assert good.interpreter == bool(good.runtime.get("gpu_missing")) == good.summary.startswith("WARNING: ")
        rep2 = svc.validate(reference="add_reference.py", candidates=["crash_at_import_candidate.py"], trials=1)
        # now the slot knows what its worker reported: the interpreter here, on a GPU host a GPU
        assert rep2.interpreter == good.interpreter
        assert ("(Triton interpreter on CPU)" in rep2.verdict) == good.interpreter
        # a crash inside a case: the cases after it ran in a fresh worker, whose report the verdict uses
        rep3 = svc.validate(reference="add_reference.py", candidates=["crash_candidate.py"], trials=1)
        assert not rep3.ok and rep3.device == "cuda:0" and rep3.interpreter == good.interpreter
        assert rep3.candidates[0].error["device"] == "cuda:0" and rep3.candidates[0].error["case"]
    finally:
        svc.close()


def test_benchmark_row_error_makes_the_report_not_ok() -> None:
    from pytorch_to_triton.worker.benchmark.bench import _verdict, report_ok

    def row(impl: str, ok: bool = True, error: str | None = None) -> dict:
        return {"impl": impl, "case": "kernelbench", "ok": ok, "median_ms": 1.0, "error": error, "repeats_ms": [1.0]}

    good = [row("eager"), row("torch.compile"), row("cand.py")]
    assert report_ok(good)
    oom = [row("eager"), row("torch.compile"), row("cand.py", ok=True, error="out of GPU memory: Tried 12 GiB")]
    assert not report_ok(oom)  # an error with ok still true (the old bug) is not ok
    assert "cand.py [kernelbench]: out of GPU memory" in _verdict(oom)
    base = [row("eager", ok=False, error="RuntimeError: boom"), row("cand.py")]
    assert not report_ok(base) and "eager [kernelbench]: RuntimeError: boom" in _verdict(base)
    assert not report_ok([])


def test_client_replaces_a_worker_that_keeps_gpu_memory(tmp_path: Path) -> None:
    from pytorch_to_triton.worker_client import MEMORY_SLACK_BYTES, WorkerSlot

    slot = WorkerSlot("cuda:0", None, tmp_path, tmp_path)
    assert not slot._leaked({"baseline": 0, "after": MEMORY_SLACK_BYTES})
    assert not slot._leaked({"baseline": None, "after": None})  # CPU: no counter, nothing to decide
    assert slot._leaked({"baseline": 0, "after": 6 << 30}) and slot.memory_replacements == 1


LEAKY = '''
import collections

import torch
from add_stage1 import reference as _add

# A buffer parked in a library module: it outlives the call (and the candidate's own module).
collections._p2t_test_keep = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")


def reference(x, y):
    return _add(x, y)
'''


@pytest.mark.gpu
def test_gpu_memory_back_to_baseline_or_worker_replaced(mem_service) -> None:
    (mem_service.ws.root / "leaky.py").write_text(LEAKY)
    rep = mem_service.validate(reference="add_reference.py", candidates=["add_stage1.py"], trials=1)
    mem = rep.candidates[0].worker_memory
    assert mem["after"] <= (mem["baseline"] or 0) + (64 << 20), mem
    leak = mem_service.validate(reference="add_reference.py", candidates=["leaky.py"], trials=1)
    assert leak.candidates[0].worker_memory.get("replaced") is True
    again = mem_service.validate(reference="add_reference.py", candidates=["add_stage1.py"], trials=1)
    assert again.ok and again.candidates[0].worker_memory["after"] <= 64 << 20


@pytest.mark.gpu
def test_cuda_bytes_matches_the_public_counters() -> None:
    # memory.cuda_bytes reads torch's nested allocator statistics once; it must agree with the public calls.
    import torch

    from pytorch_to_triton.worker.validation import memory

    t = torch.empty(3 << 20, dtype=torch.uint8, device="cuda")
    torch.cuda.reset_peak_memory_stats()
    u = torch.empty(5 << 20, dtype=torch.uint8, device="cuda")
    del u
    got = memory.cuda_bytes()
    assert got == (torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated(), torch.cuda.memory_reserved())
    assert got[1] - got[0] >= 5 << 20, "the peak must include the freed 5 MiB tensor"
    del t
