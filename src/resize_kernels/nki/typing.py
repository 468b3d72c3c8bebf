"""nki.typing (``neuronxcc.nki.typing``): the annotations kernels put on their tensor parameters.

``def kernel(a: nt.tensor, b: nt.mutable_tensor[(128, 512), nl.float32])``: annotations only; the tracer
does not read them. ``isinstance(x, nt.tensor)`` is true of a kernel's tensor handles.
"""

from __future__ import annotations

from .tensor import NkiTensor


class _Annotation:
    """A subscripted annotation such as ``tensor[(128, 512), nl.float32]``: it records what it was given."""

    def __init__(self, base: "_TensorMeta", args: tuple):
        self.base, self.args = base, args

    def __repr__(self) -> str:
        return f"{self.base.__name__}[{', '.join(map(repr, self.args))}]"

    def __instancecheck__(self, x) -> bool:
        return isinstance(x, NkiTensor)


class _TensorMeta(type):
    def __instancecheck__(cls, x) -> bool:
        return isinstance(x, NkiTensor)

    def __getitem__(cls, args):
        return _Annotation(cls, args if isinstance(args, tuple) else (args,))


class tensor(metaclass=_TensorMeta):
    """A tensor parameter (``a: nt.tensor`` or ``a: nt.tensor[shape, dtype]``)."""


class mutable_tensor(tensor):
    """A tensor parameter the kernel writes (``out: nt.mutable_tensor``)."""


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"nki.typing.{self.name}"


#: Mutability markers, for ``nt.tensor[shape, dtype, nt.mutable]``-style annotations.
mutable, immutable = _Marker("mutable"), _Marker("immutable")

__all__ = ["tensor", "mutable_tensor", "mutable", "immutable"]
