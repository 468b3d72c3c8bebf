"""Runs a lowered HLO module: ordinary ops in numpy, internal kernels' Programs on the simulated NeuronCore.

Values are logical numpy arrays (Python tuples for tuple shapes); a layout is
physical order only, so it is ignored. The entry computation is planned once
(attributes parsed, literals read, shapes checked: no op may compute a shape
other than the one the HLO declares, nor broadcast implicitly) and every run
checks each result against its declared shape, so an inconsistent module
fails at the instruction that is wrong. Before a run allocates anything, the
host memory its values need is checked (ResourceError beyond the machine);
a kernel's Executable is made on its first run and then reused.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import ml_dtypes
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..compiler.hlo import HloInstruction, HloModule, Shape, TupleShape
from ..compiler.hlo.lexer import printable
from ..compiler.hlo.shape import leaf_shapes
from ..errors import InvalidTypeError, InvalidValueError, ResourceError
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
    The windows are gathered into rows, init first, and combined along each row
    by ``ufunc.accumulate``, which goes one element at a time, in order, a block
    of rows (and, for a huge window, a piece of the window) at a time.
    """
    reducer = _reducer(inst)
    window = inst.window
    size, stride, pad = window.size, window.stride, window.pad
    operand, init_shape = inst.operands[0].shape, inst.operands[1].shape
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
        return _combine(reducer, windows, init, len(counts))

    return run


def _window_counts(dims, window) -> tuple[int, ...]:
    """Output elements per dimension: the window's positions in the padded operand."""
    return tuple(max(0, (n + lo + hi - k) // s + 1)
                 for n, k, s, (lo, hi) in zip(dims, window.size, window.stride, window.pad))


def _combine(reducer: np.ufunc, windows: np.ndarray, init: np.ndarray, rank: int) -> np.ndarray:
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
            terms = np.concatenate([acc[:, None], rows], axis=1)
            acc = reducer.accumulate(terms, axis=1, out=terms)[:, -1].copy()
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


def _reducer(inst) -> np.ufunc:
    body = inst.to_apply
    root, params = body.root, body.parameters
    if len(params) == 2 and root.opcode in _REDUCERS and sorted(map(id, root.operands)) == sorted(map(id, params)):
        return _REDUCERS[root.opcode]
    raise ExecutionError(f"reduce-window {inst.name!r} requires to_apply to compute {', '.join(_REDUCERS)} of its "
                         f"two parameters, got {body.name} whose root is {root.opcode}")


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
#: Opcodes whose operands all have the result's dimensions.
_ELEMENTWISE = frozenset({"copy", "convert", "add", "subtract", "multiply", "divide", "maximum", "minimum"})


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
    if inst.opcode == "reduce-window":
        operand = inst.operands[0].shape
        padded = math.prod(n + lo + hi for n, (lo, hi) in zip(operand.dims, inst.window.pad))
        return result + 2 * padded * operand.numpy_dtype.itemsize + 3 * _BLOCK * operand.numpy_dtype.itemsize
    return result


def _size(nbytes: int) -> str:
    return f"{nbytes / 2**30:,.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:,.1f} MiB"


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
