"""``rk.cost``: the modelled cost of a forward resize kernel on a NeuronCore.

Traces the kernel as ``resize_nearest`` would (cached) and hands the Program to
the generic cost model in ``machine/cost.py``; every time it reports is modelled
from design/HARDWARE.md, not measured.
"""

from __future__ import annotations

from . import semantics
from .api import check_shape_pair, kernel_name, trace_resize
from .machine.cost import CostReport, program_cost, target_params


def cost(in_shape, out_shape, kernel: str | None = None, target: str = "trn1", dtype="float32") -> CostReport:
    """Modelled cost of resizing NHWC ``in_shape`` to ``out_shape`` with ``kernel`` (None: the default) on ``target``.

    ``target`` is "trn1" (NeuronCore-v2) or "trn2" (v3). The report gives
    ``modelled_us``, ``instructions`` by engine, ``dma_count``, ``dma_bytes`` and
    the rest of ``machine.cost.CostReport``; ``str(report)`` is readable.
    """
    target_params(target)
    in_shape, out_shape = check_shape_pair("cost", in_shape, out_shape)
    for i, o in zip(in_shape[1:3], out_shape[1:3]):
        semantics.check_axis(i, o, "cost")
    name = kernel_name(kernel)
    program = trace_resize(in_shape, out_shape[1:3], dtype, name)
    shapes = "x".join(map(str, in_shape)) + " -> " + "x".join(map(str, out_shape))
    return program_cost(program, target, label=f"kernel {name!r}, {shapes} {dtype}")
