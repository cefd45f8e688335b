"""Regenerate the packaged WikiHow corpus and task suite (byte-identical for a seed).

Usage: python scripts/generate_wikihow.py [--out-dir gui_gym/envs/wikihow/data]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gui_gym.core.trajectory import atomic_write_text
from gui_gym.envs.wikihow.gen_corpus import generate_corpus
from gui_gym.envs.wikihow.gen_tasks import generate_tasks

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "gui_gym" / "envs" / "wikihow" / "data"
CORPUS_SEED = 20240501
TASK_SEED = 577


def dump(data: Any) -> str:
    """The on-disk JSON form: stable key order, one level of indentation, UTF-8."""
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def generate(out_dir: Path) -> dict[str, Path]:
    """Write ``articles.json`` and ``tasks.json`` into ``out_dir`` atomically."""
    corpus = generate_corpus(CORPUS_SEED)
    tasks = generate_tasks(corpus, TASK_SEED)
    paths = {"articles": out_dir / "articles.json", "tasks": out_dir / "tasks.json"}
    atomic_write_text(paths["articles"], dump(corpus))
    atomic_write_text(paths["tasks"], dump(tasks))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    for name, path in generate(args.out_dir).items():
        print(f"{name}: {path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
