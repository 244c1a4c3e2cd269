"""Benchmarks, run by ``python build.py bench``. Never imported by the package or tests."""
