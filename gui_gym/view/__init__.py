"""See what the agent did: static HTML reports of trajectory files, and a local server.

``gui-gym view RUN.jsonl [...] --out report.html`` and ``gui-gym serve DIR`` (docs/viewer.md).
Nothing here is imported by ``import gui_gym``; the page needs no network and no server.
"""

from gui_gym.view.page import ReportSummary, build_report, embed_json, render_report, run_names
from gui_gym.view.runs import (
    OUTCOMES,
    Run,
    ViewError,
    category_success,
    inline_image,
    load_run,
    reward_series,
    screenshot_path,
)

__all__ = [
    "OUTCOMES",
    "ReportSummary",
    "Run",
    "ViewError",
    "build_report",
    "category_success",
    "embed_json",
    "inline_image",
    "load_run",
    "render_report",
    "reward_series",
    "run_names",
    "screenshot_path",
]
