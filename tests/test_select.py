"""The selection stage: one loop, one error policy, a budget, the choice recorded on the Program, a fallback."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import resize_kernels as rk
from resize_kernels import select
from resize_kernels.kernels import FORWARD, GRAD, candidates, fallback, names, record, records
from resize_kernels.kernels import registration
from resize_kernels.kernels.plan import plan_resize
from resize_kernels.machine.cost import program_cost
from resize_kernels.machine.errors import SbufCapacityError
from resize_kernels.nki import TensorSpec, trace

DTYPE_OF = {1: "uint8", 2: "float16", 4: "float32"}

COMPARED_SHAPES = [  # (NHWC in, NHWC out, itemsize): every output at least COMPARE_FROM_BYTES
    ((8, 64, 64, 256), (8, 128, 128, 256), 4),
    ((8, 192, 192, 256), (8, 64, 64, 256), 4),
    ((2, 30, 20, 1280), (2, 59, 38, 1280), 2),
    ((2, 15, 10, 1280), (2, 30, 20, 1280), 2),
    ((1, 300, 4, 64), (1, 1000, 7, 64), 4),
    ((4, 100, 100, 128), (4, 70, 70, 128), 2),
    ((1, 256, 256, 3), (1, 511, 383, 3), 1),
    ((2, 512, 3, 64), (2, 99, 25, 64), 4),
]


def chosen(in_shape, out_shape, itemsize=4, kernel=None):
    return select.program(FORWARD, kernel, in_shape, out_shape, DTYPE_OF[itemsize], sources=False)


@pytest.mark.parametrize("in_shape, out_shape, itemsize", COMPARED_SHAPES)
def test_the_default_takes_the_lowest_score_and_records_each_candidates_own_modelled_time(in_shape, out_shape,
                                                                                           itemsize):
    program = chosen(in_shape, out_shape, itemsize)
    selection = program.selection
    costed = [c for c in selection.candidates if c.modelled_us is not None]
    slower = [c for c in selection.candidates if c.reason and c.reason.startswith("modelled slower than the best")]
    assert {"rows", "twopass"} <= {c.kernel for c in costed + slower}  # within the budget on these shapes
    assert ("strided" in {c.kernel for c in costed + slower}) == (
        plan_resize(in_shape, out_shape).integer_ratios is not None)
    best = min(costed, key=lambda c: c.score)
    spec = TensorSpec(in_shape, np.dtype(DTYPE_OF[itemsize]))
    for c in slower:  # given up part way: costed in full, each is slower than the pick
        alone = trace(record(FORWARD, c.kernel).function, spec, out_shape=out_shape, sources=False,
                      **record(FORWARD, c.kernel).call_args(c.setting, None))
        full = select.Candidate(c.kernel, c.setting, {t: program_cost(alone, t).modelled_us
                                                     for t in select.SCORE_TARGETS})
        assert full.score > best.score
    assert (selection.kernel, selection.setting) == (best.kernel, best.setting)
    assert program.name == record(FORWARD, selection.kernel).function.__name__
    for c in costed[:4]:  # the times compared are the candidates' own: each traced alone and costed again
        alone = trace(record(FORWARD, c.kernel).function, spec, out_shape=out_shape, sources=False,
                      **record(FORWARD, c.kernel).call_args(c.setting, None))
        assert c.modelled_us == {t: pytest.approx(program_cost(alone, t).modelled_us) for t in select.SCORE_TARGETS}
    report = rk.cost(in_shape, out_shape, dtype=DTYPE_OF[itemsize], target="trn2")
    assert report.modelled_us == pytest.approx(best.modelled_us["trn2"])
    assert str(selection).splitlines()[0] in str(report)


def test_small_outputs_take_the_first_candidate_that_fits_without_costing():
    selection = chosen((1, 30, 20, 4), (1, 59, 38, 4)).selection  # 36 KB of output
    assert 59 * 38 * 4 * 4 < select.COMPARE_FROM_BYTES[FORWARD]
    assert candidates(FORWARD)[0].name == "windows" and selection.candidates[0].reason.startswith("fewer than two")
    assert selection.kernel == "rows"  # the first that fits: windows is for two rows per partition or more
    assert [c.modelled_us for c in selection.candidates if c.reason is None] == [None]
    assert "the first that fits" in selection.rule
    compared = chosen((1, 30, 20, 8), (1, 59, 38, 8)).selection  # 72 KB: compared
    assert "the fastest of" in compared.rule and len(compared.candidates) >= 4


def test_a_named_kernel_is_traced_and_its_settings_compared_on_larger_outputs():
    named = chosen((1, 30, 20, 8), (1, 59, 38, 8), kernel="batched").selection
    assert (named.kernel, named.rule, len(named.candidates)) == ("batched", "named", 1)
    tuned = chosen((2, 30, 20, 1280), (2, 59, 38, 1280), 2, kernel="sourcerows").selection
    assert {c.kernel for c in tuned.candidates} == {"sourcerows"} and len(tuned.candidates) > 1
    with pytest.raises(ValueError, match="resize_nearest_strided_kernel requires an integer ratio"):
        chosen((1, 30, 20, 8), (1, 59, 38, 8), kernel="strided")


# -- the accepted shapes that used to raise, and the error policy -----------------------------------------------

@pytest.mark.parametrize("in_shape, out_hw", [((1, 64, 8192, 8), (100, 12000)), ((4, 228, 247, 8), (638, 757))])
def test_shapes_that_overflowed_sbuf_are_resized_exactly(in_shape, out_hw, rng):
    """Each raised SbufCapacityError from the default (and rk.cost) before the selection stage, whose candidates
    overflowed SBUF at their first settings (column index tiles built in three tiles each, two now)."""
    x = rng.integers(-2**31, 2**31 - 1, size=in_shape, dtype=np.int32).view(np.float32)
    want = rk.semantics.resize_nearest_reference(x, out_hw)
    np.testing.assert_array_equal(rk.resize_nearest(x, out_hw).view(np.int32), want.view(np.int32))
    assert rk.cost(in_shape, out_hw).modelled_us > 0
    for kernel in ("rows", "sourcerows"):  # every setting tried fits now
        selection = rk.trace_resize(in_shape, out_hw, kernel=kernel).selection
        assert not any("SBUF" in (c.reason or "") for c in selection.candidates)


def with_candidates(monkeypatch, op, fail: set, error=rk.errors.ResourceError("no room")):
    """The op's records, those named in ``fail`` replaced by kernels that raise ``error``."""
    def failing(*args, **kwargs):
        raise error

    for r in records(op):
        if r.name in fail:
            monkeypatch.setitem(registration._RECORDS, (op, r.name), dataclasses.replace(r, function=failing))


@pytest.mark.parametrize("error", [rk.errors.InvalidValueError("rows refuses; do this"),
                                   SbufCapacityError("rows refuses; split the tile")])
def test_a_candidate_that_fails_is_skipped_with_its_reason(monkeypatch, error):
    with_candidates(monkeypatch, FORWARD, {"rows"}, error)
    selection = chosen((1, 30, 20, 4), (1, 59, 38, 4)).selection
    assert selection.kernel == "sourcerows"
    assert next(c for c in selection.candidates if c.kernel == "rows") == select.Candidate(
        "rows", ("balanced", 1), reason="rows refuses")


@pytest.mark.parametrize("op, shape, other", [(FORWARD, (1, 30, 20, 8), (1, 59, 38, 8)),
                                              (GRAD, (1, 59, 38, 8), (1, 30, 20, 8))])
def test_when_no_candidate_fits_the_fallback_runs(monkeypatch, op, shape, other):
    with_candidates(monkeypatch, op, {r.name for r in candidates(op)} - {fallback(op).name})
    monkeypatch.setattr(select, "CANDIDATE_INSTRUCTIONS", 1)  # the fallback too passes a candidate's budgets
    monkeypatch.setattr(select, "LARGE_INSTRUCTIONS", 1)
    program = select.program(op, None, shape, other, np.float32)
    assert program.selection.kernel == fallback(op).name
    assert program.selection.rule == "the fallback: no candidate fits its budget"
    assert any(c.kernel == fallback(op).name and c.reason == "more than 1 instructions"
               for c in program.selection.candidates)


def test_when_the_fallback_passes_the_tracers_budget_the_others_are_tried_in_full(monkeypatch):
    """Where the gradient's fallback (the scatter-add kernel) and the padded kernel pass the tracer's budget, the
    rows kernel, which the default's first-fit choice skips there (a dy under COMPARE_FROM_BYTES), is the last
    resort."""
    with_candidates(monkeypatch, GRAD, {fallback(GRAD).name, "padded"}, rk.errors.InstructionBudgetError("too many"))
    rows = record(GRAD, "rows")
    monkeypatch.setitem(registration._RECORDS, (GRAD, "rows"),
                        dataclasses.replace(rows, skipped_by_default=lambda plan, item: "an irregular map"))
    assert 59 * 38 * 4 * 4 < select.COMPARE_FROM_BYTES[GRAD]
    program = select.program(GRAD, None, (1, 59, 38, 4), (1, 30, 20, 4), np.float32)
    assert program.selection.kernel == "rows" and program.selection.rule.startswith("the last resort")
    with_candidates(monkeypatch, GRAD, {"rows"}, rk.errors.InstructionBudgetError("too many, rows"))
    with pytest.raises(rk.errors.InstructionBudgetError, match="^too many$"):  # the fallback's error
        select.program(GRAD, None, (1, 59, 38, 4), (1, 30, 20, 4), np.float32)


def test_a_convention_takes_only_the_kernels_whose_maps_are_tables():
    convention = rk.api.index_convention("half_pixel", "round_prefer_ceil")
    selection = select.program(FORWARD, None, (1, 30, 20, 8), (1, 59, 38, 8), np.float32, convention).selection
    refused = {c.kernel for c in selection.candidates if c.reason and "computes the compiler's map" in c.reason}
    assert refused == {r.name for r in candidates(FORWARD) if not r.conventions}
    assert record(FORWARD, selection.kernel).conventions


def test_the_selection_budget_stops_the_comparisons(monkeypatch):
    monkeypatch.setattr(select, "SELECTION_INSTRUCTIONS", 1)
    selection = chosen((2, 30, 20, 1280), (2, 59, 38, 1280), 2).selection
    tried = [c for c in selection.candidates if c.reason is None or "budget" not in c.reason]
    assert [c for c in tried if c.reason is None][0].kernel == selection.kernel  # the first that fit
    assert any("the selection's budget" in (c.reason or "") for c in selection.candidates)


def test_every_list_of_kernels_comes_from_the_records():
    assert names(FORWARD) == ("auto", *(r.name for r in records(FORWARD)))
    assert {"rows", "sourcerows", "strided", "batched", "rowreuse", "twopass", "windows"} == {r.name for r in candidates(FORWARD)}
    assert {"seed", "public", "exact"} == {r.name for r in records(FORWARD) if r.rank is None}  # baselines
    assert [r.name for r in records(FORWARD) if r.fallback] == ["twopass"]
    assert [r.name for r in records(GRAD) if r.fallback] == ["general"]
    from resize_kernels import cli
    assert cli.main(["inspect", "--in", "1x4x4x1", "--out", "8x8", "--kernel", "nope"]) == 2


def test_a_kernel_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        registration.register(record(FORWARD, "rows"))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(1, 40), st.integers(1, 40), st.integers(1, 90), st.integers(1, 90),
       st.sampled_from([1, 3, 8, 300]))
def test_every_kernels_least_instructions_is_a_lower_bound(n, h, w, oh, ow, c):
    plan = plan_resize((n, h, w, c), (n, oh, ow, c))
    for r in records(FORWARD):
        try:
            program = select.program(FORWARD, r.name, (n, h, w, c), (n, oh, ow, c), np.float32, sources=False)
        except rk.errors.ResizeKernelsError:
            continue
        assert r.least_instructions(plan, 4) <= len(program.instructions), r.name


def test_a_shape_past_a_kernels_lower_bound_is_refused_without_tracing(monkeypatch):
    """Issue 40.14: 4e8 output pixels through a kernel that unrolls a loop per 128-pixel tile are refused at once."""
    seed = record(FORWARD, "seed")
    monkeypatch.setitem(registration._RECORDS, (FORWARD, "seed"),
                        dataclasses.replace(seed, function=lambda *a, **k: pytest.fail("traced")))
    with pytest.raises(rk.errors.InstructionBudgetError, match="needs more than 300,000 instructions"):
        select.program(FORWARD, "seed", (1, 100, 100, 1), (1, 20000, 20000, 1), np.float32)
