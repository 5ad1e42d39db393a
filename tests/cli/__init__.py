"""Tests of solver.cli."""
