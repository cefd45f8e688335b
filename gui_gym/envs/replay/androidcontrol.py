"""Convert AndroidControl-style episodes into a gui-gym expert dataset.

AndroidControl (Li et al., 2024) is the dataset UI-S1 trains on and builds SOP from. Its
episodes are distributed as TFRecords; this converter reads the same fields as JSON, which is
what a short export script over the TFRecords (or any similar dataset) produces. One episode:

.. code-block:: json

    {
      "episode_id": 17,
      "goal": "Set an alarm for 7 am in the Clock app",
      "actions": [
        {"action_type": "open_app", "app_name": "Clock"},
        {"action_type": "click", "x": 540, "y": 2210},
        {"action_type": "input_text", "text": "7:00"},
        {"action_type": "scroll", "direction": "down"}
      ],
      "step_instructions": ["Open the Clock app", "Tap the add button", "...", "..."],
      "screenshots": ["shots/17_0.png", "shots/17_1.png", "...", "...", "shots/17_4.png"],
      "screenshot_widths": [1080, 1080, 1080, 1080, 1080],
      "screenshot_heights": [2400, 2400, 2400, 2400, 2400],
      "accessibility_trees": [[{"class_name": "android.widget.Button", "text": "Add alarm",
                                "bounds_in_screen": {"left": 480, "top": 2150,
                                                     "right": 600, "bottom": 2270},
                                "is_clickable": true}], "..."]
    }

Fields:

* ``episode_id`` (int or str, required, unique): becomes the ``trajectory_id``.
* ``goal`` (str, required): the high-level instruction.
* ``actions`` (list, required, at least one): AndroidControl / AndroidWorld JSON actions:
  ``click`` and ``long_press`` (``x``, ``y`` in screenshot pixels), ``scroll``
  (``direction``), ``input_text`` (``text``), ``open_app`` (``app_name``),
  ``navigate_back``, ``navigate_home``, ``wait``, and also ``index``-targeted actions,
  ``answer``, ``keyboard_enter`` and ``status``.
* ``step_instructions`` (list of str, optional, one per action): AndroidControl's low-level
  instructions; stored as the expert *thought* of each step.
* ``screenshots`` (list of paths, optional): one per action, plus optionally one for the final
  state; relative paths are read from the episode file's folder. Copied into the dataset.
* ``screenshot_widths`` / ``screenshot_heights`` (lists of int, optional): screen size per
  state. Without them the size comes from the screenshot file or the tree's extent.
* ``accessibility_trees`` (optional): per state, a list of nodes with AndroidAccessibility
  field names: ``class_name``, ``text``, ``content_description``, ``view_id_resource_name``,
  ``bounds_in_screen`` (``{left, top, right, bottom}`` or ``[left, top, right, bottom]``),
  ``is_clickable``, ``is_long_clickable``, ``is_editable``, ``is_scrollable``,
  ``is_checkable``, ``is_checked``, ``is_selected``, ``is_focused``, ``is_enabled``. Nodes
  with text, a description or an accepted action become elements (in order; the hierarchy
  is not kept).

Input: a ``.json`` file holding one episode or a list of them, a ``.jsonl`` file with one
episode a line, or a folder of such files (sorted by name). Errors name the file and the
line (``.jsonl``) or list position (``.json``) and the field.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gui_gym.core.actions import ActionParseError, parse_action
from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.core.ui import ANDROID_CLASS_ROLES, FLAG_ORDER, UIElement, UITree, android_role
from gui_gym.core.untrusted_text import load_json
from gui_gym.envs.replay.dataset import IMAGES_DIR, DatasetError, ExpertDatasetWriter

__all__ = ["ConversionReport", "convert_androidcontrol", "nodes_to_tree"]

ENV_ID = "AndroidControl"

_ROLES = tuple(entry for entry in ANDROID_CLASS_ROLES if entry[0] != "TabWidget")
"""AndroidControl's view roles: the device's (:data:`~gui_gym.core.ui.ANDROID_CLASS_ROLES`)
but for tabs, which its trees leave as buttons or containers."""
_FLAGS = {f"is_{flag}": flag for flag in (*FLAG_ORDER, "enabled")}
"""AndroidControl's ``is_<flag>`` keys and the :class:`UIElement` flags they set."""
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True)
class ConversionReport:
    """What a conversion did.

    Attributes:
        out: The dataset folder.
        converted: Episodes written by this run.
        existing: Episodes already in the folder (a resumed conversion), left as they were.
        skipped: ``location: reason`` of each episode skipped with ``skip_bad=True``.
    """

    out: Path
    converted: int
    existing: int
    skipped: list[str] = field(default_factory=list)


def _bounds(value: Any, where: str) -> tuple[int, int, int, int]:
    if isinstance(value, dict):
        try:
            value = [value["left"], value["top"], value["right"], value["bottom"]]
        except KeyError as err:
            raise DatasetError(f"{where}: bounds_in_screen needs {err.args[0]!r}") from None
    if (
        not isinstance(value, list | tuple)
        or len(value) != 4
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        raise DatasetError(f"{where}: bounds_in_screen must be 4 numbers, got {value!r}")
    x0, y0, x1, y1 = (int(v) for v in value)
    return (x0, y0, x1, y1)


def nodes_to_tree(nodes: Any, width: int, height: int, where: str = "tree") -> UITree:
    """An AndroidControl-style node list as a :class:`UITree` (see the module docstring).

    Raises:
        DatasetError: for a node that is not an object or has malformed fields.
    """
    if not isinstance(nodes, list):
        raise DatasetError(f"{where}: must be a list of nodes, got {type(nodes).__name__}")
    elements: list[UIElement] = []
    for j, node in enumerate(nodes):
        at = f"{where}[{j}]"
        if not isinstance(node, dict):
            raise DatasetError(f"{at}: a node must be an object")
        flags: dict[str, bool] = {}
        for key, name in _FLAGS.items():
            value = node.get(key, name == "enabled")
            if not isinstance(value, bool):
                raise DatasetError(f"{at}: {key} must be true or false, got {value!r}")
            flags[name] = value
        texts = {}
        for key in ("class_name", "text", "content_description", "view_id_resource_name"):
            value = node.get(key) or ""
            if not isinstance(value, str):
                raise DatasetError(f"{at}: {key} must be a string, got {value!r}")
            texts[key] = value
        if "EditText" in texts["class_name"]:
            flags["editable"] = True
        interactive = any(
            flags[f] for f in ("clickable", "long_clickable", "editable", "scrollable", "checkable")
        )
        if not (texts["text"] or texts["content_description"] or interactive):
            continue
        bounds = _bounds(node.get("bounds_in_screen", [0, 0, 0, 0]), at)
        elements.append(
            UIElement(
                index=len(elements),
                role=android_role(texts["class_name"], flags["clickable"], _ROLES),
                text=texts["text"],
                description=texts["content_description"],
                resource_id=texts["view_id_resource_name"],
                bounds=bounds,
                **flags,
            )
        )
    return UITree(tuple(elements), width=width, height=height)


def _episodes(source: Path) -> Iterator[tuple[str, Path, Any]]:
    """``(location, folder for relative paths, episode)`` from a file or folder."""
    if source.is_dir():
        files = sorted(p for p in source.iterdir() if p.suffix in (".json", ".jsonl"))
        if not files:
            raise DatasetError(f"{source}: no .json or .jsonl files")
    elif source.is_file():
        files = [source]
    else:
        raise DatasetError(f"{source}: no such file or folder")
    for path in files:
        if path.suffix == ".jsonl":
            with path.open("rb") as f:
                for number, raw in enumerate(f, start=1):
                    location = f"{path}:{number}"
                    if not raw.strip():
                        continue
                    try:
                        yield location, path.parent, load_json(raw)
                    except ValueError as err:
                        yield (
                            location,
                            path.parent,
                            DatasetError(f"{location}: corrupt JSON: {err}"),
                        )
        else:
            try:
                data = load_json(path.read_bytes())
            except ValueError as err:
                line = getattr(err, "lineno", 1)
                yield (
                    f"{path}:{line}",
                    path.parent,
                    DatasetError(f"{path}:{line}: corrupt JSON: {err}"),
                )
                continue
            if isinstance(data, list):
                for k, episode in enumerate(data):
                    yield f"{path}[{k}]", path.parent, episode
            else:
                yield str(path), path.parent, data


def _int_list(episode: dict[str, Any], key: str, where: str) -> list[int] | None:
    value = episode.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value
    ):
        raise DatasetError(f"{where}: {key} must be a list of positive ints")
    return value


def _size_of(
    k: int,
    widths: list[int] | None,
    heights: list[int] | None,
    image: Path | None,
    nodes: Any,
    where: str,
) -> tuple[int, int]:
    if widths is not None and heights is not None and k < len(widths) and k < len(heights):
        return widths[k], heights[k]
    if image is not None:
        from PIL import Image

        with Image.open(image) as im:
            return im.size
    if isinstance(nodes, list):
        right = bottom = 0
        for j, node in enumerate(nodes):
            if isinstance(node, dict) and "bounds_in_screen" in node:
                _, _, x1, y1 = _bounds(node["bounds_in_screen"], f"{where}[{j}]")
                right, bottom = max(right, x1), max(bottom, y1)
        if right > 0 and bottom > 0:
            return right, bottom
    raise DatasetError(
        f"{where}: cannot tell the screen size; give screenshot_widths/screenshot_heights, "
        "screenshots or accessibility_trees"
    )


def image_folder_name(episode_id: int | str) -> str:
    """The folder under ``images/`` for an episode: its id with characters other than
    letters, digits, ``_``, ``.`` and ``-`` replaced, never starting with a dot (``..``
    would leave ``images/``), and with a short hash of the id when anything was replaced,
    so two ids never share a folder."""
    text = str(episode_id)
    safe = _SAFE_ID.sub("_", text)
    if safe.startswith(".") or not safe:
        safe = "_" + safe
    if safe != text:
        safe += "-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return safe


def _convert_episode(
    episode: Any, folder: Path, location: str, writer: ExpertDatasetWriter
) -> Trajectory:
    if not isinstance(episode, dict):
        raise DatasetError(f"{location}: an episode must be a JSON object")
    episode_id = episode.get("episode_id")
    if episode_id is None or isinstance(episode_id, bool) or not isinstance(episode_id, int | str):
        raise DatasetError(f"{location}: episode_id (int or str) is required")
    goal = episode.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise DatasetError(f"{location}: goal (a non-empty string) is required")
    actions = episode.get("actions")
    if not isinstance(actions, list) or not actions:
        raise DatasetError(f"{location}: actions (a non-empty list) is required")
    steps_n = len(actions)

    def optional_list(key: str, allowed: tuple[int, ...]) -> list[Any] | None:
        value = episode.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or len(value) not in allowed:
            want = " or ".join(str(n) for n in allowed)
            raise DatasetError(
                f"{location}: {key} must be a list of {want} entries for {steps_n} actions"
            )
        return value

    instructions = optional_list("step_instructions", (steps_n,))
    if instructions is not None and not all(isinstance(s, str) for s in instructions):
        raise DatasetError(f"{location}: step_instructions must be strings")
    shots = optional_list("screenshots", (steps_n, steps_n + 1))
    trees = optional_list("accessibility_trees", (steps_n, steps_n + 1))
    widths = _int_list(episode, "screenshot_widths", location)
    heights = _int_list(episode, "screenshot_heights", location)
    tag = image_folder_name(episode_id)

    # an episode file is untrusted: its screenshots must lie inside its own folder (an
    # absolute or ../ path, or a symlink out of it, would copy any file into the dataset)
    inside = folder.resolve()
    images: list[Path | None] = []
    for k, shot in enumerate(shots or []):
        if not isinstance(shot, str) or not shot:
            raise DatasetError(f"{location}: screenshots[{k}] must be a path")
        path = (folder / shot).resolve()
        if not path.is_relative_to(inside):
            raise DatasetError(
                f"{location}: screenshots[{k}]: {shot!r} is outside the input folder "
                f"{folder}; screenshot paths must be relative and inside it"
            )
        if not path.is_file():
            raise DatasetError(f"{location}: screenshots[{k}]: {folder / shot} does not exist")
        images.append(path)

    def state(k: int) -> tuple[UITree, str | None]:
        where = f"{location}: accessibility_trees[{k}]"
        nodes = trees[k] if trees is not None and k < len(trees) else None
        image = images[k] if k < len(images) else None
        width, height = _size_of(k, widths, heights, image, nodes, f"{location}: state {k}")
        tree = (
            nodes_to_tree(nodes, width, height, where)
            if nodes is not None
            else UITree((), width=width, height=height)
        )
        relative = None
        if image is not None:
            relative = f"{IMAGES_DIR}/{tag}/{k:03d}{image.suffix.lower() or '.png'}"
        return tree, relative

    pending_images: list[tuple[str, Path]] = []
    trajectory = Trajectory(
        env_id=ENV_ID,
        task_id=f"androidcontrol/{episode_id}",
        instruction=goal.strip(),
        success=True,
        task_reward=1.0,
        agent="human",
        metadata={"trajectory_id": str(episode_id), "episode_id": episode_id},
    )
    for k, raw_action in enumerate(actions):
        try:
            action = parse_action(raw_action if isinstance(raw_action, dict) else str(raw_action))
        except ActionParseError as err:
            raise DatasetError(f"{location}: actions[{k}]: {err}") from None
        tree, relative = state(k)
        if relative is not None:
            pending_images.append((relative, images[k]))  # type: ignore[arg-type]
        trajectory.steps.append(
            Step(
                index=k,
                screen=tree.text,
                action=str(action),
                thought=instructions[k] if instructions else None,
                tree=tree.to_dict(),
                screenshot=relative,
                terminated=k == steps_n - 1,
            )
        )
    if (trees is not None and len(trees) > steps_n) or len(images) > steps_n:
        final_tree, final_relative = state(steps_n)
        trajectory.final_screen = final_tree.text
        trajectory.metadata["final_tree"] = final_tree.to_dict()
        if final_relative is not None:
            pending_images.append((final_relative, images[steps_n]))  # type: ignore[arg-type]
            trajectory.metadata["final_screenshot"] = final_relative
    for relative, path in pending_images:
        writer.save_image(relative, path)
    return trajectory


def _first_size(episode: Any) -> tuple[int, int] | None:
    if not isinstance(episode, dict):
        return None
    w, h = episode.get("screenshot_widths"), episode.get("screenshot_heights")
    if not (isinstance(w, list) and isinstance(h, list) and w and h):
        return None
    ok = all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (w[0], h[0]))
    return (w[0], h[0]) if ok else None


def convert_androidcontrol(
    source: str | Path, out: str | Path, *, skip_bad: bool = False
) -> ConversionReport:
    """Convert AndroidControl-style episodes (see the module docstring) to a dataset folder.

    Resumable: episodes whose ``episode_id`` is already in ``out`` are left as they are.

    Args:
        source: A ``.json``/``.jsonl`` file or a folder of them.
        out: The dataset folder to write.
        skip_bad: Skip (and report) malformed episodes instead of failing on the first.

    Returns:
        A :class:`ConversionReport`.

    Raises:
        DatasetError: naming the file, line or list position and field of a bad episode.
    """
    source = Path(source)
    episodes = list(_episodes(source))
    screen_size = (1080, 2400)
    for _location, _folder, episode in episodes:  # the first episode that says, else a phone's
        size = _first_size(episode)
        if size is not None:
            screen_size = size
            break
    fresh = not Path(out).exists()
    writer = ExpertDatasetWriter(out, {"kind": "androidcontrol", "input": source.name}, screen_size)
    skipped: list[str] = []
    converted = existing = 0
    seen: set[str] = set()
    failed = True
    try:
        done = writer.recorded_ids()
        for location, folder, episode in episodes:
            try:
                if isinstance(episode, DatasetError):
                    raise episode
                key = str(episode.get("episode_id")) if isinstance(episode, dict) else None
                if key is not None and key in seen:
                    raise DatasetError(f"{location}: episode_id {key!r} appears twice")
                if key is not None and key in done:
                    seen.add(key)
                    existing += 1
                    continue
                trajectory = _convert_episode(episode, folder, location, writer)
            except DatasetError as err:
                if not skip_bad:
                    raise
                skipped.append(str(err))
                continue
            seen.add(str(trajectory.metadata["trajectory_id"]))
            writer.write(trajectory)
            converted += 1
        failed = False
    finally:
        writer.close()
        if failed and fresh and converted == 0:
            # Nothing was written to a folder this call made: remove it, so the corrected
            # rerun (perhaps from a file of another name) is not refused as another dataset.
            shutil.rmtree(out, ignore_errors=True)
    return ConversionReport(Path(out), converted, existing, skipped)
