"""NKI source from a traced Program: one self-contained file a user takes to a Trainium instance (NKI 0.3.0).

The file is the Program written back as the NKI calls that trace to it: each SBUF tile an ``nl.ndarray`` at the
address the project's allocator gave it, each instruction one ``nisa`` call on ``.ap(pattern=, offset=)`` access
patterns, so that tracing the file gives the same Program (instructions, addresses, modelled time). It imports
``nki``, ``nki.isa``, ``nki.language`` and numpy only, and uses only the names in ``DOCUMENTED``, each with its
NKI 0.3.0 documentation page; its ``__main__`` runs the kernel with ``nki.simulate`` on random bits and checks
every output bit against the index map, given as literals.
"""

from __future__ import annotations

import dataclasses
import re
from importlib.metadata import PackageNotFoundError, version

import numpy as np

from . import api, semantics
from .errors import InvalidValueError
from .machine import dtypes
from .machine.access import AccessPattern
from .machine.cost import program_cost, target_params
from .machine.isa import (Activation, CopyPredicated, DmaCopy, DmaCopyAdd, Instruction, Iota, Memset, NcNGather, Program,
                          TensorCopy, TensorScalar, TensorTensor)
from .machine.memory import SbufTile
from .nki import language
from .nki.allocation import COMPILER_RESERVED_SBUF_BYTES

API_DOCS = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/"
#: Every nki / nisa / nl name an exported file may use, with its NKI 0.3.0 documentation page.
DOCUMENTED = {
    "nki.jit": API_DOCS + "nki.jit.html",
    "nki.simulate": API_DOCS + "nki.simulate.html",
    "nl.ndarray": API_DOCS + "nki.language.ndarray.html",
    "nl.sbuf": API_DOCS + "nki.language.sbuf.html",
    "nl.shared_hbm": API_DOCS + "nki.language.shared_hbm.html",
    "nl.psum": API_DOCS + "nki.language.psum.html",
    "nl.hbm": API_DOCS + "nki.language.hbm.html",
    "nl.copy": API_DOCS + "nki.language.copy.html",
    "nisa.dma_copy": API_DOCS + "nki.isa.dma_copy.html",
    "nisa.tensor_copy": API_DOCS + "nki.isa.tensor_copy.html",
    "nisa.activation": API_DOCS + "nki.isa.activation.html",
    "nisa.iota": API_DOCS + "nki.isa.iota.html",
    "nisa.tensor_scalar": API_DOCS + "nki.isa.tensor_scalar.html",
    "nisa.tensor_tensor": API_DOCS + "nki.isa.tensor_tensor.html",
    "nisa.memset": API_DOCS + "nki.isa.memset.html",
    "nisa.nc_n_gather": API_DOCS + "nki.isa.nc_n_gather.html",
    "nisa.tensor_copy_predicated": API_DOCS + "nki.isa.tensor_copy_predicated.html",
    "nisa.vector_engine": API_DOCS + "nki.isa.vector_engine.html",
    "nisa.scalar_engine": API_DOCS + "nki.isa.scalar_engine.html",
    "nisa.gpsimd_engine": API_DOCS + "nki.isa.gpsimd_engine.html",
    **{f"nl.{name}": API_DOCS + f"nki.language.{name}.html"  # the ALU ops below (nki.api.shared's operator table:
       # divide and mod are not in it, and 0.3.0's release notes say they do not run on hardware)
       for name in ("add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal",
                    "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_xor")},
    **{f"nl.{name}": API_DOCS + f"nki.language.{name}.html"
       for name in ("float32", "bfloat16", "float16", "int32", "uint32", "int16", "uint16", "int8", "uint8",
                    "float8_e4m3", "float8_e5m2", "float8_e4m3fn")},
    "NkiTensor.ap": API_DOCS + "nki.language.NkiTensor.html",
    "NkiTensor.reshape": API_DOCS + "nki.language.NkiTensor.html",
}
#: ALU op names of the model -> the documented nl function that traces to it (``max``/``min``: reductions' names).
ALU = {**{getattr(language, n[3:]).alu_name: n for n in DOCUMENTED
          if n.startswith("nl.") and hasattr(getattr(language, n[3:], None), "alu_name")},
       "max": "nl.maximum", "min": "nl.minimum"}


class ExportError(InvalidValueError):
    """A Program the exporter cannot write as documented NKI 0.3.0 (an instruction or memory it does not emit)."""


def export_nki(in_shape, out_shape, dtype="float32", kernel: str | None = None, target: str = "trn2",
               convention: semantics.IndexConvention | None = None, grad: bool = False) -> str:
    """The NKI 0.3.0 source of the kernel for the NHWC resize ``in_shape`` -> ``out_shape`` (N, H, W, C or the
    output's (H, W)): a self-contained Python file (str). ``kernel``: as ``rk.resize_nearest`` (None: auto's
    pick); ``target``: the target whose modelled time the docstring gives; ``grad``: the gradient kernel of that
    resize (dy of the output's shape -> dx of the input's)."""
    if len(in_shape) != 4 or len(out_shape) not in (2, 4):
        raise InvalidValueError(f"export_nki requires an NHWC in_shape (N, H, W, C) and out_shape (N, H, W, C) or "
                                f"(H, W), got {tuple(in_shape)} and {tuple(out_shape)}; pass them in that layout")
    in_shape = tuple(int(s) for s in in_shape)
    out_hw = tuple(int(s) for s in (out_shape[1:3] if len(out_shape) == 4 else out_shape))
    n, c = in_shape[0], in_shape[3]
    conv = convention or semantics.COMPILER
    rows = semantics.axis_index(in_shape[1], out_hw[0], conv, 0)
    cols = semantics.axis_index(in_shape[2], out_hw[1], conv, 1)
    if grad:
        program = _grad_program((n, *out_hw, c), in_shape[1:3], dtype, kernel, convention)
        what = (f"The gradient of NHWC {'x'.join(map(str, in_shape))} -> {out_hw[0]}x{out_hw[1]}:\n"
                f"dx[n, ROWS[h], COLS[w], c] += dy[n, h, w, c], in float32 from +0.0 in row-major (h, w) order")
        report, roofline = program_cost(program, target, events=False), None
    else:
        program = api.trace_resize(in_shape, out_hw, dtype, kernel=kernel, convention=convention)
        what = (f"NHWC {'x'.join(map(str, in_shape))} -> {out_hw[0]}x{out_hw[1]}: out[n, h, w, c] = "
                f"x[n, ROWS[h], COLS[w], c]")
        report = api.cost(in_shape, (n, *out_hw, c), kernel=kernel, target=target, dtype=dtype,
                          convention=convention)  # the same (cached) Program's cost, with its roofline
        roofline = report.roofline_us
    chosen = "the gradient kernel export writes" if grad and kernel is None else _selection(program)
    about = (f"{what}, {np.dtype(dtypes.as_dtype(dtype))};\nROWS and COLS the "
             f"{'compiler asymmetric/floor' if conv.is_default else conv.describe()} map.\n"
             f"Kernel: {program.name} ({chosen}).\nModelled on {target} by "
             f"resize-kernels {_version()}'s cost model: {report.modelled_us:,.1f} us"
             + ("" if roofline is None else f", roofline {roofline:,.1f} us") + " (modelled, not measured).")
    return source(program, about, target, rows, cols, grad)


def _grad_program(dy_shape, in_hw, dtype, kernel, convention) -> Program:
    """The gradient Program to export: ``kernel``'s, or by default the first of rows and padded (the gradient
    kernels written in documented NKI 0.3.0; general's scatter-add DMAs are not) that takes the shape."""
    if kernel is not None:
        return api.trace_resize_grad(dy_shape, in_hw, dtype, kernel=kernel, convention=convention)
    try:
        return api.trace_resize_grad(dy_shape, in_hw, dtype, kernel="rows", convention=convention)
    except InvalidValueError:  # a map that steps back, or runs past a tile: padded takes any map
        return api.trace_resize_grad(dy_shape, in_hw, dtype, kernel="padded", convention=convention)


def _version() -> str:
    try:
        return version("resize-kernels")
    except PackageNotFoundError:  # run from a source tree without installing
        return "(source tree)"


def _selection(program: Program) -> str:
    selection = program.selection
    return "chosen by name" if selection is None else f"{selection.label}: {selection.rule}"


def source(program: Program, about: str, target: str, rows: np.ndarray, cols: np.ndarray, grad: bool = False) -> str:
    """The file for ``program`` (a forward kernel, or with ``grad`` a gradient one): its kernel, the maps as
    literals and the ``__main__`` check."""
    if len(program.inputs) != 1 or len(program.outputs) != 1:
        raise ExportError(f"export writes kernels of one input and one output; {program.name} has "
                          f"{len(program.inputs)} inputs and {len(program.outputs)} outputs")
    x, out = program.inputs[0], program.outputs[0]
    names = _Names()
    x_name, out_name = names.add(x), names.add(out)
    tables = [names.add(t) for t in program.constants]  # NKI 0.3.0 has no shared constants: they come as inputs
    scratch = [f"{names.add(t)} = nl.ndarray({tuple(t.shape)}, dtype={_dtype(t.dtype)}, buffer=nl.hbm, "
               f"name={t.name!r})" for t in program.internal]
    tiles = _tiles(program)
    limit = target_params(target).sbuf_partition_bytes - COMPILER_RESERVED_SBUF_BYTES  # NKI keeps the rest
    for tile in tiles:
        if tile.memory == "sbuf" and tile.address + tile.bytes_per_partition > limit:
            raise ExportError(f"{program.name}'s tile {tile.name} ends at byte {tile.address + tile.bytes_per_partition} "
                              f"of each partition, past the {limit} NKI leaves kernels on {target}; export a "
                              f"smaller shape or another kernel")
    body = [f"{out_name} = nl.ndarray({out.shape}, dtype={x_name}.dtype, buffer=nl.shared_hbm, "
            f"name={out.name!r})", *scratch]
    psum_base = program.sbuf_partition_bytes  # PSUM addresses follow SBUF's (machine/memory.py)
    body += [f"{names.add(t)} = nl.ndarray({tuple(t.shape)}, dtype={_dtype(t.dtype)}, buffer=nl.{t.memory}, name={_base(t.name)!r}, "
             f"address=(0, {t.address - (psum_base if t.memory == 'psum' else 0)}))" for t in tiles]
    body += [_call(inst, names) for inst in program.instructions]
    body.append(f"return {out_name}")
    dtype = np.dtype(x.dtype)
    values = "".join(f"    np.array({_literal(t.data.ravel())}, dtype=np.{np.dtype(t.dtype).name})"
                     f".reshape({tuple(t.shape)}),\n" for t in program.constants)
    return TEMPLATE.format(
        about=about.replace('"""', "'''"), kernel=program.name, x=", ".join([x_name, *tables]),
        body="\n    ".join(body), tables=values, tables_use=", *TABLES" if tables else "",
        in_shape=x.shape, out_shape=out.shape, dtype=dtype.name, rows=_literal(rows), cols=_literal(cols),
        reference=GRAD_REFERENCE if grad else REFERENCE,
        bits=f"uint{8 * dtype.itemsize}", documented="\n".join(f"#   {n}: {DOCUMENTED[n]}"
                                                                for n in sorted(used_names(body))))


def used_names(lines) -> set:
    """The nki / nisa / nl names (and ``.ap``) the kernel lines call, each a key of DOCUMENTED."""
    text = "\n".join(lines)
    found = set(re.findall(r"\b(?:nki|nisa|nl)\.[a-z_0-9]+", text))
    methods = {f"NkiTensor.{m}" for m in ("ap", "reshape") if f".{m}(" in text}
    return found | methods | {"nki.jit", "nki.simulate"}


class _Names:
    """Python identifiers for the Program's tensors, unique and stable."""

    def __init__(self):
        self.by_tensor, self.taken = {}, set()

    def add(self, tensor) -> str:
        """A new identifier for ``tensor``, from its name."""
        name = re.sub(r"\W", "_", tensor.name) or "t"
        candidate, n = name, 0
        while candidate in self.taken:
            n += 1
            candidate = f"{name}_{n}"
        self.taken.add(candidate)
        self.by_tensor[id(tensor)] = candidate
        return candidate

    def __getitem__(self, tensor) -> str:
        return self.by_tensor[id(tensor)]


def _base(name: str) -> str:
    """A tracer name without its ``.N`` suffix (the tracer adds it back)."""
    return re.sub(r"\.\d+$", "", name)


def _tiles(program: Program) -> list:
    """Every SBUF tile the instructions touch, in order of first use."""
    seen = {}
    for inst in program.instructions:
        for ap in _aps(inst):
            if isinstance(ap.tensor, SbufTile):
                seen.setdefault(id(ap.tensor), ap.tensor)
    return list(seen.values())


def _aps(inst: Instruction):
    for f in dataclasses.fields(inst):
        value = getattr(inst, f.name)
        if isinstance(value, AccessPattern):
            yield value
            if value.vector_offset is not None:
                yield value.vector_offset


def _ap(ap: AccessPattern, names: _Names) -> str:
    args = [f"pattern={[list(p) for p in ap.pattern]}", f"offset={ap.offset}"]
    if ap.vector_offset is not None:
        args.append(f"vector_offset={_ap(ap.vector_offset, names)}")
    if ap.indirect_dim is not None:
        args.append(f"indirect_dim={ap.indirect_dim}")
    tensor, shape = ap.tensor, ap.tensor.shape
    view = names[tensor]
    if ap.vector_offset is not None and ap.row_size != int(np.prod(shape[1:])):  # vector_offset counts rows of
        # row_size elements: the gather's AP is on a view of that row size
        view += f".reshape(({int(np.prod(shape)) // ap.row_size}, {ap.row_size}))"
    return f"{view}.ap({', '.join(args)})"


def _number(x) -> str:
    x = float(x)
    return repr(x) if np.isfinite(x) else f"float({repr(x)!r})"


def _operand(x, names) -> str:
    return _ap(x, names) if isinstance(x, AccessPattern) else _number(x)


def _dtype(dtype) -> str:
    name = f"nl.{np.dtype(dtype).name}"
    if name not in DOCUMENTED:
        raise ExportError(f"export writes the dtypes NKI 0.3.0 documents; {np.dtype(dtype)} is not one of them")
    return name


def _alu(op: str) -> str:
    if op not in ALU:
        raise ExportError(f"export writes the ALU ops {', '.join(sorted(set(ALU.values())))}; got {op!r}, which NKI "
                          f"0.3.0 does not document as one: export another kernel (kernel=...)")
    return ALU[op]


def _call(inst: Instruction, names: _Names) -> str:
    """One instruction as the nisa call that traces to it."""
    a = lambda ap: _ap(ap, names)  # noqa: E731 - the one conversion every branch uses
    if type(inst) is DmaCopy:
        return f"nisa.dma_copy(dst={a(inst.dst)}, src={a(inst.src)})"
    if type(inst) is TensorCopy:
        return f"nisa.tensor_copy(dst={a(inst.dst)}, src={a(inst.src)}, engine=nisa.{inst.engine}_engine)"
    if type(inst) is Activation and inst.reduce_res is None and f"nl.{inst.func}" in DOCUMENTED:
        scale = "" if inst.scale == 1.0 else f", scale={_operand(inst.scale, names)}"
        bias = "" if not isinstance(inst.bias, AccessPattern) and inst.bias == 0.0 else \
            f", bias={_operand(inst.bias, names)}"
        return f"nisa.activation(dst={a(inst.dst)}, op=nl.{inst.func}, data={a(inst.data)}{bias}{scale})"
    if type(inst) is Iota:
        return (f"nisa.iota(dst={a(inst.dst)}, pattern={[list(p) for p in inst.pattern]}, offset={inst.offset}, "
                f"channel_multiplier={inst.channel_multiplier})")
    if type(inst) is TensorScalar and inst.reduce_op is None:
        second = "" if inst.op1 is None else (f", op1={_alu(inst.op1)}, operand1={_operand(inst.operand1, names)}, "
                                              f"reverse1={inst.reverse1}")
        return (f"nisa.tensor_scalar(dst={a(inst.dst)}, data={a(inst.data)}, op0={_alu(inst.op0)}, "
                f"operand0={_operand(inst.operand0, names)}, reverse0={inst.reverse0}{second}, "
                f"engine=nisa.{inst.engine}_engine)")
    if type(inst) is TensorTensor:
        return f"nisa.tensor_tensor(dst={a(inst.dst)}, data1={a(inst.data1)}, data2={a(inst.data2)}, op={_alu(inst.op)})"
    if type(inst) is Memset:
        return f"nisa.memset(dst={a(inst.dst)}, value={_number(inst.value)}, engine=nisa.{inst.engine}_engine)"
    if type(inst) is NcNGather:
        return f"nisa.nc_n_gather(dst={a(inst.dst)}, data={a(inst.data)}, indices={a(inst.indices)})"
    if type(inst) is CopyPredicated:
        return (f"nisa.tensor_copy_predicated(dst={a(inst.dst)}, src={_operand(inst.src, names)}, "
                f"predicate={a(inst.predicate)}, reverse_pred={inst.reverse})")
    kind = "dma_copy with dst_rmw_op" if isinstance(inst, DmaCopyAdd) else inst.opcode
    raise ExportError(f"export does not write {kind} as documented NKI 0.3.0 yet ({inst.operands_text()}); "
                      f"export another kernel (kernel=...)")


def _literal(values: np.ndarray) -> str:
    return "[" + ", ".join(str(int(i)) for i in values) + "]"


def program_signature(program: Program) -> list:
    """The Program as data, names and source lines left out: two Programs with equal signatures run and cost the
    same."""
    def value(v):
        if isinstance(v, AccessPattern):
            rows = v.row_size if v.vector_offset is not None else None  # the only AP whose row size matters
            return ("ap", value(v.tensor), v.pattern, v.offset, value(v.vector_offset), v.indirect_dim, rows)
        if isinstance(v, SbufTile):
            return (v.memory, v.address, v.partitions, v.free_shape, np.dtype(v.dtype).str)
        if hasattr(v, "kind") and hasattr(v, "shape"):  # an HBM tensor; a constant is an input of the file
            return ("hbm", "input" if v.kind == "constant" else v.kind, tuple(v.shape), np.dtype(v.dtype).str)
        return v
    return [(type(i).__name__, tuple(value(getattr(i, f.name)) for f in dataclasses.fields(i) if f.name != "source"))
            for i in program.instructions]


TEMPLATE = '''"""{about}

Written by resize-kernels' exporter for NKI 0.3.0 (the nki package of Neuron SDK 2.29 and later).
``python THIS_FILE`` runs the kernel with nki.simulate on random bits and checks every output bit
against the map below. From your code: ``{kernel}(x{tables_use})``,
x an NHWC tensor of shape {in_shape} and dtype {dtype}.
"""
import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl

# The NKI names this file uses, each with its documentation page:
{documented}

IN_SHAPE = {in_shape}
OUT_SHAPE = {out_shape}
DTYPE = "{dtype}"
ROWS = {rows}
COLS = {cols}
#: The kernel's tables, passed after x (NKI 0.3.0 has no shared constants; from a framework, as device tensors).
TABLES = [
{tables}]


@nki.jit
def {kernel}({x}):
    {body}


{reference}


if __name__ == "__main__":
    if DTYPE == "bfloat16":
        import ml_dtypes
        dtype = np.dtype(ml_dtypes.bfloat16)
    else:
        dtype = np.dtype(DTYPE)
    bits = np.random.default_rng(0).integers(0, 2 ** (8 * dtype.itemsize), size=IN_SHAPE, dtype=np.{bits})
    x = bits.view(dtype)  # every bit pattern: NaN payloads, -0.0, subnormals
    out = nki.simulate({kernel})(x, *TABLES)
    with np.errstate(all="ignore"):  # inf - inf is NaN, as the sum says
        want = reference(x)
    same = np.asarray(out).shape == want.shape and matches(np.asarray(out), want)
    print(f"{kernel}: {{'exact' if same else 'WRONG'}} ({{want.size}} elements, {{matches.__doc__}})")
    raise SystemExit(0 if same else 1)
'''
REFERENCE = '''def reference(x):
    """The resize by the index map: out[n, h, w, c] = x[n, ROWS[h], COLS[w], c]."""
    return x[:, ROWS][:, :, COLS]


def matches(got, want):
    """every bit"""
    return np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))'''
GRAD_REFERENCE = '''def reference(dy):
    """dx[n, ROWS[h], COLS[w], c] += dy[n, h, w, c]: in float32 from +0.0, in row-major (h, w) order, cast once."""
    dx = np.zeros(OUT_SHAPE, np.float32)
    dy32 = dy.astype(np.float32)
    for h, i in enumerate(ROWS):
        for w, j in enumerate(COLS):
            dx[:, i, j] += dy32[:, h, w]
    return dx.astype(dy.dtype)


def matches(got, want):
    """every bit; a NaN sum as any NaN: which payload a sum of several NaNs keeps is the adder's choice"""
    nan, size = np.isnan(want.astype(np.float32)), f"u{want.itemsize}"
    return (np.array_equal(nan, np.isnan(got.astype(np.float32)))
            and np.array_equal(got[~nan].view(size), want[~nan].view(size)))'''
