"""Old import path of :mod:`gui_gym.runs.record` (docs/semi_online.md shows it); use that.

Kept so ``from gui_gym.recording import record_dataset`` keeps working; it ranks with the
``runs`` layer it re-exports (``tests/test_layers.py``).
"""

from gui_gym.runs.record import RecordReport, record_dataset

__all__ = ["RecordReport", "record_dataset"]
