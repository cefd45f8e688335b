"""Simple Gallery Pro (``com.simplemobiletools.gallery.pro``): the pictures on the shared
storage, grouped by folder.

The pictures are the image files (``.jpg``, ``.png``) of the Files app's storage; what a
picture *shows* (a receipt, a list of expenses, recipes) is kept as lines of text in
:class:`GalleryData` and reaches the agent only as pixels: the viewer's image element carries
no text, and the env draws the lines into the screenshot (:func:`~gui_gym.envs.androidworld.pixels.render_lines`). A text-only
agent sees "Image receipt.png"; a vision-language agent reads the receipt, as on a phone
(see :mod:`~gui_gym.envs.androidworld.pixels`).

The viewer's "Copy to" opens a folder choice and copies the file there (content included).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.files import FilesData, basename, parent
from gui_gym.envs.androidworld.phone import AppView, Dialog, PhoneApp, PhoneState, Screen, icon
from gui_gym.envs.androidworld.pixels import pixel_source, render_lines

__all__ = [
    "COPY_FOLDERS",
    "GalleryApp",
    "GalleryData",
]

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png")
COPY_FOLDERS = ("Download", "DCIM", "Pictures", "Documents")
PICTURE_HEIGHT = 520


@dataclass
class GalleryData:
    """What each picture shows, by storage path (pictures without an entry show a photo)."""

    pictures: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __deepcopy__(self, memo: dict[int, Any]) -> GalleryData:
        return GalleryData(dict(self.pictures))  # values are tuples: shared safely

    def put(self, files: FilesData, path: str, lines: tuple[str, ...] | list[str]) -> None:
        """Store a picture file at ``path`` showing ``lines``."""
        if not files.find(basename(path), parent(path)):
            files.add(path, 200)
        self.pictures[path] = tuple(lines)


def _is_picture(path: str) -> bool:
    return path.lower().endswith(IMAGE_EXTENSIONS)


class GalleryApp(PhoneApp):
    key = "gallery"
    title = "Simple Gallery Pro"
    package = "com.simplemobiletools.gallery.pro"
    aliases = ("simple gallery", "gallery", "gallery pro")
    launcher_order = 60

    def initial_data(self) -> GalleryData:
        return GalleryData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        files: FilesData = phone.apps["files"]
        if screen.name == "picture":
            return self._viewer(phone, screen.arg)
        by_folder: dict[str, list[str]] = {}
        for f in files.files:
            if _is_picture(f.path):
                by_folder.setdefault(parent(f.path) or "Internal storage", []).append(f.path)
        content: list[Block] = []
        for folder in sorted(by_folder, key=str.lower):
            paths = sorted(by_folder[folder], key=lambda p: basename(p).lower())
            content.append(Block("heading", f"{folder} ({len(paths)})", resource_id="album"))
            content += [
                self.row(basename(p), "open", p, description="Image", resource_id="thumbnail")
                for p in paths
            ]
        return AppView("Simple Gallery", content or [Block("text", "No media found.")])

    def _viewer(self, phone: PhoneState, path: str) -> AppView:
        files: FilesData = phone.apps["files"]
        if not files.find(basename(path), parent(path)):
            return AppView("Simple Gallery", [Block("text", "This file no longer exists.")])
        picture = Block(
            "image",
            "",
            description=f"Image {basename(path)}",
            resource_id="picture",
            height=PICTURE_HEIGHT,
            handler="gallery.picture",
            handler_arg=path,
        )
        return AppView(
            basename(path),
            [picture],
            actions=[icon("Copy to", "gallery.copy_menu", "copy", path)],
        )

    def on_click_open(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "picture", element.handler_arg)

    def on_click_copy_menu(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.dialog = Dialog(
            "Copy to",
            basename(element.handler_arg),
            [(f, "gallery.copy_to", f) for f in COPY_FOLDERS],
        )

    def on_click_copy_to(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        screen = phone.screen
        assert screen is not None and screen.name == "picture"
        source, folder = screen.arg, element.handler_arg
        phone.dialog = None
        if parent(source) == folder:
            raise InvalidAction(f"{basename(source)} is already in {folder}")
        data: GalleryData = self.data(phone)
        target = f"{folder}/{basename(source)}"
        data.put(phone.apps["files"], target, data.pictures.get(source, ()))
        phone.toast = f"Copied to {folder}"


@pixel_source("gallery.picture")
def _picture_pixels(phone: PhoneState, path: str, width: int, height: int) -> np.ndarray:
    data: GalleryData = phone.apps["gallery"]
    return render_lines(data.pictures.get(path, ()), width, height)
