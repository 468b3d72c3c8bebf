"""One registration record per kernel: every list of kernels, and the selection stage, is derived from them.

A kernel file ends with ``register(KernelRecord(...))``; the package imports every kernel module (``__init__``),
so a new kernel is one new file. A record says what selection (``resize_kernels.select``) needs to know without
tracing: the op, the function, where it applies, the schedule settings it may try, whether the default considers
it, and whether it fits every accepted shape by construction (the fallback).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import InvalidValueError

#: The ops kernels implement, by the names the API uses.
FORWARD, GRAD = "resize_nearest", "resize_nearest_grad"
#: The name of the default, which is no kernel but the selection stage choosing one per shape.
AUTO = "auto"


def _always(plan, item: int) -> None:
    return None


def _none(plan, item: int) -> int:
    return 0


def per_tile(instructions: int, across_batches: bool = False) -> Callable:
    """A ``least_instructions`` for a kernel that unrolls a loop per tile of 128 output pixels (of each batch, or
    of the batches together) and emits at least ``instructions`` in each."""
    def least(plan, item: int) -> int:
        n, out_h, out_w, _ = plan.out_shape
        return instructions * (-(-n * out_h * out_w // 128) if across_batches else n * -(-out_h * out_w // 128))
    return least


@dataclass(frozen=True)
class Knob:
    """A schedule setting that names itself (``Knob(16, "rows per partition")`` reads "16 rows per partition"),
    for kernels whose knob is not the rows kernels' column-chunk factor."""

    value: int
    what: str

    def __str__(self) -> str:
        return f"{self.value} {self.what}"


@dataclass(frozen=True)
class KernelRecord:
    """A kernel as selection and every list of kernels see it.

    ``applies(plan, item)`` and ``skipped_by_default(plan, item)`` return None or the reason (a sentence):
    the first why the kernel does not take the shape at all, the second why the default does not try it though
    it applies (it would take too many instructions to be worth tracing, say). ``settings(plan, item)`` gives
    lines of schedule settings (each line by growing chunk factor: a search stops a line once a setting does
    worse than the one before); the first setting of the first line is the kernel's default, ``(None,)`` a
    kernel without knobs. ``least_instructions(plan, item)``: a lower bound on the instructions it traces
    (one loop per tile: ``per_tile``), so that selection refuses a shape past the tracer's budget without tracing
    up to it (tests/test_select.py checks the bounds against traced counts). ``rank`` orders the op's default candidates (the first tried, and the first among
    ties); None keeps a kernel out of them (baselines). ``fallback``: SBUF per partition bounded whatever the
    shape, taken when no candidate fits its budget (``select``'s last resort; its instructions still grow with
    the shape, so where even it passes the tracer's budget the other candidates are tried in full).
    """

    name: str
    op: str
    function: Callable
    rank: int | None
    conventions: bool = False
    applies: Callable = _always
    skipped_by_default: Callable = _always
    settings: Callable = lambda plan, item: ((None,),)
    fallback: bool = False
    least_instructions: Callable = _none

    def call_args(self, setting, convention) -> dict:
        """The keyword arguments beyond the op's own that trace this kernel with ``setting`` and ``convention``."""
        return {**({} if setting is None else {"schedule": setting}),
                **({} if convention is None else {"convention": convention})}


_RECORDS: dict[tuple[str, str], KernelRecord] = {}


def register(record: KernelRecord) -> KernelRecord:
    """Add ``record`` (once: a second record of one op and name is a mistake in the package)."""
    key = (record.op, record.name)
    if key in _RECORDS or record.name == AUTO:
        raise InvalidValueError(f"kernel {record.name!r} of {record.op} is registered twice (or named {AUTO!r}, "
                                f"the default's name); give it another name")
    _RECORDS[key] = record
    return record


def records(op: str) -> list[KernelRecord]:
    """The op's registered kernels: default candidates by rank, then the others by name."""
    mine = [r for r in _RECORDS.values() if r.op == op]
    return sorted(mine, key=lambda r: (r.rank is None, r.rank or 0, r.name))


def names(op: str) -> tuple[str, ...]:
    """The names ``kernel=`` takes for ``op``: "auto" (selection), then every registered kernel."""
    return (AUTO, *(r.name for r in records(op)))


def convention_names(op: str) -> tuple[str, ...]:
    """The names that take a convention other than the compiler's: "auto" and the kernels whose maps are tables."""
    return (AUTO, *(r.name for r in records(op) if r.conventions))


def candidates(op: str) -> list[KernelRecord]:
    """The kernels the default tries for ``op``, by rank."""
    return [r for r in records(op) if r.rank is not None]


def fallback(op: str) -> KernelRecord:
    """The op's kernel that fits every accepted shape by construction."""
    (record,) = [r for r in records(op) if r.fallback]
    return record


def record(op: str, name, also: tuple = ()) -> KernelRecord | None:
    """The record ``name`` names (None for "auto"); an unknown name is an error listing the choices (and
    ``also``, other names the caller takes)."""
    if name == AUTO:
        return None
    if isinstance(name, str) and (op, name) in _RECORDS:
        return _RECORDS[op, name]
    raise InvalidValueError(f"{op} has no kernel {name!r}; choose one of {', '.join(map(repr, [*names(op), *also]))}")
