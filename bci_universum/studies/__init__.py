"""Reproductions of the seed papers' experiments, runnable from the CLI and the benchmarks."""
