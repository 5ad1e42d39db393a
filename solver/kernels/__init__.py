"""numba kernels: the compiled hot loops (bit tricks, move and unmove generation, ranking).

Kernels are module-level ``@njit`` functions over ints and arrays only; the Python modules
(:mod:`solver.index`, :mod:`solver.retro.driver`) validate input and call them.
"""
