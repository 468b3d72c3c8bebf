"""Direct allocation: where each logical block of an SBUF or PSUM tensor lives, given by the kernel.

NKI's ``nki.compiler`` (classic ``neuronxcc.nki.compiler``, imported as ``ncc``) lets a kernel bypass the
allocator: ``nl.ndarray((4, nl.par_dim(128), 512), ..., buffer=ncc.sbuf.mod_alloc(base_addr=0,
num_free_tiles=(2,)))`` puts logical blocks 0 and 2 at byte 0 and blocks 1 and 3 at byte 1024 (double
buffering). The rules, from the NKI Direct Allocation Developer Guide and the nki.compiler API pages (Neuron
2.26): ``func(idx, pdim_size, fdim_size)`` is called with the block index (a tuple, one integer per block
dimension; ``()`` for a tensor without blocks), the tile's partitions and its bytes per partition; for SBUF it
returns ``(start_partition, byte_addr)`` with ``byte_addr`` below the partition's size less the 16 KiB the
compiler keeps for its own use; for PSUM ``(bank_id, start_partition, byte_addr)``, a tile within one 2 KiB
bank. ``mod_alloc`` is ``alloc`` of the modulo function the pages define (each block index taken modulo the
number of physical tiles, linearised row-major, times the tile's size, plus the base).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from ..errors import InvalidValueError, NotSimulatedError
from ..machine.isa import PSUM_BANK_BYTES, PSUM_BANKS  # a physical PSUM tile is within one bank (psum.alloc)
from ..machine.memory import SbufTile

#: Bytes per partition the compiler keeps for its own use at the top of SBUF ("192KiB-16KiB", NKI Direct
#: Allocation Developer Guide); a kernel's direct allocations end below it.
COMPILER_RESERVED_SBUF_BYTES = 16 * 1024


@dataclass(frozen=True)
class DirectAllocation:
    """A ``buffer=`` of nl.ndarray placing each block where ``func`` says (``ncc.sbuf.alloc(func)``,
    ``ncc.psum.alloc(func)``, or their ``mod_alloc`` forms)."""

    memory: str  # "sbuf" or "psum"
    func: Callable
    label: str  # as the kernel wrote it, for messages
    psum_banks: int = 1  # banks a PSUM tile may span (ncc.psum.alloc: one; nl.ndarray(address=): to PSUM's end)

    def offset(self, idx: tuple, partitions: int, nbytes: int, sbuf_bytes: int) -> int:
        """The byte offset into this memory (per partition) of block ``idx``'s physical tile, checked."""
        where = f"{self.label} for block {idx} ({partitions} partitions x {nbytes} bytes)"
        placed = self.func(idx=tuple(idx), pdim_size=partitions, fdim_size=nbytes)  # by name, as NKI calls it
        if self.memory == "sbuf":
            start, addr = _ints(placed, 2, where, "(start_partition, byte_addr)")
            _start_partition(start, partitions, where)
            limit = sbuf_bytes - COMPILER_RESERVED_SBUF_BYTES
            if not 0 <= addr or addr + nbytes > limit:
                raise InvalidValueError(f"{where} places it at byte {addr}: a direct SBUF allocation requires "
                                        f"0 <= byte_addr and byte_addr + {nbytes} <= {limit} (the partition's "
                                        f"{sbuf_bytes} less the compiler's {COMPILER_RESERVED_SBUF_BYTES}); "
                                        f"move it lower or make the tile smaller")
            return addr
        bank, start, addr = _ints(placed, 3, where, "(bank_id, start_partition, byte_addr)")
        if not 0 <= bank < PSUM_BANKS:
            raise InvalidValueError(f"{where} gives bank {bank}: PSUM has banks 0..{PSUM_BANKS - 1}")
        if start != 0 or addr != 0:
            raise InvalidValueError(f"{where} gives start_partition {start} and byte_addr {addr}: a direct PSUM "
                                    f"allocation requires both to be 0 (nki.compiler.psum.alloc)")
        if nbytes > PSUM_BANK_BYTES * min(self.psum_banks, PSUM_BANKS - bank):
            raise InvalidValueError(f"{where}: a direct PSUM tile requires at most "
                                    f"{PSUM_BANK_BYTES * min(self.psum_banks, PSUM_BANKS - bank)} bytes per "
                                    f"partition from bank {bank}, got {nbytes}; split its free dimension")
        return bank * PSUM_BANK_BYTES


def _ints(placed, n: int, where: str, form: str) -> tuple:
    if not isinstance(placed, tuple) or len(placed) != n or not all(isinstance(v, int) for v in placed):
        raise InvalidValueError(f"{where}: the allocation function must return {form}, integers, got {placed!r}")
    return placed


def _start_partition(start: int, partitions: int, where: str) -> None:
    allowed = (0,) if partitions > 64 else (0, 64) if partitions > 32 else (0, 32, 64, 96)
    if start not in allowed:
        raise InvalidValueError(f"{where} starts at partition {start}: a tile of {partitions} partitions must "
                                f"start at one of {allowed} (nki.compiler.sbuf.alloc)")
    if start:
        raise NotSimulatedError(f"{where} starts at partition {start}: tiles starting past partition 0 are not "
                                f"simulated by resize_kernels.nki; start it at partition 0")


def modulo(base: int, tiles: tuple, scale: int) -> Callable:
    """The pages' modulo function: block index ``idx`` modulo ``tiles`` (all 1 when empty), linearised
    row-major, times ``scale``, plus ``base``."""
    def place(idx: tuple) -> int:
        shape = tuple(tiles) or (1,) * len(idx)
        if len(shape) != len(idx):
            raise InvalidValueError(f"mod_alloc's tile counts {tuple(tiles)} require one per block dimension, "
                                    f"the tensor has {len(idx)}; give {len(idx)} counts or none")
        wrapped = [i % n for i, n in zip(idx, shape)]
        return base + scale * sum(i * math.prod(shape[d + 1:]) for d, i in enumerate(wrapped))
    return place


def _counts(name: str, tiles) -> tuple:
    if not isinstance(tiles, tuple) or not all(isinstance(n, int) and n >= 1 for n in tiles):
        raise InvalidValueError(f"mod_alloc requires {name} to be a tuple of positive integers, got {tiles!r}")
    return tiles


def sbuf_mod_alloc(*, base_addr: int, base_partition: int = 0, num_par_tiles: tuple = (),
                   num_free_tiles: tuple = ()) -> DirectAllocation:
    """``ncc.sbuf.mod_alloc``: block idx at partition ``base_partition + (idx mod num_par_tiles) * pdim_size``
    and byte ``base_addr + (idx mod num_free_tiles) * fdim_size``."""
    par, free = _counts("num_par_tiles", num_par_tiles), _counts("num_free_tiles", num_free_tiles)
    func = lambda idx, pdim_size, fdim_size: (modulo(base_partition, par, pdim_size)(idx),  # noqa: E731
                                              modulo(base_addr, free, fdim_size)(idx))
    return DirectAllocation("sbuf", func, f"ncc.sbuf.mod_alloc(base_addr={base_addr})")


def psum_mod_alloc(*, base_bank: int, base_addr: int = 0, base_partition: int = 0, num_bank_tiles: tuple = (),
                   num_par_tiles: tuple = (), num_free_tiles: tuple = ()) -> DirectAllocation:
    """``ncc.psum.mod_alloc``: block idx in bank ``base_bank + (idx mod num_bank_tiles)``."""
    banks = _counts("num_bank_tiles", num_bank_tiles)
    par, free = _counts("num_par_tiles", num_par_tiles), _counts("num_free_tiles", num_free_tiles)
    func = lambda idx, pdim_size, fdim_size: (modulo(base_bank, banks, 1)(idx),  # noqa: E731
                                              modulo(base_partition, par, pdim_size)(idx),
                                              modulo(base_addr, free, fdim_size)(idx))
    return DirectAllocation("psum", func, f"ncc.psum.mod_alloc(base_bank={base_bank})")


def alloc(memory: str, func) -> DirectAllocation:
    """``ncc.sbuf.alloc(func)`` / ``ncc.psum.alloc(func)``."""
    if not callable(func):
        raise InvalidValueError(f"ncc.{memory}.alloc requires a callable (idx, pdim_size, fdim_size) -> location, "
                                f"got {func!r}")
    return DirectAllocation(memory, func, f"ncc.{memory}.alloc({getattr(func, '__name__', 'func')})")


def check_direct(uses, direct: set, psum_base: int) -> None:
    """In a kernel with direct allocation: every on-chip tile an instruction touches was allocated directly, and
    no two tiles share storage while both are live (from first to last use). ``uses`` yields (instruction
    number, instruction, tile) in issue order; PSUM addresses start at ``psum_base``. NKI Direct Allocation
    Developer Guide, Common Errors #1-#3: the compiler's own checks are incomplete there, so a conflict it
    misses computes wrong numbers on the device; here it is an error."""
    first, last = {}, {}
    for n, inst, tile in uses:
        if tile not in direct:
            raise InvalidValueError(
                f"instruction {n} ({inst.opcode}) uses tile {tile.name!r}, which the allocator would place, in a "
                f"kernel with direct allocation: NKI requires every SBUF and PSUM tensor of such a kernel, "
                f"instruction results included, to be allocated directly (NKI Direct Allocation Developer Guide, "
                f"Common Errors #1 and #2); declare it with nl.ndarray(..., buffer=ncc.sbuf.mod_alloc(...)) and "
                f"assign the result into it")
        first.setdefault(tile, n)
        last[tile] = n
    live: list = []
    for tile in sorted(first, key=first.get):
        live = [u for u in live if last[u] > first[tile]]
        lo, hi = tile.address, tile.address + tile.bytes_per_partition
        base = 0 if tile.memory == "sbuf" else psum_base
        for u in live:
            if u.address < hi and lo < u.address + u.bytes_per_partition:
                raise InvalidValueError(
                    f"lifetime conflict: tiles {u.name!r} (used by instructions {first[u]}..{last[u]}) and "
                    f"{tile.name!r} (from instruction {first[tile]}) share {tile.memory.upper()} bytes "
                    f"{max(lo, u.address) - base}..{min(hi, u.address + u.bytes_per_partition) - base}"
                    f" while both are live (NKI Direct Allocation Developer Guide, Common Errors #3); give the "
                    f"tensor more physical tiles (num_free_tiles) or the tensors separate addresses")
        live.append(tile)

