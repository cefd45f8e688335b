"""Pro Expense tasks (AndroidWorld ``task_evals/single/expense.py``).

The checks follow AndroidWorld's ``sqlite_validators`` on the ``expense`` table, read from the
app's rows instead of SQLite: an *add* task needs every target row present (name and note
fuzzy, amount in cents and category exact), exactly that many new rows, and every row that was
there before unchanged; a *delete* task needs the target rows gone, every other row unchanged
and nothing added. All starting rows, with their ids, are drawn into the parameters, so a check
never depends on anything but the parameters and the phone state.

This module also holds the list-navigation helpers the Broccoli templates share.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.expense import (
    CATEGORIES,
    Expense,
    ExpenseData,
    parse_amount,
)
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    StateCheck,
    fuzzy_match,
    open_app,
    reach,
    register,
    tap,
    type_into,
)

__all__ = [
    "EXPENSE_NAMES",
    "EXPENSE_NOTES",
    "draw_distinct",
    "match_all",
    "random_expense",
    "rows_as_text",
    "seek_row",
]

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

_APP_NAME = "pro expense"


# -- shared generators and helpers ------------------------------------------------------------


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


def draw_distinct(
    rng: random.Random,
    n: int,
    make: Callable[[random.Random], dict[str, Any]],
    keep: Callable[[dict[str, Any]], bool] = lambda row: True,
    key: Callable[[dict[str, Any]], Any] | None = None,
    taken: Sequence[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """``n`` rows from ``make`` that pass ``keep`` and differ from each other and from
    ``taken`` by ``key`` (the whole row by default), as ``get_random_items`` without
    replacement does."""
    keyfn = key or (lambda row: tuple(sorted(row.items())))
    seen = {keyfn(row) for row in taken}
    out: list[dict[str, Any]] = []
    for _ in range(20_000):
        if len(out) == n:
            return out
        row = make(rng)
        k = keyfn(row)
        if k in seen or not keep(row):
            continue
        seen.add(k)
        out.append(row)
    if len(out) == n:
        return out
    raise ValueError(f"could not draw {n} distinct rows")


def with_ids(rng: random.Random, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with ids 1..n given in a shuffled order (the order they were inserted)."""
    order = list(range(len(rows)))
    rng.shuffle(order)
    out = [dict(rows[i], id=k + 1) for k, i in enumerate(order)]
    return sorted(out, key=lambda row: row["id"])


def rows_as_text(
    rows: Sequence[dict[str, Any]],
    fields: Sequence[tuple[str, Callable[[dict[str, Any]], str]]],
    fmt: str,
    kind: str,
) -> str:
    """AndroidWorld's ``get_text_representation_of_rows``: ``csv`` (``|``-separated with a
    header) or ``text_block`` (``Kind: <first field>`` then `` field: value`` lines)."""
    if fmt == "csv":
        header = "|".join(name for name, _ in fields)
        return header + "\n" + "\n".join("|".join(get(r) for _, get in fields) for r in rows)
    blocks = []
    for r in rows:
        (_, first), *rest = fields
        text = f"{kind}: {first(r)}\n"
        for name, get in rest:
            text += f" {name}: {get(r)}\n"
        blocks.append(text)
    return "\n".join(blocks)


def match_all(new: Sequence[Any], targets: Sequence[Any], same: Callable[[Any, Any], bool]) -> int:
    """How many targets a one-to-one greedy matching pairs with ``new`` rows."""
    free = list(new)
    matched = 0
    for t in targets:
        for i, row in enumerate(free):
            if same(row, t):
                del free[i]
                matched += 1
                break
    return matched


def seek_row(screen: UITree, handler: str, target: str, order: Sequence[str]) -> Action:
    """CLICK the list row ``target`` (a handler arg) when on screen, else SCROLL toward it,
    using ``order`` (the list's handler args top to bottom) to pick the direction."""
    element = screen.find_one(handler=handler, handler_arg=target)
    if element is not None:
        return Action(ActionType.CLICK, index=element.index)
    rank = {arg: i for i, arg in enumerate(order)}
    shown = [rank[e.handler_arg] for e in screen.find(handler=handler) if e.handler_arg in rank]
    want = rank.get(target)
    if shown and want is not None and want < min(shown) and screen.can_scroll_up:
        return Action(ActionType.SCROLL, direction="up")
    if screen.can_scroll_down:
        return Action(ActionType.SCROLL, direction="down")
    if screen.can_scroll_up:
        return Action(ActionType.SCROLL, direction="up")
    return Action(ActionType.GOBACK)


def _dollars_text(row: dict[str, Any]) -> str:
    return f"${row['amount'] / 100}"  # AndroidWorld's ``amount_dollars`` ("$123.4")


_EXPENSE_FIELDS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("name", lambda r: r["name"]),
    ("amount_dollars", _dollars_text),
    ("category_name", lambda r: CATEGORIES[r["category"]]),
    ("note", lambda r: r["note"]),
)


# -- templates -------------------------------------------------------------------------------


class _ExpenseTask(AndroidWorldTask):
    """Writes ``params["rows"]`` (with their ids) into Pro Expense at the start."""

    app = "expense"

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        data: ExpenseData = phone.apps["expense"]
        data.expenses = [Expense(**row) for row in self.params["rows"]]
        data.next_id = max((e.id for e in data.expenses), default=0) + 1
        data.selected = []

    @functools.cached_property
    def _initial(self) -> dict[int, Expense]:
        return {row["id"]: Expense(**row) for row in self.params["rows"]}

    def _others_unchanged(self, data: ExpenseData, removed: Sequence[int]) -> bool:
        """Every starting row except ``removed`` is still there, unchanged."""
        current = {e.id: e for e in data.expenses}
        gone = set(removed)
        return all(
            current.get(i) == row for i, row in self._initial.items() if i not in gone
        ) and not any(i in current for i in gone)

    def _opened(self) -> tuple[str, StateCheck]:
        return ("expense_opened", StateCheck("expense_opened", lambda p: "expense" in p.opened))


class _ExpenseAdd(_ExpenseTask):
    n_rows: ClassVar[int] = 1
    n_noise: ClassVar[int] = 10
    template = "Add the following expenses into the pro expense:\n{expenses}"

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        targets = draw_distinct(rng, cls.n_rows, random_expense, key=lambda r: r["name"])
        names = {t["name"] for t in targets}
        noise = draw_distinct(
            rng, cls.n_noise, random_expense, keep=lambda r: r["name"] not in names
        )
        fmt = rng.choice(("csv", "text_block"))
        return {
            "expenses": rows_as_text(targets, _EXPENSE_FIELDS, fmt, "Expense"),
            "text_representation_type": fmt,
            "targets": targets,
            "rows": with_ids(rng, noise),
        }

    @staticmethod
    def _same(e: Expense, t: dict[str, Any]) -> bool:
        return (
            e.amount == t["amount"]
            and e.category == t["category"]
            and fuzzy_match(e.name, t["name"])
            and fuzzy_match(e.note, t["note"])
        )

    def _new_rows(self, data: ExpenseData) -> list[Expense]:
        return [e for e in data.expenses if e.id not in self._initial]

    def _matched(self, data: ExpenseData) -> int:
        return match_all(self._new_rows(data), self.params["targets"], self._same)

    def score(self, phone: PhoneState) -> float:
        data: ExpenseData = phone.apps["expense"]
        targets = self.params["targets"]
        return float(
            self._others_unchanged(data, ())
            and len(self._new_rows(data)) == len(targets)
            and self._matched(data) == len(targets)
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

    def milestone_checks(self):
        n = len(self.params["targets"])
        checks = [
            self._opened(),
            (
                "editor_opened",
                StateCheck("editor_opened", lambda p: p.screen_name == "expense/edit"),
            ),
        ]
        if n == 1:
            checks.append(("fields_entered", StateCheck("fields_entered", self._form_ready)))
        else:
            checks.append(
                (
                    "first_expense_saved",
                    StateCheck(
                        "first_expense_saved", lambda p: self._matched(p.apps["expense"]) >= 1
                    ),
                )
            )
        checks.append(
            ("expenses_saved", StateCheck("expenses_saved", lambda p: self.score(p) >= 1.0))
        )
        return checks

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        data: ExpenseData = phone.apps["expense"]
        free = self._new_rows(data)
        pending = []
        for t in self.params["targets"]:
            hit = next((e for e in free if self._same(e, t)), None)
            if hit is None:
                pending.append(t)
            else:
                free.remove(hit)
        if not pending:
            return Action(ActionType.DONE)
        t = pending[0]
        if phone.dialog is not None:
            return Action(ActionType.GOBACK)
        action = open_app(phone, "expense", "Pro Expense")
        if action is not None:
            return action
        current = phone.screen
        assert current is not None
        if current.name == "category":
            return reach(screen, handler="expense.set_category", handler_arg=str(t["category"]))
        if current.name == "edit" and not current.arg:
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
        if current.name != "main" or data.selected or phone.focus:
            return Action(ActionType.GOBACK)
        return reach(screen, handler="expense.new")


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


class _ExpenseDelete(_ExpenseTask):
    """Delete named expenses; every name in the list is unique."""

    n_rows: ClassVar[int] = 1
    n_noise: ClassVar[tuple[int, int]] = (0, 0)
    template = "Delete the following expenses from pro expense: {names}."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        n_noise = rng.randint(*cls.n_noise)
        rows = draw_distinct(rng, cls.n_rows + n_noise, random_expense, key=lambda r: r["name"])
        targets, noise = rows[: cls.n_rows], rows[cls.n_rows :]
        all_rows = with_ids(rng, targets + noise)
        target_names = [t["name"] for t in targets]
        return {
            "names": ", ".join(target_names),
            "rows": all_rows,
            "targets": [r["id"] for r in all_rows if r["name"] in target_names],
        }

    def _to_delete(self, data: ExpenseData) -> list[int]:
        """Target ids still present, in list order."""
        wanted = set(self.params["targets"])
        return [e.id for e in data.ordered() if e.id in wanted]

    def score(self, phone: PhoneState) -> float:
        data: ExpenseData = phone.apps["expense"]
        targets = self.params["targets"]
        return float(
            self._others_unchanged(data, targets)
            and len(data.expenses) == len(self._initial) - len(targets)
        )

    def _target_opened(self, p: PhoneState) -> bool:
        screen = p.stacks.get("expense", [])
        wanted = {str(i) for i in self.params["targets"]}
        on_detail = bool(screen) and screen[-1].name == "detail" and screen[-1].arg in wanted
        return on_detail or any(str(i) in wanted for i in p.apps["expense"].selected)

    def milestone_checks(self):
        targets = set(self.params["targets"])
        checks = [
            self._opened(),
            ("target_opened", StateCheck("target_opened", self._target_opened)),
        ]
        if len(targets) > 1:
            checks.append(
                (
                    "first_expense_deleted",
                    StateCheck(
                        "first_expense_deleted",
                        lambda p: any(p.apps["expense"].get(i) is None for i in targets),
                    ),
                )
            )
        checks.append(
            ("expenses_deleted", StateCheck("expenses_deleted", lambda p: self.score(p) >= 1.0))
        )
        return checks

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        data: ExpenseData = phone.apps["expense"]
        return delete_rows_expert(
            phone,
            screen,
            self._to_delete(data),
            app="expense",
            title="Pro Expense",
            order=[str(e.id) for e in data.ordered()],
            busy=bool(data.selected),
        )


def delete_rows_expert(
    phone: PhoneState,
    screen: UITree,
    to_delete: Sequence[int],
    app: str,
    title: str,
    order: Sequence[str],
    busy: bool = False,
) -> Action:
    """Expert path shared by the delete templates of list apps with a ``main`` list of
    ``<app>.open`` rows, a ``detail`` screen with a ``<app>.delete`` button and a confirm
    dialog (``<app>.confirm_delete``): open the first row to delete, delete, confirm."""
    if not to_delete:
        return Action(ActionType.DONE)
    if phone.dialog is not None:
        confirm = next(
            (b for b in phone.dialog.buttons if b[1] == f"{app}.confirm_delete"),
            None,
        )
        if confirm is not None and confirm[2].isdigit() and int(confirm[2]) in to_delete:
            action = tap(screen, handler=f"{app}.confirm_delete")
            if action is not None:
                return action
        return Action(ActionType.GOBACK)
    action = open_app(phone, app, title)
    if action is not None:
        return action
    current = phone.screen
    assert current is not None
    if phone.focus:
        return Action(ActionType.GOBACK)
    if current.name == "detail" and current.arg.isdigit() and int(current.arg) in to_delete:
        return reach(screen, handler=f"{app}.delete", handler_arg=current.arg)
    if current.name != "main" or busy:
        return Action(ActionType.GOBACK)
    return seek_row(screen, f"{app}.open", str(to_delete[0]), order)


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


class _ExpenseDeleteDuplicates(_ExpenseTask):
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
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        target = random_expense(rng)
        rows = with_ids(rng, [target, dict(target), *cls._noise(rng, target)])
        return {
            "rows": rows,
            "targets": [r["id"] for r in rows if r == dict(target, id=r["id"])],
        }

    def _present(self, data: ExpenseData) -> list[int]:
        wanted = set(self.params["targets"])
        return [e.id for e in data.ordered() if e.id in wanted]

    def score(self, phone: PhoneState) -> float:
        data: ExpenseData = phone.apps["expense"]
        present = self._present(data)
        if len(present) != 1:
            return 0.0
        removed = [i for i in self.params["targets"] if i not in present]
        return float(
            self._others_unchanged(data, removed) and len(data.expenses) == len(self._initial) - 1
        )

    def milestone_checks(self):
        wanted = {str(i) for i in self.params["targets"]}

        def opened(p: PhoneState) -> bool:
            stack = p.stacks.get("expense", [])
            selected = any(str(i) in wanted for i in p.apps["expense"].selected)
            return selected or (
                bool(stack) and stack[-1].name == "detail" and stack[-1].arg in wanted
            )

        return [
            self._opened(),
            ("duplicate_opened", StateCheck("duplicate_opened", opened)),
            (
                "duplicate_deleted",
                StateCheck("duplicate_deleted", lambda p: self.score(p) >= 1.0),
            ),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        data: ExpenseData = phone.apps["expense"]
        # a copy changed since the start (say, starred) is the one to delete
        present = sorted(self._present(data), key=lambda i: data.get(i) == self._initial[i])
        return delete_rows_expert(
            phone,
            screen,
            present[:1] if len(present) == 2 else [],
            app="expense",
            title="Pro Expense",
            order=[str(e.id) for e in data.ordered()],
            busy=bool(data.selected),
        )


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
