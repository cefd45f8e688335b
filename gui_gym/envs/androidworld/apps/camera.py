"""Camera (``com.android.camera2``): a viewfinder with Photo/Video modes, the shutter, and a
thumbnail that opens the gallery of captured media.

In photo mode the shutter saves ``IMG_<date>_<time>.jpg`` to ``Pictures``; in video mode it
starts recording and a second tap stops it, saving ``VID_<date>_<time>.mp4`` to ``Movies``.
The mode cannot change, nor the gallery open, while a video records. The app bar cycles the
flash (auto/on/off) and the countdown timer (off/3 s/10 s) and toggles grid lines. The gallery lists both
folders with their counts; tapping a file offers to delete it.

The simulated phone's clock does not run, so every capture is stamped one second after the
previous one (from the device time, 2023-10-15 15:34:00).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.phone import AppView, PhoneApp, PhoneState, Screen, icon

__all__ = ["CameraApp", "CameraData"]


@dataclass
class CameraData:
    """Camera state and its folders: ``photos`` (``/sdcard/Pictures``) and ``videos``
    (``/sdcard/Movies``) hold file names, oldest first."""

    mode: str = "photo"
    recording: bool = False
    front: bool = False
    flash: str = "auto"
    countdown: int = 0
    grid: bool = False
    photos: list[str] = field(default_factory=list)
    videos: list[str] = field(default_factory=list)
    shots: int = 0

    def stamp(self) -> str:
        """``20231015_HHMMSS`` of the next capture."""
        seconds = 15 * 3600 + 34 * 60 + self.shots
        self.shots += 1
        h, rest = divmod(seconds % 86400, 3600)
        m, s = divmod(rest, 60)
        return f"20231015_{h:02d}{m:02d}{s:02d}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _option(description: str, handler: str) -> Block:
    return icon(description, f"camera.{handler}", f"{handler}_toggle")


def _media_row(name: str) -> Block:
    return Block(
        "listitem",
        name,
        resource_id="media_row",
        clickable=True,
        handler="camera.media",
        handler_arg=name,
        gap=2,
    )


class CameraApp(PhoneApp):
    key = "camera"
    title = "Camera"
    package = "com.android.camera2"
    aliases = ("camera app", "camera2", "com.android.camera")
    launcher_order = 36

    def initial_data(self) -> CameraData:
        return CameraData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        data: CameraData = self.data(phone)
        if screen.name == "gallery":
            content: list[Block] = [
                Block(
                    "text",
                    f"{_count(len(data.photos), 'photo')}, {_count(len(data.videos), 'video')}",
                    resource_id="media_count",
                ),
                Block("heading", "Pictures"),
            ]
            content += [_media_row(name) for name in reversed(data.photos)]
            content.append(Block("heading", "Movies"))
            content += [_media_row(name) for name in reversed(data.videos)]
            return AppView("Gallery", content)
        content = [
            Block(
                "image",
                "",
                description="Front camera preview" if data.front else "Camera preview",
                resource_id="viewfinder",
                height=360,
            )
        ]
        if data.recording:
            content.append(Block("text", "Recording 00:00", resource_id="recording_time"))
        for mode, label in (("photo", "Photo"), ("video", "Video")):
            content.append(
                Block(
                    "tab",
                    label,
                    description=f"Switch to {label} Mode",
                    resource_id="mode",
                    clickable=True,
                    selected=data.mode == mode,
                    handler="camera.mode",
                    handler_arg=mode,
                    height=40,
                )
            )
        if data.mode == "photo":
            shutter = "Shutter"
        else:
            shutter = "Stop recording" if data.recording else "Start recording"
        latest = (data.photos + data.videos)[-1:] if (data.photos or data.videos) else []
        bottom = [
            icon(
                "Open gallery" if not latest else f"Open gallery, latest {latest[0]}",
                "camera.gallery",
                "thumbnail",
            ),
            icon(shutter, "camera.shutter", "shutter_button"),
            icon("Switch camera", "camera.switch", "switch_camera"),
        ]
        actions = [
            _option(f"Flash {data.flash}", "flash"),
            _option(f"Countdown timer {data.countdown or 'off'}", "countdown"),
            _option(f"Grid lines {'on' if data.grid else 'off'}", "grid"),
        ]
        return AppView("Camera", content, actions=actions, bottom=bottom)

    def on_click_mode(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: CameraData = self.data(phone)
        if data.recording and element.handler_arg != data.mode:
            raise InvalidAction("stop the recording before switching modes")
        data.mode = element.handler_arg

    def on_click_shutter(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: CameraData = self.data(phone)
        if data.mode == "photo":
            name = f"IMG_{data.stamp()}.jpg"
            data.photos.append(name)
            phone.toast = "Photo saved"
        elif data.recording:
            data.recording = False
            data.videos.append(f"VID_{data.stamp()}.mp4")
            phone.toast = "Video saved"
        else:
            data.recording = True

    def on_click_switch(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: CameraData = self.data(phone)
        if data.recording:
            raise InvalidAction("stop the recording before switching cameras")
        data.front = not data.front

    def on_click_flash(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: CameraData = self.data(phone)
        data.flash = {"auto": "on", "on": "off", "off": "auto"}[data.flash]

    def on_click_countdown(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: CameraData = self.data(phone)
        data.countdown = {0: 3, 3: 10, 10: 0}[data.countdown]

    def on_click_grid(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: CameraData = self.data(phone)
        data.grid = not data.grid

    def on_click_gallery(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        if self.data(phone).recording:
            raise InvalidAction("stop the recording before opening the gallery")
        self.push(phone, "gallery")

    def on_click_media(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.ask_delete(phone, "Delete file?", element.handler_arg, element.handler_arg)

    def on_click_confirm_delete(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        data: CameraData = self.data(phone)
        name = element.handler_arg
        data.photos = [n for n in data.photos if n != name]
        data.videos = [n for n in data.videos if n != name]
        phone.dialog = None
        phone.toast = "Deleted"
