module @jit_train_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x16x30x20xf32>, %arg1: tensor<2x16x59x38xf32>) -> (tensor<2x16x59x38xf32> {jax.result_info = "result[0]"}, tensor<2x16x30x20xf32> {jax.result_info = "result[1]"}, tensor<2x16x29x19xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.transpose %arg0, dims = [0, 3, 2, 1] : (tensor<2x16x30x20xf32>) -> tensor<2x20x30x16xf32>
    %1 = stablehlo.custom_call @ResizeNearest(%0) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<2x20x30x16xf32>) -> tensor<2x38x59x16xf32>
    %2 = stablehlo.transpose %1, dims = [0, 3, 2, 1] : (tensor<2x38x59x16xf32>) -> tensor<2x16x59x38xf32>
    %3 = stablehlo.transpose %arg1, dims = [0, 3, 2, 1] : (tensor<2x16x59x38xf32>) -> tensor<2x38x59x16xf32>
    %4 = stablehlo.custom_call @ResizeNearestGrad(%3) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<2x38x59x16xf32>) -> tensor<2x20x30x16xf32>
    %5 = stablehlo.transpose %4, dims = [0, 3, 2, 1] : (tensor<2x20x30x16xf32>) -> tensor<2x16x30x20xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %7 = "stablehlo.reduce_window"(%2, %6) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %10 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %10 : tensor<f32>
    }) : (tensor<2x16x59x38xf32>, tensor<f32>) -> tensor<2x16x29x19xf32>
    %cst_0 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x16x29x19xf32>
    %9 = stablehlo.divide %7, %8 : tensor<2x16x29x19xf32>
    return %2, %5, %9 : tensor<2x16x59x38xf32>, tensor<2x16x30x20xf32>, tensor<2x16x29x19xf32>
  }
}
