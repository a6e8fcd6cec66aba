"""run_validation on a labelled corpus of correct kernels, deliberately buggy ones and reward-hacking cheats.

tests/validation_corpus/<task>/reference.py is a small task; every other .py next to it is a candidate,
labelled in tests/validation_corpus/labels.json (semantics in tests/validation_corpus/harness.py).
Every buggy candidate must fail with the expected check, every correct one must pass. Under Triton's
CPU interpreter the GPU-only entries (a race between programs, a side stream) are skipped with their
reason; on a CUDA machine they run too.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from conftest import HAS_CUDA, corpus_sample

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("validation_corpus_harness", ROOT / "tests/validation_corpus/harness.py")
harness = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = harness
_spec.loader.exec_module(harness)

LABELS = harness.load_labels()
TRIALS = 1  # the stale-result check runs on trial 0; more trials only repeat the cases
# The default command's sample: a correct kernel and a bug of each family of checks (wrong values, a stale result,
# a patched timer, PyTorch doing the work); the corpus command runs all forty-one.
SAMPLE = ["elementwise/good.py", "elementwise/off_by_one.py", "elementwise/stale_cache_data_ptr.py",
          "elementwise/patch_timer.py", "softmax/pytorch_with_dummy_kernel.py"]


@pytest.fixture(scope="module")
def corpus():
    """Lazily validated corpus entries, one warm worker of our own (cheats leave threads behind)."""
    from pytorch_to_triton.service import Service

    svc = Service(ROOT)
    results: dict[str, object] = {}

    def get(key: str):
        if key not in results:
            results[key] = harness.run_one(svc, key, LABELS[key], has_cuda=HAS_CUDA, trials=TRIALS)
        return results[key]

    yield get
    svc.close()


@pytest.mark.parametrize("key", corpus_sample(list(LABELS), SAMPLE, ids=str))
def test_corpus_entry(corpus, key: str) -> None:
    out = corpus(key)
    if not out.ran:
        pytest.skip(out.skip_reason)
    assert out.good, out.explain()


@pytest.mark.corpus
def test_corpus_catch_rate_and_false_failures(corpus) -> None:
    outcomes = [corpus(key) for key in LABELS]
    s = harness.score(outcomes)
    assert s["buggy_total"] >= 20 and s["correct_total"] >= 8
    assert s["catch_rate"] == 1.0, f"missed {s['missed']}, failed with another check {s['failed_with_other_check']}"
    assert s["false_failure_rate"] == 0.0, f"false failures: {s['false_failures']}"
    if not HAS_CUDA:
        assert set(s["skipped"]) == {k for k, lab in LABELS.items() if lab.get("gpu_only")}


def test_labels_cover_every_candidate() -> None:
    files = {str(p.relative_to(harness.CORPUS)) for p in harness.CORPUS.glob("*/*.py") if p.name != "reference.py"}
    assert files == set(LABELS), files ^ set(LABELS)
    for key, lab in LABELS.items():
        assert lab["expect"] in ("pass", "fail"), key
        if lab["expect"] == "fail":
            assert lab.get("checks") or lab.get("checks_any"), key
            assert lab.get("bug"), key
        if lab.get("gpu_only"):
            assert lab.get("reason"), key


# Long end-to-end run (over a minute on 2 cores): the corpus command; strict over the corpus's layout-only bugs; the
# default command checks strict on a fixture (tests/test_cases.py: relu_maximum).
@pytest.mark.corpus
def test_strict_fails_the_robustness_labels(corpus) -> None:
    """A layout-only bug passes the contract with its robustness kind named, and strict=true fails it with the
    labelled check (issue 25: robustness is reported beside the verdict, and counts when asked for)."""
    from pytorch_to_triton.service import Service

    keys = [k for k, lab in LABELS.items() if lab.get("strict") == "fail"]
    assert keys
    svc = Service(ROOT)
    try:
        for key in keys:
            assert corpus(key).verdict == "pass", corpus(key).explain()
            ref = f"tests/validation_corpus/{harness.task_of(key)}/reference.py"
            rep = svc.validate(reference=ref, candidates=[f"tests/validation_corpus/{key}"], trials=1, strict=True)
            got = {f.check for f in rep.candidates[0].findings if f.severity == "fail"}
            assert not rep.ok and set(LABELS[key]["checks"]) <= got, (key, got, rep.summary)
    finally:
        svc.close()
