"""The engine: tensors, the graph's nodes, saved tensors and the backward loop.

tensor, node, saved, engine and grad_mode are the autograd core proper; the other modules here
are what only they need (dtypes, devices, errors and their texts, hooks, inference mode, the
entry points of backward() and autograd.grad()). Nothing here imports the rest of mini_autograd.
"""
