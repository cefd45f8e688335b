"""OpenTracks information-retrieval tasks (AndroidWorld ``information_retrieval/proto/
tasks.textproto``, the six ``SportsTracker*`` entries).

Each template seeds the activities its question is about (as in the proto's
``relevant_state``) plus 20 random activities in the two weeks before the device time
(AndroidWorld's ``activity_app_utils``), redrawn while they meet every exclusion condition.
Categories are compared without spaces and with "biking" read as "cycling", so a random
"snowboarding" or "mountain biking" track never blurs a question about "snow boarding" or
"cycling" (AndroidWorld's CONTAINS test lets those through). "This week" is Monday October 9
to Sunday October 15, 2023.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.calendar import parse_time
from gui_gym.envs.androidworld.apps.opentracks import OpenTracksApp, TracksData
from gui_gym.envs.androidworld.phone import PhoneState, visible_args
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    milestone,
    mix_with_noise,
    open_app,
    register,
)
from gui_gym.envs.androidworld.tasks.tasks_app import reword_date

__all__ = ["ACTIVITY_NAMES", "CATEGORIES", "random_activity", "same_sport"]

_APP = OpenTracksApp()

CATEGORIES = (
    "running",
    "cycling",
    "swimming",
    "hiking",
    "mountain biking",
    "kayaking",
    "skiing",
    "snow boarding",
    "skate boarding",
    "climbing",
    "inline skating",
    "sailing",
)
"""The categories the questions ask about (the proto's ``category`` values)."""

_NOISE_CATEGORIES = (
    "biking",
    "running",
    "hiking",
    "swimming",
    "walking",
    "skiing",
    "snowboarding",
    "kayaking",
    "rowing",
    "sailing",
    "skateboarding",
    "surfing",
    "climbing",
    "mountain biking",
)
_DURATIONS = (15, 30, 45, 60, 90, 120, 40, 50, 75, 80, 20, 105, 135, 150, 165, 180, 210, 240, 270)
_DISTANCES = (100, 300, 500, 800, 1000, 1200, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000)
_DISTANCES += (6000, 7000, 8000, 9000, 10000, 12000)
_TIMES = (
    "8:00am",
    "10:30am",
    "5:00pm",
    "6:30am",
    "9:45am",
    "2:15pm",
    "7:00am",
    "11:00am",
    "4:00pm",
    "1:30pm",
    "5:45pm",
    "6:15am",
    "7:30am",
    "3:45pm",
    "10:15am",
    "2:45pm",
    "8:45am",
    "9:15am",
    "12:00pm",
    "5:30pm",
)
_ELEVATIONS = (50, 100, 250, 150, 75, 300, 200, 400, 350, 450, 550, 600, 800, 700, 900, 1000)
ACTIVITY_NAMES = (
    "More tired than usual today",
    "Need more strength and conditioning",
    "Slow day",
    "Laps around the lake",
    "Trying and failing to keep up with John",
    "Quick outing",
    "Recovery day",
    "Active Rest Day",
    "Skill work",
    "Mindful Movement",
    "Outdoor Adventure",
    "Light Workout",
    "Intense day",
    "Quick Sweat",
    "Lunch Break Fitness",
)
_DESCRIPTIONS = (
    "Shared laughs and made memories with friends.",
    "Enjoyed a fun outing with good company.",
    "Had a blast with my favorite people.",
    "Experienced something unforgettable.",
    "Wandered off the beaten path.",
    "Stepped outside my comfort zone.",
    "Pushed myself harder than I thought I could.",
    "Enjoyed the warmth of the sunshine on my skin.",
    "Embraced the rain and got soaked.",
    "Showed resilience in the face of adversity.",
)
_NOISE_NAMES = ("Morning {c}", "Evening {c}", "Weekend {c}", "{c} with friends", "Easy {c}")
_WEEK = tuple(f"2023-10-{d:02d}" for d in range(9, 16))
_NOW = datetime(2023, 10, 15, 15, 34)


def _sport(category: str) -> str:
    return category.lower().replace(" ", "").replace("biking", "cycling")


def same_sport(asked: str, row_category: str) -> bool:
    """Whether a track of ``row_category`` counts as the ``asked`` category."""
    return _sport(asked) in _sport(row_category)


def _activity(rng: random.Random, day: str, category: str, **fields: Any) -> dict[str, Any]:
    """A seeded activity on ``day``: the proto's value lists for what is not given."""
    elevation = rng.choice(_ELEVATIONS)
    row = {
        "name": rng.choice(ACTIVITY_NAMES),
        "category": category,
        "start": f"{day} {parse_time(rng.choice(_TIMES))}",
        "minutes": rng.choice(_DURATIONS),
        "distance_m": rng.choice(_DISTANCES),
        "description": rng.choice(_DESCRIPTIONS),
        "elevation_gain": elevation,
        "elevation_loss": elevation,
    }
    row.update(fields)
    return row


def random_activity(rng: random.Random) -> dict[str, Any]:
    """``_generate_random_activity``: any category, a start in the week either side of
    October 8 15:34, 1-299 minutes, 0-20 km, 0-500 m up and down."""
    category = rng.choice(_NOISE_CATEGORIES)
    start = _NOW - timedelta(days=14) + timedelta(minutes=rng.randrange(14 * 24 * 60))
    return {
        "name": rng.choice(_NOISE_NAMES).format(c=category.title()),
        "category": category,
        "start": start.strftime("%Y-%m-%d %H:%M"),
        "minutes": rng.randrange(1, 300),
        "distance_m": rng.randint(0, 20000),
        "description": "",
        "elevation_gain": rng.randint(0, 500),
        "elevation_loss": rng.randint(0, 500),
    }


class _TracksQuestion(AndroidWorldTask):
    """A question about recorded activities, answered with ANSWER from the track list."""

    app = "opentracks"
    answer_mode = "number"

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        return lambda row: False

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        rows = mix_with_noise(
            rng, self.params["activities"], 20, random_activity, self.excluded(self.params)
        )
        data: TracksData = phone.apps["opentracks"]
        data.activities = []
        data.next_id = 1
        for row in rows:
            data.add(**row)

    def answer_text(self) -> str:
        return ", ".join(self.expected_answer())

    def _seeded_ids(self, phone: PhoneState) -> list[str]:
        """Ids of the seeded activities in list order."""
        wanted = {(a["start"], a["category"], a["name"]) for a in self.params["activities"]}
        data: TracksData = phone.apps["opentracks"]
        return [str(a.id) for a in data.ordered() if (a.start, a.category, a.name) in wanted]

    def _answer_in_view(self, phone: PhoneState) -> bool:
        """The lowest seeded row is on the list's screen (a reader from the top has passed
        the others)."""
        ids = self._seeded_ids(phone)
        return bool(ids) and ids[-1] in visible_args(phone, _APP, "opentracks.open")

    def milestone_checks(self):
        return [self.opened_milestone(), milestone("answer_in_view", self._answer_in_view)]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if phone.dialog is not None:
            return Action(ActionType.GOBACK)
        action = open_app(phone, "opentracks", "OpenTracks")
        if action is not None:
            return action
        top = phone.screen
        if phone.focus or top is None or top.name != "main":
            return Action(ActionType.GOBACK)
        if self._answer_in_view(phone):
            return Action(ActionType.ANSWER, text=self.answer_text())
        data: TracksData = phone.apps["opentracks"]
        rank = {str(a.id): i for i, a in enumerate(data.ordered())}
        shown = [rank[e.handler_arg] for e in screen.find(handler="opentracks.open")]
        last = rank[self._seeded_ids(phone)[-1]]
        if shown and last < min(shown) and screen.can_scroll_up:
            return Action(ActionType.SCROLL, direction="up")
        return Action(ActionType.SCROLL, direction="down")


def _in_week(row: dict[str, Any]) -> bool:
    return _WEEK[0] <= row["start"][:10] <= _WEEK[-1]


@register
class SportsTrackerActivitiesOnDate(_TracksQuestion):
    """The categories of the two activities on a day (no other activity that day)."""

    name = "SportsTrackerActivitiesOnDate"
    complexity = 2
    answer_mode = "string"
    template = (
        "What activities did I do {date} in the OpenTracks app? Answer with the activity type "
        "only. If there are multiple types, format your answer in a comma separated list."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        day = (datetime(2023, 10, 13) - timedelta(days=rng.randrange(20))).date().isoformat()
        categories = rng.sample(CATEGORIES, 2)
        names = rng.sample(ACTIVITY_NAMES, 2)
        return {
            "date": reword_date(rng, day),
            "day": day,
            "activities": [
                _activity(rng, day, c, name=n) for c, n in zip(categories, names, strict=True)
            ],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        day = params["day"]
        return lambda row: row["start"][:10] == day

    def expected_answer(self) -> list[str]:
        return [a["category"] for a in self.params["activities"]]


@register
class SportsTrackerActivitiesCountForWeek(_TracksQuestion):
    """How many activities of a category this week (no random one of it this week).

    Adapted: AndroidWorld always seeds 2, so its answer is always 2; here 1-4 are seeded on
    distinct days so the count has to be read off the list."""

    name = "SportsTrackerActivitiesCountForWeek"
    template = (
        "How many {category} activities did I do this week in the OpenTracks app? Assume the "
        "week starts from Monday. Express your answer as a single integer."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        category = rng.choice(CATEGORIES)
        days = rng.sample(_WEEK, rng.randint(1, 4))
        names = rng.sample(ACTIVITY_NAMES, len(days))
        return {
            "category": category,
            "activities": [
                _activity(rng, d, category, name=n) for d, n in zip(days, names, strict=True)
            ],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        category = params["category"]
        return lambda row: same_sport(category, row["category"]) and _in_week(row)

    def expected_answer(self) -> list[str]:
        return [str(len(self.params["activities"]))]


@register
class SportsTrackerActivityDuration(_TracksQuestion):
    """The duration in minutes of the one activity of a category on a day."""

    name = "SportsTrackerActivityDuration"
    complexity = 1.2
    template = (
        "How long was my {category} activity {date} in the OpenTracks app? Express your "
        "answer in minutes as a single integer."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        category = rng.choice(CATEGORIES)
        day = f"2023-10-{rng.randint(5, 15):02d}"
        return {
            "category": category,
            "date": reword_date(rng, day),
            "day": day,
            "activities": [_activity(rng, day, category)],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        day, category = params["day"], params["category"]
        return lambda row: row["start"][:10] == day and same_sport(category, row["category"])

    def expected_answer(self) -> list[str]:
        return [str(self.params["activities"][0]["minutes"])]


@register
class SportsTrackerLongestDistanceActivity(_TracksQuestion):
    """The longest distance in metres of a category this week (random activities of it this
    week are shorter); AndroidWorld accepts answers within 10 m."""

    name = "SportsTrackerLongestDistanceActivity"
    answer_tolerance = 10.0
    template = (
        "What was the longest distance covered in a {category} activity in the OpenTracks app "
        "this week? Assume the week starts from Monday. Express your answer as a single number "
        "in meters rounded to the nearest integer."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        category = rng.choice(CATEGORIES)
        return {
            "category": category,
            "activities": [_activity(rng, rng.choice(_WEEK), category)],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        category = params["category"]
        longest = params["activities"][0]["distance_m"]
        return lambda row: (
            same_sport(category, row["category"]) and row["distance_m"] >= longest and _in_week(row)
        )

    def expected_answer(self) -> list[str]:
        return [str(self.params["activities"][0]["distance_m"])]


@register
class SportsTrackerTotalDurationForCategoryThisWeek(_TracksQuestion):
    """The total minutes of a category this week (two seeded, no random one)."""

    name = "SportsTrackerTotalDurationForCategoryThisWeek"
    complexity = 1.6
    template = (
        "What was the total duration of {category} activities in the OpenTracks app this week? "
        "Assume the week starts from Monday. Express your answer in minutes as a single integer."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        category = rng.choice(CATEGORIES)
        days = rng.sample(_WEEK, 2)
        minutes = rng.sample(_DURATIONS, 2)
        names = rng.sample(ACTIVITY_NAMES, 2)
        return {
            "category": category,
            "activities": [
                _activity(rng, d, category, minutes=m, name=n)
                for d, m, n in zip(days, minutes, names, strict=True)
            ],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        category = params["category"]
        return lambda row: same_sport(category, row["category"]) and _in_week(row)

    def expected_answer(self) -> list[str]:
        return [str(sum(a["minutes"] for a in self.params["activities"]))]


@register
class SportsTrackerTotalDistanceForCategoryOverInterval(_TracksQuestion):
    """The total metres of a category between two days (two seeded on the first day, no
    random one in the interval); AndroidWorld accepts answers within 10 m."""

    name = "SportsTrackerTotalDistanceForCategoryOverInterval"
    complexity = 2.2
    answer_tolerance = 10.0
    template = (
        "What was the total distance covered for {category} activities in the OpenTracks app "
        "from {start_date} to {end_date}? Express your answer as a single number in meters "
        "rounded to the nearest integer."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        category = rng.choice(CATEGORIES)
        first, last = f"2023-10-{rng.randint(1, 9):02d}", f"2023-10-{rng.randint(10, 15):02d}"
        distances = rng.sample(_DISTANCES, 2)
        names = rng.sample(ACTIVITY_NAMES, 2)
        return {
            "category": category,
            "start_date": reword_date(rng, first),
            "end_date": reword_date(rng, last),
            "first": first,
            "last": last,
            "activities": [
                _activity(rng, first, category, distance_m=d, name=n)
                for d, n in zip(distances, names, strict=True)
            ],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        category, first, last = params["category"], params["first"], params["last"]
        return lambda row: (
            same_sport(category, row["category"]) and first <= row["start"][:10] <= last
        )

    def expected_answer(self) -> list[str]:
        return [str(sum(a["distance_m"] for a in self.params["activities"]))]
