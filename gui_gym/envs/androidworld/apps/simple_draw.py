"""Simple Draw Pro (``com.simplemobiletools.draw.pro``): a canvas and a colour.

A swipe on the canvas (``SCROLL(direction, canvas)``) draws a line from its centre in that
direction, a tap a dot; strokes are state (colour and points, in canvas fractions) and are
drawn only into the screenshot. Save asks for a file name and a folder of the shared storage
and writes the drawing there (into the Files app's data, where AndroidWorld looks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.files import FilesData
from gui_gym.envs.androidworld.phone import AppView, Dialog, PhoneApp, PhoneState, Screen, icon
from gui_gym.envs.androidworld.pixels import pixel_source

__all__ = ["COLORS", "DrawData", "SimpleDrawApp", "Stroke"]

COLORS = {
    "Black": (20, 20, 20),
    "Red": (220, 30, 30),
    "Green": (30, 160, 60),
    "Blue": (30, 70, 220),
}
SAVE_FOLDERS = ("Download", "Pictures", "Documents", "DCIM")
_EXTENSIONS = (".png", ".svg", ".jpg")
_SWIPES = {"right": (0.9, 0.5), "left": (0.1, 0.5), "up": (0.5, 0.1), "down": (0.5, 0.9)}


@dataclass(frozen=True)
class Stroke:
    color: str
    points: tuple[tuple[float, float], ...]


@dataclass
class DrawData:
    """The canvas, the pen colour, and the strokes of every saved file by storage path."""

    strokes: list[Stroke] = field(default_factory=list)
    color: str = "Black"
    saved: dict[str, int] = field(default_factory=dict)

    def __deepcopy__(self, memo: dict[int, Any]) -> DrawData:
        return DrawData(list(self.strokes), self.color, dict(self.saved))  # strokes are frozen


class SimpleDrawApp(PhoneApp):
    key = "draw"
    title = "Simple Draw Pro"
    package = "com.simplemobiletools.draw.pro"
    aliases = ("simple draw", "draw", "simple draw pro app")
    launcher_order = 70

    def initial_data(self) -> DrawData:
        return DrawData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        data: DrawData = self.data(phone)
        if screen.name == "save":
            folder = self.form(phone).get("folder", SAVE_FOLDERS[0])
            rows: list[Block] = [
                self.field("name", "File name", phone),
                Block("heading", "Folder"),
            ]
            rows += [
                Block(
                    "radio",
                    f,
                    clickable=True,
                    checkable=True,
                    checked=f == folder,
                    handler="draw.folder",
                    handler_arg=f,
                    height=36,
                )
                for f in SAVE_FOLDERS
            ]
            rows.append(self.button("Save", "save"))
            return AppView("Save image as", rows)
        canvas = Block(
            "image",
            "",
            description=f"Canvas, {len(data.strokes)} strokes",
            resource_id="canvas",
            clickable=True,
            scrollable=True,
            height=560,
            handler="draw.canvas",
        )
        return AppView(
            "Simple Draw",
            [canvas],
            actions=[
                icon(f"Colour: {data.color}", "draw.color_menu", "color"),
                icon("Clear", "draw.clear", "clear"),
                icon("Save", "draw.save_menu", "save"),
            ],
        )

    def on_click_canvas(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: DrawData = self.data(phone)
        x, y = 0.5, 0.5
        if action.has_point:
            x0, y0, x1, y1 = element.bounds
            x = (float(action.x) - x0) / max(1, x1 - x0)  # type: ignore[arg-type]
            y = (float(action.y) - y0) / max(1, y1 - y0)  # type: ignore[arg-type]
        data.strokes.append(Stroke(data.color, ((x, y),)))

    def on_scroll_canvas(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: DrawData = self.data(phone)
        end = _SWIPES[action.direction or "right"]
        data.strokes.append(Stroke(data.color, ((0.5, 0.5), end)))

    def on_click_color_menu(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.dialog = Dialog("Pen colour", buttons=[(c, "draw.set_color", c) for c in COLORS])

    def on_click_set_color(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).color = element.handler_arg
        phone.dialog = None

    def on_click_clear(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).strokes = []

    def on_click_save_menu(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "save", form={"name": "", "folder": SAVE_FOLDERS[0]})

    def on_click_folder(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.form(phone)["folder"] = element.handler_arg

    def on_click_save(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        form = self.form(phone)
        name = form.get("name", "").strip()
        if not name or "/" in name:
            raise InvalidAction("type a file name (no '/') before saving")
        if not name.lower().endswith(_EXTENSIONS):
            name += ".png"
        path = f"{form.get('folder', SAVE_FOLDERS[0])}/{name}"
        files: FilesData = phone.apps["files"]
        if not any(f.path == path for f in files.files):
            files.add(path, 40, phone.system.now)
        data: DrawData = self.data(phone)
        data.saved[path] = len(data.strokes)
        self.pop(phone)
        phone.toast = f"Saved {path}"


@pixel_source("draw.canvas")
def _canvas_pixels(phone: PhoneState, arg: str, width: int, height: int) -> np.ndarray:
    data: DrawData = phone.apps["draw"]
    image = Image.new("RGB", (max(1, width), max(1, height)), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    pen = max(2, width // 60)
    for stroke in data.strokes:
        points = [(x * width, y * height) for x, y in stroke.points]
        color = COLORS.get(stroke.color, COLORS["Black"])
        if len(points) == 1:
            (x, y) = points[0]
            draw.ellipse((x - pen, y - pen, x + pen, y + pen), fill=color)
        else:
            draw.line(points, fill=color, width=pen)
    return np.asarray(image, dtype=np.uint8)
