"""A Program that only moves its input's bits, run as one gather: ``out = in[map]``, the map found once by
running the Program itself on the input's element numbers.

A resize kernel's Program moves bits: DMAs, tensor copies, nc_n_gather (and the scalar engine's copies of
narrow integers) carry the input's elements to the output, while the index arithmetic beside them never reads
the input. ``moves_bits_only`` proves that of a Program from its instructions (a taint walk over HBM tensors
and SBUF address ranges): whatever holds input bits is only read by bit copies, as their data and never as an
index, and nothing else writes where input bits are or into the output. Then every output element is a copy of one input element, or never written (the
poison byte), by a map that no input value can change. ``copy_map`` finds that map by running the Program on
labels (each input element's number, in pieces for narrow dtypes, as the verifier does) and checks it with a
second, reversed labelling.
"""

from __future__ import annotations

import numpy as np

from .access import AccessPattern
from .isa import Activation, DmaCopy, DmaCopyAdd, NcNGather, Program, TensorCopy


def _copied(inst) -> object | None:
    """The operand a bit-exact copy moves (its data), else None."""
    if isinstance(inst, DmaCopy) and not isinstance(inst, DmaCopyAdd) and inst.src.dtype == inst.dst.dtype:
        return inst.src
    if isinstance(inst, TensorCopy) and inst.src.dtype == inst.dst.dtype:
        return inst.src
    if isinstance(inst, NcNGather):
        return inst.data
    if (isinstance(inst, Activation) and inst.func == "copy" and not inst.uses_registers
            and inst.data.dtype == inst.dst.dtype and inst.dst.dtype.kind in "iu" and inst.dst.dtype.itemsize <= 2
            and not isinstance(inst.scale, AccessPattern) and not isinstance(inst.bias, AccessPattern)
            and inst.scale == 1.0 and inst.bias == 0.0):
        return inst.data  # x * 1 + 0 in float32 and back: exact for integers of 16 bits or fewer
    return None


class _Places:
    """Where something lies: HBM tensors, and SBUF/PSUM byte ranges (every partition: coarse, so safe)."""

    def __init__(self, tensors=()):
        self.tensors, self.ranges = set(tensors), set()  # (rotating buffers repeat their ranges)

    @staticmethod
    def _range(ap) -> tuple[int, int, str]:
        t = ap.tensor
        return t.address, t.address + t.bytes_per_partition, t.memory

    def touches(self, ap) -> bool:
        if not ap.is_sbuf:
            return ap.tensor in self.tensors
        lo, hi, memory = self._range(ap)
        return any(m == memory and a < hi and lo < b for a, b, m in self.ranges)

    def add(self, ap) -> None:
        if ap.is_sbuf:
            self.ranges.add(self._range(ap))
        else:
            self.tensors.add(ap.tensor)


def moves_bits_only(program: Program) -> bool:
    """Whether ``program`` (one input, one output) computes ``out = in[map]`` for a map its data cannot change."""
    if len(program.inputs) != 1 or len(program.outputs) != 1:
        return False
    tainted, untainted = _Places(program.inputs), _Places()  # holding input bits; written with anything else
    output = program.outputs[0]
    for inst in program.instructions:
        data = _copied(inst)
        reads = (*inst.sources(), *((inst.dst,) if inst.reads_dst else ()))
        if any(tainted.touches(ap) for ap in reads if ap is not data):  # input bits as an index or an operand
            return False
        carries = data is not None and tainted.touches(data)
        for dst in inst.destinations():
            if carries:
                if untainted.touches(dst):  # input bits mixed with other values
                    return False
                tainted.add(dst)
            elif tainted.touches(dst) or (not dst.is_sbuf and dst.tensor is output):
                return False
            else:
                untainted.add(dst)
    return True


def copy_map(executable_class, program: Program) -> np.ndarray | None:
    """For a Program that ``moves_bits_only``: the input element (int32; -1 for none: poison) each output element
    holds, found by running the Program on labels (each run a fresh ``executable_class`` of it, on its plain
    paths); None where the two labellings disagree or an output element is neither a label nor poison."""
    (x,), (out,) = program.inputs, program.outputs
    n = x.size
    labels = np.arange(n, dtype=np.int32)
    first = _run_labels(lambda: executable_class(program), labels, x.dtype)
    second = _run_labels(lambda: executable_class(program), np.int32(n - 1) - labels, x.dtype)
    poison = first == -1
    if ((first < -1) | (first >= n)).any() or not np.array_equal(np.where(poison, -1, n - 1 - first), second):
        return None
    return first


def _run_labels(fresh, labels: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The labels run through the Program: whole for a 4-byte dtype, else in pieces of 8 or 16 bits, each viewed
    as ``dtype``; the outputs' bits put back together (an element never written reads as -1: all poison bytes)."""
    executable = fresh()
    bits, shape = 8 * dtype.itemsize, executable.program.inputs[0].shape
    if bits == 32:
        (got,) = executable.run([labels.view(dtype).reshape(shape)])
        return got.view(np.int32).reshape(-1).copy()
    unsigned, got = np.dtype(f"uint{bits}"), None
    for shift in range(0, 32, bits):
        piece = ((labels >> shift) & (2**bits - 1)).astype(unsigned)
        (out,) = fresh().run([piece.view(dtype).reshape(shape)])
        part = out.view(unsigned).reshape(-1).astype(np.uint32) << np.uint32(shift)
        got = part if got is None else got | part
    return got.view(np.int32)
