"""ResizeNearestGrad before codegen: a window sum (the seed's canonicalize step), else the gradient kernel.

The forward copies source pixel (i, j) to every output pixel that maps to it,
so dx[i, j] is the sum of dy over those pixels. When each axis of dy is k times
dx's and the float32 forward map of that axis is the block map ``o // k``, the
pixels of (i, j) are one k_h x k_w block, and the gradient is
``reduce-window(add)`` with window = stride = [1, k_h, k_w, 1] and init 0: the
seed's lowering, which needs no kernel and never reads ``_get_resize_args``.

The seed follows the window sum with a divide "for normalisation"; a divide
by k_h * k_w makes it an average pool, which is not the gradient. Here the
divide is dropped (dividing by one is the identity, so emitting it would only
cost a broadcast and a pass over dx); ``average_pool_resize_grad`` is the
literal average-pool form, kept as an explicitly named option.

float16 / bfloat16 are summed in float32 (convert, reduce-window, convert back,
one rounding at the end), as the gradient kernel and
semantics.resize_nearest_grad_reference do, so the results agree bit for bit.

Beyond the seed, every other ResizeNearestGrad (a non-integer ratio such as
59 -> 30, a downsample's gradient, or an integer ratio whose float32 map is not
the block map, e.g. 2 -> 82 where output 41 reads source 0) is lowered by
``lower_resize_nearest_grad`` to the general gradient kernel.
Run validate_resize first: these passes trust the call's mode, shapes and
element type (a gradient's is f32, f16 or bf16: the contract's dtype rule).
"""

from __future__ import annotations

from dataclasses import replace

from ... import semantics
from ..hlo import HloComputation, HloInstruction, HloModule, IntList, Shape, Window, constant, parameter
from .lower_resize import kernel_instruction
from .validate_resize import custom_call_target, resize_mode

RESIZE_NEAREST_GRAD = "ResizeNearestGrad"
#: The element type every sum is accumulated in.
ACCUMULATOR = "f32"
_KEPT_ATTRIBUTES = ("metadata",)


def canonicalize_resize_grad(module: HloModule, average_pool: bool = False) -> None:
    """Pass: replace each ResizeNearestGrad with block ratios by reduce-window(add), the true gradient.

    ``average_pool=True`` divides by k_h * k_w afterwards (see average_pool_resize_grad).
    """
    adder = None
    for comp, calls in _resize_grad_calls(module):
        taken, expansions = {i.name for i in comp.instructions}, {}
        for inst in calls:
            factors = block_factors(inst.operands[0].shape.dims[1:3], inst.shape.dims[1:3])
            if factors is not None and resize_mode(inst) is None:  # a mode's map is not o // k: the kernel's
                adder = adder or _add_computation(module)
                new = expansions[inst] = _window_sum(taken, inst, factors, adder, average_pool)
                taken.discard(new[-1].name)
                new[-1].name = inst.name  # free once the custom-call is gone; users and values keep their name
        comp.expand(expansions)


def average_pool_resize_grad(module: HloModule) -> None:
    """Pass: the seed's literal lowering, window sum divided by k_h * k_w: an average pool, NOT the gradient.

    The mean of each block is the gradient divided by k_h * k_w; use it only
    to reproduce the seed's description (compile_hlo(..., resize_grad_average_pool=True)).
    """
    canonicalize_resize_grad(module, average_pool=True)


def lower_resize_nearest_grad(module: HloModule) -> None:
    """Pass: each ResizeNearestGrad left after canonicalization becomes InternalNativeNkiKernel "ResizeNearestGrad"."""
    for comp, calls in _resize_grad_calls(module):
        comp.expand({inst: [kernel_instruction(inst, RESIZE_NEAREST_GRAD)] for inst in calls})


def block_factors(dy_hw, dx_hw) -> tuple[int, int] | None:
    """(k_h, k_w) when each axis of dy is k times dx's and its float32 forward map is ``o // k``; else None.

    A block ratio is ``semantics.integer_ratio(in_size, out_size) == (k, 1)``.
    """
    factors = []
    for out_size, in_size in zip(dy_hw, dx_hw):
        ratio = semantics.integer_ratio(in_size, out_size)
        if ratio is None or ratio[1] != 1:
            return None
        factors.append(ratio[0])
    return factors[0], factors[1]


def _resize_grad_calls(module: HloModule):
    """(computation, its ResizeNearestGrad custom-calls) for every computation."""
    for comp in list(module.computations):  # canonicalize adds a computation on the way
        yield comp, [inst for inst in comp.instructions if custom_call_target(inst) == RESIZE_NEAREST_GRAD]


def _window_sum(taken: set[str], inst: HloInstruction, factors: tuple[int, int], adder: HloComputation,
                average_pool: bool) -> list[HloInstruction]:
    """The instructions computing dx from dy, named apart from `taken` (which records them); the last one takes
    ``inst``'s place."""
    k_h, k_w = factors
    dy, dx = inst.operands[0], inst.shape
    kept = {key: inst.attributes[key] for key in _KEPT_ATTRIBUTES if key in inst.attributes}
    scalar, wide = Shape(ACCUMULATOR, ()), replace(dx, element_type=ACCUMULATOR)

    made = []

    def fresh(suffix):
        name = _fresh_name(taken, f"{inst.name}.{suffix}")
        taken.add(name)
        return name

    def add(new):
        new.attributes.update(kept)
        made.append(new)
        return new

    def emit(suffix, shape, opcode, operands, attributes=None):
        return add(HloInstruction(fresh(suffix), opcode, shape, operands, attributes))

    source = dy if dy.shape.element_type == ACCUMULATOR else emit(
        "widen", replace(dy.shape, element_type=ACCUMULATOR), "convert", [dy])
    zero = add(constant(fresh("zero"), scalar, 0))
    window = Window(size=(1, k_h, k_w, 1), stride=(1, k_h, k_w, 1))
    total = emit("sum", wide, "reduce-window", [source, zero], {"window": window, "to_apply": adder.name})
    if average_pool:
        count = add(constant(fresh("count"), scalar, k_h * k_w))
        counts = emit("counts", wide, "broadcast", [count], {"dimensions": IntList()})
        total = emit("mean", wide, "divide", [total, counts])
    if dx.element_type != ACCUMULATOR:
        emit("narrow", dx, "convert", [total])
    return made


def _add_computation(module: HloModule) -> HloComputation:
    """A new ``add`` of two f32 scalars for reduce-window's to_apply, added to the module."""
    scalar = Shape(ACCUMULATOR, ())
    lhs, rhs = parameter("lhs", 0, scalar), parameter("rhs", 1, scalar)
    root = HloInstruction("sum", "add", scalar, [lhs, rhs])
    name = _fresh_name({comp.name for comp in module.computations}, f"add_{ACCUMULATOR}")
    return module.add_computation(HloComputation(name, [lhs, rhs, root], root=root))


def _fresh_name(taken: set[str], base: str) -> str:
    """``base``, or ``base.1``, ``base.2`` ... whichever is not taken."""
    name, number = base, 0
    while name in taken:
        number += 1
        name = f"{base}.{number}"
    return name
