"""The compiler: HLO in, validated, lowered through the internal-kernel registry, kernels traced; out comes data
(a CompiledModule), which resize_kernels.runtime loads and runs."""
