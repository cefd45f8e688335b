"""OsmAnd tasks (AndroidWorld ``task_evals/single/osmand.py``): a favourite, a map marker,
and a saved track through given places in order.

A location is a place name or its ``"lat, lon"`` string (a coin flip, as in AndroidWorld).
Checks as AndroidWorld's: a favourite whose name holds the location string or that lies
within 0.001 degrees of it; a marker within 0.001 degrees; a track whose points pass within
0.001 degrees of each waypoint, in order.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.osmand import PLACES, OsmAndData, Point, place_coords
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

__all__ = ["near", "track_matches"]

_DELTA = 0.001


def near(point: Point, coords: tuple[float, float] | None) -> bool:
    """Within 0.001 degrees in latitude and longitude (AndroidWorld's ``_coords_match``)."""
    return coords is not None and (
        abs(point.lat - coords[0]) < _DELTA and abs(point.lon - coords[1]) < _DELTA
    )


def track_matches(points: Sequence[Point], waypoints: Sequence[tuple[float, float]]) -> bool:
    """The track passes each waypoint, in order."""
    i = 0
    for p in points:
        if i < len(waypoints) and near(p, waypoints[i]):
            i += 1
    return i == len(waypoints)


def _location(rng: random.Random) -> str:
    name = rng.choice(sorted(PLACES))
    if rng.getrandbits(1):
        return name
    lat, lon = PLACES[name]
    return f"{lat}, {lon}"


def _query(location: str) -> str:
    """What the expert types to find ``location``."""
    return location.split(",")[0] if location in PLACES else location


class _OsmTask(AndroidWorldTask):
    app = "osmand"

    def _find_place(self, phone: PhoneState, screen: UITree, location: str) -> Action:
        """Toward the card of ``location`` (search on the map screen)."""
        top = phone.screen
        assert top is not None
        if top.name != "main" or phone.dialog is not None:
            return Action(ActionType.GOBACK)
        action = type_into(screen, "query", _query(location), phone.forms.get("osmand", {}))
        if action is not None:
            return action
        coords = place_coords(location)
        for result in screen.find(handler="osmand.open_place"):
            lat, lon, _ = result.handler_arg.split("|", 2)
            if near(Point("", float(lat), float(lon)), coords):
                return Action(ActionType.CLICK, index=result.index)
        return Action(ActionType.GOBACK)

    def _on_card(self, phone: PhoneState) -> bool:
        top = phone.screen
        if phone.foreground != "osmand" or top is None or top.name != "place":
            return False
        lat, lon, _ = top.arg.split("|", 2)
        return near(Point("", float(lat), float(lon)), place_coords(self.params["location"]))


@register
class OsmAndFavorite(_OsmTask):
    """Save a place as a favourite."""

    name = "OsmAndFavorite"
    complexity = 1.3
    template = "Add a favorite location marker for {location} in the OsmAnd maps app."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"location": _location(rng)}

    def score(self, phone: PhoneState) -> float:
        location = self.params["location"]
        coords = place_coords(location)
        data: OsmAndData = phone.apps["osmand"]
        return float(any(location in p.name or near(p, coords) for p in data.favorites))

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("place_found", self._on_card),
            self.done_milestone("favorite_saved"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        action = open_app(phone, "osmand", "OsmAnd")
        if action is not None:
            return action
        if self._on_card(phone):
            return reach(screen, handler="osmand.favorite")
        return self._find_place(phone, screen, self.params["location"])


@register
class OsmAndMarker(_OsmTask):
    """Put a map marker on a place."""

    name = "OsmAndMarker"
    complexity = 2.0
    template = "Add a location marker for {location} in the OsmAnd maps app."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"location": _location(rng)}

    def score(self, phone: PhoneState) -> float:
        coords = place_coords(self.params["location"])
        return float(any(near(p, coords) for p in phone.apps["osmand"].markers))

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("place_found", self._on_card),
            self.done_milestone("marker_added"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        action = open_app(phone, "osmand", "OsmAnd")
        if action is not None:
            return action
        if self._on_card(phone):
            return reach(screen, handler="osmand.marker")
        return self._find_place(phone, screen, self.params["location"])


@register
class OsmAndTrack(_OsmTask):
    """Plan a route through 2-4 places in order and save it as a track."""

    name = "OsmAndTrack"
    complexity = 12
    template = (
        "Save a track with waypoints {names} in the OsmAnd maps app in the same order as listed."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        waypoints = rng.sample(sorted(PLACES), rng.randint(2, 4))
        return {
            "waypoints": waypoints,
            "names": ", ".join(waypoints),
            "track_name": f"{waypoints[0]} to {waypoints[-1]}",
        }

    def _targets(self) -> list[tuple[float, float]]:
        return [PLACES[w] for w in self.params["waypoints"]]

    def score(self, phone: PhoneState) -> float:
        data: OsmAndData = phone.apps["osmand"]
        return float(any(track_matches(pts, self._targets()) for pts in data.tracks.values()))

    def milestone_checks(self):
        first = self._targets()[0]
        return [
            self.opened_milestone(),
            milestone(
                "first_point_added",
                lambda p: bool(p.apps["osmand"].route) and near(p.apps["osmand"].route[0], first),
            ),
            self.done_milestone("track_saved"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if phone.dialog is not None:
            return Action(ActionType.GOBACK)
        action = open_app(phone, "osmand", "OsmAnd")
        if action is not None:
            return action
        top = phone.screen
        assert top is not None
        data: OsmAndData = phone.apps["osmand"]
        if top.name != "plan":
            if top.name != "main" or phone.focus:
                return Action(ActionType.GOBACK)
            return tap(screen, handler="osmand.plan") or Action(ActionType.GOBACK)
        targets = self._targets()
        if not track_matches(data.route, targets[: len(data.route)]) or len(data.route) > len(
            targets
        ):
            return Action(ActionType.GOBACK)  # leave: planning again starts an empty route
        if len(data.route) < len(targets):
            want = self.params["waypoints"][len(data.route)]
            form = phone.forms.get("osmand", {})
            action = type_into(screen, "point_query", want.split(",")[0], form)
            if action is not None:
                return action
            result = screen.find_one(handler="osmand.add_point", text=f"Add {want}")
            if result is None:
                return Action(ActionType.SCROLL, direction="down")
            return Action(ActionType.CLICK, index=result.index)
        if phone.focus:
            return Action(ActionType.GOBACK)
        return reach(screen, handler="osmand.save_track")
