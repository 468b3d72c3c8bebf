"""parse_module: whatever form the compiler is handed, the same HloModule; StableHLO converted as XLA converts it.

The form is told by content (``hlo.module_format``): HLO text and protos
parse into the HloModule the text parser builds. StableHLO text is parsed op
for op (``hlo.stablehlo``), then converted by STABLEHLO_TO_HLO, the rewrites
XLA makes when it converts StableHLO to HLO (JAX's ``as_text(dialect="hlo")``
shows the result): MLIR's canonical forms, XLA's own forms of broadcasts,
splats and iotas, constants sunk into regions, XLA's names, dead code
dropped, XLA's order and layouts. So everything after parsing is shared, and
the module equals JAX's HLO text up to names and the digits of float literals.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import InvalidTypeError, InvalidValueError
from .hlo import HloModule, parse_hlo_module
from .hlo.formats import MAX_MODULE_BYTES, gunzip, module_format
from .hlo.stablehlo import parse_stablehlo_ops
from .passes import (
    assign_layouts,
    canonicalize_shape_ops,
    cse_constants,
    expand_iota,
    expand_splat_constants,
    hlo_dce,
    legalize_broadcast_in_dim,
    move_constants_right,
    name_instructions,
    post_order,
    sink_constants,
)
from .passes.canonicalize_shape_ops import Folder

__all__ = ["STABLEHLO_TO_HLO", "parse_module", "parse_stablehlo"]

#: The passes that make a module parsed from StableHLO the HLO XLA makes of it, in order: MLIR's rewrites first
#: (folds, unique constants, constants right), then XLA's conversion (broadcast, splat and iota forms, constants
#: sunk into regions), its names (before dead code goes: what goes took names too), its order and layouts.
STABLEHLO_TO_HLO: tuple[Callable[[HloModule], None], ...] = (
    canonicalize_shape_ops,
    cse_constants,
    move_constants_right,
    legalize_broadcast_in_dim,
    expand_splat_constants,
    expand_iota,
    sink_constants,
    name_instructions,
    hlo_dce,
    post_order,
    assign_layouts,
)


def parse_stablehlo(text: str) -> HloModule:
    """Parse StableHLO (MLIR) text, pretty or generic form, into the HloModule XLA converts it to;
    StableHloParseError if malformed (UnsupportedOpError for an op it does not convert)."""
    module = parse_stablehlo_ops(text, fold=Folder())  # two errors depend on what values fold into, as in XLA
    for hlo_pass in STABLEHLO_TO_HLO:
        hlo_pass(module)
    return module


def parse_module(data: str | bytes) -> HloModule:
    """An HloModule from HLO text, StableHLO text, or the bytes of a serialized HloModuleProto (also gzipped).

    Errors are ValueErrors saying what is wrong and where: HloParseError (line
    and column) for text, ProtoDecodeError (the field or instruction) for protos.
    """
    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        raise InvalidTypeError(f"parse_module requires HLO text, StableHLO text or the bytes of a serialized "
                               f"HloModuleProto, got {type(data).__name__}")
    if len(data) > MAX_MODULE_BYTES:  # before any work on the content
        raise InvalidValueError(f"parse_module requires a module of at most {MAX_MODULE_BYTES >> 20} MiB, got "
                                f"{len(data):,} {'characters' if isinstance(data, str) else 'bytes'}; split it")
    kind = module_format(data)
    if kind == "gzip":
        data = gunzip(bytes(data))
        kind = module_format(data)
        if kind == "gzip":
            raise InvalidValueError("parse_module requires one layer of gzip, got a gzip stream inside another")
    if kind == "proto":
        from .hlo.proto import parse_hlo_proto

        return parse_hlo_proto(bytes(data))
    text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    if kind == "stablehlo":
        return parse_stablehlo(text)
    return parse_hlo_module(text)
