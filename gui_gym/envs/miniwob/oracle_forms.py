"""More MiniWoB++ experts (forms, lists, games): registered into :data:`oracle.ORACLES`.

Same rules as :mod:`gui_gym.envs.miniwob.oracle`: an expert reads the utterance and its
fields, the current ``UITree`` and its own per-episode notes, and acts only through gui-gym
actions. What a person brings to a page (English words and their synonyms) the expert
carries as data written here, never read from the task's code.
"""

from __future__ import annotations

import re

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.envs.miniwob.oracle import (
    _NAMED_COLOURS,
    OracleStuck,
    _click,
    _colour,
    _descendants,
    _find,
    _key,
    _label_of,
    _notes,
    _point,
    _state,
    _submit,
)

__all__ = ["FORM_ORACLES", "SYNONYM_GROUPS"]


# Words that mean the same, as an English speaker groups them (a small thesaurus: the
# everyday senses of common adjectives, verbs and nouns, with plurals where a noun has one).
# A word belongs to one group only (a test checks), so "similar to" is a lookup.
SYNONYM_GROUPS: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split())
    for group in (
        "big large huge enormous gigantic giant immense massive vast",
        "small tiny little mini petite minute miniature",
        "red scarlet crimson vermillion vermilion ruby",
        "happy cheerful joyful gleeful delighted glad merry jolly",
        "sad unhappy sorrowful miserable tragic gloomy downcast",
        "angry mad furious irritated enraged irate livid",
        "evil wicked immoral sinful corrupt depraved vile",
        "wrong incorrect mistaken erroneous false inaccurate",
        "real genuine actual authentic",
        "strange odd peculiar unusual weird bizarre curious",
        "stop cease halt end finish quit",
        "scared terrified panicked fearful frightened afraid",
        "quiet calm peaceful serene mild tranquil",
        "old aged archaic ancient elderly",
        "love like adore favor favour cherish",
        "kill murder assassinate slay",
        "keep retain preserve sustain maintain",
        "hide conceal camouflage cloak",
        "hate despise loathe detest dislike abhor",
        "funny humorous amusing comical laughable hilarious",
        "fat fleshy plump chubby obese",
        "stupid dumb dull unwise foolish",
        "delicious savory savoury delectable appetizing tasty yummy",
        "cut slice carve chop",
        "brave courageous fearless bold valiant",
        "begin start initiate launch commence",
        "answer reply response",
        "television televisions tv tvs",
        "house home houses homes",
        "fire flame fires flames",
        "pig pork swine hog pigs",
        "rabbit rabbits bunny bunnies",
        "car cars automobile automobiles vehicle vehicles",
        "water",
    )
)


def _synonyms(word: str) -> frozenset[str]:
    word = word.strip().lower()
    return next((g for g in SYNONYM_GROUPS if word in g), frozenset({word}))


def click_checkboxes_soft(ctx: PredicateContext) -> Action:
    """Tick the boxes whose words mean the same as an asked word (untick the others), then
    submit."""
    screen = ctx.screen
    asked = [v for k, v in _state(ctx).fields.items() if k.startswith("target")]
    wanted = frozenset().union(*(_synonyms(w) for w in asked)) if asked else frozenset()
    for e in screen.elements:
        if e.role == "checkbox" and (_label_of(screen, e).strip().lower() in wanted) != e.checked:
            return _click(e)
    return _submit(screen)


def click_scroll_list(ctx: PredicateContext) -> Action:
    """Ctrl+click each asked option of the multi-select list box (ctrl keeps the options
    chosen before), scrolling the box until the option shows, then submit."""
    screen = ctx.screen
    box = _find(screen, lambda e: e.role == "select")
    options = {screen.elements[i].text: screen.elements[i] for i in box.children}
    picked = _notes(ctx).setdefault("picked", [])
    for name in (w.strip() for w in _state(ctx).fields["target"].split(",")):
        if name in picked:
            continue
        option = options.get(name)
        if option is None:
            raise OracleStuck(f"the list box has no option {name!r}")
        y = option.center[1]
        if y < box.bounds[1] + 4 or y > box.bounds[3] - 4:  # hidden: scroll the box to it
            direction = "up" if y < box.bounds[1] + 4 else "down"
            return Action(ActionType.SCROLL, direction=direction, index=box.index)
        picked.append(name)
        return Action(ActionType.CLICK, index=option.index, modifiers="ctrl")
    return _submit(screen)


_STYLE_BUTTONS = {"bold": 0, "italics": 1, "underlined": 2}  # the toolbar's icons, in order
_DEFAULT_TEXT_COLOUR = (0, 0, 0)  # the picker's first swatch: "no colour"


def _editor_plan(ctx: PredicateContext) -> list[tuple[str, str]]:
    """text-editor's steps, planned once from the page: clear the editor, then retype its
    text with the style switched on for the asked word (or all of it) and off after it, as
    a person formats while typing (styling one word in place would need the word's pixels)."""
    screen = ctx.screen
    target = _state(ctx).fields["target"]
    match = re.search(r"(?:everything|the text (\S+)) the (style|color) (\w+)", target)
    if match is None:
        raise OracleStuck(f"text-editor asks for something unknown: {target!r}")
    word, kind, value = match.groups()
    editor = _find(screen, lambda e: e.resource_id == "editor")
    text = " ".join(e.text for e in _descendants(screen, editor) if e.text)
    if word is None:
        prefix, styled, suffix = "", text, ""
    else:
        words = text.split(" ")
        if word not in words:
            raise OracleStuck(f"the editor has no word {word!r}")
        at = words.index(word)
        prefix = " ".join(words[:at]) + (" " if at else "")
        styled = word
        suffix = (" " if at < len(words) - 1 else "") + " ".join(words[at + 1 :])
    on = [("button", value)] if kind == "style" else [("picker", ""), ("swatch", value)]
    off = [("button", value)] if kind == "style" else [("picker", ""), ("swatch", "")]
    plan = [("click", ""), ("key", "ctrl+a"), ("key", "Backspace")]
    plan += [("type", prefix)] if prefix else []
    plan += [*on, ("type", styled)]
    plan += [*off, ("type", suffix)] if suffix else []
    return [*plan, ("submit", "")]


def text_editor(ctx: PredicateContext) -> Action:
    """Clear the editor and retype its text, switching the asked style or colour on at the
    cursor for the asked word (or everything) and off after it, then submit."""
    screen = ctx.screen
    notes = _notes(ctx)
    if "plan" not in notes:
        notes["plan"] = _editor_plan(ctx)
        notes["next"] = 0
    plan = notes["plan"]
    step, value = plan[min(notes["next"], len(plan) - 1)]
    notes["next"] += 1
    if step == "click":  # a real click puts the caret in the editor
        editor = _find(screen, lambda e: e.resource_id == "editor")
        return _point(next(e for e in _descendants(screen, editor) if e.text))
    if step == "key":
        return _key(value)
    if step == "type":  # typing goes to the focused editor, at the caret
        return Action(ActionType.INPUT, text=value)
    if step == "button":
        buttons = [e for e in screen.elements if e.role == "button" and not e.text]
        return _point(buttons[_STYLE_BUTTONS[value]])  # a click keeps the caret's place
    if step == "picker":  # the colour picker opens on its icon
        return _point(next(e for e in screen.elements if e.role == "image"))
    if step == "swatch":
        want = _NAMED_COLOURS.get(value) if value else _DEFAULT_TEXT_COLOUR
        swatches = [
            (e, c)
            for e in screen.elements
            if "ql-picker-item" in e.description and (c := _colour(e))
        ]
        if want is None or not swatches:
            raise OracleStuck(f"no swatch for {value!r}")
        return _point(min(swatches, key=lambda s: sum((a - b) ** 2 for a, b in zip(s[1], want)))[0])
    return _submit(screen)


FORM_ORACLES = {
    "click-checkboxes-soft": click_checkboxes_soft,
    "click-scroll-list": click_scroll_list,
    "text-editor": text_editor,
}
"""The experts of this module, by task name."""
