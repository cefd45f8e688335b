"""Settings: Wi-Fi, airplane mode, Bluetooth and display brightness."""

from __future__ import annotations

from gui_gym.core.actions import Action
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.phone import AppView, PhoneApp, PhoneState, Screen, slider_level

__all__ = ["SettingsApp", "settings_path"]

_SECTIONS = (
    ("network", "Network & internet", "Mobile, Wi-Fi, hotspot"),
    ("connected", "Connected devices", "Bluetooth, pairing"),
    ("apps", "Apps", "Recent apps, default apps"),
    ("notifications", "Notifications", "Notification history, conversations"),
    ("battery", "Battery", "100%"),
    ("storage", "Storage", "34% used - 42.1 GB free"),
    ("sound", "Sound & vibration", "Volume, haptics, Do Not Disturb"),
    ("display", "Display", "Dark theme, font size, brightness"),
    ("wallpaper", "Wallpaper & style", "Colors, themed icons"),
    ("accessibility", "Accessibility", "Display, interaction, audio"),
    ("security", "Security & privacy", "App security, device lock"),
    ("location", "Location", "On - 3 apps have access to location"),
    ("accounts", "Passwords & accounts", "Saved passwords, autofill, synced accounts"),
    ("system", "System", "Languages, gestures, time, backup"),
    ("about", "About phone", "Pixel 6"),
)
"""Android 13's top-level Settings list; sections a task never needs show a summary page."""

_PARENT = {"internet": "network"}
"""Sub-screens below a top-level section (Android 13 keeps the Wi-Fi switch in Internet)."""


def settings_path(screen: str) -> tuple[str, ...]:
    """Screens from the Settings root to ``screen``: ``("network", "internet")``."""
    path = [screen]
    while path[0] in _PARENT:
        path.insert(0, _PARENT[path[0]])
    return tuple(path)


class SettingsApp(PhoneApp):
    key = "settings"
    launcher_order = 90
    title = "Settings"
    package = "com.android.settings"
    aliases = ("system settings", "android settings")

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        s = phone.system
        if screen.name == "main":
            content = [
                Block(
                    "input",
                    "",
                    description="Search settings",
                    resource_id="search_settings",
                    height=40,
                )
            ]
            for key, label, summary in _SECTIONS:
                content.append(self.row(f"{label}: {summary}", "section", key))
            return AppView("Settings", content)
        if screen.name == "network":
            online = s.wifi and not s.airplane
            return AppView(
                "Network & internet",
                [
                    self.row(
                        f"Internet: {'AndroidWifi' if online else 'Off'}", "section", "internet"
                    ),
                    self.row("Calls & SMS: T-Mobile", "section", "calls"),
                    self.row("SIMs: T-Mobile", "section", "sims"),
                    self.toggle("Airplane mode", s.airplane, "airplane"),
                    self.row("Hotspot & tethering: Off", "section", "hotspot"),
                    self.row("Data Saver: Off", "section", "data_saver"),
                    self.row("VPN: None", "section", "vpn"),
                    self.row("Private DNS: Automatic", "section", "dns"),
                ],
            )
        if screen.name == "internet":
            online = s.wifi and not s.airplane
            networks = ["AndroidWifi", "Guest-5G", "Office Net"] if online else []
            return AppView(
                "Internet",
                [
                    self.toggle("Wi-Fi", online, "wifi"),
                    *(
                        Block("text", f"{n}{' - Connected' if i == 0 else ''}")
                        for i, n in enumerate(networks)
                    ),
                    Block("text", "Wi-Fi is off" if not online else "Add network"),
                ],
            )
        if screen.name == "connected":
            return AppView(
                "Connected devices",
                [
                    self.toggle("Bluetooth", s.bluetooth, "bluetooth"),
                    Block("text", "Pair new device" if s.bluetooth else "Bluetooth is off"),
                ],
            )
        if screen.name == "display":
            percent = round(100 * (s.brightness - 1) / 254)
            return AppView(
                "Display",
                [
                    Block("heading", "Brightness"),
                    Block(
                        "slider",
                        f"Brightness level {percent}%",
                        description="Brightness level",
                        resource_id="brightness_level",
                        clickable=True,
                        scrollable=True,
                        handler="settings.brightness",
                        height=40,
                    ),
                    self.toggle("Adaptive brightness", False, "noop"),
                    self.toggle("Dark theme", False, "noop"),
                ],
            )
        if screen.name == "sound":
            return AppView(
                "Sound & vibration", [self.toggle("Do Not Disturb", s.do_not_disturb, "dnd")]
            )
        if screen.name == "about":
            return AppView(
                "About phone",
                [Block("text", "Device name: Pixel 6"), Block("text", "Android version: 13")],
            )
        labels = {key: label for key, label, _ in _SECTIONS}
        label = labels.get(screen.name, screen.name.replace("_", " ").title())
        return AppView(label, [Block("text", f"{label} settings")])

    def on_click_section(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, element.handler_arg)

    def on_click_wifi(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        s = phone.system
        s.wifi = not (s.wifi and not s.airplane)
        if s.wifi:
            s.airplane = False

    def on_click_airplane(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.system.airplane = not phone.system.airplane

    def on_click_bluetooth(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.system.bluetooth = not phone.system.bluetooth

    def on_click_dnd(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.system.do_not_disturb = not phone.system.do_not_disturb

    def on_click_noop(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        """Switches that exist for realism and change nothing a task checks."""

    def on_click_brightness(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        if action.has_point:  # a tap sets the level at that point of the track
            phone.system.brightness = slider_level(element, float(action.x))  # type: ignore[arg-type]

    def on_scroll_brightness(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        step = 64 if action.direction in ("right", "up") else -64
        phone.system.brightness = min(255, max(1, phone.system.brightness + step))
