"""The WebShop reward, as pure typed functions.

WebShop (Yao et al., 2022, "WebShop: Towards Scalable Real-World Web Interaction with
Grounded Language Agents", Section 3.1; ``web_agent_site/engine/goal.py::get_reward``) scores a
purchase, at "Buy Now", by how much of the goal it satisfies::

    reward = r_type * (matched attributes + matched options + [price <= ceiling])
                    / (goal attributes  + goal options   + 1)

* **attributes**: a goal attribute matches when some product attribute has a fuzzy
  ``token_set_ratio`` above 85, or, failing that, when it is a substring of the lower-cased
  title, bullet points or description;
* **options**: a goal option matches when some chosen option value has a ``token_set_ratio``
  above 85 after colour normalisation (synthetic goals hold options as ``(name, value)``
  pairs, which WebShop's fuzzy matcher reads as the words ``"name value"``);
* **r_type** (``get_type_reward``): 1.0, lowered to 0.5 when neither the product type
  (``query``), the breadcrumb (two shared levels) nor the title nouns (score above 0.2)
  match, to 0.1 when the title score is below 0.1 and to 0.0 when it is 0. The title score is
  the share of the goal title's nouns (duplicates counted) found among the purchased title's.
  WebShop finds nouns with spaCy; our generator wrote the titles and records their nouns.

``token_set_ratio`` is rapidfuzz's ``fuzz.token_set_ratio`` with its ``default_process``
(lower-case, non-alphanumerics to spaces), rounded to an integer percentage: exactly what
WebShop's dependency thefuzz computes, since thefuzz now wraps rapidfuzz. One token set inside
the other scores 100.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gymnasium.error import DependencyNotInstalled

__all__ = [
    "COLOR_SET",
    "FUZZY_THRESHOLD",
    "GoalSpec",
    "ProductSpec",
    "RewardParts",
    "attribute_matches",
    "normalize_color",
    "option_matches",
    "token_set_ratio",
    "type_reward",
    "webshop_reward",
]

FUZZY_THRESHOLD = 85
"""A fuzzy match needs a ``token_set_ratio`` strictly above this (WebShop's constant)."""

COLOR_SET: tuple[str, ...] = (
    "amber",
    "aqua",
    "beige",
    "black",
    "blue",
    "bronze",
    "brown",
    "burgundy",
    "camel",
    "champagne",
    "charcoal",
    "chestnut",
    "coral",
    "cream",
    "crimson",
    "cyan",
    "fuchsia",
    "gold",
    "gray",
    "green",
    "grey",
    "indigo",
    "ivory",
    "khaki",
    "lavender",
    "lilac",
    "magenta",
    "maroon",
    "mauve",
    "navy",
    "olive",
    "orange",
    "peach",
    "pink",
    "plum",
    "purple",
    "red",
    "rose",
    "ruby",
    "salmon",
    "silver",
    "teal",
    "turquoise",
    "violet",
    "white",
    "wine",
    "yellow",
)
"""Colour words in alphabetical order; :func:`normalize_color` takes the first one found, as
WebShop's ``normalize_color`` does with its own list."""


@functools.cache
def _rapidfuzz() -> tuple[Any, Any]:
    try:
        from rapidfuzz import fuzz, utils
    except ImportError as err:
        raise DependencyNotInstalled(
            "WebShop's fuzzy matching needs rapidfuzz: pip install 'gui-gym[webshop]'"
        ) from err
    return fuzz, utils.default_process


def token_set_ratio(first: str, second: str) -> int:
    """thefuzz's ``fuzz.token_set_ratio`` (0..100), computed by rapidfuzz.

    Examples (the values WebShop's reference notes record): ``"essential oil"`` vs
    ``"essential oils"`` is 96, ``"tea bag"`` vs ``"tea tree"`` 60, ``"large"`` vs
    ``"x-large"`` 100, ``"pack of 12"`` vs ``"pack of 1"`` 95.

    Raises:
        gymnasium.error.DependencyNotInstalled: without rapidfuzz (the ``webshop`` extra).
    """
    fuzz, process = _rapidfuzz()
    return round(fuzz.token_set_ratio(first, second, processor=process))


def normalize_color(value: str | tuple[str, str]) -> str | tuple[str, str]:
    """WebShop's ``normalize_color``: the first colour of :data:`COLOR_SET` *in* ``value``.

    For a string that is a substring test ("navy blue" becomes "blue", "rose gold" becomes
    "gold"); for a ``(name, value)`` pair it is an element test, so only a value that *is* a
    colour word is replaced. Anything else comes back unchanged.
    """
    for color in COLOR_SET:
        if isinstance(value, tuple):
            if color in value:
                return color
        elif color in value:
            return color
    return value


def _as_words(value: str | tuple[str, str]) -> str:
    # thefuzz stringifies a tuple ("('color', 'black')") before processing: its words.
    return " ".join(value) if isinstance(value, tuple) else value


@dataclass(frozen=True, slots=True)
class GoalSpec:
    """What the reward reads of a goal.

    Attributes:
        query: The target's product type (WebShop's ``query`` class).
        product_category: The target's breadcrumb, levels joined with " › ".
        name_nouns: Nouns of the target's title, in order, duplicates kept.
        attributes: Attributes the instruction asks for (canonical wordings).
        options: ``(name, value)`` pairs the instruction asks for.
        price_upper: The price ceiling in dollars.
    """

    query: str
    product_category: str
    name_nouns: tuple[str, ...]
    attributes: tuple[str, ...]
    options: tuple[tuple[str, str], ...]
    price_upper: float


@dataclass(frozen=True, slots=True)
class ProductSpec:
    """What the reward reads of the purchased product.

    Attributes:
        query: Its product type.
        product_category: Its breadcrumb.
        title: Its title.
        title_nouns: Nouns of its title.
        attributes: Its attributes (canonical wordings).
        bullet_points: Its feature bullets.
        description: Its description.
    """

    query: str
    product_category: str
    title: str
    title_nouns: tuple[str, ...]
    attributes: tuple[str, ...]
    bullet_points: tuple[str, ...]
    description: str


@dataclass(frozen=True, slots=True)
class RewardParts:
    """The reward and every part of it (``info["webshop"]`` carries :meth:`to_dict`).

    Attributes:
        reward: The total in [0, 1].
        r_type: The type factor (1.0, 0.5, 0.1 or 0.0).
        query_match, category_match, title_score: What ``r_type`` was decided from.
        matched_attributes: Goal attributes the product satisfies.
        matched_options: Goal options (``"name: value"``) the chosen options satisfy.
        r_att: Share of goal attributes matched.
        r_option: Share of goal options matched, or None when the goal has none.
        r_price: Whether the price is within the ceiling.
        w_att, w_option, w_price: Each part's weight in the sum (they add up to 1).
    """

    reward: float
    r_type: float
    query_match: bool
    category_match: bool
    title_score: float
    matched_attributes: tuple[str, ...]
    matched_options: tuple[str, ...]
    r_att: float
    r_option: float | None
    r_price: bool
    w_att: float
    w_option: float
    w_price: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field (tuples as lists)."""
        out: dict[str, Any] = {}
        for name in self.__slots__:  # type: ignore[attr-defined]
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out


def type_reward(product: ProductSpec, goal: GoalSpec) -> tuple[float, bool, bool, float]:
    """WebShop's ``get_type_reward``: ``(r_type, query_match, category_match, title_score)``.

    The rules apply in order, later ones overriding: start at 1.0; 0.5 when none of the type,
    the breadcrumb (at least two shared levels, as sets) or the title score (above 0.2)
    matches; 0.1 when the title score is below 0.1; 0.0 when it is 0.
    """
    query_match = product.query == goal.query
    product_levels = {level.strip() for level in product.product_category.split("›")}
    goal_levels = {level.strip() for level in goal.product_category.split("›")}
    category_match = len(product_levels & goal_levels) >= 2
    if goal.name_nouns:
        shared = set(product.title_nouns) & set(goal.name_nouns)
        title_score = len(shared) / len(goal.name_nouns)
    else:
        title_score = 0.2  # WebShop's value for a goal title without nouns
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return r_type, query_match, category_match, title_score


def attribute_matches(product: ProductSpec, goal_attributes: Sequence[str]) -> tuple[str, ...]:
    """Goal attributes the product satisfies (WebShop's ``get_attribute_reward``): a fuzzy
    match with one of its attributes, else the attribute as written inside its title, bullet
    points or description (lower-cased; the goal attribute itself is not lower-cased, as in
    WebShop)."""
    title = product.title.lower()
    bullets = " ".join(product.bullet_points).lower()
    description = product.description.lower()
    matched = []
    for wanted in goal_attributes:
        fuzzy = any(token_set_ratio(have, wanted) > FUZZY_THRESHOLD for have in product.attributes)
        if fuzzy or wanted in title or wanted in bullets or wanted in description:
            matched.append(wanted)
    return tuple(matched)


def option_matches(
    goal_options: Sequence[tuple[str, str]], chosen: Mapping[str, str]
) -> tuple[str, ...]:
    """Goal options the chosen values satisfy (WebShop's ``get_option_reward`` for synthetic
    goals): colour-normalise both sides, then a ``token_set_ratio`` above 85 between the goal's
    ``"name value"`` words and some chosen value."""
    purchased = [_as_words(normalize_color(value)) for value in chosen.values()]
    matched = []
    for name, value in goal_options:
        wanted = _as_words(normalize_color((name, value)))
        if any(token_set_ratio(wanted, have) > FUZZY_THRESHOLD for have in purchased):
            matched.append(f"{name}: {value}")
    return tuple(matched)


def webshop_reward(
    product: ProductSpec, goal: GoalSpec, price: float, options: Mapping[str, str]
) -> RewardParts:
    """Score buying ``product`` at ``price`` with ``options`` chosen, for ``goal``.

    Implements WebShop's ``get_reward`` (Yao et al., 2022, Section 3.1)::

        r = r_type * (|matched attrs| + |matched options| + 1[price <= ceiling])
                   / (|goal attrs| + |goal options| + 1)

    Args:
        product: The purchased product.
        goal: The goal it is scored against.
        price: The price paid.
        options: Option name -> chosen value (unchosen groups are simply absent).

    Returns:
        The reward with every part.
    """
    r_type, query_match, category_match, title_score = type_reward(product, goal)
    attrs = attribute_matches(product, goal.attributes)
    opts = option_matches(goal.options, options)
    r_price = price <= goal.price_upper
    denominator = len(goal.attributes) + len(goal.options) + 1
    total = (len(attrs) + len(opts) + int(r_price)) / denominator
    return RewardParts(
        reward=total * r_type,
        r_type=r_type,
        query_match=query_match,
        category_match=category_match,
        title_score=title_score,
        matched_attributes=attrs,
        matched_options=opts,
        r_att=len(attrs) / len(goal.attributes) if goal.attributes else 0.0,
        r_option=len(opts) / len(goal.options) if goal.options else None,
        r_price=r_price,
        w_att=len(goal.attributes) / denominator,
        w_option=len(goal.options) / denominator,
        w_price=1 / denominator,
    )
