"""Tests of solver.retro."""
