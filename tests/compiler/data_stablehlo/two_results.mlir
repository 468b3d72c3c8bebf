module @jit_two_results attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4x5xf32>) -> (tensor<2x3x8x10xf32> {jax.result_info = "result"}) {
    %0:2 = stablehlo.custom_call @Pair(%arg0) {backend_config = "pair", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>, dense<0> : tensor<1xindex>]} : (tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2xf32>)
    %1 = stablehlo.transpose %0#0, dims = [0, 3, 2, 1] : (tensor<2x3x4x5xf32>) -> tensor<2x5x4x3xf32>
    %2 = stablehlo.custom_call @ResizeNearest(%1) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<2x5x4x3xf32>) -> tensor<2x10x8x3xf32>
    %3 = stablehlo.transpose %2, dims = [0, 3, 2, 1] : (tensor<2x10x8x3xf32>) -> tensor<2x3x8x10xf32>
    return %3 : tensor<2x3x8x10xf32>
  }
}
