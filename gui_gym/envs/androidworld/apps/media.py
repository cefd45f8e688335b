"""Media players with playlists: Retro Music (``code.name.monkey.retromusic``) and VLC
(``org.videolan.vlc``).

Both list their media files (songs with artist and length; videos of the ``VLCVideos``
folder). A long press starts a selection (taps then add or remove items, in the order they
are picked); the selection bar adds the picked items to a playlist (an existing one, or a new
one named in a form), or, in Retro Music, to the playing queue. Tapping an item plays it: the
playing queue becomes the whole list from that item on, as Retro Music does. The Playlists
screen lists playlists; a playlist shows its entries in order, can remove one, and (Retro
Music) be saved as ``<name>.m3u`` into a folder of the shared storage (written into the Files
app's data, where AndroidWorld's check looks).

In VLC a tap opens the player instead: a video frame (its caption, a word every 8 seconds, is
drawn only into the screenshot) with 10-second seek buttons.

The data mirrors what AndroidWorld reads: playlist name and ordered entries (Retro's
``PlaylistEntity``/``SongEntity``, VLC's ``Playlist``/``PlaylistMediaRelation``) and Retro's
``playing_queue`` titles.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.phone import (
    AppView,
    Dialog,
    PhoneApp,
    PhoneState,
    Screen,
    icon,
)
from gui_gym.envs.androidworld.pixels import pixel_source, render_lines

__all__ = [
    "FRAME_SECONDS",
    "MediaData",
    "MediaItem",
    "Playlist",
    "RetroMusicApp",
    "VlcApp",
    "frame_index",
    "length_text",
]


@dataclass(frozen=True)
class MediaItem:
    """A media file: ``title`` is what the list shows (a song's title, a video's file name)."""

    id: int
    title: str
    duration_ms: int
    artist: str = ""
    frames: tuple[str, ...] = ()
    """A video's captions, one every ``FRAME_SECONDS`` (shown only as pixels)."""


@dataclass
class Playlist:
    name: str
    entries: list[int] = field(default_factory=list)


@dataclass
class MediaData:
    """The library, playlists, playing queue (item ids) and the list's selection."""

    items: list[MediaItem] = field(default_factory=list)
    playlists: list[Playlist] = field(default_factory=list)
    queue: list[int] = field(default_factory=list)
    selected: list[int] = field(default_factory=list)
    position_s: int = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> MediaData:
        # items are immutable; playlists are copied one level down (fork stays fast)
        return MediaData(
            list(self.items),
            [Playlist(p.name, list(p.entries)) for p in self.playlists],
            list(self.queue),
            list(self.selected),
            self.position_s,
        )

    def item(self, item_id: int) -> MediaItem | None:
        return next((m for m in self.items if m.id == item_id), None)

    def ordered(self) -> list[MediaItem]:
        return sorted(self.items, key=lambda m: (m.title.lower(), m.id))

    def playlist(self, name: str) -> Playlist | None:
        return next((p for p in self.playlists if p.name == name), None)

    def titles(self, ids: list[int]) -> list[str]:
        return [m.title for m in (self.item(i) for i in ids) if m is not None]


FRAME_SECONDS = 8
"""How long a video shows each caption (AndroidWorld's ``message_display_time``)."""
SEEK_SECONDS = 10


def frame_index(item: MediaItem, position_s: int) -> int:
    """The caption a video shows at ``position_s``."""
    return min(position_s // FRAME_SECONDS, max(0, len(item.frames) - 1))


def length_text(ms: int) -> str:
    seconds = ms // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"


@functools.lru_cache(maxsize=4096)
def _item_row(app: str, item: MediaItem, selecting: bool, picked: int) -> Block:
    parts = [item.title, *([item.artist] if item.artist else []), length_text(item.duration_ms)]
    return Block(
        "listitem",
        (f"{picked}. " if picked else "") + " · ".join(parts),
        description="Selected" if picked else "",
        resource_id="media_row",
        clickable=True,
        long_clickable=True,
        checkable=selecting,
        checked=bool(picked),
        handler=f"{app}.item",
        handler_arg=str(item.id),
        gap=2,
    )


class _MediaApp(PhoneApp):
    """Shared behaviour of the two players; subclasses name their lists."""

    list_title: ClassVar[str] = ""
    has_queue: ClassVar[bool] = False
    can_save: ClassVar[bool] = False
    has_player: ClassVar[bool] = False

    def initial_data(self) -> MediaData:
        return MediaData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        data: MediaData = self.data(phone)
        if screen.name == "playlists":
            rows = [
                self.row(f"{p.name} · {len(p.entries)} items", "open_playlist", p.name)
                for p in data.playlists
            ]
            return AppView("Playlists", rows or [Block("text", "No playlists yet.")])
        if screen.name == "playlist":
            return self._playlist_view(data, screen.arg)
        if screen.name == "new_playlist":
            return AppView(
                "New playlist",
                [self.field("name", "Playlist name", phone), self.button("Create", "create")],
            )
        if screen.name == "player":
            return self._player(data, int(screen.arg))
        if screen.name == "queue":
            rows = [Block("text", f"{i + 1}. {t}") for i, t in enumerate(data.titles(data.queue))]
            return AppView(
                "Playing queue",
                rows or [Block("text", "The queue is empty.")],
                actions=[icon("Clear queue", f"{self.key}.clear_queue", "clear_queue")],
            )
        return self._library(data)

    def _library(self, data: MediaData) -> AppView:
        selecting = bool(data.selected)
        rank = {item_id: k + 1 for k, item_id in enumerate(data.selected)}
        content = [_item_row(self.key, m, selecting, rank.get(m.id, 0)) for m in data.ordered()]
        if selecting:
            actions = [icon("Add to playlist", f"{self.key}.add_to_playlist", "add_to_playlist")]
            if self.has_queue:
                actions.append(icon("Add to playing queue", f"{self.key}.enqueue", "enqueue"))
            actions.append(icon("Clear selection", f"{self.key}.clear", "clear"))
            return AppView(f"{len(data.selected)} selected", content, actions=actions)
        actions = [icon("Playlists", f"{self.key}.playlists", "playlists")]
        if self.has_queue:
            actions.append(icon("Playing queue", f"{self.key}.show_queue", "queue"))
        return AppView(self.list_title, content or [Block("text", "No media found.")], actions)

    def _player(self, data: MediaData, item_id: int) -> AppView:
        item = data.item(item_id)
        if item is None:
            return AppView("Video", [Block("text", "This file no longer exists.")])
        total = item.duration_ms // 1000
        frame = Block(
            "image",
            "",
            description=f"Video {item.title}",
            resource_id="video_frame",
            height=200,
            handler=f"{self.key}.frame",
            handler_arg=str(item.id),
        )
        return AppView(
            item.title,
            [
                frame,
                Block(
                    "text", f"{length_text(data.position_s * 1000)} / {length_text(total * 1000)}"
                ),
                self.button("Rewind 10 seconds", "seek", "-1"),
                self.button("Forward 10 seconds", "seek", "1"),
            ],
        )

    def _playlist_view(self, data: MediaData, name: str) -> AppView:
        playlist = data.playlist(name)
        if playlist is None:
            return AppView("Playlist", [Block("text", "This playlist was deleted.")])
        rows: list[Block] = []
        for position, item_id in enumerate(playlist.entries):
            item = data.item(item_id)
            title = item.title if item else "(missing)"
            rows.append(
                self.row(f"{position + 1}. {title}", "remove_entry", f"{position}", description="")
            )
        actions = []
        if self.can_save:
            actions.append(icon("Save playlist", f"{self.key}.save_menu", "save", name))
        return AppView(name, rows or [Block("text", "This playlist is empty.")], actions=actions)

    # -- list and selection ----------------------------------------------------------------

    def on_click_item(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: MediaData = self.data(phone)
        item_id = int(element.handler_arg)
        if data.selected:
            if item_id in data.selected:
                data.selected.remove(item_id)
            else:
                data.selected.append(item_id)
            return
        if self.has_player:
            data.position_s = 0
            self.push(phone, "player", str(item_id))
            return
        ids = [m.id for m in data.ordered()]
        data.queue = ids[ids.index(item_id) :]  # playing a song queues the list from it
        phone.toast = f"Playing {element.text.split(' · ')[0]}"

    def on_long_click_item(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: MediaData = self.data(phone)
        item_id = int(element.handler_arg)
        if item_id not in data.selected:
            data.selected.append(item_id)

    def on_click_clear(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).selected = []

    def on_click_enqueue(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: MediaData = self.data(phone)
        data.queue = [*data.queue, *data.selected]
        data.selected = []
        phone.toast = "Added to playing queue"

    def on_click_seek(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: MediaData = self.data(phone)
        screen = phone.screen
        assert screen is not None
        item = data.item(int(screen.arg))
        total = item.duration_ms // 1000 if item else 0
        step = SEEK_SECONDS * int(element.handler_arg)
        data.position_s = min(max(0, data.position_s + step), max(0, total - 1))

    def on_click_clear_queue(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).queue = []

    def on_click_show_queue(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "queue")

    def on_click_add_to_playlist(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        data: MediaData = self.data(phone)
        buttons = [(p.name, f"{self.key}.add_to", p.name) for p in data.playlists]
        buttons.append(("New playlist", f"{self.key}.new_playlist", ""))
        phone.dialog = Dialog("Add to playlist", buttons=buttons)

    def on_click_add_to(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: MediaData = self.data(phone)
        playlist = data.playlist(element.handler_arg)
        phone.dialog = None
        if playlist is None:
            raise InvalidAction(f"no playlist named {element.handler_arg!r}")
        playlist.entries.extend(data.selected)
        data.selected = []
        phone.toast = f"Added to {playlist.name}"

    def on_click_new_playlist(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.dialog = None
        self.push(phone, "new_playlist", form={"name": ""})

    def on_click_create(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: MediaData = self.data(phone)
        name = self.form(phone).get("name", "").strip()
        if not name:
            raise InvalidAction("the playlist needs a name")
        if data.playlist(name) is not None:
            raise InvalidAction(f"a playlist named {name!r} already exists")
        data.playlists.append(Playlist(name, list(data.selected)))
        data.selected = []
        self.pop(phone)
        phone.toast = f"Created {name}"

    # -- playlists -------------------------------------------------------------------------

    def on_click_playlists(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "playlists")

    def on_click_open_playlist(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "playlist", element.handler_arg)

    def on_click_remove_entry(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.dialog = Dialog(
            "Remove from playlist?",
            element.text,
            [
                ("Cancel", f"{self.key}.cancel", ""),
                ("Remove", f"{self.key}.remove", element.handler_arg),
            ],
        )

    def on_click_remove(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        screen = phone.screen
        assert screen is not None
        playlist = self.data(phone).playlist(screen.arg)
        phone.dialog = None
        if playlist is not None:
            del playlist.entries[int(element.handler_arg)]

    def on_click_save_menu(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        folders = ("Download", "Music", "Documents")
        phone.dialog = Dialog(
            "Save playlist to",
            f"{element.handler_arg}.m3u",
            [(f, f"{self.key}.save_to", f) for f in folders],
        )

    def on_click_save_to(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        screen = phone.screen
        assert screen is not None
        phone.dialog = None
        files = phone.apps["files"]
        path = f"{element.handler_arg}/{screen.arg}.m3u"
        if not files.find(f"{screen.arg}.m3u", element.handler_arg):
            files.add(path, 1, phone.system.now)
        phone.toast = f"Saved to {path}"


class RetroMusicApp(_MediaApp):
    key = "retro"
    title = "Retro Music"
    package = "code.name.monkey.retromusic"
    aliases = ("retro", "retro music app", "music")
    launcher_order = 70
    list_title = "Songs"
    has_queue = True
    can_save = True


class VlcApp(_MediaApp):
    key = "vlc"
    title = "VLC"
    package = "org.videolan.vlc"
    aliases = ("vlc player", "vlc media player")
    launcher_order = 70
    list_title = "VLCVideos"
    has_player = True


@pixel_source("vlc.frame")
def _frame_pixels(phone: PhoneState, arg: str, width: int, height: int) -> np.ndarray:
    data: MediaData = phone.apps["vlc"]
    item = data.item(int(arg))
    if item is None or not item.frames:
        return render_lines((), width, height)
    return render_lines((item.frames[frame_index(item, data.position_s)],), width, height)
