"""Task rows for the engines: one row per (task, seed) of a split, in the form each engine's
dataset loader reads.

* :func:`task_rows`: ``{"env_id", "task_id", "seed", "split", "instruction", "prompt"}`` per
  row (``prompt``: the prompt format's first-step messages, text only).
* :func:`verl_rows`: verl's RL dataset columns (``data_source``, ``prompt``, ``agent_name``,
  ``ability``, ``reward_model``, ``extra_info`` with ``index``, ``env_id``, ``task_id``,
  ``seed``, ``split``). verl's ``RLHFDataset`` reads the chat messages from the column named
  by ``data.prompt_key`` (``prompt``) and hands them to the agent loop as ``raw_prompt``; the
  loop named by ``agent_name`` (:data:`gui_gym.integrations.verl.AGENT_NAME`) rebuilds the
  prompt from the env, so the column serves verl's prompt-length filter and readers.
* :func:`write_rows`: the rows as parquet (verl) or JSON lines, written atomically.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gymnasium.error import DependencyNotInstalled

from gui_gym.core.files import atomic_write_bytes, atomic_write_text

__all__ = ["FORMATS", "task_rows", "verl_rows", "write_rows"]

FORMATS = ("verl", "jsonl")
"""What :func:`write_rows` writes: ``verl`` (parquet of :func:`verl_rows`) and ``jsonl``
(:func:`task_rows`, one JSON object a line)."""

VERL_AGENT_NAME = "gui_gym"
"""The verl agent loop the rows name (``gui_gym.integrations.verl.AGENT_NAME``; kept here so
exporting needs no verl)."""


def _text_only(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    from gui_gym.models.llm.chat_messages import content_text

    return [{"role": m["role"], "content": content_text(m["content"])} for m in messages]


def task_rows(
    env: Any,
    env_id: str,
    *,
    split: str,
    seeds: Sequence[int] = (0,),
    tasks: Sequence[str] | None = None,
    prompt: str = "default",
) -> list[dict[str, Any]]:
    """One row per task of ``env``'s split and seed, with the first-step prompt.

    Args:
        env: ``gym.make(env_id, split=split, ...)`` (its tasks are the rows').
        env_id: The registered id the rows name.
        split: The split the env was made with (recorded in each row).
        seeds: Reset seeds; each task gets one row per seed.
        tasks: Task ids to keep (default: every task of the split).
        prompt: The prompt format of the first-step messages.

    Raises:
        ValueError: for a task id not in the split, an empty seed list or a bad seed.
    """
    from gui_gym.agents.prompts import PromptInput, get_prompt

    fmt = get_prompt(prompt)
    known = list(env.unwrapped.task_ids)
    chosen = list(tasks) if tasks else known
    missing = [t for t in chosen if t not in known]
    if missing:
        raise ValueError(f"task {missing[0]!r} is not in {env_id}'s {split} split")
    if not seeds:
        raise ValueError("give at least one seed")
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seeds must be ints >= 0, got {seed!r}")
    rows = []
    for task_id in chosen:
        for seed in seeds:
            observation, info = env.reset(seed=seed, options={"task": task_id})
            messages = fmt.build(
                PromptInput(
                    instruction=str(observation.get("instruction", "")),
                    screen=str(observation.get("screen", "")),
                    info=dict(info),
                )
            )
            rows.append(
                {
                    "env_id": env_id,
                    "task_id": str(info.get("task_id", task_id)),
                    "seed": int(seed),
                    "split": split,
                    "instruction": str(observation.get("instruction", "")),
                    "prompt": _text_only(messages),
                }
            )
    return rows


def verl_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`task_rows` in verl's RL dataset columns (see the module docstring)."""
    return [
        {
            "data_source": row["env_id"],
            "prompt": row["prompt"],
            "agent_name": VERL_AGENT_NAME,
            "ability": "gui",
            "reward_model": {"style": "gui_gym", "ground_truth": row["task_id"]},
            "extra_info": {
                "index": index,
                "env_id": row["env_id"],
                "task_id": row["task_id"],
                "seed": row["seed"],
                "split": row["split"],
            },
        }
        for index, row in enumerate(rows)
    ]


def write_rows(rows: Sequence[dict[str, Any]], path: str | Path, fmt: str = "verl") -> Path:
    """Write :func:`task_rows` to ``path`` atomically: ``verl`` as parquet of
    :func:`verl_rows`, ``jsonl`` as JSON lines.

    Raises:
        ValueError: for an unknown format.
        gymnasium.error.DependencyNotInstalled: for parquet without pyarrow.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; allowed: {', '.join(FORMATS)}")
    path = Path(path)
    if fmt == "jsonl":
        atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        return path
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as err:
        raise DependencyNotInstalled(
            f"writing parquet needs pyarrow ({err}); install it with: pip install 'gui-gym[parquet]'"
        ) from err
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(verl_rows(rows)), buffer)
    atomic_write_bytes(path, buffer.getvalue())
    return path
