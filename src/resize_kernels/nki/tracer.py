"""The tracer: running a kernel function once under a tracing context records a Program.

As in NKI's tracer frontend, Python control flow runs at trace time: loops are
unrolled, shapes and scales are Python values, and every nisa call appends one
instruction. SBUF tiles allocated in an ``affine_range`` iteration take turns in
two rotating buffers, as NKI's allocator gives them; a sequential loop's reuse
one.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import os
import sys
import threading
import types


from ..errors import InstructionBudgetError, InvalidTypeError, InvalidValueError
from ..machine import dtypes
from ..machine.isa import Instruction, Program
from ..machine.memory import DEFAULT_SBUF_PARTITION_BYTES, PSUM_PARTITION_BYTES, HbmTensor, SbufAllocator, extents
from .tensor import NkiTensor

_state = threading.local()
#: Frames in this package are the API's own; the first frame outside it issued the instruction.
_NKI_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

#: Instructions one trace may emit. Tracing costs about 25-35 us and 1 KB per instruction, so the budget bounds a
#: trace to about 10 s and 300 MB; a kernel that unrolls per tile stops here on a large shape instead of running
#: for minutes while memory grows. (The seed's kernel on 1x512x512x64 -> 1024x1024 needs 278,528.)
MAX_INSTRUCTIONS = 300_000


def budget_error(name: str, budget: int) -> InstructionBudgetError:
    """The error of a trace of ``name`` past ``budget`` instructions (raised by the tracer, or before tracing where a
    kernel's lower bound already passes it)."""
    return InstructionBudgetError(f"tracing {name} needs more than {budget:,} instructions, the tracer's budget "
                                  f"(about 10 s and 300 MB); a kernel that unrolls a loop per tile grows with its "
                                  f"data: trace a smaller shape or a kernel with fewer, larger tiles")


class Tracer:
    """What one trace builds: the Program, the SBUF allocator, unique names."""

    def __init__(self, name: str, sbuf_partition_bytes: int, max_instructions: int, sources: bool = True):
        self.sources = sources
        self.allocator = SbufAllocator(sbuf_partition_bytes)
        self.psum_allocator = SbufAllocator(PSUM_PARTITION_BYTES, psum_base=sbuf_partition_bytes)
        self.program = Program(name, sbuf_partition_bytes=sbuf_partition_bytes)
        self.max_instructions = max_instructions
        self._counters: dict[str, itertools.count] = {}
        # SPMD (``kernel[grid]``): the instance being traced, the grid, and the shared HBM tensors by order of
        # creation: the k-th ``nl.ndarray(buffer=nl.shared_hbm)`` of every instance is the first instance's k-th.
        self.program_id: tuple = ()
        self.grid: tuple = ()
        self.shared: list = []
        self.shared_index = 0

    def unique(self, base: str) -> str:
        counter = self._counters.setdefault(base, itertools.count())
        return f"{base}.{next(counter)}"

    def emit(self, inst: Instruction) -> None:
        if len(self.program.instructions) >= self.max_instructions:
            raise budget_error(self.program.name, self.max_instructions)
        if self.sources:  # the kernel's source line, as NKI's debug info gives it (about 10% of tracing)
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename.startswith(_NKI_DIR):
                frame = frame.f_back
            if frame is not None:
                inst.source = (frame.f_code.co_filename, frame.f_lineno)
        self.program.append(inst)

    def hbm(self, name: str, shape, dtype, kind: str, data=None) -> NkiTensor:
        tensor = HbmTensor(name, tuple(int(s) for s in shape), dtypes.as_dtype(dtype), kind, data)
        {"input": self.program.inputs, "internal": self.program.internal,
         "constant": self.program.constants}[kind].append(tensor)
        return NkiTensor(tensor)

    def sbuf(self, name: str | None, shape, dtype, memory: str = "sbuf") -> NkiTensor:
        allocator = self.allocator if memory == "sbuf" else self.psum_allocator
        tile = allocator.allocate(self.unique(name or "t"), tuple(map(int, shape)), dtypes.as_dtype(dtype))
        return NkiTensor(tile)

    def mark(self) -> tuple:
        """The allocators' state, to release what is allocated after it (a loop iteration's tiles)."""
        return self.allocator.mark(), self.psum_allocator.mark()

    def rotate(self, base: tuple, n: int, spans: tuple, buffers: int) -> tuple:
        """Start affine_range iteration ``n`` in rotating buffers (see nl.affine_range); returns the slots' starts."""
        return (self.allocator.rotate(base[0], n, spans[0], buffers),
                self.psum_allocator.rotate(base[1], n, spans[1], buffers))

    def peaks(self, reset: tuple | None = None) -> tuple:
        """The allocators' high-water marks; with ``reset``, set them to it first and return the old ones (to
        measure the peak of one loop iteration, tiles of inner loops included)."""
        old = (self.allocator.high_water, self.psum_allocator.high_water)
        if reset is not None:
            self.allocator.high_water, self.psum_allocator.high_water = reset
        return old

    def release(self, mark: tuple) -> None:
        self.allocator.release(mark[0])
        self.psum_allocator.release(mark[1])


def tracing() -> bool:
    """Whether a kernel is being traced (in this thread)."""
    return getattr(_state, "tracer", None) is not None


def current() -> Tracer:
    tracer = getattr(_state, "tracer", None)
    if tracer is None:
        raise InvalidValueError("nki calls build a Program and need a kernel being traced: "
                           "call resize_kernels.nki.trace(kernel, *args)")
    return tracer


def trace(kernel, *args, sbuf_partition_bytes: int = DEFAULT_SBUF_PARTITION_BYTES,
          max_instructions: int | None = None, grid: tuple = (), sources: bool = True, **kwargs) -> Program:
    """Trace ``kernel(*args, **kwargs)`` into a Program.

    Tensor arguments are numpy arrays or TensorSpecs (anything with ``shape`` and
    ``dtype``); they become the Program's HBM inputs, named after the kernel's
    parameters. The kernel returns the HBM tensor(s) that become its outputs.
    More than ``max_instructions`` instructions (None: MAX_INSTRUCTIONS) raise InstructionBudgetError (a ResourceError).
    ``sources=False`` skips recording each instruction's source line (a bulk
    trace that nobody reads, such as a verifier's). With a ``grid`` (SPMD, ``kernel[grid]``) the kernel is traced once per
    instance, in row-major order of ``nl.program_id``, into one Program: as NKI
    documents, the instances of a launch run one after another on one core, and
    they share the HBM tensors they create with ``buffer=nl.shared_hbm``.
    """
    fn = getattr(kernel, "func", kernel)
    if getattr(_state, "tracer", None) is not None:
        raise InvalidValueError(f"cannot trace {fn.__name__} inside another trace; call it from the kernel "
                                f"being traced instead (it is then inlined)")
    params = _parameter_names(fn)
    tracer = Tracer(fn.__name__, sbuf_partition_bytes, MAX_INSTRUCTIONS if max_instructions is None else max_instructions,
                    sources)
    handles = []
    for n, a in enumerate(args):
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            name = params[n] if n < len(params) else f"arg{n}"
            handles.append(tracer.hbm(name, a.shape, a.dtype, "input"))
        else:
            handles.append(a)
    tracer.grid = grid
    _state.tracer = tracer
    try:
        result = None
        for pid in itertools.product(*map(range, grid)):  # one empty tuple when there is no grid
            tracer.program_id, tracer.shared_index = pid, 0
            mark = tracer.mark()
            got = fn(*handles, **kwargs)
            tracer.release(mark)  # an instance's tiles end with it
            if result is None:
                result = got
            elif _storages(got) != _storages(result):
                raise InvalidValueError(f"SPMD instance {pid} of {fn.__name__} returned other tensors than instance "
                                        f"{(0,) * len(grid)}; every instance must return the shared_hbm outputs")
    finally:
        _state.tracer = None
    program = tracer.program
    for out in (result if isinstance(result, (tuple, list)) else (result,)):
        if not isinstance(out, NkiTensor) or out.storage not in program.internal:
            raise InvalidTypeError(f"kernel {fn.__name__} must return the HBM tensor(s) it created with "
                                   f"nl.ndarray(..., buffer=nl.shared_hbm), got {out!r}")
        program.internal.remove(out.storage)
        out.storage.kind = "output"
        out.storage.shape = out.shape  # a kernel may return a reshaped view (same elements): its shape is the output's
        program.outputs.append(out.storage)
    program.sbuf_high_water = tracer.allocator.high_water
    program.psum_high_water = tracer.psum_allocator.high_water
    program.sbuf_extents = extents(tracer.allocator.reach, tracer.psum_allocator.reach)
    return program


def _storages(result) -> list:
    return [getattr(t, "storage", t) for t in (result if isinstance(result, (tuple, list)) else (result,))]


def _parameter_names(fn) -> tuple:
    """The names of ``fn``'s parameters; remembered per plain function, as ``inspect.signature`` is slow."""
    if isinstance(fn, types.FunctionType):
        return _function_parameter_names(fn)
    return tuple(inspect.signature(fn).parameters)


@functools.lru_cache(maxsize=256)
def _function_parameter_names(fn) -> tuple:
    return tuple(inspect.signature(fn).parameters)
