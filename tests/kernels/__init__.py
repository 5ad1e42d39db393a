"""Tests of solver.kernels."""
