"""Simple Gallery Pro tasks: AndroidWorld's ``SaveCopyOfReceiptTaskEval``
(``task_evals/single/simple_gallery_pro.py``) and ``MarkorTranscribeReceipt``
(``task_evals/single/markor.py``).

Receipts are drawn like AndroidWorld's ``receipt_generator``: a shop and slogan, the header
``Date, Item, Amount``, 1-5 transactions (a day of 2023 before the device date, a gadget,
a price in its range) and a footer. Their text lives only in the picture's pixels.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.gallery import GalleryData
from gui_gym.envs.androidworld.data import random_file_name
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    milestone,
    open_app,
    reach,
    register,
    tap,
)
from gui_gym.envs.androidworld.tasks.markor import create_note_with, note_holds

__all__ = ["random_receipt"]

_ITEMS = (
    ("USB-C Cable", (5, 20)),
    ("Wireless Mouse", (10, 50)),
    ("Bluetooth Keyboard", (30, 100)),
    ("External Hard Drive", (50, 150)),
    ("Webcam", (20, 70)),
    ("Monitor Stand", (15, 60)),
)
_SHOPS = ("Tech Gadgets Inc.", "Innovate Solutions Ltd.", "Future Tech LLC", "Gadget Gurus Co.")
_SLOGANS = (
    "Innovating the Future",
    "Technology for Tomorrow",
    "Bringing Ideas to Life",
    "Innovation and Excellence",
)


def random_receipt(rng: random.Random, n: int) -> tuple[list[str], str]:
    """A receipt's lines (as drawn) and its transactions as AndroidWorld's task text:
    ``"Date, Item, Amount"`` then one ``"<date>, <item>, $<price>"`` line each."""
    rows = []
    for _ in range(n):
        day = date(2023, 1, 1) + timedelta(days=rng.randrange(287))
        item, (low, high) = rng.choice(_ITEMS)
        rows.append(f"{day.isoformat()}, {item}, ${rng.uniform(low, high):.2f}")
    text = "\n".join(["Date, Item, Amount", *rows])
    lines = [
        rng.choice(_SHOPS),
        rng.choice(_SLOGANS),
        "",
        *text.split("\n"),
        "",
        "Thank you for your purchase!",
        "Visit us at: www.tech-gadgets.com",
    ]
    return lines, text


def _viewing(phone: PhoneState, path: str) -> bool:
    top = phone.screen
    return (
        phone.foreground == "gallery"
        and top is not None
        and top.name == "picture"
        and top.arg == path
        and phone.dialog is None
    )


def _view_step(phone: PhoneState, screen: UITree, path: str) -> Action | None:
    """Toward the viewer of ``path`` in Simple Gallery Pro; None once it is shown."""
    if _viewing(phone, path):
        return None
    if phone.dialog is not None:
        return Action(ActionType.GOBACK)
    action = open_app(phone, "gallery", "Simple Gallery Pro")
    if action is not None:
        return action
    top = phone.screen
    if top is None or top.name != "main":
        return Action(ActionType.GOBACK)
    return reach(screen, handler="gallery.open", handler_arg=path)


@register
class SaveCopyOfReceiptTaskEval(AndroidWorldTask):
    """Copy a receipt picture from DCIM into Download under the same name."""

    name = "SaveCopyOfReceiptTaskEval"
    app = "gallery"
    complexity = 1.6
    template = (
        "In Simple Gallery Pro, copy {file_name} in DCIM and save a copy with the same name in "
        "Download"
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        lines, _ = random_receipt(rng, 1)
        return {"file_name": f"receipt_{random_file_name(rng)}.jpg", "lines": lines}

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        gallery: GalleryData = phone.apps["gallery"]
        gallery.put(phone.apps["files"], f"DCIM/{self.params['file_name']}", self.params["lines"])

    def score(self, phone: PhoneState) -> float:
        return float(bool(phone.apps["files"].find(self.params["file_name"], "Download")))

    def milestone_checks(self):
        path = f"DCIM/{self.params['file_name']}"
        return [
            self.opened_milestone(),
            milestone("picture_opened", lambda p: _viewing(p, path)),
            self.done_milestone("copy_saved"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        path = f"DCIM/{self.params['file_name']}"
        if phone.dialog is not None and phone.dialog.title == "Copy to":
            return tap(screen, handler="gallery.copy_to", handler_arg="Download") or Action(
                ActionType.GOBACK
            )
        action = _view_step(phone, screen, path)
        return action or tap(screen, handler="gallery.copy_menu") or Action(ActionType.GOBACK)


@register
class MarkorTranscribeReceipt(AndroidWorldTask):
    """Write the transactions of ``receipt.png`` (shown only as pixels: a vision task) into
    the Markor note ``receipt.md`` as CSV with the header ``Date, Item, Amount``; the note's
    text must match fuzzily (ratio 0.9)."""

    name = "MarkorTranscribeReceipt"
    app = "markor"
    complexity = 1.8
    needs_vision = True
    template = (
        "Create a file in Markor, called receipt.md with the transactions from the receipt.png. "
        "Use Simple Gallery to view the receipt. Please enter transactions in csv format "
        'including the header "Date, Item, Amount".'
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        lines, text = random_receipt(rng, rng.randint(1, 5))
        return {"file_name": "receipt.md", "text": text, "lines": lines}

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        gallery: GalleryData = phone.apps["gallery"]
        gallery.put(phone.apps["files"], "DCIM/receipt.png", self.params["lines"])

    def score(self, phone: PhoneState) -> float:
        return float(note_holds(phone, "receipt.md", self.params["text"]))

    def milestone_checks(self):
        return [
            milestone("receipt_viewed", lambda p: _viewing(p, "DCIM/receipt.png")),
            milestone("note_created", lambda p: bool(p.apps["markor"].find("receipt.md"))),
            self.done_milestone("receipt_transcribed"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if "markor" not in phone.opened:
            action = _view_step(phone, screen, "DCIM/receipt.png")
            if action is not None:
                return action
        return create_note_with(phone, screen, "receipt.md", self.params["text"])
