"""Joplin information-retrieval tasks (AndroidWorld ``information_retrieval/proto/
tasks.textproto``, the four ``Notes*`` entries).

Each template seeds the notes its question is about (as in the proto's ``relevant_state``)
plus 100 random notes, 30% of them in the question's notebooks, that avoid the proto's
``exclusion_conditions`` (AndroidWorld's ``joplin_app_utils``: a random note is redrawn when
it meets every condition). The noise notes are this project's own small pool per notebook.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.joplin import JoplinApp, JoplinData
from gui_gym.envs.androidworld.phone import PhoneState, visible_args
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    milestone,
    mix_with_noise,
    open_app,
    register,
    seek,
)

__all__ = ["MEETING_BODIES", "MEETING_TITLES", "NOISE_NOTES"]

_APP = JoplinApp()

NOISE_NOTES: dict[str, tuple[tuple[str, str], ...]] = {
    "Recipes": (
        ("Lentil Soup", "Ingredients:\nLentils, carrots, onion, cumin\nInstructions:\nSimmer."),
        ("Overnight Oats", "Oats, milk and berries left in the fridge overnight."),
        ("Garlic Bread", "Butter, garlic and parsley on a baguette, baked until golden."),
        ("Green Smoothie", "Spinach, banana, apple and water, blended until smooth."),
    ),
    "Tasks": (
        ("Weekend Chores", "Tasks:\nLaundry\nVacuum the hallway\nWater the plants"),
        ("Car Errands", "Tasks:\nOil change\nCheck tyre pressure\nWash the car"),
        ("Office Setup", "Tasks:\nOrder a monitor arm\nLabel the cables"),
    ),
    "Meeting Notes": (
        ("Design Review", "Meeting Notes:\n- Walked through the new screens\n- Agreed on colours"),
        ("Hiring Sync", "Meeting Notes:\n- Reviewed candidates\n- Scheduled interviews"),
        ("Retro", "Meeting Notes:\n- What went well\n- What to change next sprint"),
    ),
    "Personal": (
        ("Birthday Ideas", "A book, a plant, concert tickets."),
        ("Reading List", "Three novels and a biography to finish this year."),
        ("Gym Log", "Squats 3x5, rows 3x8, a short run."),
    ),
    "Work": (
        ("Quarter Goals", "Ship the export feature and cut build times."),
        ("Release Checklist", "Freeze, test, tag, announce."),
        ("One-on-one Topics", "Career plans, feedback, workload."),
    ),
    "School": (
        ("Essay Outline", "Introduction, three arguments, conclusion."),
        ("Lab Report", "Measure, record, plot, explain the error bars."),
        ("Exam Dates", "Maths on Monday, history on Thursday."),
    ),
    "Home": (
        ("Garden Plan", "Tomatoes by the fence, herbs near the kitchen."),
        ("Repairs", "Squeaky door, loose tile, dripping tap."),
        ("Pantry Stock", "Rice, beans, flour, olive oil."),
    ),
    "Projects": (
        ("Bookshelf Build", "Pine boards, screws, wood stain."),
        ("Photo Album", "Pick forty prints from the summer trip."),
        ("App Prototype", "Sketch the screens, then a clickable mock-up."),
    ),
    "Ideas": (
        ("Podcast Topics", "Local history, small businesses, book talk."),
        ("Side Project", "A tool that tidies downloaded files."),
        ("Gift Shop Names", "Paper Lantern, The Little Shelf."),
    ),
    "Health": (
        ("Sleep Notes", "Lights out by eleven, no screens after ten."),
        ("Stretch Routine", "Hamstrings, hips, shoulders: ten minutes."),
        ("Water Intake", "Two litres a day, more on run days."),
    ),
    "Travel": (
        ("Packing List", "Passport, chargers, rain jacket, snacks."),
        ("Lisbon Trip", "Trams, pastries, the castle at sunset."),
        ("Camping Gear", "Tent, stove, lamp, sleeping bags."),
    ),
    "Finance": (
        ("Monthly Budget", "Rent, food, transport, savings."),
        ("Tax Documents", "Payslips, receipts, donation letters."),
        ("Savings Goals", "Emergency fund first, then a holiday."),
    ),
}
"""Random notes per notebook (this project's pool, in the shape of AndroidWorld's)."""

_RECIPE_TITLES = (
    "Pancake Recipe",
    "Spaghetti Carbonara",
    "Chocolate Cake",
    "Chicken Alfredo",
    "Vegetable Stir-fry",
    "Beef Stew",
    "Lasagna",
    "Salmon Salad",
    "Tacos",
    "Fruit Smoothie",
)
_QUANTITIES = (
    "1 cup",
    "2 cups",
    "1/2 cup",
    "3/4 cup",
    "1/4 cup",
    "1 tablespoon",
    "2 tablespoons",
    "1 teaspoon",
    "2 teaspoons",
    "3 teaspoons",
)
_INGREDIENTS = (
    "almond flour",
    "coconut sugar",
    "chia seeds",
    "tahini",
    "matcha powder",
    "acai berries",
    "goji berries",
    "spirulina",
    "maca powder",
    "hemp seeds",
    "arrowroot powder",
    "quinoa flakes",
    "buckwheat groats",
    "millet",
)
_RECIPE_BODIES = (
    "Ingredients:\n- 1 cup all-purpose flour\n- 1/2 cup granulated sugar\n- {item}\n"
    "- 1 teaspoon baking powder\n- 1/4 teaspoon salt\n\nInstructions:\n1. Preheat oven to "
    "350°F (175°C).\n2. Mix the dry ingredients, then bake for 25 minutes.",
    "Ingredients:\n- {item}\n- 2 cups all-purpose flour\n- 1 tablespoon baking powder\n"
    "- 1 cup milk\n\nInstructions:\n1. Whisk everything together.\n2. Cook on a hot pan.",
    "Ingredients:\n- 2 cups rolled oats\n- {item}\n- 1/2 cup packed brown sugar\n"
    "- 1/2 teaspoon cinnamon\n\nInstructions:\n1. Combine.\n2. Bake until crisp.",
    "Ingredients:\n- 1 cup quinoa\n- 2 cups vegetable broth\n- 1/4 cup sliced olives\n"
    "- {item}\n\nInstructions:\n1. Rinse the quinoa.\n2. Simmer in broth for 15 minutes.",
    "Ingredients:\n- 1 cup cooked chickpeas\n- 1/4 cup lemon juice\n- {item}\n"
    "- 2 cloves garlic\n\nInstructions:\n1. Blend until smooth and creamy.",
)
MEETING_TITLES = (
    "Team Weekly Sync",
    "Client Quarterly Review",
    "Project Kickoff Meeting",
    "Budget Planning Session",
    "Sales Strategy Discussion",
    "Product Roadmap Alignment",
    "Marketing Campaign Planning",
    "Development Sprint Review",
    "Customer Feedback Session",
    "Executive Board Meeting",
    "Financial Performance Analysis",
    "Product Launch Preparation",
    "Training Workshop for New Hires",
    "Vendor Negotiation Meeting",
    "Strategic Partnership Discussion",
    "Departmental Alignment Meeting",
    "Quality Assurance Review",
    "Project Status Update",
    "Employee Performance Evaluation",
    "Company All-Hands Meeting",
)
MEETING_BODIES = (
    "Meeting Notes:\n- Discussed project milestones\n- Assigned action items to team members\n"
    "- Reviewed budget allocation\n- Attended by {n} participants\n",
    "Meeting Minutes:\n- Presented sales performance metrics\n- Brainstormed marketing "
    "strategies\n- {n} attendees were present\n",
    "Meeting Recap:\n- Analyzed customer feedback\n- Scheduled follow-up meetings\n"
    "- {n} individuals attended\n",
    "Meeting Summary:\n- Reviewed quarterly goals\n- Evaluated team performance\n"
    "- {n} people were present\n",
    "Meeting Highlights:\n- Reviewed project timeline\n- Discussed resource allocation\n"
    "- {n} attendees participated\n",
)
_TODO_TITLES = (
    "Grocery List",
    "Meeting Agenda",
    "Personal Goals",
    "Work Tasks",
    "Home Improvement",
    "Study Notes",
    "Recipe Ideas",
    "Financial Plan",
    "Health Routine",
    "Travel Itinerary",
)
_TODO_BODIES = (
    "Buy milk, eggs, bread, and cereal from the grocery store.",
    "Discuss project updates, assign tasks, and review deadlines.",
    "Exercise 3 times a week, read 1 book per month, and save $500.",
    "Complete quarterly report, schedule team meeting, and follow up with clients.",
    "Paint the living room, fix leaky faucet, and organize closet.",
    "Review chapters 1-5 for upcoming exam, create flashcards, and practice problems.",
    "Try new pasta recipe with homemade sauce and garlic bread.",
    "Create monthly budget, track expenses, and set savings goals.",
    "Go for a 30-minute run, do yoga for flexibility, and meditate for relaxation.",
    "Book flights, reserve accommodations, and plan sightseeing activities.",
)
_IS_TODO_TITLES = (
    "Grocery List",
    "Meeting Agenda",
    "Project Proposal",
    "Daily Journal",
    "To-Do List",
    "Research Notes",
    "Travel Itinerary",
    "Recipe Collection",
    "Budget Spreadsheet",
    "Training Manual",
)
_IS_TODO_BODIES = (
    "Buy milk, eggs, bread, and cereal from the grocery store.",
    "Meeting with client at 2 PM to discuss project requirements.",
    "Call mom to wish her a happy birthday.",
    "Finish presentation slides for the team meeting tomorrow.",
    "Pick up dry cleaning from the tailor on Main Street.",
    "Review chapter 5 for upcoming history exam.",
    "Book flight tickets for vacation next month.",
    "Research new workout routines for fitness goals.",
    "Schedule dentist appointment for next week.",
    "Write thank you cards for colleagues who helped with the project.",
)
_USER_FOLDERS = (
    "Personal",
    "Work",
    "School",
    "Home",
    "Projects",
    "Ideas",
    "Recipes",
    "Finance",
    "Health",
    "Travel",
)


def _note(folder: str, title: str, body: str, is_todo: bool = False) -> dict[str, Any]:
    return {
        "folder": folder,
        "title": title,
        "body": body,
        "is_todo": is_todo,
        "todo_completed": False,
    }


def _noise_maker(relevant: list[str]) -> Callable[[random.Random], dict[str, Any]]:
    """``_generate_random_note``: a note from a relevant notebook 30% of the time, else from
    any; a to-do half the time, completed half of those."""

    def make(rng: random.Random) -> dict[str, Any]:
        folder = rng.choice(relevant) if rng.random() < 0.3 else rng.choice(list(NOISE_NOTES))
        title, body = rng.choice(NOISE_NOTES[folder])
        is_todo = rng.random() < 0.5
        return {
            "folder": folder,
            "title": title,
            "body": body,
            "is_todo": is_todo,
            "todo_completed": is_todo and rng.random() < 0.5,
        }

    return make


class _JoplinQuestion(AndroidWorldTask):
    """A question about Joplin notes, answered with ANSWER.

    ``params["notes"]`` are the seeded notes; the first is the one whose note screen holds
    the answer (``open_note``), else its notebook's list does (scrolled to its end)."""

    app = "joplin"
    answer_mode = "string"
    open_note: ClassVar[bool] = True

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        """The proto's exclusion conditions (all must hold for a noise note to be redrawn)."""
        return lambda row: False

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        relevant = [n["folder"] for n in self.params["notes"] if n["folder"] in NOISE_NOTES]
        make = _noise_maker(relevant or list(NOISE_NOTES))
        rows = mix_with_noise(rng, self.params["notes"], 100, make, self.excluded(self.params))
        data: JoplinData = phone.apps["joplin"]
        data.notes = []
        data.next_id = 1
        for row in rows:
            data.add(**row)

    def answer_text(self) -> str:
        return ", ".join(self.expected_answer())

    def _target_id(self, phone: PhoneState) -> int | None:
        first = self.params["notes"][0]
        data: JoplinData = phone.apps["joplin"]
        for n in data.notes:
            if (n.folder, n.title, n.body) == (first["folder"], first["title"], first["body"]):
                return n.id
        return None

    def _folder(self) -> str:
        return self.params["notes"][0]["folder"]

    def _in_folder(self, phone: PhoneState) -> bool:
        top = phone.screen
        return (
            phone.foreground == "joplin"
            and top is not None
            and top.name == "folder"
            and (top.arg == self._folder())
        )

    def _answer_in_view(self, phone: PhoneState) -> bool:
        if self.open_note:
            top = phone.screen
            target = self._target_id(phone)
            return (
                phone.foreground == "joplin"
                and top is not None
                and top.name == "note"
                and top.arg == str(target)
            )
        # the notebook's last note is on screen: every row has been scrolled past
        data: JoplinData = phone.apps["joplin"]
        notes = data.in_folder(self._folder())
        shown = visible_args(phone, _APP, "joplin.note", "folder")
        return self._in_folder(phone) and bool(notes) and str(notes[-1].id) in shown

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("notebook_opened", self._in_folder),
            milestone("answer_in_view", self._answer_in_view),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if phone.dialog is not None:
            return Action(ActionType.GOBACK)
        action = open_app(phone, "joplin", "Joplin")
        if action is not None:
            return action
        if self._answer_in_view(phone):
            return Action(ActionType.ANSWER, text=self.answer_text())
        top = phone.screen
        assert top is not None
        folder = self._folder()
        data: JoplinData = phone.apps["joplin"]
        if phone.focus or (top.name == "folder" and top.arg != folder) or top.name == "note":
            return Action(ActionType.GOBACK)
        if top.name == "main":
            return seek(screen, "joplin.folder", folder, data.folders())
        if self.open_note:
            target = str(self._target_id(phone))
            order = [str(n.id) for n in data.in_folder(folder)]
            return seek(screen, "joplin.note", target, order)
        return Action(ActionType.SCROLL, direction="down")


@register
class NotesRecipeIngredientCount(_JoplinQuestion):
    """The quantity of an ingredient in a recipe note of the Recipes notebook."""

    name = "NotesRecipeIngredientCount"
    template = (
        "What quantity of {ingredient} do I need for the recipe '{title}' in the Joplin app? "
        "Express your answer in the format <amount> <unit> where both the amount and unit "
        "exactly match the format in the recipe."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        title, quantity = rng.choice(_RECIPE_TITLES), rng.choice(_QUANTITIES)
        ingredient = rng.choice(_INGREDIENTS)
        body = rng.choice(_RECIPE_BODIES).format(item=f"{quantity} {ingredient}")
        return {
            "title": title,
            "ingredient": ingredient,
            "ingredient_quantity": quantity,
            "notes": [_note("Recipes", title, body)],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        title = params["title"].lower()
        return lambda row: title in row["title"].lower()

    def expected_answer(self) -> list[str]:
        return [self.params["ingredient_quantity"]]


@register
class NotesMeetingAttendeeCount(_JoplinQuestion):
    """How many attended a meeting, from its note in the Meeting Notes notebook."""

    name = "NotesMeetingAttendeeCount"
    answer_mode = "number"
    template = (
        "How many attendees were present in the meeting titled '{title}' in the Joplin app? "
        "Express your answer as just a single number."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        title, count = rng.choice(MEETING_TITLES), rng.randrange(5, 105, 5)
        body = rng.choice(MEETING_BODIES).format(n=count)
        return {
            "title": title,
            "attendee_count": count,
            "notes": [_note("Meeting Notes", title, body)],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        title = params["title"].lower()
        return lambda row: title in row["title"].lower()

    def expected_answer(self) -> list[str]:
        return [str(self.params["attendee_count"])]


@register
class NotesIsTodo(_JoplinQuestion):
    """Whether a note is a to-do ("True"/"False"); no other note has its title."""

    name = "NotesIsTodo"
    template = (
        "Is the note titled '{title}' in the Joplin app marked as a todo item? Respond with "
        "either 'True' if it is a todo or 'False' if not."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        title, is_todo = rng.choice(_IS_TODO_TITLES), rng.random() < 0.5
        folder, body = rng.choice(_USER_FOLDERS), rng.choice(_IS_TODO_BODIES)
        return {
            "title": title,
            "is_todo": str(is_todo),
            "notes": [_note(folder, title, body, is_todo)],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        title = params["title"]
        return lambda row: row["title"] == title

    def expected_answer(self) -> list[str]:
        return [self.params["is_todo"]]


@register
class NotesTodoItemCount(_JoplinQuestion):
    """How many to-dos a notebook holds (no random note there is a to-do).

    Adapted: AndroidWorld always seeds 3, so its answer is always 3; here 2-5 are seeded so
    the count has to be read off the list."""

    name = "NotesTodoItemCount"
    answer_mode = "number"
    open_note = False
    template = (
        "How many to-dos do I have in the '{folder}' folder in the Joplin app? Express your "
        "answer as just a single number."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        folder, n = rng.choice(_USER_FOLDERS), rng.randint(2, 5)
        titles = rng.sample(_TODO_TITLES, n)
        bodies = rng.sample(_TODO_BODIES, n)
        return {
            "folder": folder,
            "notes": [_note(folder, t, b, True) for t, b in zip(titles, bodies, strict=True)],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        folder = params["folder"]
        return lambda row: row["is_todo"] and row["folder"] == folder

    def expected_answer(self) -> list[str]:
        return [str(len(self.params["notes"]))]
