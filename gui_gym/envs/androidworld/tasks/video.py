"""AndroidWorld's ``MarkorTranscribeVideo`` (``task_evals/single/markor.py``): watch a video
in VLC and write the words its frames show, in order, comma-separated, into a Markor note.

The video shows 2-4 given names, each for 8 seconds, only as pixels (a vision task); 5-20
other videos sit beside it. The note must match ``",".join(words)`` fuzzily (ratio 0.9).
"""

from __future__ import annotations

import random
from typing import Any

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.media import (
    FRAME_SECONDS,
    MediaData,
    MediaItem,
    frame_index,
)
from gui_gym.envs.androidworld.data import GIVEN_NAMES
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    milestone,
    open_app,
    register,
    seek,
    tap,
)
from gui_gym.envs.androidworld.tasks.markor import create_note_with, note_holds
from gui_gym.envs.androidworld.tasks.playlists import video_name

__all__: list[str] = []


@register
class MarkorTranscribeVideo(AndroidWorldTask):
    """Transcribe the words a video shows into ``<video>_transcription.txt``."""

    name = "MarkorTranscribeVideo"
    app = "markor"
    complexity = 2
    needs_vision = True
    template = (
        "Transcribe the contents of video {video_name} by watching it in VLC player (located in "
        "Download) and writing the sequence of strings shown on each frame to the text file "
        "{file_name} in Markor as a comma separated list. For example, if the first frame "
        'shows the text "edna" and the second frame shows the text "pineapple", then the text '
        'file should contain only the following text: "edna, pineapple".'
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        words = rng.sample(GIVEN_NAMES, rng.randint(2, 4))
        video = video_name(rng)
        noise: list[str] = []
        for _ in range(rng.randint(5, 20)):
            name = video_name(rng)
            if name != video and name not in noise:
                noise.append(name)
        return {
            "video_name": video,
            "file_name": f"{video.split('.')[0]}_transcription.txt",
            "messages": words,
            "text": ",".join(words),
            "noise_files": noise,
        }

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        data: MediaData = phone.apps["vlc"]
        words = tuple(self.params["messages"])
        items = [
            MediaItem(1, self.params["video_name"], len(words) * FRAME_SECONDS * 1000, "", words)
        ]
        for name in self.params["noise_files"]:
            caption = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10))
            seconds = rng.randint(20, 180)
            items.append(MediaItem(len(items) + 1, name, seconds * 1000, "", (caption,)))
        data.items = items
        data.playlists, data.queue, data.selected, data.position_s = [], [], [], 0

    def score(self, phone: PhoneState) -> float:
        return float(note_holds(phone, self.params["file_name"], self.params["text"]))

    def _playing(self, phone: PhoneState) -> bool:
        top = phone.screen
        return (
            phone.foreground == "vlc"
            and top is not None
            and top.name == "player"
            and (top.arg == "1")
        )

    def _last_word_shown(self, phone: PhoneState) -> bool:
        data: MediaData = phone.apps["vlc"]
        item = data.item(1)
        return (
            self._playing(phone)
            and item is not None
            and frame_index(item, data.position_s) == len(item.frames) - 1
        )

    def milestone_checks(self):
        name = self.params["file_name"]
        return [
            milestone("video_opened", self._playing),
            milestone("last_word_shown", self._last_word_shown),
            milestone("note_created", lambda p: bool(p.apps["markor"].find(name))),
            self.done_milestone("video_transcribed"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if "markor" not in phone.opened and not self._last_word_shown(phone):
            if phone.dialog is not None:
                return Action(ActionType.GOBACK)
            action = open_app(phone, "vlc", "VLC")
            if action is not None:
                return action
            if self._playing(phone):
                return tap(screen, handler="vlc.seek", handler_arg="1") or Action(ActionType.GOBACK)
            top = phone.screen
            if top is None or top.name != "main" or phone.apps["vlc"].selected:
                return Action(ActionType.GOBACK)
            order = [str(m.id) for m in phone.apps["vlc"].ordered()]
            return seek(screen, "vlc.item", "1", order)
        return create_note_with(phone, screen, self.params["file_name"], self.params["text"])
