"""Chrome (``com.android.chrome``) showing AndroidWorld's three browser games as pages.

A page is an HTML file of the shared storage (``Download/task.html``) that the Files app
opens with Chrome, or Chrome's start page lists under Downloads. The game comes from the
file's entry in :class:`ChromeData` (``kind`` and ``seed``) and keeps its state there:

* ``maze``: a 4x4 maze (walls only in the pixels), an ``X`` moved with Up/Down/Left/Right to
  the bottom-right cell;
* ``multiply``: a number shown per click of "Click me" (5 numbers), then a form for their
  product;
* ``draw``: three colours shown as swatches (pixels only), a palette of 24 unlabelled colour
  buttons and a canvas; Submit checks that the three colours were used.

Solved, a page shows ``Success!`` (what AndroidWorld's check looks for on screen).
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.files import FilesData, basename
from gui_gym.envs.androidworld.phone import AppView, PhoneApp, PhoneState, Screen
from gui_gym.envs.androidworld.pixels import pixel_source

__all__ = ["PALETTE", "ChromeApp", "ChromeData", "maze_path", "new_game"]

PALETTE = (
    "#ff0000", "#00ff00", "#0000ff", "#ffff00", "#ff00ff", "#00ffff",
    "#800000", "#008000", "#000080", "#808000", "#800080", "#008080",
    "#ffa500", "#ff1493", "#9932cc", "#20b2aa", "#4b0082", "#00ff7f",
    "#ff6347", "#00ced1", "#9400d3", "#f0e68c", "#ff8c00", "#228b22",
)  # fmt: skip
"""The draw game's palette (AndroidWorld's ``availableColors``)."""
MAZE = 4
MOVES = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


def _maze(rng: random.Random) -> list[str]:
    """A 4x4 maze carved by a randomised depth-first walk from the top-left until it reaches
    the bottom-right (AndroidWorld's ``generateMaze``): ``#`` wall, ``.`` open."""
    grid = [["#"] * MAZE for _ in range(MAZE)]
    stack = [(0, 0)]
    directions = list(MOVES.values())
    while stack:
        row, col = stack.pop()
        grid[row][col] = "."
        if (row, col) == (MAZE - 1, MAZE - 1):
            break
        rng.shuffle(directions)
        for dr, dc in directions:
            r, c = row + dr, col + dc
            if 0 <= r < MAZE and 0 <= c < MAZE and grid[r][c] == "#":
                stack.append((r, c))
    grid[0][0] = grid[MAZE - 1][MAZE - 1] = "."
    return ["".join(r) for r in grid]


def maze_path(layout: list[str], start: tuple[int, int]) -> list[str]:
    """The shortest list of moves from ``start`` to the bottom-right cell (breadth first)."""
    goal = (MAZE - 1, MAZE - 1)
    previous: dict[tuple[int, int], tuple[tuple[int, int], str] | None] = {start: None}
    queue = [start]
    while queue:
        cell = queue.pop(0)
        if cell == goal:
            break
        for name, (dr, dc) in MOVES.items():
            nxt = (cell[0] + dr, cell[1] + dc)
            inside = 0 <= nxt[0] < MAZE and 0 <= nxt[1] < MAZE
            if inside and layout[nxt[0]][nxt[1]] == "." and nxt not in previous:
                previous[nxt] = (cell, name)
                queue.append(nxt)
    moves: list[str] = []
    cell = goal
    while previous.get(cell) is not None:
        cell, name = previous[cell]  # type: ignore[misc]
        moves.append(name)
    return moves[::-1]


def new_game(kind: str, seed: int) -> dict[str, Any]:
    """A game's starting state, drawn from ``seed``."""
    rng = random.Random(seed)
    if kind == "maze":
        return {"kind": kind, "layout": _maze(rng), "pos": [0, 0], "success": False}
    if kind == "multiply":
        numbers = [rng.randint(1, 10) for _ in range(5)]
        return {"kind": kind, "numbers": numbers, "clicks": 0, "success": False}
    if kind == "draw":
        return {
            "kind": kind,
            "colors": rng.sample(PALETTE, 3),
            "pen": "#000000",
            "strokes": [],
            "success": False,
        }
    raise ValueError(f"unknown game {kind!r}; known: maze, multiply, draw")


@dataclass
class ChromeData:
    """Games by page path (``Download/task.html``); pages without one are blank."""

    games: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __deepcopy__(self, memo: dict[int, Any]) -> ChromeData:
        return ChromeData(copy.deepcopy(self.games, memo) if self.games else {})


class ChromeApp(PhoneApp):
    key = "chrome"
    title = "Chrome"
    package = "com.android.chrome"
    aliases = ("google chrome", "browser", "chrome browser")
    launcher_order = 40

    def initial_data(self) -> ChromeData:
        return ChromeData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        if screen.name == "page":
            return self._page(phone, screen.arg)
        files: FilesData = phone.apps["files"]
        pages = sorted(f.path for f in files.files if f.name.endswith(".html"))
        rows: list[Block] = [Block("input", "", description="Search or type web address")]
        rows.append(Block("heading", "Downloads"))
        rows += [self.row(basename(p), "open_page", p, resource_id="download") for p in pages]
        return AppView("New tab", rows)

    def _page(self, phone: PhoneState, path: str) -> AppView:
        game = self.data(phone).games.get(path)
        title = f"file:///sdcard/{path}"
        if game is None:
            return AppView(title, [Block("text", "")])
        if game["success"]:
            return AppView(title, [Block("heading", "Success!", resource_id="result")])
        kind = game["kind"]
        if kind == "maze":
            board = Block(
                "image", "", description="Maze", height=280, handler="chrome.maze", handler_arg=path
            )
            moves = [self.button(d.title(), "move", d) for d in MOVES]
            return AppView(title, [Block("heading", "Maze Puzzle"), board, *moves])
        if kind == "multiply":
            content = [Block("heading", "Memory Task")]
            if game["clicks"] < 5:
                content.append(
                    Block("text", str(game["numbers"][game["clicks"]]), resource_id="number")
                )
                content.append(self.button("Click me", "click_me"))
            else:
                content += [
                    self.field("answer", "Product", phone),
                    self.button("Submit", "submit"),
                ]
            return AppView(title, content)
        swatches = Block(
            "image", "", description="Colors", height=48, handler="chrome.task", handler_arg=path
        )
        canvas = Block(
            "image",
            "",
            resource_id="canvas",
            height=200,
            clickable=True,
            scrollable=True,
            handler="chrome.canvas",
            handler_arg=path,
        )
        palette = [
            Block(
                "button",
                "",
                clickable=True,
                height=22,
                gap=2,
                handler="chrome.pen",
                handler_arg=color,
            )
            for color in PALETTE
        ]
        return AppView(
            title,
            [
                Block("heading", "Color Challenge"),
                swatches,
                canvas,
                self.button("Clear", "clear"),
                self.button("Submit", "submit"),
                *palette,
            ],
        )

    def _game(self, phone: PhoneState) -> dict[str, Any]:
        screen = phone.screen
        game = self.data(phone).games.get(screen.arg) if screen and screen.name == "page" else None
        if game is None:
            raise InvalidAction("no game on this page")
        return game

    def on_click_open_page(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "page", element.handler_arg)

    def on_click_move(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        game = self._game(phone)
        dr, dc = MOVES[element.handler_arg]
        r, c = game["pos"][0] + dr, game["pos"][1] + dc
        if 0 <= r < MAZE and 0 <= c < MAZE and game["layout"][r][c] == ".":
            game["pos"] = [r, c]  # a move into a wall or off the board does nothing
            game["success"] = (r, c) == (MAZE - 1, MAZE - 1)

    def on_click_click_me(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        game = self._game(phone)
        game["clicks"] = min(5, game["clicks"] + 1)

    def on_click_submit(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        game = self._game(phone)
        if game["kind"] == "multiply":
            text = self.form(phone).get("answer", "").strip()
            product = int(np.prod(game["numbers"]))
            game["success"] = text.lstrip("-").isdigit() and int(text) == product
        else:
            used = {s["color"] for s in game["strokes"]}
            game["success"] = set(game["colors"]) <= used

    def on_click_pen(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._game(phone)["pen"] = element.handler_arg

    def on_click_clear(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._game(phone)["strokes"] = []

    def _stroke(self, phone: PhoneState, end: tuple[float, float]) -> None:
        game = self._game(phone)
        game["strokes"].append({"color": game["pen"], "end": list(end)})

    def on_click_canvas(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._stroke(phone, (0.5, 0.5))

    def on_scroll_canvas(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        ends = {"right": (0.9, 0.5), "left": (0.1, 0.5), "up": (0.5, 0.1), "down": (0.5, 0.9)}
        self._stroke(phone, ends[action.direction or "right"])


def _rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


@pixel_source("chrome.maze")
def _maze_pixels(phone: PhoneState, path: str, width: int, height: int) -> np.ndarray:
    game = phone.apps["chrome"].games[path]
    image = np.full((max(1, height), max(1, width), 3), 255, np.uint8)
    side = max(1, min(width, height) // MAZE)
    for r, line in enumerate(game["layout"]):
        for c, cell in enumerate(line):
            y0, x0 = r * side, c * side
            color = (40, 40, 40) if cell == "#" else (255, 255, 255)
            if (r, c) == (MAZE - 1, MAZE - 1):
                color = (80, 200, 80)
            if [r, c] == game["pos"]:
                color = (230, 60, 60)
            image[y0 + 1 : y0 + side - 1, x0 + 1 : x0 + side - 1] = color
    return image


@pixel_source("chrome.task")
def _task_pixels(phone: PhoneState, path: str, width: int, height: int) -> np.ndarray:
    game = phone.apps["chrome"].games[path]
    image = np.full((max(1, height), max(1, width), 3), 255, np.uint8)
    side = max(1, height - 4)
    for i, color in enumerate(game["colors"]):
        image[2 : 2 + side, 4 + i * (side + 6) : 4 + i * (side + 6) + side] = _rgb(color)
    return image


@pixel_source("chrome.pen")
def _pen_pixels(phone: PhoneState, color: str, width: int, height: int) -> np.ndarray:
    return np.broadcast_to(np.array(_rgb(color), np.uint8), (height, width, 3)).copy()


@pixel_source("chrome.canvas")
def _canvas_pixels(phone: PhoneState, path: str, width: int, height: int) -> np.ndarray:
    game = phone.apps["chrome"].games[path]
    image = np.full((max(1, height), max(1, width), 3), 255, np.uint8)
    cy, cx = height // 2, width // 2
    for stroke in game["strokes"]:
        ex, ey = int(stroke["end"][0] * width), int(stroke["end"][1] * height)
        x0, x1 = sorted((cx, ex))
        y0, y1 = sorted((cy, ey))
        image[max(0, y0 - 2) : y1 + 3, max(0, x0 - 2) : x1 + 3] = _rgb(stroke["color"])
    return image
