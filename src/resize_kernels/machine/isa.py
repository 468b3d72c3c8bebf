"""Instruction records and the Program that holds them.

A Program is what a traced kernel becomes: HBM tensors (inputs, outputs,
internal) and a list of instructions in issue order, whose access patterns
name the SBUF tiles they use. ``str(program)`` is an
assembly-style listing, one line per instruction.
"""

from __future__ import annotations

import collections
import os
from dataclasses import dataclass, field

import numpy as np

from ..display import html_table
from ..errors import InvalidValueError
from . import dtypes
from .access import AccessPattern
from .memory import HbmTensor

#: DMA engines per NeuronCore ("each NeuronCore (v2-v4) is paired with 16 DMA engines", NKI DMA overview).
DMA_QUEUES = 16

#: ALU operations on float32 values; comparisons give 1.0 / 0.0.
ALU_OPS = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "mod": np.fmod,
    "equal": lambda a, b: np.equal(a, b).astype(np.float32),
    "not_equal": lambda a, b: np.not_equal(a, b).astype(np.float32),
    "greater": lambda a, b: np.greater(a, b).astype(np.float32),
    "greater_equal": lambda a, b: np.greater_equal(a, b).astype(np.float32),
    "less": lambda a, b: np.less(a, b).astype(np.float32),
    "less_equal": lambda a, b: np.less_equal(a, b).astype(np.float32),
    "logical_and": lambda a, b: np.logical_and(a, b).astype(np.float32),
    "logical_or": lambda a, b: np.logical_or(a, b).astype(np.float32),
    "logical_xor": lambda a, b: np.logical_xor(a, b).astype(np.float32),
}
ALU_OPS["max"], ALU_OPS["min"] = ALU_OPS["maximum"], ALU_OPS["minimum"]


def alu_op(op) -> str:
    """The name of an ALU op given as a string or as an object with ``alu_name`` (``nl.multiply``)."""
    name = getattr(op, "alu_name", op)
    if name not in ALU_OPS:
        raise InvalidValueError(f"unknown ALU op {op!r}; the engines support {', '.join(sorted(ALU_OPS))}")
    return name


def _where(inst: Instruction) -> str:
    """The listing's note of where an instruction was issued: ``  # vision.py:57``."""
    return "" if inst.source is None else f"  # {os.path.basename(inst.source[0])}:{inst.source[1]}"


def _scalar(x) -> str:
    return str(np.float32(x))


@dataclass(eq=False)
class Instruction:
    """Base: every instruction has a destination and reads some sources."""

    engine = "?"
    opcode = "?"
    source = None  # (file, line) of the kernel code that issued it, when traced

    def sources(self) -> tuple[AccessPattern, ...]:
        return ()

    def operands_text(self) -> str:
        return ""

    def listing(self) -> str:
        return f"{self.engine:<6} {self.opcode:<14} {self.dst.describe()} <- {self.operands_text()}"

    def validate(self, where: str) -> None:
        """Trace-time checks: engines work on SBUF, shapes agree, direct patterns stay in bounds."""
        sources = self.sources()
        operands = (self.dst, *sources)
        if self.engine != "dma":
            for ap in operands:
                if not ap.is_sbuf or ap.indirect_dim is not None:
                    raise InvalidValueError(f"{where}: {self.opcode} reads and writes SBUF tiles through direct "
                                            f"access patterns, got {ap.describe()}")
            for ap in sources:
                if ap.shape != self.dst.shape:
                    raise InvalidValueError(f"{where}: {self.opcode} requires operands of the destination's shape "
                                            f"{self.dst.shape}, got {ap.describe()} of shape {ap.shape}")
        for ap in operands:
            ap.check_static(where)


@dataclass(eq=False)
class Iota(Instruction):
    """dst[p, x...] = offset + p * channel_multiplier + sum(step_k * x_k), computed in float32."""

    dst: AccessPattern
    pattern: tuple
    offset: int = 0
    channel_multiplier: int = 0
    engine = "gpsimd"
    opcode = "iota"

    def operands_text(self):
        pat = ",".join(f"[{s},{n}]" for s, n in self.pattern)
        return f"pattern=[{pat}] offset={self.offset} channel_multiplier={self.channel_multiplier}"


@dataclass(eq=False)
class TensorScalar(Instruction):
    """dst = (data op0 operand0) op1 operand1; ``reverse`` swaps an op's operands."""

    dst: AccessPattern
    data: AccessPattern
    op0: str
    operand0: float
    reverse0: bool = False
    op1: str | None = None
    operand1: float | None = None
    reverse1: bool = False
    engine = "vector"
    opcode = "tensor_scalar"

    def sources(self):
        return (self.data,)

    def operands_text(self):
        def step(x, op, operand, reverse):
            return f"{_scalar(operand)} {op} {x}" if reverse else f"{x} {op} {_scalar(operand)}"
        text = step(self.data.describe(), self.op0, self.operand0, self.reverse0)
        if self.op1 is not None:
            text = step(f"({text})", self.op1, self.operand1, self.reverse1)
        return text


@dataclass(eq=False)
class TensorTensor(Instruction):
    """dst = data1 op data2, elementwise."""

    dst: AccessPattern
    data1: AccessPattern
    data2: AccessPattern
    op: str
    engine = "vector"
    opcode = "tensor_tensor"

    def sources(self):
        return (self.data1, self.data2)

    def operands_text(self):
        return f"{self.data1.describe()} {self.op} {self.data2.describe()}"


@dataclass(eq=False)
class Select(Instruction):
    """dst = on_true where predicate != 0, else on_false, elementwise (nl.where), on the vector engine.

    on_true and on_false are tiles or float32 scalars; values go through float32 and are cast to dst's dtype,
    as every arithmetic instruction's do.
    """

    dst: AccessPattern
    predicate: AccessPattern
    on_true: "AccessPattern | float"
    on_false: "AccessPattern | float"
    engine = "vector"
    opcode = "select"

    def sources(self):
        return tuple(x for x in (self.predicate, self.on_true, self.on_false) if isinstance(x, AccessPattern))

    def operands_text(self):
        def text(x):
            return x.describe() if isinstance(x, AccessPattern) else _scalar(x)
        return f"{text(self.predicate)} ? {text(self.on_true)} : {text(self.on_false)}"


@dataclass(eq=False)
class NcNGather(Instruction):
    """dst[p, j] = data[p, indices[p, j]] on GpSimd (nisa.nc_n_gather): a gather within each partition, the
    free dimensions of ``data`` flattened; a bit-exact copy (dst and data share a dtype; indices are uint32)."""

    dst: AccessPattern
    data: AccessPattern
    indices: AccessPattern
    engine = "gpsimd"
    opcode = "nc_n_gather"

    def sources(self):
        return (self.data, self.indices)

    def validate(self, where: str) -> None:
        for ap in (self.dst, self.data, self.indices):
            if not ap.is_sbuf or ap.indirect_dim is not None or ap.tensor.memory != "sbuf":
                raise InvalidValueError(f"{where}: nc_n_gather reads and writes SBUF tiles (GpSimd cannot reach "
                                        f"PSUM) through direct access patterns, got {ap.describe()}")
        if self.dst.dtype != self.data.dtype:
            raise InvalidValueError(f"{where}: nc_n_gather copies bits, so dst and data need one dtype, got "
                                    f"{self.dst.dtype} and {self.data.dtype}")
        if self.indices.dtype != dtypes.uint32:
            raise InvalidValueError(f"{where}: nc_n_gather requires uint32 indices, got {self.indices.dtype}")
        if self.indices.shape != self.dst.shape or self.data.shape[0] != self.dst.shape[0]:
            raise InvalidValueError(f"{where}: nc_n_gather requires indices of dst's shape {self.dst.shape} and data "
                                    f"on as many partitions, got indices {self.indices.shape}, data {self.data.shape}")
        for ap in (self.dst, self.data, self.indices):
            ap.check_static(where)

    def operands_text(self):
        return f"{self.data.describe()}[{self.indices.describe()}]"


@dataclass(eq=False)
class TensorReduce(Instruction):
    """dst = op over the last ``axes`` free axes of data, per partition (nisa.tensor_reduce), in float32.

    Arithmetic ops reduce in order (each element into the running float32 result, row-major), then the
    result is cast to dst's dtype; dst holds data's other elements, in order, whatever its shape.
    """

    dst: AccessPattern
    data: AccessPattern
    op: str
    axes: int
    negate: bool = False
    engine = "vector"
    opcode = "tensor_reduce"

    def sources(self):
        return (self.data,)

    def operands_text(self):
        return f"{self.op} over the last {self.axes} axes of {self.data.describe()}" + (" negated" if self.negate else "")

    def validate(self, where: str) -> None:
        for ap in (self.dst, self.data):
            if not ap.is_sbuf or ap.indirect_dim is not None:
                raise InvalidValueError(f"{where}: tensor_reduce reads and writes SBUF tiles through direct access "
                                        f"patterns, got {ap.describe()}")
        if self.op not in ALU_OPS:
            raise InvalidValueError(f"{where}: tensor_reduce has no op {self.op!r}")
        kept = self.data.shape[:len(self.data.shape) - self.axes]
        if not 1 <= self.axes < len(self.data.shape) or self.dst.shape[0] != kept[0] \
                or self.dst.size != int(np.prod(kept)):
            raise InvalidValueError(f"{where}: tensor_reduce of {self.data.describe()} over its last {self.axes} "
                                    f"free axes leaves shape {kept}, which {self.dst.describe()} does not hold")
        for ap in (self.dst, self.data):
            ap.check_static(where)


@dataclass(eq=False)
class TensorCopy(Instruction):
    """dst = src: bit-exact for equal dtypes, else a cast through float32; on the vector engine or GpSimd."""

    dst: AccessPattern
    src: AccessPattern
    engine: str = "vector"
    opcode = "tensor_copy"

    def sources(self):
        return (self.src,)

    def operands_text(self):
        return f"{self.src.describe()} ({dtypes.short_name(self.src.dtype)} -> {dtypes.short_name(self.dst.dtype)})"


#: Activation functions of the scalar engine, on float32 values.
ACTIVATION_FUNCS = {"floor": np.floor, "copy": lambda x: x}


@dataclass(eq=False)
class Activation(Instruction):
    """dst = func(data * scale + bias) on the scalar engine, in float32 (``nl.floor`` is one such function).

    NKI's nisa.activation: the engine casts the input to float32, multiplies by
    the scale and adds the bias (each rounded to float32, at no extra cost), then
    applies the function and casts to dst's dtype.
    """

    dst: AccessPattern
    data: AccessPattern
    func: str
    scale: float = 1.0
    bias: float = 0.0
    engine = "scalar"
    opcode = "activation"

    def sources(self):
        return (self.data,)

    def operands_text(self):
        x = self.data.describe()
        if self.scale != 1.0:
            x += f" * {_scalar(self.scale)}"
        if self.bias != 0.0:
            x += f" + {_scalar(self.bias)}"
        return f"{self.func}({x})"


@dataclass(eq=False)
class DmaCopy(Instruction):
    """Move bits between HBM and SBUF (either way, or within one); src may be an indirect gather."""

    dst: AccessPattern
    src: AccessPattern
    engine = "dma"
    opcode = "dma_copy"

    def sources(self):
        return (self.src,) + ((self.src.vector_offset,) if self.src.vector_offset is not None else ())

    def validate(self, where: str) -> None:
        super().validate(where)
        if self.dst.indirect_dim is not None:
            raise InvalidValueError(f"{where}: dma_copy supports an indirect source (gather) only, got an indirect "
                                    f"destination {self.dst.describe()}")
        self._check_moves_bits(where, "dma_copy")

    def _check_moves_bits(self, where: str, what: str) -> None:
        """A DMA moves bits between HBM and SBUF: one dtype and one shape on both sides."""
        for ap in (self.src, self.dst):
            if ap.is_sbuf and ap.tensor.memory != "sbuf":
                raise InvalidValueError(f"{where}: {what} moves data between HBM and SBUF; {ap.describe()} is in "
                                        f"{ap.tensor.memory.upper()}, which the engines reach: copy it to an SBUF tile "
                                        f"first (nl.copy or nisa.tensor_copy)")
        if self.src.dtype != self.dst.dtype:
            raise InvalidValueError(f"{where}: {what} moves bits and cannot cast, so it needs one dtype on both sides: "
                                    f"source {self.src.describe()} is {self.src.dtype}, destination {self.dst.describe()} "
                                    f"is {self.dst.dtype}; cast the tile with tensor_copy first")
        if self.src.shape != self.dst.shape:
            raise InvalidValueError(f"{where}: {what} requires source and destination of one shape, got "
                                    f"{self.src.shape} from {self.src.describe()} and {self.dst.shape} "
                                    f"to {self.dst.describe()}")

    def operands_text(self):
        return self.src.describe()

    @property
    def is_indirect(self) -> bool:
        return self.src.indirect_dim is not None or self.dst.indirect_dim is not None

    @property
    def nbytes(self) -> int:
        return self.dst.size * self.dst.dtype.itemsize


@dataclass(eq=False)
class Memset(Instruction):
    """dst = value everywhere (nisa.memset): the float32 scalar cast to dst's dtype."""

    dst: AccessPattern
    value: float
    engine = "vector"
    opcode = "memset"

    def operands_text(self):
        return _scalar(self.value)


@dataclass(eq=False)
class DmaCopyAdd(DmaCopy):
    """dst = dst + src by the DMA engines' read-modify-write (nisa.dma_copy(..., dst_rmw_op=nl.add)).

    The sum is computed in float32 and cast to dst's dtype; src and dst have one
    dtype (the DMA does not cast on the way). dst is in HBM. With
    ``vector_offset`` and ``indirect_dim=0`` on dst it is a scatter-add:
    partition i adds into row ``vector_offset[i]``. Where several partitions (or
    elements) reach one address every contribution counts, added in partition
    order, then element order (np.add.at semantics, never last-write-wins).
    """

    opcode = "dma_copy_add"

    def sources(self):
        return (self.src,) + ((self.dst.vector_offset,) if self.dst.vector_offset is not None else ())

    def validate(self, where: str) -> None:
        Instruction.validate(self, where)
        if self.dst.is_sbuf:
            raise InvalidValueError(f"{where}: dma_copy with dst_rmw_op accumulates into HBM only, got destination "
                                    f"{self.dst.describe()} in SBUF; add SBUF tiles with tensor_tensor(op=nl.add)")
        if self.src.indirect_dim is not None:
            raise InvalidValueError(f"{where}: dma_copy with dst_rmw_op takes a direct source, got the gather "
                                    f"{self.src.describe()}; gather into a tile first")
        self._check_moves_bits(where, "dma_copy with dst_rmw_op")

    def operands_text(self):
        return f"{self.dst.describe()} + {self.src.describe()}"


@dataclass(eq=False)
class Program:
    """A traced kernel: its HBM tensors and its instructions in issue order (SBUF tiles are in their operands)."""

    name: str
    inputs: list[HbmTensor] = field(default_factory=list)
    outputs: list[HbmTensor] = field(default_factory=list)
    internal: list[HbmTensor] = field(default_factory=list)
    constants: list[HbmTensor] = field(default_factory=list)  # HBM tensors filled at trace time (nl.shared_constant)
    instructions: list[Instruction] = field(default_factory=list)
    sbuf_partition_bytes: int = 0  # capacity the program was traced for
    sbuf_high_water: int = 0  # bytes per partition the program needs at most
    psum_high_water: int = 0  # PSUM bytes per partition it needs at most (its tiles lie past sbuf_partition_bytes)
    sbuf_extents: tuple | None = None  # ((partitions, start, end), ...): where its tiles lie (None: anywhere)
    selection: object = None  # how its kernel was chosen (resize_kernels.select.Selection), if it was

    def append(self, inst: Instruction) -> None:
        """Validate ``inst`` (naming it by its position) and add it at the end."""
        inst.validate(f"instruction {len(self.instructions)} ({inst.opcode})")
        self.instructions.append(inst)

    def counts(self) -> collections.Counter:
        """Instructions by opcode."""
        return collections.Counter(i.opcode for i in self.instructions)

    def dmas(self) -> list[DmaCopy]:
        return [i for i in self.instructions if isinstance(i, DmaCopy)]

    def summary(self) -> str:
        dmas = self.dmas()
        indirect = sum(d.is_indirect for d in dmas)
        by_engine = collections.Counter(i.engine for i in self.instructions)
        lines = [
            f"program {self.name}: {len(self.instructions)} instructions",
            "  by kind:   " + ", ".join(f"{k} {v}" for k, v in sorted(self.counts().items())),
            "  by engine: " + ", ".join(f"{k} {v}" for k, v in sorted(by_engine.items())),
            f"  DMAs:      {len(dmas)} ({indirect} indirect: gathers or scatters), {sum(d.nbytes for d in dmas):,} bytes",
            f"  SBUF:      {self.sbuf_high_water:,} of {self.sbuf_partition_bytes:,} bytes per partition at most",
        ]
        if self.selection is not None:
            lines.append("  chosen:    " + str(self.selection).splitlines()[0].removeprefix("selection: "))
        return "\n".join(lines)

    def listing(self, limit: int | None = None) -> str:
        lines = [f"program {self.name}"]
        for kind, group in (("input", self.inputs), ("output", self.outputs), ("hbm", self.internal),
                            ("const", self.constants)):
            lines += [f"  {kind:<6} {t}" for t in group]
        shown = self.instructions if limit is None else self.instructions[:limit]
        width = len(str(max(len(self.instructions) - 1, 0)))
        lines += [f"  {n:>{width}}  {inst.listing()}{_where(inst)}" for n, inst in enumerate(shown)]
        if len(shown) < len(self.instructions):
            lines.append(f"  ... {len(self.instructions) - len(shown)} more instructions")
        return "\n".join(lines)

    def __repr__(self) -> str:
        """One line (a traced Program has thousands of instructions: ``listing()`` or ``str`` prints them)."""
        dmas = self.dmas()
        return (f"<Program {self.name}: {len(self.instructions):,} instructions, {len(dmas):,} DMAs, "
                f"{sum(d.nbytes for d in dmas):,} bytes moved>")

    def _repr_html_(self) -> str:
        """The summary as a table (a notebook's rich display); ``listing()`` has every instruction."""
        rows = [line.strip().split(":", 1) for line in self.summary().splitlines()[1:]]
        return html_table([("instructions", f"{len(self.instructions):,}")] + [(k, v.strip()) for k, v in rows],
                          caption=f"Program {self.name}")

    def __str__(self) -> str:
        return self.listing()
