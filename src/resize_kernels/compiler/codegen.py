"""The codegen loop: re-trace every internal NKI kernel the lowered module calls into a Program.

The seed's ``codegenInternalNativeNkiKernel`` meets an InternalNativeNkiKernel,
``_resolve_kernel_config`` looks its kernel name (``inst.kernel_name``) up in
the internal-kernel registry, the config's builder supplies the extra keyword arguments, and the
kernel function is traced with the instruction's first ``operand_count``
operands (as shapes and dtypes: tracing needs no data). Where the config binds
the selection stage (``select.Selected``), it traces the kernel it chooses.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import InvalidValueError, ResizeKernelsError
from ..machine.isa import Program
from ..nki import TensorSpec, trace
from ..select import Selected
from .hlo import HloInstruction, HloModule, Shape
from .hlo.lexer import printable
from .passes import KERNEL_OPCODE
from .passes.validate_resize import SUPPORTED_ELEMENT_TYPES
from .registry import InternalKernelConfig


class CodegenError(InvalidValueError):
    """A kernel instruction that cannot be traced; the message names the instruction and the reason."""

    def __init__(self, message: str):
        super().__init__(printable(message))  # it may quote the module's text: no control characters


def codegen(module: HloModule, registry: Mapping[str, InternalKernelConfig]) -> dict[HloInstruction, Program]:
    """The traced Program of every InternalNativeNkiKernel of the module, in module order."""
    return {inst: codegen_internal_native_nki_kernel(inst, registry)
            for comp in module.computations for inst in comp.instructions if inst.opcode == KERNEL_OPCODE}


def _kernel_name(inst: HloInstruction) -> str:
    """``inst.kernel_name``, the registry key; CodegenError when it is absent or not a string."""
    try:
        return inst.kernel_name
    except ValueError:
        raw = inst.attributes.get("kernel_name")
        got = "none" if raw is None else f"kernel_name={raw}"
        raise CodegenError(f"{KERNEL_OPCODE} {inst.name!r} requires kernel_name=\"<registry key>\", "
                           f"got {got}") from None


def _resolve_kernel_config(inst: HloInstruction, registry: Mapping[str, InternalKernelConfig]) -> InternalKernelConfig:
    """The registry entry ``inst`` names; an unknown name is an error listing the known ones."""
    name = _kernel_name(inst)
    if name not in registry:
        raise CodegenError(f"{KERNEL_OPCODE} {inst.name!r} names kernel {name!r}, which is not in the internal-kernel "
                           f"registry; known kernels: {', '.join(map(repr, registry)) or 'none'}")
    return registry[name]


def codegen_internal_native_nki_kernel(inst: HloInstruction, registry: Mapping[str, InternalKernelConfig]) -> Program:
    """Trace ``kernel_func(*operands[:operand_count], **additional_args_builder(inst))`` for one instruction."""
    config = _resolve_kernel_config(inst, registry)
    what = f"{KERNEL_OPCODE} {inst.name!r} ({config.kernel_func.__name__})"
    if len(inst.operands) < config.operand_count:
        raise CodegenError(f"{what} requires {config.operand_count} operand(s), got {len(inst.operands)}")
    operands = [_tensor_spec(operand, what) for operand in inst.operands[:config.operand_count]]
    try:
        extra_kw = config.additional_args_builder(inst) if config.additional_args_builder else {}
        if isinstance(config.kernel_func, Selected):
            return config.kernel_func.program(*operands, **extra_kw)
        return trace(config.kernel_func, *operands, **extra_kw)
    except ResizeKernelsError as error:  # any deliberate error of the kernel (a dtype, a shape, a budget, the machine)
        raise CodegenError(f"{what} cannot be traced: {error}") from error


def _tensor_spec(operand: HloInstruction, what: str) -> TensorSpec:
    shape = operand.shape
    if not isinstance(shape, Shape) or shape.element_type not in SUPPORTED_ELEMENT_TYPES:
        raise CodegenError(f"{what} requires array operands of a NeuronCore element type "
                           f"({', '.join(SUPPORTED_ELEMENT_TYPES)}), got {operand.name} of shape {shape}")
    return TensorSpec(shape.dims, shape.numpy_dtype)
