"""The subset of XLA's HloModuleProto schema the proto reader decodes, written out as data.

Message, field and enum names and numbers are XLA's (``xla/service/hlo.proto``
and ``xla/xla_data.proto``), so the wire format is theirs; only the fields the
reader uses, or must notice in order to refuse, are listed. Sub-messages the
reader never looks inside (metadata, sharding, frontend attributes...) are
declared as ``bytes``, which the wire format allows: they are skipped whole.
Fields left out are unknown fields to protobuf: skipped, never an error.
``message_classes()`` builds the FileDescriptorProto, adds it to a private
DescriptorPool (nothing is registered globally, so XLA's own generated
modules may be loaded beside it) and returns a class per message.
"""

from __future__ import annotations

import functools

#: PrimitiveType: the element types of shapes and literals.
PRIMITIVE_TYPES = {
    "PRIMITIVE_TYPE_INVALID": 0, "PRED": 1,
    "S1": 30, "S2": 26, "S4": 21, "S8": 2, "S16": 3, "S32": 4, "S64": 5,
    "U1": 31, "U2": 27, "U4": 22, "U8": 6, "U16": 7, "U32": 8, "U64": 9,
    "F16": 10, "F32": 11, "BF16": 16, "F64": 12,
    "F8E5M2": 19, "F8E4M3": 28, "F8E4M3FN": 20, "F8E4M3B11FNUZ": 23, "F8E3M4": 29,
    "F8E5M2FNUZ": 24, "F8E4M3FNUZ": 25, "F4E2M1FN": 32, "F8E8M0FNU": 33,
    "C64": 15, "C128": 18, "TUPLE": 13, "OPAQUE_TYPE": 14, "TOKEN": 17, "BUFFER": 34,
}

ENUMS = {
    "PrimitiveType": PRIMITIVE_TYPES,
    "CustomCallSchedule": {"SCHEDULE_NONE": 0, "SCHEDULE_LATEST": 1, "SCHEDULE_EARLIEST": 2},
    "CustomCallApiVersion": {"API_VERSION_UNSPECIFIED": 0, "API_VERSION_ORIGINAL": 1,
                             "API_VERSION_STATUS_RETURNING": 2, "API_VERSION_STATUS_RETURNING_UNIFIED": 3,
                             "API_VERSION_TYPED_FFI": 4},
}

# message -> (field name, number, type): a scalar type, a message or enum name, "repeated " before either.
MESSAGES: dict[str, tuple[tuple[str, int, str], ...]] = {
    "HloModuleProto": (
        ("name", 1, "string"), ("entry_computation_name", 2, "string"), ("entry_computation_id", 6, "int64"),
        ("computations", 3, "repeated HloComputationProto"), ("host_program_shape", 4, "ProgramShapeProto"),
        ("id", 5, "int64"), ("schedule", 7, "bytes"), ("input_output_alias", 8, "HloInputOutputAliasProto"),
    ),
    "HloComputationProto": (
        ("name", 1, "string"), ("instructions", 2, "repeated HloInstructionProto"),
        ("program_shape", 4, "ProgramShapeProto"), ("id", 5, "int64"), ("root_id", 6, "int64"),
        ("is_fusion_computation", 7, "bool"), ("execution_thread", 8, "string"),
    ),
    "HloInstructionProto": (
        ("name", 1, "string"), ("opcode", 2, "string"), ("shape", 3, "ShapeProto"),
        ("metadata", 7, "bytes"), ("literal", 8, "LiteralProto"), ("parameter_number", 9, "int64"),
        ("fusion_kind", 11, "string"), ("tuple_index", 13, "int64"), ("dimensions", 14, "repeated int64"),
        ("window", 15, "Window"), ("convolution_dimension_numbers", 16, "bytes"),
        ("slice_dimensions", 17, "repeated SliceDimensions"), ("exponent_bits", 18, "int32"),
        ("mantissa_bits", 19, "int32"), ("dynamic_slice_sizes", 20, "repeated int64"),
        ("padding_config", 21, "PaddingConfig"), ("custom_call_target", 28, "string"),
        ("dot_dimension_numbers", 30, "DotDimensionNumbers"), ("comparison_direction", 63, "string"),
        ("comparison_type", 72, "string"), ("id", 35, "int64"), ("operand_ids", 36, "repeated int64"),
        ("control_predecessor_ids", 37, "repeated int64"), ("called_computation_ids", 38, "repeated int64"),
        ("sharding", 40, "bytes"), ("backend_config", 43, "bytes"), ("feature_group_count", 50, "int64"),
        ("batch_group_count", 58, "int64"), ("precision_config", 51, "PrecisionConfig"), ("is_stable", 60, "bool"),
        ("constrain_layout", 56, "bool"), ("operand_shapes_with_layout", 57, "repeated ShapeProto"),
        ("custom_call_has_side_effect", 65, "bool"), ("frontend_attributes", 68, "bytes"),
        ("output_operand_aliasing", 74, "bytes"), ("custom_call_schedule", 76, "CustomCallSchedule"),
        ("custom_call_api_version", 77, "CustomCallApiVersion"), ("async_execution_thread", 79, "string"),
        ("statistics_viz", 82, "bytes"), ("dot_sparsity", 86, "repeated bytes"), ("original_value", 88, "bytes"),
        ("is_composite", 89, "bool"), ("result_accuracy", 91, "bytes"),
    ),
    "SliceDimensions": (("start", 1, "int64"), ("limit", 2, "int64"), ("stride", 3, "int64")),
    "ProgramShapeProto": (
        ("parameters", 1, "repeated ShapeProto"), ("result", 2, "ShapeProto"),
        ("parameter_names", 3, "repeated string"),
    ),
    "ShapeProto": (
        ("element_type", 2, "PrimitiveType"), ("dimensions", 3, "repeated int64"),
        ("tuple_shapes", 4, "repeated ShapeProto"), ("layout", 5, "LayoutProto"),
        ("is_dynamic_dimension", 6, "repeated bool"),
    ),
    "LayoutProto": (
        ("minor_to_major", 1, "repeated int64"), ("dim_level_types", 9, "repeated int32"),
        ("dim_unique", 13, "repeated bool"), ("dim_ordered", 14, "repeated bool"), ("tiles", 6, "repeated TileProto"),
        ("tail_padding_alignment_in_elements", 16, "int64"), ("element_size_in_bits", 7, "int64"),
        ("memory_space", 8, "int64"), ("index_primitive_type", 11, "PrimitiveType"),
        ("pointer_primitive_type", 12, "PrimitiveType"), ("physical_shape", 10, "bytes"),
        ("dynamic_shape_metadata_prefix_bytes", 15, "int64"), ("split_configs", 17, "repeated bytes"),
    ),
    "TileProto": (("dimensions", 1, "repeated int64"),),
    "LiteralProto": (
        ("shape", 1, "ShapeProto"), ("preds", 2, "repeated bool"), ("s1s", 30, "bytes"), ("s2s", 26, "bytes"),
        ("s4s", 21, "bytes"), ("s8s", 15, "bytes"), ("u1s", 31, "bytes"), ("u2s", 27, "bytes"), ("u4s", 22, "bytes"),
        ("u8s", 3, "bytes"), ("s32s", 4, "repeated int32"), ("s64s", 5, "repeated int64"),
        ("u32s", 6, "repeated uint32"), ("u64s", 7, "repeated uint64"), ("f32s", 8, "repeated float"),
        ("f64s", 9, "repeated double"), ("c64s", 12, "repeated float"), ("c128s", 18, "repeated double"),
        ("tuple_literals", 10, "repeated LiteralProto"), ("f16s", 11, "bytes"), ("bf16s", 13, "bytes"),
        ("u16s", 16, "bytes"), ("s16s", 17, "bytes"), ("f4e2m1fns", 32, "bytes"), ("f8e3m4s", 29, "bytes"),
        ("f8e4m3b11fnuzs", 23, "bytes"), ("f8e4m3fns", 20, "bytes"), ("f8e4m3fnuzs", 25, "bytes"),
        ("f8e4m3s", 28, "bytes"), ("f8e5m2fnuzs", 24, "bytes"), ("f8e5m2s", 19, "bytes"),
        ("f8e8m0fnus", 33, "bytes"), ("sparse_indices", 14, "repeated int64"),
    ),
    "WindowDimension": (
        ("size", 1, "int64"), ("stride", 2, "int64"), ("padding_low", 3, "int64"), ("padding_high", 4, "int64"),
        ("window_dilation", 5, "int64"), ("base_dilation", 6, "int64"), ("window_reversal", 7, "bool"),
    ),
    "Window": (("dimensions", 1, "repeated WindowDimension"),),
    "PaddingConfigDimension": (
        ("edge_padding_low", 1, "int64"), ("edge_padding_high", 2, "int64"), ("interior_padding", 3, "int64"),
    ),
    "PaddingConfig": (("dimensions", 1, "repeated PaddingConfigDimension"),),
    "DotDimensionNumbers": (
        ("lhs_contracting_dimensions", 1, "repeated int64"), ("rhs_contracting_dimensions", 2, "repeated int64"),
        ("lhs_batch_dimensions", 3, "repeated int64"), ("rhs_batch_dimensions", 4, "repeated int64"),
    ),
    "PrecisionConfig": (("operand_precision", 1, "repeated int32"), ("algorithm", 2, "int32")),
    "HloInputOutputAliasProto": (("entries", 1, "repeated AliasEntryProto"),),
    "HloProto": (("hlo_module", 1, "HloModuleProto"),),  # what --xla_dump_hlo_as_proto writes
    "HloSnapshot": (("hlo", 1, "HloProto"),),  # a module with its arguments, for replay
    "AliasEntryProto": (
        ("output_shape_index", 1, "repeated int64"), ("parameter_number", 2, "int64"),
        ("parameter_shape_index", 3, "repeated int64"), ("kind", 4, "int32"),
    ),
}

_SCALARS = {"double": 1, "float": 2, "int64": 3, "uint64": 4, "int32": 5, "bool": 8, "string": 9, "bytes": 12,
            "uint32": 13}  # FieldDescriptorProto.Type numbers
_MESSAGE, _ENUM, _OPTIONAL, _REPEATED = 11, 14, 1, 3


def file_descriptor():
    """The schema as a google.protobuf FileDescriptorProto (proto3, package xla)."""
    from google.protobuf import descriptor_pb2

    proto = descriptor_pb2.FileDescriptorProto(name="resize_kernels/xla_hlo_subset.proto", package="xla",
                                               syntax="proto3")
    for name, values in ENUMS.items():
        enum = proto.enum_type.add(name=name)
        for value_name, number in values.items():
            enum.value.add(name=value_name, number=number)
    for name, fields in MESSAGES.items():
        message = proto.message_type.add(name=name)
        for field_name, number, kind in fields:
            repeated = kind.startswith("repeated ")
            kind = kind.removeprefix("repeated ")
            field = message.field.add(name=field_name, number=number, label=_REPEATED if repeated else _OPTIONAL)
            if kind in _SCALARS:
                field.type = _SCALARS[kind]
            else:
                field.type = _ENUM if kind in ENUMS else _MESSAGE
                field.type_name = f".xla.{kind}"
    return proto


@functools.cache
def message_classes() -> dict:
    """Message name -> protobuf message class, from a private DescriptorPool (made once)."""
    from google.protobuf import descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_descriptor())
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"xla.{name}")) for name in MESSAGES}
