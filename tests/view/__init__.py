"""Tests of solver.view."""
