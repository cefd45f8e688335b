"""Trajectories as JSON Lines: one episode per line, written so a crash loses nothing.

Two ways to write, both crash-safe:

* :func:`write_jsonl` writes a whole file to a temporary sibling and renames it into place
  (``os.replace``), so readers see the old file or the new one, never half of one.
* :class:`TrajectoryWriter` appends one complete line per episode with a single ``write`` and
  an ``fsync``. If the process dies mid-write, the file ends in a torn line; the writer cuts
  it off when it next opens the file, and :func:`read_jsonl` skips it with a warning, so a run
  can resume where it stopped.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gui_gym.core.files import atomic_write_text
from gui_gym.core.untrusted_text import load_json

__all__ = [
    "RECORDED_INFO_KEYS",
    "Step",
    "Trajectory",
    "TrajectoryWriter",
    "atomic_write_text",
    "check_replaceable_folder",
    "dumps_json",
    "errors_naming",
    "json_default",
    "json_safe",
    "open_run_log",
    "read_jsonl",
    "read_jsonl_lines",
    "read_trajectories",
    "recorded_info",
    "write_jsonl",
    "write_trajectories",
]


@dataclass
class Step:
    """One step of an episode: what the agent saw, what it did, what came back.

    Attributes:
        index: 0-based step number.
        screen: Rendered screen the action was chosen on.
        action: The action as sent (canonical grammar when it parsed, raw text otherwise).
        action_valid: Whether the env accepted the action.
        action_description: Natural-language description (``info["action_description"]``).
        reward: Reward returned by the (possibly wrapped) env.
        task_reward: The base env's outcome reward for this step.
        terminated, truncated: Episode-end flags after the step.
        milestones: Milestones reached so far, after the step.
        thought: The agent's reasoning, when it gave one.
        tree: The UI tree the action was chosen on (``UITree.to_dict()``), when recorded.
        screenshot: Path of a saved screenshot, relative to the trajectory file, if any (in
            memory only, a live episode's HxWx3 array when an LLM milestone generator reads
            screenshots; such trajectories are not written).
        info: Other JSON-safe facts: :meth:`from_transition` keeps the ``info`` entries named
            in :data:`RECORDED_INFO_KEYS` (each wrapper's reward components, the action's
            error), so a recorded run shows what every reward term paid.
        target: Identity of the element the action acted on, ``[role, label, resource_id]``
            (``info["action_target"]``, ``UIElement.identity``); None when the action had no
            target or it was not recorded (files written before the field existed load
            with None).
        prompt: What the policy was shown: the prompt text, or the chat messages (images
            replaced by ``{"type": "image"}`` placeholders); None for non-LLM agents.
        completion: The policy's whole generated text (thought and action); ``action`` is
            what of it was sent to the env.
        prompt_ids: The exact token ids the policy was conditioned on, when the backend
            gives them.
        completion_ids: The exact token ids the policy sampled (never a re-tokenization of
            ``completion``: trainers score these).
        logprobs: The behaviour policy's log-probability of each of ``completion_ids``.
        vision: For a vision-language policy, ``{"images": [content keys], "settings": key}``:
            the screenshots the prompt showed, in order, and the processor settings that made
            ``prompt_ids`` (keys into the policy's image store; the pixels are not in the
            file). None for text-only steps.

    The last six fields are None for steps recorded without them (and in files written
    before they existed).
    """

    index: int
    screen: str
    action: str
    action_valid: bool = True
    action_description: str = ""
    reward: float = 0.0
    task_reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    milestones: list[str] = field(default_factory=list)
    thought: str | None = None
    tree: dict[str, Any] | None = None
    screenshot: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    target: list[str] | None = None
    prompt: str | list[dict[str, Any]] | None = None
    completion: str | None = None
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None
    vision: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        """Inverse of :meth:`to_dict` (unknown keys are ignored).

        Raises:
            ValueError: when ``data`` is not an object or lacks a required field.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a step must be a JSON object, got {type(data).__name__}")
        known = {k: v for k, v in data.items() if k in _STEP_FIELDS}
        try:
            return cls(**known)
        except TypeError as err:
            raise ValueError(f"malformed step: {err}") from None

    @classmethod
    def from_transition(
        cls,
        index: int,
        screen: str,
        action: Any,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
        **extra: Any,
    ) -> Step:
        """A step from one ``env.step`` result: the screen it was chosen on, the action sent,
        and what came back (the gui-gym info keys)."""
        if "target" not in extra:
            target = info.get("action_target")
            extra["target"] = list(target) if target is not None else None
        if "info" not in extra:
            extra["info"] = recorded_info(info)
        return cls(
            index=index,
            screen=screen,
            action=info.get("action") or str(action),
            action_valid=bool(info.get("action_valid", True)),
            action_description=info.get("action_description", ""),
            reward=float(reward),
            task_reward=float(info.get("task_reward", 0.0)),
            terminated=bool(terminated),
            truncated=bool(truncated),
            milestones=list(info.get("milestones", [])),
            **extra,
        )


_STEP_FIELDS = frozenset(Step.__dataclass_fields__)

RECORDED_INFO_KEYS: tuple[str, ...] = (
    "progress",  # ProgRM: ProgressRewardWrapper
    "prm",  # GUI-Shepherd: PRMRewardWrapper
    "milestone",  # ADMIRE: MilestoneWrapper
    "judge",  # ProRe: ProbingJudgeWrapper (final step)
    "semi_online",  # UI-S1: SemiOnlineReplayEnv
    "action_error",
    "final_state_score",
    "milestone_reward",  # Mobile-Env's per-event reward (WikiHow), ProgRM's "Rwd"
)
"""The ``info`` keys a recorded :class:`Step` keeps (``Step.info``)."""


def recorded_info(info: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``info`` named in :data:`RECORDED_INFO_KEYS`, made JSON-safe.

    Numpy values become Python numbers and lists, tuples lists, and non-finite floats None
    (JSON has no NaN; the trajectory writer refuses it); any other object is kept as its
    ``repr``, so recording never fails on a wrapper's payload.
    """
    return {key: json_safe(info[key]) for key in RECORDED_INFO_KEYS if info.get(key) is not None}


def json_safe(value: Any) -> Any:
    """``value`` with numpy values as Python ones, tuples as lists, non-finite floats as None
    and any other object as its ``repr``: something ``json.dumps(allow_nan=False)`` takes."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return json_safe(value.tolist())
    return repr(value)


@dataclass
class Trajectory:
    """One episode.

    Attributes:
        env_id: Registered id of the env (``GuiGym/WikiHow-v0``).
        task_id: Task of the episode.
        instruction: The instruction the agent received.
        steps: The steps in order.
        final_screen: The screen after the last step.
        success: Whether the task was completed.
        task_reward: The outcome reward at the end.
        seed: Seed passed to ``reset``, if any.
        agent: Name of the agent that acted.
        metadata: Free-form JSON-safe facts (category, split, wrapper settings).
        infra_error: Why the episode was lost to infrastructure (an env that raised or
            whose worker died, a model server past its retries); None for an episode that
            ran to its end. Such an episode is no evidence about the agent: statistics and
            training groups leave it out and count it apart, never as a reward of 0.
        group_id: Identity of the rollout group the episode belongs to (GRPO groups of one
            task and seed, or an anchor-state fork group), None outside groups.
        anchor_step: For a fork group, the index of the first step taken after the fork:
            ``steps[:anchor_step]`` is the prefix every member shares, ``steps[anchor_step:]``
            the member's own continuation. None for other episodes.
    """

    env_id: str
    task_id: str
    instruction: str
    steps: list[Step] = field(default_factory=list)
    final_screen: str = ""
    success: bool = False
    task_reward: float = 0.0
    seed: int | None = None
    agent: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    infra_error: str | None = None
    group_id: str | None = None
    anchor_step: int | None = None

    @property
    def total_reward(self) -> float:
        return float(sum(s.reward for s in self.steps))

    @property
    def actions(self) -> list[str]:
        return [s.action for s in self.steps]

    def __len__(self) -> int:
        return len(self.steps)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def finish(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        """Record the episode's end: the last screen and the outcome from the final info."""
        self.final_screen = observation.get("screen", "")
        self.success = bool(info.get("success", False))
        self.task_reward = float(info.get("task_reward", 0.0))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        """Inverse of :meth:`to_dict`.

        Raises:
            ValueError: when a required key is missing or steps are malformed.
        """
        if not isinstance(data, dict):
            raise ValueError(
                f"a trajectory record must be a JSON object, got {type(data).__name__}"
            )
        raw_steps = data.get("steps", [])
        if not isinstance(raw_steps, list):
            raise ValueError(f"'steps' must be a list, got {type(raw_steps).__name__}")
        steps = []
        for i, raw in enumerate(raw_steps):
            try:
                steps.append(Step.from_dict(raw))
            except ValueError as err:
                raise ValueError(f"steps[{i}]: {err}") from None
        try:
            return cls(
                env_id=str(data["env_id"]),
                task_id=str(data["task_id"]),
                instruction=str(data["instruction"]),
                steps=steps,
                final_screen=str(data.get("final_screen", "")),
                success=bool(data.get("success", False)),
                task_reward=float(data.get("task_reward", 0.0)),
                seed=data.get("seed"),
                agent=str(data.get("agent", "")),
                metadata=dict(data.get("metadata", {})),
                infra_error=data.get("infra_error"),
                group_id=data.get("group_id"),
                anchor_step=data.get("anchor_step"),
            )
        except KeyError as err:
            raise ValueError(f"trajectory record is missing {err.args[0]!r}") from None
        except (TypeError, ValueError) as err:
            raise ValueError(f"malformed trajectory record: {err}") from None


def json_default(value: Any) -> Any:
    """``json.dumps`` fallback for numpy scalars/arrays, tuples, sets, paths and dataclasses."""
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, set | frozenset):
        return sorted(value)
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def dumps_json(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` as every gui-gym JSON writer calls it: numpy values and dataclasses
    encoded (:func:`json_default`), and NaN or infinity (which JSON has not) written as
    ``null``, so a diverged metric or a huge reward never breaks a writer or a reader."""
    kwargs.setdefault("default", json_default)
    try:
        return json.dumps(value, allow_nan=False, **kwargs)
    except ValueError as err:
        if "out of range float" not in str(err).lower():
            raise
    plain = json.loads(json.dumps(value, allow_nan=True, default=kwargs["default"]))
    return json.dumps(json_safe(plain), allow_nan=False, **kwargs)


def _dumps(record: Any) -> str:
    text = dumps_json(record, ensure_ascii=False)
    if "\n" in text:  # json.dumps escapes newlines in strings; this never happens
        raise ValueError("JSON line contains a raw newline")
    return text


@contextlib.contextmanager
def errors_naming(path: str | Path) -> Iterator[None]:
    """Re-raise an error from reading ``path`` as a ``ValueError`` that names the file.

    For readers whose own errors do not say which file was bad (safetensors' header errors,
    ``json`` errors, a missing key in a checkpoint's metadata). ``OSError`` passes through:
    it names its file already.
    """
    try:
        yield
    except OSError:
        raise
    except Exception as err:
        if str(path) in str(err):
            raise
        raise ValueError(f"{path}: cannot read it ({type(err).__name__}: {err})") from err


def check_replaceable_folder(path: str | Path, marker: str, what: str) -> None:
    """Refuse to replace ``path`` unless it is absent, empty, or a ``what`` checkpoint
    (holds the file ``marker``): saving over a folder replaces all of it, and a user's
    other files there must never be deleted.

    Raises:
        FileExistsError: naming the folder (or file) and what it holds instead.
    """
    path = Path(path)
    if not path.exists():
        return
    if not path.is_dir():
        raise FileExistsError(f"{path} is a file, not a {what} folder; choose another path")
    if (path / marker).is_file() or not any(path.iterdir()):
        return
    found = sorted(p.name for p in path.iterdir())
    shown = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
    raise FileExistsError(
        f"{path} is not empty and is not a {what} (no {marker}; it holds {shown}); saving "
        "would replace the whole folder: choose an empty or new folder"
    )


def write_jsonl(path: str | Path, records: Iterable[Any]) -> int:
    """Atomically (re)write ``path`` with one JSON record per line; returns the count."""
    lines = [_dumps(r) for r in records]
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)


def read_jsonl(path: str | Path) -> Iterator[Any]:
    """Stream the records of a JSON Lines file.

    A torn final line (no trailing newline, not valid JSON: a crash mid-append) is skipped
    with a warning. Any other bad line raises.

    Raises:
        ValueError: naming the file and line of a corrupt record (invalid JSON or UTF-8,
            nesting deeper than :data:`~gui_gym.core.untrusted_text.MAX_JSON_DEPTH`).
    """
    for _, record in read_jsonl_lines(path):
        yield record


def read_jsonl_lines(path: str | Path) -> Iterator[tuple[int, Any]]:
    """:func:`read_jsonl` with the 1-based line number of each record, for error messages."""
    path = Path(path)
    with path.open("rb") as f:
        previous: bytes | None = None
        number = 0
        for raw in f:
            if previous is not None:
                yield number, _decode_line(path, number, previous)
            previous = raw
            number += 1
        if previous is not None:
            if not previous.endswith(b"\n"):
                try:
                    record = load_json(previous)
                except ValueError:
                    warnings.warn(
                        f"{path}: skipping a torn last line {number} (interrupted write)",
                        stacklevel=3,
                    )
                    return
                yield number, record
            else:
                yield number, _decode_line(path, number, previous)


def _decode_line(path: Path, number: int, raw: bytes) -> Any:
    if not raw.strip():
        raise ValueError(f"{path}:{number}: empty line in a JSON Lines file")
    try:
        return load_json(raw)
    except ValueError as err:
        raise ValueError(f"{path}:{number}: corrupt JSON record: {err}") from None


class TrajectoryWriter:
    """Append-only, crash-safe JSONL writer for trajectories (or any JSON records).

    Opening an existing file keeps its complete records and cuts a torn tail, so a resumed
    run continues the same file. Each :meth:`write` is one ``write`` call and an ``fsync``
    under an exclusive ``flock`` of the file, and the tail is repaired under the same lock,
    so a writer opening the file never cuts a record another process is appending: only a
    dead writer's torn tail is cut.

    Args:
        path: The JSONL file (created with its folders when missing).
        fsync: Whether to fsync after every record (default True).
    """

    def __init__(self, path: str | Path, fsync: bool = True):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fsync = fsync
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            self._repair_tail()
        except BaseException:
            self.close()
            raise

    def _repair_tail(self) -> None:
        import fcntl

        with self.path.open("rb+") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)  # released when f closes
            data = f.read()
            if not data or data.endswith(b"\n"):
                return
            cut = data.rfind(b"\n") + 1
            try:  # a complete record missing only its newline is kept, as read_jsonl keeps it
                load_json(data[cut:])
            except ValueError:
                pass
            else:
                f.write(b"\n")
                return
            warnings.warn(
                f"{self.path}: removing a torn last record ({len(data) - cut} bytes) before appending",
                stacklevel=3,
            )
            f.truncate(cut)

    def write(self, record: Trajectory | dict[str, Any]) -> None:
        """Append one record as a complete line."""
        if self._fd is None:
            raise ValueError(f"TrajectoryWriter for {self.path} is closed")
        payload = record.to_dict() if isinstance(record, Trajectory) else record
        data = (_dumps(payload) + "\n").encode("utf-8")
        import fcntl

        fcntl.flock(self._fd, fcntl.LOCK_EX)  # a writer opening the file waits, never cuts
        try:
            written = os.write(self._fd, data)
            if written != len(data):  # a short write on a regular file means a full disk
                raise OSError(
                    errno.ENOSPC,
                    f"no space left on the disk: short write to {self.path} ({written} of "
                    f"{len(data)} bytes)",
                )
            if self._fsync:
                os.fsync(self._fd)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


def write_trajectories(path: str | Path, trajectories: Iterable[Trajectory]) -> int:
    """Atomically write trajectories as JSONL; returns how many were written."""
    return write_jsonl(path, (t.to_dict() for t in trajectories))


def read_trajectories(path: str | Path) -> Iterator[Trajectory]:
    """Stream trajectories from a JSONL file (see :func:`read_jsonl` for torn tails).

    Raises:
        ValueError: naming the file and line of a record that is not a trajectory.
    """
    for number, record in read_jsonl_lines(path):
        try:
            yield Trajectory.from_dict(record)
        except ValueError as err:
            raise ValueError(f"{path}:{number}: {err}") from None


def _finite(x: float) -> float:
    return x if math.isfinite(x) else 0.0


def open_run_log(
    path: str | Path,
    header: dict[str, Any],
    parse: Callable[[dict[str, Any]], Any] | None = None,
) -> tuple[TrajectoryWriter, list[Any]]:
    """Open the JSON Lines log of a resumable run: ``header`` first, then one record per
    finished item, appended as each finishes.

    A new file gets the header. An existing one must start with the same header (the same
    run's settings); its records after the header are returned, so the caller skips what is
    done and appends the rest. A torn last line (a crash mid-write) is dropped.

    Args:
        path: The log file.
        header: The run's settings.
        parse: Turns one record into the caller's type (e.g. ``lambda r: Row(**r)``); its
            ``KeyError``/``TypeError``/``ValueError`` becomes an error naming the line.

    Returns:
        The writer (close it when done) and the records already in the log (parsed).

    Raises:
        ValueError: when the file holds a run with other settings, or a record that is not
            a JSON object (or that ``parse`` rejects), naming the file and line.
    """
    path = Path(path)
    records: list[Any] = []
    if path.exists():
        numbered = list(read_jsonl_lines(path))
        for number, record in numbered:
            if not isinstance(record, dict):
                raise ValueError(
                    f"{path}:{number}: a run-log record must be a JSON object, got "
                    f"{type(record).__name__}; remove the file or choose another --out"
                )
        if numbered and numbered[0][1].get("header") != header:
            raise ValueError(
                f"{path} holds a run with different settings ({numbered[0][1].get('header')}); "
                "remove it or choose another --out"
            )
        for number, record in numbered[1:]:
            if parse is None:
                records.append(record)
                continue
            try:
                records.append(parse(record))
            except (KeyError, TypeError, ValueError) as err:
                raise ValueError(
                    f"{path}:{number}: not a record of this run ({type(err).__name__}: {err}); "
                    "remove the file or choose another --out"
                ) from None
    writer = TrajectoryWriter(path)
    if not path.stat().st_size:
        writer.write({"header": header})
    return writer, records
