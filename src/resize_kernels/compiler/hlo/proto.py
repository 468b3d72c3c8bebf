"""parse_hlo_proto: the bytes of a serialized XLA HloModuleProto, as the HloModule the HLO text parser builds.

neuronx-cc is handed HloModuleProto bytes (torch-neuronx and the Neuron
compile cache keep ``.pb`` files); XLA's ``--xla_dump_hlo_as_proto`` writes an
HloProto, and replay files are HloSnapshots: each is accepted and its module
taken. protobuf decodes the bytes against the schema subset of
proto_schema.py; the messages then become the objects the text parser makes,
with the attributes it would store, so that printing either gives the same
text: ``dimensions`` and ``window`` as typed IntList and Window values,
strings (``custom_call_target``, ``backend_config``) as String, computations
by name, a parameter's number and a constant's Literal as payloads,
``entry_computation_layout`` from the host program shape. Annotations
(metadata, sharding, frontend attributes, stack frames) are left out, as
JAX's HLO text leaves them.

Whatever the bytes, the result is an HloModule or a ProtoDecodeError that
names the field or the instruction and says what to do: corrupt or cut-short
bytes (the byte where decoding breaks), a message of another type, ids that
point nowhere or forward, unknown element types, and any opcode or field the
reader does not turn into the text form (refused rather than dropped, so
nothing the module means is lost). Work is bounded: at most MAX_PROTO_BYTES,
MAX_INSTRUCTIONS, shapes of fewer than 2**63 elements nested at most
MAX_DEPTH deep.
"""

from __future__ import annotations

import math
import re
from typing import NoReturn

import numpy as np

from ...errors import InvalidTypeError, InvalidValueError
from .attributes import IntList, Literal, String, Window
from .cursor import MAX_DEPTH
from .ir import HloComputation, HloInstruction, HloModule
from .lexer import IDENTIFIER, printable
from .proto_schema import ENUMS, PRIMITIVE_TYPES, message_classes
from .shape import ELEMENT_TYPES, Shape, TupleShape, compatible

__all__ = ["MAX_INSTRUCTIONS", "MAX_PROTO_BYTES", "ProtoDecodeError", "parse_hlo_proto"]

#: The largest serialized module read (256 MiB, as parse_module's MAX_MODULE_BYTES): dumps are far smaller.
MAX_PROTO_BYTES = 256 << 20
#: The most instructions a module may have, all computations together.
MAX_INSTRUCTIONS = 10_000_000
_MAX_ELEMENTS = 2**63  # XLA counts elements in int64
_WIRE_DEPTH = 100  # protobuf's (upb's) nesting limit
_WALK_FIELDS = 1 << 20  # fields looked at, at most, to say where undecodable bytes break (about a second)
_TYPE_NAMES = {number: name for name, number in PRIMITIVE_TYPES.items()}
_ELEMENT_TYPES = {number: name.lower() for name, number in PRIMITIVE_TYPES.items() if name.lower() in ELEMENT_TYPES}
_COMBINE_DIMENSION = -(2**63)  # a tile dimension printed as '*'
_TEXT_START = re.compile(rb"[\t\n\r\x20-\x7e]{8}")  # a proto's bytes 1..8 hold a length and field tags: not these
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_PRODUCER = "(jax: .compiler_ir('hlo').as_serialized_hlo_module_proto())"
_REWRITE = f"write the file again from its producer {_PRODUCER}"
_AS_TEXT = ("save the module as HLO text instead (jax: .as_text(dialect='hlo'); XLA: --xla_dump_hlo_as_text), "
            "which the text parser reads whole")


class ProtoDecodeError(InvalidValueError):
    """Bytes that are not a serialized HloModuleProto the compiler can read; the message says which field or
    instruction, and what to do."""

    def __init__(self, message: str):
        super().__init__(printable(message))


def _fail(requirement: str, got: str, hint: str = _REWRITE) -> NoReturn:
    raise ProtoDecodeError(f"HloModuleProto requires {requirement}, got {got}; {hint}")


def parse_hlo_proto(data: bytes) -> HloModule:
    """The HloModule of a serialized HloModuleProto (or of the module inside an HloProto or HloSnapshot)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidTypeError(f"parse_hlo_proto takes the bytes of a serialized HloModuleProto, got "
                               f"{type(data).__name__}")
    data = bytes(data)
    if len(data) > MAX_PROTO_BYTES:
        _fail(f"at most {MAX_PROTO_BYTES >> 20} MiB of serialized module", f"{len(data):,} bytes",
              "split the module, or elide its large constants")
    try:
        from google.protobuf.message import DecodeError
    except ImportError:
        raise InvalidValueError("reading a serialized HloModuleProto requires the protobuf package: "
                                "pip install protobuf") from None
    classes = message_classes()
    try:
        proto = classes["HloModuleProto"].FromString(data)
    except DecodeError as error:
        proto, failure = None, error
    if proto is None or not proto.computations:
        for wrapper in ("HloProto", "HloSnapshot"):  # a module inside another message (field 1 all the way down)
            try:
                outer = classes[wrapper].FromString(data)
            except DecodeError:
                continue
            inner = outer.hlo.hlo_module if wrapper == "HloSnapshot" else outer.hlo_module
            if inner.computations:
                proto = inner
                break
    if proto is None:
        _fail(*_damage(data, classes["HloModuleProto"].DESCRIPTOR, failure))
    return _Reader(proto).module()


# ----- messages -> HloModule ------------------------------------------------------------------------

class _Reader:
    """One module's conversion: computations by id, then each computation's instructions in order."""

    def __init__(self, proto):
        self.proto = proto
        self.computation_names: dict[int, str] = {}
        self.shapes: dict[bytes, Shape | TupleShape] = {}  # by their serialized ShapeProto: each made once

    def module(self) -> HloModule:
        proto = self.proto
        if not proto.computations:
            _fail("at least one computation", "none (is this a serialized message of another type?)",
                  f"pass the bytes of a serialized xla.HloModuleProto {_PRODUCER}")
        count = sum(len(comp.instructions) for comp in proto.computations)
        if count > MAX_INSTRUCTIONS:
            _fail(f"at most {MAX_INSTRUCTIONS:,} instructions", f"{count:,}", "split the module")
        name = _identifier(proto.name, "a module name")
        names = set()
        for index, comp in enumerate(proto.computations):
            comp_name = _identifier(comp.name, f"the name of computation {index}")
            if comp.id in self.computation_names:
                _fail("a different id for each computation",
                      f"id {comp.id} for both {self.computation_names[comp.id]!r} and {comp_name!r}")
            if comp_name in names:
                _fail("a different name for each computation", f"two computations named {comp_name!r}")
            names.add(comp_name)
            self.computation_names[comp.id] = comp_name
        entry = self.entry()
        computations = [self.computation(comp, index == entry) for index, comp in enumerate(proto.computations)]
        attributes = {}
        if proto.schedule:
            attributes["is_scheduled"] = "true"
        if proto.input_output_alias.entries:
            attributes["input_output_alias"] = _aliases(proto.input_output_alias.entries)
        what, program = ("the host program shape", proto.host_program_shape) if proto.HasField(
            "host_program_shape") else ("the entry's program shape", proto.computations[entry].program_shape)
        if proto.HasField("host_program_shape") or proto.computations[entry].HasField("program_shape"):
            params = [str(self.shape(shape, f"parameter {i} of {what}")) for i, shape in enumerate(program.parameters)]
            attributes["entry_computation_layout"] = (
                f"{{({', '.join(params)})->{self.shape(program.result, f'the result of {what}')}}}")
        return _build(lambda: HloModule(name, computations, attributes), f"module {name!r}")

    def entry(self) -> int:
        """The index of the entry computation: entry_computation_id's, else entry_computation_name's."""
        proto = self.proto
        for index, comp in enumerate(proto.computations):
            if comp.id == proto.entry_computation_id:
                return index
        for index, comp in enumerate(proto.computations):
            if proto.entry_computation_name and comp.name == proto.entry_computation_name:
                return index
        known = ", ".join(f"{name!r} (id {id_})" for id_, name in list(self.computation_names.items())[:8]) + (
            ", ..." if len(self.computation_names) > 8 else "")
        _fail(f"entry_computation_id to be the id of one of its computations ({known})",
              f"{proto.entry_computation_id} (entry_computation_name {proto.entry_computation_name!r})")

    def computation(self, proto, is_entry: bool) -> HloComputation:
        name = self.computation_names[proto.id]
        where = f"computation {name!r}"
        if not proto.instructions:
            _fail(f"at least one instruction in {where}", "none")
        positions = {}  # instruction id -> its index, to tell an operand defined later from one that is missing
        for index, inst in enumerate(proto.instructions):
            if inst.id in positions:
                _fail(f"a different id for each instruction of {where}",
                      f"id {inst.id} for {proto.instructions[positions[inst.id]].name!r} and {inst.name!r}")
            positions[inst.id] = index
        scope: dict[int, HloInstruction] = {}
        names, numbers = set(), {}
        for index, inst in enumerate(proto.instructions):
            inst_name = _identifier(inst.name, f"the name of instruction {index} of {where}")
            if inst_name in names:
                _fail(f"a different name for each instruction of {where}", f"two instructions named {inst_name!r}")
            names.add(inst_name)
            made = _Instruction(self, inst, f"instruction {inst_name!r} of {where}", scope, positions,
                                proto.instructions).make()
            if made.opcode == "parameter":
                if made.payload in numbers:
                    _fail(f"a different parameter number for each parameter of {where}",
                          f"parameter({made.payload}) for both {numbers[made.payload]!r} and {inst_name!r}")
                numbers[made.payload] = inst_name
            scope[inst.id] = made
        if any(number >= len(numbers) for number in numbers):
            _fail(f"parameter numbers 0..{len(numbers) - 1} in {where}, one per parameter",
                  f"parameter({max(numbers)})")
        if proto.root_id not in scope:
            _fail(f"root_id to be the id of an instruction of {where}", f"{proto.root_id}")
        attributes = {} if proto.execution_thread in ("", "main") else {
            "execution_thread": String(proto.execution_thread)}
        return _build(lambda: HloComputation(name, scope.values(), is_entry=is_entry, root=scope[proto.root_id],
                                             attributes=attributes), where)

    def callee(self, id_: int, where: str) -> str:
        if id_ not in self.computation_names:
            _fail(f"called computation ids of computations in the module, in {where}", f"id {id_}, which none has")
        return self.computation_names[id_]

    def shape(self, proto, what: str) -> Shape | TupleShape:
        """A ShapeProto as a Shape (layout and its tiling or memory space included) or a TupleShape."""
        key = proto.SerializeToString()
        made = self.shapes.get(key)
        if made is None:
            made = self.shapes[key] = self.new_shape(proto, what)
        return made

    def new_shape(self, proto, what: str, depth: int = 0) -> Shape | TupleShape:
        element = proto.element_type
        if element == PRIMITIVE_TYPES["TUPLE"]:
            if depth >= MAX_DEPTH:
                _fail(f"tuple shapes nested at most {MAX_DEPTH} deep in {what}", "deeper nesting")
            if proto.dimensions:
                _fail(f"a tuple shape without dimensions in {what}", f"dimensions {list(proto.dimensions)}")
            return TupleShape(tuple(self.new_shape(e, what, depth + 1) for e in proto.tuple_shapes))
        if element not in _ELEMENT_TYPES:
            known = ", ".join(sorted({name.upper() for name in _ELEMENT_TYPES.values()}))
            _fail(f"an element type the compiler knows ({known}) in {what}",
                  f"{_TYPE_NAMES.get(element, 'the unknown value')} ({element})",
                  "convert to a known element type before saving the module")
        dims = tuple(proto.dimensions)
        if proto.tuple_shapes:
            _fail(f"tuple elements only in a tuple shape, in {what}", "an array shape with tuple elements")
        if any(proto.is_dynamic_dimension):
            _fail(f"static dimensions in {what}", "dynamic ones (is_dynamic_dimension)",
                  "give the module static shapes (pad to the bound)")
        if any(d < 0 for d in dims) or math.prod(dims) >= _MAX_ELEMENTS:
            _fail(f"dimension sizes of at least 0 and fewer than 2**63 elements in {what}", f"dimensions {list(dims)}")
        name = _ELEMENT_TYPES[element]
        if name == "token" and dims:
            _fail(f"a token shape without dimensions in {what}", f"dimensions {list(dims)}")
        layout, suffix = self.layout(proto.layout, len(dims), what) if proto.HasField("layout") else (None, None)
        return Shape(name, dims, layout, suffix)

    def layout(self, proto, rank: int, what: str) -> tuple[tuple[int, ...] | None, str | None]:
        """minor_to_major and the text XLA prints after ':' (tiles, tail padding, element size, memory space)."""
        _check_fields(proto, {"minor_to_major", "tiles", "tail_padding_alignment_in_elements", "element_size_in_bits",
                              "memory_space"}, f"the layout of {what}", "dense layouts (sparse ones are not supported)")
        minor_to_major = tuple(proto.minor_to_major)
        if sorted(minor_to_major) != list(range(rank)):
            _fail(f"a layout listing each of the {rank} dimensions once in {what}",
                  f"minor_to_major {list(minor_to_major)}")
        suffix = ""
        for tile in proto.tiles:
            if not tile.dimensions or not all(d > 0 or d == _COMBINE_DIMENSION for d in tile.dimensions):
                _fail(f"tiles of positive sizes in the layout of {what}", f"a tile {list(tile.dimensions)}")
            suffix += ("T" if not suffix else "") + "(" + ",".join(
                "*" if d == _COMBINE_DIMENSION else str(d) for d in tile.dimensions) + ")"
        for letter, value in (("L", proto.tail_padding_alignment_in_elements), ("E", proto.element_size_in_bits),
                              ("S", proto.memory_space)):
            if value < 0:
                _fail(f"non-negative layout fields in {what}", f"{letter}({value})")
            if value > (1 if letter == "L" else 0):
                suffix += f"{letter}({value})"
        if rank == 0 and not suffix:
            return None, None  # XLA prints a scalar without its (empty) layout
        return minor_to_major, suffix or None

    def literal(self, proto, shape: Shape | TupleShape, what: str):
        """A LiteralProto's values as a numpy array of `shape` (a tuple of arrays for a tuple shape)."""
        if proto.HasField("shape"):
            declared = self.shape(proto.shape, f"the literal of {what}")
            if not compatible(declared, shape):
                _fail(f"a literal of the instruction's shape in {what}", f"a literal of {declared} for {shape}")
            layouts = declared
        else:
            layouts = shape
        return _literal_values(proto, shape, layouts, what)


class _Instruction:
    """One HloInstructionProto: its operands, attributes (in the order XLA prints them) and payload."""

    def __init__(self, reader: _Reader, proto, where: str, scope: dict, positions: dict, siblings):
        self.reader, self.proto, self.where = reader, proto, where
        self.scope, self.positions, self.siblings = scope, positions, siblings
        self.read = {"name", "opcode", "shape", "id", "operand_ids", "control_predecessor_ids", "backend_config",
                     *_ANNOTATIONS}

    def make(self) -> HloInstruction:
        proto, where = self.proto, self.where
        opcode = proto.opcode
        if opcode not in _OPCODES:
            _fail(f"opcodes the proto reader supports, in {where}", f"{opcode!r}",
                  "keep such instructions out of the module given to the compiler, or " + _AS_TEXT)
        self.shape = self.reader.shape(proto.shape, f"the shape of {where}")
        self.operands = [self.instruction(id_, "operand") for id_ in proto.operand_ids]
        self.attributes: dict = {}
        payload = _OPCODES[opcode](self)
        self.calls(opcode)
        if proto.control_predecessor_ids:
            names = [self.instruction(id_, "control predecessor").name for id_ in proto.control_predecessor_ids]
            self.attributes["control-predecessors"] = "{" + ", ".join(names) + "}"
        if proto.backend_config:
            self.attributes["backend_config"] = self.backend_config()
        self.check_read()
        return _build(lambda: HloInstruction(proto.name, opcode, self.shape, self.operands, self.attributes,
                                             payload=payload), where)

    def instruction(self, id_: int, role: str) -> HloInstruction:
        """The instruction with id `id_`, which must come before this one in its computation."""
        if id_ in self.scope:
            return self.scope[id_]
        if id_ in self.positions:
            later = self.siblings[self.positions[id_]].name
            _fail(f"each instruction after its {role}s", f"{self.where} before its {role} {later!r} (id {id_})",
                  "list instructions in dependency order, as XLA writes them; " + _REWRITE)
        _fail(f"{role} ids of instructions in the same computation, in {self.where}",
              f"{role} id {id_}, which no instruction there has")

    def use(self, *fields: str) -> None:
        self.read.update(fields)

    def check_read(self) -> None:
        """Refuse any field set that the text form would not carry: nothing the module means is dropped."""
        for field, value in self.proto.ListFields():
            if field.name in self.read or _DEFAULTS.get(field.name, lambda v: False)(value):
                continue
            _fail(f"only fields the proto reader turns into HLO text, in {self.where} ({self.proto.opcode})",
                  f"{field.name} set", "dropping it could change what the module computes: " + _AS_TEXT)

    # ----- attributes -------------------------------------------------------------------------------

    def calls(self, opcode: str) -> None:
        """The called computations, by the names XLA prints them under."""
        ids = list(self.proto.called_computation_ids)
        if opcode not in _CALLS:
            return  # any called computations are refused by check_read
        self.use("called_computation_ids")
        names = [self.reader.callee(id_, self.where) for id_ in ids]
        if opcode == "custom-call":
            if names:
                self.attributes["called_computations"] = "{" + ", ".join(names) + "}"
            return
        if opcode == "conditional":
            if not names:
                _fail(f"branch computations in {self.where}", "none")
            pred = self.operands and isinstance(self.operands[0].shape, Shape) and (
                self.operands[0].shape.element_type == "pred")
            if pred and len(names) == 2:
                self.attributes.update(true_computation=names[0], false_computation=names[1])
            else:
                self.attributes["branch_computations"] = "{" + ", ".join(names) + "}"
            return
        keys = _CALLS.get(opcode, ())
        if len(names) != len(keys):
            _fail(f"{len(keys)} called computation(s) for {opcode}, in {self.where}", f"{len(names)}")
        order = ("condition", "body") if opcode == "while" else keys  # XLA keeps body first, prints condition first
        by_key = dict(zip(keys, names))
        self.attributes.update((key, by_key[key]) for key in order)

    def backend_config(self):
        raw = self.proto.backend_config
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            _fail(f"a backend_config of UTF-8 text in {self.where}", f"{len(raw)} bytes that are not UTF-8")
        if text.startswith("{") and text.endswith("}"):
            return text  # JSON, printed as it is (the backend_config accessor returns it so)
        return String(text)

    def dimensions(self) -> None:
        self.use("dimensions")
        self.attributes["dimensions"] = IntList(self.proto.dimensions)

    def window(self) -> None:
        self.use("window")
        dims = self.proto.window.dimensions
        if not dims:
            _fail(f"a window with at least one dimension in {self.where}", "none")
        fields = {"size": [d.size for d in dims], "stride": [d.stride for d in dims],
                  "lhs_dilate": [d.base_dilation for d in dims], "rhs_dilate": [d.window_dilation for d in dims]}
        for key, values in fields.items():
            if min(values) < (0 if key == "size" else 1):
                _fail(f"a window of sizes of at least 0, strides and dilations of at least 1 in {self.where}",
                      f"{key}={'x'.join(map(str, values))}")
        self.attributes["window"] = Window(**fields, pad=[(d.padding_low, d.padding_high) for d in dims],
                                           rhs_reversal=[d.window_reversal for d in dims])


def _parameter(inst: _Instruction) -> int:
    inst.use("parameter_number")
    number = inst.proto.parameter_number
    if number < 0:
        _fail(f"a parameter number of at least 0 in {inst.where}", f"{number}")
    return number


def _constant(inst: _Instruction) -> Literal:
    inst.use("literal")
    if not inst.proto.HasField("literal"):
        _fail(f"a literal in {inst.where}", "none")
    values = inst.reader.literal(inst.proto.literal, inst.shape, inst.where)
    return _build(lambda: Literal(inst.shape, values), inst.where)


def _get_tuple_element(inst: _Instruction) -> None:
    inst.use("tuple_index")
    if inst.proto.tuple_index < 0:
        _fail(f"a tuple index of at least 0 in {inst.where}", f"{inst.proto.tuple_index}")
    inst.attributes["index"] = inst.proto.tuple_index


def _iota(inst: _Instruction) -> None:
    inst.use("dimensions")
    if len(inst.proto.dimensions) != 1:
        _fail(f"one iota dimension in {inst.where}", f"dimensions {list(inst.proto.dimensions)}")
    inst.attributes["iota_dimension"] = inst.proto.dimensions[0]


def _sort(inst: _Instruction) -> None:
    inst.dimensions()
    inst.use("is_stable")
    if inst.proto.is_stable:
        inst.attributes["is_stable"] = "true"


def _slice(inst: _Instruction) -> None:
    inst.use("slice_dimensions")
    parts = []
    for d in inst.proto.slice_dimensions:
        if d.stride < 1:
            _fail(f"slice strides of at least 1 in {inst.where}", f"stride {d.stride}")
        parts.append(f"[{d.start}:{d.limit}]" if d.stride == 1 else f"[{d.start}:{d.limit}:{d.stride}]")
    inst.attributes["slice"] = "{" + ", ".join(parts) + "}"


def _pad(inst: _Instruction) -> None:
    inst.use("padding_config")
    dims = inst.proto.padding_config.dimensions
    if not dims:
        _fail(f"a padding config with one entry per dimension in {inst.where}", "none")
    interior = any(d.interior_padding for d in dims)
    inst.attributes["padding"] = "x".join(
        f"{d.edge_padding_low}_{d.edge_padding_high}" + (f"_{d.interior_padding}" if interior else "") for d in dims)


def _dynamic_slice(inst: _Instruction) -> None:
    inst.use("dynamic_slice_sizes")
    inst.attributes["dynamic_slice_sizes"] = IntList(inst.proto.dynamic_slice_sizes)


def _compare(inst: _Instruction) -> None:
    inst.use("comparison_direction", "comparison_type")
    direction, kind = inst.proto.comparison_direction, inst.proto.comparison_type
    if direction not in ("EQ", "NE", "GE", "GT", "LE", "LT"):
        _fail(f"a comparison direction (EQ, NE, GE, GT, LE or LT) in {inst.where}", repr(direction))
    inst.attributes["direction"] = direction
    if kind and kind not in ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"):
        _fail(f"a comparison type (FLOAT, TOTALORDER, SIGNED or UNSIGNED) in {inst.where}", repr(kind))
    operand = inst.operands[0].shape if inst.operands else None
    default = None if not isinstance(operand, Shape) else {
        "int": "SIGNED", "uint": "UNSIGNED", "pred": "UNSIGNED"}.get(operand.kind, "FLOAT")
    if kind and kind != default:
        inst.attributes["type"] = kind


def _reduce_precision(inst: _Instruction) -> None:
    inst.use("exponent_bits", "mantissa_bits")
    inst.attributes.update(exponent_bits=inst.proto.exponent_bits, mantissa_bits=inst.proto.mantissa_bits)


def _dot(inst: _Instruction) -> None:
    inst.use("dot_dimension_numbers", "precision_config")
    numbers = inst.proto.dot_dimension_numbers
    if numbers.lhs_batch_dimensions:
        inst.attributes["lhs_batch_dims"] = IntList(numbers.lhs_batch_dimensions)
    inst.attributes["lhs_contracting_dims"] = IntList(numbers.lhs_contracting_dimensions)
    if numbers.rhs_batch_dimensions:
        inst.attributes["rhs_batch_dims"] = IntList(numbers.rhs_batch_dimensions)
    inst.attributes["rhs_contracting_dims"] = IntList(numbers.rhs_contracting_dimensions)
    precision = inst.proto.precision_config
    if precision.algorithm:
        _fail(f"no dot algorithm in {inst.where}", f"algorithm {precision.algorithm}", _AS_TEXT)
    names = {0: "default", 1: "high", 2: "highest"}
    if any(p not in names for p in precision.operand_precision):
        _fail(f"operand precisions DEFAULT, HIGH or HIGHEST in {inst.where}", f"{list(precision.operand_precision)}")
    if any(precision.operand_precision):
        inst.attributes["operand_precision"] = "{" + ",".join(names[p] for p in precision.operand_precision) + "}"


def _custom_call(inst: _Instruction) -> None:
    proto = inst.proto
    inst.use("custom_call_target", "window", "feature_group_count", "batch_group_count", "constrain_layout",
             "operand_shapes_with_layout", "custom_call_has_side_effect", "custom_call_schedule",
             "custom_call_api_version")
    if proto.HasField("window"):
        inst.window()
    for key in ("feature_group_count", "batch_group_count"):
        value = getattr(proto, key)
        if value < 0:
            _fail(f"a {key} of at least 1 in {inst.where}", f"{value}")
        if value > 1:
            inst.attributes[key] = value
    inst.attributes["custom_call_target"] = String(proto.custom_call_target)
    if proto.constrain_layout:
        shapes = [inst.reader.shape(shape, f"operand shape {i} of {inst.where}")
                  for i, shape in enumerate(proto.operand_shapes_with_layout)]
        if len(shapes) != len(inst.operands):
            _fail(f"one operand shape with layout per operand in {inst.where}",
                  f"{len(shapes)} for {len(inst.operands)} operands")
        inst.attributes["operand_layout_constraints"] = "{" + ", ".join(map(str, shapes)) + "}"
    elif proto.operand_shapes_with_layout:
        _fail(f"operand shapes with layout only with constrain_layout, in {inst.where}", "them without it")
    if proto.custom_call_has_side_effect:
        inst.attributes["custom_call_has_side_effect"] = "true"
    schedules, versions = ENUMS["CustomCallSchedule"], ENUMS["CustomCallApiVersion"]
    schedule = next((name for name, n in schedules.items() if n == proto.custom_call_schedule), None)
    version = next((name for name, n in versions.items() if n == proto.custom_call_api_version), None)
    if schedule is None or version is None:
        _fail(f"a known custom_call_schedule and custom_call_api_version in {inst.where}",
              f"{proto.custom_call_schedule} and {proto.custom_call_api_version}")
    if schedule != "SCHEDULE_NONE":
        inst.attributes["schedule"] = schedule
    if version != "API_VERSION_ORIGINAL":
        inst.attributes["api_version"] = version


def _fusion(inst: _Instruction) -> None:
    inst.use("fusion_kind")
    kind = inst.proto.fusion_kind
    if not IDENTIFIER.fullmatch(kind):
        _fail(f"a fusion kind such as kLoop in {inst.where}", repr(kind))
    inst.attributes["kind"] = kind


_PLAIN = """abs add add-dependency after-all and atan2 bitcast bitcast-convert cbrt ceil clamp clz complex convert copy
cosine divide dynamic-update-slice erf exponential exponential-minus-one floor imag is-finite log log-plus-one logistic maximum minimum multiply negate
not optimization-barrier or partition-id popcnt power real remainder replica-id reshape round-nearest-afz
round-nearest-even rsqrt select shift-left shift-right-arithmetic shift-right-logical sign sine sqrt stochastic-convert
subtract tan tanh tuple xor call while conditional""".split()
#: opcode -> its attribute rule (which returns the payload of a parameter or constant).
_OPCODES = {
    **{opcode: lambda inst: None for opcode in _PLAIN},
    "parameter": _parameter,
    "constant": _constant,
    "get-tuple-element": _get_tuple_element,
    **{opcode: _Instruction.dimensions for opcode in ("transpose", "broadcast", "reverse", "concatenate", "reduce",
                                                      "map")},
    "iota": _iota,
    "sort": _sort,
    "reduce-window": _Instruction.window,
    "select-and-scatter": _Instruction.window,
    "slice": _slice,
    "pad": _pad,
    "dynamic-slice": _dynamic_slice,
    "compare": _compare,
    "reduce-precision": _reduce_precision,
    "dot": _dot,
    "custom-call": _custom_call,
    "fusion": _fusion,
}
#: opcode -> the names its called computations print under, in called_computation_ids' order.
_CALLS = {
    **{opcode: ("to_apply",) for opcode in ("reduce", "reduce-window", "map", "sort", "call")},
    "select-and-scatter": ("select", "scatter"),
    "while": ("body", "condition"),
    "fusion": ("calls",),
    "conditional": (),
    "custom-call": (),
}
#: Fields every instruction may carry that the text form leaves out (JAX's HLO text prints none of them).
_ANNOTATIONS = ("metadata", "sharding", "frontend_attributes", "statistics_viz", "original_value")
#: Fields whose value here means nothing set (JAX writes them on every custom-call).
_DEFAULTS = {
    "feature_group_count": lambda v: v == 1,
    "batch_group_count": lambda v: v == 1,
    "precision_config": lambda v: not v.algorithm and not any(v.operand_precision),
    "async_execution_thread": lambda v: v == "main",
}


# ----- literals -------------------------------------------------------------------------------------

def _literal_values(proto, shape, layouts, what: str):
    """The values of a LiteralProto for `shape`, reordered from the physical order of `layouts` (its own shape)."""
    if isinstance(shape, TupleShape):
        if len(proto.tuple_literals) != len(shape.elements):
            _fail(f"one tuple literal per element of {shape} in {what}", f"{len(proto.tuple_literals)}")
        return tuple(_literal_values(p, s, l, what)
                     for p, s, l in zip(proto.tuple_literals, shape.elements, layouts.elements))
    if shape.kind == "token" or ELEMENT_TYPES[shape.element_type][1] is None:
        _fail(f"a constant of an element type with values in {what}", f"{shape}", "build the value another way")
    field = f"{shape.element_type}s"
    _check_fields(proto, {"shape", field}, f"the literal of {what}", f"its values in {field} (for {shape})")
    values = getattr(proto, field)
    count = math.prod(shape.dims) * (2 if shape.kind == "complex" else 1)
    if isinstance(values, bytes):
        width = max(1, shape.numpy_dtype.itemsize)
        if len(values) != count * width:
            _fail(f"{count:,} values in the literal of {what} ({shape})", f"{len(values) // width:,} in {field}")
        flat = _from_bytes(values, shape, width)
    else:
        if len(values) != count:
            _fail(f"{count:,} values in the literal of {what} ({shape})", f"{len(values):,} in {field}")
        dtype = {"pred": np.bool_, "c64": np.float32, "c128": np.float64}.get(shape.element_type, shape.numpy_dtype)
        flat = np.fromiter(values, dtype, count=count)
        if shape.kind == "complex":
            flat = flat.view(shape.numpy_dtype)
    layout = layouts.layout if layouts.rank else None
    if layout is None or list(layout) == list(range(shape.rank))[::-1]:
        return flat.reshape(shape.dims)
    major_to_minor = layout[::-1]  # the values are in the literal's physical order
    return flat.reshape([shape.dims[d] for d in major_to_minor]).transpose(np.argsort(major_to_minor))


def _from_bytes(values: bytes, shape: Shape, width: int) -> np.ndarray:
    """Little-endian element bytes as `shape`'s dtype (one byte per element for the sub-byte types)."""
    raw = np.frombuffer(values, f"<u{width}").astype(f"=u{width}")
    bits = {"s2": 2, "u2": 2, "s4": 4, "u4": 4, "f4e2m1fn": 4}.get(shape.element_type)
    if bits is None:
        return raw.view(shape.numpy_dtype)
    raw = raw & ((1 << bits) - 1)
    if shape.kind == "int":
        return np.where(raw >= 1 << (bits - 1), raw.astype(np.int16) - (1 << bits), raw).astype(shape.numpy_dtype)
    if shape.kind == "float":
        return raw.view(shape.numpy_dtype)
    return raw.astype(shape.numpy_dtype)


# ----- helpers --------------------------------------------------------------------------------------

def _identifier(name: str, what: str) -> str:
    if not IDENTIFIER.fullmatch(name):
        _fail(f"{what} matching [A-Za-z_][A-Za-z0-9_.-]*", repr(name))
    return name


def _check_fields(proto, allowed: set, what: str, requirement: str) -> None:
    for field, _ in proto.ListFields():
        if field.name not in allowed:
            _fail(f"{requirement} in {what}", f"{field.name} set")


def _build(make, where: str):
    """The IR object `make` returns; an IR refusal (InvalidValueError) as a ProtoDecodeError naming `where`."""
    try:
        return make()
    except InvalidValueError as error:
        _fail(f"a valid {where}", str(error))


def _aliases(entries) -> str:
    """input_output_alias as XLA prints it: { {output index}: (parameter, {parameter index}, kind), ... }."""
    def index(values) -> str:
        return "{" + ",".join(map(str, values)) + "}"

    parts = [f"{index(e.output_shape_index)}: ({e.parameter_number}, {index(e.parameter_shape_index)}, "
             f"{'must-alias' if e.kind == 2 else 'may-alias'})" for e in entries]
    return "{ " + ", ".join(parts) + " }"


# ----- where decoding breaks ------------------------------------------------------------------------

def _damage(data: bytes, descriptor, error: Exception) -> tuple[str, str, str]:
    """(requirement, got, hint) saying why protobuf cannot decode `data` as `descriptor`'s message: the first
    malformed piece, found by walking the wire format with the schema, or protobuf's own words."""
    size = f"{len(data):,} byte{'s' if len(data) != 1 else ''}"
    # The top level alone first (a file cut short shows there at once), then everything, within a budget.
    found = _walk(data, 0, len(data), descriptor, "", 0, deep=False) or _walk(
        data, 0, len(data), descriptor, "", 0, [_WALK_FIELDS])
    if found is None:
        detail = str(error).split(": ", 1)[-1]
        return "a well-formed serialized message", f"{size} that protobuf cannot decode ({detail})", _REWRITE
    offset, path, problem, cut = found
    where = f" in {path}" if path else ""
    if cut:
        return ("a whole serialized message", f"{size} cut short{where}: {problem} at byte {offset:,}",
                _REWRITE)
    got = f"{size} that protobuf cannot decode: {problem} at byte {offset:,}{where}"
    text = _text_until(data)
    if text is not None:  # HLO text with a stray byte is told apart from a proto by content, as a proto
        return ("a well-formed serialized message", got, f"the file reads as text up to {text}: if it is HLO or "
                f"StableHLO text, fix that byte (text must be UTF-8 without control characters)")
    return ("a well-formed serialized message", got,
            "the file is damaged, or holds another kind of message: " + _REWRITE)


def _text_until(data: bytes) -> str | None:
    """'byte 0x.. at offset N': the first byte that makes `data` no text, when its first 8 bytes read as text."""
    if not _TEXT_START.fullmatch(data[:8]):
        return None
    try:
        text, bad = data.decode("utf-8"), None
    except UnicodeDecodeError as error:
        text, bad = data[:error.start].decode("utf-8"), error.start
    control = _CONTROL.search(text)
    if control is not None:
        bad = len(text[:control.start()].encode("utf-8"))
    return None if bad is None else f"byte 0x{data[bad]:02x} at offset {bad:,}"


def _varint(data: bytes, pos: int, end: int) -> tuple[int | None, int]:
    value = shift = 0
    for i in range(pos, min(end, pos + 10)):
        value |= (data[i] & 0x7F) << shift
        shift += 7
        if data[i] < 0x80:
            return value, i + 1
    return None, pos


def _walk(data: bytes, pos: int, end: int, descriptor, path: str, depth: int, budget: list | None = None,
          group: int | None = None, deep: bool = True):
    """(offset, field path, problem, cut short?) of the first malformed piece of data[pos:end], None if there is
    none or the budget of fields runs out (in a group: the offset after its end). Not `deep`: fields are not
    looked into."""
    def broken(offset: int, where: str, problem: str, past_end: bool = False):
        return offset, where, problem, past_end and end == len(data)

    counts: dict[int, int] = {}
    while pos < end:
        if budget is not None:
            budget[0] -= 1
            if budget[0] < 0:
                return None
        start = pos
        tag, pos = _varint(data, pos, end)
        if tag is None:
            return broken(start, path, "a field tag without its last byte", past_end=True)
        number, wire = tag >> 3, tag & 7
        field = descriptor.fields_by_number.get(number) if descriptor is not None else None
        name = f"{path}.{field.name if field else f'field {number}'}".lstrip(".")
        if field is not None and wire == 2:
            index = counts[number] = counts.get(number, -1) + 1
            name = f"{name}[{index}]" if _repeated(field) else name
        if number == 0 or wire in (6, 7):
            return broken(start, path, f"an invalid field tag (field {number}, wire type {wire})")
        if wire == 0:
            value, pos = _varint(data, pos, end)
            if value is None:
                return broken(start, name, "a number without its last byte", past_end=end - pos < 10)
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
            if pos > end:
                return broken(start, name, f"a {8 if wire == 1 else 4}-byte number past the end", past_end=True)
        elif wire == 2:
            length, pos = _varint(data, pos, end)
            if length is None:
                return broken(start, name, "a length without its last byte", past_end=end - pos < 10)
            if pos + length > end:
                return broken(start, name, f"a field of {length:,} bytes with {end - pos:,} left", past_end=True)
            if field is not None and deep:
                where = name
                if field.message_type is not None:
                    if depth + 1 >= _WIRE_DEPTH:
                        return broken(start, where, f"messages nested more than {_WIRE_DEPTH} deep")
                    found = _walk(data, pos, pos + length, field.message_type, where, depth + 1, budget)
                    if found is not None:
                        return found
                elif field.type == field.TYPE_STRING:
                    try:
                        data[pos:pos + length].decode("utf-8")
                    except UnicodeDecodeError:
                        return broken(start, where, "a string that is not UTF-8")
                elif _repeated(field) and field.type != field.TYPE_BYTES:
                    found = _packed(data, pos, pos + length, field)
                    if found is not None:
                        return broken(found, where, "a list of numbers whose last is incomplete")
            pos += length
        elif wire == 3:
            if depth + 1 >= _WIRE_DEPTH:
                return broken(start, name, f"groups nested more than {_WIRE_DEPTH} deep")
            found = _walk(data, pos, end, None, name, depth + 1, budget, group=number)
            if not isinstance(found, int):
                return found
            pos = found
        elif group == number:  # wire 4: the end of the group being walked
            return pos
        else:
            return broken(start, path, f"the end of a group that was not started (field {number})")
    return None if group is None else broken(pos, path, "a group without its end", past_end=True)


def _repeated(field) -> bool:
    return field.is_repeated if hasattr(field, "is_repeated") else field.label == field.LABEL_REPEATED


def _packed(data: bytes, pos: int, end: int, field) -> int | None:
    """The offset where a packed repeated field's numbers break, or None."""
    fixed = {field.TYPE_DOUBLE: 8, field.TYPE_FIXED64: 8, field.TYPE_SFIXED64: 8, field.TYPE_FLOAT: 4,
             field.TYPE_FIXED32: 4, field.TYPE_SFIXED32: 4}.get(field.type)
    if fixed is not None:
        return None if (end - pos) % fixed == 0 else end - (end - pos) % fixed
    while pos < end:
        value, after = _varint(data, pos, end)
        if value is None:
            return pos
        pos = after
    return None
