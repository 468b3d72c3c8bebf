"""The verifier: proves, shape by shape, that a kernel's gather is the reference map.

It traces the kernel and runs it on an int32 image whose every element holds its
own flat index, so the output says exactly where each element was read from.
Comparing with the reference resize of that image checks every output element of
that shape: a proof for the shape, not a sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import contract, semantics
from .api import kernel_variant, trace_resize
from .errors import InvalidValueError
from .machine.errors import OutOfBoundsError
from .machine.simulator import Executable

MAX_LISTED = 10


@dataclass
class VerifyReport:
    """What the verifier found for one kernel and shape; ``ok`` only if every element is right."""

    kernel: str
    in_shape: tuple
    out_shape: tuple
    ok: bool
    wrong_pixels: int | None  # None when the kernel stopped on an out-of-bounds read
    out_of_bounds: str | None = None
    first_wrong: list = field(default_factory=list)  # ((b, oh, ow), expected (b, h, w), got (b, h, w) or None)

    def __str__(self) -> str:
        head = (f"kernel {self.kernel!r}: NHWC {'x'.join(map(str, self.in_shape))} -> "
                f"{'x'.join(map(str, self.out_shape))}: ")
        if self.ok:
            return head + f"exact ({math.prod(self.out_shape[:3]):,} output pixels checked)"
        if self.out_of_bounds:
            return head + f"NOT exact: out-of-bounds read\n  {self.out_of_bounds}"
        lines = [head + f"NOT exact: {self.wrong_pixels:,} of {math.prod(self.out_shape[:3]):,} output pixels wrong"]
        for out, want, got in self.first_wrong:
            got_text = "unwritten or a foreign element" if got is None else f"source {got}"
            lines.append(f"  output {out}: expected source {want}, got {got_text}")
        if self.wrong_pixels > len(self.first_wrong):
            lines.append(f"  ... {self.wrong_pixels - len(self.first_wrong):,} more")
        return "\n".join(lines)


def verify(in_shape, out_shape, kernel: str | None = None) -> VerifyReport:
    """Check every output element of ``kernel`` for NHWC ``in_shape`` -> ``out_shape`` against the reference."""
    in_shape, out_shape = contract.resize_shapes("verify", in_shape, out_shape)  # < 2**31 elements: int32 labels
    name = kernel_variant("resize_nearest", kernel)
    n, in_h, in_w, c = in_shape
    out_hw = out_shape[1:3]
    labels = np.arange(math.prod(in_shape), dtype=np.int32).reshape(in_shape)
    program = trace_resize(in_shape, out_hw, np.int32, name)
    try:
        (got,) = Executable(program).run([labels])
    except OutOfBoundsError as e:
        return VerifyReport(name, in_shape, out_shape, False, None, out_of_bounds=str(e))
    want = semantics.resize_nearest_reference(labels, out_hw)
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
    return VerifyReport(name, in_shape, out_shape, wrong == 0, wrong, first_wrong=first)


# -- sweeps ------------------------------------------------------------------------------------------

def axis_shapes(axis: str, in_size: int, out_size: int) -> tuple[tuple, tuple]:
    """The 2-D NHWC shapes of a sweep along ``axis``; the other axis resizes 2 -> 3 (w) or 3 -> 1 (h).

    A w sweep keeps three output rows reading source rows 0, 0, 1: the seed's
    defects couple rows and columns (a flat position's row comes from a
    reciprocal multiply by the width), and a pixel pushed into the wrong row
    then reads a different source pixel (or past the image), where an identity
    row map would hide it. An h sweep keeps one output column, so a tile holds
    128 rows. Small other axes keep the programs, and so the sweep, short.
    """
    if axis == "w":
        return (1, 2, in_size, 1), (1, 3, out_size, 1)
    if axis == "h":
        return (1, in_size, 3, 1), (1, out_size, 1, 1)
    raise InvalidValueError(f"sweep axis must be 'h' or 'w', got {axis!r}")


@dataclass
class SweepResult:
    """Every (in, out) pair of one axis up to ``n``, checked; the failing pairs and their wrong-pixel counts."""

    kernel: str
    axis: str
    n: int
    failures: list  # (in, out, wrong pixels or None for an out-of-bounds read)

    @property
    def checked(self) -> int:
        return self.n * self.n

    def summary(self, listed: int = 8) -> str:
        head = f"kernel {self.kernel!r}, axis {self.axis}: {self.checked:,} (in, out) pairs in 1..{self.n}: "
        if not self.failures:
            return head + "all exact"
        oob = sum(w is None for _, _, w in self.failures)
        lines = [head + f"{len(self.failures):,} not exact ({oob:,} read out of bounds)"]
        outs = sorted({o for _, o, _ in self.failures})
        lines.append(f"  output sizes affected ({len(outs)}): " + ", ".join(map(str, outs[:40]))
                     + (" ..." if len(outs) > 40 else ""))
        for i, o, w in self.failures[:listed]:
            lines.append(f"  {i} -> {o}: " + ("out-of-bounds read" if w is None else f"{w} wrong pixels"))
        return "\n".join(lines)


def _sweep_one_input(task):
    kernel, axis, in_size, n = task
    failures = []
    for out_size in range(1, n + 1):
        report = verify(*axis_shapes(axis, in_size, out_size), kernel)
        if not report.ok:
            failures.append((in_size, out_size, report.wrong_pixels))
    return failures


def sweep(n: int, axis: str = "w", kernel: str | None = None, jobs: int = 1, progress: bool = False) -> SweepResult:
    """Verify every (in, out) pair in 1..n on one axis; ``jobs`` processes share the work."""
    if not isinstance(n, int) or n < 1:
        raise InvalidValueError(f"sweep requires a positive size bound n, got {n!r}")
    axis_shapes(axis, 1, 1)
    name = kernel_variant("resize_nearest", kernel)
    tasks = [(name, axis, i, n) for i in range(1, n + 1)]
    bar = _progress(len(tasks), f"{name}/{axis}") if progress else None
    failures = []
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for found in pool.imap_unordered(_sweep_one_input, tasks):
                failures += found
                bar and bar.update()
    else:
        for task in tasks:
            failures += _sweep_one_input(task)
            bar and bar.update()
    bar and bar.close()
    return SweepResult(name, axis, n, sorted(failures))


def random_shapes(count: int, max_size: int, seed: int = 0) -> list[tuple[tuple, tuple]]:
    """``count`` random 2-D resizes with every side in 1..max_size (reproducible by ``seed``)."""
    rng = np.random.default_rng(seed)
    sides = rng.integers(1, max_size + 1, size=(count, 4)).tolist()
    return [((1, ih, iw, 1), (1, oh, ow, 1)) for ih, iw, oh, ow in sides]


def _progress(total: int, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="in-size", disable=None)  # None: quiet when not on a terminal


def plot_failures(results: list[SweepResult], path: str) -> None:
    """A PNG of the failing (in, out) pairs, one panel per sweep (needs the ``plot`` extra: matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise RuntimeError("plotting needs matplotlib: pip install 'resize-kernels[plot]'") from e
    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4.6), squeeze=False)
    for ax, r in zip(axes[0], results):
        pts = np.array([(i, o) for i, o, _ in r.failures]).reshape(-1, 2)
        oob = np.array([(i, o) for i, o, w in r.failures if w is None]).reshape(-1, 2)
        ax.scatter(pts[:, 1], pts[:, 0], s=2, c="tab:red", label=f"wrong ({len(pts):,})")
        if len(oob):
            ax.scatter(oob[:, 1], oob[:, 0], s=4, c="black", label=f"out of bounds ({len(oob):,})")
        ax.set(xlim=(0, r.n + 1), ylim=(0, r.n + 1), xlabel=f"output size ({r.axis})", ylabel=f"input size ({r.axis})",
               title=f"kernel {r.kernel!r}, axis {r.axis}: {len(r.failures):,} of {r.checked:,} pairs not exact")
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
