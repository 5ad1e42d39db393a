"""Tests of solver.search."""
