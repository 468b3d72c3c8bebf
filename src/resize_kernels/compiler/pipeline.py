"""compile_hlo: HLO text in; parsed, validated, lowered, kernels re-traced; out comes a module you can call.

As in XLA's pass pipeline, compilation is a sequence of small named passes,
each a function ``pass(module) -> None`` that rewrites the module in place or
raises, run in order by ``run_passes``. After the passes, codegen traces every
InternalNativeNkiKernel through the internal-kernel registry. Errors are
HloParseError (the text), ValidationError (an op the kernels cannot honour),
CodegenError (a kernel that cannot be traced for its instruction) and, when
running, ExecutionError; all are ValueErrors with a message saying what to
change. A kernel that misbehaves on the simulator raises the machine's
MachineError (e.g. an out-of-bounds DMA).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..machine.isa import Program
from ..runtime.executor import ExecutionError, Executor
from .codegen import CodegenError, codegen, kernel_name
from .hlo import HloInstruction, HloModule, HloParseError, parse_hlo_module, print_hlo_module
from .passes import (ValidationError, average_pool_resize_grad, canonicalize_resize_grad, lower_resize_nearest,
                     lower_resize_nearest_grad, validate_resize)
from .registry import with_forward_kernel

__all__ = ["PASSES", "CodegenError", "CompiledModule", "ExecutionError", "HloParseError", "ValidationError",
           "compile_hlo", "run_passes"]

#: The passes compile_hlo runs, in order: block-ratio gradients become reduce-window before anything is
#: lowered to a kernel; the other gradients and every forward resize become InternalNativeNkiKernels.
PASSES: tuple[Callable[[HloModule], None], ...] = (
    validate_resize,
    canonicalize_resize_grad,
    lower_resize_nearest,
    lower_resize_nearest_grad,
)


def run_passes(module: HloModule, passes: Sequence[Callable[[HloModule], None]] = PASSES) -> HloModule:
    """Run each pass over the module in order; the first error stops the pipeline."""
    for hlo_pass in passes:
        hlo_pass(module)
    return module


def compile_hlo(text: str, kernel: str | None = None, *, resize_grad_average_pool: bool = False) -> CompiledModule:
    """Compile HLO text (either dump style) into a CompiledModule.

    ``kernel`` picks the forward resize variant bound to "ResizeNearest"
    (a name in resize_kernels.kernels.FORWARD_KERNELS; None: the registry's default).
    ``resize_grad_average_pool=True`` lowers block-ratio ResizeNearestGrad calls
    as the seed describes them, window sum divided by k_h * k_w: an average
    pool, NOT the gradient (which is the sum, the default).
    """
    registry = with_forward_kernel(kernel)
    passes = PASSES if not resize_grad_average_pool else tuple(
        average_pool_resize_grad if hlo_pass is canonicalize_resize_grad else hlo_pass for hlo_pass in PASSES)
    module = run_passes(parse_hlo_module(text), passes)
    return CompiledModule(module, codegen(module, registry))


@dataclass(eq=False)
class CompiledModule:
    """A lowered module and the Program traced for each of its kernel instructions; call it to run it."""

    module: HloModule
    programs: dict[HloInstruction, Program]

    @functools.cached_property
    def executor(self) -> Executor:
        """Planned on first use, so printing a module the executor cannot run still works."""
        return Executor(self.module, self.programs)

    def __call__(self, *args):
        """Run on numpy arrays (one per entry parameter); the ROOT's value, a tuple for a tuple ROOT."""
        return self.executor(*args)

    def values(self, *args) -> dict:
        """Run and return every entry instruction's value by name (to check each kernel's output)."""
        return self.executor.values(*args)

    def __str__(self) -> str:
        """The lowered HLO, then each kernel's Program summarised as comments (so the text still parses)."""
        lines = [print_hlo_module(self.module).rstrip("\n")]
        for inst, program in self.programs.items():
            lines += ["", f"// {inst.name}: kernel {kernel_name(inst)}, traced into"]
            lines += [f"//   {line}" for line in program.summary().splitlines()]
        return "\n".join(lines) + "\n"
