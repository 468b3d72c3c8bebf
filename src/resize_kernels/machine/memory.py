"""The memories: HBM tensors and the 2-D SBUF (128 partitions x a per-partition capacity).

A Program declares its HBM tensors and its SBUF tiles; the simulator backs them
with numpy storage. SBUF tiles live at a byte address inside every partition
they span, so a tile of shape (P, F...) takes prod(F) * itemsize bytes in each
of partitions 0..P-1. A tile with block dimensions is one such tile per block,
each given storage only from its first write to its last use (``place_blocks``); where those live at once
exceed the capacity, some are spilled to HBM and reloaded (``plan_spills``), as neuronx-cc does.
Fresh memory is poisoned with 0xFF bytes: NaN in every
float dtype, -1 (or the maximum) in every integer dtype, so that a read of
never-written data shows up in results.
"""

from __future__ import annotations

import bisect
import collections
import math
import mmap
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidValueError, ResourceError
from ..intmath import ceil_div
from . import dtypes
from .errors import SbufCapacityError

NUM_PARTITIONS = 128
KIB = 1024
#: Per-partition SBUF capacity: NeuronCore-v2 (trn1, inf2) and v3 (trn2).
SBUF_PARTITION_BYTES = {"trn1": 192 * KIB, "trn2": 224 * KIB}
DEFAULT_SBUF_PARTITION_BYTES = SBUF_PARTITION_BYTES["trn1"]
#: Per-partition PSUM capacity: 2 MiB over 128 partitions on NeuronCore-v2 and v3 (NKI architecture guides).
PSUM_PARTITION_BYTES = 16 * KIB
#: Tiles start on this byte boundary within a partition.
SBUF_ALIGNMENT = 64
#: PSUM is 8 banks of 2 KiB per partition, and a PSUM tensor starts at a bank ["The allocation for PSUM tensors must
#: start at the beginning of each bank", NKI 0.3.0 Beta 2 migration guide; "only one physical tile can live in a
#: PSUM bank at a time", NKI Direct Allocation Developer Guide], so PSUM is given out in whole banks.
PSUM_BANK_BYTES = 2 * KIB
POISON_BYTE = 0xFF


@dataclass(eq=False)
class HbmTensor:
    """A tensor in device memory; its storage is flat and row-major."""

    name: str
    shape: tuple
    dtype: np.dtype
    kind: str = "internal"  # "input", "output", "internal" or "constant"
    data: np.ndarray | None = None  # a constant's elements (``nl.shared_constant``), fixed at trace time

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __str__(self) -> str:
        return f"{self.name}: {dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"


@dataclass(eq=False, slots=True)
class SbufTile:
    """A tile on chip: partitions 0..partitions-1, ``free_size`` elements each, at byte ``address``.

    ``memory`` is "sbuf" or "psum". PSUM (the matmul accumulator memory, which the engines read and write
    like SBUF but DMAs cannot reach) lies, in the simulator and the cost model, at addresses past the SBUF
    capacity of each partition, so the two never overlap.
    """

    name: str
    partitions: int
    free_shape: tuple
    dtype: np.dtype
    address: int | None  # None only while a block's storage is not yet placed (see place_blocks)
    memory: str = "sbuf"
    free_size: int = field(init=False, repr=False)  # elements per partition; read on every access

    def __post_init__(self):
        self.free_size = math.prod(self.free_shape)

    @property
    def shape(self) -> tuple:
        return (self.partitions, *self.free_shape)

    @property
    def bytes_per_partition(self) -> int:
        return self.free_size * self.dtype.itemsize

    @property
    def footprint(self) -> int:
        """The bytes per partition its memory gives it: SBUF_ALIGNMENT multiples in SBUF, whole banks in PSUM."""
        return footprint(self.bytes_per_partition, self.memory)

    def __str__(self) -> str:
        shape = ",".join(map(str, self.shape))
        return f"{self.name}: {dtypes.short_name(self.dtype)}[{shape}] @ {self.memory}+0x{self.address:05x}"


class SbufAllocator:
    """Stack allocation of on-chip tiles with scopes (a loop iteration frees what it allocated); the blocks of
    tiles with block dimensions are placed after the trace instead (``block_tile``, ``place_blocks``).

    SBUF by default; ``psum_base`` given, PSUM: PSUM_PARTITION_BYTES per partition, at addresses from
    ``psum_base`` (the SBUF capacity) on.
    """

    def __init__(self, partition_bytes: int = DEFAULT_SBUF_PARTITION_BYTES, psum_base: int | None = None):
        if psum_base is None and partition_bytes not in SBUF_PARTITION_BYTES.values():
            raise InvalidValueError(f"SBUF capacity must be one of {sorted(SBUF_PARTITION_BYTES.values())} bytes per "
                                    f"partition (trn1: 192 KiB, trn2: 224 KiB), got {partition_bytes}")
        self.memory, self.base = ("sbuf", 0) if psum_base is None else ("psum", psum_base)
        self.capacity = partition_bytes
        self.top = 0
        self.high_water = 0
        self.reach: dict[int, int] = {}  # partitions -> the furthest end address of a tile on that many partitions

    def allocate(self, name: str, shape: tuple, dtype) -> SbufTile:
        partitions, free_shape = shape[0], tuple(shape[1:])
        if not 1 <= partitions <= NUM_PARTITIONS:
            raise InvalidValueError(f"SBUF tile {name!r} needs 1 to {NUM_PARTITIONS} partitions (its first dimension), "
                                    f"got shape {tuple(shape)}; tile the partition dimension by 128")
        tile = SbufTile(name, partitions, free_shape, np.dtype(dtype), self.base + self.top, self.memory)
        need = tile.bytes_per_partition
        if self.top + need > self.capacity:
            hint = "select the 224 KiB SBUF (trn2)" if self.memory == "sbuf" else "copy results out to SBUF sooner"
            raise SbufCapacityError(
                f"{self.memory.upper()} allocation of tile {tile.name!r} ({dtypes.short_name(dtype)}{list(shape)}) "
                f"needs {need} bytes per partition, but only {self.capacity - self.top} of {self.capacity} are free "
                f"({self.top} in use); split the tile's free dimension or {hint}")
        self.top += tile.footprint
        self.high_water = max(self.high_water, self.top)
        self.reach[partitions] = max(self.reach.get(partitions, 0), tile.address + need)
        return tile

    def mark(self) -> int:
        return self.top

    def rotate(self, base: int, n: int, span: int, buffers: int) -> int:
        """Start loop iteration ``n`` in its buffer: slot n % k of k rotating slots of ``span`` bytes from ``base``,
        k = ``buffers`` or as many as fit in what is free (at least one). Returns the slot's start."""
        k = max(1, min(buffers, (self.capacity - base) // span)) if span else 1
        self.top = base + (n % k) * span
        return self.top

    def release(self, mark: int) -> None:
        self.top = mark

    def block_tile(self, name: str, shape: tuple, dtype) -> SbufTile:
        """A block's tile (one block of a tile with block dimensions): storage placed after the trace by
        ``place_blocks``, from its first write to its last use, so its address is None until then."""
        partitions, free_shape = shape[0], tuple(shape[1:])
        if not 1 <= partitions <= NUM_PARTITIONS:
            raise InvalidValueError(f"{self.memory.upper()} tile {name!r} needs 1 to {NUM_PARTITIONS} partitions (the "
                                    f"nl.par_dim dimension), got shape {tuple(shape)}; tile the partitions by 128")
        tile = SbufTile(name, partitions, free_shape, np.dtype(dtype), None, self.memory)
        if tile.bytes_per_partition > self.capacity:
            raise SbufCapacityError(f"{self.memory.upper()} block {name!r} ({dtypes.short_name(dtype)}{list(shape)}) "
                                    f"needs {tile.bytes_per_partition} bytes per partition, more than the "
                                    f"{self.capacity} a partition has; split its free dimension")
        return tile

    def place(self, tile: SbufTile, offset: int) -> None:
        """Give a block's tile its storage at ``offset`` bytes into this memory (what ``place_blocks`` found)."""
        tile.address = self.base + offset
        self.note(tile)

    def note(self, tile: SbufTile) -> None:
        """Count ``tile``'s storage in the high-water mark and the reach (what a Program's tiles occupy)."""
        self.high_water = max(self.high_water, tile.address - self.base + tile.footprint)
        self.reach[tile.partitions] = max(self.reach.get(tile.partitions, 0), tile.address + tile.bytes_per_partition)


def _aligned(nbytes: int) -> int:
    return ceil_div(nbytes, SBUF_ALIGNMENT) * SBUF_ALIGNMENT


def footprint(nbytes: int, memory: str) -> int:
    """``nbytes`` per partition as ``memory`` ("sbuf" or "psum") gives them out (SbufTile.footprint)."""
    unit = PSUM_BANK_BYTES if memory == "psum" else SBUF_ALIGNMENT
    return ceil_div(nbytes, unit) * unit


@dataclass
class Lifetime:
    """When a tile's storage is in use: from instruction ``first`` to instruction ``last`` (issue order,
    inclusive), at ``offset`` bytes into its memory (None for a block until ``place_blocks`` places it)."""

    size: int  # bytes per partition, aligned
    first: int
    last: int
    offset: int | None = None
    name: str = ""  # the tile's, for errors


def place_blocks(capacity: int, fixed: list[Lifetime], blocks: list[Lifetime], what: str = "SBUF") -> None:
    """Place blocks' storage as NKI's allocator does for tiles with block dimensions: each block lives from its
    first write to its last use, and takes the lowest address free for that whole time (first fit, blocks in order
    of first write), beside ``fixed`` tiles (the tracer's other tiles, at their own addresses while they are used).

    NKI documents the block dimension as logical: "the physical tiles may not be alive in the memory
    simultaneously" and the compiler "allocates physical address to each tile" from the memory dependencies
    (NKI Block Dimension Migration Guide; NKI Direct Allocation Developer Guide, "Background: NKI Tensors
    Semantics"). A block's ``last`` may be extended by the caller (to keep two blocks of a tensor apart, double
    buffering); ``place_blocks`` honours whatever lifetimes it is given. Sets each block's ``offset``; raises
    SbufCapacityError when a block finds no room, with the peak of what is live at once (the tracer then
    spills SBUF blocks, ``plan_spills``).
    """
    order = sorted(range(len(blocks)), key=lambda i: (blocks[i].first, -blocks[i].size, i))
    fixed = sorted((f for f in fixed if f.size), key=lambda f: f.first)
    fixed_firsts = [f.first for f in fixed]
    ranges = _in_use(fixed)
    waiting, live_fixed, live = 0, [], []
    for i in order:
        block = blocks[i]
        while waiting < len(fixed) and fixed[waiting].first <= block.first:
            live_fixed.append(fixed[waiting])
            waiting += 1
        live_fixed = [f for f in live_fixed if f.last >= block.first]
        live = [b for b in live if b.last >= block.first]
        later = bisect.bisect_right(fixed_firsts, block.last, lo=waiting)
        if len(live_fixed) + later - waiting <= len(ranges):  # the fixed tiles live during the block, one by one
            busy = {(f.offset, f.offset + f.size) for f in live_fixed}
            busy.update((f.offset, f.offset + f.size) for f in fixed[waiting:later])
        else:  # fewer ranges than tiles (the stack reuses its addresses): the ranges in use during the block
            busy = {span for span, (starts, ends) in ranges.items()
                    if (k := bisect.bisect_left(ends, block.first)) < len(ends) and starts[k] <= block.last}
        busy.update((b.offset, b.offset + b.size) for b in live)
        block.offset = _lowest_gap(sorted(busy), block.size, capacity)
        if block.offset is None:
            raise SbufCapacityError(_no_room(what, capacity, fixed, blocks, block))
        live.append(block)


def _in_use(fixed: list[Lifetime]) -> dict:
    """When each address range of ``fixed`` (sorted by first use) is in use: (start, end) bytes -> (firsts, lasts),
    the sorted, disjoint instruction intervals during which some tile there is live (for ``place_blocks`` to ask
    which ranges are busy during a block's life without walking every tile)."""
    ranges: dict = {}
    for f in fixed:
        starts, ends = ranges.setdefault((f.offset, f.offset + f.size), ([], []))
        if ends and f.first <= ends[-1] + 1:
            ends[-1] = max(ends[-1], f.last)
        else:
            starts.append(f.first)
            ends.append(f.last)
    return ranges


#: How an instruction uses a block (``plan_spills``): reads it only; writes part of it or reads and writes it;
#: overwrites all of it without reading it (what it held before is dead).
READS, MODIFIES, OVERWRITES = "R", "M", "W"


def plan_spills(capacity: int, fixed: list[Lifetime], uses: list[list[tuple[int, str]]], sizes: list[int],
                describe=None, names: list[str] | None = None) -> list[list[int]]:
    """Where blocks' lives are cut when those live at once in trace order do not fit: per block, the indices
    into its ``uses`` ((instruction, READS / MODIFIES / OVERWRITES) in issue order) where a new piece of its
    life starts. A piece that starts with an overwrite needs nothing; any other piece is reloaded from HBM,
    where the piece before it was stored after its last use (if that piece wrote the block).

    The rule is what a compiler that keeps the kernel's order does when tiles outnumber the memory, and what
    neuronx-cc does: spill (the kernels it generated for NKIBench, e.g. swiglu_M4096_N3072_K1024_0, store SBUF
    tiles to HBM tensors named ``_spill_N`` and load them back into ``_reload_N``). Which block goes is
    Belady's choice (the one used again furthest ahead; L. A. Belady, "A study of replacement algorithms for a
    virtual-storage computer", IBM Systems Journal 5(2), 1966); a block is dead, and gives its storage back,
    from its last use before an overwrite (NKI documents the lifetime of a tile's address as first write to
    last read: nki.compiler.Allocation, LINEAR). ``fixed`` tiles (the stack's) stay at their
    addresses while in use and count against ``capacity`` (bytes per partition). ``describe(n)`` names
    instruction n, and ``names`` the blocks, in the error raised when one instruction's blocks, with the tiles
    in use, exceed capacity.
    """
    describe = describe or (lambda n: f"instruction {n}")
    ends = max([f.last for f in fixed] + [u[-1][0] for u in uses if u] + [0]) + 2
    in_use = np.zeros(ends, np.int64)
    for f in fixed:
        in_use[f.first] += f.size
        in_use[f.last + 1] -= f.size
    in_use = np.cumsum(in_use)
    at = collections.defaultdict(list)
    for b, block_uses in enumerate(uses):
        for k, (n, _) in enumerate(block_uses):
            at[n].append(b)
    cuts = [[] for _ in uses]
    position = [0] * len(uses)
    resident, total = {}, 0
    for n in range(ends - 1):
        used = at.get(n, ())
        for b in used:
            if b not in resident:
                if position[b]:
                    cuts[b].append(position[b])
                resident[b] = True
                total += sizes[b]
        if total + in_use[n] > capacity:
            now = set(used)
            ahead = sorted(((uses[b][position[b]][0], b) for b in resident if b not in now), reverse=True)
            for _, b in ahead:
                if total + in_use[n] <= capacity:
                    break
                del resident[b]
                total -= sizes[b]
            if total + in_use[n] > capacity:
                own = sum(sizes[b] for b in used)
                named = "" if names is None else " " + ", ".join(repr(names[b]) for b in used)
                raise SbufCapacityError(
                    f"{describe(n)} requires {own + int(in_use[n]):,} bytes per partition of SBUF at once (its "
                    f"blocks{named}: {own:,}; the other tiles in use then: {int(in_use[n]):,}), got {capacity:,} "
                    f"even with every other block spilled to HBM; split the blocks' free dimension (fewer bytes "
                    f"per block) or use fewer blocks in one instruction")
        for b in used:
            position[b] += 1
            if position[b] == len(uses[b]) or uses[b][position[b]][1] == OVERWRITES:
                del resident[b]  # dead until it is written again (or for good)
                total -= sizes[b]
    return cuts


def _lowest_gap(busy: list, size: int, capacity: int) -> int | None:
    """The lowest aligned offset where ``size`` bytes fit between the sorted ``busy`` ranges, within capacity."""
    cursor = 0
    for lo, hi in busy:
        if lo - cursor >= size:
            return cursor
        cursor = max(cursor, _aligned(hi))
    return cursor if capacity - cursor >= size else None


def peak_live(lifetimes: list[Lifetime]) -> tuple[int, int]:
    """(the most bytes per partition in use at once, the first instruction where that many are)."""
    events = sorted([(t.first, t.size) for t in lifetimes] + [(t.last + 1, -t.size) for t in lifetimes],
                    key=lambda e: (e[0], e[1]))
    peak, when, now = 0, 0, 0
    for at, change in events:
        now += change
        if now > peak:
            peak, when = now, at
    return peak, when


#: Why PSUM blocks are never spilled: DMAs move data between HBM and SBUF only (NKI architecture guide: PSUM is
#: reached by the engines), so a tile in PSUM cannot be stored to HBM and reloaded by DMA.
_PSUM_NOTE = (" (PSUM, 8 banks of 2 KiB per partition, cannot be spilled to HBM: DMAs do not reach it; copy each "
              "result out to SBUF before the next block is accumulated)")


def _no_room(what: str, capacity: int, fixed: list, blocks: list, block: Lifetime) -> str:
    peak, when = peak_live(fixed + blocks)
    tile = f" ({block.name!r} finds no room)" if block.name else ""
    if peak > capacity:
        return (f"{what} blocks need {peak:,} bytes per partition live at once (at instruction {when}){tile}, over the "
                f"{capacity:,} a partition has: each block lives from its first write to its last use, as NKI's "
                f"allocator gives block dimensions storage; use fewer blocks at once (finish each block before "
                f"writing the next) or split the free dimension{_PSUM_NOTE if what == 'PSUM' else ''}")
    return (f"{what} has {capacity:,} bytes per partition and at most {peak:,} are live at once, but a block{tile} of "
            f"{block.size:,} bytes live from instruction {block.first} to {block.last} finds no free range of that "
            f"size (the live tiles leave only smaller gaps); make the blocks of a kernel the same size, or smaller")


#: Share of the host's available memory one simulation may plan to use; the rest is headroom for numpy's
#: temporaries and everything else running.
HOST_MEMORY_SHARE = 0.75


_READ_EVERY = 1.0  # seconds a reading of the host's free memory stays good: a sweep runs thousands of small checks
_last_reading = (-math.inf, 0)


def host_memory_available() -> int:
    """Bytes of memory this process can still get: the least of the host's MemAvailable (else its free physical
    pages), what the address-space limit (``ulimit -v``, RLIMIT_AS) leaves and what the cgroup's memory limit
    leaves (containers, systemd slices)."""
    global _last_reading
    when, available = _last_reading
    if time.monotonic() - when > _READ_EVERY:
        _last_reading = (time.monotonic(), available := _read_host_memory_available())
    return available


def _read_host_memory_available() -> int:
    readings = [_host_available(), _address_space_left(), _cgroup_left()]
    return min(r for r in readings if r is not None)


def _host_available() -> int:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62  # unknown: do not refuse


def _address_space_left() -> int | None:
    """RLIMIT_AS's soft limit less the address space in use (VmSize), or None without a limit."""
    try:
        import resource
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/status") as status:
            used = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
        return max(0, limit - used)
    except (ImportError, OSError, ValueError, StopIteration, IndexError):
        return None


def _cgroup_left() -> int | None:
    """The memory cgroup's limit less its usage (cgroup v2 memory.max / memory.current, else v1's
    limit_in_bytes / usage_in_bytes), or None without a limit."""
    try:
        with open("/proc/self/cgroup") as cgroup:
            lines = cgroup.read().splitlines()
    except OSError:
        return None
    candidates = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        # the process's own cgroup, or (in a container, which mounts its cgroup as the root) the root's
        for root, limit, usage in (("/sys/fs/cgroup", "memory.max", "memory.current"),
                                   ("/sys/fs/cgroup/unified", "memory.max", "memory.current"),
                                   ("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes")):
            if (controllers == "") == root.endswith("memory") or (
                    controllers and "memory" not in controllers.split(",")):
                continue
            for base in (os.path.join(root, path.lstrip("/")), root):
                candidates.append((os.path.join(base, limit), os.path.join(base, usage)))
    for limit_file, usage_file in candidates:
        try:
            with open(limit_file) as f:
                limit = f.read().strip()
            with open(usage_file) as f:
                usage = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if limit != "max" and int(limit) < 1 << 60:  # v1 writes a huge number for "no limit"
            return max(0, int(limit) - usage)
    return None


def check_host_memory(nbytes: int, what: str) -> None:
    """ResourceError unless ``nbytes`` fit in HOST_MEMORY_SHARE of the host's available memory.

    Called before a simulation (or any large allocation) starts, so that a
    request beyond the machine fails at once with what it needs, instead of
    ending in a MemoryError or swapping after minutes of work.
    """
    budget = int(host_memory_available() * HOST_MEMORY_SHARE)
    if nbytes > budget:
        raise ResourceError(f"{what} needs about {_gib(nbytes)} of host memory, but this machine can give "
                            f"{_gib(budget)} ({HOST_MEMORY_SHARE:.0%} of the {_gib(host_memory_available())} "
                            f"available); use a smaller batch or shape, or a machine with more memory")


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:,.1f} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:,.1f} MiB"


def aliased_storage(shape) -> tuple[np.ndarray, np.ndarray | None]:
    """Byte storage of ``shape`` (for an SBUF), and a second view of the same memory at other addresses; None for the
    second where the system cannot map memory twice (then the storage is a plain array).

    numpy copies between two views of one array through a temporary whenever
    their address ranges interleave, as those of any two tiles spanning several
    partitions do, even when they share no byte; a copy reading its source through
    the second view is a single pass. Linux's ``memfd_create`` makes the two
    mappings; they are shared, so a forked process must make storage of its own.
    """
    nbytes = math.prod(shape)
    try:
        fd = os.memfd_create("sbuf", os.MFD_CLOEXEC)
    except (AttributeError, OSError):  # not Linux, or not allowed
        return np.empty(shape, np.uint8), None
    try:
        os.ftruncate(fd, nbytes)
        first, second = mmap.mmap(fd, nbytes), mmap.mmap(fd, nbytes)
    except OSError:
        return np.empty(shape, np.uint8), None
    finally:
        os.close(fd)
    return np.frombuffer(first, np.uint8).reshape(shape), np.frombuffer(second, np.uint8).reshape(shape)


def poisoned(shape, dtype=np.uint8) -> np.ndarray:
    """Fresh memory: every byte 0xFF."""
    out = np.empty(shape, dtype)
    out.view(np.uint8).fill(POISON_BYTE)
    return out


#: At most this many separate fills re-poison one memory (``poisoner``); more runs of bytes are merged.
MAX_POISON_RUNS = 64


def poisoner(mask: np.ndarray, itemsize: int = 1):
    """A function poisoning, in a flat byte array, the elements the flat bool ``mask`` marks (of ``itemsize``
    bytes each); None when none are marked.

    A simulator that knows which bytes a run may read before writing poisons only
    those, not all of fresh memory. The marked elements are filled run by run; past
    MAX_POISON_RUNS runs, those across the smallest gaps are merged, which poisons a
    few unmarked bytes too: harmless, since all of fresh memory may be poisoned.
    """
    if not mask.any():
        return None
    padded = np.zeros(mask.size + 2, bool)
    padded[1:-1] = mask
    edges = np.flatnonzero(padded[1:] != padded[:-1])  # where runs of marked elements start and end, in turn
    starts, ends = edges[0::2], edges[1::2]
    if len(starts) > MAX_POISON_RUNS:
        cuts = np.sort(np.argpartition(starts[1:] - ends[:-1], -(MAX_POISON_RUNS - 1))[-(MAX_POISON_RUNS - 1):])
        starts, ends = np.r_[starts[0], starts[cuts + 1]], np.r_[ends[cuts], ends[-1]]
    runs = [(int(s) * itemsize, int(e) * itemsize) for s, e in zip(starts, ends)]

    def poison(flat: np.ndarray) -> None:
        for start, end in runs:
            flat[start:end] = POISON_BYTE
    return poison


def extents(*reaches: dict) -> tuple:
    """The region tiles occupied, from allocators' ``reach``: ((partitions, start, end), ...) address bands, disjoint,
    each on partitions 0 .. partitions - 1 (what a simulator must poison before a run, and no more)."""
    merged: dict[int, int] = {}
    for reach in reaches:
        for p, end in reach.items():
            merged[p] = max(merged.get(p, 0), end)
    bands, start = [], 0
    for p in sorted(merged, reverse=True):  # the most partitions first: each band goes past the wider ones' end
        if merged[p] > start:
            bands.append((p, start, merged[p]))
            start = merged[p]
    return tuple(bands)


def sbuf_view(sbuf: np.ndarray, tile: SbufTile) -> np.ndarray:
    """The (partitions, free_size) view of ``tile`` in an SBUF byte array of shape (128, capacity)."""
    raw = sbuf[: tile.partitions, tile.address: tile.address + tile.bytes_per_partition]
    return raw.view(tile.dtype)
