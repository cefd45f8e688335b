"""Audio Recorder (``com.dimowner.audiorecorder``): a record/stop button and the list of
recordings.

Stopping a recording opens the "Save record" screen with a file name field (prefilled with
``Record-<n>``); Save writes ``<name>.m4a`` to the recordings folder (replacing a file of the
same name), Cancel or Back discards the recording. Tapping a recording plays it; a long press
offers to delete it.

The simulated phone's clock does not run, so each recording gets a nominal length and size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.rows import ImmutableRow
from gui_gym.envs.androidworld.phone import AppView, PhoneApp, PhoneState, Screen

__all__ = ["EXTENSION", "AudioRecorderApp", "AudioRecorderData", "Recording"]

EXTENSION = ".m4a"


@dataclass(frozen=True)
class Recording(ImmutableRow):
    """A file in the recordings folder; ``serial`` tells two recordings of one name apart."""

    name: str
    duration_s: int
    size_kb: int
    serial: int


@dataclass
class AudioRecorderData:
    recordings: list[Recording] = field(default_factory=list)
    recording: bool = False
    next_serial: int = 1

    def find(self, name: str) -> Recording | None:
        for r in self.recordings:
            if r.name == name:
                return r
        return None


def _length(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


class AudioRecorderApp(PhoneApp):
    key = "audio_recorder"
    title = "Audio Recorder"
    package = "com.dimowner.audiorecorder"
    aliases = ("audio recorder app", "audiorecorder", "voice recorder", "recorder")
    launcher_order = 34

    def initial_data(self) -> AudioRecorderData:
        return AudioRecorderData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        if screen.name == "save":
            return AppView(
                "Save record",
                [
                    Block("text", "Name the recording. It is saved as an .m4a file."),
                    self.field("name", "File name", phone),
                ],
                bottom=[self.button("Cancel", "back"), self.button("Save", "save")],
            )
        data: AudioRecorderData = self.data(phone)
        content: list[Block] = []
        if data.recording:
            content.append(Block("text", "Recording… 0:05", resource_id="recording_status"))
        content.append(Block("heading", "Records"))
        content += [
            Block(
                "listitem",
                f"{r.name}  {_length(r.duration_s)}  {r.size_kb} KB",
                resource_id="record_row",
                clickable=True,
                long_clickable=True,
                handler="audio_recorder.play",
                handler_arg=r.name,
                gap=2,
            )
            for r in data.recordings
        ]
        if not data.recordings:
            content.append(Block("text", "No records yet", resource_id="empty"))
        button = (
            self.button("", "stop", description="Stop recording", resource_id="btn_record_stop")
            if data.recording
            else self.button("", "record", description="Record", resource_id="btn_record")
        )
        return AppView("Audio Recorder", content, bottom=[button])

    def on_click_record(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).recording = True

    def on_click_stop(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: AudioRecorderData = self.data(phone)
        data.recording = False
        self.push(phone, "save", form={"name": f"Record-{len(data.recordings) + 1}"})

    def on_click_save(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        name = self.form(phone).get("name", "").strip()
        if not name:
            raise InvalidAction("the file name cannot be empty")
        if "/" in name:
            raise InvalidAction("a file name cannot contain '/'")
        data: AudioRecorderData = self.data(phone)
        serial = data.next_serial
        data.next_serial += 1
        duration = 3 + (serial * 7) % 20
        file_name = name + EXTENSION
        data.recordings = [r for r in data.recordings if r.name != file_name]
        data.recordings.append(Recording(file_name, duration, 16 * duration, serial))
        phone.forms[self.key] = {}
        self.pop(phone)
        phone.toast = f"Saved {file_name}"

    def on_click_play(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.toast = f"Playing {element.handler_arg}"

    def on_long_click_play(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.ask_delete(phone, "Delete record?", element.handler_arg, element.handler_arg)

    def on_click_confirm_delete(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        data: AudioRecorderData = self.data(phone)
        data.recordings = [r for r in data.recordings if r.name != element.handler_arg]
        phone.dialog = None
        phone.toast = "Record deleted"
