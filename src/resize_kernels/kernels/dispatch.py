"""resize_nearest_auto_kernel: the exact forward kernel with the lowest modelled time for each shape, chosen when
the kernel is traced."""

from __future__ import annotations

import functools

import numpy as np

from .. import contract, semantics
from ..errors import ResourceError
from ..machine.cost import program_cost
from ..nki.tensor import TensorSpec
from ..nki.tracer import suspended, trace
from .batched import batched_dma_count, resize_nearest_batched_kernel
from .grad import resize_nearest_grad_kernel
from .grad_rows import grad_rows_applies, grad_rows_is_short, resize_nearest_grad_rows_kernel
from .plan import plan_resize
from .rowreuse import ROW_REUSE_MAX_DMAS, resize_nearest_row_reuse_kernel, row_reuse_dma_count
from .rows import resize_nearest_rows_kernel, rows_instruction_count, rows_schedule_for
from .sourcerows import resize_nearest_source_rows_kernel, source_rows_instruction_count, source_rows_schedule_for
from .strided import resize_nearest_strided_kernel
from .twopass import resize_nearest_two_pass_kernel

_KERNELS = {"rows": resize_nearest_rows_kernel, "sourcerows": resize_nearest_source_rows_kernel,
            "strided": resize_nearest_strided_kernel,
            "batched": resize_nearest_batched_kernel, "rowreuse": resize_nearest_row_reuse_kernel,
            "twopass": resize_nearest_two_pass_kernel}
#: The instructions one candidate may trace in dispatch (tracing and costing take about 40 us each); a candidate
#: whose count, known without tracing, would pass it is not traced ("twopass", bounded on every shape, always is).
DISPATCH_BUDGET = 8_000
#: Below this many output bytes dispatch takes "rows" without tracing the others: on tiny outputs its few
#: whole-row transfers are within a microsecond of the best (modelled, 1x100x25x1 -> 150x50 float32: rows 10.9 us,
#: sourcerows 10.0, the rest 58 or more), so
#: comparing would only cost trace time, and the sweeps' shapes (one channel, outputs of 48 KiB at most) pay for
#: one trace, not six. From here on the candidates differ by more (1x34x156x64 -> 12x47 float16, 72 KiB: rows
#: 17.6, sourcerows 12.6).
SMALL_OUTPUT_BYTES = 64 * 1024
#: Past this many instructions (an upper bound counted without tracing) "rows" gives way to "twopass", whose
#: Program is bounded on every shape: auto traces at most 80,000 instructions for outputs up to 16384 x 16384.
ROWS_MAX_INSTRUCTIONS = 65_536
#: The target dispatch compares on (the kernel does not know where it will run; trn1 is the cost model's default).
DISPATCH_TARGET = "trn1"
_SPEC_DTYPES = {1: np.uint8, 2: np.float16, 4: np.float32}  # costs depend on sizes only


def forward_kernel_for(in_shape, out_shape, itemsize: int = 4) -> str:
    """The variant name "auto" picks for NHWC ``in_shape`` -> ``out_shape`` and an element size in bytes.

    The candidate with the lowest modelled time (trn1 cost model), among those
    whose traced size fits DISPATCH_BUDGET: "rows" (whole output rows on
    partitions), "sourcerows" (source rows on partitions, narrow pixels),
    "strided" (integer ratios), "batched", "rowreuse" and "twopass". Below SMALL_OUTPUT_BYTES of output, or when no candidate fits the
    budget, "rows" without comparing, unless its Program would pass
    ROWS_MAX_INSTRUCTIONS ("twopass" then). All are exact for every shape they
    accept. ``candidate_times`` gives the times compared.
    """
    in_shape, out_shape = contract.resize_shapes("forward_kernel_for", in_shape, out_shape)
    return _variant_for(in_shape, out_shape, itemsize)


#: The forward kernels that take a convention other than the compiler's (their index tiles as tables).
CONVENTION_CANDIDATES = ("rows", "rowreuse")


def convention_variant(in_shape: tuple, out_shape: tuple, itemsize: int = 4) -> str:
    """auto's pick under a convention other than the compiler's: its pick for the compiler's map (a close proxy:
    the maps differ by a pixel here and there, so the kernels' costs hardly do) where that kernel takes
    conventions, else "rows" while it traces small enough, else "rowreuse"."""
    variant = _variant_for(in_shape, out_shape, itemsize)
    if variant in CONVENTION_CANDIDATES:
        return variant
    rows = rows_instruction_count(plan_resize(in_shape, out_shape), itemsize)
    return "rows" if rows <= ROWS_MAX_INSTRUCTIONS else "rowreuse"


def candidate_times(in_shape, out_shape, itemsize: int = 4) -> dict:
    """{variant: modelled us} of the candidates dispatch traced for this shape (empty below SMALL_OUTPUT_BYTES)."""
    in_shape, out_shape = contract.resize_shapes("candidate_times", in_shape, out_shape)
    return dict(_times(in_shape, out_shape, itemsize))


def _variant_for(in_shape: tuple, out_shape: tuple, itemsize: int) -> str:
    """``forward_kernel_for`` on shapes the contract has already checked (the auto kernel checks them itself)."""
    times = _times(in_shape, out_shape, itemsize)
    if times:
        return min(times, key=lambda kv: kv[1])[0]
    # small, or every candidate past the budget: rows while it traces small enough, else twopass (bounded)
    rows = rows_instruction_count(plan_resize(in_shape, out_shape), itemsize)
    return "rows" if rows <= ROWS_MAX_INSTRUCTIONS else "twopass"


@functools.lru_cache(maxsize=1024)
def _times(in_shape: tuple, out_shape: tuple, itemsize: int) -> tuple:
    """((variant, modelled us), ...) for the candidates within budget; () for a small output."""
    out_bytes = int(np.prod(out_shape)) * itemsize
    if out_bytes < SMALL_OUTPUT_BYTES:
        return ()
    plan = plan_resize(in_shape, out_shape)
    counts = {"rows": rows_instruction_count(plan, itemsize, rows_schedule_for(in_shape, out_shape, itemsize)),
              "sourcerows": source_rows_instruction_count(plan, itemsize,
                                                          source_rows_schedule_for(in_shape, out_shape, itemsize)),
              "strided": 0 if plan.integer_ratios else None,
              "batched": batched_dma_count(plan, itemsize),
              "rowreuse": row_reuse_dma_count(plan, itemsize, limit=min(ROW_REUSE_MAX_DMAS, DISPATCH_BUDGET)),
              "twopass": 0}
    spec = TensorSpec(in_shape, _SPEC_DTYPES[itemsize])
    times = []
    limits = {"rowreuse": min(ROW_REUSE_MAX_DMAS, DISPATCH_BUDGET)}  # rowreuse plans up to ROW_REUSE_MAX_DMAS
    for name, count in counts.items():
        if count is None or count > limits.get(name, DISPATCH_BUDGET):
            continue
        try:
            with suspended():  # a trace of its own, inside the auto kernel's
                program = trace(_KERNELS[name], spec, out_shape=out_shape, sources=False,
                                max_instructions=DISPATCH_BUDGET)
        except ResourceError:  # past the budget after all (twopass has no count): not a candidate here
            continue
        times.append((name, program_cost(program, DISPATCH_TARGET).modelled_us))
    return tuple(times)


def kernel_schedule(name: str, in_shape, out_shape, itemsize: int = 4) -> str | None:
    """The schedule a forward kernel takes for NHWC ``in_shape`` -> ``out_shape`` when none is given, in words
    (the rows kernels' knobs, chosen by modelled time on large outputs), or None for kernels without knobs."""
    in_shape, out_shape = contract.resize_shapes("kernel_schedule", in_shape, out_shape)
    if name == "rows":
        tiling, factor = rows_schedule_for(in_shape, out_shape, itemsize)
        return f"{tiling} tiles, column chunks x{factor}"
    if name == "sourcerows":
        return f"column chunks x{source_rows_schedule_for(in_shape, out_shape, itemsize)}"
    return None


def resize_nearest_auto_kernel(data_tensor, out_shape, convention=None):
    """Nearest-neighbour resize by the exact kernel with the lowest modelled time (see ``forward_kernel_for``).

    Layouts, dtypes and constraints: those of the chosen kernel (NHWC in and out
    in HBM, any machine dtype, the resize contract). The choice is made at
    trace time, so the Program is the chosen kernel's, under this kernel's name.
    A ``convention`` other than the compiler's (``semantics.IndexConvention``)
    takes ``convention_variant``'s pick, with its maps as trace-time tables.
    """
    in_shape, checked_out = contract.resize_shapes("resize_nearest_auto_kernel", data_tensor.shape, out_shape)
    if convention is not None and not convention.is_default:
        variant = convention_variant(in_shape, checked_out, data_tensor.dtype.itemsize)
        return _KERNELS[variant](data_tensor, out_shape, convention=convention)
    variant = _variant_for(in_shape, checked_out, data_tensor.dtype.itemsize)
    return _KERNELS[variant](data_tensor, out_shape)


def resize_nearest_grad_auto_kernel(dy_tensor, in_shape, convention=None):
    """Gradient of nearest-neighbour resize by "rows" (dx rows on partitions, sums on chip in PSUM; modelled 1.6-1.7x
    its roofline on the SD2 shapes on trn1, where "general"'s scatter-adds are 5-7x) wherever one dx pixel's dy
    pixels fit its tile and its maps are regular enough to take few instructions per tile (GRAD_ROWS_MAX_PER_CHUNK),
    else "general" (DMA scatter-add, any shape). Both are bit for bit the reference.

    Layouts, dtypes and constraints: those of the chosen kernel (dy and dx NHWC in HBM; float32, float16, bfloat16).
    Both take any ``convention`` (``semantics.IndexConvention``; None: the compiler's).
    """
    dy_shape, checked_in = contract.grad_shapes("resize_nearest_grad_auto_kernel", dy_tensor.shape, in_shape)
    plan, item = plan_resize(checked_in, dy_shape, convention or semantics.COMPILER), dy_tensor.dtype.itemsize
    extra = {} if convention is None else {"convention": convention}
    if grad_rows_applies(plan, item) and grad_rows_is_short(plan, item):
        return resize_nearest_grad_rows_kernel(dy_tensor, in_shape, **extra)
    return resize_nearest_grad_kernel(dy_tensor, in_shape, **extra)
