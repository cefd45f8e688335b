"""Generators of realistic user data for task parameters and noise (names, numbers, text,
file names, dates), after AndroidWorld's ``user_data_generation``. All take a
``random.Random`` so every draw follows the episode seed."""

from __future__ import annotations

import random
from datetime import date, timedelta

__all__ = [
    "ANSWER_TITLES",
    "DEVICE_DATE",
    "FAMILY_NAMES",
    "GIVEN_NAMES",
    "PROTO_TIMES",
    "SENTENCES",
    "random_date",
    "random_file_name",
    "random_name",
    "random_phone",
    "random_sentence",
    "with_marker",
]

DEVICE_DATE = date(2023, 10, 15)
"""AndroidWorld's device date (a Sunday); relative dates in tasks count from it."""

PROTO_TIMES = (
    "11:00am",
    "1:30pm",
    "9:45am",
    "21:45",
    "10:00am",
    "3:15pm",
    "12pm",
    "6:30am",
    "8:00pm",
    "12am",
    "5:20pm",
    "23:59",
    "7:45am",
    "4pm",
    "10:30am",
    "16:15",
    "2:45am",
    "9:15pm",
    "11:30am",
    "20:00",
)
"""Times of day the information-retrieval protos draw from (AndroidWorld's
``tasks.textproto``, shared by the calendar and Tasks questions)."""

ANSWER_TITLES = (
    " Answer with the titles only. If there are multiples titles, format your answer in a "
    "comma separated list."
)
"""The answer format the protos' title questions append to their goal."""

GIVEN_NAMES = (
    "Adam",
    "Alice",
    "Amara",
    "Ana",
    "Arjun",
    "Ben",
    "Bianca",
    "Carlos",
    "Chen",
    "Chloe",
    "Daniel",
    "Diana",
    "Dmitri",
    "Elena",
    "Emily",
    "Ethan",
    "Fatima",
    "Felix",
    "Grace",
    "Hana",
    "Hassan",
    "Ines",
    "Isaac",
    "Jade",
    "James",
    "Jin",
    "Julia",
    "Kai",
    "Kenji",
    "Laura",
    "Leo",
    "Lina",
    "Lucas",
    "Maya",
    "Mei",
    "Mohammed",
    "Nadia",
    "Nina",
    "Noah",
    "Olivia",
    "Oscar",
    "Priya",
    "Rafael",
    "Rosa",
    "Sam",
    "Sara",
    "Tariq",
    "Tom",
    "Uma",
    "Victor",
    "Wei",
    "Yara",
    "Yusuf",
    "Zoe",
)
FAMILY_NAMES = (
    "Anderson",
    "Brown",
    "Chen",
    "Davis",
    "Garcia",
    "Gonzalez",
    "Hernandez",
    "Ito",
    "Johnson",
    "Khan",
    "Lee",
    "Lopez",
    "Martin",
    "Miller",
    "Moore",
    "Nguyen",
    "Patel",
    "Rodriguez",
    "Smith",
    "Taylor",
    "Thomas",
    "Wilson",
)
SENTENCES = (
    "Can you pick up milk on the way home?",
    "The meeting moved to Thursday at 10.",
    "Don't forget the dentist appointment tomorrow.",
    "I left the keys on the kitchen table.",
    "Happy birthday! Hope you have a great day.",
    "The package should arrive by Friday.",
    "Let's grab lunch next week.",
    "Please send me the slides from today.",
    "Running ten minutes late, sorry!",
    "The report is ready for review.",
    "Call me when you land.",
    "We need more coffee filters.",
    "The train leaves at 7:45 from platform 3.",
    "Remember to water the plants.",
    "Dinner reservation is at 8 pm.",
    "Can you check the thermostat settings?",
    "The book club meets on Sunday.",
    "I found the charger you were looking for.",
    "Parking is free after 6 pm downtown.",
    "Movie starts at 9, meet at the lobby.",
)
_ADJECTIVES = (
    "quick",
    "blue",
    "quiet",
    "brave",
    "calm",
    "lucky",
    "sunny",
    "happy",
    "early",
    "silver",
    "rapid",
    "gentle",
)
_NOUNS = (
    "river",
    "mountain",
    "garden",
    "report",
    "budget",
    "recipe",
    "journey",
    "meeting",
    "project",
    "summary",
    "photo",
    "plan",
)


def random_name(rng: random.Random, exclude: tuple[str, ...] = ()) -> str:
    """``"Given Family"``, never one of ``exclude``."""
    while True:
        name = f"{rng.choice(GIVEN_NAMES)} {rng.choice(FAMILY_NAMES)}"
        if name not in exclude:
            return name


def random_phone(rng: random.Random) -> str:
    """``"+1"`` and 10 digits, as AndroidWorld's ``generate_random_number``."""
    return "+1" + "".join(str(rng.randrange(10)) for _ in range(10))


def random_sentence(rng: random.Random) -> str:
    return rng.choice(SENTENCES)


def random_file_name(rng: random.Random, extension: str = "") -> str:
    """``"<adjective>_<noun>"`` with a date, code or copy marker as prefix or suffix."""
    return with_marker(rng, f"{rng.choice(_ADJECTIVES)}_{rng.choice(_NOUNS)}") + extension


def with_marker(rng: random.Random, base: str) -> str:
    """``base`` with a date, 4-character code or copy marker joined as prefix or suffix
    (AndroidWorld's ``generate_modified_file_name``)."""
    kind = rng.randrange(3)
    if kind == 0:
        marker = (date(2023, 1, 1) + timedelta(days=rng.randrange(286))).strftime("%Y_%m_%d")
    elif kind == 1:
        marker = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(4))
    else:
        marker = rng.choice(("backup", "copy", "final", "edited"))
    return f"{marker}_{base}" if rng.random() < 0.5 else f"{base}_{marker}"


def random_date(rng: random.Random, start_day: int = 15, end_day: int = 31) -> date:
    """A day of October 2023 in ``[start_day, end_day]``."""
    return date(2023, 10, rng.randint(start_day, end_day))
