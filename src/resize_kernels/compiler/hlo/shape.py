"""HLO shapes: arrays (element type, dims, optional layout) and tuples of shapes."""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ...errors import InvalidValueError

# Element type -> (kind, numpy dtype or None). The kind drives literal parsing;
# ml_dtypes supplies the narrow floats (looked up by name so that an older
# ml_dtypes simply leaves the newest types without a numpy dtype).
ELEMENT_TYPES: dict[str, tuple[str, object]] = {
    "pred": ("pred", np.bool_),
    **{f"s{bits}": ("int", getattr(ml_dtypes, f"int{bits}", None) if bits < 8 else np.dtype(f"int{bits}"))
       for bits in (2, 4, 8, 16, 32, 64)},
    **{f"u{bits}": ("uint", getattr(ml_dtypes, f"uint{bits}", None) if bits < 8 else np.dtype(f"uint{bits}"))
       for bits in (2, 4, 8, 16, 32, 64)},
    "f16": ("float", np.float16),
    "bf16": ("float", ml_dtypes.bfloat16),
    "f32": ("float", np.float32),
    "f64": ("float", np.float64),
    **{xla: ("float", getattr(ml_dtypes, name, None)) for xla, name in {
        "f8e5m2": "float8_e5m2", "f8e4m3fn": "float8_e4m3fn", "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
        "f8e5m2fnuz": "float8_e5m2fnuz", "f8e4m3fnuz": "float8_e4m3fnuz", "f8e4m3": "float8_e4m3",
        "f8e3m4": "float8_e3m4", "f4e2m1fn": "float4_e2m1fn", "f8e8m0fnu": "float8_e8m0fnu",
    }.items()},
    "c64": ("complex", np.complex64),
    "c128": ("complex", np.complex128),
    "token": ("token", None),
}


#: The most dimensions a shape may have: TensorFlow's (TensorShape::MaxDimensions()), far above what any model's
#: HLO uses, so that a shape of millions of dimensions is refused as it is read.
MAX_RANK = 254


@dataclass(frozen=True)
class Shape:
    """An array shape such as ``f32[1,2]{1,0}``.

    `layout` is the minor-to-major dimension order (None when the text gives
    none); `layout_suffix` keeps whatever follows ':' inside the layout braces
    (tiling, memory space, e.g. ``T(8,128)``) verbatim, so it prints back.
    A layout is physical order only: code working on numpy arrays ignores it.
    """

    element_type: str
    dims: tuple[int, ...]
    layout: tuple[int, ...] | None = None
    layout_suffix: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "dims", tuple(self.dims))
        if len(self.dims) > MAX_RANK:
            raise InvalidValueError(f"a shape takes at most {MAX_RANK} dimensions, got {len(self.dims):,}")
        if self.layout is not None:
            object.__setattr__(self, "layout", tuple(self.layout))
        if self.element_type not in ELEMENT_TYPES:
            raise InvalidValueError(f"unknown element type {self.element_type!r}; known: {', '.join(ELEMENT_TYPES)}")
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in self.dims):
            raise InvalidValueError(f"dimension sizes must be non-negative integers, got {self.dims}")
        if self.layout is not None and sorted(self.layout) != list(range(len(self.dims))):
            raise InvalidValueError(f"layout {self.layout} is not a permutation of the {len(self.dims)} dimensions")

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def kind(self) -> str:
        """'pred', 'int', 'uint', 'float', 'complex' or 'token'."""
        return ELEMENT_TYPES[self.element_type][0]

    @property
    def numpy_dtype(self) -> np.dtype:
        """The numpy dtype of the elements (bf16 -> ml_dtypes.bfloat16, pred -> bool)."""
        dtype = ELEMENT_TYPES[self.element_type][1]
        if dtype is None:
            raise InvalidValueError(f"element type {self.element_type} has no numpy dtype")
        return np.dtype(dtype)

    def __str__(self) -> str:
        text = f"{self.element_type}[{','.join(map(str, self.dims))}]"
        if self.layout is None:
            return text
        suffix = f":{self.layout_suffix}" if self.layout_suffix else ""
        return f"{text}{{{','.join(map(str, self.layout))}{suffix}}}"


@dataclass(frozen=True)
class TupleShape:
    """A tuple shape such as ``(f32[2], s32[])``; elements may themselves be tuples."""

    elements: tuple[Shape | TupleShape, ...]

    def __post_init__(self):
        object.__setattr__(self, "elements", tuple(self.elements))
        if not all(isinstance(e, (Shape, TupleShape)) for e in self.elements):
            raise InvalidValueError(f"tuple elements must be shapes, got {self.elements!r}")

    def __str__(self) -> str:
        return f"({', '.join(map(str, self.elements))})"


def element_type(dtype) -> str:
    """The HLO element type of a numpy dtype (``float32`` -> ``f32``, ml_dtypes' ``bfloat16`` -> ``bf16``)."""
    dtype = np.dtype(dtype)
    for name, (_, candidate) in ELEMENT_TYPES.items():
        if candidate is not None and np.dtype(candidate) == dtype:
            return name
    raise InvalidValueError(f"numpy dtype {dtype} has no HLO element type")


def leaf_shapes(shape: Shape | TupleShape) -> list[Shape]:
    """The array shapes of `shape` in order, tuples flattened."""
    if isinstance(shape, Shape):
        return [shape]
    return [leaf for element in shape.elements for leaf in leaf_shapes(element)]


def compatible(a: Shape | TupleShape, b: Shape | TupleShape) -> bool:
    """Same element types and dims throughout, layouts ignored."""
    if isinstance(a, Shape) and isinstance(b, Shape):
        return (a.element_type, a.dims) == (b.element_type, b.dims)
    if isinstance(a, TupleShape) and isinstance(b, TupleShape):
        return len(a.elements) == len(b.elements) and all(map(compatible, a.elements, b.elements))
    return False
