"""Baselines: the seed's lowered kernel ("seed"), the public NKI sample's ("public") and the plain exact kernel
("exact"). Selectable by name, never among the default's candidates: they are what the others are measured against.
"""
