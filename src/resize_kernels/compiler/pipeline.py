"""compile_module: HLO in; parsed, validated, lowered, kernels re-traced; out comes data, a CompiledModule.

As in XLA's pass pipeline, compilation is a sequence of small named passes,
each a function ``pass(module) -> None`` that rewrites the module in place or
raises, run in order by ``run_passes``. After the passes, codegen traces every
InternalNativeNkiKernel through the internal-kernel registry. Errors are
HloParseError (the text, compiler.hlo; ProtoDecodeError for a proto), ValidationError (an op the kernels
cannot honour, compiler.passes) and CodegenError (a kernel that cannot be
traced for its instruction, compiler.codegen); all are ValueErrors with a
message saying what to change. The compiler runs nothing: ``runtime.load``
turns a CompiledModule into something callable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import kernels
from ..errors import InvalidTypeError, InvalidValueError
from ..machine.isa import Program
from .codegen import codegen
from .frontend import parse_module
from .hlo import HloInstruction, HloModule, print_hlo_module
from .passes import (
    average_pool_resize_grad,
    canonicalize_resize_grad,
    inline_calls,
    lower_resize_nearest,
    lower_resize_nearest_grad,
    validate_resize,
    validate_resize_extended,
)
from .registry import with_forward_kernel

__all__ = ["PASSES", "CompiledModule", "compile_module", "run_passes"]

#: The passes compile_module runs, in order: calls are inlined first (so that a resize inside a called function is
#: validated and lowered too); block-ratio gradients become reduce-window before anything is lowered to a kernel;
#: the other gradients and every forward resize become InternalNativeNkiKernels.
PASSES: tuple[Callable[[HloModule], None], ...] = (
    inline_calls,
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


def compile_module(hlo: str | bytes | HloModule, kernel: str | None = None, *,
                   resize_grad_average_pool: bool = False, extended_modes: bool = False) -> CompiledModule:
    """Compile a module into a CompiledModule: HLO text (either dump style), StableHLO text, the bytes of a
    serialized HloModuleProto (also gzipped; ``frontend.parse_module`` tells them apart), or an HloModule.

    An HloModule is lowered in place (pass one built for the purpose).
    ``kernel`` picks the forward resize variant bound to "ResizeNearest"
    (a name in ``resize_kernels.kernels.names``; None: the registry's default).
    ``resize_grad_average_pool=True`` lowers block-ratio ResizeNearestGrad calls
    as the seed describes them, window sum divided by k_h * k_w: an average
    pool, NOT the gradient (which is the sum, the default).
    ``extended_modes=True`` lowers resize calls with align_corners or
    half_pixel_centers (which the seed rejects) with TensorFlow's
    ResizeNearestNeighbor map for the flag (``semantics.TENSORFLOW_MODES``); the
    kernel instruction then shows ``resize_mode``.
    """
    registry = with_forward_kernel(kernel)
    takes = kernels.convention_names(kernels.FORWARD)
    if extended_modes and kernel is not None and kernel not in takes:
        raise InvalidValueError(f"compile_module extended_modes requires a forward kernel that takes other maps: "
                                f"{', '.join(map(repr, takes))}, got {kernel!r}")
    swaps = {canonicalize_resize_grad: average_pool_resize_grad} if resize_grad_average_pool else {}
    swaps.update({validate_resize: validate_resize_extended} if extended_modes else {})
    passes = tuple(swaps.get(hlo_pass, hlo_pass) for hlo_pass in PASSES)
    if isinstance(hlo, (str, bytes, bytearray, memoryview)):
        hlo = parse_module(hlo)
    elif not isinstance(hlo, HloModule):
        raise InvalidTypeError(f"compile_module takes HLO or StableHLO text, HloModuleProto bytes or an HloModule, "
                               f"got {type(hlo).__name__}")
    module = run_passes(hlo, passes)
    return CompiledModule(module, codegen(module, registry))


@dataclass(eq=False)
class CompiledModule:
    """A lowered module and the Program traced for each of its kernel instructions (``runtime.load`` runs it)."""

    module: HloModule
    programs: dict[HloInstruction, Program]

    def __repr__(self) -> str:
        """One line: the module and its kernels (``str`` prints the lowered HLO and each Program's summary)."""
        kernels = [f"{inst.name} {inst.kernel_name} ({len(p.instructions):,} instructions)"
                   for inst, p in list(self.programs.items())[:3]]
        more = f", ... {len(self.programs) - 3} more" if len(self.programs) > 3 else ""
        return (f"<CompiledModule {self.module.name}: {len(self.module.computations)} computations, "
                f"{len(self.programs)} kernels" + (": " + ", ".join(kernels) + more if kernels else "") + ">")

    def _repr_html_(self) -> str:
        """A table of the kernels (a notebook's rich display); ``str`` has the whole lowered module."""
        import html

        rows = "".join(f"<tr><td>{html.escape(inst.name)}</td><td>{html.escape(str(inst.kernel_name))}</td>"
                       f"<td>{html.escape(p.name)}</td><td>{len(p.instructions):,}</td></tr>"
                       for inst, p in self.programs.items())
        return (f"<p>CompiledModule <b>{html.escape(self.module.name)}</b>: {len(self.module.computations)} "
                f"computations, {len(self.programs)} kernels</p><table><tr><th>instruction</th><th>kernel</th>"
                f"<th>program</th><th>instructions</th></tr>{rows}</table>")

    def __str__(self) -> str:
        """The lowered HLO, then each kernel's Program summarised as comments (so the text still parses)."""
        lines = [print_hlo_module(self.module).rstrip("\n")]
        for inst, program in self.programs.items():
            lines += ["", f"// {inst.name}: kernel {inst.kernel_name}, traced into"]
            lines += [f"//   {line}" for line in program.summary().splitlines()]
        return "\n".join(lines) + "\n"
