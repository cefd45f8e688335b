"""Pro Expense (``com.arduia.expense``): an expense list, an add/edit editor with a category
picker, expense details, and deletion (one at a time with a confirm dialog, or several at once
after long-pressing rows to select them).

Amounts are kept in cents, as in the app's ``accounting.db`` (``amount`` column), and shown as
dollars. Rows are immutable; edits replace a row, so copying the phone state stays cheap.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import date, datetime

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.rows import ImmutableRow, RowTable
from gui_gym.envs.androidworld.phone import AppView, PhoneApp, PhoneState, Screen, icon

__all__ = [
    "CATEGORIES",
    "CATEGORY_IDS",
    "Expense",
    "ExpenseApp",
    "ExpenseData",
    "dollars",
    "parse_amount",
    "parse_day",
]

CATEGORIES: dict[int, str] = {
    1: "Others",
    2: "Income",
    3: "Food",
    4: "Housing",
    5: "Social",
    6: "Entertainment",
    7: "Transportation",
    8: "Clothes",
    9: "Health Care",
    10: "Education",
    11: "Donation",
}
"""Pro Expense's category ids and names (AndroidWorld's ``Expense.category_id_to_name``)."""
CATEGORY_IDS = {name: cid for cid, name in CATEGORIES.items()}

TODAY = "2023-10-15"
_DAY_FORMATS = ("%Y-%m-%d", "%b %d %Y", "%b %d, %Y", "%B %d %Y", "%B %d, %Y", "%m/%d/%Y")


def dollars(cents: int) -> str:
    """``12345`` -> ``"$123.45"``."""
    return f"${cents / 100:,.2f}"


def parse_amount(text: str) -> int | None:
    """Cents for a typed amount (``"$123.4"``, ``"1,234.50"``, ``"12"``), None if not a
    positive number."""
    cleaned = text.strip().replace("$", "").replace(",", "").strip()
    try:
        value = float(cleaned)
    except ValueError:
        return None
    if not value > 0 or value > 10_000_000:
        return None
    return round(value * 100)


def parse_day(text: str) -> str | None:
    """ISO ``YYYY-MM-DD`` for a typed date in a common format, else None."""
    text = text.strip()
    for fmt in _DAY_FORMATS:
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    return None


def _short_day(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d:%b} {d.day}, {d.year}"


@dataclass(frozen=True)
class Expense(ImmutableRow):
    """One row of the ``expense`` table (amount in cents, category by id, ISO date)."""

    id: int
    name: str
    amount: int
    category: int = 1
    note: str = ""
    date: str = TODAY

    @property
    def category_name(self) -> str:
        return CATEGORIES.get(self.category, "Others")

    @property
    def content(self) -> tuple[str, int, int, str, str]:
        """Everything but the id (what makes two rows duplicates)."""
        return (self.name, self.amount, self.category, self.note, self.date)


@dataclass
class ExpenseData(RowTable[Expense]):
    """The app's data: the rows, the next id, and the ids picked in selection mode."""

    rows_attr = "expenses"
    row_type = Expense

    expenses: list[Expense] = field(default_factory=list)
    next_id: int = 1
    selected: list[int] = field(default_factory=list)

    def ordered(self) -> list[Expense]:
        """Display order: newest first (ties: last added first)."""
        return sorted(self.expenses, key=lambda e: (e.date, e.id), reverse=True)


@functools.lru_cache(maxsize=4096)
def _row(e: Expense, selecting: bool, selected: bool) -> Block:
    """An expense's list row (rows are immutable, so they are cached)."""
    text = f"{e.name} · {dollars(e.amount)} · {e.category_name} · {_short_day(e.date)}"
    if e.note:
        text += f" · {e.note}"
    return Block(
        "listitem",
        text,
        resource_id="expense_row",
        clickable=True,
        long_clickable=True,
        checkable=selecting,
        checked=selected,
        selected=selected,
        handler="expense.open",
        handler_arg=str(e.id),
        gap=2,
    )


class ExpenseApp(PhoneApp):
    key = "expense"
    title = "Pro Expense"
    package = "com.arduia.expense"
    aliases = ("expense", "pro expense", "pro expense app", "expenses", "expense app")
    launcher_order = 40

    def initial_data(self) -> ExpenseData:
        return ExpenseData()

    # -- views ---------------------------------------------------------------------------------

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        data: ExpenseData = self.data(phone)
        if screen.name == "edit":
            return self._editor(phone, screen)
        if screen.name == "category":
            current = self.form(phone).get("category", "1")
            return AppView(
                "Choose category",
                [
                    Block(
                        "listitem",
                        name,
                        resource_id="category_row",
                        clickable=True,
                        checkable=True,
                        checked=str(cid) == current,
                        handler="expense.set_category",
                        handler_arg=str(cid),
                        gap=2,
                    )
                    for cid, name in CATEGORIES.items()
                ],
            )
        if screen.name == "detail":
            return self._detail(data, screen)
        return self._list(data)

    def _list(self, data: ExpenseData) -> AppView:
        selected = set(data.selected)
        selecting = bool(selected)
        rows = [_row(e, selecting, e.id in selected) for e in data.ordered()]
        if selecting:
            return AppView(
                f"{len(selected)} selected",
                rows,
                actions=[icon("Delete selected", "expense.delete_selected", "delete_selected")],
                back=True,
            )
        total = sum(e.amount for e in data.expenses if e.category != CATEGORY_IDS["Income"])
        content = [
            Block("heading", f"Total expenses: {dollars(total)}", resource_id="total"),
            *rows,
        ]
        if not rows:
            content.append(Block("text", "No expenses yet. Tap + to add one."))
        fab = icon("Add expense", "expense.new", "fab")
        return AppView("Pro Expense", content, fab=fab)

    def _detail(self, data: ExpenseData, screen: Screen) -> AppView:
        e = data.get(int(screen.arg))
        if e is None:
            return AppView("Expense", [Block("text", "This expense was deleted.")])
        return AppView(
            "Expense",
            [
                Block("heading", e.name, resource_id="expense_name"),
                Block("text", f"Amount: {dollars(e.amount)}", resource_id="expense_amount"),
                Block("text", f"Category: {e.category_name}", resource_id="expense_category"),
                Block("text", f"Date: {_short_day(e.date)}", resource_id="expense_date"),
                Block("text", f"Note: {e.note or '-'}", resource_id="expense_note"),
            ],
            actions=[
                icon("Edit", "expense.edit", "edit", screen.arg),
                icon("Delete", "expense.delete", "delete", screen.arg),
            ],
        )

    def _editor(self, phone: PhoneState, screen: Screen) -> AppView:
        form = self.form(phone)
        category = CATEGORIES.get(int(form.get("category", "1") or 1), "Others")
        return AppView(
            "Edit expense" if screen.arg else "Add expense",
            [
                self.field("name", "Name", phone),
                self.field("amount", "Amount", phone),
                Block(
                    "button",
                    category,
                    description="Category",
                    resource_id="expense_category",
                    clickable=True,
                    handler="expense.pick_category",
                    height=40,
                ),
                self.field("date", "Date", phone),
                self.field("note", "Note", phone),
            ],
            actions=[icon("Save", "expense.save", "save")],
        )

    # -- navigation ----------------------------------------------------------------------------

    def pop(self, phone: PhoneState) -> None:
        data: ExpenseData = self.data(phone)
        stack = phone.stacks.get(self.key, [])
        if data.selected and stack and stack[-1].name == "main":
            data.selected = []  # back leaves selection mode first
            phone.focus = ""
            return
        super().pop(phone)

    # -- handlers ------------------------------------------------------------------------------

    def on_click_new(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "edit", "", form={"category": "1", "date": TODAY})

    def on_click_open(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: ExpenseData = self.data(phone)
        expense_id = int(element.handler_arg)
        if data.selected:
            self._toggle(data, expense_id)
        else:
            self.push(phone, "detail", element.handler_arg)

    def on_long_click_open(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._toggle(self.data(phone), int(element.handler_arg))

    @staticmethod
    def _toggle(data: ExpenseData, expense_id: int) -> None:
        if expense_id in data.selected:
            data.selected = [i for i in data.selected if i != expense_id]
        else:
            data.selected = [*data.selected, expense_id]

    def on_click_edit(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        e = self.data(phone).get(int(element.handler_arg))
        if e is None:
            raise InvalidAction("this expense no longer exists")
        self.push(
            phone,
            "edit",
            element.handler_arg,
            form={
                "name": e.name,
                "amount": f"{e.amount / 100:.2f}",
                "category": str(e.category),
                "date": e.date,
                "note": e.note,
            },
        )

    def on_click_pick_category(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "category")

    def on_click_set_category(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.form(phone)["category"] = element.handler_arg
        self.pop(phone)

    def on_click_save(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        form = self.form(phone)
        name = form.get("name", "").strip()
        if not name:
            raise InvalidAction("enter a name before saving")
        amount = parse_amount(form.get("amount", ""))
        if amount is None:
            raise InvalidAction("enter the amount as a positive number, e.g. 12.50")
        day = parse_day(form.get("date", "") or TODAY)
        if day is None:
            raise InvalidAction("enter the date as YYYY-MM-DD")
        fields = {
            "name": name,
            "amount": amount,
            "category": int(form.get("category", "1") or 1),
            "note": form.get("note", "").strip(),
            "date": day,
        }
        data: ExpenseData = self.data(phone)
        screen = phone.stacks[self.key][-1]
        if screen.arg:
            expense_id = int(screen.arg)
            data.expenses = [
                Expense(expense_id, **fields) if e.id == expense_id else e for e in data.expenses
            ]
        else:
            data.add(**fields)
        phone.forms[self.key] = {}
        self.pop(phone)
        phone.toast = "Expense saved"

    def on_click_delete(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.ask_delete(
            phone,
            "Delete expense?",
            "This expense will be deleted permanently.",
            element.handler_arg,
        )

    def on_click_delete_selected(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        count = len(self.data(phone).selected)
        self.ask_delete(
            phone,
            f"Delete {count} expense{'s' if count != 1 else ''}?",
            "The selected expenses will be deleted permanently.",
            "",
            handler="confirm_delete_selected",
        )

    def on_click_confirm_delete(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        data: ExpenseData = self.data(phone)
        expense_id = int(element.handler_arg)
        data.expenses = [e for e in data.expenses if e.id != expense_id]
        data.selected = [i for i in data.selected if i != expense_id]
        phone.dialog = None
        self.pop(phone)
        phone.toast = "Expense deleted"

    def on_click_confirm_delete_selected(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        data: ExpenseData = self.data(phone)
        gone = set(data.selected)
        data.expenses = [e for e in data.expenses if e.id not in gone]
        data.selected = []
        phone.dialog = None
        phone.toast = f"{len(gone)} deleted"
