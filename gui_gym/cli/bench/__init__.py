"""Speed benchmarks that ``gui-gym bench`` runs (``benchmarks/bench_*.py`` call them too);
results are JSON, never asserted in unit tests."""
