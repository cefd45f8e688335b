"""Reading a PRM checkpoint folder's ``prm.json``: the one check both
:class:`~gui_gym.models.prm.transformers_prm.TransformersPRM` and
:class:`~gui_gym.models.prm.vision_prm.VisionPRM` make when they load a folder."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["read_prm_config"]


def read_prm_config(
    path: Path,
    format_name: str,
    keys: Sequence[str],
    *,
    version: int | None = None,
) -> dict[str, Any] | None:
    """A PRM folder's ``prm.json`` as a dict (None when the folder has none), checked: valid
    JSON, the expected ``format`` (and ``version``), every key in ``keys`` and ``template``.

    Raises:
        ValueError: naming the file and what is wrong with it.
    """
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(data, dict) or data.get("format") != format_name:
        raise ValueError(f"{path}: not a {format_name} config")
    if version is not None and data.get("version") != version:
        raise ValueError(f"{path}: version {data.get('version')!r}, expected {version}")
    missing = [key for key in (*keys, "template") if key not in data]
    if missing:
        raise ValueError(f"{path}: missing {', '.join(missing)}")
    return data
