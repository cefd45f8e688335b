"""The catalog generator: products in families, goals with instructions, product texts.

Deterministic for a seed, on any platform and Python version: every draw goes through
:class:`Draw`, which uses only ``random.Random.random()`` (whose sequence Python guarantees)
seeded from a string. Products come in *families* seeded by ``(seed, family number)``, so a
smaller catalog is a prefix of a larger one with the same seed.

What makes search not trivial:

* **near-duplicates**: a family is one brand's product type in up to four variants that
  differ in one attribute, in the option values on offer and in price (so a variant can miss
  the goal by one attribute, one option or the price ceiling);
* **distractors**: every type shares attribute words and option values with other types
  (lavender shampoo and lavender conditioner, black t-shirts and black office chairs);
* **paraphrases**: titles, bullet points and instructions say an attribute in different
  words ("sulfate free", "free of sulfates", "no sulfates"); only the product's attribute
  list and the goal use the canonical wording.

Descriptions and reviews are written on demand from the product's own seed
(:func:`write_details`), so the stored catalog holds only what search and goals need.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from gui_gym.envs.webshop.lexicon import (
    ATTRIBUTES,
    CATEGORIES,
    GENERIC_NOUNS,
    PRODUCT_TYPES,
    Attribute,
    ProductType,
)

__all__ = [
    "GENERATOR_VERSION",
    "Draw",
    "generate_catalog_data",
    "goal_counts",
    "price_ceiling",
    "write_details",
]

GENERATOR_VERSION = 2
"""Bumped whenever generated output changes; part of the cache key."""

T = TypeVar("T")
_WORD = re.compile(r"[a-z0-9]+")
_SMALL_WORDS = frozenset({"a", "an", "and", "for", "in", "of", "on", "or", "the", "to", "with"})


class Draw:
    """Random draws built on ``random.Random.random()`` only, seeded from a string."""

    __slots__ = ("_random",)

    def __init__(self, key: str):
        self._random = random.Random(key).random

    def random(self) -> float:
        return self._random()

    def below(self, n: int) -> int:
        """An int in ``[0, n)``."""
        return min(n - 1, int(self._random() * n))

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        """``k`` distinct items in draw order (partial Fisher-Yates)."""
        pool = list(items)
        k = min(k, len(pool))
        for i in range(k):
            j = i + self.below(len(pool) - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]

    def chance(self, p: float) -> bool:
        return self._random() < p

    def uniform(self, low: float, high: float) -> float:
        return low + (high - low) * self._random()


# ---------------------------------------------------------------------------------- brands

_SYLLABLES = tuple(
    " ".join(
        (
            "ve lo ra bri tek lum na zo kai ren sol mi qua dor vin ex ly ar cor fin gal ny sa",
            "tor bel ka mo ri ta len ven da pho nix ol ro su vi ze ha ju pe mar tis on el",
        )
    ).split()
)


def _brands(category: str, count: int = 48) -> tuple[str, ...]:
    draw = Draw(f"brands:{category}")
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < count:
        parts = [draw.choice(_SYLLABLES) for _ in range(2 + draw.below(2))]
        name = "".join(parts)
        if draw.chance(0.2):
            name += draw.choice(("co", "ix", "ify", "lab", "ly"))
        if len(name) < 5 or name in seen:
            continue
        seen.add(name)
        names.append(name.capitalize())
    return tuple(names)


BRANDS: dict[str, tuple[str, ...]] = {c: _brands(c) for c in CATEGORIES}
_ALL_BRANDS = frozenset(b.lower() for names in BRANDS.values() for b in names)


# ---------------------------------------------------------------------------------- titles


def _title_case(text: str) -> str:
    words = text.split(" ")
    out = []
    for i, word in enumerate(words):
        if i > 0 and word in _SMALL_WORDS:
            out.append(word)
        elif word[:1].isalpha():
            out.append(word[0].upper() + word[1:])
        else:
            out.append(word)
    return " ".join(out)


_TITLE_CANONICAL = 0.3
_BULLET_CANONICAL = 0.2
_INSTRUCTION_CANONICAL = 0.2
_IN_TITLE = 0.4
_IN_BULLETS = 0.6
"""How often titles, bullet points and instructions use an attribute's canonical wording (the
one goals and the reward use) rather than a paraphrase, and how often a title and the bullet
points mention an attribute at all."""


def _wording(draw: Draw, attribute: Attribute, canonical_share: float) -> str:
    if draw.chance(canonical_share):
        return attribute.name
    return draw.choice(attribute.wordings)


def _title(draw: Draw, brand: str, head: str, attributes: list[str]) -> str:
    """``Brand [adj] Head [with X] [for Y][, more adj][, one option]`` in title case."""
    adjs, withs, fors, rest = [], [], [], []
    for name in attributes:
        attribute = ATTRIBUTES[name]
        if not draw.chance(_IN_TITLE):
            continue  # not every attribute makes it into the title
        text = _wording(draw, attribute, _TITLE_CANONICAL)
        if attribute.form == "adj" and len(adjs) < 2:
            adjs.append(text)
        elif attribute.form == "with" and not withs:
            withs.append(text)
        elif attribute.form == "for" and not fors:
            fors.append(text)
        else:
            rest.append(text)
    parts = [brand, *adjs, head]
    if withs:
        parts.append(f"with {withs[0]}")
    if fors:
        parts.append(f"for {fors[0]}")
    title = " ".join(parts)
    if rest:
        title += ", " + ", ".join(rest)
    return _title_case(title)


def title_nouns(title: str, ptype: ProductType) -> tuple[str, ...]:
    """The title's nouns in order (duplicates kept): the type's nouns, generic nouns and the
    brand, which a tagger reads as a proper noun."""
    nouns = set(ptype.nouns) | GENERIC_NOUNS
    return tuple(w for w in _WORD.findall(title.lower()) if w in nouns or w in _ALL_BRANDS)


# -------------------------------------------------------------------------------- features

_GENERIC_DETAILS = (
    "backed by a 30 day money back guarantee",
    "a thoughtful gift for friends and family",
    "designed and tested by our team",
    "packaged in recyclable materials",
    "loved by thousands of customers",
    "made to last through daily use",
)

_BULLET_TEMPLATES = (
    "{W}: {detail}",
    "{W} - {detail}",
    "{w} and {detail}",
    "{W}. {Detail}",
)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _features(draw: Draw, ptype: ProductType, attributes: list[str]) -> list[str]:
    details = list(ptype.details) or list(_GENERIC_DETAILS)
    bullets = []
    for name in attributes:
        if not draw.chance(_IN_BULLETS):
            continue  # nor into the bullet points: some only the attribute list knows
        wording = _wording(draw, ATTRIBUTES[name], _BULLET_CANONICAL)
        detail = draw.choice(details)
        template = draw.choice(_BULLET_TEMPLATES)
        bullets.append(
            template.format(W=wording.upper(), w=_cap(wording), detail=detail, Detail=_cap(detail))
        )
    bullets.append(_cap(draw.choice(details)) + ", " + draw.choice(_GENERIC_DETAILS))
    return bullets


def _options(draw: Draw, ptype: ProductType) -> list[list[Any]]:
    out = []
    for name, values in ptype.options:
        k = 2 + draw.below(min(5, len(values) - 1))
        chosen = set(draw.sample(values, k))
        out.append([name, [v for v in values if v in chosen]])  # keep the lexicon's order
    return out


def _price(draw: Draw, ptype: ProductType, scale: float = 1.0) -> float:
    low, high = ptype.price
    dollars = int(draw.uniform(low, high) * scale)
    cents = draw.choice((0.99, 0.49, 0.95, 0.0, 0.29, 0.89))
    return round(max(1, dollars) + cents, 2)


def _asin(draw: Draw, taken: set[str]) -> str:
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    while True:
        asin = "B0" + "".join(alphabet[draw.below(36)] for _ in range(8))
        if asin not in taken:
            taken.add(asin)
            return asin


_FAMILY_SIZES = (1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 8)
"""Products per near-duplicate family (mean 3.5): a goal's target usually has look-alikes."""
_PRICE_TIERS = (0.4, 0.6, 1.0, 1.6, 2.5, 4.0)
"""A family's price scale on its type's range: budget to premium lines, so a search's top
results straddle a goal's price ceiling."""
_SAME_BRAND = 0.4
"""Chance that a family's later variant keeps the first one's brand (else another brand of the
category sells the same product: cross-brand near-duplicates, as on Amazon)."""


def _family(seed: int, number: int, taken: set[str]) -> list[list[Any]]:
    """One product, as sold by one or more brands, in 1-8 near-duplicate variants.

    The first variant is the family's base; every later one differs from it in exactly one
    thing: one attribute swapped for another of the type, the values of one option group, or
    the price (out to 0.6-1.8x, so often past a goal's ceiling). Every variant's price also
    moves by up to 10%, and most variants are sold by another brand of the category.
    """
    draw = Draw(f"webshop:{seed}:family:{number}")
    ptype = PRODUCT_TYPES[draw.below(len(PRODUCT_TYPES))]
    first_brand = draw.choice(BRANDS[ptype.category])
    pool = list(ptype.attributes)
    base_attrs = draw.sample(pool, 4 + draw.below(3))
    base_options = _options(draw, ptype)
    base_price = _price(draw, ptype, _PRICE_TIERS[draw.below(len(_PRICE_TIERS))])
    head = draw.choice(ptype.heads)
    rows = []
    for variant in range(draw.choice(_FAMILY_SIZES)):
        attrs = list(base_attrs)
        options = [[name, list(values)] for name, values in base_options]
        price = base_price
        brand = first_brand
        if variant:
            if not draw.chance(_SAME_BRAND):
                brand = draw.choice(BRANDS[ptype.category])
            kind = draw.below(3)
            spare = [a for a in pool if a not in attrs]
            if kind == 0 and spare:  # misses a goal by one attribute
                attrs[draw.below(len(attrs))] = draw.choice(spare)
            elif kind == 1 and options:  # by one option value
                group = draw.below(len(options))
                name, values = options[group]
                choices = [v for v in dict(ptype.options)[name] if v not in values]
                if choices and len(values) > 1:
                    values = list(values)
                    values[draw.below(len(values))] = draw.choice(choices)
                    order = dict(ptype.options)[name]
                    options[group] = [name, [v for v in order if v in values]]
            else:  # by the price
                price = base_price * draw.uniform(0.5, 2.0)
            price = round(max(1.0, price * draw.uniform(0.9, 1.1)), 2)
        product_seed = int(draw.random() * 2**31)
        title = _title(draw, brand, head if draw.chance(0.75) else draw.choice(ptype.heads), attrs)
        rows.append(
            [
                _asin(draw, taken),
                title,
                price,
                ptype.key,
                number,
                attrs,
                options,
                _features(draw, ptype, attrs),
                list(title_nouns(title, ptype)),
                product_seed,
            ]
        )
    return rows


PRODUCT_FIELDS = (
    "asin",
    "title",
    "price",
    "type",
    "family",
    "attributes",
    "options",
    "features",
    "title_nouns",
    "seed",
)
"""Column names of a catalog row."""

GOAL_FIELDS = ("goal_id", "split", "product", "instruction", "attributes", "options", "price_upper")
"""Column names of a goal row."""


# ----------------------------------------------------------------------------------- goals

PRICE_STEPS = tuple(range(10, 1000, 10))
"""WebShop's ``PRICE_RANGE``: 10, 20, ..., 990."""
NO_CEILING = 1_000_000.0


def price_ceiling(draw: Draw, price: float) -> float:
    """WebShop's price ceiling: of the first four multiples of 10 above the price, the larger of
    two drawn without replacement (so the 2nd, 3rd or 4th with odds 1:2:3); no ceiling (and no
    price text) from $980 up."""
    above = [p for p in PRICE_STEPS if p > price][:4]
    if len(above) < 2:
        return NO_CEILING
    a, b = draw.sample(above, 2)
    return float(max(a, b))


def goal_counts(size: int) -> tuple[int, int]:
    """``(train, test)`` goal counts for a catalog of ``size`` products: a quarter of the
    catalog size, at most 10,000, a fifth of them (at most 500, WebShop's test size) test."""
    total = min(size // 4, 10_000)
    test = min(500, total // 5)
    return total - test, test


_OPENERS = (
    "i'm looking for",
    "i need",
    "i want",
    "find me",
    "i would like",
    "can you find me",
    "please get me",
    "show me",
    "i am searching for",
    "help me find",
    "i want to buy",
    "get me",
    "i'd like to order",
    "search for",
)


def _is_plural(name: str) -> bool:
    head = re.split(r" (?:of|for|with|to|next|made) ", name)[0]
    return head.endswith("s") and not head.endswith("ss")


def _article(draw: Draw, ptype: ProductType, name: str, words: str) -> str:
    if ptype.plural and draw.chance(0.6):
        return ptype.plural
    if _is_plural(name):
        return "some"
    return "an" if words[:1] in "aeiou" else "a"


def _option_phrase(draw: Draw, name: str, value: str) -> str:
    if name == "color":
        forms = ("in {v}", "in {v} color", "in the color {v}", "color {v}")
    elif name == "size":
        forms = ("in size {v}", "size {v}", "in {v}", "{v} size")
    else:
        forms = ("{v} {n}", "with {n} {v}", "in {v}", "{n}: {v}")
    return draw.choice(forms).format(v=value, n=name)


_DISTRACTORS = (
    "my old one finally broke",
    "it is a gift for my mom",
    "for my sister's birthday",
    "we just moved into a new apartment",
    "nothing too fancy",
    "something that will last",
    "for the office",
    "my kids keep asking for it",
    "i am going on a trip next week",
    "the one i have is worn out",
    "for my husband",
    "my friend recommended it",
    "something for everyday use",
    "for the weekend",
    "as a present for a coworker",
    "i ran out of mine",
)
"""Words in an instruction that name nothing about the product, as WebShop's crowd-written
instructions have ("for my daughter", "my old one broke")."""
_OTHER_TYPE_PHRASES = (
    "to go with my {x}",
    "i already have the {x}",
    "to match my new {x}",
    "not the {x}",
)
"""Distractors that name another product type of the same category, as human instructions do
("to go with my new jeans"): a word-matching search may rank that type first."""
_DISTRACTOR_SHARE = 0.7
_OTHER_TYPE_SHARE = 0.75
_ATTRIBUTE_COUNTS = (2, 3, 4)
_ATTRIBUTE_COUNTS_NO_OPTIONS = (3, 4)
"""How many attributes a goal names (2-4; every product has at least 4); a goal that names no
option names 3 or 4, so that buying any product of the type in budget rarely meets it."""
_OPTION_COUNTS = (0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2)
"""How many option groups a goal names (0-2; WebShop's human goals name 0-2 options)."""


def _instruction(
    draw: Draw, ptype: ProductType, attrs: list[str], options: list[tuple[str, str]], ceiling: float
) -> str:
    name = draw.choice(ptype.goal_names)
    adjs, tails = [], []
    for canonical in attrs:
        attribute = ATTRIBUTES[canonical]
        wording = _wording(draw, attribute, _INSTRUCTION_CANONICAL)
        if attribute.form == "adj":
            adjs.append(wording)
        else:
            tails.append(f"{attribute.form} {wording}")
    style = draw.below(3)
    if style == 0 or not adjs:
        core = " ".join([*adjs, name])
        phrase = f"{_article(draw, ptype, name, core)} {core}"
    elif style == 1:
        verb = "are" if _is_plural(name) else "is"
        phrase = f"{_article(draw, ptype, name, name)} {name} that {verb} {' and '.join(adjs)}"
    else:
        phrase = f"{_article(draw, ptype, name, name)} {name}, it should be {' and '.join(adjs)}"
    if tails:
        phrase += " " + " and ".join(tails)
    text = f"{draw.choice(_OPENERS)} {phrase}"
    if draw.chance(_DISTRACTOR_SHARE):
        distractor = draw.choice(_DISTRACTORS)
        if draw.chance(_OTHER_TYPE_SHARE):
            others = [t for t in PRODUCT_TYPES if t.category == ptype.category and t is not ptype]
            other = draw.choice(draw.choice(others).goal_names)
            distractor = draw.choice(_OTHER_TYPE_PHRASES).format(x=other)
        if draw.chance(0.5):
            text = f"{distractor}, so {text}"
        else:
            text += f", {distractor}"
    if options:
        if draw.chance(0.3):  # WebShop's synthetic-goal wording
            text += " with " + ", and ".join(f"{n}: {v}" for n, v in options)
        else:
            parts = [_option_phrase(draw, n, v) for n, v in options]
            joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
            text += (", " if draw.chance(0.5) else " ") + joined
    if ceiling < NO_CEILING:
        text += f", and price lower than {ceiling:.2f} dollars"
    return text


def _goals(size: int, seed: int, rows: list[list[Any]]) -> list[list[Any]]:
    """One goal per target product; test and train targets come from disjoint families."""
    train_count, test_count = goal_counts(size)
    by_family: dict[int, list[int]] = {}
    for index, row in enumerate(rows):
        by_family.setdefault(row[4], []).append(index)
    families = sorted(by_family)
    draw = Draw(f"webshop:{seed}:goals:{size}")
    order = draw.sample(families, len(families))
    goals = []
    for k, family in enumerate(order[: train_count + test_count]):
        split = "test" if k < test_count else "train"
        members = by_family[family]
        index = members[draw.below(len(members))]
        _asin_, _title_, price, type_key, _f, attrs, options, *_ = rows[index]
        ptype = next(t for t in PRODUCT_TYPES if t.key == type_key)
        groups = draw.sample(options, min(len(options), draw.choice(_OPTION_COUNTS)))
        counts = _ATTRIBUTE_COUNTS if groups else _ATTRIBUTE_COUNTS_NO_OPTIONS
        goal_attrs = draw.sample(attrs, draw.choice(counts))
        goal_options = [(name, draw.choice(values)) for name, values in groups]
        ceiling = price_ceiling(draw, price)
        number = k if split == "test" else k - test_count
        goals.append(
            [
                f"{split}-{number:05d}",
                split,
                index,
                _instruction(draw, ptype, goal_attrs, goal_options, ceiling),
                goal_attrs,
                [list(o) for o in goal_options],
                ceiling,
            ]
        )
    return goals


# -------------------------------------------------------------------------------- catalog


def generate_catalog_data(size: int, seed: int) -> dict[str, Any]:
    """The catalog of ``size`` products and its goals as JSON-ready data.

    Args:
        size: Number of products.
        seed: Generator seed; the same seed always gives the same data.
    """
    taken: set[str] = set()
    rows: list[list[Any]] = []
    number = 0
    while len(rows) < size:
        rows.extend(_family(seed, number, taken))
        number += 1
    rows = rows[:size]
    return {
        "format": "gui-gym/webshop-catalog",
        "version": 1,
        "generator": GENERATOR_VERSION,
        "size": size,
        "seed": seed,
        "product_fields": list(PRODUCT_FIELDS),
        "goal_fields": list(GOAL_FIELDS),
        "products": rows,
        "goals": _goals(size, seed, rows),
    }


# -------------------------------------------------------------------------- lazy product text

_DESCRIPTION_OPENERS = (
    "Meet the {brand} {head}.",
    "The {head} from {brand} is here.",
    "Introducing the {brand} {head}.",
    "{brand} made this {head} for people who want more.",
)
_DESCRIPTION_LINES = (
    "It is {w}, so you can count on it every day.",
    "We made it {w} because our customers asked for it.",
    "Expect {detail} and a result you will notice.",
    "Every order is checked by hand before it ships.",
    "Pair it with the rest of the {brand} line for the best results.",
    "If you are not happy, contact us and we will make it right.",
)
_REVIEWS = (
    (5, "Exactly what I was looking for. {Detail} and it arrived quickly."),
    (5, "Love it! {W} as described. Will buy again."),
    (4, "Good value for the price. {Detail}, though shipping took a while."),
    (4, "Works well. I wish it came in more options."),
    (3, "It is okay. Not sure it is really {w}."),
    (2, "Smaller than I expected and the packaging was damaged."),
    (1, "Did not work for me. Returned it."),
    (5, "My second one already. {Detail}."),
)


def write_details(
    seed: int, brand: str, head: str, ptype: ProductType, attributes: Sequence[str]
) -> tuple[str, tuple[tuple[int, str], ...]]:
    """A product's description and reviews ``((stars, text), ...)``, written from its seed."""
    draw = Draw(f"details:{seed}")
    details = list(ptype.details) or list(_GENERIC_DETAILS)
    sentences = [draw.choice(_DESCRIPTION_OPENERS).format(brand=brand, head=head.lower())]
    for name in attributes:
        line = draw.choice(_DESCRIPTION_LINES)
        sentences.append(
            line.format(
                w=_wording(draw, ATTRIBUTES[name], 0.3), detail=draw.choice(details), brand=brand
            )
        )
    sentences.append(_cap(draw.choice(details)) + ".")
    reviews = []
    for _ in range(2 + draw.below(3)):
        stars, template = draw.choice(_REVIEWS)
        wording = _wording(draw, ATTRIBUTES[draw.choice(attributes)], 0.5) if attributes else ""
        detail = draw.choice(details)
        reviews.append((stars, template.format(W=_cap(wording), w=wording, Detail=_cap(detail))))
    return " ".join(sentences), tuple(reviews)
