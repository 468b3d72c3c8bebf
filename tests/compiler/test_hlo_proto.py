"""Serialized HloModuleProtos: the module the text parser builds from the same HLO, and clear errors for the rest."""

import gzip

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resize_kernels import cli, compile_hlo
from resize_kernels.compiler.codegen import CodegenError
from resize_kernels.compiler.frontend import parse_module
from resize_kernels.compiler.hlo import parse_hlo_module, print_hlo_module
from resize_kernels.compiler.hlo import proto as hlo_proto
from resize_kernels.compiler.hlo.proto import ProtoDecodeError, parse_hlo_proto
from resize_kernels.compiler.hlo.proto_schema import PRIMITIVE_TYPES, message_classes
from resize_kernels.compiler.passes import ValidationError
from resize_kernels.compiler.pipeline import compile_module
from resize_kernels.runtime import random_arguments

from hlo_texts import ROOT

NAMES = ["jax_resize_nearest", "jax_upsample_pool", "jax_odd_bf16", "jax_train_step"]
PB = {name: (ROOT / "examples" / f"{name}.pb").read_bytes() for name in NAMES}
HLO = {name: (ROOT / "examples" / f"{name}.hlo").read_text() for name in NAMES}
M = message_classes()


def bits(value):
    """A result as comparable bytes (a tuple of them for a tuple)."""
    if isinstance(value, tuple):
        return tuple(map(bits, value))
    return np.ascontiguousarray(value).view(np.uint8).tobytes(), value.dtype, value.shape


# -- the fixtures: the same module as their HLO text, compiled and run the same ------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_a_proto_parses_into_the_module_of_its_text(name):
    assert print_hlo_module(parse_module(PB[name])) == print_hlo_module(parse_module(HLO[name]))


@pytest.mark.parametrize("name", NAMES)
def test_a_proto_compiles_and_runs_as_its_text(name):
    from_proto, from_text = compile_hlo(PB[name]), compile_hlo(HLO[name])
    assert str(from_proto) == str(from_text)
    args = random_arguments(from_text.module, seed=0)
    assert bits(from_proto(*args)) == bits(from_text(*args))


def test_a_gzipped_proto_compiles_the_same():
    assert str(compile_hlo(gzip.compress(PB["jax_train_step"]))) == str(compile_hlo(HLO["jax_train_step"]))


def test_the_module_inside_an_hlo_proto_or_snapshot_is_taken():
    """--xla_dump_hlo_as_proto writes an HloProto (the module in field 1); an HloSnapshot holds an HloProto."""
    module = M["HloModuleProto"].FromString(PB["jax_train_step"])
    wrapped = M["HloProto"](hlo_module=module).SerializeToString()
    snapshot = M["HloSnapshot"](hlo=M["HloProto"](hlo_module=module)).SerializeToString()
    expected = print_hlo_module(parse_module(HLO["jax_train_step"]))
    assert print_hlo_module(parse_module(wrapped)) == print_hlo_module(parse_module(snapshot)) == expected


def test_compile_run_of_a_proto_prints_what_its_text_prints(capsys):
    assert cli.main(["compile", str(ROOT / "examples" / "jax_train_step.pb"), "--run"]) == 0
    from_proto = capsys.readouterr()
    assert cli.main(["compile", str(ROOT / "examples" / "jax_train_step.hlo"), "--run"]) == 0
    assert from_proto.err == "" and from_proto.out == capsys.readouterr().out
    assert from_proto.out.endswith("bit-identical to the reference (semantics.resize_nearest_reference): yes\n")


# -- messages built here: every attribute, layout and literal as the text parser stores it -------------------

def shape(element, dims=(), layout=None, **layout_fields):
    """A ShapeProto; layout None is the default (descending) minor_to_major."""
    proto = M["ShapeProto"](element_type=PRIMITIVE_TYPES[element.upper()], dimensions=dims)
    proto.layout.minor_to_major.extend(reversed(range(len(dims))) if layout is None else layout)
    for key, value in layout_fields.items():
        if key == "tiles":
            proto.layout.tiles.extend(M["TileProto"](dimensions=tile) for tile in value)
        elif isinstance(value, list):
            getattr(proto.layout, key).extend(value)
        else:
            setattr(proto.layout, key, value)
    return proto


def tuple_shape(*elements):
    return M["ShapeProto"](element_type=PRIMITIVE_TYPES["TUPLE"], tuple_shapes=elements)


class Computation:
    """Instructions added one by one, ids from 1; the last one is the root unless one is named."""

    def __init__(self, name, id_):
        self.proto = M["HloComputationProto"](name=name, id=id_)
        self.ids = {}

    def add(self, name, opcode, shape_, *operands, **fields):
        inst = self.proto.instructions.add(name=name, opcode=opcode, shape=shape_, id=len(self.ids) + 1,
                                           operand_ids=[self.ids[op] for op in operands], **fields)
        self.ids[name] = inst.id
        self.proto.root_id = inst.id
        return inst


def serialized(*computations, entry_id=None, **fields) -> bytes:
    """The HloModuleProto of `computations` (the last is the entry unless entry_id says otherwise), serialized."""
    entry_id = computations[-1].proto.id if entry_id is None else entry_id
    module = M["HloModuleProto"](name=fields.pop("name", "m"), computations=[c.proto for c in computations],
                                 entry_computation_id=entry_id, **fields)
    return module.SerializeToString()


def adder(name="add.1", id_=1, element="f32"):
    comp = Computation(name, id_)
    comp.add("a", "parameter", shape(element))
    comp.add("b", "parameter", shape(element), parameter_number=1)
    comp.add("s", "add", shape(element), "a", "b")
    return comp


def window(*dims):
    return M["Window"](dimensions=[M["WindowDimension"](size=s, stride=t, padding_low=lo, padding_high=hi,
                                                        window_dilation=1, base_dilation=1)
                                   for s, t, lo, hi in dims])


ATTRIBUTES_TEXT = """HloModule attributes, entry_computation_layout={(f32[4,6]{1,0}, s32[])->f32[4]{0}}

add.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond.2 {
  p = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  ROOT lt = pred[] compare(i, i), direction=LT
}

body.3 {
  ROOT p = (s32[], f32[4]{0}) parameter(0)
}

less.5 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}

id.6 {
  ROOT v = f32[4]{0} parameter(0)
}

ENTRY main.4 {
  x = f32[4,6]{1,0} parameter(0)
  i0 = s32[] parameter(1)
  sl = f32[2,3]{1,0} slice(x), slice={[0:2], [0:6:2]}
  z = f32[] constant(0)
  pd = f32[5,8]{1,0} pad(x, z), padding=0_1x1_1
  pdi = f32[8,8]{1,0} pad(x, z), padding=0_1_1x1_1_0
  io = s32[4]{0} iota(), iota_dimension=0
  r = f32[4]{0} reduce(x, z), dimensions={1}, to_apply=add.1
  rw = f32[4,3]{1,0} reduce-window(x, z), window={size=1x2 stride=1x2 pad=0_0x0_1}, to_apply=add.1
  c = pred[4,6]{1,0} compare(x, x), direction=GT, type=TOTALORDER
  d = f32[4,4]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}, operand_precision={highest,default}
  ds = f32[2,2]{1,0} dynamic-slice(x, i0, i0), dynamic_slice_sizes={2,2}
  t = (s32[], f32[4]{0}) tuple(i0, r)
  w = (s32[], f32[4]{0}) while(t), condition=cond.2, body=body.3
  cc = f32[4,6]{0,1:T(8,128)(2,1)S(1)} custom-call(x), custom_call_target="Foo\\n", custom_call_has_side_effect=true, schedule=SCHEDULE_LATEST, api_version=API_VERSION_STATUS_RETURNING, backend_config={"k": 1}
  tr = f32[6,4]{1,0} transpose(x), dimensions={1,0}, control-predecessors={cc}
  g = f32[4]{0} get-tuple-element(w), index=1
  so = f32[4]{0} sort(g), dimensions={0}, is_stable=true, to_apply=less.5
  eq = pred[] compare(i0, i0), direction=EQ
  cd = f32[4]{0} conditional(eq, so, so), true_computation=id.6, false_computation=id.6
  ROOT fu = f32[4]{0} fusion(cd), kind=kLoop, calls=id.6
}
"""


def attributes_module() -> bytes:
    def f32(*dims):
        return shape("f32", dims)

    state = tuple_shape(shape("s32"), f32(4))
    cond, body = Computation("cond.2", 2), Computation("body.3", 3)
    cond.add("p", "parameter", state)
    cond.add("i", "get-tuple-element", shape("s32"), "p")
    cond.add("lt", "compare", shape("pred"), "i", "i", comparison_direction="LT", comparison_type="SIGNED")
    body.add("p", "parameter", state)
    main = Computation("main.4", 4)
    main.add("x", "parameter", f32(4, 6))
    main.add("i0", "parameter", shape("s32"), parameter_number=1)
    main.add("sl", "slice", f32(2, 3), "x", slice_dimensions=[M["SliceDimensions"](start=0, limit=2, stride=1),
                                                               M["SliceDimensions"](start=0, limit=6, stride=2)])
    main.add("z", "constant", shape("f32"), literal=M["LiteralProto"](shape=shape("f32"), f32s=[0]))

    def padding(*dims):
        return M["PaddingConfig"](dimensions=[M["PaddingConfigDimension"](
            edge_padding_low=lo, edge_padding_high=hi, interior_padding=i) for lo, hi, i in dims])

    main.add("pd", "pad", f32(5, 8), "x", "z", padding_config=padding((0, 1, 0), (1, 1, 0)))
    main.add("pdi", "pad", f32(8, 8), "x", "z", padding_config=padding((0, 1, 1), (1, 1, 0)))
    main.add("io", "iota", shape("s32", (4,)), dimensions=[0])
    main.add("r", "reduce", f32(4), "x", "z", dimensions=[1], called_computation_ids=[1])
    main.add("rw", "reduce-window", f32(4, 3), "x", "z", window=window((1, 1, 0, 0), (2, 2, 0, 1)),
             called_computation_ids=[1])
    main.add("c", "compare", shape("pred", (4, 6)), "x", "x", comparison_direction="GT",
             comparison_type="TOTALORDER")
    main.add("d", "dot", f32(4, 4), "x", "x", precision_config=M["PrecisionConfig"](operand_precision=[2, 0]),
             dot_dimension_numbers=M["DotDimensionNumbers"](lhs_contracting_dimensions=[1],
                                                            rhs_contracting_dimensions=[1]))
    main.add("ds", "dynamic-slice", f32(2, 2), "x", "i0", "i0", dynamic_slice_sizes=[2, 2])
    main.add("t", "tuple", state, "i0", "r")
    main.add("w", "while", state, "t", called_computation_ids=[3, 2])  # XLA keeps the body first
    main.add("cc", "custom-call", shape("f32", (4, 6), [0, 1], tiles=[[8, 128], [2, 1]], memory_space=1,
                                        tail_padding_alignment_in_elements=1), "x",
             custom_call_target="Foo\n", custom_call_has_side_effect=True, custom_call_schedule=1,
             custom_call_api_version=2, backend_config=b'{"k": 1}', feature_group_count=1, batch_group_count=1,
             precision_config=M["PrecisionConfig"](operand_precision=[0]), metadata=b"\x12\x03abc")
    tr = main.add("tr", "transpose", f32(6, 4), "x", dimensions=[1, 0])
    tr.control_predecessor_ids.append(main.ids["cc"])
    main.add("g", "get-tuple-element", f32(4), "w", tuple_index=1)
    main.add("so", "sort", f32(4), "g", dimensions=[0], is_stable=True, called_computation_ids=[5])
    main.add("eq", "compare", shape("pred"), "i0", "i0", comparison_direction="EQ")
    main.add("cd", "conditional", f32(4), "eq", "so", "so", called_computation_ids=[6, 6])
    main.add("fu", "fusion", f32(4), "cd", fusion_kind="kLoop", called_computation_ids=[6])
    less, identity = Computation("less.5", 5), Computation("id.6", 6)
    less.add("a", "parameter", shape("f32"))
    less.add("b", "parameter", shape("f32"), parameter_number=1)
    less.add("lt", "compare", shape("pred"), "a", "b", comparison_direction="LT", comparison_type="FLOAT")
    identity.add("v", "parameter", f32(4))
    program = M["ProgramShapeProto"](parameters=[f32(4, 6), shape("s32")], result=f32(4))
    return serialized(adder(), cond, body, less, identity, main, name="attributes", host_program_shape=program)


def test_attributes_are_stored_as_the_text_parser_stores_them():
    assert print_hlo_module(parse_hlo_proto(attributes_module())) == print_hlo_module(
        parse_hlo_module(ATTRIBUTES_TEXT))


def test_typed_accessors_read_the_converted_attributes():
    entry = parse_hlo_proto(attributes_module()).entry
    assert entry.instruction("r").dimensions == (1,) and entry.instruction("r").to_apply.name == "add.1"
    assert entry.instruction("rw").window.pad == ((0, 0), (0, 1))
    assert entry.instruction("cc").custom_call_target == "Foo\n"
    assert entry.instruction("cc").backend_config == '{"k": 1}'
    assert entry.instruction("g").tuple_index == 1 and entry.instruction("i0").parameter_number == 1


LITERALS_TEXT = """HloModule literals

ENTRY main {
  a = f32[2,3]{0,1} constant({ {1, 2, 3}, {4, 5, 6} })
  b = bf16[3]{0} constant({1.5, -2, inf})
  c = s4[4]{0} constant({-8, -1, 0, 7})
  d = pred[2]{0} constant({true, false})
  e = u16[2]{0} constant({0, 65535})
  f = s64[2]{0} constant({-9223372036854775808, 9223372036854775807})
  g = u64[1]{0} constant({18446744073709551615})
  h = c64[2]{0} constant({(1, 2), (3, -4)})
  i = f16[2]{0} constant({nan(0x1), -nan})
  j = s8[2,2]{1,0} constant({ {-128, 127}, {0, 1} })
  k = f8e4m3fn[2]{0} constant({0.5, -448})
  l = f64[] constant(0.1)
  ROOT t = (f32[], s32[2]{0}) constant((1, {2, 3}))
}
"""


def literals_module() -> bytes:
    main = Computation("main", 1)

    def constant(name, element, dims, layout=None, **values):
        main.add(name, "constant", shape(element, dims, layout),
                 literal=M["LiteralProto"](shape=shape(element, dims, layout), **values))

    def raw(dtype, values):
        return np.array(values, dtype).tobytes()

    constant("a", "f32", (2, 3), [0, 1], f32s=[1, 4, 2, 5, 3, 6])  # column-major: the literal's own layout
    constant("b", "bf16", (3,), bf16s=raw(ml_dtypes.bfloat16, [1.5, -2, np.inf]))
    constant("c", "s4", (4,), s4s=raw(np.int8, [-8, -1, 0, 7]))
    constant("d", "pred", (2,), preds=[True, False])
    constant("e", "u16", (2,), u16s=raw(np.uint16, [0, 65535]))
    constant("f", "s64", (2,), s64s=[-2**63, 2**63 - 1])
    constant("g", "u64", (1,), u64s=[2**64 - 1])
    constant("h", "c64", (2,), c64s=[1, 2, 3, -4])
    constant("i", "f16", (2,), f16s=np.array([0x7C01, 0xFE00], np.uint16).tobytes())
    constant("j", "s8", (2, 2), s8s=raw(np.int8, [-128, 127, 0, 1]))
    constant("k", "f8e4m3fn", (2,), f8e4m3fns=raw(ml_dtypes.float8_e4m3fn, [0.5, -448]))
    constant("l", "f64", (), f64s=[0.1])
    pair = tuple_shape(shape("f32"), shape("s32", (2,)))
    main.add("t", "constant", pair, literal=M["LiteralProto"](shape=pair, tuple_literals=[
        M["LiteralProto"](shape=shape("f32"), f32s=[1]), M["LiteralProto"](shape=shape("s32", (2,)), s32s=[2, 3])]))
    return serialized(main, name="literals")


def test_literals_of_every_encoding_are_the_values_of_the_text():
    from_proto, from_text = parse_hlo_proto(literals_module()), parse_hlo_module(LITERALS_TEXT)
    assert print_hlo_module(from_proto) == print_hlo_module(from_text)
    for ours, theirs in zip(from_proto.entry.instructions, from_text.entry.instructions):
        assert bits(ours.literal) == bits(theirs.literal), ours.name


# -- errors: one ProtoDecodeError naming the problem, never anything else ------------------------------------

def one_computation(*steps, entry_id=1):
    """A small valid module (x = parameter, y = negate(x)) with `steps` applied to its computation, serialized."""
    main = Computation("main", 1)
    main.add("x", "parameter", shape("f32", (2, 3)))
    main.add("y", "negate", shape("f32", (2, 3)), "x")
    for step in steps:
        step(main.proto)
    return serialized(main, entry_id=entry_id)


def instruction(index, **fields):
    def step(comp):
        for key, value in fields.items():
            field = getattr(comp.instructions[index], key)
            if hasattr(field, "extend"):
                del field[:]
                field.extend(value)
            elif hasattr(field, "CopyFrom"):
                field.CopyFrom(value)
            else:
                setattr(comp.instructions[index], key, value)
    return step


def deep_tuple(depth):
    inner = shape("f32")
    for _ in range(depth):
        inner = tuple_shape(inner)
    return inner


def varint(n) -> bytes:
    out = b""
    while True:
        out += bytes([n & 0x7F | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            return out


def nested(depth) -> bytes:
    """A host_program_shape whose result is tuple shapes `depth` messages deep, as wire bytes."""
    inner = b""
    for _ in range(depth - 2):
        inner = b"\x22" + varint(len(inner)) + inner  # ShapeProto.tuple_shapes
    inner = b"\x12" + varint(len(inner)) + inner  # ProgramShapeProto.result
    return b"\x22" + varint(len(inner)) + inner  # HloModuleProto.host_program_shape


ERRORS = {
    "empty": (b"", "requires at least one computation, got none"),
    "another message": (M["ProgramShapeProto"](parameters=[shape("f32", (2,))]).SerializeToString(),
                        "requires at least one computation, got none"),
    "missing operand": (one_computation(instruction(1, operand_ids=[99])),
                        "operand ids of instructions in the same computation, in instruction 'y' of computation "
                        "'main', got operand id 99, which no instruction there has"),
    "operand after its user": (one_computation(instruction(0, operand_ids=[2])),
                               "each instruction after its operands, got instruction 'x' of computation 'main' "
                               "before its operand 'y' (id 2)"),
    "unsupported opcode": (one_computation(instruction(1, opcode="convolution")),
                           "opcodes the proto reader supports, in instruction 'y' of computation 'main', got "
                           "'convolution'; keep such instructions out"),
    "unknown element type": (one_computation(instruction(1, shape=M["ShapeProto"](element_type=99))),
                             "in the shape of instruction 'y' of computation 'main', got the unknown value (99)"),
    "opaque element type": (one_computation(instruction(1, shape=M["ShapeProto"](element_type=14))),
                            "got OPAQUE_TYPE (14)"),
    "dynamic dimension": (one_computation(instruction(1, shape=M["ShapeProto"](
        element_type=11, dimensions=[4], is_dynamic_dimension=[True]))), "requires static dimensions"),
    "overflowing dimensions": (one_computation(instruction(1, shape=shape("f32", (2**32, 2**32)))),
                               "fewer than 2**63 elements in the shape of instruction 'y'"),
    "negative dimension": (one_computation(instruction(1, shape=shape("f32", (-1,)))), "dimensions [-1]"),
    "layout that is no permutation": (one_computation(instruction(1, shape=shape("f32", (2, 3), [0, 0]))),
                                      "a layout listing each of the 2 dimensions once"),
    "sparse layout": (one_computation(instruction(1, shape=shape("f32", (2,), dim_level_types=[1]))),
                      "dense layouts (sparse ones are not supported) in the layout of the shape of instruction 'y'"),
    "tuple nested too deep": (one_computation(instruction(1, shape=deep_tuple(70))), "nested at most 64 deep"),
    "field the reader does not read": (one_computation(instruction(1, convolution_dimension_numbers=b"\x08\x01")),
                                       "only fields the proto reader turns into HLO text, in instruction 'y' of "
                                       "computation 'main' (negate), got convolution_dimension_numbers set"),
    "called computation of a negate": (one_computation(instruction(1, called_computation_ids=[1])),
                                       "got called_computation_ids set"),
    "reduce calling nothing known": (one_computation(instruction(1, opcode="reduce", dimensions=[0],
                                                                 called_computation_ids=[7])),
                                     "called computation ids of computations in the module, in instruction 'y' of "
                                     "computation 'main', got id 7, which none has"),
    "root that is not there": (one_computation(lambda comp: setattr(comp, "root_id", 9)),
                               "root_id to be the id of an instruction of computation 'main', got 9"),
    "two names": (one_computation(instruction(1, name="x")), "two instructions named 'x'"),
    "two ids": (one_computation(instruction(1, id=1)), "id 1 for 'x' and 'y'"),
    "bad name": (one_computation(instruction(1, name="1y")), "matching [A-Za-z_][A-Za-z0-9_.-]*, got '1y'"),
    "parameter numbers with a gap": (one_computation(instruction(1, opcode="parameter", operand_ids=[],
                                                                 parameter_number=2)),
                                     "parameter numbers 0..1 in computation 'main', one per parameter"),
    "constant without a literal": (one_computation(instruction(1, opcode="constant", operand_ids=[])),
                                   "a literal in instruction 'y'"),
    "literal of too few values": (one_computation(instruction(1, opcode="constant", operand_ids=[],
                                                              literal=M["LiteralProto"](f32s=[1, 2]))),
                                  "6 values in the literal of instruction 'y' of computation 'main' "
                                  "(f32[2,3]{1,0}), got 2 in f32s"),
    "literal in the wrong field": (one_computation(instruction(1, opcode="constant", operand_ids=[],
                                                               literal=M["LiteralProto"](s32s=[1] * 6))),
                                   "its values in f32s (for f32[2,3]{1,0}) in the literal of instruction 'y' of "
                                   "computation 'main', got s32s set"),
    "window stride 0": (one_computation(instruction(1, opcode="reduce-window", called_computation_ids=[1],
                                                    window=window((1, 0, 0, 0), (1, 1, 0, 0)))),
                        "strides and dilations of at least 1 in instruction 'y'"),
    "comparison direction": (one_computation(instruction(1, opcode="compare", comparison_direction="XX")),
                             "a comparison direction (EQ, NE, GE, GT, LE or LT) in instruction 'y' of computation "
                             "'main', got 'XX'"),
    "backend_config that is not UTF-8": (one_computation(instruction(1, backend_config=b"\xff")),
                                         "a backend_config of UTF-8 text in instruction 'y'"),
    "no entry": (one_computation(lambda comp: setattr(comp, "id", 5), entry_id=1),
                 "entry_computation_id to be the id of one of its computations ('main' (id 5)), got 1"),
    "deep nesting": (nested(150),
                     "messages nested more than 100 deep"),
    "bad UTF-8 in a name": (one_computation(instruction(1, name="yy")).replace(b"\x0a\x02yy", b"\x0a\x02\xff\xfe"),
                            "a string that is not UTF-8 at byte"),
}


@pytest.mark.parametrize("case", ERRORS)
def test_a_proto_the_reader_cannot_take_raises_a_clear_error(case):
    data, message = ERRORS[case]
    with pytest.raises(ProtoDecodeError) as error:
        parse_hlo_proto(data)
    text = str(error.value)
    assert text.startswith("HloModuleProto requires ") and message in text, text
    assert "\n" not in text


def test_a_descriptor_of_another_message_is_refused():
    from google.protobuf import descriptor_pb2

    other = descriptor_pb2.FileDescriptorProto(name="other.proto", package="other")
    other.message_type.add(name="Other").field.add(name="a", number=1, type=9, label=1)
    with pytest.raises(ProtoDecodeError, match="HloModuleProto requires "):
        parse_hlo_proto(other.SerializeToString())


def test_the_byte_where_decoding_breaks_is_named():
    data = PB["jax_train_step"]
    with pytest.raises(ProtoDecodeError) as error:
        parse_hlo_proto(data[:700])
    assert str(error.value).startswith("HloModuleProto requires a whole serialized message, got 700 bytes cut short "
                                       "in computations[1]: a field of 1,729 bytes with 321 left at byte 376; write "
                                       "the file again from its producer")
    with pytest.raises(ProtoDecodeError, match="an invalid field tag \\(field 2031, wire type 7\\) at byte 0"):
        parse_hlo_proto(b"\xff\xfe\x00\x01")


def test_budgets_are_refused_before_the_work(monkeypatch):
    monkeypatch.setattr(hlo_proto, "MAX_INSTRUCTIONS", 20)
    with pytest.raises(ProtoDecodeError, match="requires at most 20 instructions, got 28; split the module"):
        parse_hlo_proto(PB["jax_upsample_pool"])
    monkeypatch.setattr(hlo_proto, "MAX_PROTO_BYTES", 1 << 10)
    size = len(PB["jax_train_step"])
    with pytest.raises(ProtoDecodeError, match=f"requires at most 0 MiB of serialized module, got {size:,} bytes"):
        parse_hlo_proto(PB["jax_train_step"])


def test_a_module_that_decodes_but_the_compiler_refuses_raises_its_validation_error():
    module = M["HloModuleProto"].FromString(PB["jax_resize_nearest"])
    call = next(inst for inst in module.computations[0].instructions if inst.opcode == "custom-call")
    call.backend_config = b'"10"'
    with pytest.raises(ValidationError, match="align_corners=true is not supported"):
        compile_hlo(module.SerializeToString())


def top_level_end(data: bytes) -> int:
    """Where the last computation (field 3) ends: a cut before it drops or breaks one."""
    def number(pos):
        value = shift = 0
        while True:
            value |= (data[pos] & 0x7F) << shift
            shift += 7
            pos += 1
            if data[pos - 1] < 0x80:
                return value, pos

    pos = end = 0
    while pos < len(data):
        tag, pos = number(pos)
        value, pos = number(pos)  # every top-level field is a varint or length-delimited
        pos += value if tag & 7 == 2 else 0
        end = pos if tag >> 3 == 3 else end
    return end


@pytest.mark.parametrize("name", NAMES)
def test_every_cut_raises_or_keeps_the_whole_computations(name):
    data, expected = PB[name], print_hlo_module(parse_hlo_proto(PB[name])).split("\n\n", 1)[1]
    end = top_level_end(data)
    for cut in sorted({*range(0, len(data), max(1, len(data) // 40)), end - 1, end, len(data) - 1}):
        try:
            module = parse_hlo_proto(data[:cut])
        except ProtoDecodeError as error:
            assert str(error).startswith("HloModuleProto requires ")
            continue
        assert cut >= end, cut  # a cut inside the computations always raises ...
        assert print_hlo_module(module).split("\n\n", 1)[1] == expected  # ... one after them keeps them whole


@st.composite
def mutated(draw):
    data = bytearray(PB[draw(st.sampled_from(NAMES))])
    i = draw(st.integers(0, len(data) - 1))
    kind = draw(st.sampled_from(["flip", "set", "delete", "insert"]))
    if kind == "flip":
        data[i] ^= 1 << draw(st.integers(0, 7))
    elif kind == "set":
        data[i] = draw(st.integers(0, 255))
    elif kind == "delete":
        del data[i]
    else:
        data.insert(i, draw(st.integers(0, 255)))
    return bytes(data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_changed_bytes_compile_or_raise_a_documented_error(data):
    try:
        module = parse_hlo_proto(data)
    except ProtoDecodeError as error:
        assert str(error).startswith("HloModuleProto requires ")
        return
    try:
        compiled = compile_module(module)
    except (ValidationError, CodegenError) as error:
        assert str(error)
        return
    assert str(compiled)
