"""Speed benchmarks (``gui-gym bench``); results are JSON, never asserted in unit tests."""
