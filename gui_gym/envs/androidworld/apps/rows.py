"""Row storage shared by the simulated apps whose data is a table of immutable rows (Pro
Expense, Broccoli, Tasks, Simple Calendar Pro, Simple SMS Messenger, ...)."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

__all__ = ["ImmutableRow", "RowTable"]


class ImmutableRow:
    """Mixin of a frozen dataclass row: a deep copy (forking the phone) shares the row, since
    it never changes; edits replace it."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self


R = TypeVar("R")


class RowTable(Generic[R]):
    """Mixin of an app's data keeping rows with integer ids in one list (``rows_attr``) and
    the next free id in ``next_id``: look-up by id and insertion with a fresh id."""

    rows_attr: ClassVar[str]
    """The dataclass field holding the rows."""
    row_type: ClassVar[type]
    """The row dataclass, built as ``row_type(id, **fields)``."""
    next_id: int

    def get(self, row_id: int) -> R | None:
        """The row with id ``row_id``, or None."""
        return next((r for r in getattr(self, self.rows_attr) if r.id == row_id), None)

    def add(self, **fields: Any) -> R:
        """Append a row with a fresh id."""
        row = self.row_type(self.next_id, **fields)
        self.next_id += 1
        getattr(self, self.rows_attr).append(row)
        return row
