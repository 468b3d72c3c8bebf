module @jit_ops_mix attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x30xf32>, %arg1: tensor<4x8xf32>) -> (tensor<5x30xf32> {jax.result_info = "result[0]"}, tensor<5x4xf32> {jax.result_info = "result[1]"}, tensor<4xi32> {jax.result_info = "result[2]"}, tensor<4x8xi1> {jax.result_info = "result[3]"}, tensor<4x30xui8> {jax.result_info = "result[4]"}, tensor<4xbf16> {jax.result_info = "result[5]"}, tensor<4x8xf16> {jax.result_info = "result[6]"}) {
    %cst = stablehlo.constant dense<"0x000080BF8EB27BBF1C6577BFAA1773BF38CA6EBFC67C6ABF542F66BFE2E161BF70945DBFFE4659BF8CF954BF1AAC50BFA85E4CBF361148BFC4C343BF52763FBFE0283BBF6EDB36BFFC8D32BF8A402EBF18F329BFA6A525BF345821BFC20A1DBF50BD18BFDE6F14BF6C2210BFFAD40BBF888707BF163A03BF47D9FDBE633EF5BE7FA3ECBE9B08E4BEB76DDBBED3D2D2BEEF37CABE0B9DC1BE2702B9BE4367B0BE5FCCA7BE7B319FBE979696BEB3FB8DBECF6085BED58B79BE0D5668BE452057BE7DEA45BEB5B434BEED7E23BE254912BE5D1301BE29BBDFBD994FBDBD09E49ABDF1F070BDD1192CBD6185CEBC41AE09BC41AE093C6185CE3CD1192C3DF1F0703D09E49A3D994FBD3D29BBDF3D5D13013E2549123EED7E233EB5B4343E7DEA453E4520573E0D56683ED58B793ECF60853EB3FB8D3E9796963E7B319F3E5FCCA73E4367B03E2702B93E0B9DC13EEF37CA3ED3D2D23EB76DDB3E9B08E43E7FA3EC3E633EF53E47D9FD3E163A033F8887073FFAD40B3F6C22103FDE6F143F50BD183FC20A1D3F3458213FA6A5253F18F3293F8A402E3FFC8D323F6EDB363FE0283B3F52763F3FC4C3433F3611483FA85E4C3F1AAC503F8CF9543FFE46593F70945D3FE2E1613F542F663FC67C6A3F38CA6E3FAA17733F1C65773F8EB27B3F0000803F"> : tensor<4x30xf32>
    %cst_0 = stablehlo.constant dense<[1.500000e+00, -0.000000e+00, 0x7F80, 0x7FC0]> : tensor<4xbf16>
    %cst_1 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x30xf32>
    %1 = stablehlo.compare GT, %arg0, %0, FLOAT : (tensor<4x30xf32>, tensor<4x30xf32>) -> tensor<4x30xi1>
    %cst_2 = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = call @clip(%arg0, %cst_2, %cst_3) : (tensor<4x30xf32>, tensor<f32>, tensor<f32>) -> tensor<4x30xf32>
    %3 = stablehlo.exponential %arg0 : tensor<4x30xf32>
    %4 = call @_where(%1, %2, %3) : (tensor<4x30xi1>, tensor<4x30xf32>, tensor<4x30xf32>) -> tensor<4x30xf32>
    %5 = stablehlo.add %4, %cst : tensor<4x30xf32>
    %6 = stablehlo.slice %arg1 [0:4, 1:5:2] : (tensor<4x8xf32>) -> tensor<4x2xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %7 = call @_pad(%6, %c) : (tensor<4x2xf32>, tensor<i32>) -> tensor<5x4xf32>
    %8 = stablehlo.iota dim = 0 : tensor<30xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [1] : (tensor<30xf32>) -> tensor<1x30xf32>
    %10 = stablehlo.concatenate %5, %9, dim = 0 : (tensor<4x30xf32>, tensor<1x30xf32>) -> tensor<5x30xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.reduce(%arg1 init: %cst_4) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %cst_5 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %12 = stablehlo.divide %11, %cst_5 : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<f32>) -> tensor<4x30xf32>
    %14 = stablehlo.compare GT, %5, %13, FLOAT : (tensor<4x30xf32>, tensor<4x30xf32>) -> tensor<4x30xi1>
    %15 = stablehlo.convert %14 : (tensor<4x30xi1>) -> tensor<4x30xi32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %16 = stablehlo.reduce(%15 init: %c_6) applies stablehlo.add across dimensions = [1] : (tensor<4x30xi32>, tensor<i32>) -> tensor<4xi32>
    %17 = stablehlo.slice %arg0 [0:4, 0:8] : (tensor<4x30xf32>) -> tensor<4x8xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %19 = stablehlo.compare LT, %17, %18, FLOAT : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %21 = stablehlo.compare GT, %arg1, %20, FLOAT : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
    %22 = stablehlo.and %19, %21 : tensor<4x8xi1>
    %cst_9 = stablehlo.constant dense<2.550000e+02> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<4x30xf32>
    %24 = stablehlo.multiply %arg0, %23 : tensor<4x30xf32>
    %25 = stablehlo.convert %24 : (tensor<4x30xf32>) -> tensor<4x30xui8>
    %26 = stablehlo.convert %arg1 : (tensor<4x8xf32>) -> tensor<4x8xf16>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f16>
    %27 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f16>) -> tensor<4x8xf16>
    %28 = stablehlo.divide %27, %26 : tensor<4x8xf16>
    return %10, %7, %16, %22, %25, %cst_0, %28 : tensor<5x30xf32>, tensor<5x4xf32>, tensor<4xi32>, tensor<4x8xi1>, tensor<4x30xui8>, tensor<4xbf16>, tensor<4x8xf16>
  }
  func.func private @clip(%arg0: tensor<4x30xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<4x30xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4x30xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<4x30xf32>
    %3 = stablehlo.convert %arg2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<4x30xf32>
    %5 = stablehlo.minimum %4, %2 : tensor<4x30xf32>
    return %5 : tensor<4x30xf32>
  }
  func.func private @_where(%arg0: tensor<4x30xi1>, %arg1: tensor<4x30xf32>, %arg2: tensor<4x30xf32>) -> tensor<4x30xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x30xi1>, tensor<4x30xf32>
    return %0 : tensor<4x30xf32>
  }
  func.func private @_pad(%arg0: tensor<4x2xf32>, %arg1: tensor<i32>) -> tensor<5x4xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [0, 2], interior = [0, 0] : (tensor<4x2xf32>, tensor<f32>) -> tensor<5x4xf32>
    return %1 : tensor<5x4xf32>
  }
}
