"""The operation catalogue: each operation computes its result with numpy and, when a gradient
is wanted, records a backward node (named as in PyTorch) that saves exactly what PyTorch saves.
Backward formulas are written with Tensor operations, so `create_graph=True` records them too.
"""
