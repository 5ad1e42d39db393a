"""Tests of solver.game."""
