"""PyTorch's autograd tests (test/test_autograd.py), run on torch and on mini_autograd.

README.md in this folder: the upstream commit, PyTorch's licence, the changes made in porting and
the upstream tests left out.
"""
