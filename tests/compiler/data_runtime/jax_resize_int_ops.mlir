module @jit_int_ops attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4x5xi32>, %arg1: tensor<2x3x8x10xi32>, %arg2: tensor<2x3x4x5xui8>) -> (tensor<2x3x8x10xi32> {jax.result_info = "result[0]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[1]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[2]"}, tensor<2x3x8x10xui8> {jax.result_info = "result[3]"}, tensor<2x3x8x10xui8> {jax.result_info = "result[4]"}, tensor<2x3x8x10xui8> {jax.result_info = "result[5]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[6]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[7]"}, tensor<2x3x8x10xui8> {jax.result_info = "result[8]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[9]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[10]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[11]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[12]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[13]"}, tensor<2x3x8x10xui8> {jax.result_info = "result[14]"}, tensor<2x3x8x10xui8> {jax.result_info = "result[15]"}, tensor<2x3x8x10xui8> {jax.result_info = "result[16]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[17]"}, tensor<2x3x8x10xui8> {jax.result_info = "result[18]"}, tensor<2x3x8x10xi1> {jax.result_info = "result[19]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[20]"}, tensor<2x3x8x10xui8> {jax.result_info = "result[21]"}, tensor<2x3x8x10xi32> {jax.result_info = "result[22]"}, tensor<2x3x8x10xui8> {jax.result_info = "result[23]"}, tensor<2x3xi32> {jax.result_info = "result[24]"}, tensor<2x8x10xi32> {jax.result_info = "result[25]"}, tensor<2x3x8xi32> {jax.result_info = "result[26]"}, tensor<3x10xui8> {jax.result_info = "result[27]"}, tensor<2x3x10xi1> {jax.result_info = "result[28]"}, tensor<2x10xi1> {jax.result_info = "result[29]"}, tensor<2x3x8xi32> {jax.result_info = "result[30]"}, tensor<2x3x8xui8> {jax.result_info = "result[31]"}, tensor<2x3x10xui8> {jax.result_info = "result[32]"}, tensor<8x10xi32> {jax.result_info = "result[33]"}, tensor<300x2xi8> {jax.result_info = "result[34]"}, tensor<2x260xui8> {jax.result_info = "result[35]"}) {
    %0 = call @upsample(%arg0) : (tensor<2x3x4x5xi32>) -> tensor<2x3x8x10xi32>
    %1 = call @upsample_0(%arg2) : (tensor<2x3x4x5xui8>) -> tensor<2x3x8x10xui8>
    %2 = stablehlo.shift_left %0, %arg1 : tensor<2x3x8x10xi32>
    %3 = stablehlo.shift_right_arithmetic %0, %arg1 : tensor<2x3x8x10xi32>
    %4 = stablehlo.shift_right_logical %0, %arg1 : tensor<2x3x8x10xi32>
    %5 = stablehlo.shift_left %1, %1 : tensor<2x3x8x10xui8>
    %c = stablehlo.constant dense<5> : tensor<ui8>
    %6 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui8>) -> tensor<2x3x8x10xui8>
    %7 = stablehlo.shift_right_logical %1, %6 : tensor<2x3x8x10xui8>
    %8 = stablehlo.shift_right_arithmetic %1, %7 : tensor<2x3x8x10xui8>
    %c_0 = stablehlo.constant dense<5> : tensor<ui8>
    %9 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui8>) -> tensor<2x3x8x10xui8>
    %10 = stablehlo.shift_right_logical %1, %9 : tensor<2x3x8x10xui8>
    %11 = stablehlo.shift_right_logical %1, %10 : tensor<2x3x8x10xui8>
    %12 = stablehlo.remainder %0, %arg1 : tensor<2x3x8x10xi32>
    %13 = stablehlo.divide %0, %arg1 : tensor<2x3x8x10xi32>
    %c_1 = stablehlo.constant dense<4> : tensor<ui8>
    %14 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui8>) -> tensor<2x3x8x10xui8>
    %15 = stablehlo.shift_right_logical %1, %14 : tensor<2x3x8x10xui8>
    %16 = stablehlo.remainder %1, %15 : tensor<2x3x8x10xui8>
    %17 = stablehlo.add %0, %arg1 : tensor<2x3x8x10xi32>
    %18 = stablehlo.multiply %0, %arg1 : tensor<2x3x8x10xi32>
    %19 = stablehlo.negate %0 : tensor<2x3x8x10xi32>
    %20 = stablehlo.abs %0 : tensor<2x3x8x10xi32>
    %21 = stablehlo.sign %0 : tensor<2x3x8x10xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<ui8>
    %22 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui8>) -> tensor<2x3x8x10xui8>
    %23 = stablehlo.compare EQ, %1, %22, UNSIGNED : (tensor<2x3x8x10xui8>, tensor<2x3x8x10xui8>) -> tensor<2x3x8x10xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<ui8>
    %24 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<ui8>) -> tensor<2x3x8x10xui8>
    %c_4 = stablehlo.constant dense<1> : tensor<ui8>
    %25 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<ui8>) -> tensor<2x3x8x10xui8>
    %26 = stablehlo.select %23, %24, %25 : tensor<2x3x8x10xi1>, tensor<2x3x8x10xui8>
    %27 = stablehlo.multiply %1, %1 : tensor<2x3x8x10xui8>
    %c_5 = stablehlo.constant dense<1> : tensor<ui8>
    %28 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<ui8>) -> tensor<2x3x8x10xui8>
    %29 = stablehlo.shift_right_logical %1, %28 : tensor<2x3x8x10xui8>
    %c_6 = stablehlo.constant dense<3> : tensor<ui8>
    %30 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<ui8>) -> tensor<2x3x8x10xui8>
    %31 = stablehlo.multiply %29, %30 : tensor<2x3x8x10xui8>
    %32 = stablehlo.subtract %1, %31 : tensor<2x3x8x10xui8>
    %33 = stablehlo.and %0, %arg1 : tensor<2x3x8x10xi32>
    %34 = stablehlo.not %0 : tensor<2x3x8x10xi32>
    %35 = stablehlo.xor %34, %arg1 : tensor<2x3x8x10xi32>
    %36 = stablehlo.or %33, %35 : tensor<2x3x8x10xi32>
    %37 = stablehlo.not %1 : tensor<2x3x8x10xui8>
    %38 = stablehlo.compare GT, %0, %arg1, SIGNED : (tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>) -> tensor<2x3x8x10xi1>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %39 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<2x3x8x10xi32>
    %40 = stablehlo.compare EQ, %arg1, %39, SIGNED : (tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>) -> tensor<2x3x8x10xi1>
    %41 = stablehlo.not %40 : tensor<2x3x8x10xi1>
    %42 = stablehlo.and %38, %41 : tensor<2x3x8x10xi1>
    %c_8 = stablehlo.constant dense<-5> : tensor<i32>
    %43 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i32>) -> tensor<2x3x8x10xi32>
    %44 = stablehlo.compare LE, %0, %43, SIGNED : (tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>) -> tensor<2x3x8x10xi1>
    %45 = stablehlo.or %42, %44 : tensor<2x3x8x10xi1>
    %46 = stablehlo.maximum %0, %arg1 : tensor<2x3x8x10xi32>
    %c_9 = stablehlo.constant dense<200> : tensor<ui8>
    %47 = stablehlo.broadcast_in_dim %c_9, dims = [] : (tensor<ui8>) -> tensor<2x3x8x10xui8>
    %48 = stablehlo.minimum %1, %47 : tensor<2x3x8x10xui8>
    %49 = call @soft_int(%0) : (tensor<2x3x8x10xi32>) -> tensor<2x3x8x10xi32>
    %c_10 = stablehlo.constant dense<3> : tensor<ui8>
    %c_11 = stablehlo.constant dense<99> : tensor<ui8>
    %50 = stablehlo.broadcast_in_dim %c_10, dims = [] : (tensor<ui8>) -> tensor<2x3x8x10xui8>
    %51 = stablehlo.broadcast_in_dim %c_11, dims = [] : (tensor<ui8>) -> tensor<2x3x8x10xui8>
    %52 = stablehlo.clamp %50, %1, %51 : tensor<2x3x8x10xui8>
    %c_12 = stablehlo.constant dense<0> : tensor<i32>
    %53 = stablehlo.reduce(%0 init: %c_12) applies stablehlo.add across dimensions = [2, 3] : (tensor<2x3x8x10xi32>, tensor<i32>) -> tensor<2x3xi32>
    %c_13 = stablehlo.constant dense<1> : tensor<i32>
    %54 = stablehlo.reduce(%0 init: %c_13) applies stablehlo.multiply across dimensions = [1] : (tensor<2x3x8x10xi32>, tensor<i32>) -> tensor<2x8x10xi32>
    %c_14 = stablehlo.constant dense<-2147483648> : tensor<i32>
    %55 = stablehlo.reduce(%0 init: %c_14) applies stablehlo.maximum across dimensions = [3] : (tensor<2x3x8x10xi32>, tensor<i32>) -> tensor<2x3x8xi32>
    %c_15 = stablehlo.constant dense<255> : tensor<ui8>
    %56 = stablehlo.reduce(%1 init: %c_15) applies stablehlo.minimum across dimensions = [0, 2] : (tensor<2x3x8x10xui8>, tensor<ui8>) -> tensor<3x10xui8>
    %57 = stablehlo.compare GT, %0, %arg1, SIGNED : (tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>) -> tensor<2x3x8x10xi1>
    %c_16 = stablehlo.constant dense<true> : tensor<i1>
    %58 = stablehlo.reduce(%57 init: %c_16) applies stablehlo.and across dimensions = [2] : (tensor<2x3x8x10xi1>, tensor<i1>) -> tensor<2x3x10xi1>
    %59 = stablehlo.compare EQ, %0, %arg1, SIGNED : (tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>) -> tensor<2x3x8x10xi1>
    %c_17 = stablehlo.constant dense<false> : tensor<i1>
    %60 = stablehlo.reduce(%59 init: %c_17) applies stablehlo.or across dimensions = [1, 2] : (tensor<2x3x8x10xi1>, tensor<i1>) -> tensor<2x10xi1>
    %c_18 = stablehlo.constant dense<0> : tensor<i32>
    %61 = stablehlo.reduce(%0 init: %c_18) applies stablehlo.xor across dimensions = [3] : (tensor<2x3x8x10xi32>, tensor<i32>) -> tensor<2x3x8xi32>
    %c_19 = stablehlo.constant dense<0> : tensor<ui8>
    %62 = stablehlo.reduce(%1 init: %c_19) applies stablehlo.add across dimensions = [3] : (tensor<2x3x8x10xui8>, tensor<ui8>) -> tensor<2x3x8xui8>
    %c_20 = stablehlo.constant dense<255> : tensor<ui8>
    %63 = stablehlo.reduce(%1 init: %c_20) applies stablehlo.and across dimensions = [2] : (tensor<2x3x8x10xui8>, tensor<ui8>) -> tensor<2x3x10xui8>
    %c_21 = stablehlo.constant dense<0> : tensor<i32>
    %64 = stablehlo.reduce(%arg1 init: %c_21) applies stablehlo.or across dimensions = [0, 1] : (tensor<2x3x8x10xi32>, tensor<i32>) -> tensor<8x10xi32>
    %65 = stablehlo.iota dim = 0 : tensor<300x2xi8>
    %66 = stablehlo.iota dim = 1 : tensor<2x260xui8>
    return %2, %3, %4, %5, %8, %11, %12, %13, %16, %17, %18, %19, %20, %21, %26, %27, %32, %36, %37, %45, %46, %48, %49, %52, %53, %54, %55, %56, %58, %60, %61, %62, %63, %64, %65, %66 : tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xui8>, tensor<2x3x8x10xui8>, tensor<2x3x8x10xui8>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xui8>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xui8>, tensor<2x3x8x10xui8>, tensor<2x3x8x10xui8>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xui8>, tensor<2x3x8x10xi1>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xui8>, tensor<2x3x8x10xi32>, tensor<2x3x8x10xui8>, tensor<2x3xi32>, tensor<2x8x10xi32>, tensor<2x3x8xi32>, tensor<3x10xui8>, tensor<2x3x10xi1>, tensor<2x10xi1>, tensor<2x3x8xi32>, tensor<2x3x8xui8>, tensor<2x3x10xui8>, tensor<8x10xi32>, tensor<300x2xi8>, tensor<2x260xui8>
  }
  func.func private @upsample(%arg0: tensor<2x3x4x5xi32>) -> tensor<2x3x8x10xi32> {
    %0 = stablehlo.transpose %arg0, dims = [0, 3, 2, 1] : (tensor<2x3x4x5xi32>) -> tensor<2x5x4x3xi32>
    %1 = stablehlo.custom_call @ResizeNearest(%0) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<2x5x4x3xi32>) -> tensor<2x10x8x3xi32>
    %2 = stablehlo.transpose %1, dims = [0, 3, 2, 1] : (tensor<2x10x8x3xi32>) -> tensor<2x3x8x10xi32>
    return %2 : tensor<2x3x8x10xi32>
  }
  func.func private @upsample_0(%arg0: tensor<2x3x4x5xui8>) -> tensor<2x3x8x10xui8> {
    %0 = stablehlo.transpose %arg0, dims = [0, 3, 2, 1] : (tensor<2x3x4x5xui8>) -> tensor<2x5x4x3xui8>
    %1 = stablehlo.custom_call @ResizeNearest(%0) {backend_config = "\2200\22", operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>], result_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]} : (tensor<2x5x4x3xui8>) -> tensor<2x10x8x3xui8>
    %2 = stablehlo.transpose %1, dims = [0, 3, 2, 1] : (tensor<2x10x8x3xui8>) -> tensor<2x3x8x10xui8>
    return %2 : tensor<2x3x8x10xui8>
  }
  func.func private @soft_int(%arg0: tensor<2x3x8x10xi32>) -> tensor<2x3x8x10xi32> {
    %c = stablehlo.constant dense<-1000> : tensor<i32>
    %c_0 = stablehlo.constant dense<1000> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2x3x8x10xi32>
    %1 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<2x3x8x10xi32>
    %2 = stablehlo.clamp %0, %arg0, %1 : tensor<2x3x8x10xi32>
    return %2 : tensor<2x3x8x10xi32>
  }
}
