"""Confinement: the worker's Landlock ruleset and limits (sandbox.py), the reference module sealed
before any candidate code runs (refseal.py), the compilers the ruleset lets run (toolchain.py), and the watch that tells whether a candidate ran the reference's
code (refwatch.py).

May import: nothing else of the worker (the bottom floor, beside device/).
"""
