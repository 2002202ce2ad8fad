"""Which torch names the code learners copy calls, and how many of them mini_autograd supports.

scan.py counts the call sites in public corpora (run by hand, it needs their git directories);
its result is call_sites.csv. support.py reads that CSV and writes docs/call_sites.md.
"""
