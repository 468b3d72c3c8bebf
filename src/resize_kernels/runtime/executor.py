"""Runs a lowered HLO module: ordinary ops in numpy, internal kernels' Programs on the simulated NeuronCore.

Values are logical numpy arrays (Python tuples for tuple shapes); a layout is
physical order only, so it is ignored. The entry computation is planned once
(attributes parsed, literals read, shapes checked: no op may compute a shape
other than the one the HLO declares, nor broadcast implicitly) and every run
checks each result against its declared shape, so an inconsistent module
fails at the instruction that is wrong. Before a run allocates anything, the
host memory its values need is checked (ResourceError beyond the machine);
a kernel's Executable is made on its first run and then reused.

Results follow XLA's semantics where they differ from numpy's: integer
divide and remainder round toward zero and define x / 0 = -1 and x % 0 = x,
shifts saturate at the bit width, integer power is XLA's, maximum and minimum
propagate NaN and order -0 below +0 (with XLA:CPU's NaN signs), float to
integer conversion saturates, float conversions make NaNs quiet. bfloat16
(and the 8-bit floats) is computed in float32 and rounded once per op, as
XLA:CPU does with ``--xla_allow_excess_precision=false``; so is float16
arithmetic, while float16 negate, abs, sign, maximum and minimum work on its
bits, as XLA's do. Two things XLA:CPU does beyond HLO's semantics are not
done: subnormal floats are kept (XLA:CPU flushes them to zero), and a
multiply feeding an add rounds twice (XLA:CPU fuses them into one
multiply-add). The sign and payload of a NaN made by arithmetic are
numpy's (IEEE leaves them open). Transcendental functions (exponential,
log, tanh ...) are not specified bit for bit by XLA: here they are
evaluated in float64 and rounded to float32 (then once more to a narrower
type), within a few ulp of XLA:CPU's.
Reductions fold in a fixed order, documented at ``_reduce``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from functools import partial

import ml_dtypes
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..compiler.hlo import HloInstruction, HloModule, Shape, TupleShape
from ..compiler.hlo.attributes import parse_int
from ..compiler.hlo.lexer import HloParseError, printable
from ..compiler.hlo.shape import leaf_shapes
from ..errors import InvalidTypeError, InvalidValueError, ResourceError
from ..intmath import ceil_div
from ..machine.errors import MachineError
from ..machine.isa import Program
from ..machine.memory import check_host_memory
from ..machine.simulator import Executable

Value = np.ndarray | tuple
#: Element combinations (output elements x window elements) one reduce-window may take: about 10-20 s of numpy.
MAX_REDUCE_WINDOW_WORK = 1 << 32
_BLOCK = 1 << 22  # elements of the windows gathered at once by reduce-window (16 MB of float32)


class ExecutionError(InvalidValueError):
    """A module the executor cannot run, or arguments that do not fit it; the message says which and why."""

    def __init__(self, message: str):
        super().__init__(printable(message))  # it may quote the module's text: no control characters


class Executor:
    """The entry computation of a lowered module, planned once and runnable many times."""

    def __init__(self, module: HloModule, programs: Mapping[HloInstruction, Program]):
        self.module = module
        self.entry = module.entry
        self.parameters = self.entry.parameters
        self._steps = [(inst, _plan(inst, programs.get(inst))) for inst in self.entry.instructions]
        # Every value a run keeps (values() returns them all), plus the most any one step needs on the side.
        needs = [(_step_bytes(inst), inst) for inst in self.entry.instructions if inst.opcode != "parameter"]
        self.nbytes = sum(_value_bytes(inst.shape) for _, inst in needs) + max(
            (step - _value_bytes(inst.shape) for step, inst in needs), default=0)
        self._largest = max(needs, key=lambda need: need[0], default=None)

    def __call__(self, *args) -> Value:
        """The value of the ROOT instruction (a tuple for a tuple-shaped ROOT)."""
        return self.values(*args)[self.entry.root.name]

    def values(self, *args) -> dict[str, Value]:
        """The value of every entry instruction, by name: for inspecting what each step computed."""
        arguments = dict(zip(self.parameters, self._check_arguments(args)))
        if self._largest is not None:
            nbytes, inst = self._largest
            check_host_memory(self.nbytes, f"running module {self.module.name} (its largest step: {inst.opcode} "
                                           f"{inst.name!r}, {inst.shape}, about {_size(nbytes)})")
        env: dict[HloInstruction, Value] = {}
        for inst, compute in self._steps:
            inputs = (arguments[inst],) if inst.opcode == "parameter" else [env[op] for op in inst.operands]
            try:
                with np.errstate(all="ignore"):  # IEEE results (inf, NaN) are values, not warnings
                    value = compute(*inputs)
            except ResourceError as error:
                raise ResourceError(f"{inst.opcode} {inst.name!r}: {error}") from error
            except MachineError as error:
                raise ExecutionError(f"{inst.opcode} {inst.name!r} ({_kernel_label(inst)}) failed on the simulated "
                                     f"NeuronCore: {error}") from error
            except MemoryError as error:  # an estimate fell short: still a clear error, not a crash
                raise ResourceError(f"{inst.opcode} {inst.name!r} ran out of host memory computing {inst.shape}; "
                                    f"use a smaller shape or a machine with more memory") from error
            except (ValueError, IndexError) as error:
                raise ExecutionError(f"{inst.opcode} {inst.name!r} failed on "
                                     f"{', '.join(map(_describe, inputs)) or 'no operands'}: {error}") from error
            value = value if isinstance(value, tuple) else np.asarray(value)
            if not _matches(value, inst.shape):
                raise ExecutionError(f"{inst.opcode} {inst.name!r} computed {_describe(value)}, but the HLO "
                                     f"declares {inst.shape}; fix the instruction's shape or its attributes")
            env[inst] = value
        return {inst.name: value for inst, value in env.items()}

    def _check_arguments(self, args) -> list[Value]:
        if len(args) != len(self.parameters):
            names = ", ".join(f"{p.name}: {p.shape}" for p in self.parameters)
            raise ExecutionError(f"module {self.module.name} takes {len(self.parameters)} argument(s) ({names}), "
                                 f"got {len(args)}")
        values = [_as_value(arg) for arg in args]
        for number, (param, value) in enumerate(zip(self.parameters, values)):
            if not _matches(value, param.shape):
                raise ExecutionError(f"argument {number} ({param.name}) must be a {_expected(param.shape)}, "
                                     f"got {_describe(value)}")
        return values


def random_arguments(module: HloModule, seed: int = 0) -> list[Value]:
    """Seeded random arguments for the module's entry parameters (normal floats, small integers, random bools)."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, (bool, np.bool_)):
        raise InvalidTypeError(f"random_arguments requires an integer seed, got {type(seed).__name__}")
    if seed < 0:
        raise InvalidValueError(f"random_arguments requires a seed of at least 0, got {seed}; pass 0 or more")
    params = module.entry.parameters
    for param in params:
        for leaf in leaf_shapes(param.shape):
            _numpy_dtype(leaf)
    # float64 draws, then the element type: 8 bytes per element on the side, besides the arguments themselves.
    nbytes = sum(_value_bytes(param.shape) for param in params)
    check_host_memory(nbytes + 8 * max((math.prod(leaf.dims) for p in params for leaf in leaf_shapes(p.shape)),
                                       default=0), f"drawing random arguments for module {module.name}")
    rng = np.random.default_rng(seed)

    def draw(shape):
        if isinstance(shape, TupleShape):
            return tuple(draw(element) for element in shape.elements)
        dtype = _numpy_dtype(shape)
        if shape.kind == "pred":
            return rng.random(shape.dims) < 0.5
        if shape.kind in ("int", "uint"):
            info = ml_dtypes.iinfo(dtype)
            low = 0 if shape.kind == "uint" else max(-100, int(info.min))
            return rng.integers(low, min(100, int(info.max)), size=shape.dims, endpoint=True).astype(dtype)
        with np.errstate(over="ignore"):
            return rng.standard_normal(shape.dims).astype(dtype)

    return [draw(param.shape) for param in params]


# ----- planning: one compute function per instruction --------------------------------------------

def _plan(inst: HloInstruction, program: Program | None) -> Callable:
    """The function computing ``inst`` from its operands' values (a parameter's from its argument)."""
    for leaf in inst.results:
        _numpy_dtype(leaf.shape)
    if program is not None:
        return _kernel(program)
    if inst.opcode == "custom-call":
        target = inst.attributes.get("custom_call_target", "none")
        raise ExecutionError(f"custom-call {inst.name!r} (custom_call_target={target}) was not lowered by the "
                             f"compiler; the executor runs kernels only as the InternalNativeNkiKernel "
                             f"instructions that compile_hlo traced")
    if inst.opcode not in _OPS:
        raise ExecutionError(f"the executor cannot run {inst.opcode} {inst.name!r}; it runs "
                             f"{', '.join(sorted(_OPS))} and traced kernels")
    arity, builder = _OPS[inst.opcode]
    if arity is not None and len(inst.operands) != arity:
        raise ExecutionError(f"{inst.opcode} {inst.name!r} takes {arity} operand(s), got {len(inst.operands)}")
    shapes = [inst.shape, *(op.shape for op in inst.operands)]
    if inst.opcode not in _TUPLE_OPS and not all(isinstance(shape, Shape) for shape in shapes):
        raise ExecutionError(f"{inst.opcode} {inst.name!r} works on arrays, got shapes "
                             f"{', '.join(map(str, shapes))}")
    if inst.opcode in _ELEMENTWISE and any(op.shape.dims != inst.shape.dims for op in inst.operands):
        raise ExecutionError(f"{inst.opcode} {inst.name!r} requires operands of its result's dimensions "
                             f"{list(inst.shape.dims)}, got {', '.join(str(op.shape) for op in inst.operands)}; "
                             f"HLO does not broadcast implicitly: broadcast the operand first")
    try:
        return builder(inst)
    except (ExecutionError, ResourceError):
        raise
    except ValueError as error:  # a malformed attribute, read by the IR's accessors
        raise ExecutionError(f"cannot run {inst.opcode} {inst.name!r}: {error}") from None


def _kernel(program: Program) -> Callable:
    """Run the Program with the first operands it takes as inputs, on an Executable made at the first run."""
    executables: list[Executable] = []
    count = len(program.inputs)

    def run(*operands):
        if not executables:
            executables.append(Executable(program))
        outputs = executables[0].run(list(operands[:count]))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return run


def _kernel_label(inst: HloInstruction) -> str:
    try:
        return f"kernel {inst.kernel_name!r}"
    except ValueError:
        return "kernel"


def _constant(inst):
    literal = _read_only(inst.literal)
    return lambda: literal


def _transpose(inst):
    dims = inst.dimensions
    return lambda x: np.transpose(x, dims)


def _reshape(inst):
    dims = inst.shape.dims
    return lambda x: np.reshape(x, dims)


def _broadcast(inst):
    """Operand dim i becomes result dim dimensions[i]; the other result dims repeat it."""
    dims, out = inst.dimensions, inst.shape.dims
    operand_dims = inst.operands[0].shape.dims
    if len(dims) != len(operand_dims) or not all(0 <= d < len(out) for d in dims):
        raise ExecutionError(f"broadcast {inst.name!r} requires one result dimension per operand dimension, got "
                             f"dimensions={inst.attributes['dimensions']} for {inst.operands[0].shape} -> {inst.shape}")
    order = np.argsort(dims)
    expanded = [1] * len(out)
    for axis, dim in enumerate(dims):
        expanded[dim] = operand_dims[axis]
    return lambda x: np.ascontiguousarray(np.broadcast_to(np.transpose(x, order).reshape(expanded), out))


# ----- element types ---------------------------------------------------------------------------

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
_SIGNED = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
#: The quiet bit of a NaN, per IEEE float type numpy computes in.
_QUIET = {_F16: 1 << 9, _F32: 1 << 22, _F64: 1 << 51}


def _in_f32(fn: Callable, dtype: np.dtype) -> Callable:
    """``fn`` on float32 copies of floats narrower than float32, its result rounded once to `dtype` (XLA:CPU
    computes half types so); float32 and float64 as they are."""
    if dtype in (_F32, _F64):
        return fn
    return lambda *xs: fn(*(x.astype(np.float32) if x.dtype == dtype else x for x in xs)).astype(dtype)


def _in_f64(fn: Callable, dtype: np.dtype) -> Callable:
    """``fn`` evaluated in float64 and rounded to float32, then (for a narrower type) to `dtype`: a transcendental
    function's float32 value as a correctly rounded library would give it, and XLA's one rounding of half types."""
    if dtype == _F64:
        return fn

    def run(*xs):
        value = fn(*(x.astype(np.float64) if x.dtype == dtype else x for x in xs)).astype(np.float32)
        return value if dtype == _F32 else value.astype(dtype)

    return run


def _bitwise(fn: Callable, dtype: np.dtype) -> Callable:
    """An op that only moves sign bits (negate, abs, sign, maximum ...): on the bits of float16, float32 and
    float64, as XLA does; other floats through float32 (XLA:CPU's bfloat16 result is then a canonical NaN)."""
    return fn if dtype in (_F16, _F32, _F64) else _in_f32(fn, dtype)


# ----- convert ---------------------------------------------------------------------------------

def _convert(inst):
    """Element type conversion; float to integer truncates toward zero and saturates, NaN gives 0 (as XLA).

    Between floats, a NaN is made quiet before it is converted, as XLA:CPU's
    conversions do (numpy keeps a signalling float16 NaN signalling), except
    bfloat16 to float32, which XLA does by moving bits; bfloat16 to float16
    goes through float32 so that the NaN keeps its payload's top bits; and to
    bfloat16 a NaN is canonical (ml_dtypes and XLA agree there).
    """
    source, result = inst.operands[0].shape, inst.shape
    dtype = result.numpy_dtype
    if result.kind == "pred":
        return lambda x: x != 0
    if source.kind == "float" and result.kind in ("int", "uint"):
        info = np.iinfo(dtype)

        def saturate(x):
            truncated = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0)
            return np.clip(truncated, info.min, info.max).astype(dtype)

        return saturate
    if source.kind == "float" and dtype in _QUIET and not (source.numpy_dtype == _BF16 and dtype == _F32):
        wide = source.numpy_dtype if source.numpy_dtype in _QUIET else _F32  # bfloat16 goes through float32
        quiet = np.array(_QUIET[wide], _UNSIGNED[wide.itemsize])

        def convert_float(x):
            x = x.astype(wide)  # a copy (or x itself, which is then copied below when it holds a NaN)
            nan = np.isnan(x)
            if nan.any():
                x = x.copy()
                bits = x.view(quiet.dtype)
                bits[nan] |= quiet  # quiet first, as the hardware does; then the payload's top bits carry over
            return x.astype(dtype)

        return convert_float
    return lambda x: x.astype(dtype)


# ----- elementwise arithmetic ------------------------------------------------------------------

def _divide(a, b):
    """HLO divide: integers round toward zero and x / 0 gives -1 (all bits set), as XLA defines it."""
    if a.dtype.kind not in "iu":
        return np.divide(a, b)
    zero = b == 0
    divisor = np.where(zero, 1, b).astype(a.dtype)
    with np.errstate(over="ignore"):
        quotient = np.floor_divide(a, divisor)
        quotient += (quotient < 0) & (quotient * divisor != a)  # numpy floors; HLO truncates
    return np.where(zero, np.array(-1).astype(a.dtype), quotient)


def _remainder(a, b):
    """HLO integer remainder: the sign of the dividend (C's %), x % 0 = x, INT_MIN % -1 = 0, as XLA defines it."""
    zero = b == 0
    divisor = np.where(zero | (b == -1) if a.dtype.kind == "i" else zero, 1, b).astype(a.dtype)  # x % -1 is 0
    return np.where(zero, a, np.fmod(a, divisor))


def _integer_power(base, exponent):
    """XLA's integer power: exponentiation by squaring over the exponent's low 6 bits, wrapping; an exponent
    negative as a signed number gives 0, except for a base of 1 or of all bits set (-1), which give the product."""
    unsigned = _UNSIGNED[base.dtype.itemsize]
    accumulator, square = np.ones_like(base), base.copy()
    for bit in range(6):
        accumulator = np.where((exponent >> bit) & 1 == 1, accumulator * square, accumulator)
        square = square * square
    negative = exponent.view(_SIGNED[exponent.dtype.itemsize]) < 0
    ones = base.view(unsigned) == np.iinfo(unsigned).max
    return np.where(~negative | (base == 1) | ones, accumulator, np.zeros_like(base))


def _shift(direction: str, dtype: np.dtype) -> Callable:
    """XLA's shifts: the amount read as unsigned; from the bit width on, 0 (left, logical) or the sign (arithmetic,
    which shifts the bits as signed whatever the type)."""
    bits, unsigned, signed = dtype.itemsize * 8, _UNSIGNED[dtype.itemsize], _SIGNED[dtype.itemsize]

    def run(x, amount):
        amount = amount.view(unsigned)
        inside = amount < bits
        if direction == "arithmetic":
            return np.right_shift(x.view(signed), np.minimum(amount, bits - 1).astype(signed)).view(dtype)
        moved = np.where(inside, amount, 0).astype(unsigned)
        shifted = np.left_shift(x.view(unsigned), moved) if direction == "left" else np.right_shift(
            x.view(unsigned), moved)
        return np.where(inside, shifted, 0).astype(unsigned).view(dtype)

    return run


def _float_extreme(a, b, maximum: bool):
    """XLA:CPU's maximum / minimum of two floats (IEEE 754-2019 maximum / minimum, then its NaN rules).

    A NaN first operand is the result; else the larger (smaller) operand, a NaN
    second operand or, for equal operands, the second one; its sign bit is then
    the AND (OR) of the operands' sign bits. So -0 < +0, NaN propagates, and
    max(1, -NaN) is that NaN made positive, as XLA:CPU computes it.
    """
    a, b = np.broadcast_arrays(a, b)
    unsigned = _UNSIGNED[a.dtype.itemsize]
    sign = np.array(1 << (8 * a.dtype.itemsize - 1), unsigned)
    ua, ub = a.view(unsigned), b.view(unsigned)
    picked = np.where(a > b if maximum else a < b, ua, ub)
    signs = (ua & ub if maximum else ua | ub) & sign
    bits = np.where(np.isnan(a), ua, (picked & ~sign) | signs)
    return bits.view(a.dtype)


def _extreme(shape: Shape, maximum: bool) -> Callable:
    if shape.kind != "float":
        return np.maximum if maximum else np.minimum
    return _bitwise(partial(_float_extreme, maximum=maximum), shape.numpy_dtype)


def _float_sign(x):
    """XLA's sign of a float: NaN is itself, ±0 itself, else ±1."""
    return np.where(np.isnan(x) | (x == 0), x, np.copysign(np.ones_like(x), x))


def _round_afz(x):
    """Round half away from zero (x - trunc(x) is exact, so no addition rounds up 0.49999997)."""
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.copysign(np.ones_like(x), x), whole)


def _logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def _rsqrt(x):
    return 1.0 / np.sqrt(x)


def _total_order(x):
    """Integer keys in IEEE totalOrder: -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN."""
    signed = _SIGNED[x.dtype.itemsize]
    bits = x.view(signed)
    return np.where(bits < 0, bits ^ np.array(np.iinfo(signed).max, signed), bits)


_FLOAT, _INT, _PRED = ("float",), ("int", "uint"), ("pred",)
_NUMBER = _FLOAT + _INT
#: Unary elementwise opcodes: (operand kinds, the function for an operand of this shape).
_UNARY: dict[str, tuple[tuple[str, ...], Callable[[Shape], Callable]]] = {
    "negate": (_NUMBER, lambda s: _bitwise(np.negative, s.numpy_dtype) if s.kind == "float" else np.negative),
    "abs": (_NUMBER, lambda s: _bitwise(np.abs, s.numpy_dtype) if s.kind == "float" else np.abs),
    "sign": (_NUMBER, lambda s: _bitwise(_float_sign, s.numpy_dtype) if s.kind == "float" else np.sign),
    "not": (_PRED + _INT, lambda s: np.invert),
    "floor": (_FLOAT, lambda s: _in_f32(np.floor, s.numpy_dtype)),
    "ceil": (_FLOAT, lambda s: _in_f32(np.ceil, s.numpy_dtype)),
    "round-nearest-even": (_FLOAT, lambda s: _in_f32(np.rint, s.numpy_dtype)),
    "round-nearest-afz": (_FLOAT, lambda s: _in_f32(_round_afz, s.numpy_dtype)),
    "is-finite": (_FLOAT, lambda s: np.isfinite),
    "sqrt": (_FLOAT, lambda s: _in_f64(np.sqrt, s.numpy_dtype)),
    "rsqrt": (_FLOAT, lambda s: _in_f64(_rsqrt, s.numpy_dtype)),
    "cbrt": (_FLOAT, lambda s: _in_f64(np.cbrt, s.numpy_dtype)),
    "exponential": (_FLOAT, lambda s: _in_f64(np.exp, s.numpy_dtype)),
    "exponential-minus-one": (_FLOAT, lambda s: _in_f64(np.expm1, s.numpy_dtype)),
    "log": (_FLOAT, lambda s: _in_f64(np.log, s.numpy_dtype)),
    "log-plus-one": (_FLOAT, lambda s: _in_f64(np.log1p, s.numpy_dtype)),
    "tanh": (_FLOAT, lambda s: _in_f64(np.tanh, s.numpy_dtype)),
    "logistic": (_FLOAT, lambda s: _in_f64(_logistic, s.numpy_dtype)),
    "sine": (_FLOAT, lambda s: _in_f64(np.sin, s.numpy_dtype)),
    "cosine": (_FLOAT, lambda s: _in_f64(np.cos, s.numpy_dtype)),
    "tan": (_FLOAT, lambda s: _in_f64(np.tan, s.numpy_dtype)),
}
#: Binary elementwise opcodes (operands and result of one element type): (kinds, the function for this shape).
_BINARY: dict[str, tuple[tuple[str, ...], Callable[[Shape], Callable]]] = {
    "maximum": (_PRED + _NUMBER, lambda s: _extreme(s, maximum=True)),
    "minimum": (_PRED + _NUMBER, lambda s: _extreme(s, maximum=False)),
    "power": (_NUMBER, lambda s: _in_f64(np.power, s.numpy_dtype) if s.kind == "float" else _integer_power),
    "remainder": (_NUMBER, lambda s: _in_f32(np.fmod, s.numpy_dtype) if s.kind == "float" else _remainder),
    "atan2": (_FLOAT, lambda s: _in_f64(np.arctan2, s.numpy_dtype)),
    "and": (_PRED + _INT, lambda s: np.bitwise_and),
    "or": (_PRED + _INT, lambda s: np.bitwise_or),
    "xor": (_PRED + _INT, lambda s: np.bitwise_xor),
    "shift-left": (_INT, lambda s: _shift("left", s.numpy_dtype)),
    "shift-right-logical": (_INT, lambda s: _shift("logical", s.numpy_dtype)),
    "shift-right-arithmetic": (_INT, lambda s: _shift("arithmetic", s.numpy_dtype)),
}
#: Elementwise ops evaluated through float64 (about 3 float64 temporaries per element).
_WIDE = frozenset({"sqrt", "rsqrt", "cbrt", "exponential", "exponential-minus-one", "log", "log-plus-one", "tanh",
                   "logistic", "sine", "cosine", "tan", "power", "atan2"})


def _check_kinds(inst, kinds: tuple[str, ...], shape: Shape) -> None:
    if shape.kind not in kinds:
        names = {"float": "floating-point", "int": "signed integer", "uint": "unsigned integer", "pred": "pred"}
        raise ExecutionError(f"{inst.opcode} {inst.name!r} takes {' or '.join(names[k] for k in kinds)} operands, "
                             f"got {shape}")


def _check_types(inst, shapes, element_type: str) -> None:
    if any(shape.element_type != element_type for shape in shapes):
        raise ExecutionError(f"{inst.opcode} {inst.name!r} requires element type {element_type} throughout, got "
                             f"{', '.join(str(shape) for shape in shapes)}; HLO does not convert implicitly: "
                             f"convert first")


def _unary(inst):
    kinds, make = _UNARY[inst.opcode]
    operand = inst.operands[0].shape
    _check_kinds(inst, kinds, operand)
    if inst.opcode == "is-finite":
        _check_types(inst, [inst.shape], "pred")
    else:
        _check_types(inst, [operand, inst.shape], operand.element_type)
    return make(operand)


def _binary(inst):
    kinds, make = _BINARY[inst.opcode]
    _check_kinds(inst, kinds, inst.shape)
    _check_types(inst, [inst.shape] + [op.shape for op in inst.operands], inst.shape.element_type)
    return make(inst.shape)


_DIRECTIONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
               "GE": np.greater_equal}
#: comparison types each kind of element may use; the first is the default.
_COMPARISONS = {"float": ("FLOAT", "TOTALORDER"), "int": ("SIGNED",), "uint": ("UNSIGNED",),
                "pred": ("UNSIGNED",)}


def _compare(inst):
    """compare, direction=EQ|NE|LT|LE|GT|GE, type= as XLA: FLOAT (IEEE: a NaN is unordered, so only NE holds,
    and -0 == +0) or TOTALORDER for floats, SIGNED or UNSIGNED by the element type; the result is pred."""
    a, b = (op.shape for op in inst.operands)
    _check_types(inst, [a, b], a.element_type)
    _check_types(inst, [inst.shape], "pred")
    direction = _word(inst, "direction", _DIRECTIONS)
    allowed = _COMPARISONS.get(a.kind)
    if allowed is None:
        raise ExecutionError(f"compare {inst.name!r} compares pred, integers or floats, got {a}")
    kind = _word(inst, "type", allowed, default=allowed[0])
    compare = _DIRECTIONS[direction]
    if kind == "TOTALORDER":
        return lambda x, y: compare(_total_order(x), _total_order(y))
    return compare


def _word(inst, key: str, allowed, default: str | None = None) -> str:
    """An attribute that is one word of `allowed` (``direction=GT``)."""
    value = inst.attributes.get(key)
    if value is None and default is not None:
        return default
    text = str(value).strip() if value is not None else None
    if text not in allowed:
        got = "none" if value is None else f"{key}={value}"
        raise ExecutionError(f"{inst.opcode} {inst.name!r} requires {key}= one of {', '.join(allowed)}, got {got}")
    return text


def _select(inst):
    """select(pred, on_true, on_false): elementwise choice; a scalar pred chooses a whole operand."""
    predicate, on_true, on_false = (op.shape for op in inst.operands)
    _check_types(inst, [predicate], "pred")
    _check_types(inst, [on_true, on_false, inst.shape], inst.shape.element_type)
    if predicate.dims not in ((), inst.shape.dims) or on_true.dims != inst.shape.dims or (
            on_false.dims != inst.shape.dims):
        raise ExecutionError(f"select {inst.name!r} requires a scalar predicate or one of the result's dimensions, "
                             f"and both values of its dimensions {list(inst.shape.dims)}, got "
                             f"{', '.join(str(op.shape) for op in inst.operands)}")
    return lambda p, x, y: np.where(p, x, y)


def _clamp(inst):
    """clamp(low, x, high) = minimum(maximum(low, x), high), in XLA:CPU's operand order, with XLA's maximum and
    minimum (NaN propagates, -0 < +0; checked against jax.lax.clamp: clamp(-0, NaN, -0) keeps the NaN's sign,
    which minimum(high, ...) would set); the bounds may be scalars."""
    low, operand, high = (op.shape for op in inst.operands)
    _check_kinds(inst, _PRED + _NUMBER, inst.shape)
    _check_types(inst, [low, operand, high, inst.shape], inst.shape.element_type)
    if operand.dims != inst.shape.dims or any(bound.dims not in ((), inst.shape.dims) for bound in (low, high)):
        raise ExecutionError(f"clamp {inst.name!r} requires an operand of the result's dimensions "
                             f"{list(inst.shape.dims)} and scalar bounds or bounds of those dimensions, got "
                             f"{', '.join(str(op.shape) for op in inst.operands)}")
    maximum, minimum = _extreme(inst.shape, True), _extreme(inst.shape, False)
    return lambda lo, x, hi: np.broadcast_to(minimum(maximum(lo, x), hi), inst.shape.dims).copy()


# ----- shapes moved around ---------------------------------------------------------------------

_RANGE = r"\[\s*(-?[0-9]{1,18})\s*:\s*(-?[0-9]{1,18})\s*(?::\s*(-?[0-9]{1,18})\s*)?\]"
_SLICE = re.compile(rf"\{{\s*(?:{_RANGE}(?:\s*,\s*{_RANGE})*)?\s*\}}")
_PADDING = re.compile(r"-?[0-9]{1,18}_-?[0-9]{1,18}(?:_[0-9]{1,18})?(?:x-?[0-9]{1,18}_-?[0-9]{1,18}(?:_[0-9]{1,18})?)*")


def _slice(inst):
    """slice={[start:limit:stride], ...}, one range per dimension (stride 1 when left out)."""
    operand = inst.operands[0].shape
    text = str(inst.attributes.get("slice", ""))
    if not _SLICE.fullmatch(text):
        raise ExecutionError(f"slice {inst.name!r} requires slice={{[start:limit:stride], ...}}, got "
                             f"{'none' if 'slice' not in inst.attributes else 'slice=' + text}")
    ranges = [(int(a), int(b), int(c or 1)) for a, b, c in re.findall(_RANGE, text)]
    if len(ranges) != operand.rank or any(not 0 <= a <= b <= n or c < 1
                                          for (a, b, c), n in zip(ranges, operand.dims)):
        raise ExecutionError(f"slice {inst.name!r} requires one range 0 <= start <= limit <= size with a stride of "
                             f"at least 1 per dimension of {operand}, got slice={text}")
    dims = tuple(ceil_div(b - a, c) for a, b, c in ranges)
    _check_dims(inst, dims, f"slice={text}")
    index = tuple(slice(a, b, c) for a, b, c in ranges)
    return lambda x: x[index].copy()


def _pad(inst):
    """pad(x, value), padding=low_high[_interior] per dimension (e.g. 0_0x1_1_0): ``interior`` values between
    neighbours, then ``low`` before and ``high`` after; a negative low or high cuts that many off instead."""
    operand, value = inst.operands[0].shape, inst.operands[1].shape
    _check_types(inst, [operand, value, inst.shape], inst.shape.element_type)
    text = str(inst.attributes.get("padding", ""))
    if value.rank != 0 or not _PADDING.fullmatch(text) or text.count("x") + 1 != operand.rank:
        raise ExecutionError(f"pad {inst.name!r} requires a scalar padding value and padding=low_high[_interior] "
                             f"for each of the {operand.rank} dimension(s) of {operand} (e.g. 0_0x1_1_0), got "
                             f"{value} and {'no padding' if 'padding' not in inst.attributes else 'padding=' + text}")
    pads = [(*map(int, part.split("_")), 0)[:3] for part in text.split("x")]  # interior 0 when left out
    spread = [n + max(n - 1, 0) * i for n, (_, _, i) in zip(operand.dims, pads)]
    dims = tuple(lo + n + hi for n, (lo, hi, _) in zip(spread, pads))
    if min(dims) < 0:
        raise ExecutionError(f"pad {inst.name!r} cuts more than {operand} holds with padding={text}")
    _check_dims(inst, dims, f"padding={text}")
    buffer = tuple(max(lo, 0) + n + max(hi, 0) for n, (lo, hi, _) in zip(spread, pads))
    place = tuple(slice(max(lo, 0), max(lo, 0) + n, i + 1) for n, (lo, _, i) in zip(spread, pads))
    cut = tuple(slice(max(-lo, 0), size - max(-hi, 0)) for size, (lo, hi, _) in zip(buffer, pads))

    def run(x, v):
        out = np.full(buffer, v, dtype=x.dtype)
        out[place] = x
        return np.ascontiguousarray(out[cut])

    return run


def _iota(inst):
    """iota, iota_dimension=d: each element is its index along dimension d, converted (an integer type wraps, a
    float rounds to nearest even)."""
    shape = inst.shape
    _check_kinds(inst, _NUMBER, shape)
    dimension = _int_attribute(inst, "iota_dimension")
    if not 0 <= dimension < shape.rank:
        raise ExecutionError(f"iota {inst.name!r} requires iota_dimension from 0 to {shape.rank - 1} for {shape}, "
                             f"got {dimension}")
    count = shape.dims[dimension]
    line = [1] * shape.rank
    line[dimension] = count

    def run():
        values = np.arange(count, dtype=np.int64)
        values = values.astype(np.float64) if shape.kind == "float" else values
        return np.ascontiguousarray(np.broadcast_to(values.astype(shape.numpy_dtype).reshape(line), shape.dims))

    return run


def _concatenate(inst):
    """concatenate(a, b, ...), dimensions={d}: the operands one after another along dimension d."""
    shapes = [op.shape for op in inst.operands]
    dims = inst.dimensions
    _check_types(inst, shapes + [inst.shape], inst.shape.element_type)
    if not shapes or len(dims) != 1 or not 0 <= dims[0] < inst.shape.rank or any(
            s.rank != inst.shape.rank or any(n != m for axis, (n, m) in enumerate(zip(s.dims, inst.shape.dims))
                                             if axis != dims[0]) for s in shapes):
        raise ExecutionError(f"concatenate {inst.name!r} requires operands of the result's rank, equal but along "
                             f"one dimension given as dimensions={{d}}, got {', '.join(map(str, shapes))} and "
                             f"dimensions={inst.attributes.get('dimensions')}")
    axis = dims[0]
    _check_dims(inst, tuple(sum(s.dims[axis] for s in shapes) if a == axis else n
                            for a, n in enumerate(inst.shape.dims)), f"dimensions={{{axis}}}")
    return lambda *xs: np.concatenate(xs, axis=axis)


def _check_dims(inst, dims: tuple[int, ...], attribute: str) -> None:
    if dims != inst.shape.dims:
        raise ExecutionError(f"{inst.opcode} {inst.name!r} computes {list(dims)} from "
                             f"{', '.join(str(op.shape) for op in inst.operands) or 'no operands'} and {attribute}, "
                             f"but the HLO declares {inst.shape}; fix the result shape or the attribute")


def _int_attribute(inst, key: str) -> int:
    value = inst.attributes.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        if value is not None:
            return parse_int(str(value))
    except HloParseError:
        pass
    raise ExecutionError(f"{inst.opcode} {inst.name!r} requires {key}=<an integer>, got "
                         f"{'none' if value is None else f'{key}={value}'}")


# ----- reductions ------------------------------------------------------------------------------

#: Reduction bodies: the root opcode -> the kinds it applies to.
_REDUCE_BODIES = {"add": _NUMBER, "multiply": _NUMBER, "maximum": _PRED + _NUMBER, "minimum": _PRED + _NUMBER,
                  "and": _PRED + _INT, "or": _PRED + _INT, "xor": _PRED + _INT}
#: reduce-window runs these bodies.
_REDUCE_WINDOW_BODIES = ("add", "maximum", "minimum")
_UFUNCS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
           "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _body_fold(inst, bodies, shape: Shape) -> Callable[[np.ndarray], np.ndarray]:
    """The fold of to_apply's body over rows (the accumulator first, then the elements in order).

    The body must be one op of its two scalar parameters, as JAX and XLA write
    them. XLA calls it as body(accumulator, element), so for maximum and
    minimum of floats, whose NaN results are not symmetric, the order the body
    names its parameters in is kept.
    """
    body = inst.to_apply
    root, params = body.root, body.parameters
    if not (len(params) == 2 and root.opcode in bodies and len(root.operands) == 2
            and sorted(map(id, root.operands)) == sorted(map(id, params))):
        raise ExecutionError(f"{inst.opcode} {inst.name!r} requires to_apply to compute {', '.join(bodies)} of its "
                             f"two parameters, got {body.name} whose root is {root.opcode}")
    scalar = Shape(shape.element_type, ())
    if any(not isinstance(s, Shape) or (s.element_type, s.dims) != (scalar.element_type, ()) for s in
           [p.shape for p in params] + [root.shape]):
        raise ExecutionError(f"{inst.opcode} {inst.name!r} requires to_apply to work on {scalar} scalars, as its "
                             f"operand is {shape}; got {body.name} of {', '.join(str(p.shape) for p in params)}")
    if shape.kind not in _REDUCE_BODIES[root.opcode]:
        raise ExecutionError(f"{inst.opcode} {inst.name!r}: {root.opcode} does not apply to {shape}")
    if root.opcode in ("maximum", "minimum") and shape.kind == "float":
        fold = partial(_fold_extreme, maximum=root.opcode == "maximum", accumulator_first=root.operands[0] is params[0])
        return _bitwise(fold, shape.numpy_dtype)
    ufunc = _UFUNCS[root.opcode]
    return lambda terms: ufunc.accumulate(terms, axis=1, out=terms)[:, -1].copy()


def _fold_extreme(terms: np.ndarray, maximum: bool, accumulator_first: bool) -> np.ndarray:
    """Each row folded left to right by _float_extreme, in closed form (no Python loop over the elements).

    Without a NaN the row's result is its largest (smallest) value with the sign
    AND (OR) of every sign bit: -0 only when every value is -0 (some value is).
    With body(accumulator, element) the first NaN sticks, its sign the AND (OR)
    of the signs up to it; with body(element, accumulator) each NaN replaces
    the accumulator, so the last one wins, its sign combined with those after it.
    """
    unsigned = _UNSIGNED[terms.dtype.itemsize]
    sign = np.array(1 << (8 * terms.dtype.itemsize - 1), unsigned)
    bits = terms.view(unsigned)
    nan = np.isnan(terms)
    found = nan.any(axis=1)
    rows, count = np.arange(len(terms)), terms.shape[1]
    if accumulator_first:
        at = np.argmax(nan, axis=1)
        counted = np.arange(count) <= at[:, None]
    else:
        at = count - 1 - np.argmax(nan[:, ::-1], axis=1)
        counted = np.arange(count) >= at[:, None]
    counted |= ~found[:, None]
    negative = (bits & sign) != 0
    negative_result = (negative | ~counted).all(axis=1) if maximum else (negative & counted).any(axis=1)
    extreme = np.where(nan, 0, terms)  # NaN rows take their NaN below
    value = (extreme.max(axis=1) if maximum else extreme.min(axis=1)).view(unsigned)
    value = np.where(found, bits[rows, at], value)
    return ((value & ~sign) | np.where(negative_result, sign, 0).astype(unsigned)).view(terms.dtype)


def _reduce(inst):
    """reduce(x, init), dimensions={...}, to_apply=<add|multiply|maximum|minimum|and|or|xor of its parameters>.

    Each result element starts at the init value and combines the elements it
    reduces one at a time, in row-major order over the reduced dimensions taken
    in increasing order (for dimensions={0,2}: x[0,j,0], x[0,j,1], ...,
    x[1,j,0] ...), calling body(accumulator, element): a left fold, no pairwise
    or vectorized reassociation. XLA leaves the order of a float reduction
    unspecified (XLA:CPU vectorizes some), so a float sum or product is
    deterministic here and within the usual error bound of XLA's; maximum,
    minimum and integer results are exact whatever the order. One operand and
    one init value only (a variadic reduce, e.g. an argmax, is refused).
    """
    shapes = [inst.shape, *(operand.shape for operand in inst.operands)]
    if len(inst.operands) != 2 or not all(isinstance(shape, Shape) for shape in shapes):
        raise ExecutionError(f"reduce {inst.name!r} reduces one operand from one init value; a variadic reduce "
                             f"({len(inst.operands)} operands, e.g. an argmax) is not run")
    operand, init = (op.shape for op in inst.operands)
    _check_types(inst, [operand, init, inst.shape], operand.element_type)
    dims = inst.dimensions
    if len(set(dims)) != len(dims) or any(not 0 <= d < operand.rank for d in dims) or init.rank != 0:
        raise ExecutionError(f"reduce {inst.name!r} requires distinct dimensions of its operand {operand} and a "
                             f"scalar init value, got dimensions={inst.attributes.get('dimensions')} and {init}")
    kept = [d for d in range(operand.rank) if d not in dims]
    order = kept + sorted(dims)
    _check_dims(inst, tuple(operand.dims[d] for d in kept), f"dimensions={inst.attributes.get('dimensions')}")
    fold = _body_fold(inst, _REDUCE_BODIES, operand)
    counts = inst.shape.dims

    def run(x, init):
        init = np.asarray(init, dtype=x.dtype)
        if x.size == 0:
            return np.full(counts, init, dtype=x.dtype)
        return _combine(fold, np.transpose(x, order), init, len(kept))

    return run


def _reduce_window(inst):
    """reduce-window with an add, maximum or minimum body; padding takes the init value, as in XLA.

    Each output element starts at the init value and combines its window's
    elements one at a time in row-major window order, as XLA's elemental
    emitter loops: a float sum then has one defined rounding (the order
    semantics.resize_nearest_grad_reference adds in), not numpy's choice.
    The windows are gathered into rows, init first, and combined along each row
    by ``ufunc.accumulate``, which goes one element at a time, in order, a block
    of rows (and, for a huge window, a piece of the window) at a time; float
    maximum and minimum by _fold_extreme, the same fold in closed form.
    """
    operand, init_shape = inst.operands[0].shape, inst.operands[1].shape
    fold = _body_fold(inst, _REDUCE_WINDOW_BODIES, operand)
    window = inst.window
    size, stride, pad = window.size, window.stride, window.pad
    if any(d != 1 for d in window.lhs_dilate + window.rhs_dilate) or any(window.rhs_reversal):
        raise ExecutionError(f"reduce-window {inst.name!r} uses dilation or reversal, which the executor does not run")
    if min(size) < 1 or min(lo for lo, _ in pad) < 0 or min(hi for _, hi in pad) < 0:
        raise ExecutionError(f"reduce-window {inst.name!r} requires window sizes of at least 1 and no negative "
                             f"padding, got {inst.attributes['window']}")
    if len(size) != operand.rank or init_shape.rank != 0:
        raise ExecutionError(f"reduce-window {inst.name!r} requires a window with one entry per dimension of its "
                             f"operand {operand} and a scalar init value, got window {window} and init {init_shape}")
    counts = _window_counts(operand.dims, window)
    if counts != inst.shape.dims:
        raise ExecutionError(f"reduce-window {inst.name!r} computes {list(counts)} from {operand} and window "
                             f"{window}, but the HLO declares {inst.shape}; fix the result shape or the window")
    work = math.prod(counts) * math.prod(size)
    if work > MAX_REDUCE_WINDOW_WORK:
        raise ResourceError(f"reduce-window {inst.name!r} requires at most {MAX_REDUCE_WINDOW_WORK:,} element "
                            f"combinations (output elements x window elements), got {work:,}; use a smaller "
                            f"window or operand")
    padded = any(lo or hi for lo, hi in pad)

    def run(x, init):
        init = np.asarray(init, dtype=x.dtype)
        if math.prod(counts) == 0:
            return np.full(counts, init, dtype=x.dtype)
        if padded:
            x = np.pad(x, pad, constant_values=init)
        windows = sliding_window_view(x, size)[tuple(slice(None, None, s) for s in stride)]
        return _combine(fold, windows, init, len(counts))

    return run


def _window_counts(dims, window) -> tuple[int, ...]:
    """Output elements per dimension: the window's positions in the padded operand."""
    return tuple(max(0, (n + lo + hi - k) // s + 1)
                 for n, k, s, (lo, hi) in zip(dims, window.size, window.stride, window.pad))


def _combine(fold: Callable[[np.ndarray], np.ndarray], windows: np.ndarray, init: np.ndarray,
             rank: int) -> np.ndarray:
    """Each window (the last `rank` axes of `windows`) folded from init in row-major order, one element at a time."""
    counts, size = windows.shape[:rank], windows.shape[rank:]
    out = np.empty(counts, windows.dtype)
    area = math.prod(size)
    # Output blocks: the leading output axes one index at a time, the trailing ones whole, so that a block's
    # windows fit in _BLOCK elements (when even one window does not, it goes in pieces along its leading axes).
    lead = next((d for d in range(rank + 1) if math.prod(counts[d:]) * area <= _BLOCK), rank)
    for index in np.ndindex(*counts[:lead]):
        block = windows[index]
        acc = np.full(math.prod(counts[lead:]), init, windows.dtype)
        for piece in _pieces(size):
            rows = block[(*[slice(None)] * (rank - lead), *piece)].reshape(len(acc), -1)
            acc = fold(np.concatenate([acc[:, None], rows], axis=1))
        out[index] = acc.reshape(counts[lead:])
    return out


def _pieces(size: tuple[int, ...]):
    """Index tuples cutting a window of `size` into pieces of at most _BLOCK elements, in row-major order."""
    axis = next(d for d in range(len(size) + 1) if math.prod(size[d:]) <= _BLOCK)
    if axis == 0:
        yield ()
        return
    step = max(1, _BLOCK // math.prod(size[axis:]))
    for outer in np.ndindex(*size[:axis - 1]):
        for start in range(0, size[axis - 1], step):
            yield (*outer, slice(start, start + step))


def _get_tuple_element(inst):
    operand = inst.operands[0].shape
    if not isinstance(operand, TupleShape):
        raise ExecutionError(f"get-tuple-element {inst.name!r} requires a tuple operand, got {operand}")
    index = inst.tuple_index
    if not 0 <= index < len(operand.elements):
        raise ExecutionError(f"get-tuple-element {inst.name!r} requires an index from 0 to "
                             f"{len(operand.elements) - 1} for its operand {operand}, got index={index}; "
                             f"tuple elements count from 0")
    return lambda t: t[index]


# opcode -> (number of operands, None for any; builder of the compute function)
_OPS: dict[str, tuple[int | None, Callable[[HloInstruction], Callable]]] = {
    "parameter": (0, lambda inst: lambda argument: argument),
    "constant": (0, _constant),
    "iota": (0, _iota),
    "transpose": (1, _transpose),
    "reshape": (1, _reshape),
    "copy": (1, lambda inst: np.copy),
    "convert": (1, _convert),
    "broadcast": (1, _broadcast),
    "slice": (1, _slice),
    "pad": (2, _pad),
    "concatenate": (None, _concatenate),
    "add": (2, lambda inst: np.add),
    "subtract": (2, lambda inst: np.subtract),
    "multiply": (2, lambda inst: np.multiply),
    "divide": (2, lambda inst: _divide),
    **{opcode: (1, _unary) for opcode in _UNARY},
    **{opcode: (2, _binary) for opcode in _BINARY},
    "compare": (2, _compare),
    "select": (3, _select),
    "clamp": (3, _clamp),
    "tuple": (None, lambda inst: lambda *values: tuple(values)),
    "get-tuple-element": (1, _get_tuple_element),
    "reduce": (None, _reduce),  # its own checks: a variadic reduce is refused with a clear message
    "reduce-window": (2, _reduce_window),
}
#: Opcodes whose operands or result may be tuples; every other one works on arrays.
_TUPLE_OPS = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "reduce"})
#: Opcodes whose operands all have the result's dimensions.
_ELEMENTWISE = frozenset({"copy", "convert", "add", "subtract", "multiply", "divide", "compare", *_UNARY, *_BINARY})


# ----- values ---------------------------------------------------------------------------------

def _value_bytes(shape: Shape | TupleShape) -> int:
    """Bytes of a value of `shape` (all its arrays)."""
    return sum(math.prod(leaf.dims) * (np.dtype(leaf.numpy_dtype).itemsize if leaf.kind != "token" else 0)
               for leaf in leaf_shapes(shape))


def _step_bytes(inst: HloInstruction) -> int:
    """Host memory one step needs: its result, and what its op makes on the side."""
    result = _value_bytes(inst.shape)
    elements = sum(math.prod(leaf.dims) for leaf in leaf_shapes(inst.shape))
    if inst.opcode == "convert":
        return result + 8 * elements  # float -> integer goes through float64
    if inst.opcode == "divide":
        return 4 * result
    if inst.opcode in ("reduce-window", "reduce"):
        operand = inst.operands[0].shape
        pads = inst.window.pad if inst.opcode == "reduce-window" else ((0, 0),) * operand.rank
        padded = math.prod(n + lo + hi for n, (lo, hi) in zip(operand.dims, pads))
        # The padded operand and a block of windows, and the fold's temporaries (float32 copies, masks, bits).
        return result + 2 * padded * operand.numpy_dtype.itemsize + 8 * _BLOCK * max(operand.numpy_dtype.itemsize, 4)
    if inst.opcode in _WIDE:
        return result + 24 * elements  # float64 operands and result
    if inst.opcode in _UNARY or inst.opcode in _BINARY or inst.opcode in ("compare", "select", "clamp"):
        return 4 * result + 16 * elements  # bits, masks, float32 copies of half types, totalOrder keys
    if inst.opcode == "iota":
        return result + 16 * elements
    if inst.opcode == "pad":
        return 2 * result + _value_bytes(inst.operands[0].shape)
    return result


def _size(nbytes: int) -> str:
    return f"{nbytes / 2**30:,.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:,.1f} MiB"


def _numpy_dtype(shape: Shape) -> np.dtype:
    try:
        return shape.numpy_dtype
    except ValueError:
        raise ExecutionError(f"the executor runs arrays with a numpy element type, got {shape}") from None


def _as_value(arg) -> Value:
    """A tuple or an array; an array of the other byte order is converted by value (its dtype compares equal to
    the native one, so a shape check would name two equal dtypes)."""
    if isinstance(arg, tuple):
        return tuple(_as_value(a) for a in arg)
    value = np.asarray(arg)
    return value.astype(value.dtype.newbyteorder("=")) if not value.dtype.isnative else value


def _matches(value: Value, shape: Shape | TupleShape) -> bool:
    if isinstance(shape, TupleShape):
        return (isinstance(value, tuple) and len(value) == len(shape.elements)
                and all(map(_matches, value, shape.elements)))
    return isinstance(value, np.ndarray) and value.shape == shape.dims and value.dtype == shape.numpy_dtype


def _expected(shape: Shape | TupleShape) -> str:
    if isinstance(shape, TupleShape):
        return f"tuple ({', '.join(map(_expected, shape.elements))})"
    return f"{shape.numpy_dtype.name} array of shape {shape.dims}"


def _describe(value) -> str:
    if isinstance(value, tuple):
        return f"tuple ({', '.join(map(_describe, value))})"
    if isinstance(value, np.ndarray):
        return f"{value.dtype.name} array of shape {value.shape}"
    return type(value).__name__


def _read_only(value: Value) -> Value:
    """A constant is shared by every run, so nobody may write to it."""
    if isinstance(value, tuple):
        return tuple(map(_read_only, value))
    value.flags.writeable = False
    return value
