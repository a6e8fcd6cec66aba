"""Case generation and the two-tier verdict (worker/validation/cases.py, worker/validation/sizes.py, run_validation.py; issue 25).

Every candidate in tests/cases_fixtures/ is correct on its problem's own inputs and must pass; where it is not
robust to inputs the problem never produces, the robustness finding is named, and strict=true fails it. A planted
contract bug still fails with its check."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

FIX = "tests/cases_fixtures"
ROOT = Path(__file__).resolve().parent.parent


def _mod(name: str):
    from pytorch_to_triton.worker.validation.tasks import load_module

    return load_module(ROOT / FIX / name, "ref")


def _cand(rep, name: str):
    return next(c for c in rep.candidates if c.candidate.endswith(name))


def _robust(cand) -> set[tuple[str, str]]:
    return {(r.kind, r.check) for r in cand.robustness}


# ---- sizes that move together, relations kept -------------------------------------------------------------------
def test_linked_sizes_follow_in_every_planned_case() -> None:
    """input_shape = (num_classes,): every case, shrunk or varied, on CPU or planned for a GPU, keeps them equal."""
    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation import sizes as sz

    ce = _mod("ce_reference.py")
    assert set(sz.derived(ce)) == {"input_shape[0]"}
    assert "input_shape[0]" not in sz.varied(sz.size_constants(ce), {}, sz.derived(ce))
    for device in ("cpu", "cuda"):
        p = cs.plan(ce, device, None, None)
        for c in p.cases:
            for s in [c.sizes, *(f.sizes for f in c.fallbacks)]:
                assert s["input_shape[0]"] == s["num_classes"], (device, c.name, s)
    # a user's override of the size it follows moves it too; an explicit override of the derived one stays
    p = cs.plan(ce, "cpu", {"num_classes": 77}, None)
    assert p.main.sizes["input_shape[0]"] == 77 and p.pinned == {"num_classes": 77}
    assert not any("problem's num_classes" in n for n in p.notes)


def test_relations_repair_a_rejected_variant_and_the_host_check_names_it() -> None:
    """seq_len <= max_seqlen and n_head | n_embd hold in the problem; a variant breaking them gets a repaired try,
    and the host check (run before any GPU variant) rejects the broken one without a GPU."""
    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation import sizes as sz
    from pytorch_to_triton.worker.validation.kernelbench import host_rejects

    attn = _mod("attn_reference.py")
    consts = sz.size_constants(attn)
    rels = sz.relations(consts, sz.varied(consts, {}))
    assert ("le", "seq_len", "max_seqlen") in rels or ("div", "seq_len", "max_seqlen") in rels
    assert ("div", "n_head", "n_embd") in rels
    p = cs.plan(attn, "cuda", None, None)
    long = next(c for c in p.cases if c.name == "long_seq_len")
    assert long.sizes["seq_len"] > long.sizes["max_seqlen"]  # as generated: breaks the order
    assert host_rejects(attn, long.sizes, 0)  # rejected on the host, never sent to a GPU
    fixed = long.fallbacks[0]
    assert fixed.sizes["seq_len"] <= fixed.sizes["max_seqlen"] and fixed.sizes["seq_len"] == long.sizes["seq_len"]
    assert host_rejects(attn, fixed.sizes, 0) is None
    odd = next(c for c in p.cases if c.name == "odd")
    assert odd.fallbacks[0].sizes["n_embd"] % odd.fallbacks[0].sizes["n_head"] == 0
    ce = _mod("ce_reference.py")  # inconsistent by hand: targets outside the class range raise on the host
    assert "IndexError" in (host_rejects(ce, {"batch_size": 4, "num_classes": 50, "input_shape[0]": 10}, 0) or "")


def test_an_odd_size_the_reference_refuses_keeps_the_other_sizes_odd() -> None:
    """GroupNorm's groups must divide the channels: the odd variant's first fallback keeps height and width
    odd (issue 40's trial ran odd_batch_size, H and W stayed even, until a sidecar case made them odd)."""
    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation.kernelbench import host_rejects

    mod = _mod("groupnorm_reference.py")
    odd = next(c for c in cs.plan(mod, "cpu", None, None).cases if c.name == "odd")
    assert odd.sizes["channels"] % 2 == 1 and host_rejects(mod, odd.sizes, 0)  # 15 channels, 8 groups: refused
    accepted = next(f for f in odd.fallbacks if host_rejects(mod, f.sizes, 0) is None)
    assert accepted.name == "odd_but_channels", [f.name for f in odd.fallbacks]
    assert accepted.sizes["channels"] % accepted.sizes["num_groups"] == 0
    assert all(accepted.sizes[k] % 2 == 1 for k in ("height", "width")), accepted.sizes


def test_perturbation_moves_trainable_parameters_only() -> None:
    """The causal mask buffer is part of the problem: it stays 0/1; the temperature parameter moves."""
    from pytorch_to_triton.worker.validation import cases as cs

    attn = _mod("attn_reference.py")
    m = attn.Model(32, 4, 16)
    before = m.bias.clone()
    assert cs.perturb(m, 0) == 1 and cs.kept_buffers(m) == 1
    assert torch.equal(m.bias, before) and float(m.temperature) != 1.0


# ---- correct candidates pass; robustness findings named -----------------------------------------------------------
# Long end-to-end run (over a minute on 2 cores): the corpus command; two cases_fixtures problems at their default
# sizes; the tiers stay in the default command through the smaller fixtures (relu_maximum, softmax_rows,
# vecsoftmax_pow2, softmax_no_max).
@pytest.mark.corpus
def test_causal_attention_hardcoding_causality_passes(service) -> None:
    rep = service.validate(reference=f"{FIX}/attn_reference.py", candidates=[f"{FIX}/attn_causal.py"], trials=1)
    cand = rep.candidates[0]
    assert rep.ok, rep.summary
    params = cand.model_extra["kernelbench"]["checks"]["parameters"]
    assert params.startswith("perturbed (1 trainable parameters") and "1 buffer(s) kept" in params, params
    assert not any("rejects the long_seq_len variant; skipped" in n for n in cand.notes), cand.notes
    names = {c.name for c in cand.cases}
    assert {"shrunk", "odd", "long_seq_len"} <= names, names


# Long end-to-end run (over a minute on 2 cores): the corpus command; two cases_fixtures problems at their default
# sizes; the tiers stay in the default command through the smaller fixtures (relu_maximum, softmax_rows,
# vecsoftmax_pow2, softmax_no_max).
@pytest.mark.corpus
def test_cross_entropy_with_linked_sizes_passes(service) -> None:
    rep = service.validate(reference=f"{FIX}/ce_reference.py", candidates=[f"{FIX}/ce_chunked.py"], trials=1)
    cand = rep.candidates[0]
    assert rep.ok, rep.summary
    assert not any("rejects" in n for n in cand.notes), cand.notes
    for c in cand.cases:
        sizes = c.model_extra.get("sizes")
        if sizes:
            assert sizes["input_shape[0]"] == sizes["num_classes"], (c.name, sizes)


def test_relu_via_maximum_passes_with_a_nan_finding_and_fails_strict(service) -> None:
    ref, cands = f"{FIX}/relu_reference.py", [f"{FIX}/relu_maximum.py"]
    rep = service.validate(reference=ref, candidates=cands, trials=1)
    cand = rep.candidates[0]
    assert rep.ok and rep.verdict.startswith("pass; not robust to: NaN/inf input"), rep.verdict
    assert _robust(cand) == {("nan", "nan_propagation")}
    assert "tl.where(x != x" in cand.robustness[0].fix
    assert next(c for c in cand.cases if c.name == "nan_inf").tier == "robustness"
    strict = service.validate(reference=ref, candidates=cands, trials=1, strict=True, only_cases=["nan_inf"])
    assert not strict.ok and {f.check for f in strict.candidates[0].findings} >= {"nan_propagation"}


def test_row_kernel_without_contiguous_is_a_layout_finding_and_a_contract_bug_still_fails(service) -> None:
    rep = service.validate(reference=f"{FIX}/softmax_reference.py", trials=1,
                           candidates=[f"{FIX}/softmax_rows.py", f"{FIX}/softmax_rows_contract_bug.py"])
    good, bug = _cand(rep, "softmax_rows.py"), _cand(rep, "softmax_rows_contract_bug.py")
    assert good.ok and {k for k, _ in _robust(good)} == {"layouts"}, rep.summary
    assert all(c.tier == "robustness" for c in good.cases if not c.ok)
    assert not bug.ok and "mismatch" in {f.check for f in bug.findings if f.severity == "fail"}
    assert "not robust to: non-contiguous input" in rep.summary
    assert rep.first_fix and "softmax_rows_contract_bug.py" in rep.first_fix


def test_next_power_of_2_block_is_an_empty_dims_finding(service) -> None:
    """Form (a) with the default shapes: edge_empty is robustness (the reference declares no SHAPES)."""
    ref, cands = f"{FIX}/vecsoftmax_reference.py", [f"{FIX}/vecsoftmax_pow2.py"]
    rep = service.validate(reference=ref, candidates=cands, trials=1, noncontiguous=False)
    cand = rep.candidates[0]
    assert rep.ok, rep.summary
    assert {k for k, _ in _robust(cand)} == {"empty"} and "numel() == 0" in cand.robustness[0].fix
    empty = next(c for c in cand.cases if c.name == "edge_empty")
    assert empty.tier == "robustness" and not empty.ok
    strict = service.validate(reference=ref, candidates=cands, trials=1, strict=True, only_cases=["edge_empty"],
                              noncontiguous=False)
    assert not strict.ok and strict.candidates[0].findings[0].check == "exception"


# ---- opting in: the sidecar's require ---------------------------------------------------------------------------
def test_sidecar_require_is_checked() -> None:
    from pytorch_to_triton import sidecar
    from pytorch_to_triton.errors import UsageError

    side = sidecar.parse('require = ["layouts", "nan", "layouts", "all_triton"]', Path("r.p2t.toml"))
    assert side.require == ["layouts", "nan", "all_triton"]
    used: list[str] = []
    assert sidecar.merge_require(side, True, None, used) == ["layouts", "nan", "all_triton", "empty", "extreme"]
    assert used == ["require layouts, nan, all_triton"]
    with pytest.raises(UsageError, match="not among"):
        sidecar.parse('require = ["contiguous"]', Path("r.p2t.toml"))
    with pytest.raises(UsageError, match="must be a list"):
        sidecar.parse('require = "layouts"', Path("r.p2t.toml"))


def test_sidecar_require_layouts_makes_the_layout_cases_contract(tmp_service, tmp_path: Path) -> None:
    import shutil

    for name in ("softmax_reference.py", "softmax_rows.py"):
        shutil.copy(ROOT / FIX / name, tmp_path / name)
    (tmp_path / "softmax_reference.p2t.toml").write_text('require = ["layouts"]\n')
    rep = tmp_service.validate(reference="softmax_reference.py", candidates=["softmax_rows.py"], trials=1,
                               only_cases=["shrunk", "transposed", "strided"])
    cand = rep.candidates[0]
    assert not rep.ok and not cand.robustness and "mismatch" in {f.check for f in cand.findings}
    assert {c.tier for c in cand.cases} == {"contract"}
    assert "require layouts" in rep.summary


# ---- value recipes (issue 29 item 1) ----------------------------------------------------------------------------
def test_value_recipes_parse_and_refuse() -> None:
    from pytorch_to_triton import value_recipes as vr

    assert [s.kind for s in vr.parse("25% = -100; scale 1e4")] == ["fraction", "scale"]
    assert vr.parse("1% = nan")[0].share == 0.01 and vr.parse("tril")[0].kind == "tril"
    for bad in ("25 = -100", "scale nan", "", "150% = 1", "sorted"):
        with pytest.raises(ValueError, match="recipe|share|finite"):
            vr.parse(bad)


def test_a_values_case_feeds_hidden_semantics(service) -> None:
    """targets: 25% = -100 reaches F.cross_entropy's ignore_index in KernelBench form: a candidate that forgets it
    fails this contract case (you declared it); one that handles it passes."""
    ref = f"{FIX}/ce_reference.py"
    case = [{"name": "ignore_index", "values": {"targets": "25% = -100"}}]
    rep = service.validate(reference=ref, candidates=[f"{FIX}/ce_ignore_index.py", f"{FIX}/ce_chunked.py"], trials=1,
                           cases=case, only_cases=["ignore_index"], sizes={"batch_size": 64, "num_classes": 300})
    good, bad = _cand(rep, "ce_ignore_index.py"), _cand(rep, "ce_chunked.py")
    assert good.ok, rep.summary
    assert good.cases[0].values == {"targets": "25% = -100"} and good.cases[0].tier == "contract"
    assert not bad.ok and not bad.robustness


def test_sidecar_values_and_hook_are_checked(tmp_path: Path) -> None:
    from pytorch_to_triton import sidecar
    from pytorch_to_triton.errors import UsageError

    problem = sidecar.read_problem((ROOT / FIX / "ce_reference.py").read_text())
    side_path = tmp_path / "ce_reference.p2t.toml"
    (tmp_path / "inputs.py").write_text("def edit(inputs, case):\n    return inputs\n")
    side = sidecar.parse('[[cases]]\nname = "ig"\nvalues = { targets = "25% = -100" }\nhook = "inputs.py"\n',
                         side_path, problem)
    assert side.cases == [{"name": "ig", "sizes": {}, "values": {"targets": "25% = -100"},
                           "hook": str(tmp_path / "inputs.py")}]
    with pytest.raises(UsageError, match="not a value recipe"):
        sidecar.parse('[[cases]]\nname = "ig"\nvalues = { targets = "a quarter ignored" }\n', side_path, problem)
    with pytest.raises(UsageError, match="not found"):
        sidecar.parse('[[cases]]\nname = "ig"\nhook = "missing.py"\n', side_path, problem)


def test_sizes_interpreter_reach_only_the_interpreter(tmp_service, tmp_path: Path) -> None:
    """[sizes.interpreter] sets the CPU run's sizes without pinning the GPU's: validation notes them, and they are
    not called the problem's."""
    import shutil

    from pytorch_to_triton import sidecar

    shutil.copy(ROOT / FIX / "relu_reference.py", tmp_path / "relu_reference.py")
    shutil.copy(ROOT / FIX / "relu_maximum.py", tmp_path / "relu_maximum.py")
    (tmp_path / "relu_reference.p2t.toml").write_text("[sizes.interpreter]\nbatch_size = 3\ndim = 100\n")
    side = sidecar.load(tmp_path / "relu_reference.py")
    assert side.sizes == {} and side.sizes_interpreter == {"batch_size": 3, "dim": 100}
    rep = tmp_service.validate(reference="relu_reference.py", candidates=["relu_maximum.py"], trials=1,
                               only_cases=["sized"])
    cand = rep.candidates[0]
    assert rep.ok and cand.cases[0].shape == [[3, 100]], rep.summary
    assert any("[sizes.interpreter]" in n for n in cand.notes)
    assert not any("problem's batch_size=3" in n for n in cand.notes)


def test_the_journal_report_shows_robustness_and_value_cases(tmp_path: Path) -> None:
    from pytorch_to_triton import journal

    ref, cand = tmp_path / "t" / "reference.py", tmp_path / "t" / "stage1.py"
    ref.parent.mkdir()
    ref.write_text("v1")
    cand.write_text("good")
    key = journal.content_key(tmp_path, [ref, cand])
    journal.append_entry(tmp_path, "t", {"tool": "run_validation", "stage": "stage1.py", "ok": True,
                                         "robustness": ["non-contiguous input"], "value_cases": ["ignore_index"],
                                         "reference": "t/reference.py", **key})
    assert "| stage1.py | PASS; not robust to: non-contiguous input; value cases: ignore_index |" in \
        journal.render_report(tmp_path, "t")


def test_shrink_keeps_the_head_size() -> None:
    """n_embd / n_head = 32 in the problem: the interpreter's shrunk sizes keep it (not head size 8 or 3)."""
    from pytorch_to_triton.worker.validation import cases as cs

    p = cs.plan(_mod("attn_reference.py"), "cpu", None, None)
    assert p.main.sizes["n_embd"] // p.main.sizes["n_head"] == 32, p.main.sizes
    assert p.main.sizes["seq_len"] <= p.main.sizes["max_seqlen"]


def test_the_size_variants_still_catch_unfilled_lanes(service) -> None:
    """The real bug the size variants caught is a contract catch: it fails without strict, on contract cases."""
    rep = service.validate(reference=f"{FIX}/logsoftmax_reference.py", trials=1,
                           candidates=[f"{FIX}/logsoftmax_unfilled_lanes.py"], only_cases=["shrunk", "odd"])
    cand = rep.candidates[0]
    assert not rep.ok and not cand.robustness
    assert {f.check for f in cand.findings if f.severity == "fail"} & {"nonfinite", "mismatch"}
    assert {c.tier for c in cand.cases if not c.ok} == {"contract"}


def test_softmax_without_the_max_is_an_extreme_values_finding(service) -> None:
    rep = service.validate(reference=f"{FIX}/softmax_reference.py", candidates=[f"{FIX}/softmax_no_max.py"],
                           trials=1, only_cases=["shrunk", "extreme"])
    cand = rep.candidates[0]
    assert rep.ok and {k for k, _ in _robust(cand)} == {"extreme"}, rep.summary
    assert "subtract the row max" in cand.robustness[0].fix


def test_shrink_moves_linked_sizes_and_keeps_the_group_size() -> None:
    """bias_shape = (out_features,) follows, no varied size stays above the interpreter's 512, and the GroupNorm's
    channels per group (4096 / 64 = 64) survive the shrink."""
    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation import sizes as sz

    m = _mod("gemm_gn_reference.py")
    p = cs.plan(m, "cpu", None, None)
    s = p.main.sizes
    assert s["bias_shape[0]"] == s["out_features"] and s["out_features"] // s["num_groups"] == 64, s
    assert max(s[k] for k in sz.varied(p.defaults, {}, sz.derived(m))) <= sz.CPU_MAX_DIM, s
    assert not any("left" in n for n in p.notes)


def test_shrink_keeps_the_head_size_when_the_head_count_turns_odd() -> None:
    """KernelBench 50_ReLUSelfAttention: n_head 12 -> 6 -> 3 halves with n_embd, then cannot; n_embd stops there
    (head size 64) instead of shrinking alone to head size 16 as a trial saw."""
    from pytorch_to_triton.worker.validation import cases as cs

    p = cs.plan(_mod("relu_attn_reference.py"), "cpu", None, None)
    s = p.main.sizes
    assert s["n_embd"] // s["n_head"] == 64 and s["n_embd"] % s["n_head"] == 0, s


def test_a_four_head_model_shrinks_to_three_heads_of_the_same_size(tmp_path) -> None:
    """Issue 49's friction: the docs said only integers of at least 8 change, yet a 4-head model ran with 3 heads.
    The rule (references/task-format.md): a head count moves with the embedding it divides, keeping the head size,
    and never below 3 (multiplicity floor); the head size is never what shrinks."""
    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation import sizes as sz
    from pytorch_to_triton.worker.validation.tasks import load_module

    src = (ROOT / FIX / "attn_reference.py").read_text()
    assert "n_head = 8\n" in src
    (tmp_path / "four_heads.py").write_text(src.replace("n_head = 8\n", "n_head = 4\n"))
    m = load_module(tmp_path / "four_heads.py", "ref")
    assert "n_head" not in sz.varied(sz.module_ints(m), {})  # below VARY_MIN: not a size of its own
    s = cs.plan(m, "cpu", None, None).main.sizes
    assert (s["n_head"], s["n_embd"] // s["n_head"]) == (3, 64), s
    doc = (ROOT / "references" / "task-format.md").read_text()
    assert "`n_embd = 192, n_head = 3` (head size 64 kept)" in doc  # the docs state this very case


def test_a_run_that_ran_no_contract_case_is_no_pass(service) -> None:
    """issue 40's trial: `--only-cases tiles` on a stage whose tiles case is not run printed "PASS ... 0/0 contract
    cases". A run in which no contract case ran fails with `no_cases` and says what to change."""
    ref, cands = f"{FIX}/relu_reference.py", [f"{FIX}/relu_maximum.py"]
    rep = service.validate(reference=ref, candidates=cands, trials=1, only_cases=["nan_inf"])  # robustness only
    cand = rep.candidates[0]
    assert not rep.ok and not cand.ok, rep.summary
    assert [f.check for f in cand.findings if f.severity == "fail"] == ["no_cases"], cand.findings
    assert "no contract case ran" in rep.summary, rep.summary


def test_the_full_size_without_a_large_shape_is_the_largest_not_the_last() -> None:
    """The dry run's full size and run_benchmark's shape (issue 46): a SHAPES without "large" that ends on an edge case
    (tests/faults/reference.py: small 1000, edge_empty, odd_7) is checked and timed at its 1000 elements, not at 7."""
    from types import SimpleNamespace

    from pytorch_to_triton.worker.validation import cases as cs

    faults = SimpleNamespace(SHAPES={"small": (1000,), "edge_empty": (0,), "odd_7": (7,)})
    assert cs.bench_shape(faults) == ("small", (1000,))
    assert cs.full_size(faults, False, None) == ((1000,), "the benchmark's shape small")
    assert cs.bench_shape(SimpleNamespace(SHAPES={"a": (4, 8), "b": (32,), "c": (8, 4)})) == ("c", (8, 4))  # ties: last
    assert cs.bench_shape(SimpleNamespace(SHAPES={"large": (5,), "huge": (9,)})) == ("large", (5,))  # named: kept
    assert cs.bench_shape(SimpleNamespace(SHAPES={"a": (9,)}, BENCH_SHAPES={"b": (3,)})) == ("b", (3,))


@pytest.mark.parametrize("problem, inner, outer", [("log_softmax", "dim", "batch_size"), ("mean_dim2", "dim2", "dim1")])
def test_widened_cases_put_their_tail_along_the_inner_size(problem: str, inner: str, outer: str) -> None:
    """Issue 49: log_softmax's tiles case grew batch_size to 2049 (largest first, a tie at 16384) and left dim, along
    which the candidate's 1024-wide block runs, without a tail: 2049 interpreted programs a run, 126 s of a 160 s
    validation. The tiles case and the long_ variants now widen the sizes that set an input's last dimension; an
    outer size's long_ variant keeps LONG_DIM's rows."""
    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation import sizes as sz
    from pytorch_to_triton.worker.validation.tasks import load_module

    mod = load_module(ROOT / "tests" / "kernelbench_corpus" / problem / "reference.py", "ref")
    p = cs.plan(mod, "cpu", None, None)
    by = {c.name: c for c in p.cases}
    assert cs.inner_sizes(mod, by["small"].sizes, [inner, outer]) == {inner}
    tiles = by["tiles"]
    note = cs.widen_tiles(mod, p, tiles, [1024 if problem == "log_softmax" else 512], None)
    assert tiles.sizes[inner] % 2 == 1 and tiles.sizes[inner] > 2 * (1024 if problem == "log_softmax" else 512), note
    assert tiles.sizes[outer] == by["small"].sizes[outer], note
    long_inner, long_outer = by[f"long_{inner}"], by[f"long_{outer}"]
    assert cs.widen_long(mod, p, long_inner, 1024) and long_inner.sizes[inner] in (2047, 2049)  # odd, within size
    assert cs.widen_long(mod, p, long_outer, 1024) is None and long_outer.sizes[outer] == sz.LONG_DIM
