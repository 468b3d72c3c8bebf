module @jit_relu_call attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x4x6x5xf32>) -> (tensor<1x4x12x10xf32> {jax.result_info = "result"}) {
    %0 = call @relu(%arg0) : (tensor<1x4x6x5xf32>) -> tensor<1x4x6x5xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x4x6x5xf32>
    %2 = stablehlo.multiply %1, %0 : tensor<1x4x6x5xf32>
    %3 = stablehlo.transpose %2, dims = [0, 3, 2, 1] : (tensor<1x4x6x5xf32>) -> tensor<1x5x6x4xf32>
    %4 = stablehlo.custom_call @ResizeNearest(%3) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<1x5x6x4xf32>) -> tensor<1x10x12x4xf32>
    %5 = stablehlo.transpose %4, dims = [0, 3, 2, 1] : (tensor<1x10x12x4xf32>) -> tensor<1x4x12x10xf32>
    return %5 : tensor<1x4x12x10xf32>
  }
  func.func private @relu(%arg0: tensor<1x4x6x5xf32>) -> tensor<1x4x6x5xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x4x6x5xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<1x4x6x5xf32>
    return %1 : tensor<1x4x6x5xf32>
  }
}
