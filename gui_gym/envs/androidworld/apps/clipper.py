"""Clipper: a clipboard manager (AndroidWorld uses it to read and set the clipboard)."""

from __future__ import annotations

from gui_gym.core.actions import Action
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.phone import AppView, PhoneApp, PhoneState, Screen

__all__ = ["ClipperApp"]


class ClipperApp(PhoneApp):
    key = "clipper"
    title = "Clipper"
    package = "ca.zgrs.clipper"
    aliases = ("clipboard", "clipper app")

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        return AppView(
            "Clipper",
            [
                Block(
                    "text",
                    f"Clipboard: {phone.system.clipboard or '(empty)'}",
                    resource_id="clipboard_text",
                ),
                self.field("text", "Text to copy", phone),
                self.button("Copy to clipboard", "copy"),
                self.button("Paste into field", "paste"),
            ],
        )

    def on_click_copy(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.system.clipboard = self.form(phone).get("text", "")
        phone.toast = "Copied to clipboard"

    def on_click_paste(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.form(phone)["text"] = phone.system.clipboard
