"""nl: dtypes, buffers, tensor allocation, loops and the ALU op names.

``nl.ndarray(shape, dtype, buffer=nl.sbuf)`` allocates a tile (first dimension =
partitions, at most ``nl.tile_size.pmax``); ``buffer=nl.shared_hbm`` creates an
HBM tensor, which a kernel returns as its output.
"""

from __future__ import annotations

from types import SimpleNamespace

from ..machine import dtypes
from ..machine.isa import ALU_OPS
from ..machine.memory import NUM_PARTITIONS
from .tracer import current

float32, bfloat16, float16 = dtypes.float32, dtypes.bfloat16, dtypes.float16
int32, int16, int8, uint8 = dtypes.int32, dtypes.int16, dtypes.int8, dtypes.uint8

sbuf = "sbuf"
shared_hbm = "shared_hbm"
hbm = "hbm"

tile_size = SimpleNamespace(pmax=NUM_PARTITIONS)


class AluOp:
    """An ALU operation name usable as ``op=`` in nisa calls (``nl.multiply``)."""

    def __init__(self, name: str):
        self.alu_name = name

    def __repr__(self) -> str:
        return f"nl.{self.alu_name}"


for _name in ALU_OPS:
    globals()[_name] = AluOp(_name)
del _name


def ndarray(shape, dtype, buffer=sbuf, name: str | None = None):
    """Allocate a tensor: an SBUF tile (the default) or an HBM tensor (``shared_hbm``/``hbm``)."""
    tracer = current()
    if buffer == sbuf:
        return tracer.sbuf(name, shape, dtype)
    if buffer in (shared_hbm, hbm):
        taken = {t.name for t in tracer.program.inputs + tracer.program.internal}
        name = name if name and name not in taken else tracer.unique(name or "hbm")
        return tracer.hbm(name, shape, dtype, "internal")
    raise ValueError(f"nl.ndarray buffer must be nl.sbuf or nl.shared_hbm, got {buffer!r}")


def affine_range(*args):
    """range(...) unrolled at trace time; the SBUF tiles of each iteration are freed at its end."""
    allocator = current().allocator
    for i in range(*args):
        mark = allocator.mark()
        yield i
        allocator.release(mark)


sequential_range = affine_range
