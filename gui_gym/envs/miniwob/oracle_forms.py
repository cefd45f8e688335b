"""More MiniWoB++ experts (forms, lists, games): registered into :data:`oracle.ORACLES`.

Same rules as :mod:`gui_gym.envs.miniwob.oracle`: an expert reads the utterance and its
fields, the current ``UITree`` and its own per-episode notes, and acts only through gui-gym
actions. What a person brings to a page (English words and their synonyms) the expert
carries as data written here, never read from the task's code.
"""

from __future__ import annotations

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.envs.miniwob.oracle import (
    OracleStuck,
    _click,
    _find,
    _label_of,
    _notes,
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


FORM_ORACLES = {
    "click-checkboxes-soft": click_checkboxes_soft,
    "click-scroll-list": click_scroll_list,
}
"""The experts of this module, by task name."""
