"""The verifier: proves, shape by shape, that a kernel's gather is the reference map.

It traces the kernel and runs it on an int32 image whose every element holds its
own flat index, so the output says exactly where each element was read from. For
a narrower dtype the index goes in pieces: the image is run once per 8 or 16 bits
of it, each piece's bits viewed as the dtype (uint8 planes as uint8 or int8, 16-bit
planes as float16 or bfloat16, NaN and subnormal patterns among them), and the
pieces read back make the index again.
Comparing with the reference resize of that image checks every output element of
that shape: a proof for the shape, not a sample. A kernel that refuses a shape
the contract accepts (``"strided"`` takes integer ratios only) is reported as not
applicable to it, not as wrong. The gradient kernel is checked the same way, bit
for bit against the reference gradient, on two dy (see ``verify_grad``).
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
import sys
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import contract, semantics
from .api import kernel_variant, named_convention, nhwc_out_shape, trace_resize, trace_resize_grad
from .display import html_table as _html_table
from .errors import InvalidTypeError, InvalidValueError, ResizeKernelsError, plural
from .kernels import FORWARD, GRAD
from .machine.errors import OutOfBoundsError
from .machine.memory import check_host_memory
from .machine.simulator import Executable

MAX_LISTED = 10
#: File formats ``plot_failures`` writes, by file name suffix.
PLOT_FORMATS = ("png", "pdf", "svg")


@dataclass
class VerifyReport:
    """What the verifier found for one kernel and shape; ``ok`` only if every element is right.

    A kernel that does not take the shape (``not_applicable`` says why) checks
    nothing: ``ok`` is False, ``applicable`` False, ``wrong_pixels`` None.
    """

    kernel: str
    in_shape: tuple
    out_shape: tuple
    ok: bool
    wrong_pixels: int | None  # None when the kernel stopped on an out-of-bounds read
    out_of_bounds: str | None = None
    first_wrong: list = field(default_factory=list)  # ((b, oh, ow), expected (b, h, w), got (b, h, w) or None)
    not_applicable: str | None = None  # why the kernel does not take this shape
    op: str = FORWARD  # or GRAD: then pixels are dx's, and first_wrong holds ((b, h, w), expected, got) values
    convention: str | None = None  # the index convention checked (IndexConvention.describe()), None: the compiler's
    dtype: str = "int32"  # the Program's dtype (the index image's pieces, viewed as it)
    wrong_rows: tuple = ()  # the rows (h) of the output (dx for GRAD) that hold wrong pixels
    wrong_columns: tuple = ()  # and their columns (w)

    @property
    def applicable(self) -> bool:
        return self.not_applicable is None

    def __repr__(self) -> str:
        """One line (``str`` lists the wrong pixels)."""
        return f"<VerifyReport {str(self).splitlines()[0]}>"

    def _repr_html_(self) -> str:
        return _html_table([("kernel", self.kernel), ("shape", _shapes(self.in_shape, self.out_shape)),
                            ("result", str(self).splitlines()[0].split(": ", 2)[-1])]
                           + [("first wrong", line.strip()) for line in str(self).splitlines()[1:]
                              if line.startswith(("  output ", "  dx "))][:3])

    def __str__(self) -> str:
        grad = self.op == GRAD
        head = (f"{'gradient ' if grad else ''}kernel {self.kernel!r}"
                f"{f' ({self.convention})' if self.convention else ''}{_dtype_label(self.dtype)}: "
                f"NHWC {'x'.join(map(str, self.in_shape))} -> "
                f"{'x'.join(map(str, self.out_shape))}: ")
        total = math.prod((self.in_shape if grad else self.out_shape)[:3])
        pixels = plural(total, "input-gradient pixel" if grad else "output pixel")
        if self.ok:
            return head + f"exact ({pixels} checked)"
        if not self.applicable:
            return head + f"not applicable: {self.not_applicable}"
        if self.out_of_bounds:
            return head + f"NOT exact: out-of-bounds read\n  {self.out_of_bounds}"
        lines = [head + f"NOT exact: {self.wrong_pixels:,} of {pixels} wrong"]
        for out, want, got in self.first_wrong:
            if grad:
                lines.append(f"  dx {_nhw(out)} channel 0: expected {want}, got {got}")
                continue
            got_text = "unwritten or a foreign element" if got is None else f"source {_nhw(got)}"
            lines.append(f"  output {_nhw(out)}: expected source {_nhw(want)}, got {got_text}")
        if self.wrong_pixels > len(self.first_wrong):
            lines.append(f"  ... and {plural(self.wrong_pixels - len(self.first_wrong), 'more wrong pixel')}")
        if self.wrong_pixels > 1 and self.wrong_columns:
            shape, what = (self.in_shape, "dx") if grad else (self.out_shape, "output")
            lines.append(f"  the {self.wrong_pixels:,} wrong pixels lie in "
                         f"{plural(len(self.wrong_columns), what + ' column')} of {shape[2]:,} "
                         f"(w={_cut_list(self.wrong_columns)}), on {plural(len(self.wrong_rows), what + ' row')} of "
                         f"{shape[1]:,} (h={_cut_list(self.wrong_rows)})")
        return "\n".join(lines)


def _cut_list(items, limit: int = 10) -> str:
    """``items`` joined by commas, the first ``limit`` of them and "... and K more"."""
    items = list(items)
    more = f", ... and {len(items) - limit:,} more" if len(items) > limit else ""
    return ", ".join(map(str, items[:limit])) + more


def _where_wrong(bad: np.ndarray) -> dict:
    """The rows and columns of a (batch, h, w) mask of wrong pixels, as VerifyReport keeps them."""
    _, h, w = np.nonzero(bad)
    return {"wrong_rows": tuple(np.unique(h).tolist()), "wrong_columns": tuple(np.unique(w).tolist())}


def _shapes(in_shape, out_shape) -> str:
    return "x".join(map(str, in_shape)) + " -> " + "x".join(map(str, out_shape))


def _nhw(position) -> str:
    """A pixel's (batch, row, column) with its axis names: (n=0, h=1, w=0)."""
    return "(" + ", ".join(f"{axis}={int(i)}" for axis, i in zip("nhw", position)) + ")"


def verify(in_shape, out_shape, kernel: str | None = None, *, coordinate_transformation_mode: str | None = None,
           nearest_mode: str | None = None, scales=None, convention=None, dtype="int32") -> VerifyReport:
    """Check every output element of ``kernel`` for NHWC ``in_shape`` -> ``out_shape`` (NHWC, or (out_h, out_w),
    or an int: square) against the reference.

    Shapes outside the contract raise; a shape the contract accepts but the
    kernel refuses (InvalidValueError while tracing) gives a not-applicable report.
    The map's convention is named as in ``rk.resize_nearest`` (None: the
    compiler's); the reference is then ``semantics.convention_reference``.
    ``dtype``: the Program's dtype (any machine dtype; the kernels of 1-, 2- and
    4-byte elements differ), proven on the index's pieces (see the module's text).
    """
    in_shape, out_shape = contract.resize_shapes("verify", in_shape, nhwc_out_shape(in_shape, out_shape))  # < 2**31 elements: int32 labels
    name = kernel_variant("resize_nearest", kernel)
    convention = named_convention("verify", convention, coordinate_transformation_mode, nearest_mode, scales)
    label = convention.describe() if convention is not None and not convention.is_default else None
    dtype = contract.resize_dtype("verify", dtype)
    n, in_h, in_w, c = in_shape
    out_hw = out_shape[1:3]
    report = functools.partial(VerifyReport, name, in_shape, out_shape, convention=label, dtype=dtype.name)
    try:
        program = trace_resize(in_shape, out_hw, dtype, name, cached=False, sources=False,  # once: keep nothing
                               convention=convention)
    except InvalidValueError as e:
        return report(False, None, not_applicable=str(e))
    except OutOfBoundsError as e:  # caught when traced (a static access pattern past its tile): the kernel's bug
        return report(False, None, out_of_bounds=str(e))
    # the index image and its pieces, the output, the reference and the simulator's memory (peak RSS measured at
    # 2.3x the int32 output, 1x4x4x64 -> 1000x1000)
    check_host_memory(4 * (2 * math.prod(in_shape) + 3 * math.prod(out_shape)),
                      f"verifying {'x'.join(map(str, in_shape))} -> {'x'.join(map(str, out_shape))}")
    labels = np.arange(math.prod(in_shape), dtype=np.int32).reshape(in_shape)
    try:
        got = run_pieces(Executable(program, gather=False), labels, dtype)
    except OutOfBoundsError as e:
        return report(False, None, out_of_bounds=str(e))
    want = semantics.convention_reference(labels, out_hw, convention) if label else \
        semantics.resize_nearest_reference(labels, out_hw)
    bad = (got != want).any(axis=-1)
    wrong = int(bad.sum())
    first = []
    for b, oh, ow in np.argwhere(bad)[:MAX_LISTED].tolist():
        expected = np.unravel_index(int(want[b, oh, ow, 0]) // c, (n, in_h, in_w))
        g = got[b, oh, ow]
        pix = int(g[0]) // c
        consistent = g[0] >= 0 and g[0] % c == 0 and np.array_equal(g, np.arange(c) + g[0]) and pix < n * in_h * in_w
        source = tuple(map(int, np.unravel_index(pix, (n, in_h, in_w)))) if consistent else None
        first.append(((b, oh, ow), tuple(map(int, expected)), source))
    return report(wrong == 0, wrong, first_wrong=first, **_where_wrong(bad))


def run_pieces(executable, labels: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The int32 index image run through ``executable`` (a Program of ``dtype``): whole for a 4-byte dtype, else
    in pieces of 8 or 16 bits, each viewed as ``dtype``, and put back together from the outputs' bits."""
    bits = 8 * dtype.itemsize
    if bits == 32:
        (got,) = executable.run([labels.view(dtype)])
        return got.view(np.int32)
    unsigned = np.dtype(f"uint{bits}")
    got = None
    for shift in range(0, max(1, int(labels.max()).bit_length()), bits):
        piece = ((labels >> shift) & (2**bits - 1)).astype(unsigned)
        (out,) = executable.run([piece.view(dtype)])
        part = out.view(unsigned).astype(np.int32) << shift
        got = part if got is None else got | part
    return got


def _dtype_label(dtype: str) -> str:
    return "" if dtype == "int32" else f" ({dtype})"


def verify_grad(in_shape, out_shape, kernel: str | None = None, *, coordinate_transformation_mode: str | None = None,
                nearest_mode: str | None = None, scales=None, convention=None) -> VerifyReport:
    """Check every element of the gradient kernel's dx for the forward NHWC ``in_shape`` -> ``out_shape`` (NHWC,
    or (out_h, out_w), or an int: square).

    The kernel runs on two float32 dy of shape ``out_shape``, and dx must equal
    ``semantics.resize_nearest_grad_reference`` bit for bit on both: distinct
    integers 1, 2, 3, ... (a contribution sent to the wrong pixel, dropped or
    added twice changes a sum) and random normals (adding in another order changes
    the rounding). ``first_wrong`` lists ((b, h, w), expected, got) for channel 0.
    The forward map's convention is named as in ``verify``.
    """
    in_shape, out_shape = contract.resize_shapes("verify_grad", in_shape, nhwc_out_shape(in_shape, out_shape))
    name = kernel_variant(GRAD, kernel)
    convention = named_convention("verify_grad", convention, coordinate_transformation_mode, nearest_mode, scales)
    label = convention.describe() if convention is not None and not convention.is_default else None
    try:
        program = trace_resize_grad(out_shape, in_shape[1:3], "float32", name, cached=False, sources=False,
                                    convention=convention)
    except InvalidValueError as e:
        return VerifyReport(name, in_shape, out_shape, False, None, not_applicable=str(e), op=GRAD, convention=label)
    except OutOfBoundsError as e:  # caught when traced: the kernel's bug, reported like one caught when run
        return VerifyReport(name, in_shape, out_shape, False, None, out_of_bounds=str(e), op=GRAD, convention=label)
    size = math.prod(out_shape)
    # two dy, dx, its reference and the simulator's memory (peak RSS measured at 3.3x dy for dy 1x1000x1000x64 and
    # 6.2x dx for dx 1x1000x1000x64)
    check_host_memory(4 * (4 * size + 7 * math.prod(in_shape)),
                      f"verifying the gradient of {'x'.join(map(str, in_shape))} -> {'x'.join(map(str, out_shape))}")
    labels = np.arange(1, size + 1, dtype=np.float32).reshape(out_shape)
    normals = np.random.default_rng(size).standard_normal(out_shape, dtype=np.float32)
    executable, bad, first_wrong = Executable(program, gather=False), np.zeros(in_shape[:3], bool), []
    try:
        for dy in (labels, normals):
            (got,) = executable.run([dy])
            want = semantics.resize_nearest_grad_reference(dy, in_shape[1:3], convention)
            wrong = (got.view(np.uint32) != want.view(np.uint32)).any(axis=-1)
            first_wrong = first_wrong or [(tuple(map(int, p)), float(want[tuple(p)][0]), float(got[tuple(p)][0]))
                                          for p in np.argwhere(wrong)[:MAX_LISTED]]
            bad |= wrong
    except OutOfBoundsError as e:
        return VerifyReport(name, in_shape, out_shape, False, None, out_of_bounds=str(e), op=GRAD, convention=label)
    wrong = int(bad.sum())
    return VerifyReport(name, in_shape, out_shape, wrong == 0, wrong, first_wrong=first_wrong, op=GRAD,
                        convention=label, **_where_wrong(bad))


# -- sweeps ------------------------------------------------------------------------------------------

def axis_shapes(axis: str, in_size: int, out_size: int, kernel: str | None = None) -> tuple[tuple, tuple]:
    """The 2-D NHWC shapes of a sweep along ``axis``; the other axis resizes 2 -> 3 (w) or 3 -> 1 (h).

    A w sweep keeps three output rows reading source rows 0, 0, 1: the seed's
    defects couple rows and columns (a flat position's row comes from a
    reciprocal multiply by the width), and a pixel pushed into the wrong row
    then reads a different source pixel (or past the image), where an identity
    row map would hide it. An h sweep keeps one output column, so a tile holds
    128 rows. Small other axes keep the programs, and so the sweep, short.
    ``kernel="strided"`` takes integer ratios only, and 2 -> 3 is none: its w
    sweep resizes the height 2 -> 4 (source rows 0, 0, 1, 1) instead, so that
    the width's ratio decides (3 -> 1 already is one).
    """
    if axis == "w":
        return (1, 2, in_size, 1), (1, 4 if kernel == "strided" else 3, out_size, 1)
    if axis == "h":
        return (1, in_size, 3, 1), (1, out_size, 1, 1)
    raise InvalidValueError(f"sweep axis must be 'h' or 'w', got {axis!r}")


@dataclass
class SweepResult:
    """Every (in, out) pair of one axis in ``low``..``n``, checked; the failing pairs and their wrong-pixel counts.

    Pairs the kernel does not take are in ``not_applicable``, neither exact nor
    failures; ``reason`` is the kernel's word on the first of them. The result
    is plain data: ``to_dict``/``from_dict`` (and so JSON) keep all of it.
    """

    kernel: str
    axis: str
    n: int
    failures: list  # (in, out, wrong pixels or None for an out-of-bounds read)
    not_applicable: list = field(default_factory=list)  # (in, out)
    reason: str | None = None
    low: int = 1
    first_wrong: dict = field(default_factory=dict)  # (in, out) -> ((b, oh, ow), expected (b, h, w), got or None)
    seconds: float = 0.0  # wall time of the run that returned this result
    op: str = FORWARD  # or GRAD (a gradient kernel's sweep)
    worker_seconds: float = 0.0  # the workers' time on every chunk, those of earlier runs of a checkpoint too
    convention: str | None = None  # IndexConvention.key of the map checked; None: the compiler's
    dtype: str = "int32"  # the Programs' dtype

    @property
    def checked(self) -> int:
        return (self.n - self.low + 1) ** 2

    def __repr__(self) -> str:
        """One line (``summary()`` lists the failing pairs)."""
        return f"<SweepResult {self.summary().splitlines()[0]} [{self.seconds:.1f} s]>"

    def _repr_html_(self) -> str:
        head, *rest = self.summary().splitlines()
        return _html_table([("kernel", self.kernel), ("axis", self.axis), ("sizes", f"{self.low}..{self.n}"),
                            ("pairs", f"{self.checked:,}"), ("result", head.split(": ")[-1]),
                            ("time", f"{self.seconds:.1f} s")] + [("", line.strip()) for line in rest[:6]])

    def _repr_png_(self) -> bytes | None:
        """The sweep as ``plot_failures`` draws it, small (a notebook's picture); None without matplotlib."""
        from .display import draw_failures, png_bytes

        return png_bytes(lambda fig: draw_failures(fig, [self]), (5, 4.6))

    @property
    def exact(self) -> int:
        return self.checked - len(self.failures) - len(self.not_applicable)

    def to_dict(self) -> dict:
        """A JSON-ready dict of the whole result."""
        return {"op": self.op, "kernel": self.kernel, "axis": self.axis, "sizes": [self.low, self.n], "checked": self.checked,
                "exact": self.exact, "seconds": self.seconds, "worker_seconds": self.worker_seconds,
                "failures": [[i, o, w, _listed(self.first_wrong.get((i, o)))] for i, o, w in self.failures],
                "not_applicable": [list(p) for p in self.not_applicable], "reason": self.reason,
                "convention": self.convention, "dtype": self.dtype}

    @classmethod
    def from_dict(cls, d: dict) -> "SweepResult":
        tupled = _tupled
        low, n = d["sizes"]
        return cls(d["kernel"], d["axis"], n, [(i, o, w) for i, o, w, _ in d["failures"]],
                   [tuple(p) for p in d["not_applicable"]], d["reason"], low,
                   {(i, o): tupled(f) for i, o, _, f in d["failures"] if f is not None}, d["seconds"],
                   d.get("op", FORWARD), d.get("worker_seconds", 0.0), d.get("convention"), d.get("dtype", "int32"))

    def summary(self, listed: int = 8) -> str:
        head = (f"{'gradient ' if self.op == GRAD else ''}kernel {self.kernel!r}"
                f"{f' ({self.convention})' if self.convention else ''}{_dtype_label(self.dtype)}, axis {self.axis}: "
                f"{plural(self.checked, '(in, out) pair')} in {self.low}..{self.n}: ")
        if not self.failures and not self.not_applicable:
            return head + "all exact"
        oob = sum(w is None for _, _, w in self.failures)
        parts = [f"{self.exact:,} exact", f"{len(self.not_applicable):,} not applicable"] if self.not_applicable else []
        if self.failures:
            parts.append(f"{len(self.failures):,} not exact ({oob:,} read out of bounds)")
        lines = [head + ", ".join(parts)]
        if self.not_applicable:
            i, o = self.not_applicable[0]
            lines.append(f"  not applicable, e.g. {i} -> {o}: {self.reason}")
        if not self.failures:
            return "\n".join(lines)
        outs = sorted({o for _, o, _ in self.failures})
        lines.append(f"  output sizes affected ({len(outs)}): " + _cut_list(outs, 40))
        for i, o, w in self.failures[:listed]:
            lines.append(f"  {i} -> {o}: " + ("out-of-bounds read" if w is None else plural(w, "wrong pixel")))
        if len(self.failures) > listed:
            lines.append(f"  ... and {plural(len(self.failures) - listed, 'more pair')} not exact")
        return "\n".join(lines)


def _listed(x):
    return [_listed(v) for v in x] if isinstance(x, tuple) else x


def _tupled(x):
    return tuple(map(_tupled, x)) if isinstance(x, list) else x


#: (in, out) pairs one chunk of a sweep checks at least: seconds of work, shipped as a few integers.
CHUNK_PAIRS = 256
#: Chunks a sweep makes at most by default (larger chunks for a larger sweep: a 1..4096 axis takes chunks of
#: one in size and all 4,096 out sizes, about 8 s each, so that its checkpoint holds 4,096 lines, not 65,536).
MAX_CHUNKS = 1024
#: Times a chunk is tried again after its worker was lost (a killed process, a lost Dask worker).
RETRIES = 3
#: Seconds a sweep waits for its next chunk to finish before it takes the unfinished ones for lost (a chunk takes
#: seconds: about 10 s at in sizes past 1,024 of a 1..4096 axis).
CHUNK_TIMEOUT = 600.0
#: Seconds a sweep waits on its chunks at a time: Ctrl-C delivered to another thread (the pool's) is only seen
#: when the main thread wakes.
WAKE_SECONDS = 0.25
#: The largest checkpoint a sweep reads (a 1..4096 sweep of both axes writes about 3 MB).
MAX_CHECKPOINT_BYTES = 256 << 20


@dataclass(frozen=True)
class Chunk:
    """A block of a sweep: in sizes ``ins[0]..ins[1]`` by out sizes ``outs[0]..outs[1]`` on one axis."""

    kernel: str
    axis: str
    ins: tuple[int, int]
    outs: tuple[int, int]
    op: str = FORWARD  # or GRAD
    convention: str | None = None  # IndexConvention.key; None: the compiler's map
    dtype: str = "int32"  # the Programs' dtype (forward sweeps)

    @property
    def pairs(self) -> int:
        return (self.ins[1] - self.ins[0] + 1) * (self.outs[1] - self.outs[0] + 1)

    def __str__(self) -> str:
        return f"{self.axis}: in {self.ins[0]}..{self.ins[1]}, out {self.outs[0]}..{self.outs[1]}"


@dataclass
class ChunkResult:
    failures: list
    not_applicable: list
    reason: str | None
    first_wrong: dict
    seconds: float = 0.0  # the worker's time on the chunk(s)

    def add(self, other: "ChunkResult") -> None:
        """Merge another chunk's findings into this one."""
        self.failures += other.failures
        self.not_applicable += other.not_applicable
        self.reason = self.reason or other.reason
        self.first_wrong.update(other.first_wrong)
        self.seconds += other.seconds

    def to_dict(self) -> dict:
        return {"failures": [list(f) for f in self.failures], "not_applicable": [list(p) for p in self.not_applicable],
                "reason": self.reason, "first_wrong": [[i, o, _listed(f)] for (i, o), f in self.first_wrong.items()],
                "seconds": self.seconds}

    @classmethod
    def from_dict(cls, d: dict) -> "ChunkResult":
        return cls([tuple(f) for f in d["failures"]], [tuple(p) for p in d["not_applicable"]], d["reason"],
                   {(i, o): _tupled(f) for i, o, f in d["first_wrong"]}, d["seconds"])


def check_chunk(chunk: Chunk) -> ChunkResult:
    """Verify every pair of ``chunk`` (what a sweep's worker runs)."""
    t0 = time.perf_counter()
    result = ChunkResult([], [], None, {})
    convention = semantics.IndexConvention.from_key(chunk.convention) if chunk.convention else None
    check = (verify_grad if chunk.op == GRAD else
             functools.partial(verify, dtype=chunk.dtype) if chunk.dtype != "int32" else verify)
    for i in range(chunk.ins[0], chunk.ins[1] + 1):
        for o in range(chunk.outs[0], chunk.outs[1] + 1):
            report = check(*axis_shapes(chunk.axis, i, o, chunk.kernel), chunk.kernel, convention=convention)
            if not report.applicable:
                result.not_applicable.append((i, o))
                result.reason = result.reason or report.not_applicable
            elif not report.ok:
                result.failures.append((i, o, report.wrong_pixels))
                if report.first_wrong:
                    result.first_wrong[(i, o)] = report.first_wrong[0]
    result.seconds = time.perf_counter() - t0
    return result


def sweep_chunks(kernel: str, axis: str, low: int, n: int, pairs: int = CHUNK_PAIRS, op: str = FORWARD,
                 convention: str | None = None, dtype: str = "int32") -> list[Chunk]:
    """The sweep ``low..n`` cut into chunks of about ``pairs`` pairs: one in size by a run of out sizes."""
    width = max(1, min(n - low + 1, pairs))
    return [Chunk(kernel, axis, (i, i), (o, min(n, o + width - 1)), op, convention, dtype)
            for i in range(low, n + 1) for o in range(low, n + 1, width)]


class SweepError(InvalidValueError):
    """A sweep whose chunk kept failing for a reason other than the kernel (its workers kept dying)."""


def _ignore_interrupt() -> None:
    """Sweep workers leave Ctrl-C to the parent, which ends the pool (so no worker prints a traceback)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _check_count(what: str, value, low: int, high: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        bound = f"an integer in {low}..{high}" if high is not None else f"an integer >= {low}"
        raise InvalidValueError(f"{what} requires {bound}, got {value!r}")


def sweep_range(sizes) -> tuple[int, int]:
    """(low, high) of a sweep's sizes: n means 1..n; (low, high) or range(low, high + 1) as given."""
    if isinstance(sizes, range) and sizes.step == 1 and len(sizes):
        sizes = (sizes.start, sizes.stop - 1)
    if isinstance(sizes, int) and not isinstance(sizes, bool):
        sizes = (1, sizes)
    if (not isinstance(sizes, tuple) or len(sizes) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in sizes)
            or not 1 <= sizes[0] <= sizes[1] < semantics.MAX_DIM):
        raise InvalidValueError(f"sweep requires sizes n (meaning 1..n) or (low, high) with 1 <= low <= high < "
                                f"{semantics.MAX_DIM} (sizes stay below 2**24), got {sizes!r}")
    return sizes


def sweep(n, axis: str = "w", kernel: str | None = None, jobs: int = 1, progress: bool = False,
          executor=None, chunk_pairs: int | None = None, op: str = FORWARD, checkpoint=None,
          convention: semantics.IndexConvention | None = None, dtype="int32",
          chunk_timeout: float = CHUNK_TIMEOUT) -> SweepResult:
    """Verify every (in, out) pair of sizes ``n`` (1..n, or (low, high)) on one axis.

    ``op``: FORWARD ("resize_nearest", ``verify``) or GRAD ("resize_nearest_grad",
    ``verify_grad``, with a gradient kernel's name).

    The pairs go out in chunks (a few integers each) to ``executor``, any
    ``concurrent.futures.Executor`` (a Dask cluster's ``client.get_executor()``
    too), or else to a pool of ``jobs`` local processes. A chunk whose worker
    is lost is tried again (up to RETRIES times) while the executor still
    takes work; where it does not (a broken pool, a closed client), SweepError
    names the chunks lost. ``chunk_timeout``: seconds to wait for the next chunk
    to finish before the unfinished ones count as lost. Results merge into one
    report.
    ``checkpoint``: a file (``Checkpoint``) that records each finished chunk; the
    chunks it already holds (checked by this code) are not checked again, so a
    long sweep that was stopped resumes where it stopped. ``chunk_pairs``: pairs
    per chunk (None: at least CHUNK_PAIRS, and at most MAX_CHUNKS chunks).
    ``convention``: the map to prove (``semantics.IndexConvention`` without
    scales, which fix the sizes; None: the compiler's). ``dtype``: the forward
    Programs' dtype (``verify``'s; gradients are float32).
    """
    low, n = sweep_range(n)
    _check_count("sweep's jobs", jobs, 1)
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise InvalidTypeError(f"sweep requires executor to be a concurrent.futures.Executor (or a Dask client's "
                               f"get_executor()), got {type(executor).__name__}")
    if isinstance(chunk_timeout, bool) or not isinstance(chunk_timeout, (int, float)) or not chunk_timeout > 0:
        raise InvalidValueError(f"sweep requires chunk_timeout in seconds, a number > 0, got {chunk_timeout!r}")
    if chunk_pairs is None:
        chunk_pairs = max(CHUNK_PAIRS, (n - low + 1) ** 2 // MAX_CHUNKS)
    _check_count("sweep's chunk_pairs", chunk_pairs, 1)
    axis_shapes(axis, 1, 1)
    if op not in (FORWARD, GRAD):
        raise InvalidValueError(f"sweep requires op {FORWARD!r} or {GRAD!r}, got {op!r}")
    name = kernel_variant(op, kernel)
    if convention is not None and not isinstance(convention, semantics.IndexConvention):
        raise InvalidValueError(f"sweep requires convention as a semantics.IndexConvention or None, "
                                f"got {type(convention).__name__}")
    if convention is not None and convention.scales != (None, None):
        raise InvalidValueError(f"sweep requires a convention without scales (a scale fixes the output size), "
                                f"got scales {convention.scales}")
    key = convention.key if convention is not None and not convention.is_default else None
    dtype = contract.resize_dtype("sweep", dtype).name
    if op == GRAD and dtype != "int32":
        raise InvalidValueError(f"sweep of a gradient kernel takes no dtype (its dy are float32), got dtype {dtype!r}")
    chunks = sweep_chunks(name, axis, low, n, chunk_pairs, op, key, dtype)
    record = Checkpoint(checkpoint) if checkpoint is not None else None
    merged = ChunkResult([], [], None, {})
    total, resumed = len(chunks), []
    if record:
        before = record.load()
        resumed = [c for c in chunks if c in before]
        for chunk in resumed:
            merged.add(before[chunk])
        chunks = [c for c in chunks if c not in before]
        if record.stale and progress:
            print(f"{record.path}: {plural(record.stale, 'chunk')} checked by other code (the kernels, tracer or "
                  f"machine model changed since) {'does' if record.stale == 1 else 'do'} not count", file=sys.stderr)
        if resumed and progress:
            print(f"{name}/{axis} resumed: {len(resumed):,} of {plural(total, 'chunk')} from {record.path}",
                  file=sys.stderr)
    done_pairs = sum(c.pairs for c in resumed)
    bar = _progress(done_pairs + sum(c.pairs for c in chunks), f"{name}/{axis}", initial=done_pairs) \
        if progress and chunks else None
    jobs = max(1, min(jobs, os.cpu_count() or 1, len(chunks)))
    t0 = time.perf_counter()

    def done(chunk, r: ChunkResult):
        merged.add(r)
        record and record.append(chunk, r)
        bar and bar.update(chunk.pairs)

    try:
        if executor is None and jobs == 1:
            for chunk in chunks:
                done(chunk, check_chunk(chunk))
        else:
            _run_chunks(chunks, executor, jobs, done, float(chunk_timeout))
    finally:
        bar and bar.close()
    return SweepResult(name, axis, n, sorted(merged.failures), sorted(merged.not_applicable), merged.reason, low,
                       merged.first_wrong, time.perf_counter() - t0, op, merged.seconds, key, dtype)


#: What a sweep's proof depends on: the reference, the contract, the kernels, the tracer and the machine model.
#: A checkpoint's chunk counts only for code whose sources hash to the same fingerprint.
PROOF_SOURCES = ("semantics.py", "contract.py", "intmath.py", "select.py", "kernels", "machine", "nki")


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the sources in PROOF_SOURCES (16 hex digits), as a checkpoint records it."""
    import hashlib

    root, digest = Path(__file__).parent, hashlib.sha256()
    for name in PROOF_SOURCES:
        for path in sorted((root / name).rglob("*.py")) if (root / name).is_dir() else [root / name]:
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


class Checkpoint:
    """A sweep's record of finished chunks: a JSON-lines file, one chunk and its findings per line, appended as
    chunks finish. A line cut short (the sweep was killed while writing it) is ignored: that chunk runs again.
    Each line carries the code's fingerprint (``code_fingerprint``): a chunk checked by other code (a kernel
    changed since) does not count, and runs again, so that a sweep resumed across sessions proves one code."""

    def __init__(self, path):
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidTypeError(f"a sweep checkpoint requires a file path, got {type(path).__name__}")
        path = Path(path)
        if not path.parent.is_dir() or (path.exists() and not path.is_file()):
            raise InvalidValueError(f"a sweep checkpoint requires a regular file in an existing directory, got "
                                    f"{str(path)!r}")
        self.path, self._cut, self.stale = path, False, 0

    def load(self) -> dict:
        """{Chunk: ChunkResult} of every complete line of this code (none if the file does not exist yet);
        ``stale`` counts the lines of other code."""
        import json

        done, code = {}, code_fingerprint()
        if not self.path.exists():
            return done
        with open(self.path) as f:
            text = f.read(MAX_CHECKPOINT_BYTES + 1)
        if len(text) > MAX_CHECKPOINT_BYTES:
            raise InvalidValueError(f"a sweep checkpoint requires a file of at most {MAX_CHECKPOINT_BYTES >> 20} MiB, "
                                    f"got {str(self.path)!r}, which is larger; start a new one")
        self._cut = bool(text) and not text.endswith("\n")  # the next line must not extend the cut one
        for line in text.splitlines():
            try:
                d = json.loads(line)
                chunk = Chunk(d["kernel"], d["axis"], tuple(d["ins"]), tuple(d["outs"]), d["op"], d.get("convention"),
                              d.get("dtype", "int32"))
                result = ChunkResult.from_dict(d["result"])
            except (ValueError, KeyError, TypeError):
                continue
            if d.get("code") != code:
                self.stale += 1
                continue
            done[chunk] = result
        return done

    def append(self, chunk: Chunk, result: ChunkResult) -> None:
        import json

        start, self._cut = "\n" if self._cut else "", False
        line = start + json.dumps({"kernel": chunk.kernel, "axis": chunk.axis, "ins": list(chunk.ins), "outs": list(chunk.outs),
                           "op": chunk.op, "convention": chunk.convention, "dtype": chunk.dtype,
                           "code": code_fingerprint(),
                           "result": result.to_dict()})
        try:
            with open(self.path, "a") as f:
                f.write(line + "\n")
        except OSError as e:
            raise InvalidValueError(f"a sweep checkpoint requires a writable file, got {str(self.path)!r}: "
                                    f"{e.strerror or e}") from None


def _run_chunks(chunks: list[Chunk], executor, jobs: int, done, timeout: float) -> None:
    """Run ``chunks`` on ``executor`` (or a local pool we own), retrying those whose worker was lost: on a fresh
    pool of ours, or on the caller's while it takes work; SweepError naming the chunks lost where it does not."""
    from concurrent.futures import FIRST_COMPLETED, wait

    attempts = dict.fromkeys(chunks, 0)
    while attempts:
        pool = executor or local_pool(jobs)
        finished, futures = False, {}
        try:
            for chunk in attempts:
                try:
                    futures[pool.submit(check_chunk, chunk)] = chunk
                except Exception as error:  # noqa: BLE001 - a broken pool, a closed client: it takes no work
                    raise _lost(attempts, f"the executor refused work: {type(error).__name__}: {error}") from error
            pending, deadline = set(futures), time.monotonic() + timeout
            while pending:
                ready, pending = wait(pending, timeout=max(0.0, min(WAKE_SECONDS, deadline - time.monotonic())),
                                      return_when=FIRST_COMPLETED)
                if not ready and time.monotonic() < deadline:
                    continue
                if not ready:  # none finished in time: every unfinished chunk counts as lost
                    for future in pending:
                        _lost_once(attempts, futures[future], f"no result within {timeout:g} s")
                    break
                deadline = time.monotonic() + timeout
                for future in ready:
                    chunk = futures[future]
                    try:
                        result = future.result()
                    except ResizeKernelsError:
                        raise  # the kernel's own error: the same on any worker
                    except Exception as error:  # noqa: BLE001 - a lost worker, whatever the engine calls it
                        _lost_once(attempts, chunk, f"{type(error).__name__}: {error}")
                        continue
                    del attempts[chunk]
                    done(chunk, result)
            finished = not pending
        finally:
            if finished:
                if executor is None:
                    pool.shutdown()
            elif executor is None or pool in _LOCAL_POOLS:  # stopped (Ctrl-C, an error, a timeout): workers end now
                end_pool(pool)
            else:  # the caller's: what it has not started is dropped
                for future in futures:
                    future.cancel()


#: The pools ``local_pool`` made: a sweep stopped on one ends it (``end_pool``) rather than cancel its futures.
_LOCAL_POOLS: weakref.WeakSet = weakref.WeakSet()


def local_pool(jobs: int):
    """A pool of ``jobs`` forked sweep workers that leave Ctrl-C to the parent (end it with ``end_pool``)."""
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(jobs, mp_context=_fork(), initializer=_ignore_interrupt)
    _LOCAL_POOLS.add(pool)
    return pool


def end_pool(pool) -> None:
    """Stop a local process pool at once: drop its queued chunks and terminate its workers.

    Only the pool's own thread cancels its futures (``cancel_futures``): a future
    cancelled from outside makes Python 3.11's pool thread fail with
    InvalidStateError when the terminated workers break the pool."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()


def _lost_once(attempts: dict, chunk, why: str) -> None:
    """Count one loss of ``chunk``; SweepError past RETRIES."""
    attempts[chunk] += 1
    if attempts[chunk] > RETRIES:
        raise SweepError(f"sweep chunk {chunk} failed {attempts[chunk]} times; the last time: {why}")


def _lost(attempts: dict, why: str) -> SweepError:
    """The error of a sweep whose executor takes no more work: why, and the chunks not done."""
    names = ", ".join(str(c) for c in list(attempts)[:3]) + (f", ... {len(attempts) - 3:,} more"
                                                           if len(attempts) > 3 else "")
    return SweepError(f"sweep lost {plural(len(attempts), 'chunk')} ({names}): {why}; rerun with a working executor "
                      f"(a --checkpoint file keeps the chunks done)")


def _fork():
    import multiprocessing

    return multiprocessing.get_context("fork")


def random_shapes(count: int, max_size: int, seed: int = 0) -> list[tuple[tuple, tuple]]:
    """``count`` random 2-D resizes with every side in 1..max_size (reproducible by ``seed``)."""
    _check_count("random_shapes' count", count, 0)
    _check_count("random_shapes' max_size", max_size, 1, semantics.MAX_DIM - 1)
    _check_count("random_shapes' seed", seed, 0)
    rng = np.random.default_rng(seed)
    sides = rng.integers(1, max_size + 1, size=(count, 4)).tolist()
    return [((1, ih, iw, 1), (1, oh, ow, 1)) for ih, iw, oh, ow in sides]


def _progress(total: int, desc: str, initial: int = 0):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="pairs", unit_scale=True, initial=initial,
                disable=None)  # None: quiet when not on a terminal


def check_plot_path(path, what: str = "a plot") -> Path:
    """``path`` resolved, if ``plot_failures`` (or another matplotlib figure: ``what``) can write it; else
    InvalidValueError saying why (check before the work).

    The name ends in .png, .pdf or .svg, matplotlib is installed, the directory
    exists and a file can be created there (tried, and removed again).
    """
    path = Path(path)
    if path.suffix.lower().lstrip(".") not in PLOT_FORMATS:
        raise InvalidValueError(f"{what} requires a file name ending in {', '.join('.' + f for f in PLOT_FORMATS)}, "
                                f"got {str(path)!r}")
    if importlib.util.find_spec("matplotlib") is None:
        raise InvalidValueError(f"{what} requires matplotlib: pip install 'resize-kernels[plot]'")
    if not path.parent.is_dir():
        raise InvalidValueError(f"{what} requires an existing directory, got {str(path.parent)!r} for {str(path)!r}")
    existed = path.exists()
    try:
        with open(path, "ab"):
            pass
        if not existed:
            path.unlink()
    except OSError as e:
        raise InvalidValueError(f"{what} requires a writable file, got {str(path)!r}: {e.strerror or e}") from None
    return path.resolve()


def check_json_path(path, what: str = "a JSON report") -> Path:
    """``path`` resolved, if a JSON report (``what``) can be written there (checked before the work, like a
    plot's)."""
    path = Path(path)
    if not path.parent.is_dir():
        raise InvalidValueError(f"{what} requires an existing directory, got {str(path.parent)!r} for {str(path)!r}")
    if path.is_dir():
        raise InvalidValueError(f"{what} requires a file name, got the directory {str(path)!r}")
    return path.resolve()


def write_json(results: list[SweepResult], path, **extra) -> Path:
    """Write the sweeps (and ``extra`` fields) to ``path`` as one JSON report; returns the path written."""
    import json

    path = check_json_path(path)
    report = {"sweeps": [r.to_dict() for r in results], **extra}
    try:
        path.write_text(json.dumps(report, indent=1) + "\n")
    except OSError as e:
        raise InvalidValueError(f"a JSON report requires a writable file, got {str(path)!r}: {e.strerror or e}") \
            from None
    return path


def plot_failures(results: list[SweepResult], path) -> Path:
    """Plot the failing (in, out) pairs, one panel per sweep, to ``path`` (.png, .pdf or .svg); returns the path written.

    Needs the ``plot`` extra (matplotlib). Pairs the kernel does not take are grey.
    """
    path = check_plot_path(path)
    if not results:
        raise InvalidValueError("plot_failures requires at least one SweepResult, got none")
    from .display import draw_failures, save_figure

    save_figure(lambda fig: draw_failures(fig, results), (5 * len(results), 4.6), path, dpi=110,
                format=path.suffix.lower().lstrip("."))
    return path
