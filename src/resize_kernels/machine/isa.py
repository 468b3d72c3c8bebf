"""Instruction records and the Program that holds them.

A Program is what a traced kernel becomes: HBM tensors (inputs, outputs,
internal) and a list of instructions in issue order, whose access patterns
name the SBUF tiles they use. ``str(program)`` is an
assembly-style listing, one line per instruction.
"""

from __future__ import annotations

import collections
import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..display import html_table
from ..errors import InvalidValueError
from . import dtypes
from .access import AccessPattern
from .memory import PSUM_BANK_BYTES, PSUM_PARTITION_BYTES, HbmTensor

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

    def destinations(self) -> tuple[AccessPattern, ...]:
        """What it writes: its dst, and any second result (activation's reduce_res)."""
        return (self.dst,)

    #: Whether it reads its destination before writing it (a read-modify-write: an accumulating matmul, a DMA add).
    reads_dst = False

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
class AffineSelect(Instruction):
    """dst = on_true where cmp_op(offset + p * channel_multiplier + sum(step_k * x_k), 0), else on_false (a float32
    number), on GpSimd (nisa.affine_select); the affine value is iota's, over dst's free elements in order."""

    dst: AccessPattern
    on_true: AccessPattern
    pattern: tuple
    offset: int
    channel_multiplier: int
    cmp_op: str
    on_false: float
    engine = "gpsimd"
    opcode = "affine_select"

    def sources(self):
        return (self.on_true,)

    def validate(self, where: str) -> None:
        super().validate(where)
        if math.prod(n for _, n in self.pattern) != free_size(self.dst):
            raise InvalidValueError(f"{where}: affine_select requires a pattern of {free_size(self.dst)} elements "
                                    f"(the destination's per partition), got {[list(p) for p in self.pattern]}")

    def operands_text(self):
        pat = ",".join(f"[{s},{n}]" for s, n in self.pattern)
        return (f"{self.cmp_op}(pattern=[{pat}] offset={self.offset} channel_multiplier={self.channel_multiplier}, 0) "
                f"? {self.on_true.describe()} : {_scalar(self.on_false)}")


def _operand_text(x) -> str:
    """A scalar operand as float32, a tile operand by its access pattern."""
    return x.describe() if isinstance(x, AccessPattern) else _scalar(x)


def _check_on_chip(where: str, opcode: str, ap: AccessPattern, memory: str | None = None) -> None:
    """An engine operand: an SBUF or PSUM tile (``memory`` names the one it must be in) through a direct pattern."""
    if not ap.is_sbuf or ap.indirect_dim is not None or (memory is not None and ap.tensor.memory != memory):
        need = {"sbuf": "an SBUF tile", "psum": "a PSUM tile", None: "an SBUF or PSUM tile"}[memory]
        raise InvalidValueError(f"{where}: {opcode} requires {need} through a direct access pattern, got "
                                f"{ap.describe()}")


def free_size(ap: AccessPattern) -> int:
    """Elements per partition of an on-chip access pattern (its free dimensions flattened)."""
    return math.prod(ap.shape[1:])


def _check_partition_vector(where: str, opcode: str, what: str, ap: AccessPattern, partitions: int) -> None:
    """A per-partition operand: a (partitions, 1) tile, one value per partition, broadcast along the free axes."""
    _check_on_chip(where, opcode, ap)
    if ap.shape[0] != partitions or free_size(ap) != 1:
        raise InvalidValueError(f"{where}: {opcode} requires {what} as a number or a ({partitions}, 1) tile (one "
                                f"value per partition of the data), got {ap.describe()} of shape {ap.shape}")


#: tensor_scalar_reduce's reductions (nki.isa.tensor_scalar_reduce: nl.add, nl.subtract, nl.multiply, nl.max, nl.min).
REDUCE_OPS = ("add", "subtract", "multiply", "max", "min")


@dataclass(eq=False)
class TensorScalar(Instruction):
    """dst = (data op0 operand0) op1 operand1; ``reverse`` swaps an op's operands.

    An operand is a float32 number or a (P, 1) float32 tile whose value in each
    partition is broadcast along that partition's free elements (nisa.tensor_scalar).
    On the vector engine, or (arithmetic ops) the scalar engine.
    """

    dst: AccessPattern
    data: AccessPattern
    op0: str
    operand0: "float | AccessPattern"
    reverse0: bool = False
    op1: str | None = None
    operand1: "float | AccessPattern | None" = None
    reverse1: bool = False
    engine: str = "vector"
    reduce_op: str | None = None  # tensor_scalar_reduce: reduce_op over each partition's results into reduce_res
    reduce_res: AccessPattern | None = None
    opcode = "tensor_scalar"

    def sources(self):
        return (self.data,) + tuple(x for x in (self.operand0, self.operand1) if isinstance(x, AccessPattern))

    def destinations(self):
        return (self.dst,) if self.reduce_res is None else (self.dst, self.reduce_res)

    def operands_text(self):
        return "" if self.reduce_res is None else f"(reduce {self.reduce_op} into {self.reduce_res.describe()})"

    def validate(self, where: str) -> None:
        if self.reduce_res is not None:
            if self.reduce_op not in REDUCE_OPS or self.op1 is not None or self.engine != "vector":
                raise InvalidValueError(f"{where}: tensor_scalar_reduce takes one op on the vector engine and "
                                        f"reduce_op one of {', '.join(REDUCE_OPS)}, got {self.reduce_op!r}")
            _check_on_chip(where, self.opcode, self.reduce_res)
            _check_partition_vector(where, self.opcode, "reduce_res", self.reduce_res, self.data.shape[0])
            self.reduce_res.check_static(where)
        if not any(isinstance(x, AccessPattern) for x in (self.operand0, self.operand1)):
            super().validate(where)
            return
        for ap in (self.dst, self.data):
            _check_on_chip(where, self.opcode, ap)
        if self.data.shape != self.dst.shape:
            raise InvalidValueError(f"{where}: tensor_scalar requires data of the destination's shape "
                                    f"{self.dst.shape}, got {self.data.describe()} of shape {self.data.shape}")
        for what, x in (("operand0", self.operand0), ("operand1", self.operand1)):
            if isinstance(x, AccessPattern):
                _check_partition_vector(where, self.opcode, what, x, self.data.shape[0])
                if x.dtype != dtypes.float32:
                    raise InvalidValueError(f"{where}: tensor_scalar requires float32 operand tiles (arithmetic "
                                            f"operands are float32), got {what} {x.describe()} of "
                                            f"{x.dtype}; cast it with tensor_copy first")
        for ap in (self.dst, *self.sources()):
            ap.check_static(where)

    def operands_text(self):
        def step(x, op, operand, reverse):
            return f"{_operand_text(operand)} {op} {x}" if reverse else f"{x} {op} {_operand_text(operand)}"
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
class CopyPredicated(Instruction):
    """dst = src where predicate != 0 (where it is 0 with ``reverse``), elsewhere dst unchanged
    (nisa.tensor_copy_predicated): a bit-exact copy on the vector engine; ``src`` a tile of dst's dtype or a number
    (cast to dst's dtype); the predicate an unsigned integer tile."""

    dst: AccessPattern
    src: "AccessPattern | float"
    predicate: AccessPattern
    reverse: bool = False
    engine = "vector"
    opcode = "tensor_copy_predicated"

    def sources(self):
        return (self.predicate, *((self.src,) if isinstance(self.src, AccessPattern) else ()))

    def operands_text(self):
        src = self.src.describe() if isinstance(self.src, AccessPattern) else _scalar(self.src)
        return f"{'!' if self.reverse else ''}{self.predicate.describe()} ? {src}"


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


def _in_float64(f):
    """A function of float64 values made a function of float32 arrays: evaluated in float64, rounded once to
    float32 (the exact function's float32 value but for rare double roundings)."""
    def run(x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):  # overflow to inf, log(0) = -inf, sqrt(-1) = NaN: as IEEE arithmetic gives
            return np.asarray(f(x.astype(np.float64)), np.float64).astype(np.float32)
    run.__name__ = f.__name__
    return run


_erf = np.frompyfunc(math.erf, 1, 1)  # numpy has no erf; math.erf is float64-accurate


def _erf64(x):
    return _erf(x).astype(np.float64)


def _sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


def _gelu_apprx_sigmoid64(x):
    """x * sigmoid(1.702 x): the sigmoid approximation of GELU (ASSUMED constant: the NKI page names the
    function, not its formula; 1.702 is the published one, Hendrycks and Gimpel 2016)."""
    return x * _sigmoid64(1.702 * x)


def _gelu_apprx_sigmoid_dx64(x):
    s = _sigmoid64(1.702 * x)
    return s + 1.702 * x * s * (1.0 - s)


def _silu_dx64(x):
    s = _sigmoid64(x)
    return s * (1.0 + x * (1.0 - s))


def _gelu_dx64(x):
    return 0.5 * (1.0 + _erf64(x / math.sqrt(2.0))) + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


#: The scalar engine's activation functions (NKI's "Supported Activation Functions for NKI ISA" table, by their
#: ``nl`` names), each a function of float32 arrays giving float32. The hardware evaluates them by piecewise
#: polynomials (the same page) and is valid only on each function's documented input range; the model computes
#: each function exactly (in float64) and rounds once to float32, on every input. ``floor`` (nl.floor, not in
#: the table) is exact in float32 and ``copy`` (Identity) returns its input.
ACTIVATION_FUNCS = {
    "floor": np.floor,
    "copy": lambda x: x,
    "square": _in_float64(lambda x: x * x),
    "sigmoid": _in_float64(_sigmoid64),
    "relu": _in_float64(lambda x: np.where(x > 0, x, 0.0)),
    "gelu": _in_float64(lambda x: 0.5 * x * (1.0 + _erf64(x / math.sqrt(2.0)))),
    "gelu_dx": _in_float64(_gelu_dx64),
    "gelu_apprx_tanh": _in_float64(
        lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))),
    "gelu_apprx_sigmoid": _in_float64(_gelu_apprx_sigmoid64),
    "gelu_apprx_sigmoid_dx": _in_float64(_gelu_apprx_sigmoid_dx64),
    "silu": _in_float64(lambda x: x * _sigmoid64(x)),
    "silu_dx": _in_float64(_silu_dx64),
    "tanh": _in_float64(np.tanh),
    "softplus": _in_float64(lambda x: np.logaddexp(0.0, x)),
    "mish": _in_float64(lambda x: x * np.tanh(np.logaddexp(0.0, x))),
    "erf": _in_float64(_erf64),
    "erf_dx": _in_float64(lambda x: 2.0 / math.sqrt(math.pi) * np.exp(-x * x)),
    "exp": _in_float64(np.exp),
    "log": _in_float64(np.log),
    "sin": _in_float64(np.sin),
    "arctan": _in_float64(np.arctan),
    "sqrt": _in_float64(np.sqrt),
    "rsqrt": _in_float64(lambda x: 1.0 / np.sqrt(x)),
    "reciprocal": _in_float64(lambda x: 1.0 / x),
    "sign": _in_float64(np.sign),
    "abs": _in_float64(np.abs),
}

#: States of the scalar engine's reduce registers an activation may ask for (nisa.reduce_cmd).
REDUCE_CMDS = ("idle", "reset", "reduce", "reset_reduce")


@dataclass(eq=False)
class Activation(Instruction):
    """dst = func(data * scale + bias) on the scalar engine, in float32 (``nl.floor`` is one such function).

    NKI's nisa.activation: the engine casts the input to float32, multiplies by
    the scale and adds the bias (each rounded to float32, at no extra cost), then
    applies the function and casts to dst's dtype. ``scale`` is a number or a
    (P, 1) float32 tile, ``bias`` a number or a (P, 1) tile of any dtype: a tile's
    value in each partition applies to that partition's elements.

    The engine's reduce registers (one float32 per partition, kept between
    instructions) follow ``reduce_cmd``: "reset" zeroes them, "reduce" adds every
    activated float32 value of the partition to its register in order (before the
    output cast), "reset_reduce" does both, "idle" leaves them. ``reduce_res`` (a
    (P, 1) tile) receives the registers afterwards (NKI's reduce_op: add only).
    """

    dst: AccessPattern
    data: AccessPattern
    func: str
    scale: "float | AccessPattern" = 1.0
    bias: "float | AccessPattern" = 0.0
    reduce_cmd: str = "idle"
    reduce_res: AccessPattern | None = None
    engine = "scalar"
    opcode = "activation"

    def sources(self):
        return (self.data,) + tuple(x for x in (self.scale, self.bias) if isinstance(x, AccessPattern))

    def destinations(self):
        return (self.dst,) if self.reduce_res is None else (self.dst, self.reduce_res)

    @property
    def uses_registers(self) -> bool:
        """Whether it reads or changes the reduce registers (state the simulator keeps between instructions)."""
        return self.reduce_cmd != "idle" or self.reduce_res is not None

    def validate(self, where: str) -> None:
        if self.func not in ACTIVATION_FUNCS:
            raise InvalidValueError(f"{where}: activation has no function {self.func!r}; the scalar engine has "
                                    f"{', '.join(ACTIVATION_FUNCS)}")
        if self.reduce_cmd not in REDUCE_CMDS:
            raise InvalidValueError(f"{where}: activation requires reduce_cmd to be one of {', '.join(REDUCE_CMDS)}, "
                                    f"got {self.reduce_cmd!r}")
        if not self.uses_registers and not any(isinstance(x, AccessPattern) for x in (self.scale, self.bias)):
            super().validate(where)
            return
        for ap in (self.dst, self.data):
            _check_on_chip(where, self.opcode, ap)
        if self.data.shape != self.dst.shape:
            raise InvalidValueError(f"{where}: activation requires data of the destination's shape "
                                    f"{self.dst.shape}, got {self.data.describe()} of shape {self.data.shape}")
        partitions = self.data.shape[0]
        for what, x in (("scale", self.scale), ("bias", self.bias)):
            if isinstance(x, AccessPattern):
                _check_partition_vector(where, self.opcode, what, x, partitions)
        if isinstance(self.scale, AccessPattern) and self.scale.dtype != dtypes.float32:
            raise InvalidValueError(f"{where}: activation requires a float32 scale tile (NKI: the scale is float32), "
                                    f"got {self.scale.describe()} of {self.scale.dtype}; cast it with tensor_copy")
        if self.reduce_res is not None:
            _check_partition_vector(where, self.opcode, "reduce_res", self.reduce_res, partitions)
        for ap in (*self.destinations(), *self.sources()):
            ap.check_static(where)

    def operands_text(self):
        x = self.data.describe()
        if isinstance(self.scale, AccessPattern) or self.scale != 1.0:
            x += f" * {_operand_text(self.scale)}"
        if isinstance(self.bias, AccessPattern) or self.bias != 0.0:
            x += f" + {_operand_text(self.bias)}"
        text = f"{self.func}({x})"
        if self.reduce_cmd != "idle":
            text += f" reduce_cmd={self.reduce_cmd}"
        if self.reduce_res is not None:
            text += f" reduce_res={self.reduce_res.describe()}"
        return text


@dataclass(eq=False)
class DmaCopy(Instruction):
    """Move data between HBM and SBUF (either way, or within one); src may be an indirect gather. Between two
    dtypes a direct DMA casts, through float32 as the engines do (NKI docs, "Introduction to DMA with NKI":
    source to FP32, then to the destination type)."""

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
        self._check_moves_bits(where, "dma_copy", casts=self.src.indirect_dim is None)

    def _check_moves_bits(self, where: str, what: str, casts: bool = False) -> None:
        """A DMA moves data between HBM and SBUF: one shape on both sides, and one dtype unless it ``casts``."""
        for ap in (self.src, self.dst):
            if ap.is_sbuf and ap.tensor.memory != "sbuf":
                raise InvalidValueError(f"{where}: {what} moves data between HBM and SBUF; {ap.describe()} is in "
                                        f"{ap.tensor.memory.upper()}, which the engines reach: copy it to an SBUF tile "
                                        f"first (nl.copy or nisa.tensor_copy)")
        if self.src.dtype != self.dst.dtype and not casts:
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
    """dst = value everywhere (nisa.memset): the float32 scalar cast to dst's dtype; on the vector engine or
    GpSimd (which reaches SBUF only)."""

    dst: AccessPattern
    value: float
    engine: str = "vector"
    opcode = "memset"

    def validate(self, where: str) -> None:
        if self.engine == "gpsimd":
            _check_on_chip(where, "memset on GpSimd", self.dst, "sbuf")
        super().validate(where)

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
    reads_dst = True

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


# -- the tensor engine ---------------------------------------------------------------------------------

#: PSUM per partition: 8 banks of 2 KiB (16 KiB, memory.PSUM_BANK_BYTES); a matmul's output lies within one bank
#: [NKI architecture guide (Trainium/Inferentia2), "Near-memory accumulation in PSUM"]. The bank rule is checked
#: from the tile's start (which the allocators put at a bank).
PSUM_BANKS = PSUM_PARTITION_BYTES // PSUM_BANK_BYTES
#: The PE array: 128 rows (the contraction: both inputs' partitions) x 128 columns (stationary's free size);
#: moving's free size is at most 512, the float32 elements of one PSUM bank [nki.isa.nc_matmul].
PE_ROWS, PE_COLUMNS, MOVING_FREE_MAX = 128, 128, PSUM_BANK_BYTES // 4
#: Tensor engine input dtypes the machine has (NKI also takes tfloat32, which the machine lacks, and from
#: NeuronCore-v4 float8_e4m3fn, which the machine's v2 and v3 do not). float32 goes only with float32
#: [nki.isa.nc_matmul, "Data types"].
MATMUL_DTYPES = (dtypes.float8_e4m3, dtypes.float8_e5m2, dtypes.bfloat16, dtypes.float16, dtypes.float32)
#: nc_matmul's performance modes: "none", and "double_row", NeuronCore-v3's double FP8 mode, which takes float8_e4m3
#: or float8_e5m2 inputs (the two may differ) laid out (K, 2, M) and (K, 2, N) [nki.isa.nc_matmul, "Performance
#: mode", "Data types", "Layout"].
MATMUL_PERF_MODES = ("none", "double_row")
DOUBLE_ROW_DTYPES = (dtypes.float8_e4m3, dtypes.float8_e5m2)


def psum_banks(ap: AccessPattern) -> tuple[int, int]:
    """The first and last PSUM bank, counted from its tile's first (a tile starts at a bank), that an on-chip
    pattern's bytes reach in each partition."""
    t = ap.tensor
    f0 = ap.offset % t.free_size
    low, high = ap.free_extent()
    item = t.dtype.itemsize
    return (f0 + low) * item // PSUM_BANK_BYTES, ((f0 + high + 1) * item - 1) // PSUM_BANK_BYTES


def _check_one_bank(where: str, opcode: str, dst: AccessPattern) -> None:
    first, last = psum_banks(dst)
    if first != last:
        raise InvalidValueError(f"{where}: {opcode} writes within one PSUM bank ({PSUM_BANK_BYTES} bytes per "
                                f"partition; a PSUM tile starts at a bank), but {dst.describe()} spans banks "
                                f"{first}..{last} of its tile; write a slice of at most {PSUM_BANK_BYTES} bytes per "
                                f"partition starting at a multiple of {PSUM_BANK_BYTES} bytes")


@dataclass(eq=False)
class NcMatmul(Instruction):
    """dst = stationary.T @ moving on the tensor engine (nisa.nc_matmul); dst += it with ``accumulate``.

    stationary (K, M) and moving (K, N) are SBUF tiles (free axes flattened): K <= 128 partitions (the
    contraction), M <= 128, N <= 512; dst (M, N) is a float32 PSUM tile within one bank. Arithmetic: each
    product in float32 (exact for float8, bfloat16 and float16 inputs), summed over k = 0..K-1 in order into a
    float32 sum that starts at +0.0 (the running sum a PE column passes down); the sum overwrites dst, or,
    accumulating, is added to dst in float32 (PSUM's near-memory accumulation). ``is_*_onezero`` say an operand
    holds only 0 and 1 (a speed hint; the simulator checks it). ``tile_position`` / ``tile_size``: PE tiling,
    checked as documented (the cost model runs tiles one after another).

    ``perf_mode="double_row"`` (NeuronCore-v3's double FP8 mode): float8 stationary (K, 2, M) and moving (K, 2, N),
    the contraction of 2K split into K partitions x 2, ``[k, t]`` being contraction index t * K + k; each PE row k
    adds its two float32 products, t = 0 then 1, and passes that pair's sum into the column's running sum as
    above [Trainium2 architecture guide, "Double FP8 Matmul Performance": "each processing element performs two
    pairs of FP8 multiplications and also accumulation of the two multiplication results per cycle"]. It does
    not combine with column tiling [nki.isa.nc_matmul].
    """

    dst: AccessPattern
    stationary: AccessPattern
    moving: AccessPattern
    accumulate: bool = False
    is_stationary_onezero: bool = False
    is_moving_onezero: bool = False
    tile_position: tuple = ()
    tile_size: tuple = ()
    perf_mode: str = "none"
    engine = "tensor"
    opcode = "nc_matmul"

    def sources(self):
        return (self.stationary, self.moving)

    @property
    def pairs(self) -> int:
        """Contraction elements each PE row takes per operand column: 2 in double_row mode, else 1."""
        return 2 if self.perf_mode == "double_row" else 1

    @property
    def reads_dst(self) -> bool:
        return self.accumulate

    def validate(self, where: str) -> None:
        s, m, d = self.stationary, self.moving, self.dst
        for ap in (s, m):
            _check_on_chip(where, "nc_matmul (stationary and moving)", ap, "sbuf")
        _check_on_chip(where, "nc_matmul (dst)", d, "psum")
        for what, ap in (("stationary", s), ("moving", m)):
            if ap.dtype not in MATMUL_DTYPES:
                raise InvalidValueError(f"{where}: nc_matmul requires {what} of float8_e4m3, float8_e5m2, bfloat16, "
                                        f"float16 or float32, got {ap.describe()} of {ap.dtype}"
                                        + ("" if ap.dtype != dtypes.float8_e4m3fn else " (a NeuronCore-v4 input; the "
                                           "machine models v2 and v3)") + "; cast it with tensor_copy first")
        if (s.dtype == dtypes.float32) != (m.dtype == dtypes.float32):
            raise InvalidValueError(f"{where}: nc_matmul takes float32 only with float32, got stationary {s.dtype} "
                                    f"and moving {m.dtype}; cast both to one precision")
        if d.dtype != dtypes.float32:
            raise InvalidValueError(f"{where}: nc_matmul requires a float32 dst (NeuronCore-v2 and v3 accumulate "
                                    f"and write float32), got {d.describe()} of {d.dtype}")
        if self.perf_mode != "none":
            self._check_double_row(where)
        k, rows, cols, pairs = s.shape[0], PE_ROWS, PE_COLUMNS, self.pairs
        if self.tile_position or self.tile_size:
            rows, cols = self._check_tiling(where, k, free_size(s) // pairs)
        if m.shape[0] != k or k > rows:
            raise InvalidValueError(f"{where}: nc_matmul requires stationary and moving on one number of partitions "
                                    f"(the contraction), at most {rows}, got {s.shape[0]} and {m.shape[0]}")
        m_size, n_size = free_size(s) // pairs, free_size(m) // pairs
        if m_size > cols or n_size > MOVING_FREE_MAX:
            per = " in each half (t = 0, 1) of the double row" if pairs == 2 else ""
            raise InvalidValueError(f"{where}: nc_matmul requires at most {cols} elements per partition of "
                                    f"stationary and {MOVING_FREE_MAX} of moving{per}, got {m_size} and {n_size}; "
                                    f"tile the matmul")
        if d.shape[0] != m_size or free_size(d) != n_size:
            raise InvalidValueError(f"{where}: nc_matmul of stationary {s.shape} and moving {m.shape} gives "
                                    f"({m_size}, {n_size}), which {d.describe()} of shape {d.shape} does not hold")
        _check_one_bank(where, "nc_matmul", d)
        for ap in (d, s, m):
            ap.check_static(where)

    def _check_double_row(self, where: str) -> None:
        """perf_mode (nki.isa.nc_matmul, "Performance mode", "Data types", "Layout"): a known mode; double_row
        takes float8_e4m3 / float8_e5m2 operands whose first free dimension is 2, and no column tiling."""
        if self.perf_mode not in MATMUL_PERF_MODES:
            raise InvalidValueError(f"{where}: nc_matmul requires perf_mode one of {', '.join(MATMUL_PERF_MODES)}, "
                                    f"got {self.perf_mode!r}")
        s, m = self.stationary, self.moving
        if s.dtype not in DOUBLE_ROW_DTYPES or m.dtype not in DOUBLE_ROW_DTYPES:
            raise InvalidValueError(f"{where}: nc_matmul perf_mode='double_row' requires stationary and moving of "
                                    f"float8_e4m3 or float8_e5m2, got stationary {s.dtype} and moving {m.dtype}; "
                                    f"cast both to a float8 dtype first, or use perf_mode='none'")
        for what, ap, free in (("stationary", s, "M"), ("moving", m, "N")):
            if len(ap.shape) < 3 or ap.shape[1] != 2:
                raise InvalidValueError(f"{where}: nc_matmul perf_mode='double_row' requires {what} of shape "
                                        f"(K, 2, {free}) (the contraction split into K partitions x 2), got "
                                        f"{ap.describe()} of shape {ap.shape}; index it as [k, t, {free.lower()}]")
        if self.tile_size and self.tile_size[1:] != (PE_COLUMNS,):
            raise InvalidValueError(f"{where}: nc_matmul perf_mode='double_row' requires the full {PE_COLUMNS} PE "
                                    f"columns (it does not combine with column tiling), got tile_size "
                                    f"{self.tile_size}; tile rows only, or use perf_mode='none'")

    def _check_tiling(self, where: str, k: int, m: int) -> tuple[int, int]:
        """PE tiling (nisa.nc_matmul, "Tiling mode"): both tuples set, multiples of 32, each tile inside the array
        and starting at a multiple of its size, the stationary inside the tile. Returns (row_size, column_size)."""
        pos, size = tuple(self.tile_position), tuple(self.tile_size)
        ok = len(pos) == len(size) == 2 and all(isinstance(v, int) and v % 32 == 0 for v in pos + size)
        ok = ok and all(0 < n <= 128 and 0 <= p and p % n == 0 and p + n <= 128 for p, n in zip(pos, size))
        if not ok:
            raise InvalidValueError(f"{where}: nc_matmul requires tile_position (start_row, start_column) and "
                                    f"tile_size (row_size, column_size) together, multiples of 32, each start a "
                                    f"multiple of its size and the tile within the 128x128 PE array, got "
                                    f"tile_position={self.tile_position}, tile_size={self.tile_size}")
        if k > size[0] or m > size[1]:
            raise InvalidValueError(f"{where}: nc_matmul's stationary ({k}, {m}) must fit tile_size {size}")
        return size

    def operands_text(self):
        text = f"{self.stationary.describe()}.T @ {self.moving.describe()}"
        text = f"{self.dst.describe()} + {text}" if self.accumulate else text
        return text if self.perf_mode == "none" else f"{text} perf_mode={self.perf_mode}"


@dataclass(eq=False)
class NcTranspose(Instruction):
    """dst[f, p] = data[p, f] (nisa.nc_transpose), bit-exact, data's free axes flattened, dst of data's dtype.

    ``engine`` "tensor": data in SBUF, at most 128 x 128, dst in PSUM within one bank (a matmul by the identity;
    modelled bit-exact, as NeuronCore-v3's transpose mode is: v2's is not for NaN and Inf). "vector": at most
    32 x 32 (the vector engine's 32x32 reshape transpose), SBUF or PSUM on either side.
    """

    dst: AccessPattern
    data: AccessPattern
    engine: str = "tensor"
    opcode = "nc_transpose"

    def sources(self):
        return (self.data,)

    def validate(self, where: str) -> None:
        d, x = self.dst, self.data
        limit = {"tensor": 128, "vector": 32}.get(self.engine)
        if limit is None:
            raise InvalidValueError(f"{where}: nc_transpose runs on the tensor or the vector engine, got "
                                    f"{self.engine!r}")
        _check_on_chip(where, f"nc_transpose on the {self.engine} engine", x, "sbuf" if self.engine == "tensor" else None)
        _check_on_chip(where, f"nc_transpose on the {self.engine} engine", d, "psum" if self.engine == "tensor" else None)
        if d.dtype != x.dtype:
            raise InvalidValueError(f"{where}: nc_transpose requires dst of data's dtype {x.dtype}, got "
                                    f"{d.describe()} of {d.dtype}; cast with tensor_copy after")
        if x.shape[0] > limit or free_size(x) > limit:
            raise InvalidValueError(f"{where}: nc_transpose on the {self.engine} engine takes at most {limit} x "
                                    f"{limit}, got {x.describe()} of shape {x.shape}"
                                    + ("; use the tensor engine (dst in PSUM)" if self.engine == "vector" else ""))
        if d.shape[0] != free_size(x) or free_size(d) != x.shape[0]:
            raise InvalidValueError(f"{where}: nc_transpose of {x.describe()} ({x.shape[0]} x {free_size(x)}) gives "
                                    f"({free_size(x)}, {x.shape[0]}), which {d.describe()} of shape {d.shape} "
                                    f"does not hold")
        if self.engine == "tensor":
            _check_one_bank(where, "nc_transpose", d)
        for ap in (d, x):
            ap.check_static(where)

    def operands_text(self):
        return f"{self.data.describe()}.T"


# -- vector and GpSimd extras ---------------------------------------------------------------------------

def _check_elementwise(where: str, opcode: str, dst: AccessPattern, *tiles: AccessPattern) -> None:
    """Engine operands on chip, each of dst's shape; at most one of the inputs in PSUM (NKI: the vector engine
    reads two tensor inputs from SBUF, or one from SBUF and one from PSUM)."""
    for ap in (dst, *tiles):
        _check_on_chip(where, opcode, ap)
    for ap in tiles:
        if ap.shape != dst.shape:
            raise InvalidValueError(f"{where}: {opcode} requires operands of the destination's shape {dst.shape}, "
                                    f"got {ap.describe()} of shape {ap.shape}")
    if len(tiles) == 2 and all(ap.tensor.memory == "psum" for ap in tiles):
        raise InvalidValueError(f"{where}: {opcode} reads at most one of its two tensor inputs from PSUM, got "
                                f"{tiles[0].describe()} and {tiles[1].describe()}; copy one to SBUF first")


def _check_operand(where, opcode, what, x, partitions) -> None:
    if isinstance(x, AccessPattern):
        _check_partition_vector(where, opcode, what, x, partitions)


@dataclass(eq=False)
class TensorTensorScan(Instruction):
    """A scan along each partition (nisa.tensor_tensor_scan), data's free axes flattened, on the vector engine:
    r[0] = (data0[0] op0 initial) op1 data1[0]; r[i] = (data0[i] op0 r[i-1]) op1 data1[i]. ``reverse0`` puts data0
    on the right of op0, ``reverse1`` data1 on the left of op1. ``initial``: a number or a (P, 1) tile. The
    running value stays float32; each result is cast to dst's dtype as it is written."""

    dst: AccessPattern
    data0: AccessPattern
    data1: AccessPattern
    initial: "float | AccessPattern"
    op0: str
    op1: str
    reverse0: bool = False
    reverse1: bool = False
    engine = "vector"
    opcode = "tensor_tensor_scan"

    def sources(self):
        return (self.data0, self.data1) + ((self.initial,) if isinstance(self.initial, AccessPattern) else ())

    def validate(self, where: str) -> None:
        _check_elementwise(where, self.opcode, self.dst, self.data0, self.data1)
        _check_operand(where, self.opcode, "initial", self.initial, self.dst.shape[0])
        for ap in (self.dst, *self.sources()):
            ap.check_static(where)

    def operands_text(self):
        return (f"scan {self.op0}/{self.op1} of {self.data0.describe()}, {self.data1.describe()} from "
                f"{_operand_text(self.initial)}")


#: The free size bn_stats takes at most (nl.tile_size.bn_stats_fmax) [nki.isa.bn_stats].
BN_STATS_FMAX = 512


@dataclass(eq=False)
class BnStats(Instruction):
    """Per partition, of data's even-indexed then odd-indexed elements (free axes flattened), on the vector
    engine (nisa.bn_stats): count, mean, variance * count, six float32 values cast to dst's dtype.

    The mean is the in-order float32 sum over the count; variance * count the in-order float32 sum of
    (x - mean)^2 (the docs give the outputs, not the arithmetic). A half with no element (data of one element)
    gives 0, 0, 0 (ASSUMED: undocumented; zeros keep bn_aggr's sums finite).
    """

    dst: AccessPattern
    data: AccessPattern
    engine = "vector"
    opcode = "bn_stats"

    def sources(self):
        return (self.data,)

    def validate(self, where: str) -> None:
        for ap in (self.dst, self.data):
            _check_on_chip(where, self.opcode, ap)
        if free_size(self.data) > BN_STATS_FMAX:
            raise InvalidValueError(f"{where}: bn_stats takes at most {BN_STATS_FMAX} elements per partition "
                                    f"(nl.tile_size.bn_stats_fmax), got {free_size(self.data)}; run one bn_stats per "
                                    f"{BN_STATS_FMAX} elements into one tile and bn_aggr it")
        if self.dst.shape[0] != self.data.shape[0] or free_size(self.dst) != 6:
            raise InvalidValueError(f"{where}: bn_stats writes 6 values per partition of data's "
                                    f"{self.data.shape[0]}, got dst {self.dst.describe()} of shape {self.dst.shape}")
        for ap in (self.dst, self.data):
            ap.check_static(where)

    def operands_text(self):
        return f"stats of {self.data.describe()}"


@dataclass(eq=False)
class BnAggr(Instruction):
    """Mean and variance per partition from bn_stats' (count, mean, variance * count) triples, on the vector
    engine (nisa.bn_aggr): n = sum of counts, mean = sum(count * mean) / n, variance = (sum(variance * count) +
    sum(count * (mean_i - mean)^2)) / n, each sum in order in float32 (the parallel-variance combination: the
    docs give the inputs and outputs, not the arithmetic); two values cast to dst's dtype."""

    dst: AccessPattern
    data: AccessPattern
    engine = "vector"
    opcode = "bn_aggr"

    def sources(self):
        return (self.data,)

    def validate(self, where: str) -> None:
        for ap in (self.dst, self.data):
            _check_on_chip(where, self.opcode, ap)
        n = free_size(self.data)
        if n == 0 or n % 3:
            raise InvalidValueError(f"{where}: bn_aggr reads (count, mean, variance * count) triples, so a multiple "
                                    f"of 3 elements per partition, got {n}")
        if self.dst.shape[0] != self.data.shape[0] or free_size(self.dst) != 2:
            raise InvalidValueError(f"{where}: bn_aggr writes mean and variance (2 values) per partition of data's "
                                    f"{self.data.shape[0]}, got dst {self.dst.describe()} of shape {self.dst.shape}")
        for ap in (self.dst, self.data):
            ap.check_static(where)

    def operands_text(self):
        return f"mean, variance of {self.data.describe()}"


#: Reductions tensor_partition_reduce simulates (NKI also has bitwise_or and bitwise_and, which need integer
#: bit operations the machine's ALU ops do not have).
PARTITION_REDUCE_OPS = ("add", "maximum")


@dataclass(eq=False)
class TensorPartitionReduce(Instruction):
    """dst[0, ...] = op over data's partitions, in partition order, in float32, on GpSimd
    (nisa.tensor_partition_reduce): data (P, F...) in SBUF gives dst (1, F...)."""

    dst: AccessPattern
    op: str
    data: AccessPattern
    engine = "gpsimd"
    opcode = "tensor_partition_reduce"

    def sources(self):
        return (self.data,)

    def validate(self, where: str) -> None:
        for ap in (self.dst, self.data):
            _check_on_chip(where, f"{self.opcode} (GpSimd cannot reach PSUM)", ap, "sbuf")
        if self.op not in PARTITION_REDUCE_OPS:
            raise InvalidValueError(f"{where}: tensor_partition_reduce reduces with {' or '.join(PARTITION_REDUCE_OPS)}"
                                    f", got {self.op!r}")
        if self.dst.shape[0] != 1 or free_size(self.dst) != free_size(self.data):
            raise InvalidValueError(f"{where}: tensor_partition_reduce of {self.data.describe()} gives one partition "
                                    f"of {free_size(self.data)} elements, which {self.dst.describe()} of shape "
                                    f"{self.dst.shape} does not hold")
        for ap in (self.dst, self.data):
            ap.check_static(where)

    def operands_text(self):
        return f"{self.op} over the partitions of {self.data.describe()}"


@dataclass(eq=False)
class ScalarTensorTensor(Instruction):
    """dst = (data op0 operand0) op1 operand1 on the vector engine (nisa.scalar_tensor_tensor), in float32:
    operand0 a number or a (P, 1) tile, operand1 a tile of data's shape; ``reverse0`` puts operand0 on the left
    of op0, ``reverse1`` operand1 on the left of op1."""

    dst: AccessPattern
    data: AccessPattern
    op0: str
    operand0: "float | AccessPattern"
    op1: str
    operand1: AccessPattern
    reverse0: bool = False
    reverse1: bool = False
    engine = "vector"
    opcode = "scalar_tensor_tensor"

    def sources(self):
        return (self.data, self.operand1) + ((self.operand0,) if isinstance(self.operand0, AccessPattern) else ())

    def validate(self, where: str) -> None:
        _check_elementwise(where, self.opcode, self.dst, self.data, self.operand1)
        _check_operand(where, self.opcode, "operand0", self.operand0, self.dst.shape[0])
        for ap in (self.dst, *self.sources()):
            ap.check_static(where)

    def operands_text(self):
        x, c, t = self.data.describe(), _operand_text(self.operand0), self.operand1.describe()
        first = f"{c} {self.op0} {x}" if self.reverse0 else f"{x} {self.op0} {c}"
        return f"{t} {self.op1} ({first})" if self.reverse1 else f"({first}) {self.op1} {t}"


@dataclass(eq=False)
class Reciprocal(Instruction):
    """dst = 1 / data on the vector engine (nisa.reciprocal): float32 division, cast to dst's dtype."""

    dst: AccessPattern
    data: AccessPattern
    engine = "vector"
    opcode = "reciprocal"

    def sources(self):
        return (self.data,)

    def operands_text(self):
        return f"1 / {self.data.describe()}"


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
