module @jit_upsample_pool attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x8x30x20xf32>, %arg1: tensor<8xf32>) -> (tensor<2x8x29x19xbf16> {jax.result_info = "result[0]"}, tensor<2x8x30x19xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.transpose %arg0, dims = [0, 3, 2, 1] : (tensor<2x8x30x20xf32>) -> tensor<2x20x30x8xf32>
    %1 = stablehlo.custom_call @ResizeNearest(%0) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<2x20x30x8xf32>) -> tensor<2x38x59x8xf32>
    %2 = stablehlo.transpose %1, dims = [0, 3, 2, 1] : (tensor<2x38x59x8xf32>) -> tensor<2x8x59x38xf32>
    %3 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<8xf32>) -> tensor<1x8x1x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2, 3] : (tensor<1x8x1x1xf32>) -> tensor<2x8x59x38xf32>
    %5 = stablehlo.add %2, %4 : tensor<2x8x59x38xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x8x59x38xf32>
    %7 = stablehlo.maximum %5, %6 : tensor<2x8x59x38xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<f32>
    %9 = "stablehlo.reduce_window"(%7, %8) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %15 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %15 : tensor<f32>
    }) : (tensor<2x8x59x38xf32>, tensor<f32>) -> tensor<2x8x29x19xf32>
    %cst_1 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x8x29x19xf32>
    %11 = stablehlo.divide %9, %10 : tensor<2x8x29x19xf32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<f32>
    %13 = "stablehlo.reduce_window"(%7, %12) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %15 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
      stablehlo.return %15 : tensor<f32>
    }) : (tensor<2x8x59x38xf32>, tensor<f32>) -> tensor<2x8x30x19xf32>
    %14 = stablehlo.convert %11 : (tensor<2x8x29x19xf32>) -> tensor<2x8x29x19xbf16>
    return %14, %13 : tensor<2x8x29x19xbf16>, tensor<2x8x30x19xf32>
  }
}
