"""AndroidWorld's browser games (``task_evals/single/browser.py``): ``task.html`` in Download,
opened from the Files app with Chrome, holds a maze, a memory-and-multiply game or a colour
drawing (see :mod:`~gui_gym.envs.androidworld.apps.chrome`).

As in AndroidWorld the check is on what is in front: Chrome shows the page with
``Success!`` (here: the page's game is solved and that page is on screen).
"""

from __future__ import annotations

import math
import random
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.chrome import ChromeData, maze_path, new_game
from gui_gym.envs.androidworld.apps.files import FilesApp
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    milestone,
    reach,
    register,
    seek,
    type_into,
)
from gui_gym.envs.androidworld.tasks.files import goto_folder, listing_order

__all__: list[str] = []

PAGE = "Download/task.html"
_FILES = FilesApp()
_PREAMBLE = (
    "Open the file task.html in Downloads in the file manager; when prompted open it with Chrome."
)


class _BrowserTask(AndroidWorldTask):
    """A game page; ``kind`` names the game."""

    app = "chrome"
    complexity = 2
    kind: ClassVar[str] = ""

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"browser_task_seed": rng.randint(0, 2**32 - 1)}

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        phone.apps["files"].add(PAGE, 8)
        chrome: ChromeData = phone.apps["chrome"]
        chrome.games[PAGE] = new_game(self.kind, self.params["browser_task_seed"])

    def _game(self, phone: PhoneState) -> dict[str, Any]:
        return phone.apps["chrome"].games[PAGE]

    def _on_page(self, phone: PhoneState) -> bool:
        top = phone.screen
        return (
            phone.foreground == "chrome"
            and not phone.shade
            and top is not None
            and top.name == "page"
            and top.arg == PAGE
        )

    def score(self, phone: PhoneState) -> float:
        return float(self._on_page(phone) and self._game(phone)["success"])

    def progress(self, phone: PhoneState) -> bool:
        """The game's halfway milestone."""
        raise NotImplementedError

    def milestone_checks(self):
        return [
            milestone("page_opened", self._on_page),
            milestone(f"{self.kind}_progress", self.progress),
            self.done_milestone("success_shown"),
        ]

    def play(self, phone: PhoneState, screen: UITree) -> Action:
        """The expert's next move on the page."""
        raise NotImplementedError

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if self._on_page(phone) and phone.dialog is None:
            return self.play(phone, screen)
        top = phone.screen
        if phone.foreground == "files" and top is not None and top.name == "item":
            if top.arg == PAGE and phone.dialog is None:
                return reach(screen, handler="files.open_with")
            return Action(ActionType.GOBACK)
        action = goto_folder(phone, screen, _FILES, "Download")
        if action is not None:
            return action
        return seek(screen, "files.entry", PAGE, listing_order(phone, _FILES, "Download"))


@register
class BrowserMaze(_BrowserTask):
    """Move the X through a 4x4 maze to the bottom-right cell; the walls show only in the
    pixels (a vision task: blind moves into walls do nothing)."""

    name = "BrowserMaze"
    kind = "maze"
    needs_vision = True
    template = (
        _PREAMBLE + " Then navigate the X to the bottom-right cell, by using the direction buttons."
    )

    def progress(self, phone: PhoneState) -> bool:
        return self._game(phone)["pos"] != [0, 0]

    def play(self, phone: PhoneState, screen: UITree) -> Action:
        game = self._game(phone)
        moves = maze_path(game["layout"], tuple(game["pos"]))  # type: ignore[arg-type]
        return reach(screen, handler="chrome.move", handler_arg=moves[0])


@register
class BrowserMultiply(_BrowserTask):
    """Click five times, remember the five numbers shown one at a time, and enter their
    product (a memory task: each number disappears at the next click)."""

    name = "BrowserMultiply"
    kind = "multiply"
    complexity = 2.2
    template = (
        _PREAMBLE
        + " Then click the button 5 times, remember the numbers displayed, and enter their "
        "product in the form."
    )

    def progress(self, phone: PhoneState) -> bool:
        return self._game(phone)["clicks"] >= 5

    def play(self, phone: PhoneState, screen: UITree) -> Action:
        game = self._game(phone)
        if game["clicks"] < 5:
            return reach(screen, handler="chrome.click_me")
        product = str(math.prod(game["numbers"]))
        form = phone.forms.get("chrome", {})
        action = type_into(screen, "answer", product, form)
        if action is not None:
            return action
        if phone.focus:
            return Action(ActionType.GOBACK)
        return reach(screen, handler="chrome.submit")


@register
class BrowserDraw(_BrowserTask):
    """Draw on the canvas with the three colours the page shows (swatches and palette are
    colours only, no labels: a vision task), then Submit."""

    name = "BrowserDraw"
    kind = "draw"
    needs_vision = True
    template = (
        _PREAMBLE + " Then create a drawing using the three colors shown at the top and hit submit."
    )

    def progress(self, phone: PhoneState) -> bool:
        game = self._game(phone)
        return any(s["color"] in game["colors"] for s in game["strokes"])

    def play(self, phone: PhoneState, screen: UITree) -> Action:
        game = self._game(phone)
        used = {s["color"] for s in game["strokes"]}
        missing = [c for c in game["colors"] if c not in used]
        if not missing:
            return reach(screen, handler="chrome.submit")
        if game["pen"] != missing[0]:
            return reach(screen, handler="chrome.pen", handler_arg=missing[0])
        canvas = screen.find_one(handler="chrome.canvas")
        if canvas is None:
            return Action(ActionType.SCROLL, direction="up")
        return Action(ActionType.SCROLL, index=canvas.index, direction="right")
