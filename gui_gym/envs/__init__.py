"""Benchmarks, one sub-package each. Import a sub-package to use its env class directly;
``gym.make`` imports them lazily through the string entry points registered in ``gui_gym``."""
