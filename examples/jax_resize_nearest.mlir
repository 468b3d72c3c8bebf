module @jit_sd2_upsample attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x1280x30x20xf32>) -> (tensor<1x1280x59x38xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg0, dims = [0, 3, 2, 1] : (tensor<1x1280x30x20xf32>) -> tensor<1x20x30x1280xf32>
    %1 = stablehlo.custom_call @ResizeNearest(%0) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<1x20x30x1280xf32>) -> tensor<1x38x59x1280xf32>
    %2 = stablehlo.transpose %1, dims = [0, 3, 2, 1] : (tensor<1x38x59x1280xf32>) -> tensor<1x1280x59x38xf32>
    return %2 : tensor<1x1280x59x38xf32>
  }
}
