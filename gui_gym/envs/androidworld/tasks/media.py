"""Audio Recorder and Camera tasks (AndroidWorld ``task_evals/single/audio_recorder.py`` and
``camera.py``).

AndroidWorld lists the recordings folder and ``/sdcard/Pictures``/``Movies`` on the device;
here the checks read the same folders in the apps' data: recordings present at the start are
in the parameters, and the camera's folders start empty (AndroidWorld clears them).
"""

from __future__ import annotations

import random
from typing import Any

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.audio_recorder import EXTENSION, AudioRecorderData, Recording
from gui_gym.envs.androidworld.apps.camera import CameraData
from gui_gym.envs.androidworld.data import with_marker
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

__all__ = ["recording_name"]

_GOBACK = Action(ActionType.GOBACK)

_WORDS = (
    "interview",
    "meeting",
    "lecture",
    "session",
    "note",
    "conference",
    "webinar",
    "workshop",
    "seminar",
    "briefing",
    "discussion",
    "talk",
    "presentation",
    "training",
    "guidance",
    "memo",
    "narration",
    "storytelling",
    "journal",
    "diary",
    "debate",
    "symposium",
    "roundtable",
    "consultation",
    "review",
)
"""The Audio Recorder task's base names (AndroidWorld's list)."""


def recording_name(rng: random.Random) -> str:
    """``"<word>.m4a"`` with a date, 4-character code or copy marker joined before the
    extension as prefix or suffix (``generate_modified_file_name``)."""
    return with_marker(rng, rng.choice(_WORDS)) + EXTENSION


# -- Audio Recorder ------------------------------------------------------------------------------


def _recorder(p: PhoneState) -> AudioRecorderData:
    return p.apps["audio_recorder"]


class _Record(AndroidWorldTask):
    """``params["existing"]``: the recordings in the folder at the start."""

    app = "audio_recorder"
    complexity = 2.0

    @classmethod
    def _existing(cls, rng: random.Random, avoid: str = "") -> list[dict[str, Any]]:
        rows = []
        for serial in range(1, rng.randint(0, 3) + 1):
            name = recording_name(rng)
            if name == avoid or any(r["name"] == name for r in rows):
                continue
            seconds = rng.randint(4, 600)
            rows.append(
                {"name": name, "duration_s": seconds, "size_kb": 16 * seconds, "serial": serial}
            )
        return rows

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        data = _recorder(phone)
        data.recordings = [Recording(**row) for row in self.params["existing"]]
        data.next_serial = max((r.serial for r in data.recordings), default=0) + 1

    def _new(self, phone: PhoneState) -> list[Recording]:
        """Non-empty recordings that are new or changed since the start."""
        before = {Recording(**row) for row in self.params["existing"]}
        return [r for r in _recorder(phone).recordings if r.size_kb > 0 and r not in before]

    def _started(self, p: PhoneState) -> bool:
        return _recorder(p).recording or bool(self._new(p))

    def _record_step(self, phone: PhoneState, screen: UITree, name: str | None) -> Action:
        """Record, stop, and save (typing ``name`` first when given)."""
        action = open_app(phone, "audio_recorder", "Audio Recorder")
        if action is not None:
            return action
        if phone.dialog is not None:
            return _GOBACK
        if phone.screen_name == "audio_recorder/save":
            if name is not None:
                action = type_into(screen, "name", name, phone.forms.get("audio_recorder", {}))
                if action is not None:
                    return action
            if phone.focus:
                return _GOBACK  # hide the keyboard: Save sits along the bottom
            return reach(screen, handler="audio_recorder.save")
        if phone.screen_name != "audio_recorder/main":
            return _GOBACK
        if _recorder(phone).recording:
            return tap(screen, handler="audio_recorder.stop") or _GOBACK
        return tap(screen, handler="audio_recorder.record") or _GOBACK

    def _delete_step(self, phone: PhoneState, screen: UITree, name: str) -> Action:
        if phone.dialog is not None:
            return tap(screen, handler="audio_recorder.confirm_delete", handler_arg=name) or _GOBACK
        action = open_app(phone, "audio_recorder", "Audio Recorder")
        if action is not None:
            return action
        if phone.screen_name != "audio_recorder/main" or phone.focus:
            return _GOBACK
        row = screen.find_one(handler="audio_recorder.play", handler_arg=name)
        if row is None:
            return reach(screen, handler="audio_recorder.play", handler_arg=name)
        return Action(ActionType.LONG_CLICK, index=row.index)


@register
class AudioRecorderRecordAudio(_Record):
    """Record and save one audio clip: exactly one new or changed non-empty recording."""

    name = "AudioRecorderRecordAudio"
    template = "Record an audio clip using Audio Recorder app and save it."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"existing": cls._existing(rng)}

    def score(self, phone: PhoneState) -> float:
        return float(len(self._new(phone)) == 1)

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("recording_started", self._started),
            self.done_milestone("recording_saved"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        new = self._new(phone)
        if len(new) > 1:  # more than one new recording: delete the extras
            return self._delete_step(phone, screen, new[-1].name)
        return self._record_step(phone, screen, None)


@register
class AudioRecorderRecordAudioWithFileName(_Record):
    """Record a clip and save it under a given name: ``<file_name>.m4a`` must exist.

    As in AndroidWorld, the given name already ends in ``.m4a`` and the app adds the
    extension again, so the file is ``<name>.m4a.m4a``."""

    name = "AudioRecorderRecordAudioWithFileName"
    template = 'Record an audio clip and save it with name "{file_name}" using Audio Recorder app.'

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        file_name = recording_name(rng)
        return {"file_name": file_name, "existing": cls._existing(rng, file_name + EXTENSION)}

    def _file(self) -> str:
        return self.params["file_name"] + EXTENSION

    def score(self, phone: PhoneState) -> float:
        found = _recorder(phone).find(self._file())
        return float(found is not None and found.size_kb > 0)

    def _name_entered(self, p: PhoneState) -> bool:
        return (
            p.screen_name == "audio_recorder/save"
            and p.forms.get("audio_recorder", {}).get("name", "").strip()
            == self.params["file_name"]
        )

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("recording_started", self._started),
            milestone("name_entered", self._name_entered),
            self.done_milestone("recording_saved"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        return self._record_step(phone, screen, self.params["file_name"])


# -- Camera -----------------------------------------------------------------------------------------


def _camera(p: PhoneState) -> CameraData:
    return p.apps["camera"]


def _camera_step(phone: PhoneState, screen: UITree, mode: str, extra: str | None) -> Action:
    """The next action toward one capture in ``mode``; deletes ``extra`` (a surplus file)
    first when given."""
    action = open_app(phone, "camera", "Camera")
    if action is not None:
        return action
    data = _camera(phone)
    if phone.dialog is not None:
        if extra is not None:
            action = tap(screen, handler="camera.confirm_delete", handler_arg=extra)
            if action is not None:
                return action
        return _GOBACK
    if extra is not None and not data.recording:
        if phone.screen_name != "camera/gallery":
            return tap(screen, handler="camera.gallery") or _GOBACK
        return reach(screen, handler="camera.media", handler_arg=extra)
    if phone.screen_name != "camera/main":
        return _GOBACK
    if data.recording and mode == "photo":
        return tap(screen, handler="camera.shutter") or _GOBACK  # finish the stray video
    if data.mode != mode:
        return tap(screen, handler="camera.mode", handler_arg=mode) or _GOBACK
    return tap(screen, handler="camera.shutter") or _GOBACK


@register
class CameraTakePhoto(AndroidWorldTask):
    """Take one photo: ``Pictures`` holds exactly one new file."""

    name = "CameraTakePhoto"
    app = "camera"
    complexity = 1.0
    template = "Take one photo."

    def score(self, phone: PhoneState) -> float:
        return float(len(_camera(phone).photos) == 1)

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            self.done_milestone("photo_taken"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        photos = _camera(phone).photos
        return _camera_step(phone, screen, "photo", photos[-1] if len(photos) > 1 else None)


@register
class CameraTakeVideo(AndroidWorldTask):
    """Take one video: ``Movies`` holds exactly one new file (written when recording stops)."""

    name = "CameraTakeVideo"
    app = "camera"
    complexity = 1.0
    template = "Take one video."

    def score(self, phone: PhoneState) -> float:
        return float(len(_camera(phone).videos) == 1)

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("video_mode", lambda p: _camera(p).mode == "video"),
            milestone(
                "recording_started", lambda p: _camera(p).recording or bool(_camera(p).videos)
            ),
            self.done_milestone("video_saved"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        videos = _camera(phone).videos
        return _camera_step(phone, screen, "video", videos[-1] if len(videos) > 1 else None)
