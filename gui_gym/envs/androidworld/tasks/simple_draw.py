"""AndroidWorld's ``SimpleDrawProCreateDrawing`` (``task_evals/single/simple_draw_pro.py``):
draw something and save it under a given name in ``Pictures``.

AndroidWorld checks only that the file exists under ``Pictures``; on the simulator the saved
drawing must also hold at least one stroke (the canvas is state), so saving an empty canvas
fails. On a device backend (the storage read over adb) the check is AndroidWorld's.
"""

from __future__ import annotations

import random
from typing import Any

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.files import basename, within
from gui_gym.envs.androidworld.apps.simple_draw import DrawData
from gui_gym.envs.androidworld.data import random_file_name
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    milestone,
    open_app,
    reach,
    register,
    tap,
    type_into,
)

__all__: list[str] = []

_WORDS = ("lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit")


@register
class SimpleDrawProCreateDrawing(AndroidWorldTask):
    """Create a drawing (at least one stroke) and save it as ``file_name`` in Pictures."""

    name = "SimpleDrawProCreateDrawing"
    app = "draw"
    complexity = 1.8
    template = (
        "Create a new drawing in Simple Draw Pro. Name it {file_name}. Save it in the Pictures "
        "folder within the sdk_gphone_x86_64 storage area."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        ext = rng.choice((".png", ".svg", ".jpg"))
        return {"file_name": f"{rng.choice(_WORDS)}_{random_file_name(rng)}{ext}", "text": ""}

    def _saved(self, phone: PhoneState) -> bool:
        files = phone.apps["files"]
        name = self.params["file_name"]
        data: DrawData | None = phone.apps.get("draw")
        if data is None:  # a device: its files are read over adb, the strokes are not
            return bool(files.find(name, "Pictures"))
        return any(
            basename(path) == name and within(path, "Pictures") and strokes > 0
            for path, strokes in data.saved.items()
        ) and bool(files.find(name, "Pictures"))

    def score(self, phone: PhoneState) -> float:
        return float(self._saved(phone))

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            # strokes are simulator state: on a device this milestone does not fire
            milestone("stroke_drawn", lambda p: "draw" in p.apps and bool(p.apps["draw"].strokes)),
            milestone("save_form_opened", lambda p: p.screen_name == "draw/save"),
            self.done_milestone("drawing_saved"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if phone.dialog is not None:
            return Action(ActionType.GOBACK)
        action = open_app(phone, "draw", "Simple Draw Pro")
        if action is not None:
            return action
        data: DrawData = phone.apps["draw"]
        top = phone.screen
        assert top is not None
        if top.name == "save":
            if not data.strokes:
                return Action(ActionType.GOBACK)
            form = phone.forms.get("draw", {})
            action = type_into(screen, "name", self.params["file_name"], form)
            if action is not None:
                return action
            if phone.focus:
                return Action(ActionType.GOBACK)
            if form.get("folder") != "Pictures":
                return reach(screen, handler="draw.folder", handler_arg="Pictures")
            return reach(screen, handler="draw.save")
        if not data.strokes:
            canvas = screen.find_one(handler="draw.canvas")
            if canvas is None:
                return Action(ActionType.GOBACK)
            return Action(ActionType.SCROLL, index=canvas.index, direction="right")
        return tap(screen, handler="draw.save_menu") or Action(ActionType.GOBACK)
