"""Tests of solver.play."""
