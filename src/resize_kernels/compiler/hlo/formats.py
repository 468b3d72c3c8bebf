"""parse_module: whatever form the compiler is handed, the same HloModule.

neuronx-cc receives a serialized HloModuleProto (torch-neuronx and the Neuron
compile cache keep graphs as ``.pb`` files, sometimes gzip-compressed); XLA and
torch_xla dump HLO text; JAX prints StableHLO (MLIR) by default. The form is
told by content, never by a file name: gzip's magic bytes; text that is UTF-8
without control characters (HLO text unless its first word is MLIR's:
``module``, ``func.func``, ``#loc``...); anything else is a proto. Every form
parses into the one HloModule the text parser builds, so everything after
parsing is shared.
"""

from __future__ import annotations

import re
import zlib

from ...errors import InvalidTypeError, InvalidValueError
from .ir import HloModule

__all__ = ["MAX_MODULE_BYTES", "module_format", "parse_module"]

#: The largest module parse_module takes, compressed or not (256 MiB): dumps are far smaller.
MAX_MODULE_BYTES = 256 << 20
GZIP_MAGIC = b"\x1f\x8b"
#: What MLIR text may start with (after blanks and // comments): StableHLO as JAX and torch_xla print it.
_MLIR_START = re.compile(r"(?:\s|//[^\n]*\n)*(?:module\b|builtin\.module\b|func\.func\b|#loc|#[A-Za-z_][\w$.]* = |\"builtin\.module\")")
_TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def module_format(data: str | bytes) -> str:
    """'hlo', 'stablehlo', 'proto' or 'gzip': the form of ``data``, told by content."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
        if data.startswith(GZIP_MAGIC):
            return "gzip"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return "proto"
        if _TEXT_CONTROL.search(text):
            return "proto"
        data = text
    return "stablehlo" if _MLIR_START.match(data) else "hlo"


def parse_module(data: str | bytes) -> HloModule:
    """An HloModule from HLO text, StableHLO text, or the bytes of a serialized HloModuleProto (also gzipped).

    Errors are ValueErrors saying what is wrong and where: HloParseError (line
    and column) for text, ProtoDecodeError (the field or instruction) for protos.
    """
    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        raise InvalidTypeError(f"parse_module requires HLO text, StableHLO text or the bytes of a serialized "
                               f"HloModuleProto, got {type(data).__name__}")
    kind = module_format(data)
    if kind == "gzip":
        data = _gunzip(bytes(data))
        kind = module_format(data)
        if kind == "gzip":
            raise InvalidValueError("parse_module requires one layer of gzip, got a gzip stream inside another")
    if kind == "proto":
        from .proto import parse_hlo_proto

        return parse_hlo_proto(bytes(data))
    text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    if kind == "stablehlo":
        from .stablehlo import parse_stablehlo

        return parse_stablehlo(text)
    from .parser import parse_hlo_module

    return parse_hlo_module(text)


def _gunzip(data: bytes) -> bytes:
    """``data`` decompressed, refusing output past MAX_MODULE_BYTES (a gzip bomb) and cut or corrupt streams."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, MAX_MODULE_BYTES + 1)
    except zlib.error as e:
        raise InvalidValueError(f"parse_module requires a valid gzip stream, got a corrupt one: {e}") from None
    if len(out) > MAX_MODULE_BYTES:
        raise InvalidValueError(f"parse_module requires a module of at most {MAX_MODULE_BYTES >> 20} MiB, got a gzip "
                                f"stream that inflates to more")
    if not inflater.eof:
        raise InvalidValueError(f"parse_module requires a whole gzip stream, got one cut short after "
                                f"{len(data):,} bytes")
    return out
