"""What form a module's data is in, told by content: module_format, and gunzip for the compressed form.

neuronx-cc receives a serialized HloModuleProto (torch-neuronx and the Neuron
compile cache keep graphs as ``.pb`` files, sometimes gzip-compressed); XLA and
torch_xla dump HLO text; JAX prints StableHLO (MLIR) by default. The form is
told by content, never by a file name: gzip's magic bytes; text that is UTF-8
without control characters (HLO text unless its first word is MLIR's:
``module``, ``func.func``, ``#loc``...); anything else is a proto.
``compiler.frontend.parse_module`` parses each form into the one HloModule the
text parser builds, so everything after parsing is shared.
"""

from __future__ import annotations

import re
import zlib

from ...errors import InvalidValueError

__all__ = ["MAX_MODULE_BYTES", "gunzip", "module_format"]

#: The largest module frontend.parse_module takes, compressed or not (256 MiB): dumps are far smaller.
MAX_MODULE_BYTES = 256 << 20
GZIP_MAGIC = b"\x1f\x8b"
#: What MLIR text may start with (after blanks and // comments): StableHLO as JAX and torch_xla print it.
_MLIR_START = re.compile(r"module\b|builtin\.module\b|func\.func\b|#loc|#[A-Za-z_][\w$.]* = |\"builtin\.module\"")
_TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_NOT_BLANK = re.compile(r"\S")


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
    return "stablehlo" if _MLIR_START.match(data, _first_word(data)) else "hlo"


def _first_word(text: str) -> int:
    """Where the text's first word starts, past blanks and // comments: one linear scan, no backtracking (a
    repeated regex group over 30 M blanks took gigabytes)."""
    at = 0
    while True:
        found = _NOT_BLANK.search(text, at)
        if found is None:
            return len(text)
        at = found.start()
        if not text.startswith("//", at):
            return at
        at = text.find("\n", at)
        if at < 0:
            return len(text)


def gunzip(data: bytes) -> bytes:
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
