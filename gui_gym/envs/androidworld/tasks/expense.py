"""Pro Expense tasks (AndroidWorld ``task_evals/single/expense.py``).

The checks follow AndroidWorld's ``sqlite_validators`` on the ``expense`` table (see
:mod:`~gui_gym.envs.androidworld.tasks.table`): an *add* task needs every target row present
(name and note fuzzy, amount in cents and category exact), exactly that many new rows, and
every row that was there before unchanged; a *delete* task needs the target rows gone, every
other row unchanged and nothing added.
"""

from __future__ import annotations

import random
from typing import Any

from gui_gym.core.actions import Action
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.expense import (
    CATEGORIES,
    Expense,
    ExpenseData,
    parse_amount,
)
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    fuzzy_match,
    reach,
    register,
    type_into,
)
from gui_gym.envs.androidworld.tasks.table import (
    TableAddFromNoteTask,
    TableAddFromPictureTask,
    TableAddTask,
    TableDeleteDuplicatesTask,
    TableDeleteTask,
    TableTask,
    draw_distinct,
)

__all__ = ["EXPENSE_NAMES", "EXPENSE_NOTES", "random_expense"]

EXPENSE_NAMES: dict[str, tuple[str, ...]] = {
    "Others": (
        "Emergency Repairs",
        "Pet Supplies",
        "Pet Care",
        "Household Items",
        "Stationery",
        "Unexpected Expenses",
        "Miscellaneous Gifts",
        "Subscriptions",
        "Membership Fees",
        "Legal Fees",
    ),
    "Income": (
        "Salary",
        "Freelance Payment",
        "Bonus",
        "Dividends",
        "Interest Income",
        "Rental Income",
        "Capital Gains",
        "Reimbursements",
        "Side Business",
        "Consulting Fees",
    ),
    "Food": (
        "Restaurant Meal",
        "Groceries",
        "Coffee",
        "Fast Food",
        "Fine Dining",
        "Bakery Items",
        "Snacks",
        "Food Delivery",
        "Specialty Foods",
        "Dining Out",
    ),
    "Housing": (
        "Rent Payment",
        "Mortgage",
        "Home Repairs",
        "Utilities",
        "Property Taxes",
        "Home Insurance",
        "Furnishing",
        "Cleaning Services",
        "Landscaping",
        "Pest Control",
    ),
    "Social": (
        "Dinner Party",
        "Gift for Friend",
        "Club Membership",
        "Wedding Gift",
        "Charity Donations",
        "Birthday Present",
        "Social Club Dues",
        "Event Tickets",
        "Night Out",
        "Party Supplies",
    ),
    "Entertainment": (
        "Concert Tickets",
        "Movie Night",
        "Theater Show",
        "Streaming Services",
        "Video Games",
        "Books",
        "Magazines",
        "Hobbies",
        "Museum Tickets",
        "Amusement Park",
    ),
    "Transportation": (
        "Taxi Fare",
        "Public Transit Pass",
        "Gas",
        "Parking Fees",
        "Car Maintenance",
        "Bike Repairs",
        "Car Insurance",
        "Public Transit",
        "Flight Tickets",
        "Ride-Sharing",
    ),
    "Clothes": (
        "New Jacket",
        "Shirt Purchase",
        "Shoes",
        "Dress",
        "Jeans",
        "Accessories",
        "Sportswear",
        "Undergarments",
        "Tailoring Services",
        "Laundry",
    ),
    "Health Care": (
        "Doctor Visits",
        "Medications",
        "Health Insurance",
        "Dental Care",
        "Eyecare",
        "Wellness Products",
        "Gym Membership",
        "Therapy Sessions",
        "Medical Tests",
    ),
    "Education": (
        "Tuition Fees",
        "School Supplies",
        "Textbooks",
        "Online Courses",
        "Seminars",
        "Workshops",
        "Educational Software",
        "Library Fees",
        "ProDev",
        "Tutoring Services",
    ),
    "Donation": (
        "Charity",
        "Fundraising Events",
        "Sponsorships",
        "Non-Profit Support",
        "Crowdfunding",
        "Religious",
        "Political",
        "Educational",
        "Medical Research",
        "Environmental",
    ),
}
"""Expense names per category (AndroidWorld's ``_EXPENSE_NAMES``)."""

EXPENSE_NOTES = (
    "Paid by card",
    "Urgent",
    "Monthly recurring",
    "Want to have",
    "A need",
    "Remember to transfer funds",
    "I may repeat this",
)
"""AndroidWorld's ``_NOTES``."""


def random_expense(rng: random.Random) -> dict[str, Any]:
    """A realistic row: a random category, a name of that category, 1000-50000 cents, one of
    the notes, and a day of October 1-15 2023 (AndroidWorld's ``_generate_expense``)."""
    category = rng.choice(list(CATEGORIES))
    return {
        "name": rng.choice(EXPENSE_NAMES[CATEGORIES[category]]),
        "amount": rng.randint(1000, 50000),
        "category": category,
        "note": rng.choice(EXPENSE_NOTES),
        "date": f"2023-10-{rng.randint(1, 15):02d}",
    }


def _dollars_text(row: dict[str, Any]) -> str:
    return f"${row['amount'] / 100}"  # AndroidWorld's ``amount_dollars`` ("$123.4")


# -- templates -------------------------------------------------------------------------------


class _ExpenseTask(TableTask):
    """Pro Expense's ``expense`` table; selection mode is what Back leaves first."""

    app = "expense"
    app_title = "Pro Expense"
    row_type = Expense
    rows_attr = "expenses"
    row_noun = "expense"
    key_field = "name"
    random_row = staticmethod(random_expense)

    def _reset_list(self, data: ExpenseData) -> None:
        data.selected = []

    def _busy(self, data: ExpenseData) -> bool:
        return bool(data.selected)

    def _row_opened(self, phone: PhoneState, wanted: set[str]) -> bool:
        selected = any(str(i) in wanted for i in phone.apps["expense"].selected)
        return selected or super()._row_opened(phone, wanted)


class _ExpenseAdd(_ExpenseTask, TableAddTask):
    template = "Add the following expenses into the pro expense:\n{expenses}"
    text_fields = (
        ("name", lambda r: r["name"]),
        ("amount_dollars", _dollars_text),
        ("category_name", lambda r: CATEGORIES[r["category"]]),
        ("note", lambda r: r["note"]),
    )

    @staticmethod
    def _same(e: Expense, t: dict[str, Any]) -> bool:
        return (
            e.amount == t["amount"]
            and e.category == t["category"]
            and fuzzy_match(e.name, t["name"])
            and fuzzy_match(e.note, t["note"])
        )

    def _form_ready(self, phone: PhoneState) -> bool:
        form = phone.forms.get("expense", {})
        if phone.screen_name != "expense/edit":
            return False
        t = self.params["targets"][0]
        return (
            parse_amount(form.get("amount", "")) == t["amount"]
            and form.get("category") == str(t["category"])
            and fuzzy_match(form.get("name", ""), t["name"])
            and fuzzy_match(form.get("note", ""), t["note"])
        )

    def _editor_step(self, phone: PhoneState, screen: UITree, t: dict[str, Any]) -> Action | None:
        current = phone.screen
        assert current is not None
        if current.name == "category":
            return reach(screen, handler="expense.set_category", handler_arg=str(t["category"]))
        if current.name != "edit" or current.arg:
            return None
        form = phone.forms.get("expense", {})
        for name, value in (("name", t["name"]), ("amount", f"{t['amount'] / 100:.2f}")):
            action = type_into(screen, name, value, form)
            if action is not None:
                return action
        if form.get("category") != str(t["category"]):
            return reach(screen, handler="expense.pick_category")
        action = type_into(screen, "note", t["note"], form)
        if action is not None:
            return action
        return reach(screen, handler="expense.save")


@register
class ExpenseAddSingle(_ExpenseAdd):
    """Add one expense given as CSV or a text block; 10 other expenses are already there."""

    name = "ExpenseAddSingle"
    complexity = 1.2
    n_rows = 1


@register
class ExpenseAddMultiple(_ExpenseAdd):
    """Add several expenses. Adapted: 2 expenses instead of AndroidWorld's 3, so the scripted
    expert (about 8 actions per expense) fits the 20-step episode."""

    name = "ExpenseAddMultiple"
    complexity = 6
    n_rows = 2


@register
class ExpenseAddMultipleFromMarkor(TableAddFromNoteTask, _ExpenseAdd):
    """Log the two reimbursable transactions of ``my_expenses.txt`` (CSV, in Markor) among
    100 others that are already logged.

    As in AndroidWorld, the note lists the targets with ". Reimbursable." added to their
    note, while the check compares the saved note with the target's original note (fuzzy,
    ratio 0.9), so the marker must not be copied into the expense."""

    name = "ExpenseAddMultipleFromMarkor"
    complexity = 6
    n_rows = 2
    n_noise = 100
    source_name = "my_expenses.txt"
    template = (
        "Go through the transactions in my_expenses.txt in Markor. Log the reimbursable "
        "transactions in the pro expense."
    )

    @classmethod
    def source_rows(cls, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [dict(t, note=f"{t['note']}. Reimbursable.") for t in params["targets"]]

    @classmethod
    def source_format(cls, params: dict[str, Any]) -> str:
        return "csv"


@register
class ExpenseAddMultipleFromGallery(TableAddFromPictureTask, _ExpenseAdd):
    """Log the expenses that the picture ``expenses.jpg`` shows (only as pixels: a vision
    task); ten older pictures show the 10 expenses already logged. Adapted: 2 expenses
    instead of AndroidWorld's 3, so the expert fits 20 steps."""

    name = "ExpenseAddMultipleFromGallery"
    complexity = 6
    n_rows = 2
    n_noise = 10
    noise_pictures = 10
    source_name = "expenses.jpg"
    template = "Add the expenses from expenses.jpg in Simple Gallery Pro to pro expense."


class _ExpenseDelete(_ExpenseTask, TableDeleteTask):
    """Delete named expenses; every name in the list is unique."""

    template = "Delete the following expenses from pro expense: {names}."


@register
class ExpenseDeleteSingle(_ExpenseDelete):
    """Delete one expense. Adapted: 4-7 other expenses are listed too (AndroidWorld has only
    the target), so deleting everything fails."""

    name = "ExpenseDeleteSingle"
    complexity = 1
    n_rows = 1
    n_noise = (4, 7)


@register
class ExpenseDeleteMultiple(_ExpenseDelete):
    """Delete three expenses. Adapted: 4-7 other expenses are listed too (AndroidWorld has
    only the targets), so deleting everything fails."""

    name = "ExpenseDeleteMultiple"
    complexity = 2
    n_rows = 3
    n_noise = (4, 7)


@register
class ExpenseDeleteMultiple2(_ExpenseDelete):
    """Delete three expenses from a long list (50 others): the agent has to scroll."""

    name = "ExpenseDeleteMultiple2"
    complexity = 3.4
    n_rows = 3
    n_noise = (50, 50)


class _ExpenseDeleteDuplicates(_ExpenseTask, TableDeleteDuplicatesTask):
    """Two identical rows; exactly one of them must go and nothing else may change."""

    complexity = 1.2
    template = (
        "Delete all but one of any expenses in pro expense that are exact duplicates, "
        "ensuring at least one instance of each unique expense remains."
    )

    @classmethod
    def _noise(cls, rng: random.Random, target: dict[str, Any]) -> list[dict[str, Any]]:
        return draw_distinct(rng, 5, random_expense, taken=[target])

    @classmethod
    def _draw(cls, rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        target = random_expense(rng)
        return target, cls._noise(rng, target)


@register
class ExpenseDeleteDuplicates(_ExpenseDeleteDuplicates):
    """One duplicated expense among 5 others."""

    name = "ExpenseDeleteDuplicates"


@register
class ExpenseDeleteDuplicates2(_ExpenseDeleteDuplicates):
    """One duplicated expense among 40 others, 3 of them near-copies (same name, category and
    note; amount 0.50-9.99 dollars higher, another day)."""

    name = "ExpenseDeleteDuplicates2"
    complexity = 1.8

    @classmethod
    def _noise(cls, rng: random.Random, target: dict[str, Any]) -> list[dict[str, Any]]:
        noise = draw_distinct(rng, 37, random_expense, taken=[target])
        variants = [
            dict(target, amount=target["amount"] + bump, date=f"2023-10-{rng.randint(1, 15):02d}")
            for bump in rng.sample(range(50, 1000), 3)
        ]
        return noise + [v for v in variants if v not in noise]
