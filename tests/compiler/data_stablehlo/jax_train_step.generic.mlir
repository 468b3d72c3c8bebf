"builtin.module"() <{sym_name = "jit_train_step"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<2x16x30x20xf32>, tensor<2x16x59x38xf32>) -> (tensor<2x16x59x38xf32>, tensor<2x16x30x20xf32>, tensor<2x16x29x19xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2x16x30x20xf32>, %arg1: tensor<2x16x59x38xf32>):
    %0 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 0, 3, 2, 1>}> : (tensor<2x16x30x20xf32>) -> tensor<2x20x30x16xf32>
    %1 = "stablehlo.custom_call"(%0) <{api_version = 1 : i32, backend_config = "\2200\22", call_target_name = "ResizeNearest", called_computations = [], has_side_effect = false, operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], output_operand_aliases = [], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]}> : (tensor<2x20x30x16xf32>) -> tensor<2x38x59x16xf32>
    %2 = "stablehlo.transpose"(%1) <{permutation = array<i64: 0, 3, 2, 1>}> : (tensor<2x38x59x16xf32>) -> tensor<2x16x59x38xf32>
    %3 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 0, 3, 2, 1>}> : (tensor<2x16x59x38xf32>) -> tensor<2x38x59x16xf32>
    %4 = "stablehlo.custom_call"(%3) <{api_version = 1 : i32, backend_config = "\2200\22", call_target_name = "ResizeNearestGrad", called_computations = [], has_side_effect = false, operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], output_operand_aliases = [], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]}> : (tensor<2x38x59x16xf32>) -> tensor<2x20x30x16xf32>
    %5 = "stablehlo.transpose"(%4) <{permutation = array<i64: 0, 3, 2, 1>}> : (tensor<2x20x30x16xf32>) -> tensor<2x16x30x20xf32>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<f32>
    %8 = "stablehlo.reduce_window"(%2, %7) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %12 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%12) : (tensor<f32>) -> ()
    }) : (tensor<2x16x59x38xf32>, tensor<f32>) -> tensor<2x16x29x19xf32>
    %9 = "stablehlo.constant"() <{value = dense<4.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x16x29x19xf32>
    %11 = "stablehlo.divide"(%8, %10) : (tensor<2x16x29x19xf32>, tensor<2x16x29x19xf32>) -> tensor<2x16x29x19xf32>
    "func.return"(%2, %5, %11) : (tensor<2x16x59x38xf32>, tensor<2x16x30x20xf32>, tensor<2x16x29x19xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
