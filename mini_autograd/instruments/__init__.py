"""The course's instruments: what PyTorch does not show, for mini_autograd and torch alike.

viz (pictures of the graph), compare (the two libraries side by side), memory (saved bytes and
the ledger), freeing_log, diagnose and torch_doctor (the error explained), graph_walk (the one
walk over a graph). They read graphs through PyTorch's attributes and import no nn or optim.
"""
