"""Experiment code behind ``streamlearn experiment NAME`` and the benchmarks (importable, testable)."""
