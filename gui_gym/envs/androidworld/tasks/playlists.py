"""Retro Music and VLC playlist tasks (AndroidWorld ``task_evals/single/retro_music.py`` and
``vlc.py``).

A playlist check follows AndroidWorld's ``verify_playlist``: the rows of playlists whose name
fuzzily matches the wanted one number exactly as many as the wanted files, and file ``i``
sits at position ``i``. The playing-queue check wants the queue's titles equal to the list,
in order; the duration check wants every playlist entry in the named playlist and 45-50
minutes in total.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.media import MediaData, MediaItem
from gui_gym.envs.androidworld.data import GIVEN_NAMES, with_marker
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    fuzzy_match,
    milestone,
    open_app,
    reach,
    register,
    seek,
    tap,
    type_into,
)

__all__ = ["SONGS", "playlist_matches", "video_name"]

SONGS = (
    "My Heart is Yours",
    "Endless Summer",
    "Whispering Wind",
    "Lost in the Echo",
    "Chasing Shadows",
    "Night Drive",
    "Echoes of Silence",
    "Bright Lights",
    "Moments",
    "Forever Young",
    "Rising Sun",
    "Silent Dreams",
    "City of Stars",
    "Moonlight Sonata",
    "Through the Storm",
    "Return to Paradise",
    "Voices in the Hall",
    "Under the Sky",
    "Dreamer's Awake",
    "Serenity Now",
    "Falling Feathers",
    "Orbiting Stars",
    "Reflections",
    "Beyond the Horizon",
    "Golden Days",
    "Twilight Calling",
    "Heartbeat Away",
    "Mystic Journey",
    "Hidden Paths",
    "Distant Memories",
    "Path to Zenith",
    "Eternal Flame",
    "Shadows of Time",
    "Whispers of the Past",
    "Waves of Change",
)
"""Retro Music's song titles (AndroidWorld's ``_SONGS``)."""

_RETRO_THEMES = (
    "Chill Beats",
    "Morning Vibes",
    "Workout Energy",
    "Study Sessions",
    "Golden Oldies",
    "Indie Gems",
    "Rock Anthems",
    "Electronic Waves",
    "Jazz Classics",
    "Hip Hop Hits",
    "Country Roads",
    "Classical Moods",
    "Pop Essentials",
    "Latin Grooves",
    "Party Mix",
    "Tranquil Tunes",
    "Disco Nights",
    "Acoustic Sessions",
    "Rainy Day Relax",
    "Gym Pump Up",
)
_VLC_THEMES = (
    "Adventure",
    "Comedy",
    "Daily Routines",
    "Documentary Insights",
    "Epic Moments",
    "Family Gatherings",
    "Fitness Challenges",
    "Gaming Sessions",
    "How To",
    "Mystery and Thrills",
    "Recipe Collection",
    "Road Trips",
    "Summer Highlights",
    "Tech Reviews",
    "Travel Guide",
    "Ultimate Fails",
)
_VLC_QUALIFIERS = (
    "Essentials",
    "Favorites",
    "Marathon",
    "Playlist",
    "Series",
    "Specials",
    "Ultimate Collection",
)


def video_name(rng: random.Random) -> str:
    """VLC's ``generate_file_name``: ``<kind>_<1-99>_<quality>.mp4`` with a marker."""
    kind = rng.choice(("clip", "footage", "scene", "recording", "highlight", "moment", "episode"))
    quality = rng.choice(("", "HD", "4K", "raw", "export"))
    return with_marker(rng, f"{kind}_{rng.randint(1, 99)}_{quality}") + ".mp4"


def playlist_matches(data: MediaData, name: str, titles: list[str]) -> bool:
    """AndroidWorld's ``verify_playlist`` on the app's playlists."""
    rows = [
        (position, data.item(item_id))
        for p in data.playlists
        if fuzzy_match(p.name, name)
        for position, item_id in enumerate(p.entries)
    ]
    if len(rows) != len(titles):
        return False
    return all(
        any(pos == i and item is not None and item.title == want for pos, item in rows)
        for i, want in enumerate(titles)
    )


class _PlaylistTask(AndroidWorldTask):
    """Media files ``files`` (wanted, in order) and ``noise_files`` in the app's list.

    Class attributes:
        title_of: The launcher title of the app.
    """

    app_title: ClassVar[str] = ""

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        data: MediaData = phone.apps[self.app]
        names = [*self.params["files"], *self.params["noise_files"]]
        durations = list(self.params.get("durations_ms", []))
        while len(durations) < len(names):
            durations.append(rng.randint(3 * 60_000, 5 * 60_000))
        data.items = [
            MediaItem(i + 1, name, durations[i], self._artist(rng)) for i, name in enumerate(names)
        ]
        data.playlists, data.queue, data.selected = [], [], []

    def _artist(self, rng: random.Random) -> str:
        return rng.choice(GIVEN_NAMES) if self.app == "retro" else ""

    def _ids(self, data: MediaData, titles: list[str]) -> list[int]:
        by_title = {m.title: m.id for m in data.items}
        return [by_title[t] for t in titles if t in by_title]

    # -- expert ------------------------------------------------------------------------------

    def _select_step(self, phone: PhoneState, screen: UITree, wanted: list[int]) -> Action | None:
        """Toward the selection ``wanted`` (in order) on the list; None once it is made."""
        data: MediaData = phone.apps[self.app]
        if data.selected == wanted:
            return None
        order = [str(m.id) for m in data.ordered()]
        if data.selected != wanted[: len(data.selected)]:
            return tap(screen, handler=f"{self.app}.clear") or Action(ActionType.GOBACK)
        target = str(wanted[len(data.selected)])
        return seek(screen, f"{self.app}.item", target, order, long=not data.selected)

    def _playlist_step(
        self, phone: PhoneState, screen: UITree, name: str, titles: list[str]
    ) -> Action | None:
        """Toward a new playlist ``name`` holding ``titles``; None once it exists."""
        data: MediaData = phone.apps[self.app]
        if playlist_matches(data, name, titles):
            return None
        if phone.dialog is not None:
            return tap(screen, handler=f"{self.app}.new_playlist") or Action(ActionType.GOBACK)
        action = open_app(phone, self.app, self.app_title)
        if action is not None:
            return action
        top = phone.screen
        assert top is not None
        if top.name == "new_playlist":
            if phone.focus and phone.forms.get(self.app, {}).get("name") == name:
                return Action(ActionType.GOBACK)
            action = type_into(screen, "name", name, phone.forms.get(self.app, {}))
            return action or reach(screen, handler=f"{self.app}.create")
        if top.name != "main" or phone.focus:
            return Action(ActionType.GOBACK)
        action = self._select_step(phone, screen, self._ids(data, titles))
        return (
            action
            or tap(screen, handler=f"{self.app}.add_to_playlist")
            or Action(ActionType.GOBACK)
        )

    def _playlist_milestones(self, name: str, titles: list[str], tag: str = ""):
        app = self.app
        return [
            milestone(
                f"playlist_form_opened{tag}",
                lambda p: p.screen_name == f"{app}/new_playlist" and bool(p.apps[app].selected),
            ),
            milestone(
                f"playlist_created{tag}",
                lambda p: playlist_matches(p.apps[app], name, titles),
            ),
        ]


class _CreatePlaylist(_PlaylistTask):
    def score(self, phone: PhoneState) -> float:
        return float(
            playlist_matches(
                phone.apps[self.app], self.params["playlist_name"], self.params["files"]
            )
        )

    def milestone_checks(self):
        name, files = self.params["playlist_name"], self.params["files"]
        return [self.opened_milestone(), *self._playlist_milestones(name, files)]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        name, files = self.params["playlist_name"], self.params["files"]
        return self._playlist_step(phone, screen, name, files) or Action(ActionType.DONE)


def _retro_params(rng: random.Random, low: int = 2, high: int = 5) -> dict[str, Any]:
    songs = rng.sample(SONGS, 15)
    n = rng.randint(low, high)
    return {
        "playlist_name": f"{rng.choice(_RETRO_THEMES)} {rng.randint(1, 999)}",
        "files": songs[:n],
        "noise_files": songs[n:],
        "names": ", ".join(songs[:n]),
    }


class _Retro(_PlaylistTask):
    app = "retro"
    app_title = "Retro Music"


@register
class RetroCreatePlaylist(_Retro, _CreatePlaylist):
    """Create a playlist of given songs, in order."""

    name = "RetroCreatePlaylist"
    complexity = 2.4
    template = (
        'Create a playlist in Retro Music titled "{playlist_name}" with the following songs, '
        "in order: {names}"
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return _retro_params(rng)


@register
class RetroPlayingQueue(_Retro):
    """Put given songs, in order, in the playing queue (which starts empty)."""

    name = "RetroPlayingQueue"
    complexity = 3.2
    template = "Add the following songs, in order, {names} to my playing queue in Retro music."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return _retro_params(rng)

    def score(self, phone: PhoneState) -> float:
        data: MediaData = phone.apps["retro"]
        return float(data.titles(data.queue) == self.params["files"])

    def milestone_checks(self):
        files = self.params["files"]

        def picked(p: PhoneState) -> bool:
            data: MediaData = p.apps["retro"]
            return data.titles(data.selected) == files

        return [
            self.opened_milestone(),
            milestone("songs_selected", picked),
            self.done_milestone("queue_set"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if phone.dialog is not None:
            return Action(ActionType.GOBACK)
        action = open_app(phone, "retro", "Retro Music")
        if action is not None:
            return action
        top = phone.screen
        assert top is not None
        data: MediaData = phone.apps["retro"]
        files = self.params["files"]
        queued = data.titles(data.queue)
        if top.name == "queue":
            if queued and queued != files[: len(queued)]:
                return tap(screen, handler="retro.clear_queue") or Action(ActionType.GOBACK)
            return Action(ActionType.GOBACK)
        if top.name != "main" or phone.focus:
            return Action(ActionType.GOBACK)
        if queued != files[: len(queued)]:
            # a tap played a song, queueing the list from it: clear the queue first
            return tap(screen, handler="retro.show_queue") or Action(ActionType.GOBACK)
        action = self._select_step(phone, screen, self._ids(data, files[len(queued) :]))
        return action or tap(screen, handler="retro.enqueue") or Action(ActionType.GOBACK)


@register
class RetroSavePlaylist(_Retro, _CreatePlaylist):
    """Create a playlist, then export it to Download as ``<name>.m3u``; half credit each."""

    name = "RetroSavePlaylist"
    complexity = 5
    template = (
        'Create a playlist in Retro Music titled "{playlist_name}" with the following songs, '
        "in order: {names}. Then export the playlist to the Downloads directory on the device."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return _retro_params(rng)

    def _exported(self, phone: PhoneState) -> bool:
        return bool(phone.apps["files"].find(f"{self.params['playlist_name']}.m3u", "Download"))

    def score(self, phone: PhoneState) -> float:
        return (super().score(phone) + float(self._exported(phone))) / 2

    def milestone_checks(self):
        return [*super().milestone_checks(), self.done_milestone("playlist_exported")]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        name, files = self.params["playlist_name"], self.params["files"]
        action = self._playlist_step(phone, screen, name, files)
        if action is not None:
            return action
        if self._exported(phone):
            return Action(ActionType.DONE)
        if phone.dialog is not None:
            return tap(screen, handler="retro.save_to", handler_arg="Download") or Action(
                ActionType.GOBACK
            )
        action = open_app(phone, "retro", "Retro Music")
        if action is not None:
            return action
        top = phone.screen
        assert top is not None
        if top.name == "playlist" and top.arg == name:
            return tap(screen, handler="retro.save_menu") or Action(ActionType.GOBACK)
        if top.name == "playlists":
            return reach(screen, handler="retro.open_playlist", handler_arg=name)
        if top.name == "main" and not phone.focus:
            return tap(screen, handler="retro.playlists") or Action(ActionType.GOBACK)
        return Action(ActionType.GOBACK)


@register
class RetroPlaylistDuration(_Retro, _CreatePlaylist):
    """Create a playlist of 45 to 50 minutes from the songs: 9-11 of them add up to 47.5
    minutes (each at least a minute here; AndroidWorld's split can give empty songs)."""

    name = "RetroPlaylistDuration"
    complexity = 3
    template = (
        'Create a playlist in Retro Music titled "{playlist_name}" with a duration between 45 '
        "and 50 minutes using the provided songs."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        params = _retro_params(rng, 9, 11)
        n = len(params["files"])
        spare = int(47.5 * 60_000) - n * 60_000
        cuts = sorted(rng.randint(0, spare) for _ in range(n - 1))
        parts = [b - a for a, b in zip([0, *cuts], [*cuts, spare], strict=True)]
        params["durations_ms"] = [60_000 + p for p in parts]
        return params

    def score(self, phone: PhoneState) -> float:
        data: MediaData = phone.apps["retro"]
        name = self.params["playlist_name"]
        total = 0
        for p in data.playlists:
            if p.entries and p.name != name:
                return 0.0
            total += sum(m.duration_ms for m in (data.item(i) for i in p.entries) if m)
        return float(45 * 60_000 <= total <= 50 * 60_000)

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            self._playlist_milestones(self.params["playlist_name"], self.params["files"])[0],
            self.done_milestone("playlist_created"),
        ]


class _Vlc(_PlaylistTask):
    app = "vlc"
    app_title = "VLC"


def _vlc_params(rng: random.Random) -> dict[str, Any]:
    n = rng.randint(2, 5)
    names: list[str] = []
    while len(names) < 2 * n:
        name = video_name(rng)
        if name not in names:
            names.append(name)
    return {
        "playlist_name": f"{rng.choice(_VLC_THEMES)} {rng.choice(_VLC_QUALIFIERS)}",
        "files": names[:n],
        "noise_files": names[n:],
        "names": ", ".join(names[:n]),
    }


@register
class VlcCreatePlaylist(_Vlc, _CreatePlaylist):
    """Create a playlist of given videos, in order."""

    name = "VlcCreatePlaylist"
    complexity = 2.8
    template = (
        'Create a playlist titled "{playlist_name}" with the following files in VLC (located '
        "in Internal Memory/VLCVideos), in order: {names}"
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return _vlc_params(rng)


@register
class VlcCreateTwoPlaylists(_Vlc):
    """Create two playlists; half credit each. Adapted: 2-4 videos per playlist (AndroidWorld
    2-5) so the expert fits 20 steps."""

    name = "VlcCreateTwoPlaylists"
    complexity = 4.8
    template = (
        'Create a playlist titled "{playlist_name1}" with the following files in VLC (located '
        "in Internal Memory/VLCVideos), in order: {names1}. And then, create a playlist titled "
        '"{playlist_name2}" with the following files in VLC, in order: {names2}.'
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        while True:
            first, second = _vlc_params(rng), _vlc_params(rng)
            clash = set(first["files"] + first["noise_files"]) & set(
                second["files"] + second["noise_files"]
            )
            if (
                len(first["files"]) <= 4
                and len(second["files"]) <= 4
                and first["playlist_name"] != second["playlist_name"]
                and not clash
            ):
                break
        return {
            "playlist_name1": first["playlist_name"],
            "names1": first["names"],
            "playlist_name2": second["playlist_name"],
            "names2": second["names"],
            "files1": first["files"],
            "files2": second["files"],
            "files": first["files"] + second["files"],
            "noise_files": first["noise_files"] + second["noise_files"],
        }

    def _halves(self, phone: PhoneState) -> tuple[bool, bool]:
        data: MediaData = phone.apps["vlc"]
        p = self.params
        return (
            playlist_matches(data, p["playlist_name1"], p["files1"]),
            playlist_matches(data, p["playlist_name2"], p["files2"]),
        )

    def score(self, phone: PhoneState) -> float:
        return sum(self._halves(phone)) / 2

    def milestone_checks(self):
        p = self.params
        return [
            self.opened_milestone(),
            self._playlist_milestones(p["playlist_name1"], p["files1"], "_1")[1],
            self._playlist_milestones(p["playlist_name2"], p["files2"], "_2")[1],
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        p = self.params
        first, _ = self._halves(phone)
        if not first:
            return self._playlist_step(phone, screen, p["playlist_name1"], p["files1"]) or (
                Action(ActionType.DONE)
            )
        return self._playlist_step(phone, screen, p["playlist_name2"], p["files2"]) or Action(
            ActionType.DONE
        )
