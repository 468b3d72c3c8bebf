module @jit_float_ops attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x6x5xf32>, %arg1: tensor<2x3x12x10xf32>) -> (tensor<2x3x12x10xf32> {jax.result_info = "result[0]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[1]"}, tensor<2x3x12x4xf32> {jax.result_info = "result[2]"}, tensor<2x9x12x10xf32> {jax.result_info = "result[3]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[4]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[5]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[6]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[7]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[8]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[9]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[10]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[11]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[12]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[13]"}, tensor<2x3x12x10xi1> {jax.result_info = "result[14]"}, tensor<2x3x12x10xi1> {jax.result_info = "result[15]"}, tensor<2x12xf32> {jax.result_info = "result[16]"}, tensor<3x12x10xf32> {jax.result_info = "result[17]"}, tensor<2x3x10xf32> {jax.result_info = "result[18]"}, tensor<2x3xi32> {jax.result_info = "result[19]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[20]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[21]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[22]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[23]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[24]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[25]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[26]"}, tensor<2x3x12x10xf32> {jax.result_info = "result[27]"}, tensor<2x3xf32> {jax.result_info = "result[28]"}, tensor<2x3x4xf32> {jax.result_info = "result[29]"}) {
    %0 = call @upsample(%arg0) : (tensor<2x3x6x5xf32>) -> tensor<2x3x12x10xf32>
    %1 = stablehlo.compare GT, %0, %arg1, FLOAT : (tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>) -> tensor<2x3x12x10xi1>
    %2 = stablehlo.subtract %0, %arg1 : tensor<2x3x12x10xf32>
    %3 = stablehlo.multiply %arg1, %arg1 : tensor<2x3x12x10xf32>
    %4 = stablehlo.negate %3 : tensor<2x3x12x10xf32>
    %5 = call @_where(%1, %2, %4) : (tensor<2x3x12x10xi1>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>) -> tensor<2x3x12x10xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %6 = call @soft_clip(%0, %cst) : (tensor<2x3x12x10xf32>, tensor<f32>) -> tensor<2x3x12x10xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %7 = call @soft_clip(%arg1, %cst_0) : (tensor<2x3x12x10xf32>, tensor<f32>) -> tensor<2x3x12x10xf32>
    %8 = stablehlo.add %6, %7 : tensor<2x3x12x10xf32>
    %9 = stablehlo.slice %0 [0:2, 0:3, 1:11:2, 0:10:3] : (tensor<2x3x12x10xf32>) -> tensor<2x3x5x4xf32>
    %cst_1 = stablehlo.constant dense<-0.000000e+00> : tensor<f32>
    %10 = stablehlo.pad %9, %cst_1, low = [0, 0, 1, -1], high = [0, 0, 2, 1], interior = [0, 0, 1, 0] : (tensor<2x3x5x4xf32>, tensor<f32>) -> tensor<2x3x12x4xf32>
    %11 = stablehlo.iota dim = 2 : tensor<2x3x12x10xf32>
    %12 = stablehlo.concatenate %0, %arg1, %11, dim = 1 : (tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>) -> tensor<2x9x12x10xf32>
    %13 = stablehlo.floor %0 : tensor<2x3x12x10xf32>
    %14 = stablehlo.ceil %arg1 : tensor<2x3x12x10xf32>
    %15 = stablehlo.sign %0 : tensor<2x3x12x10xf32>
    %16 = stablehlo.abs %arg1 : tensor<2x3x12x10xf32>
    %cst_2 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x3x12x10xf32>
    %18 = stablehlo.multiply %arg1, %17 : tensor<2x3x12x10xf32>
    %19 = call @round(%18) : (tensor<2x3x12x10xf32>) -> tensor<2x3x12x10xf32>
    %cst_3 = stablehlo.constant dense<7.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x3x12x10xf32>
    %21 = stablehlo.multiply %0, %20 : tensor<2x3x12x10xf32>
    %22 = stablehlo.remainder %21, %arg1 : tensor<2x3x12x10xf32>
    %23 = stablehlo.maximum %0, %arg1 : tensor<2x3x12x10xf32>
    %24 = stablehlo.negate %arg1 : tensor<2x3x12x10xf32>
    %25 = stablehlo.minimum %0, %24 : tensor<2x3x12x10xf32>
    %26 = stablehlo.abs %0 : tensor<2x3x12x10xf32>
    %27 = stablehlo.sqrt %26 : tensor<2x3x12x10xf32>
    %28 = stablehlo.divide %0, %arg1 : tensor<2x3x12x10xf32>
    %29 = stablehlo.is_finite %0 : (tensor<2x3x12x10xf32>) -> tensor<2x3x12x10xi1>
    %30 = stablehlo.compare GE, %0, %arg1, FLOAT : (tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>) -> tensor<2x3x12x10xi1>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<2x3x12x10xf32>
    %32 = stablehlo.compare LT, %arg1, %31, FLOAT : (tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>) -> tensor<2x3x12x10xi1>
    %33 = stablehlo.xor %30, %32 : tensor<2x3x12x10xi1>
    %34 = stablehlo.compare NE, %0, %0, FLOAT : (tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>) -> tensor<2x3x12x10xi1>
    %35 = stablehlo.or %33, %34 : tensor<2x3x12x10xi1>
    %36 = stablehlo.exponential %0 : tensor<2x3x12x10xf32>
    %37 = stablehlo.abs %arg1 : tensor<2x3x12x10xf32>
    %38 = stablehlo.log %37 : tensor<2x3x12x10xf32>
    %39 = stablehlo.abs %0 : tensor<2x3x12x10xf32>
    %40 = stablehlo.rsqrt %39 : tensor<2x3x12x10xf32>
    %41 = stablehlo.tanh %arg1 : tensor<2x3x12x10xf32>
    %42 = stablehlo.negate %0 : tensor<2x3x12x10xf32>
    %43 = stablehlo.exponential %42 : tensor<2x3x12x10xf32>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %44 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x3x12x10xf32>
    %45 = stablehlo.add %44, %43 : tensor<2x3x12x10xf32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %46 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<2x3x12x10xf32>
    %47 = stablehlo.divide %46, %45 : tensor<2x3x12x10xf32>
    %48 = stablehlo.abs %0 : tensor<2x3x12x10xf32>
    %49 = stablehlo.power %48, %arg1 : tensor<2x3x12x10xf32>
    %50 = stablehlo.exponential_minus_one %arg1 : tensor<2x3x12x10xf32>
    %51 = stablehlo.abs %0 : tensor<2x3x12x10xf32>
    %52 = stablehlo.log_plus_one %51 : tensor<2x3x12x10xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %53 = stablehlo.reduce(%arg1 init: %cst_7) applies stablehlo.add across dimensions = [2, 3] : (tensor<2x3x12x10xf32>, tensor<f32>) -> tensor<2x3xf32>
    %54 = stablehlo.slice %0 [0:2, 0:3, 0:4, 0:4] : (tensor<2x3x12x10xf32>) -> tensor<2x3x4x4xf32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %55 = stablehlo.reduce(%54 init: %cst_8) applies stablehlo.multiply across dimensions = [3] : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
    %cst_9 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %56 = stablehlo.reduce(%0 init: %cst_9) applies stablehlo.maximum across dimensions = [1, 3] : (tensor<2x3x12x10xf32>, tensor<f32>) -> tensor<2x12xf32>
    %cst_10 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %57 = stablehlo.reduce(%arg1 init: %cst_10) applies stablehlo.minimum across dimensions = [0] : (tensor<2x3x12x10xf32>, tensor<f32>) -> tensor<3x12x10xf32>
    %cst_11 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %58 = stablehlo.reduce(%0 init: %cst_11) applies stablehlo.maximum across dimensions = [2] : (tensor<2x3x12x10xf32>, tensor<f32>) -> tensor<2x3x10xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<2x3x12x10xf32>
    %60 = stablehlo.compare GT, %0, %59, FLOAT : (tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>) -> tensor<2x3x12x10xi1>
    %61 = stablehlo.convert %60 : (tensor<2x3x12x10xi1>) -> tensor<2x3x12x10xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %62 = stablehlo.reduce(%61 init: %c) applies stablehlo.add across dimensions = [2, 3] : (tensor<2x3x12x10xi32>, tensor<i32>) -> tensor<2x3xi32>
    return %5, %8, %10, %12, %13, %14, %15, %16, %19, %22, %23, %25, %27, %28, %29, %35, %56, %57, %58, %62, %36, %38, %40, %41, %47, %49, %50, %52, %53, %55 : tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x4xf32>, tensor<2x9x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xi1>, tensor<2x3x12x10xi1>, tensor<2x12xf32>, tensor<3x12x10xf32>, tensor<2x3x10xf32>, tensor<2x3xi32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3xf32>, tensor<2x3x4xf32>
  }
  func.func private @upsample(%arg0: tensor<2x3x6x5xf32>) -> tensor<2x3x12x10xf32> {
    %0 = stablehlo.transpose %arg0, dims = [0, 3, 2, 1] : (tensor<2x3x6x5xf32>) -> tensor<2x5x6x3xf32>
    %1 = stablehlo.custom_call @ResizeNearest(%0) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<2x5x6x3xf32>) -> tensor<2x10x12x3xf32>
    %2 = stablehlo.transpose %1, dims = [0, 3, 2, 1] : (tensor<2x10x12x3xf32>) -> tensor<2x3x12x10xf32>
    return %2 : tensor<2x3x12x10xf32>
  }
  func.func private @_where(%arg0: tensor<2x3x12x10xi1>, %arg1: tensor<2x3x12x10xf32>, %arg2: tensor<2x3x12x10xf32>) -> tensor<2x3x12x10xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<2x3x12x10xi1>, tensor<2x3x12x10xf32>
    return %0 : tensor<2x3x12x10xf32>
  }
  func.func private @soft_clip(%arg0: tensor<2x3x12x10xf32>, %arg1: tensor<f32>) -> tensor<2x3x12x10xf32> {
    %0 = stablehlo.negate %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<2x3x12x10xf32>
    %2 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<2x3x12x10xf32>
    %3 = stablehlo.clamp %1, %arg0, %2 : tensor<2x3x12x10xf32>
    return %3 : tensor<2x3x12x10xf32>
  }
  func.func private @round(%arg0: tensor<2x3x12x10xf32>) -> tensor<2x3x12x10xf32> {
    %0 = stablehlo.round_nearest_even %arg0 : tensor<2x3x12x10xf32>
    return %0 : tensor<2x3x12x10xf32>
  }
}
