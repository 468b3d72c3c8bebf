module @jit_odd_bf16 attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x96x37x53xbf16>) -> (tensor<2x96x101x97xbf16> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg0, dims = [0, 3, 2, 1] : (tensor<2x96x37x53xbf16>) -> tensor<2x53x37x96xbf16>
    %1 = stablehlo.custom_call @ResizeNearest(%0) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<2x53x37x96xbf16>) -> tensor<2x97x101x96xbf16>
    %2 = stablehlo.transpose %1, dims = [0, 3, 2, 1] : (tensor<2x97x101x96xbf16>) -> tensor<2x96x101x97xbf16>
    return %2 : tensor<2x96x101x97xbf16>
  }
}
