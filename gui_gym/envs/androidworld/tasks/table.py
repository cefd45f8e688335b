"""Templates over an app's table of rows (Pro Expense's ``expense``, Broccoli's ``recipes``).

The checks follow AndroidWorld's ``sqlite_validators``, read from the app's rows instead of
SQLite: an *add* task needs every target row present, exactly that many new rows, and every
row that was there before unchanged; a *delete* task needs the target rows gone, every other
row unchanged and nothing added. All starting rows, with their ids, are drawn into the
parameters, so a check never depends on anything but the parameters and the phone state.

An app plugs in with a subclass of :class:`TableTask` naming its row type, its data
attribute and its row generator; the row-drawing and list-navigation helpers below are shared
by its templates.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    milestone,
    open_app,
    reach,
    seek,
    tap,
)

__all__ = [
    "TableAddFromNoteTask",
    "TableAddFromPictureTask",
    "TableAddFromSourceTask",
    "TableAddTask",
    "TableDeleteDuplicatesTask",
    "TableDeleteTask",
    "TableTask",
    "delete_rows_expert",
    "draw_distinct",
    "match_all",
    "picture_lines",
    "rows_as_text",
    "with_ids",
]

Row = dict[str, Any]
TextFields = tuple[tuple[str, Callable[[Row], str]], ...]


# -- shared generators and helpers ------------------------------------------------------------


def draw_distinct(
    rng: random.Random,
    n: int,
    make: Callable[[random.Random], Row],
    keep: Callable[[Row], bool] = lambda row: True,
    key: Callable[[Row], Any] | None = None,
    taken: Sequence[Row] = (),
) -> list[Row]:
    """``n`` rows from ``make`` that pass ``keep`` and differ from each other and from
    ``taken`` by ``key`` (the whole row by default), as ``get_random_items`` without
    replacement does."""
    keyfn = key or (lambda row: tuple(sorted(row.items())))
    seen = {keyfn(row) for row in taken}
    out: list[Row] = []
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


def with_ids(rng: random.Random, rows: list[Row]) -> list[Row]:
    """The rows with ids 1..n given in a shuffled order (the order they were inserted)."""
    order = list(range(len(rows)))
    rng.shuffle(order)
    out = [dict(rows[i], id=k + 1) for k, i in enumerate(order)]
    return sorted(out, key=lambda row: row["id"])


def rows_as_text(rows: Sequence[Row], fields: TextFields, fmt: str, kind: str) -> str:
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
    return seek(screen, f"{app}.open", str(to_delete[0]), order)


# -- templates -------------------------------------------------------------------------------


class TableTask(AndroidWorldTask):
    """Writes ``params["rows"]`` (with their ids) into the app's table at the start.

    Class attributes:
        app_title: The launcher title (``Pro Expense``).
        row_type: The app's frozen row dataclass, built as ``row_type(**row)``.
        rows_attr: The data attribute holding the rows (``expenses``); also the parameter
            that holds the add templates' rows as text.
        row_noun: One row in milestone names and text blocks (``expense``).
        key_field: The field that names a row (``name``).
        random_row: Draws one realistic row from an RNG.
    """

    app_title: ClassVar[str] = ""
    row_type: ClassVar[type] = object
    rows_attr: ClassVar[str] = ""
    row_noun: ClassVar[str] = ""
    key_field: ClassVar[str] = ""
    random_row: ClassVar[Callable[[random.Random], Row]]

    # -- hooks ------------------------------------------------------------------------------------

    def _reset_list(self, data: Any) -> None:
        """Leave the list's transient modes (selection, search) at the start."""

    def _list_order(self, data: Any) -> list[str]:
        """Row ids as the list shows them, top to bottom."""
        return [str(r.id) for r in data.ordered()]

    def _busy(self, data: Any) -> bool:
        """Whether the list is in a mode (selection, search) that Back leaves first."""
        return False

    def _row_opened(self, phone: PhoneState, wanted: set[str]) -> bool:
        """Whether one of the rows ``wanted`` (ids as text) is open in the details screen."""
        stack = phone.stacks.get(self.app, [])
        return bool(stack) and stack[-1].name == "detail" and stack[-1].arg in wanted

    # -- shared -----------------------------------------------------------------------------------

    def _rows(self, data: Any) -> list[Any]:
        return getattr(data, self.rows_attr)

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        data = phone.apps[self.app]
        rows = [self.row_type(**row) for row in self.params["rows"]]
        setattr(data, self.rows_attr, rows)
        data.next_id = max((r.id for r in rows), default=0) + 1
        self._reset_list(data)

    @functools.cached_property
    def _initial(self) -> dict[int, Any]:
        return {row["id"]: self.row_type(**row) for row in self.params["rows"]}

    def _others_unchanged(self, data: Any, removed: Sequence[int]) -> bool:
        """Every starting row except ``removed`` is still there, unchanged."""
        current = {r.id: r for r in self._rows(data)}
        gone = set(removed)
        return all(
            current.get(i) == row for i, row in self._initial.items() if i not in gone
        ) and not any(i in current for i in gone)

    def _present(self, data: Any) -> list[int]:
        """Target ids still present, in list order."""
        wanted = set(self.params["targets"])
        return [r.id for r in data.ordered() if r.id in wanted]

    def _delete_expert(self, phone: PhoneState, screen: UITree, to_delete: Sequence[int]) -> Action:
        data = phone.apps[self.app]
        return delete_rows_expert(
            phone,
            screen,
            to_delete,
            app=self.app,
            title=self.app_title,
            order=self._list_order(data),
            busy=self._busy(data),
        )


class TableAddTask(TableTask):
    """Add ``n_rows`` rows given in the goal as CSV or text blocks; ``n_noise`` other rows
    are there at the start (none shares a target's name)."""

    n_rows: ClassVar[int] = 1
    n_noise: ClassVar[int] = 10
    text_fields: ClassVar[TextFields] = ()

    @classmethod
    def draw_rows(cls, rng: random.Random) -> tuple[list[Row], list[Row]]:
        """The target rows (distinct names) and the starting rows (no target's name)."""
        key = cls.key_field
        targets = draw_distinct(rng, cls.n_rows, cls.random_row, key=lambda r: r[key])
        names = {t[key] for t in targets}
        noise = draw_distinct(rng, cls.n_noise, cls.random_row, keep=lambda r: r[key] not in names)
        return targets, noise

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        targets, noise = cls.draw_rows(rng)
        fmt = rng.choice(("csv", "text_block"))
        return {
            cls.rows_attr: rows_as_text(targets, cls.text_fields, fmt, cls.row_noun.title()),
            "text_representation_type": fmt,
            "targets": targets,
            "rows": with_ids(rng, noise),
        }

    @staticmethod
    def _same(row: Any, target: Row) -> bool:
        """Whether a saved row matches a target row."""
        raise NotImplementedError

    def _form_ready(self, phone: PhoneState) -> bool:
        """Whether the open editor holds the (first) target's fields."""
        raise NotImplementedError

    def _editor_step(self, phone: PhoneState, screen: UITree, target: Row) -> Action | None:
        """The expert's next action on the editor (and its pickers), None elsewhere."""
        raise NotImplementedError

    def _new_rows(self, data: Any) -> list[Any]:
        return [r for r in self._rows(data) if r.id not in self._initial]

    def _matched(self, data: Any) -> int:
        return match_all(self._new_rows(data), self.params["targets"], self._same)

    def score(self, phone: PhoneState) -> float:
        data = phone.apps[self.app]
        n = len(self.params["targets"])
        return float(
            self._others_unchanged(data, ())
            and len(self._new_rows(data)) == n
            and self._matched(data) == n
        )

    def milestone_checks(self):
        editor = f"{self.app}/edit"
        checks = [
            self.opened_milestone(),
            milestone("editor_opened", lambda p: p.screen_name == editor),
        ]
        if len(self.params["targets"]) == 1:
            checks.append(milestone("fields_entered", self._form_ready))
        else:
            first = f"first_{self.row_noun}_saved"
            checks.append(milestone(first, lambda p: self._matched(p.apps[self.app]) >= 1))
        checks.append(self.done_milestone(f"{self.rows_attr}_saved"))
        return checks

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        data = phone.apps[self.app]
        free = self._new_rows(data)
        pending = []
        for t in self.params["targets"]:
            hit = next((r for r in free if self._same(r, t)), None)
            if hit is None:
                pending.append(t)
            else:
                free.remove(hit)
        if not pending:
            return Action(ActionType.DONE)
        if phone.dialog is not None:
            return Action(ActionType.GOBACK)
        action = open_app(phone, self.app, self.app_title)
        if action is not None:
            return action
        current = phone.screen
        assert current is not None
        action = self._editor_step(phone, screen, pending[0])
        if action is not None:
            return action
        if current.name != "main" or self._busy(data) or phone.focus:
            return Action(ActionType.GOBACK)
        return reach(screen, handler=f"{self.app}.new")


class TableDeleteTask(TableTask):
    """Delete the rows named in the goal (``n_rows`` of them, names unique in the list), with
    ``n_noise`` (a ``(low, high)`` range) other rows. The goal's ``<key_field>s`` parameter
    lists the targets' names.

    ``targets_first``: the targets are the first rows drawn (else the last; the two ports
    differ here, and the order decides which rows a seed makes targets).
    """

    n_rows: ClassVar[int] = 1
    n_noise: ClassVar[tuple[int, int]] = (0, 0)
    targets_first: ClassVar[bool] = True

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        key = cls.key_field
        n_noise = rng.randint(*cls.n_noise)
        rows = draw_distinct(rng, cls.n_rows + n_noise, cls.random_row, key=lambda r: r[key])
        if cls.targets_first:
            targets, noise = rows[: cls.n_rows], rows[cls.n_rows :]
        else:
            noise, targets = rows[:n_noise], rows[n_noise:]
        all_rows = with_ids(rng, targets + noise)
        names = [t[key] for t in targets]
        return {
            f"{key}s": ", ".join(names),
            "rows": all_rows,
            "targets": [r["id"] for r in all_rows if r[key] in names],
        }

    def score(self, phone: PhoneState) -> float:
        data = phone.apps[self.app]
        targets = self.params["targets"]
        return float(
            self._others_unchanged(data, targets)
            and len(self._rows(data)) == len(self._initial) - len(targets)
        )

    def milestone_checks(self):
        targets = set(self.params["targets"])
        wanted = {str(i) for i in targets}
        checks = [
            self.opened_milestone(),
            milestone("target_opened", lambda p: self._row_opened(p, wanted)),
        ]
        if len(targets) > 1:
            first = f"first_{self.row_noun}_deleted"
            checks.append(
                milestone(first, lambda p: any(p.apps[self.app].get(i) is None for i in targets))
            )
        checks.append(self.done_milestone(f"{self.rows_attr}_deleted"))
        return checks

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        return self._delete_expert(phone, screen, self._present(phone.apps[self.app]))


class TableDeleteDuplicatesTask(TableTask):
    """Two identical rows; exactly one of them must go and nothing else may change."""

    @classmethod
    def _draw(cls, rng: random.Random) -> tuple[Row, list[Row]]:
        """The row to duplicate and the other rows."""
        raise NotImplementedError

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        target, noise = cls._draw(rng)
        rows = with_ids(rng, [target, dict(target), *noise])
        return {
            "rows": rows,
            "targets": [r["id"] for r in rows if r == dict(target, id=r["id"])],
        }

    def score(self, phone: PhoneState) -> float:
        data = phone.apps[self.app]
        present = self._present(data)
        if len(present) != 1:
            return 0.0
        removed = [i for i in self.params["targets"] if i not in present]
        return float(
            self._others_unchanged(data, removed)
            and len(self._rows(data)) == len(self._initial) - 1
        )

    def milestone_checks(self):
        wanted = {str(i) for i in self.params["targets"]}
        return [
            self.opened_milestone(),
            milestone("duplicate_opened", lambda p: self._row_opened(p, wanted)),
            self.done_milestone("duplicate_deleted"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        data = phone.apps[self.app]
        # a copy changed since the start (say, starred) is the one to delete
        present = sorted(self._present(data), key=lambda i: data.get(i) == self._initial[i])
        return self._delete_expert(phone, screen, present[:1] if len(present) == 2 else [])


class TableAddFromSourceTask(TableAddTask):
    """Add rows that another app shows (AndroidWorld's ``...FromMarkor``/``...FromGallery``
    templates): the goal names the source, not the rows, so the agent reads the source, then
    switches apps.

    Class attributes:
        source_app: The app holding the source (``markor``, ``gallery``); its milestone comes
            first, and the target app's editor counts only when opened after it.
        source_name: The note or picture (``my_expenses.txt``).
        noise_in_source: Whether the starting rows are listed in the source too, shuffled
            among the targets (the agent has to pick the right ones).
    """

    source_app: ClassVar[str] = ""
    source_name: ClassVar[str] = ""
    noise_in_source: ClassVar[bool] = True

    @classmethod
    def source_rows(cls, params: dict[str, Any]) -> list[Row]:
        """The rows as the source lists them (targets, possibly changed; the default: as is)."""
        return list(params["targets"])

    @classmethod
    def source_format(cls, params: dict[str, Any]) -> str:
        return params["text_representation_type"]

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        params = super().generate_params(rng)
        listed = cls.source_rows(params)
        if cls.noise_in_source:
            listed += [{k: v for k, v in r.items() if k != "id"} for r in params["rows"]]
            rng.shuffle(listed)
        params["source_text"] = rows_as_text(
            listed, cls.text_fields, cls.source_format(params), cls.row_noun.title()
        )
        return params

    def write_source(self, phone: PhoneState) -> None:
        """Put the source into its app."""
        raise NotImplementedError

    def source_open(self, phone: PhoneState) -> bool:
        """Whether the source is on screen."""
        raise NotImplementedError

    def source_expert(self, phone: PhoneState, screen: UITree) -> Action | None:
        """The next action toward the source on screen; None once it is."""
        raise NotImplementedError

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        super().initialize_task(phone, rng)
        self.write_source(phone)

    def _came_from_source(self, phone: PhoneState) -> bool:
        """The launch history shows the source app, then (later) the target app."""
        opened = phone.opened
        if self.source_app not in opened or self.app not in opened:
            return False
        last = len(opened) - 1 - opened[::-1].index(self.app)
        return opened.index(self.source_app) < last

    def milestone_checks(self):
        checks = super().milestone_checks()
        editor = f"{self.app}/edit"

        def editor_after_source(p: PhoneState) -> bool:
            return p.screen_name == editor and self._came_from_source(p)

        return [
            milestone("source_opened", self.source_open),
            milestone("editor_opened", editor_after_source),
            *checks[2:],
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if not self._came_from_source(phone) and phone.dialog is None:
            action = self.source_expert(phone, screen)
            if action is not None:
                return action
        return super().expert(phone, screen)


class TableAddFromNoteTask(TableAddFromSourceTask):
    """The source is a Markor note at the Markor root; Markor holds nothing else
    (AndroidWorld clears its folder first)."""

    source_app = "markor"

    def write_source(self, phone: PhoneState) -> None:
        from gui_gym.envs.androidworld.tasks.markor import write_notes

        phone.apps["markor"].notes = []
        phone.apps["markor"].folders = []
        note = {"path": self.source_name, "content": self.params["source_text"]}
        write_notes(phone, [{**note, "modified": "2023-10-15 15:34"}])

    def source_open(self, phone: PhoneState) -> bool:
        top = phone.screen
        return (
            phone.foreground == "markor"
            and top is not None
            and top.name == "edit"
            and top.arg == self.source_name
        )

    def source_expert(self, phone: PhoneState, screen: UITree) -> Action | None:
        from gui_gym.envs.androidworld.tasks.markor import open_note

        return open_app(phone, "markor", "Markor") or open_note(phone, screen, self.source_name)


class TableAddFromPictureTask(TableAddFromSourceTask):
    """The source is a picture in ``DCIM`` that Simple Gallery Pro shows: its rows (text
    blocks wrapped at 60 characters, as AndroidWorld renders them) exist only as pixels, so
    the template needs vision. ``noise_pictures`` more pictures show the starting rows."""

    source_app = "gallery"
    noise_in_source = False
    needs_vision = True
    noise_pictures: ClassVar[int] = 0

    @classmethod
    def source_format(cls, params: dict[str, Any]) -> str:
        return "text_block"

    def write_source(self, phone: PhoneState) -> None:
        from gui_gym.envs.androidworld.apps.gallery import GalleryData

        gallery: GalleryData = phone.apps["gallery"]
        files = phone.apps["files"]
        gallery.put(files, f"DCIM/{self.source_name}", picture_lines(self.params["source_text"]))
        if self.noise_pictures:
            noise = [{k: v for k, v in r.items() if k != "id"} for r in self.params["rows"]]
            text = rows_as_text(noise, self.text_fields, "text_block", self.row_noun.title())
            stem = self.source_name.rsplit(".", 1)[0]
            for i in range(self.noise_pictures):
                gallery.put(files, f"DCIM/old_{stem}_{i}.jpg", picture_lines(text))

    def source_open(self, phone: PhoneState) -> bool:
        top = phone.screen
        return (
            phone.foreground == "gallery"
            and top is not None
            and top.name == "picture"
            and top.arg == f"DCIM/{self.source_name}"
        )

    def source_expert(self, phone: PhoneState, screen: UITree) -> Action | None:
        return open_app(phone, "gallery", "Simple Gallery Pro") or (
            None
            if self.source_open(phone)
            else reach(screen, handler="gallery.open", handler_arg=f"DCIM/{self.source_name}")
        )


def picture_lines(text: str, width: int = 60) -> tuple[str, ...]:
    """``text`` as a picture's lines, wrapped at ``width`` characters."""
    import textwrap

    lines: list[str] = []
    for line in text.split("\n"):
        lines += textwrap.wrap(line, width) or [""]
    return tuple(lines)
