"""OsmAnd (``net.osmand``): an offline map of Liechtenstein with search, favourites, map
markers and planned tracks.

The map screen has a search box: typing lists the places whose name holds the text, or, for
a ``"lat, lon"`` pair, that location. A result opens the place's card with "Add to
favourites" and "Add marker". "Plan a route" opens the route planner: search and add points
in order, then "Save track" under a name. The map itself (places, markers, favourites) is
drawn only into the screenshot. The data mirrors what AndroidWorld reads: the waypoints of
``favorites.gpx``, the rows of ``map_markers`` and the track points of ``tracks/*.gpx``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.phone import AppView, PhoneApp, PhoneState, Screen, icon
from gui_gym.envs.androidworld.pixels import pixel_source

__all__ = ["PLACES", "OsmAndApp", "OsmAndData", "Point", "parse_coords", "place_coords"]

PLACES: dict[str, tuple[float, float]] = {
    "Balzers, Liechtenstein": (47.0688832, 9.5061564),
    "Bendern, Liechtenstein": (47.2122151, 9.5062101),
    "Malbun, Liechtenstein": (47.1026191, 9.6083057),
    "Nendeln, Liechtenstein": (47.1973857, 9.5430636),
    "Oberplanken, Liechtenstein": (47.1784977, 9.5450163),
    "Planken, Liechtenstein": (47.1858882, 9.5452201),
    "Rotenboden, Liechtenstein": (47.1275785, 9.5387131),
    "Ruggell, Liechtenstein": (47.23976, 9.5262837),
    "Schaan, Liechtenstein": (47.1663432, 9.5103085),
    "Schaanwald, Liechtenstein": (47.2165476, 9.5699984),
    "Schönberg, Liechtenstein": (47.1303814, 9.5930117),
    "Triesen, Liechtenstein": (47.106997, 9.5274854),
}
"""The places the map knows (AndroidWorld's ``_PRELOADED_MAP_LOCATIONS``)."""


@dataclass(frozen=True)
class Point:
    name: str
    lat: float
    lon: float


@dataclass
class OsmAndData:
    """Favourites, markers, saved tracks and the route being planned."""

    favorites: list[Point] = field(default_factory=list)
    markers: list[Point] = field(default_factory=list)
    tracks: dict[str, list[Point]] = field(default_factory=dict)
    route: list[Point] = field(default_factory=list)

    def __deepcopy__(self, memo: dict[int, Any]) -> OsmAndData:
        # points are frozen: a fork copies the lists only
        return OsmAndData(
            list(self.favorites),
            list(self.markers),
            {name: list(points) for name, points in self.tracks.items()},
            list(self.route),
        )


def parse_coords(text: str) -> tuple[float, float] | None:
    """A ``"lat, lon"`` pair in ``text`` (exactly two numbers), else None."""
    numbers = re.findall(r"-?\d*\.?\d+", text)
    if len(numbers) != 2:
        return None
    return float(numbers[0]), float(numbers[1])


def place_coords(location: str) -> tuple[float, float] | None:
    """Coordinates of a place name or a ``"lat, lon"`` string."""
    return parse_coords(location) or PLACES.get(location)


def search(query: str) -> list[Point]:
    """The places (or the location) a search for ``query`` finds."""
    query = query.strip()
    if not query:
        return []
    coords = parse_coords(query)
    if coords is not None:
        return [Point(f"Location {coords[0]}, {coords[1]}", *coords)]
    words = query.lower().replace(",", " ").split()
    return [Point(n, *c) for n, c in PLACES.items() if all(w in n.lower() for w in words)]


def _point_arg(p: Point) -> str:
    return f"{p.lat}|{p.lon}|{p.name}"


def _from_arg(arg: str) -> Point:
    lat, lon, name = arg.split("|", 2)
    return Point(name, float(lat), float(lon))


class OsmAndApp(PhoneApp):
    key = "osmand"
    title = "OsmAnd"
    package = "net.osmand"
    aliases = ("osmand maps", "maps", "osm and", "osmand+")
    launcher_order = 70

    def initial_data(self) -> OsmAndData:
        return OsmAndData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        data: OsmAndData = self.data(phone)
        form = self.form(phone)
        if screen.name == "place":
            p = _from_arg(screen.arg)
            return AppView(
                p.name,
                [
                    Block("heading", p.name, resource_id="place_name"),
                    Block("text", f"{p.lat:.5f}, {p.lon:.5f}", resource_id="place_coords"),
                    self.button("Add to favourites", "favorite", screen.arg),
                    self.button("Add marker", "marker", screen.arg),
                ],
            )
        if screen.name == "plan":
            rows: list[Block] = [Block("heading", "Route points")]
            rows += [Block("text", f"{i + 1}. {p.name}") for i, p in enumerate(data.route)]
            rows.append(self.field("point_query", "Add a point: search", phone))
            rows += [
                self.row(f"Add {p.name}", "add_point", _point_arg(p), resource_id="point_result")
                for p in search(form.get("point_query", ""))
            ]
            rows.append(self.field("track_name", "Track name", phone))
            rows.append(self.button("Save track", "save_track"))
            return AppView("Plan a route", rows)
        if screen.name == "saved":
            rows = [Block("heading", "Favourites")]
            rows += [Block("text", p.name) for p in data.favorites]
            rows.append(Block("heading", "Markers"))
            rows += [Block("text", p.name) for p in data.markers]
            rows.append(Block("heading", "Tracks"))
            rows += [Block("text", f"{n} ({len(pts)} points)") for n, pts in data.tracks.items()]
            return AppView("My places", rows)
        content = [
            Block("image", "", description="Map", height=300, handler="osmand.map"),
            self.field("query", "Search", phone),
        ]
        content += [
            self.row(p.name, "open_place", _point_arg(p), resource_id="search_result")
            for p in search(form.get("query", ""))
        ]
        return AppView(
            "OsmAnd",
            content,
            actions=[
                icon("Plan a route", "osmand.plan", "plan"),
                icon("My places", "osmand.saved", "saved"),
            ],
        )

    def on_click_open_place(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "place", element.handler_arg)

    def on_click_favorite(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).favorites.append(_from_arg(element.handler_arg))
        phone.toast = "Added to favourites"

    def on_click_marker(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).markers.append(_from_arg(element.handler_arg))
        phone.toast = "Marker added"

    def on_click_plan(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).route = []
        self.push(phone, "plan", form={"point_query": "", "track_name": ""})

    def on_click_saved(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "saved")

    def on_click_add_point(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).route.append(_from_arg(element.handler_arg))
        self.form(phone)["point_query"] = ""

    def on_click_save_track(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: OsmAndData = self.data(phone)
        if len(data.route) < 2:
            raise InvalidAction("a track needs at least two points")
        name = self.form(phone).get("track_name", "").strip() or (
            f"{data.route[0].name} to {data.route[-1].name}"
        )
        data.tracks[name] = list(data.route)
        data.route = []
        self.pop(phone)
        phone.toast = f"Saved track {name}"


@pixel_source("osmand.map")
def _map_pixels(phone: PhoneState, arg: str, width: int, height: int) -> np.ndarray:
    data: OsmAndData = phone.apps["osmand"]
    image = np.empty((max(1, height), max(1, width), 3), np.uint8)
    image[:] = (232, 238, 222)
    lats = [c[0] for c in PLACES.values()]
    lons = [c[1] for c in PLACES.values()]

    def dot(lat: float, lon: float, color: tuple[int, int, int], r: int) -> None:
        y = int((max(lats) + 0.01 - lat) / (max(lats) - min(lats) + 0.02) * (height - 1))
        x = int((lon - min(lons) + 0.01) / (max(lons) - min(lons) + 0.02) * (width - 1))
        image[max(0, y - r) : y + r + 1, max(0, x - r) : x + r + 1] = color

    for lat, lon in PLACES.values():
        dot(lat, lon, (120, 120, 120), 1)
    for p in data.favorites:
        dot(p.lat, p.lon, (240, 180, 0), 3)
    for p in data.markers:
        dot(p.lat, p.lon, (220, 40, 40), 3)
    return image
