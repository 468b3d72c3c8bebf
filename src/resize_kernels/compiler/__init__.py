"""The compiler: HLO in, validated, lowered through the internal-kernel registry."""
