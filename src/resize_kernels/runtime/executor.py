"""Runs a lowered HLO module: ordinary ops in numpy, internal kernels' Programs on the simulated NeuronCore.

Values are logical numpy arrays (Python tuples for tuple shapes); a layout is
physical order only, so it is ignored. The entry computation is planned once
(attributes parsed, literals read, one cached Executable per kernel Program)
and every run checks each result against the shape the HLO declares, so an
inconsistent module fails at the instruction that is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..compiler.hlo import HloInstruction, HloModule, Shape, TupleShape
from ..errors import InvalidValueError
from ..machine.isa import Program
from ..machine.simulator import Executable

Value = np.ndarray | tuple


class ExecutionError(InvalidValueError):
    """A module the executor cannot run, or arguments that do not fit it; the message says which and why."""


class Executor:
    """The entry computation of a lowered module, planned once and runnable many times."""

    def __init__(self, module: HloModule, programs: Mapping[HloInstruction, Program]):
        self.module = module
        self.entry = module.entry
        self.parameters = self.entry.parameters
        self._steps = [(inst, _plan(inst, programs.get(inst))) for inst in self.entry.instructions]

    def __call__(self, *args) -> Value:
        """The value of the ROOT instruction (a tuple for a tuple-shaped ROOT)."""
        return self.values(*args)[self.entry.root.name]

    def values(self, *args) -> dict[str, Value]:
        """The value of every entry instruction, by name: for inspecting what each step computed."""
        arguments = dict(zip(self.parameters, self._check_arguments(args)))
        env: dict[HloInstruction, Value] = {}
        for inst, compute in self._steps:
            inputs = (arguments[inst],) if inst.opcode == "parameter" else [env[op] for op in inst.operands]
            try:
                value = compute(*inputs)
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
    rng = np.random.default_rng(seed)

    def draw(shape):
        if isinstance(shape, TupleShape):
            return tuple(draw(element) for element in shape.elements)
        dtype = _numpy_dtype(shape)
        if shape.kind == "pred":
            return rng.random(shape.dims) < 0.5
        if shape.kind in ("int", "uint"):
            low = 0 if shape.kind == "uint" else max(-100, np.iinfo(dtype).min)
            return rng.integers(low, min(100, np.iinfo(dtype).max), size=shape.dims, endpoint=True).astype(dtype)
        return rng.standard_normal(shape.dims).astype(dtype)

    return [draw(param.shape) for param in module.entry.parameters]


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
    try:
        return builder(inst)
    except ExecutionError:
        raise
    except ValueError as error:  # a malformed attribute, read by the IR's accessors
        raise ExecutionError(f"cannot run {inst.opcode} {inst.name!r}: {error}") from None


def _kernel(program: Program) -> Callable:
    """Run the Program on a cached Executable with the first operands it takes as inputs."""
    executable = Executable(program)
    count = len(program.inputs)

    def run(*operands):
        outputs = executable.run(list(operands[:count]))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return run


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


def _convert(inst):
    """Element type conversion; float to integer truncates toward zero and saturates, NaN gives 0 (as XLA)."""
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
    return lambda x: x.astype(dtype)


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


_REDUCERS = {"add": np.add, "maximum": np.maximum, "minimum": np.minimum}


def _reduce_window(inst):
    """reduce-window with an add, maximum or minimum body; padding takes the init value, as in XLA.

    Each output element starts at the init value and combines its window's
    elements one at a time in row-major window order, as XLA's elemental
    emitter loops: a float sum then has one defined rounding (the order
    semantics.resize_nearest_grad_reference adds in), not numpy's choice.
    """
    reducer = _reducer(inst)
    window = inst.window
    size, stride, pad = window.size, window.stride, window.pad
    if any(d != 1 for d in window.lhs_dilate + window.rhs_dilate) or any(window.rhs_reversal):
        raise ExecutionError(f"reduce-window {inst.name!r} uses dilation or reversal, which the executor does not run")
    if min(size) < 1 or min(lo for lo, _ in pad) < 0 or min(hi for _, hi in pad) < 0:
        raise ExecutionError(f"reduce-window {inst.name!r} requires window sizes of at least 1 and no negative "
                             f"padding, got {inst.attributes['window']}")

    padded = any(lo or hi for lo, hi in pad)

    def run(x, init):
        if padded:
            x = np.pad(x, pad, constant_values=init)
        counts = [max(0, (n - k) // s + 1) for n, k, s in zip(x.shape, size, stride)]
        acc = np.full(counts, init, dtype=x.dtype)
        for offset in np.ndindex(*size):
            reducer(acc, x[tuple(slice(o, o + s * (n - 1) + 1, s) for o, s, n in zip(offset, stride, counts))],
                    out=acc)
        return acc

    return run


def _reducer(inst) -> np.ufunc:
    body = inst.to_apply
    root, params = body.root, body.parameters
    if len(params) == 2 and root.opcode in _REDUCERS and sorted(map(id, root.operands)) == sorted(map(id, params)):
        return _REDUCERS[root.opcode]
    raise ExecutionError(f"reduce-window {inst.name!r} requires to_apply to compute {', '.join(_REDUCERS)} of its "
                         f"two parameters, got {body.name} whose root is {root.opcode}")


def _get_tuple_element(inst):
    if not isinstance(inst.operands[0].shape, TupleShape):
        raise ExecutionError(f"get-tuple-element {inst.name!r} requires a tuple operand, got {inst.operands[0].shape}")
    index = inst.tuple_index
    return lambda t: t[index]


# opcode -> (number of operands, None for any; builder of the compute function)
_OPS: dict[str, tuple[int | None, Callable[[HloInstruction], Callable]]] = {
    "parameter": (0, lambda inst: lambda argument: argument),
    "constant": (0, _constant),
    "transpose": (1, _transpose),
    "reshape": (1, _reshape),
    "copy": (1, lambda inst: np.copy),
    "convert": (1, _convert),
    "broadcast": (1, _broadcast),
    "add": (2, lambda inst: np.add),
    "subtract": (2, lambda inst: np.subtract),
    "multiply": (2, lambda inst: np.multiply),
    "divide": (2, lambda inst: _divide),
    "maximum": (2, lambda inst: np.maximum),
    "minimum": (2, lambda inst: np.minimum),
    "tuple": (None, lambda inst: lambda *values: tuple(values)),
    "get-tuple-element": (1, _get_tuple_element),
    "reduce-window": (2, _reduce_window),
}
#: Opcodes whose operands or result may be tuples; every other one works on arrays.
_TUPLE_OPS = frozenset({"parameter", "constant", "tuple", "get-tuple-element"})


# ----- values ---------------------------------------------------------------------------------

def _numpy_dtype(shape: Shape) -> np.dtype:
    try:
        return shape.numpy_dtype
    except ValueError:
        raise ExecutionError(f"the executor runs arrays with a numpy element type, got {shape}") from None


def _as_value(arg) -> Value:
    return tuple(_as_value(a) for a in arg) if isinstance(arg, tuple) else np.asarray(arg)


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
