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

from . import semantics
from .api import kernel_name, trace_resize
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


def _check_shapes(in_shape, out_shape):
    for name, s in (("in_shape", in_shape), ("out_shape", out_shape)):
        if not isinstance(s, (tuple, list)) or len(s) != 4 or not all(
                isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d > 0 for d in s):
            raise ValueError(f"verify requires {name} as four positive integers (N, H, W, C), got {s!r}")
    if in_shape[0] != out_shape[0] or in_shape[3] != out_shape[3]:
        raise ValueError(f"verify requires equal batch and channels in and out, got {tuple(in_shape)} -> "
                         f"{tuple(out_shape)}")
    if math.prod(in_shape) >= 1 << 31:
        raise ValueError(f"verify labels every input element with an int32, so it requires fewer than 2**31 "
                         f"input elements, got {tuple(in_shape)}; verify with one channel (the map does not depend "
                         f"on channels)")


def verify(in_shape, out_shape, kernel: str | None = None) -> VerifyReport:
    """Check every output element of ``kernel`` for NHWC ``in_shape`` -> ``out_shape`` against the reference."""
    _check_shapes(in_shape, out_shape)
    in_shape, out_shape, name = tuple(map(int, in_shape)), tuple(map(int, out_shape)), kernel_name(kernel)
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
