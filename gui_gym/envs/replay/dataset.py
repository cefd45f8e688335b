"""Expert datasets: recorded trajectories on disk, validated when loaded.

A dataset is a folder::

    DIR/
      manifest.json          what the data is and where it came from (written atomically)
      trajectories.jsonl     one expert trajectory per line (core.trajectory.Trajectory)
      images/...             optional screenshot files, referenced by relative path

Each line of ``trajectories.jsonl`` is a :class:`~gui_gym.core.trajectory.Trajectory` record.
Per step, the fields the replay env reads are ``screen`` (the rendered screen the expert
acted on), ``tree`` (its :class:`~gui_gym.core.ui.UITree` as ``to_dict()``), ``action`` (the
expert action in the gui-gym grammar), ``thought`` (optional expert reasoning) and
``screenshot`` (optional image path relative to ``DIR``). The trajectory's ``metadata`` may
hold ``trajectory_id``, ``episode``, ``vocabulary`` (texts a random agent may type),
``final_tree`` and ``final_screenshot`` (the state after the last expert action).

``manifest.json`` holds ``format`` (:data:`DATASET_FORMAT`), ``version``, ``source`` (how the
data was made: recorder settings, or the converter and its input) and ``screen_size``
(``[width, height]`` of screenshots).

Writing goes through :class:`ExpertDatasetWriter`: images are written to a temporary file
and renamed into place before the trajectory line that names them is appended (one
``write`` + ``fsync``), so a crash leaves either a complete trajectory or none, and a rerun
resumes. Loading through :meth:`ExpertDataset.load` checks every line and image; a problem
raises :class:`DatasetError` naming the file and line, or with ``skip_bad=True`` is counted
and skipped.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gui_gym.core.actions import Action, ActionParseError, parse_action
from gui_gym.core.files import atomic_write_bytes, atomic_write_text
from gui_gym.core.trajectory import Trajectory, TrajectoryWriter
from gui_gym.core.ui import UITree
from gui_gym.core.untrusted_text import load_json

__all__ = [
    "DATASET_FORMAT",
    "DATASET_VERSION",
    "IMAGES_DIR",
    "MANIFEST_FILE",
    "TRAJECTORIES_FILE",
    "DatasetError",
    "ExpertDataset",
    "ExpertDatasetWriter",
    "ExpertStep",
    "ExpertTrajectory",
    "load_image",
]

logger = logging.getLogger(__name__)

DATASET_FORMAT = "gui-gym/expert-trajectories"
DATASET_VERSION = 1
MANIFEST_FILE = "manifest.json"
TRAJECTORIES_FILE = "trajectories.jsonl"
IMAGES_DIR = "images"
DEFAULT_SCREEN_SIZE = (360, 720)


class DatasetError(ValueError):
    """A dataset that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class ExpertStep:
    """One expert step: the state ``S_t^*`` and the action ``a_t^*`` taken in it.

    Attributes:
        index: 0-based step number.
        screen: The rendered screen the expert acted on.
        tree: That screen as a UI tree (no elements when the source had none).
        action: The expert action.
        thought: The expert's reasoning, when recorded.
        screenshot: Absolute path of the screenshot file, when recorded.
        milestones: Milestones reached after the step (recorded datasets only).
    """

    index: int
    screen: str
    tree: UITree
    action: Action
    thought: str | None = None
    screenshot: Path | None = None
    milestones: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExpertTrajectory:
    """One expert trajectory ``tau^* = ((S_1^*, a_1^*), ..., (S_T^*, a_T^*))``.

    Attributes:
        trajectory_id: Unique within the dataset.
        task_id: The task it solves.
        instruction: The high-level instruction ``I``.
        steps: The expert steps, at least one.
        final_screen, final_tree, final_screenshot: The state after the last step.
        success: Whether the expert succeeded.
        category: Task category, if known.
        env_id: Where it was recorded (``GuiGym/WikiHow-v0``, ``AndroidControl``).
        vocabulary: Texts a random agent may type on this task.
        source: ``file:line`` it was read from.
    """

    trajectory_id: str
    task_id: str
    instruction: str
    steps: tuple[ExpertStep, ...]
    final_screen: str
    final_tree: UITree
    final_screenshot: Path | None = None
    success: bool = True
    category: str = ""
    env_id: str = ""
    vocabulary: tuple[str, ...] = ()
    source: str = ""

    def __len__(self) -> int:
        return len(self.steps)


def load_image(path: Path, size: tuple[int, int]) -> np.ndarray:
    """Read an image file as RGB ``uint8`` of shape ``(height, width, 3)``, resized to ``size``
    (``(width, height)``) when it differs."""
    from PIL import Image

    with Image.open(path) as image:
        rgb = image.convert("RGB")
        if rgb.size != tuple(size):
            rgb = rgb.resize(tuple(size), Image.Resampling.BILINEAR)
        return np.asarray(rgb, dtype=np.uint8).copy()


def _read_manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST_FILE
    if not root.is_dir():
        raise DatasetError(f"{root}: no such dataset folder")
    if not path.is_file():
        raise DatasetError(
            f"{path}: missing; {root} is not a gui-gym expert dataset "
            "(make one with `gui-gym record` or `gui-gym convert`)"
        )
    try:
        manifest = load_json(path.read_bytes())
    except ValueError as err:
        raise DatasetError(f"{path}:1: corrupt manifest: {err}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != DATASET_FORMAT:
        raise DatasetError(f"{path}: format must be {DATASET_FORMAT!r}")
    if manifest.get("version") != DATASET_VERSION:
        raise DatasetError(
            f"{path}: version {manifest.get('version')!r} is not supported "
            f"(this gui-gym reads version {DATASET_VERSION})"
        )
    return manifest


def _screen_size(manifest: dict[str, Any], where: str) -> tuple[int, int]:
    size = manifest.get("screen_size", DEFAULT_SCREEN_SIZE)
    if (
        not isinstance(size, list | tuple)
        or len(size) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size)
    ):
        raise DatasetError(f"{where}: screen_size must be [width, height] in pixels, got {size!r}")
    return (int(size[0]), int(size[1]))


def _resolve_image(root: Path, relative: Any, where: str) -> Path:
    if not isinstance(relative, str) or not relative:
        raise DatasetError(f"{where}: screenshot must be a relative path, got {relative!r}")
    path = (root / relative).resolve()
    if not path.is_relative_to(root.resolve()):
        raise DatasetError(f"{where}: screenshot {relative!r} points outside the dataset")
    if not path.is_file():
        raise DatasetError(f"{where}: screenshot {relative} does not exist")
    return path


def _tree(data: Any, size: tuple[int, int], where: str) -> UITree:
    if data is None:
        return UITree((), width=size[0], height=size[1])
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: tree must be an object, got {type(data).__name__}")
    try:
        return UITree.from_dict(data)
    except (KeyError, TypeError, ValueError) as err:
        raise DatasetError(f"{where}: bad UI tree: {err}") from None


def _expert_trajectory(
    record: Any, root: Path, size: tuple[int, int], location: str
) -> ExpertTrajectory:
    if not isinstance(record, dict):
        raise DatasetError(f"{location}: a trajectory must be a JSON object")
    try:
        trajectory = Trajectory.from_dict(record)
    except (ValueError, TypeError) as err:
        raise DatasetError(f"{location}: {err}") from None
    if not trajectory.steps:
        raise DatasetError(f"{location}: a trajectory needs at least one step")
    if not trajectory.instruction:
        raise DatasetError(f"{location}: empty instruction")
    metadata = trajectory.metadata
    steps: list[ExpertStep] = []
    for k, step in enumerate(trajectory.steps):
        where = f"{location}: steps[{k}]"
        try:
            action = parse_action(step.action)
        except ActionParseError as err:
            raise DatasetError(
                f"{where}: expert action {step.action!r} does not parse: {err}"
            ) from None
        tree = _tree(step.tree, size, where)
        shot = _resolve_image(root, step.screenshot, where) if step.screenshot else None
        steps.append(
            ExpertStep(
                index=k,
                screen=step.screen or tree.text,
                tree=tree,
                action=action,
                thought=step.thought or None,
                screenshot=shot,
                milestones=tuple(step.milestones),
            )
        )
    final_tree = _tree(metadata.get("final_tree"), size, f"{location}: metadata.final_tree")
    final_shot = metadata.get("final_screenshot")
    vocabulary = metadata.get("vocabulary", [])
    if not isinstance(vocabulary, list) or not all(isinstance(v, str) for v in vocabulary):
        raise DatasetError(f"{location}: metadata.vocabulary must be a list of strings")
    return ExpertTrajectory(
        trajectory_id=str(metadata.get("trajectory_id") or f"{trajectory.task_id}@{location}"),
        task_id=trajectory.task_id,
        instruction=trajectory.instruction,
        steps=tuple(steps),
        final_screen=trajectory.final_screen or final_tree.text,
        final_tree=final_tree,
        final_screenshot=(
            _resolve_image(root, final_shot, f"{location}: metadata.final_screenshot")
            if final_shot
            else None
        ),
        success=trajectory.success,
        category=str(metadata.get("category", "")),
        env_id=trajectory.env_id,
        vocabulary=tuple(vocabulary),
        source=location,
    )


@dataclass
class ExpertDataset:
    """A loaded, validated expert dataset.

    Attributes:
        root: The dataset folder.
        manifest: ``manifest.json``.
        trajectories: The trajectories kept, in file order.
        screen_size: ``(width, height)`` of screenshots.
        skipped: ``file:line: reason`` of each record skipped with ``skip_bad=True``.
        failed: How many records were left out because the expert did not succeed.
    """

    root: Path
    manifest: dict[str, Any]
    trajectories: list[ExpertTrajectory]
    screen_size: tuple[int, int] = DEFAULT_SCREEN_SIZE
    skipped: list[str] = field(default_factory=list)
    failed: int = 0

    @classmethod
    def load(
        cls, root: str | Path, *, skip_bad: bool = False, include_failed: bool = False
    ) -> ExpertDataset:
        """Read and validate a dataset folder.

        Args:
            root: The folder holding ``manifest.json`` and ``trajectories.jsonl``.
            skip_bad: Skip (and count in :attr:`skipped`) records that are corrupt or name a
                missing image, instead of failing.
            include_failed: Keep trajectories whose expert did not succeed.

        Returns:
            The dataset.

        Raises:
            DatasetError: naming the file and line of the first bad record (without
                ``skip_bad``), or when no usable trajectory is left.
        """
        root = Path(root)
        manifest = _read_manifest(root)
        size = _screen_size(manifest, str(root / MANIFEST_FILE))
        path = root / TRAJECTORIES_FILE
        if not path.is_file():
            raise DatasetError(f"{path}: missing")
        trajectories: list[ExpertTrajectory] = []
        skipped: list[str] = []
        failed = 0
        seen: dict[str, str] = {}
        with path.open("rb") as f:
            for number, raw in enumerate(f, start=1):
                location = f"{path}:{number}"
                torn = not raw.endswith(b"\n")  # only the last line can lack its newline
                try:
                    if not raw.strip():
                        raise DatasetError(f"{location}: empty line")
                    try:
                        record = load_json(raw)
                    except ValueError as err:
                        if torn:
                            warnings.warn(
                                f"{location}: skipping a torn last line (interrupted write)",
                                stacklevel=2,
                            )
                            break
                        raise DatasetError(f"{location}: corrupt JSON record: {err}") from None
                    trajectory = _expert_trajectory(record, root, size, location)
                    if trajectory.trajectory_id in seen:
                        raise DatasetError(
                            f"{location}: trajectory id {trajectory.trajectory_id!r} repeats "
                            f"{seen[trajectory.trajectory_id]}"
                        )
                except DatasetError as err:
                    if not skip_bad:
                        raise
                    skipped.append(str(err))
                    continue
                seen[trajectory.trajectory_id] = location
                if not trajectory.success and not include_failed:
                    failed += 1
                    continue
                trajectories.append(trajectory)
        if not trajectories:
            detail = f" ({len(skipped)} skipped, {failed} failed expert runs)"
            raise DatasetError(f"{path}: no usable trajectories{detail}")
        return cls(root, manifest, trajectories, size, skipped, failed)

    def __len__(self) -> int:
        return len(self.trajectories)

    def __iter__(self) -> Iterator[ExpertTrajectory]:
        return iter(self.trajectories)

    def __getitem__(self, index: int) -> ExpertTrajectory:
        return self.trajectories[index]

    def index_of(self, key: int | str) -> int:
        """Position of a trajectory given by position, ``trajectory_id`` or ``task_id``.

        Raises:
            KeyError: when nothing matches.
        """
        if isinstance(key, int) and not isinstance(key, bool):
            if not 0 <= key < len(self.trajectories):
                raise KeyError(f"trajectory {key} out of range 0..{len(self.trajectories) - 1}")
            return key
        for i, t in enumerate(self.trajectories):
            if t.trajectory_id == key:
                return i
        for i, t in enumerate(self.trajectories):
            if t.task_id == key:
                return i
        raise KeyError(f"unknown trajectory {key!r} (not a trajectory_id or task_id here)")

    @property
    def total_steps(self) -> int:
        return sum(len(t) for t in self.trajectories)


class ExpertDatasetWriter:
    """Writes a dataset folder crash-safely and resumes an existing one.

    Args:
        root: The dataset folder (created when missing).
        source: How the data is made (recorder settings, converter input). A folder that
            already holds a dataset must have the same ``source``, so runs never mix.
        screen_size: ``(width, height)`` of the screenshots.

    Raises:
        DatasetError: when ``root`` holds a dataset made differently.
    """

    def __init__(self, root: str | Path, source: dict[str, Any], screen_size: tuple[int, int]):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        manifest = {
            "format": DATASET_FORMAT,
            "version": DATASET_VERSION,
            "source": source,
            "screen_size": [int(screen_size[0]), int(screen_size[1])],
        }
        path = self.root / MANIFEST_FILE
        if path.exists():
            existing = _read_manifest(self.root)
            if (
                existing.get("source") != json.loads(json.dumps(source))
                or existing.get("screen_size") != manifest["screen_size"]
            ):
                raise DatasetError(
                    f"{path}: this folder holds a dataset made with {existing.get('source')}; "
                    "remove it or choose another --out"
                )
        else:
            atomic_write_text(path, json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
        self.manifest = manifest
        self._remove_stale_temporaries()
        self._writer = TrajectoryWriter(self.root / TRAJECTORIES_FILE)

    def _remove_stale_temporaries(self) -> None:
        """Delete ``.<name>.*.tmp`` files a killed run left (one writer per folder: any
        temporary here belongs to a run that is gone)."""
        for folder in (self.root, self.root / IMAGES_DIR):
            if not folder.is_dir():
                continue
            pattern = ".*.tmp" if folder == self.root else "*/.*.tmp"
            for stale in folder.glob(pattern):
                if stale.is_file():
                    logger.info("removing %s, left by an interrupted run", stale)
                    with contextlib.suppress(FileNotFoundError):
                        stale.unlink()

    def recorded_ids(self) -> set[str]:
        """``trajectory_id`` of every complete record already written."""
        ids: set[str] = set()
        path = self.root / TRAJECTORIES_FILE
        with path.open("rb") as f:
            for number, raw in enumerate(f, start=1):
                if not raw.endswith(b"\n"):
                    break  # a torn tail; the writer cut it when it opened
                try:
                    record = load_json(raw)
                    ids.add(str(record["metadata"]["trajectory_id"]))
                except (ValueError, KeyError, TypeError) as err:
                    raise DatasetError(
                        f"{path}:{number}: corrupt record, cannot resume: {err!r}"
                    ) from None
        return ids

    def save_image(self, relative: str, image: np.ndarray | Path) -> str:
        """Write an image (an RGB array, or a file to copy) to ``root/relative`` atomically.

        Returns:
            ``relative``, for the step record.
        """
        if isinstance(image, Path):
            data = image.read_bytes()
        else:
            from PIL import Image

            buffer = io.BytesIO()
            Image.fromarray(np.asarray(image, dtype=np.uint8)).save(buffer, format="PNG")
            data = buffer.getvalue()
        atomic_write_bytes(self.root / relative, data)
        return relative

    def write(self, trajectory: Trajectory) -> None:
        """Append one trajectory (after its images are in place)."""
        if "trajectory_id" not in trajectory.metadata:
            raise ValueError("trajectory.metadata needs a 'trajectory_id'")
        self._writer.write(trajectory)

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> ExpertDatasetWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
