"""OpenTracks (``de.dennisguse.opentracks``): recorded sports activities.

The list shows the recorded tracks newest first, each with its name, activity type, start,
distance and moving time; a track opens on its statistics (distance in km, time, average
speed, elevation gain and loss) and description. The data mirrors the ``tracks`` table
AndroidWorld seeds (start as ``"YYYY-MM-DD HH:MM"``, distance in metres, duration in
minutes).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gui_gym.core.actions import Action
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.rows import ImmutableRow, RowTable
from gui_gym.envs.androidworld.phone import AppView, PhoneApp, PhoneState, Screen

__all__ = ["Activity", "OpenTracksApp", "TracksData", "clock_text", "km_text"]


@dataclass(frozen=True)
class Activity(ImmutableRow):
    """One recorded track."""

    id: int
    name: str
    category: str
    start: str
    minutes: int
    distance_m: int
    description: str = ""
    elevation_gain: int = 0
    elevation_loss: int = 0


@dataclass
class TracksData(RowTable[Activity]):
    rows_attr = "activities"
    row_type = Activity

    activities: list[Activity] = field(default_factory=list)
    next_id: int = 1

    def __deepcopy__(self, memo: dict[int, Any]) -> TracksData:
        # rows are immutable: a fork copies the list only (fork stays under a millisecond)
        return TracksData(list(self.activities), self.next_id)

    def ordered(self) -> list[Activity]:
        """Newest first, as OpenTracks lists them."""
        return sorted(self.activities, key=lambda a: (a.start, a.id), reverse=True)


def km_text(metres: int) -> str:
    """OpenTracks' distance: kilometres with two decimals."""
    return f"{metres / 1000:.2f} km"


def clock_text(minutes: int) -> str:
    """A duration as OpenTracks shows it: ``H:MM:SS``."""
    return f"{minutes // 60}:{minutes % 60:02d}:00"


def _when(start: str) -> str:
    t = datetime.fromisoformat(start)
    return f"{t:%a}, {t:%b} {t.day} {t.year}, {(t.hour % 12) or 12}:{t:%M} {t:%p}"


@functools.lru_cache(maxsize=4096)
def _row(a: Activity) -> Block:
    return Block(
        "listitem",
        f"{a.name} · {a.category.title()} · {_when(a.start)} · {km_text(a.distance_m)} · "
        f"{clock_text(a.minutes)}",
        resource_id="track_row",
        clickable=True,
        handler="opentracks.open",
        handler_arg=str(a.id),
        gap=2,
    )


class OpenTracksApp(PhoneApp):
    key = "opentracks"
    title = "OpenTracks"
    package = "de.dennisguse.opentracks"
    aliases = ("open tracks", "activity tracker", "open tracks sports tracker", "sports tracker")
    launcher_order = 60

    def initial_data(self) -> TracksData:
        return TracksData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        data: TracksData = self.data(phone)
        if screen.name == "track":
            return self._track(data, int(screen.arg))
        rows = [_row(a) for a in data.ordered()]
        return AppView("OpenTracks", rows or [Block("text", "No recorded tracks.")])

    def _track(self, data: TracksData, track_id: int) -> AppView:
        a = data.get(track_id)
        if a is None:
            return AppView("Track", [Block("text", "This track was deleted.")])
        speed = a.distance_m / 1000 / (a.minutes / 60) if a.minutes else 0.0
        lines = [
            Block("heading", a.name, resource_id="track_name"),
            Block("text", f"Activity type: {a.category.title()}", resource_id="track_category"),
            Block("text", f"Start: {_when(a.start)}", resource_id="track_start"),
            Block("text", f"Distance: {km_text(a.distance_m)}", resource_id="track_distance"),
            Block("text", f"Moving time: {clock_text(a.minutes)}", resource_id="track_time"),
            Block("text", f"Average speed: {speed:.2f} km/h", resource_id="track_speed"),
            Block(
                "text",
                f"Elevation gain: {a.elevation_gain} m · loss: {a.elevation_loss} m",
                resource_id="track_elevation",
            ),
            Block("text", a.description or "No description", resource_id="track_description"),
        ]
        return AppView("Track", lines)

    def on_click_open(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "track", element.handler_arg)
