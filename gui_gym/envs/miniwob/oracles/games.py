"""Experts for pages a person plays or watches: ordered clicks, sliders, form sequences,
number games, a search engine, a terminal, tic-tac-toe, a stock ticker, hot-cold."""

from __future__ import annotations

import functools
import re

import numpy as np

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UIElement
from gui_gym.envs.miniwob.oracles.common import (
    OracleStuck,
    ancestor,
    as_number,
    click,
    descendants,
    element_by_id,
    expert_notes,
    fill_field,
    fill_then_submit,
    find_element,
    press_key,
    press_submit,
    task_state,
    wait,
)

__all__ = [
    "ascending_numbers",
    "form_sequence",
    "form_sequence_2",
    "generate_number",
    "hot_cold",
    "odd_or_even",
    "search_engine",
    "stock_market",
    "terminal",
    "tic_tac_toe",
    "use_slider",
    "use_slider_2",
]


def ascending_numbers(ctx: PredicateContext) -> Action:
    """Click 1, which hides the numbers behind squares; then click the squares where 2, 3,
    ... were, as a person remembers them."""
    notes = expert_notes(ctx)
    screen = ctx.screen
    numbers = {
        int(e.text): e.center for e in screen.elements if e.role == "text" and e.text.isdigit()
    }
    if numbers:
        notes["where"] = numbers
        notes["next"] = 2
        return click(find_element(screen, lambda e: e.text == "1"))
    where = notes.get("where")
    if not where or notes["next"] not in where:
        raise OracleStuck("the numbers were hidden before they were seen")
    x, y = where[notes["next"]]
    notes["next"] += 1
    return Action(ActionType.CLICK, x=x, y=y)


def _slider_to(
    ctx: PredicateContext, slider: UIElement, value_shown: UIElement, want: int, key: str
) -> Action | None:
    """Next action to set a jQuery UI slider to ``want`` (None once it shows it): drag the
    handle to both ends to read the range, drag to where ``want`` falls, then step with the
    arrow keys. ``key`` names this slider in the notes."""
    screen = ctx.screen
    value = int(value_shown.text)
    if value == want:
        return None
    handle = next(e for e in descendants(screen, slider) if "ui-slider-handle" in e.description)
    notes = expert_notes(ctx).setdefault(key, {})
    x0, y0, x1, y1 = slider.bounds
    vertical = (y1 - y0) > (x1 - x0)
    ends = (
        ((x0 + x1) / 2, y1 - 1, (x0 + x1) / 2, y0 + 1)
        if vertical
        else (x0 + 1, (y0 + y1) / 2, x1 - 1, (y0 + y1) / 2)
    )
    hx, hy = handle.center
    for end, (end_x, end_y) in (("low", ends[:2]), ("high", ends[2:])):
        if end not in notes:  # drag to this end, then note the value it shows
            if notes.get("dragged") == end:
                notes[end] = value
            else:
                notes["dragged"] = end
                return Action(ActionType.DRAG, x=hx, y=hy, end_x=end_x, end_y=end_y)
    if not notes.get("placed"):
        notes["placed"] = True
        low, high = notes["low"], notes["high"]
        share = (want - low) / (high - low) if high != low else 0.0
        tx = ends[0] + (ends[2] - ends[0]) * share
        ty = ends[1] + (ends[3] - ends[1]) * share
        return Action(ActionType.DRAG, x=hx, y=hy, end_x=tx, end_y=ty)
    return press_key("ArrowUp" if want > value else "ArrowDown")


def use_slider(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    slider = find_element(screen, lambda e: e.resource_id == "slider")
    shown = find_element(screen, lambda e: e.resource_id == "val")
    want = int(task_state(ctx).fields["target"])
    return _slider_to(ctx, slider, shown, want, "slider") or press_submit(screen)


def use_slider_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    for n in (1, 2, 3):
        slider = find_element(screen, lambda e, n=n: e.resource_id == f"slider-{n}")
        shown = find_element(screen, lambda e, n=n: e.resource_id == f"val-{n}")
        action = _slider_to(ctx, slider, shown, int(fields[f"n{n}"]), f"slider-{n}")
        if action is not None:
            return action
    return press_submit(screen)


def form_sequence(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    slider = find_element(screen, lambda e: e.resource_id == "slider")
    shown = find_element(screen, lambda e: e.resource_id == "val")
    action = _slider_to(ctx, slider, shown, int(fields["slider target"]), "slider")
    if action is not None:
        return action
    box = find_element(screen, lambda e: e.resource_id == f"checkbox-{fields['checkbox target']}")
    if not box.checked:
        return click(box)
    return press_submit(screen)


def form_sequence_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    radio = [e for e in screen.elements if e.role == "radio"][int(fields["radio target"]) - 1]
    if not radio.checked:
        return click(radio)
    field = find_element(screen, lambda e: e.resource_id == f"input-{fields['textbox target']}")
    return fill_then_submit(ctx, [(field, fields["textbox text"])], press_submit(screen))


def generate_number(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    utterance = task_state(ctx).utterance
    shown = find_element(screen, lambda e: e.resource_id == "display-number").text
    value = int(shown) if re.fullmatch(r"-?\d+", shown) else None
    if value is not None:
        if m := re.search(r"less than (-?\d+)", utterance):
            good = value < int(m.group(1))
        elif m := re.search(r"greater than (-?\d+)", utterance):
            good = value > int(m.group(1))
        elif "even" in utterance:
            good = value % 2 == 0
        elif "odd" in utterance:
            good = value % 2 == 1
        else:
            raise OracleStuck(f"unknown criterion in {utterance!r}")
        if good:
            return click(find_element(screen, lambda e: e.resource_id == "submit"))
    return click(find_element(screen, lambda e: e.resource_id == "generate"))


def odd_or_even(ctx: PredicateContext) -> Action:
    """Mark each number in turn (the marks leave no trace in the DOM reading, so the expert
    notes how many it marked)."""
    screen = ctx.screen
    notes = expert_notes(ctx)
    rows = [
        e
        for e in screen.elements
        if e.role == "text" and re.fullmatch(r"-?\d+", e.text) and e.parent >= 0
    ]
    done = notes.get("marked", 0)
    if done >= len(rows):
        return click(find_element(screen, lambda e: e.resource_id == "submit"))
    notes["marked"] = done + 1
    number = rows[done]
    row = ancestor(screen, number, 2)
    label = "Even" if int(number.text) % 2 == 0 else "Odd"
    return click(next(e for e in descendants(screen, row) if e.text == label))


def search_engine(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    notes = expert_notes(ctx)
    field = find_element(screen, lambda e: e.resource_id == "search-text")
    content = element_by_id(screen, "page-content")
    results = (
        [e for e in descendants(screen, content) if e.role == "link"] if content is not None else []
    )
    if not results:
        return fill_field(ctx, field, fields["query"]) or click(element_by_id(screen, "search"))  # type: ignore[arg-type]
    rank = int(fields["rank"])
    page = (rank - 1) // 3 + 1
    if notes.get("page", 1) != page:
        notes["page"] = page
        pages = find_element(screen, lambda e: e.resource_id == "pagination")
        return click(next(e for e in descendants(screen, pages) if e.text == str(page)))
    return click(results[(rank - 1) % 3])


def terminal(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    notes = expert_notes(ctx)
    field = find_element(screen, lambda e: e.resource_id == "terminal-target")
    extension = re.search(r"extension (\S+)", task_state(ctx).utterance)
    if extension is None:
        raise OracleStuck(f"cannot read the file to delete from {task_state(ctx).utterance!r}")
    ext = extension.group(1).rstrip(".")
    stage = notes.get("stage", "ls")
    if stage == "ls":
        notes["stage"] = "ls-enter"
        return Action(ActionType.INPUT, index=field.index, text="ls")
    if stage == "ls-enter":
        notes["stage"] = "rm"
        return Action(ActionType.ENTER)
    if stage == "rm":
        names = [w for e in screen.elements for w in e.text.split() if w.endswith(ext)]
        if not names:
            raise OracleStuck(f"ls shows no file ending in {ext}")
        notes["stage"] = "rm-enter"
        return Action(ActionType.INPUT, index=field.index, text=f"rm {names[0]}")
    return Action(ActionType.ENTER)


_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def _winner(board: list[str]) -> str:
    for a, b, c in _LINES:
        if board[a] in ("x", "o") and board[a] == board[b] == board[c]:
            return board[a]
    return ""


def _wins_for(board: str, mark: str) -> list[int]:
    """Cells where ``mark`` would complete a line."""
    out = []
    for line in _LINES:
        marks = [board[i] for i in line]
        if marks.count(mark) == 2 and marks.count(".") == 1:
            out.append(line[marks.index(".")])
    return out


def _move_value(board: str, cell: int) -> float:
    """Chance that X wins after playing ``cell`` on ``board`` ("." empty), against the
    page's O: it moves at random 55% of the time, and otherwise takes a win, else blocks
    X, else moves at random (tic-tac-toe.html's computerMove)."""
    after = board[:cell] + "x" + board[cell + 1 :]
    if _winner(list(after)) == "x":
        return 1.0
    free = [i for i, v in enumerate(after) if v == "."]
    if not free:
        return 0.0  # a draw is not a win
    smart = _wins_for(after, "o") or _wins_for(after, "x") or free
    chance = 0.0
    for weight, moves in ((0.55, free), (0.45, smart)):
        for o_cell in moves:
            reply = after[:o_cell] + "o" + after[o_cell + 1 :]
            if _winner(list(reply)) != "o":
                chance += weight / len(moves) * _x_win_chance(reply)
    return chance


@functools.lru_cache(maxsize=20_000)  # at most 3**9 boards
def _x_win_chance(board: str) -> float:
    """Chance that X, to move on ``board``, wins when it plays its best."""
    free = [i for i, v in enumerate(board) if v == "."]
    return max((_move_value(board, cell) for cell in free), default=0.0)


def _best_move(board: list[str]) -> int:
    """The X move that most often wins against the page's O."""
    text = "".join(v or "." for v in board)
    free = [i for i, v in enumerate(text) if v == "."]
    return max(free, key=lambda cell: _move_value(text, cell))


def tic_tac_toe(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    cells = [find_element(screen, lambda e, i=i: e.resource_id == f"ttt-{i}") for i in range(9)]
    board = [
        "x" if "mark-x" in c.description else "o" if "mark-o" in c.description else ""
        for c in cells
    ]
    return click(cells[_best_move(board)])


def stock_market(ctx: PredicateContext) -> Action:
    """Watch the price and buy once it is below the asked one."""
    screen = ctx.screen
    limit = float(task_state(ctx).fields["target"].lstrip("$"))
    price = element_by_id(screen, "stock-price")  # empty (no box) until the first tick
    value = as_number(price.text) if price is not None else None
    if value is not None and value < limit:
        return click(find_element(screen, lambda e: e.resource_id == "buy"))
    return wait()


# hot-cold's bands: the page says HOT within 5 px of the hidden spot, WARM within 10, COLD
# within 40, ICE COLD beyond.
_BANDS = {"HOT": (0.0, 5.0), "WARM": (5.0, 10.0), "COLD": (10.0, 40.0), "ICE COLD": (40.0, 1e9)}


def hot_cold(ctx: PredicateContext) -> Action:
    """Move the mouse, read the page's HOT/WARM/COLD/ICE COLD, keep the spots every reading
    allows (the spot is somewhere in the touch area), and hover their middle; click once
    they are all within the HOT radius."""

    screen = ctx.screen
    notes = expert_notes(ctx)
    area = find_element(screen, lambda e: e.resource_id == "touch-area")
    readings = notes.setdefault("readings", [])
    last = notes.get("last")
    shown = " ".join(e.text for e in screen.elements if e.text in _BANDS)
    if last is not None and shown in _BANDS:
        readings.append((*last, shown))
        if shown == "HOT":
            return Action(ActionType.CLICK, x=last[0], y=last[1])
    x0, y0, x1, y1 = area.bounds
    xs, ys = np.meshgrid(np.arange(x0 + 3, x1 - 2), np.arange(y0 + 3, y1 - 2))
    keep = np.ones(xs.shape, bool)
    for hx, hy, band in readings:
        low, high = _BANDS[band]
        distance = np.hypot(xs - hx, ys - hy)
        keep &= (distance >= low - 1) & (distance < high + 1)
    if not keep.any():
        raise OracleStuck("no spot fits the readings")
    # Hover the possible spot nearest the middle of all possible spots (the middle itself
    # may be ruled out, e.g. the centre of a ring).
    cx, cy = float(xs[keep].mean()), float(ys[keep].mean())
    spread = float(np.hypot(xs[keep] - cx, ys[keep] - cy).max())
    if spread < 4:
        return Action(ActionType.CLICK, x=round(cx), y=round(cy))
    nearest = np.argmin(np.where(keep, np.hypot(xs - cx, ys - cy), np.inf))
    cx, cy = float(xs.flat[nearest]), float(ys.flat[nearest])
    notes["last"] = (round(cx), round(cy))
    return Action(ActionType.HOVER, x=round(cx), y=round(cy))
