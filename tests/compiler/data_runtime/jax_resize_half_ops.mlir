module @jit_half_ops attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x6x5xbf16>, %arg1: tensor<2x3x12x10xf16>) -> (tensor<2x3x12x10xbf16> {jax.result_info = "result[0]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[1]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[2]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[3]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[4]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[5]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[6]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[7]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[8]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[9]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[10]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[11]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[12]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[13]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[14]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[15]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[16]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[17]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[18]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[19]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[20]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[21]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[22]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[23]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[24]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[25]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[26]"}, tensor<2x3x12x10xi1> {jax.result_info = "result[27]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[28]"}, tensor<2x3x12xbf16> {jax.result_info = "result[29]"}, tensor<2x3xf16> {jax.result_info = "result[30]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[31]"}, tensor<2x3x12x10xbf16> {jax.result_info = "result[32]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[33]"}, tensor<2x3x12x10xf16> {jax.result_info = "result[34]"}, tensor<2x3x12xbf16> {jax.result_info = "result[35]"}, tensor<2x3x10xf16> {jax.result_info = "result[36]"}) {
    %0 = call @upsample(%arg0) : (tensor<2x3x6x5xbf16>) -> tensor<2x3x12x10xbf16>
    %1 = stablehlo.slice %arg1 [0:2, 0:3, 0:12:2, 0:10:2] : (tensor<2x3x12x10xf16>) -> tensor<2x3x6x5xf16>
    %2 = call @upsample_0(%1) : (tensor<2x3x6x5xf16>) -> tensor<2x3x12x10xf16>
    %3 = stablehlo.multiply %0, %0 : tensor<2x3x12x10xbf16>
    %4 = stablehlo.add %3, %0 : tensor<2x3x12x10xbf16>
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<bf16>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<bf16>) -> tensor<2x3x12x10xbf16>
    %6 = stablehlo.multiply %0, %5 : tensor<2x3x12x10xbf16>
    %7 = stablehlo.subtract %0, %6 : tensor<2x3x12x10xbf16>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %8 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<bf16>) -> tensor<2x3x12x10xbf16>
    %9 = stablehlo.maximum %0, %8 : tensor<2x3x12x10xbf16>
    %10 = stablehlo.negate %0 : tensor<2x3x12x10xbf16>
    %11 = stablehlo.minimum %0, %10 : tensor<2x3x12x10xbf16>
    %cst_1 = stablehlo.constant dense<-1.000000e+00> : tensor<bf16>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %12 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<bf16>) -> tensor<2x3x12x10xbf16>
    %13 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<bf16>) -> tensor<2x3x12x10xbf16>
    %14 = stablehlo.clamp %12, %0, %13 : tensor<2x3x12x10xbf16>
    %15 = stablehlo.negate %0 : tensor<2x3x12x10xbf16>
    %16 = stablehlo.abs %0 : tensor<2x3x12x10xbf16>
    %17 = stablehlo.sign %0 : tensor<2x3x12x10xbf16>
    %cst_3 = stablehlo.constant dense<3.000000e+00> : tensor<bf16>
    %18 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<bf16>) -> tensor<2x3x12x10xbf16>
    %19 = stablehlo.multiply %0, %18 : tensor<2x3x12x10xbf16>
    %20 = stablehlo.floor %19 : tensor<2x3x12x10xbf16>
    %cst_4 = stablehlo.constant dense<3.000000e+00> : tensor<bf16>
    %21 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<bf16>) -> tensor<2x3x12x10xbf16>
    %22 = stablehlo.multiply %0, %21 : tensor<2x3x12x10xbf16>
    %23 = stablehlo.ceil %22 : tensor<2x3x12x10xbf16>
    %24 = stablehlo.sqrt %0 : tensor<2x3x12x10xbf16>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %25 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<bf16>) -> tensor<2x3x12x10xbf16>
    %26 = stablehlo.subtract %0, %25 : tensor<2x3x12x10xbf16>
    %27 = stablehlo.divide %0, %26 : tensor<2x3x12x10xbf16>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %28 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<bf16>) -> tensor<2x3x12x10xbf16>
    %29 = stablehlo.compare GT, %0, %28, FLOAT : (tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>) -> tensor<2x3x12x10xi1>
    %cst_7 = stablehlo.constant dense<2.000000e+00> : tensor<bf16>
    %30 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<bf16>) -> tensor<2x3x12x10xbf16>
    %31 = stablehlo.multiply %0, %30 : tensor<2x3x12x10xbf16>
    %32 = call @_where(%29, %0, %31) : (tensor<2x3x12x10xi1>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>) -> tensor<2x3x12x10xbf16>
    %33 = stablehlo.convert %0 : (tensor<2x3x12x10xbf16>) -> tensor<2x3x12x10xf16>
    %34 = stablehlo.convert %0 : (tensor<2x3x12x10xbf16>) -> tensor<2x3x12x10xf32>
    %35 = stablehlo.multiply %arg1, %2 : tensor<2x3x12x10xf16>
    %36 = stablehlo.add %arg1, %2 : tensor<2x3x12x10xf16>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f16>
    %37 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f16>) -> tensor<2x3x12x10xf16>
    %38 = stablehlo.subtract %2, %37 : tensor<2x3x12x10xf16>
    %39 = stablehlo.divide %arg1, %38 : tensor<2x3x12x10xf16>
    %40 = stablehlo.negate %arg1 : tensor<2x3x12x10xf16>
    %41 = stablehlo.abs %arg1 : tensor<2x3x12x10xf16>
    %42 = stablehlo.sign %arg1 : tensor<2x3x12x10xf16>
    %43 = stablehlo.maximum %arg1, %2 : tensor<2x3x12x10xf16>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f16>
    %44 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f16>) -> tensor<2x3x12x10xf16>
    %45 = stablehlo.minimum %arg1, %44 : tensor<2x3x12x10xf16>
    %46 = stablehlo.sqrt %arg1 : tensor<2x3x12x10xf16>
    %cst_10 = stablehlo.constant dense<3.000000e+00> : tensor<f16>
    %47 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f16>) -> tensor<2x3x12x10xf16>
    %48 = stablehlo.multiply %arg1, %47 : tensor<2x3x12x10xf16>
    %49 = stablehlo.floor %48 : tensor<2x3x12x10xf16>
    %50 = stablehlo.convert %arg1 : (tensor<2x3x12x10xf16>) -> tensor<2x3x12x10xbf16>
    %51 = stablehlo.convert %arg1 : (tensor<2x3x12x10xf16>) -> tensor<2x3x12x10xf32>
    %52 = stablehlo.compare LT, %2, %arg1, FLOAT : (tensor<2x3x12x10xf16>, tensor<2x3x12x10xf16>) -> tensor<2x3x12x10xi1>
    %53 = stablehlo.remainder %arg1, %2 : tensor<2x3x12x10xf16>
    %cst_11 = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %54 = stablehlo.reduce(%0 init: %cst_11) applies stablehlo.maximum across dimensions = [3] : (tensor<2x3x12x10xbf16>, tensor<bf16>) -> tensor<2x3x12xbf16>
    %cst_12 = stablehlo.constant dense<0x7C00> : tensor<f16>
    %55 = stablehlo.reduce(%arg1 init: %cst_12) applies stablehlo.minimum across dimensions = [2, 3] : (tensor<2x3x12x10xf16>, tensor<f16>) -> tensor<2x3xf16>
    %56 = stablehlo.exponential %0 : tensor<2x3x12x10xbf16>
    %57 = stablehlo.tanh %0 : tensor<2x3x12x10xbf16>
    %58 = stablehlo.log %arg1 : tensor<2x3x12x10xf16>
    %59 = stablehlo.negate %arg1 : tensor<2x3x12x10xf16>
    %60 = stablehlo.exponential %59 : tensor<2x3x12x10xf16>
    %cst_13 = stablehlo.constant dense<1.000000e+00> : tensor<f16>
    %61 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f16>) -> tensor<2x3x12x10xf16>
    %62 = stablehlo.add %61, %60 : tensor<2x3x12x10xf16>
    %cst_14 = stablehlo.constant dense<1.000000e+00> : tensor<f16>
    %63 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f16>) -> tensor<2x3x12x10xf16>
    %64 = stablehlo.divide %63, %62 : tensor<2x3x12x10xf16>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %65 = stablehlo.reduce(%0 init: %cst_15) applies stablehlo.add across dimensions = [3] : (tensor<2x3x12x10xbf16>, tensor<bf16>) -> tensor<2x3x12xbf16>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f16>
    %66 = stablehlo.reduce(%arg1 init: %cst_16) applies stablehlo.add across dimensions = [2] : (tensor<2x3x12x10xf16>, tensor<f16>) -> tensor<2x3x10xf16>
    return %4, %7, %9, %11, %14, %15, %16, %17, %20, %23, %24, %27, %32, %33, %34, %35, %36, %39, %40, %41, %42, %43, %45, %46, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %64, %65, %66 : tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xi1>, tensor<2x3x12x10xf16>, tensor<2x3x12xbf16>, tensor<2x3xf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xbf16>, tensor<2x3x12x10xf16>, tensor<2x3x12x10xf16>, tensor<2x3x12xbf16>, tensor<2x3x10xf16>
  }
  func.func private @upsample(%arg0: tensor<2x3x6x5xbf16>) -> tensor<2x3x12x10xbf16> {
    %0 = stablehlo.transpose %arg0, dims = [0, 3, 2, 1] : (tensor<2x3x6x5xbf16>) -> tensor<2x5x6x3xbf16>
    %1 = stablehlo.custom_call @ResizeNearest(%0) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<2x5x6x3xbf16>) -> tensor<2x10x12x3xbf16>
    %2 = stablehlo.transpose %1, dims = [0, 3, 2, 1] : (tensor<2x10x12x3xbf16>) -> tensor<2x3x12x10xbf16>
    return %2 : tensor<2x3x12x10xbf16>
  }
  func.func private @upsample_0(%arg0: tensor<2x3x6x5xf16>) -> tensor<2x3x12x10xf16> {
    %0 = stablehlo.transpose %arg0, dims = [0, 3, 2, 1] : (tensor<2x3x6x5xf16>) -> tensor<2x5x6x3xf16>
    %1 = stablehlo.custom_call @ResizeNearest(%0) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<2x5x6x3xf16>) -> tensor<2x10x12x3xf16>
    %2 = stablehlo.transpose %1, dims = [0, 3, 2, 1] : (tensor<2x10x12x3xf16>) -> tensor<2x3x12x10xf16>
    return %2 : tensor<2x3x12x10xf16>
  }
  func.func private @_where(%arg0: tensor<2x3x12x10xi1>, %arg1: tensor<2x3x12x10xbf16>, %arg2: tensor<2x3x12x10xbf16>) -> tensor<2x3x12x10xbf16> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<2x3x12x10xi1>, tensor<2x3x12x10xbf16>
    return %0 : tensor<2x3x12x10xbf16>
  }
}
