"""The selection stage: which registered kernel, with which schedule setting, runs an op on one shape.

As tinygrad keeps its search beside its heuristics, choosing is a stage of its own, above the kernels and below
the compiler and the API. It traces and costs (kernel, setting) pairs in one loop under one error policy: a pair
that does not apply, does not fit SBUF or passes its instruction budget is skipped and its reason kept. It traces
at most a budget of instructions in all, and records its choice, with every pair's modelled time or reason, on
the Program it returns (``Program.selection``). If no candidate fits its budget, it takes the op's fallback,
whose SBUF is bounded on every shape, within the tracer's own budget, and where even that passes it, any candidate
that fits in full: the default never fails on an accepted shape (tests/test_default_never_fails.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from dataclasses import dataclass

import numpy as np

from . import contract, plan_cache, semantics
from .errors import InstructionBudgetError, ResizeKernelsError
from . import kernels
from .kernels.plan import plan_resize
from .kernels.registration import AUTO, FORWARD, GRAD, KernelRecord, Knob
from .machine.cost import busy_bound_us, program_cost, target_params
from .machine.isa import Program
from .nki import TensorSpec, trace, tracer

#: Outputs (the gradient: dy) from this many bytes on have the default compare its candidates by modelled time,
#: every one that applies (the records' ``skipped_by_default`` rules are for the first-fit choice only); on smaller
#: ones it takes the first that fits, by rank and those rules: there the candidates differ by microseconds
#: (modelled), so comparing would only cost trace time, and the sweeps' shapes pay for one trace. (The gradient
#: took the first that fits on every shape until its rank proved a poor guide: on roofline_random.py's 48
#: gradient shapes of seeds 0-2 it picked the fastest of rows, padded and general on 29.)
COMPARE_FROM_BYTES = {FORWARD: 64 * 1024, GRAD: 64 * 1024}
#: From this many bytes on, each kernel's schedule settings are compared too; below, its default setting runs.
TUNE_FROM_BYTES = 256 * 1024
#: Instructions one compared (kernel, setting) may trace (tracing and costing take about 40 us each). Where no
#: candidate fits that, the ones that passed it are traced again in rank order within LARGE_INSTRUCTIONS, and the
#: first that fits is taken without comparing; the fallback traces within the tracer's own budget.
CANDIDATE_INSTRUCTIONS = 8_000
LARGE_INSTRUCTIONS = 65_536
#: Instructions the comparisons may trace in all: past it, the pairs not yet tried are not (their reason says
#: so) and the best so far is taken. Every kernel's default setting is tried before any finer one.
SELECTION_INSTRUCTIONS = 64_000
#: The targets a Program is scored on (selection does not know where it will run): the sum of its modelled times
#: in units of each target's roofline (time x peak DMA bandwidth).
SCORE_TARGETS = ("trn1", "trn2")
#: Partition rows a Program's DMAs may address at most to be costed: the cost model tracks each row's HBM run,
#: so costing takes time with them (381,127 rows, 3,057 instructions took 5.6 s for 1x100x100x128 -> 3001x3001
#: float32; the panel's programs address 16,384 at most).
COST_MAX_ROWS = 65_536


@dataclass(frozen=True)
class Candidate:
    """One (kernel, setting) selection considered: its modelled time per target, or why it was skipped."""

    kernel: str
    setting: object = None  # a schedule setting; None for a kernel without knobs
    modelled_us: dict | None = None  # target -> modelled us (None: not costed)
    reason: str | None = None  # why it was skipped (None: it traced and fits)
    instructions: int | None = None

    @property
    def label(self) -> str:
        return _label(self.kernel, self.setting)

    @property
    def score(self) -> float:
        """The modelled times in units of each target's roofline (lower is faster); inf when not costed."""
        if self.modelled_us is None:
            return math.inf
        return sum(us * target_params(t).peak_dma_gbps for t, us in self.modelled_us.items())

    def __str__(self) -> str:
        if self.reason is not None:
            return f"{self.label}: skipped, {self.reason}"
        if self.modelled_us is None:
            return f"{self.label}: fits, {self.instructions:,} instructions (not costed)"
        times = ", ".join(f"{us:,.1f} us on {t}" for t, us in self.modelled_us.items())
        return f"{self.label}: {times} (modelled)"


@dataclass(frozen=True)
class Selection:
    """What the selection stage chose for one op and shape, by which rule, and every pair it considered."""

    op: str
    kernel: str
    setting: object
    rule: str
    candidates: tuple
    traced: int = 0  # instructions this selection traced (a plan kept on disk: the chosen kernel's only)
    seconds: float = 0.0  # its wall time: tracing, costing, the plan cache

    @property
    def label(self) -> str:
        return _label(self.kernel, self.setting)

    def __str__(self) -> str:
        costed = sum(c.modelled_us is not None for c in self.candidates)
        work = (f"  its own work: {self.traced:,} instructions traced (the comparisons' budget: "
                f"{SELECTION_INSTRUCTIONS:,}), {costed} of {len(self.candidates)} pairs with modelled times, "
                f"{self.seconds:.2f} s")
        return "\n".join([f"selection: {self.label}, {self.rule}", work, *(f"  {c}" for c in self.candidates)])


def _label(kernel: str, setting) -> str:
    """A kernel and its setting in words: rows ("balanced", 2) -> "rows (balanced tiles, column chunks x2)"."""
    if setting is None:
        return kernel
    if isinstance(setting, tuple):
        return f"{kernel} ({setting[0]} tiles, column chunks x{setting[1]})"
    if isinstance(setting, Knob):
        return f"{kernel} ({setting})"
    return f"{kernel} (column chunks x{setting})"


@dataclass(frozen=True)
class Selected:
    """What the compiler's registry binds to an op: its kernel chosen per shape by the selection stage.

    ``Selected(op)`` is the default ("auto"), ``Selected(op, name)`` a named kernel (its setting still chosen);
    codegen calls ``program(operand, out_shape=...)`` (the gradient: ``in_shape=``; both may add ``convention=``)
    with the arguments it would trace a kernel function with.
    """

    op: str
    kernel: str = AUTO

    def __post_init__(self):
        kernels.record(self.op, self.kernel)  # checks the name

    @property
    def __name__(self) -> str:
        """"auto", or the named kernel's function name (as codegen names what it traces)."""
        named = kernels.record(self.op, self.kernel)
        return AUTO if named is None else named.function.__name__

    def program(self, operand, convention=None, **shape) -> Program:
        """The Program for an operand (anything with a shape and a dtype) and the op's other shape, by keyword."""
        (other,) = shape.values()
        return program(self.op, self.kernel, operand.shape, other, operand.dtype, convention)


def program(op: str, kernel: str | None, shape, other, dtype, convention=None, sources: bool = True) -> Program:
    """The Program of ``op`` for an operand of ``shape`` and ``dtype`` and the op's other shape (the output's for
    the forward op, the forward input's for the gradient), traced from ``kernel`` (None or "auto": the default's
    choice), its selection recorded on it. ``convention``: an index convention other than the compiler's, or None.
    ``sources=False`` skips recording each instruction's source line.
    """
    shape, other = (contract.resize_shapes if op == FORWARD else contract.grad_shapes)(op, shape, other)
    named = kernels.record(op, AUTO if kernel is None else kernel)
    start = time.perf_counter()
    search = _Search(op, shape, other, np.dtype(dtype), convention, sources)
    key = _plan_key(op, kernel, search)
    compares = search.work_bytes >= min(COMPARE_FROM_BYTES[op], TUNE_FROM_BYTES)  # else nothing was kept
    program = search.planned(plan_cache.lookup(key)) if compares else None
    if program is None:
        program = search.named(named) if named is not None else search.default()
        if any(c.modelled_us is not None for c in program.selection.candidates):  # it compared: worth keeping
            plan_cache.store(key, _plan(program.selection))
    program.selection = dataclasses.replace(program.selection, traced=search.traced,
                                            seconds=time.perf_counter() - start)
    return program


def _plan_key(op, kernel, search) -> str:
    """What a selection depends on besides the code: the problem, and this module's budgets and thresholds."""
    return repr((op, kernel or AUTO, search.shape, search.other, search.dtype.str, search.convention,
                 COMPARE_FROM_BYTES, TUNE_FROM_BYTES, CANDIDATE_INSTRUCTIONS, LARGE_INSTRUCTIONS,
                 SELECTION_INSTRUCTIONS, SCORE_TARGETS, COST_MAX_ROWS))


def _plan(selection: Selection) -> dict:
    """A Selection as JSON for the plan cache."""
    def candidate(c: Candidate) -> dict:
        return {"kernel": c.kernel, "setting": _setting_json(c.setting), "modelled_us": c.modelled_us,
                "reason": c.reason, "instructions": c.instructions}
    return {"kernel": selection.kernel, "setting": _setting_json(selection.setting), "rule": selection.rule,
            "candidates": [candidate(c) for c in selection.candidates]}


def _setting_json(setting):
    if isinstance(setting, Knob):
        return {"knob": [setting.value, setting.what]}
    return {"tuple": list(setting)} if isinstance(setting, tuple) else setting


def _setting(stored):
    if isinstance(stored, dict):
        return Knob(*stored["knob"]) if "knob" in stored else tuple(stored["tuple"])
    return stored


class _Search:
    """One selection: the problem, and every (kernel, setting) considered so far."""

    def __init__(self, op, shape, other, dtype, convention, sources):
        self.op, self.shape, self.other, self.dtype = op, shape, other, dtype
        self.convention, self.sources = convention, sources
        in_shape, out_shape = (shape, other) if op == FORWARD else (other, shape)
        self.plan = plan_resize(in_shape, out_shape, convention or semantics.COMPILER)
        self.item = dtype.itemsize
        self.work_bytes = math.prod(out_shape) * self.item  # the output's, or the gradient's dy
        self.tried: list[Candidate] = []
        self.spent = 0  # instructions of the compared pairs (the budget's count)
        self.traced = 0  # instructions of every trace
        self.costed: dict[int, list] = {}  # instruction count -> [[Program, its modelled times, hash], ...]

    def planned(self, plan: dict | None) -> Program | None:
        """The Program of a plan the cache kept, its selection as recorded then; None without one, or if its
        kernel no longer traces the shape."""
        if plan is None:
            return None
        try:
            setting = _setting(plan["setting"])
            program, _ = self._traced(kernels.record(self.op, plan["kernel"]), setting, None)
            candidates = tuple(Candidate(c["kernel"], _setting(c["setting"]), c["modelled_us"], c["reason"],
                                         c["instructions"]) for c in plan["candidates"])
        except (ResizeKernelsError, KeyError, TypeError):
            return None
        program.selection = Selection(self.op, plan["kernel"], setting, plan["rule"] + " (kept in the plan cache)",
                                      candidates)
        return program

    def default(self) -> Program:
        """The default's choice: the fastest candidate on larger outputs, else the first that fits by rank; the
        fallback where none fits (``_last_resort``)."""
        records = kernels.candidates(self.op)
        if self.work_bytes >= COMPARE_FROM_BYTES[self.op]:
            chosen = self._fastest(records, by_default=False)
            if chosen is None:  # none within CANDIDATE_INSTRUCTIONS: those that passed it, with more
                passed = {c.kernel for c in self.tried if c.reason and c.reason.startswith(_PAST)}
                chosen = self._first([r for r in records if r.name in passed], "the first within "
                                     f"{LARGE_INSTRUCTIONS:,} instructions, by rank (none fits in "
                                     f"{CANDIDATE_INSTRUCTIONS:,})")
        else:
            small = COMPARE_FROM_BYTES[self.op] < math.inf
            chosen = self._first(records, "the first that fits, by rank (" + (
                f"outputs under {COMPARE_FROM_BYTES[self.op] // 1024} KiB are not compared)" if small else
                "not compared)"))
        return self._recorded(*(chosen or self._last_resort(records)))

    def _last_resort(self, records: list[KernelRecord]):
        """No candidate fits its budget: the fallback within the tracer's own budget; if even it passes that,
        every other candidate that takes the shape (those the default skips included), by rank. The fallback's
        error if none fits."""
        fallback = kernels.fallback(self.op)
        error = None
        for r in [fallback, *(r for r in records if r is not fallback)]:
            if (self.convention is not None and not r.conventions) or r.applies(self.plan, self.item):
                continue
            try:
                program, candidate = self._traced(r, self._default_setting(r), None)
            except ResizeKernelsError as failed:
                error = error or failed
                self.tried.append(Candidate(r.name, self._default_setting(r), reason=str(failed).split("; ")[0]))
                continue
            return (program, candidate), ("the fallback: no candidate fits its budget" if r is fallback else
                                          "the last resort: no candidate fits its budget, nor the fallback its own")
        raise error

    def named(self, record: KernelRecord) -> Program:
        """A named kernel, its schedule settings compared on larger outputs; its own error where it does not
        take the shape."""
        lines = record.settings(self.plan, self.item)
        several = len(lines) + len(lines[0]) > 2
        chosen = self._fastest([record], False) if several and self.work_bytes >= TUNE_FROM_BYTES else None
        if chosen is None:
            chosen = self._traced(record, lines[0][0], None), "named"
        return self._recorded(*chosen)

    def _fastest(self, records: list[KernelRecord], by_default: bool = True):
        """(Program, Candidate), rule of the (kernel, setting) with the lowest score, or None: the kernels' lines
        of settings in rounds (every line's first setting, then every line's second, ...); a line is given up
        once a setting scores worse than the one before or passes a budget (finer settings take more). Costing
        stops as soon as a pair cannot beat both the best so far and its line's setting before."""
        tune = self.work_bytes >= TUNE_FROM_BYTES
        lines = [[r, iter(line if tune else line[:1]), math.inf] for r in records if self._takes(r, by_default)
                 for line in r.settings(self.plan, self.item)[:None if tune else 1]]
        best = None
        while lines:
            for entry in list(lines):
                r, settings, before = entry  # before: the score of the line's setting before (inf: none known)
                setting = next(settings, _END)
                if setting is _END:
                    lines.remove(entry)
                    continue
                if self.spent >= SELECTION_INSTRUCTIONS and best is not None:
                    self.tried.append(Candidate(r.name, setting, reason=f"not tried: the selection's budget of "
                                                                         f"{SELECTION_INSTRUCTIONS:,} traced "
                                                                         f"instructions is spent"))
                    lines.remove(entry)
                    continue
                beat = best[1].score if best else math.inf
                got = self._attempt(r, setting, CANDIDATE_INSTRUCTIONS, cost=True,
                                    beat=max(beat, before) if before < math.inf else beat)
                score = got[1].score if got else math.inf
                if got and score < beat:
                    best = got
                # worse than the setting before (or failed after it), or past a budget: give the line up
                if score > before or (not got and self.tried[-1].reason.startswith(_GROWS)):
                    lines.remove(entry)
                entry[2] = score
        if best is None:
            return None
        costed = sum(c.modelled_us is not None for c in self.tried)
        return best, f"the fastest of {costed} on {' and '.join(SCORE_TARGETS)} (modelled)"

    def _first(self, records: list[KernelRecord], rule: str):
        """(Program, Candidate), rule of the first kernel (its default setting) that fits LARGE_INSTRUCTIONS."""
        for r in records:
            if not self._takes(r):
                continue
            got = self._attempt(r, self._default_setting(r), LARGE_INSTRUCTIONS)
            if got is not None:
                return got, rule
        return None

    def _attempt(self, record: KernelRecord, setting, budget: int, cost: bool = False, beat: float = math.inf):
        """(Program, Candidate) of one pair, or None with its reason kept: the one error policy. Costed, a pair is
        given up as soon as its modelled time shows its score cannot ``beat`` the best so far."""
        try:
            program, candidate = self._traced(record, setting, budget)
        except ResizeKernelsError as error:  # it does not apply, does not fit SBUF, or passes the budget
            reason = f"{_PAST} {budget:,} instructions" if isinstance(error, InstructionBudgetError) else \
                str(error).split("; ")[0]  # the message, without the fix it suggests to a caller naming it
            self.tried.append(Candidate(record.name, setting, reason=reason))
            return None
        self.spent += candidate.instructions
        if cost:
            if sum(d.dst.shape[0] for d in program.dmas()) > COST_MAX_ROWS:  # the partitions each DMA addresses
                self.tried.append(Candidate(record.name, setting, reason=f"{_SLOW} (its DMAs address more than "
                                                                         f"{COST_MAX_ROWS:,} rows)"))
                return None
            times, score = self._costed_before(program), 0.0  # settings that trace the same Program cost the same
            if not times and beat < math.inf:  # the engines' busy time alone may show it cannot beat the best
                bound = {t: busy_bound_us(program, t) for t in SCORE_TARGETS}
                if sum(us * target_params(t).peak_dma_gbps for t, us in bound.items()) > beat:
                    times_text = " and ".join(f"{us:,.1f} us on {t}" for t, us in bound.items())
                    self.tried.append(Candidate(record.name, setting, reason=f"{_SLOWER} (its busiest engine alone "
                                                                             f"takes {times_text})"))
                    return None
            for t in SCORE_TARGETS if not times else ():
                peak = target_params(t).peak_dma_gbps
                report = program_cost(program, t, stop_past_us=(beat - score) / peak)
                if report is None:
                    self.tried.append(Candidate(record.name, setting, reason=f"{_SLOWER} (costing stopped past "
                                                                             f"{(beat - score) / peak:,.1f} us on {t})"))
                    return None
                times[t], score = report.modelled_us, score + report.modelled_us * peak
            self.costed.setdefault(len(program.instructions), []).append([program, times, None])
            candidate = Candidate(record.name, setting, times, instructions=candidate.instructions)
        self.tried.append(candidate)
        return program, candidate

    def _costed_before(self, program: Program) -> dict:
        """The modelled times of an identical Program costed before (a copy), else an empty dict. Only Programs
        of as many instructions are compared, by a hash of their instructions (each hashed once)."""
        mine = None
        for entry in self.costed.get(len(program.instructions), ()):
            mine = mine or _fingerprint(program)
            entry[2] = entry[2] or _fingerprint(entry[0])
            if entry[2] == mine:
                return dict(entry[1])
        return {}

    def _traced(self, record: KernelRecord, setting, budget: int | None) -> tuple[Program, Candidate]:
        """The Program of one pair and its Candidate (not costed); the kernel's error where it fails."""
        keyword = "out_shape" if self.op == FORWARD else "in_shape"
        limit = tracer.MAX_INSTRUCTIONS if budget is None else budget
        if record.least_instructions(self.plan, self.item) > limit:  # past it for sure: no need to trace up to it
            raise tracer.budget_error(record.function.__name__, limit)
        program = trace(record.function, TensorSpec(self.shape, self.dtype), sources=self.sources,
                        max_instructions=budget, **{keyword: self.other},
                        **record.call_args(setting, self.convention))
        self.traced += len(program.instructions)
        return program, Candidate(record.name, setting, instructions=len(program.instructions))

    def _default_setting(self, record: KernelRecord):
        return record.settings(self.plan, self.item)[0][0]

    def _takes(self, record: KernelRecord, by_default: bool = True) -> bool:
        """Whether ``record`` is worth tracing for this problem, its reason kept where not: a convention it does not
        take, a shape it does not apply to, or (``by_default``) a shape the default does not try it on."""
        reason = f"computes the compiler's map on chip, not {self.convention.describe()}" if (
            self.convention is not None and not record.conventions) else record.applies(self.plan, self.item)
        reason = reason or (record.skipped_by_default(self.plan, self.item) if by_default else None)
        if reason:
            self.tried.append(Candidate(record.name, reason=reason))
        return not reason

    def _recorded(self, chosen: tuple, rule: str) -> Program:
        program, candidate = chosen
        if candidate not in self.tried:
            self.tried.append(candidate)
        rank = {r.name: n for n, r in enumerate(kernels.records(self.op))}
        tried = sorted(self.tried, key=lambda c: rank[c.kernel])  # by kernel, each in the order tried
        program.selection = Selection(self.op, candidate.kernel, candidate.setting, rule, tuple(tried))
        return program


def _fingerprint(program: Program) -> str:
    return hashlib.sha256("\n".join(map(repr, program.instructions)).encode()).hexdigest()


_END = object()
#: How a candidate's reason begins when it passed its instruction budget, or the rows costing takes: budgets that
#: the finer settings of its line pass too.
_PAST, _SLOW = "more than", "too slow to cost"
#: How a candidate's reason begins when its costing showed it cannot beat the best so far.
_SLOWER = "modelled slower than the best so far"
_GROWS = (_PAST, _SLOW)
