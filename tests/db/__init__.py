"""Tests of solver.db."""
