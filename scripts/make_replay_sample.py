"""Rebuild the bundled semi-online replay sample (``gui_gym/envs/replay/data/wikihow_sample``).

Eight oracle episodes of WikiHow test tasks with UI trees and templated expert thoughts, no
image files (the env draws screenshots from the trees). The recording is deterministic, so
the output is byte-identical on every run; ``tests/test_replay_env.py`` checks that.

Usage: python scripts/make_replay_sample.py [--out DIR]
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from gui_gym.runs.record import record_dataset

DEFAULT_OUT = (
    Path(__file__).resolve().parent.parent
    / "gui_gym"
    / "envs"
    / "replay"
    / "data"
    / "wikihow_sample"
)
SAMPLE_SETTINGS = {
    "env_id": "GuiGym/WikiHow-v0",
    "agent": "oracle",
    "episodes": 8,
    "seed": 0,
    "env_kwargs": {"split": "test"},
    # spread over the kinds of the test split: Cross-Page, In-Page and QA
    "tasks": [
        "plan_a_backpacking_trip-references",
        "track_a_usps_package-author",
        "drill_a_straight_hole-author_article",
        "clean_oil_paint_brushes-bookmark",
        "sleep_with_a_stuffy_nose-share",
        "study_the_night_before_an_exam-rate_yes",
        "reset_a_tripped_circuit_breaker-methods_count",
        "cite_a_book_in_chicago_style-category_name",
    ],
    "thoughts": "describe",
}


def build(out: Path) -> Path:
    """Record the sample into ``out`` (replacing what is there)."""
    if out.exists():
        shutil.rmtree(out)
    record_dataset(out=out, progress=False, **SAMPLE_SETTINGS)  # type: ignore[arg-type]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    print(f"wrote {build(args.out)}")


if __name__ == "__main__":
    main()
