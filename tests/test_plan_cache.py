"""The plan cache: a selection that compared candidates is kept on disk and reused by later processes, exactly."""

import json
import subprocess
import sys
import warnings

import pytest

from resize_kernels import plan_cache, select
from resize_kernels.kernels import FORWARD

COMPARED = ((2, 30, 20, 64), (2, 59, 38, 64))  # an output past COMPARE_FROM_BYTES: selection compares
SMALL = ((1, 5, 6, 1), (1, 9, 4, 1))  # first fit, nothing compared


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(plan_cache.ENABLE_ENV, "1")
    monkeypatch.setenv(plan_cache.DIR_ENV, str(tmp_path))
    return tmp_path


def chosen(shapes=COMPARED, dtype="float32", kernel=None):
    return select.program(FORWARD, kernel, *shapes, dtype, sources=False)


def plans(cache):
    return sorted(cache.glob("plans/*/*.json"))


def test_a_compared_selection_is_kept_and_reused_as_chosen(cache, monkeypatch):
    first = chosen()
    assert len(plans(cache)) == 1
    monkeypatch.setattr(select._Search, "default", lambda self: pytest.fail("selected again"))
    again = chosen()
    assert list(map(repr, again.instructions)) == list(map(repr, first.instructions))
    assert again.selection.rule == first.selection.rule + " (kept in the plan cache)"
    assert (again.selection.kernel, again.selection.setting, again.selection.candidates) == (
        first.selection.kernel, first.selection.setting, first.selection.candidates)


def test_a_later_process_reuses_the_plan(cache):
    code = ("import time; from resize_kernels import select; t = time.perf_counter(); "
            f"p = select.program('resize_nearest', None, {COMPARED[0]}, {COMPARED[1]}, 'float32'); "
            "print(p.selection.rule)")
    rules = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
             for _ in range(2)]
    assert not rules[0].endswith("(kept in the plan cache)") and rules[1] == rules[0] + " (kept in the plan cache)"


def test_first_fit_selections_are_not_kept(cache):
    chosen(SMALL)
    assert plans(cache) == []


def test_the_key_holds_the_problem_and_the_selection_budgets(cache, monkeypatch):
    chosen()
    chosen(dtype="bfloat16")
    chosen(kernel="rows")  # a named kernel whose settings were compared
    assert len(plans(cache)) == 3
    monkeypatch.setattr(select, "TUNE_FROM_BYTES", select.TUNE_FROM_BYTES * 4)
    assert not chosen().selection.rule.endswith("(kept in the plan cache)")


def test_a_new_code_version_starts_afresh_and_old_versions_are_bounded(cache, monkeypatch):
    chosen()
    for n in range(plan_cache.KEEP_VERSIONS + 1):
        monkeypatch.setattr(plan_cache, "code_version", lambda n=n: f"version{n}")
        assert not chosen().selection.rule.endswith("(kept in the plan cache)")
    assert len(list((cache / "plans").iterdir())) == plan_cache.KEEP_VERSIONS


def test_plans_past_the_bound_go_oldest_first(cache, monkeypatch):
    monkeypatch.setattr(plan_cache, "MAX_PLANS", 3)
    for n in range(5):
        plan_cache.store(f"key {n}", {"n": n})
    assert [plan_cache.lookup(f"key {n}") for n in range(5)] == [None, None, {"n": 2}, {"n": 3}, {"n": 4}]


def test_a_damaged_plan_is_a_miss_and_is_replaced(cache):
    chosen()
    (path,) = plans(cache)
    path.write_text('{"key": ')  # a torn file, as a crash mid-write would leave without the rename
    assert not chosen().selection.rule.endswith("(kept in the plan cache)")
    assert json.loads(path.read_text())["plan"]["kernel"]


def test_the_cache_can_be_turned_off(cache, monkeypatch):
    monkeypatch.setenv(plan_cache.ENABLE_ENV, "0")
    chosen()
    assert plans(cache) == []


def test_an_unwritable_cache_warns_once_and_the_resize_still_runs(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv(plan_cache.ENABLE_ENV, "1")
    monkeypatch.setenv(plan_cache.DIR_ENV, str(blocker / "cache"))
    plan_cache._warn_once.cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen()
        chosen(dtype="bfloat16")
    messages = [str(w.message) for w in caught if "plan cache" in str(w.message)]
    assert len(messages) == 1 and plan_cache.DIR_ENV in messages[0] and plan_cache.ENABLE_ENV in messages[0]


def test_concurrent_processes_leave_only_whole_plans(cache):
    code = ("import sys; from resize_kernels import plan_cache\n"
            "for n in range(200): plan_cache.store(f'key {n % 20}', {'writer': sys.argv[1], 'pad': 'x' * 5000})")
    writers = [subprocess.Popen([sys.executable, "-c", code, str(k)]) for k in range(3)]
    assert [w.wait() for w in writers] == [0, 0, 0]
    assert all(plan_cache.lookup(f"key {n}")["writer"] in "012" for n in range(20))
    assert not list(cache.glob("plans/*/*.tmp"))


def test_the_selection_reports_its_own_work(cache):
    first, again = chosen(), chosen()
    assert first.selection.traced > again.selection.traced == len(again.instructions) > 0
    assert "instructions traced" in str(first.selection).splitlines()[1]
