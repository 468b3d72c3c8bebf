"builtin.module"() <{sym_name = "jit_upsample_pool"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<2x8x30x20xf32>, tensor<8xf32>) -> (tensor<2x8x29x19xbf16>, tensor<2x8x30x19xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2x8x30x20xf32>, %arg1: tensor<8xf32>):
    %0 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 0, 3, 2, 1>}> : (tensor<2x8x30x20xf32>) -> tensor<2x20x30x8xf32>
    %1 = "stablehlo.custom_call"(%0) <{api_version = 1 : i32, backend_config = "\2200\22", call_target_name = "ResizeNearest", called_computations = [], has_side_effect = false, operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], output_operand_aliases = [], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]}> : (tensor<2x20x30x8xf32>) -> tensor<2x38x59x8xf32>
    %2 = "stablehlo.transpose"(%1) <{permutation = array<i64: 0, 3, 2, 1>}> : (tensor<2x38x59x8xf32>) -> tensor<2x8x59x38xf32>
    %3 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<8xf32>) -> tensor<1x8x1x1xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x8x1x1xf32>) -> tensor<2x8x59x38xf32>
    %5 = "stablehlo.add"(%2, %4) : (tensor<2x8x59x38xf32>, tensor<2x8x59x38xf32>) -> tensor<2x8x59x38xf32>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8x59x38xf32>
    %8 = "stablehlo.maximum"(%5, %7) : (tensor<2x8x59x38xf32>, tensor<2x8x59x38xf32>) -> tensor<2x8x59x38xf32>
    %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<f32>
    %11 = "stablehlo.reduce_window"(%8, %10) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %20 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%20) : (tensor<f32>) -> ()
    }) : (tensor<2x8x59x38xf32>, tensor<f32>) -> tensor<2x8x29x19xf32>
    %12 = "stablehlo.constant"() <{value = dense<4.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8x29x19xf32>
    %14 = "stablehlo.divide"(%11, %13) : (tensor<2x8x29x19xf32>, tensor<2x8x29x19xf32>) -> tensor<2x8x29x19xf32>
    %15 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<f32>
    %17 = "stablehlo.reduce_window"(%8, %16) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %19 = "stablehlo.maximum"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%19) : (tensor<f32>) -> ()
    }) : (tensor<2x8x59x38xf32>, tensor<f32>) -> tensor<2x8x30x19xf32>
    %18 = "stablehlo.convert"(%14) : (tensor<2x8x29x19xf32>) -> tensor<2x8x29x19xbf16>
    "func.return"(%18, %17) : (tensor<2x8x29x19xbf16>, tensor<2x8x30x19xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
