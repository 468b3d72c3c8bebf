"""Kernel functions, by variant name. They know nothing of HLO.

Each variant file is a schedule: it reads the resize's plan (``plan.py``) and
builds its index graph and DMAs from the shared library (``helpers.py``,
``dma.py``, and for the rows kernels ``columns.py`` and ``schedule.py``); no
variant imports another, except "auto", which picks one.
"""

from . import vision
from .batched import resize_nearest_batched_kernel
from .dispatch import forward_kernel_for, kernel_schedule, resize_nearest_auto_kernel, resize_nearest_grad_auto_kernel
from .exact import resize_nearest_exact_kernel
from .grad import resize_nearest_grad_kernel
from .grad_rows import resize_nearest_grad_rows_kernel
from .resize import resize_nearest_fixed_dma_kernel
from .rowreuse import resize_nearest_row_reuse_kernel
from .rows import resize_nearest_rows_kernel
from .sourcerows import resize_nearest_source_rows_kernel
from .strided import resize_nearest_strided_kernel
from .twopass import resize_nearest_two_pass_kernel

#: Forward resize kernels selectable by name (``kernel=`` in the API).
#: "auto" picks, per shape, the exact candidate with the lowest modelled time; see ``forward_kernel_for``.
FORWARD_KERNELS = {"exact": resize_nearest_exact_kernel, "seed": resize_nearest_fixed_dma_kernel,
                   "public": vision.resize_nearest_fixed_dma_kernel, "auto": resize_nearest_auto_kernel,
                   "strided": resize_nearest_strided_kernel, "rowreuse": resize_nearest_row_reuse_kernel,
                   "batched": resize_nearest_batched_kernel, "twopass": resize_nearest_two_pass_kernel,
                   "rows": resize_nearest_rows_kernel, "sourcerows": resize_nearest_source_rows_kernel}
#: The variant used when none is named: exact for every accepted shape, and the cheapest exact one for it.
DEFAULT_FORWARD = "auto"
#: Forward kernels that take an index convention other than the compiler's (``convention=``): their maps are
#: trace-time tables. The others compute the compiler's map on chip.
CONVENTION_KERNELS = ("auto", "rows", "rowreuse", "exact")

#: Gradient kernels selectable by name; "general" handles every ratio (integer or not, up or down), "rows" every
#: shape whose dx pixels' dy pixels fit its tile, "auto" takes "rows" where it applies, else "general".
GRAD_KERNELS = {"auto": resize_nearest_grad_auto_kernel, "general": resize_nearest_grad_kernel,
                "rows": resize_nearest_grad_rows_kernel}
#: The gradient kernel used when none is named.
DEFAULT_GRAD = "auto"
#: Every gradient kernel takes any convention (their maps are trace-time tables or plans).
GRAD_CONVENTION_KERNELS = tuple(GRAD_KERNELS)

__all__ = ["FORWARD_KERNELS", "DEFAULT_FORWARD", "CONVENTION_KERNELS", "GRAD_CONVENTION_KERNELS", "GRAD_KERNELS",
           "DEFAULT_GRAD", "forward_kernel_for", "kernel_schedule",
           "resize_nearest_auto_kernel", "resize_nearest_batched_kernel", "resize_nearest_exact_kernel",
           "resize_nearest_fixed_dma_kernel", "resize_nearest_grad_auto_kernel", "resize_nearest_grad_kernel",
           "resize_nearest_grad_rows_kernel", "resize_nearest_row_reuse_kernel",
           "resize_nearest_rows_kernel", "resize_nearest_source_rows_kernel",
           "resize_nearest_strided_kernel", "resize_nearest_two_pass_kernel"]
