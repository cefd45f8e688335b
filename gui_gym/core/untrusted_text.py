"""Reading untrusted text (model output, user files) in linear time, without recursion.

Model output is adversarial by accident: an LLM can degenerate into thousands of spaces,
repeated tags or ``[[[[``. Everything here is linear by construction (string scanning, or
regexes with no two quantifiers that can match the same characters), so no input makes a
rollout stall (a cubic fence regex once took 20 s on 4,000 spaces).

``json.loads`` recurses once per nesting level, so ``"[" * 100000`` from a degenerate
model raises ``RecursionError`` (or worse, in code that walks the result). :func:`load_json`
measures the nesting depth first with a linear scan and refuses anything deeper than
``max_depth`` with a ``ValueError`` naming the limit, so every caller handles one error type.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "MAX_JSON_DEPTH",
    "json_nesting_depth",
    "load_json",
    "strip_code_fence",
    "tagged_blocks",
    "without_lone_surrogates",
]

_LANGUAGE_TAG = re.compile(r"[A-Za-z]*", re.ASCII)

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects :func:`load_json` accepts by default; gui-gym's own
files and the JSON models are asked for are at most a few levels deep."""


def json_nesting_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in ``text``, ignoring brackets inside strings.

    A single linear pass; malformed text still gets a number (the parser reports the rest).
    """
    if text.count("[") + text.count("{") <= 1:
        return text.count("[") + text.count("{")
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest


def load_json(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` for untrusted text: one ``ValueError`` for every way it can be bad.

    Args:
        text: The JSON text (bytes are decoded as UTF-8).
        max_depth: Deepest nesting of arrays/objects accepted.

    Returns:
        The decoded value.

    Raises:
        ValueError: invalid UTF-8, invalid JSON (a ``json.JSONDecodeError``, which says where),
            nesting deeper than ``max_depth``, or a number too long to convert.
    """
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(f"not valid UTF-8 ({err})") from None
    depth = json_nesting_depth(text)
    if depth > max_depth:
        raise ValueError(f"JSON nested {depth} levels deep; at most {max_depth} are accepted")
    try:
        return json.loads(text)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ValueError(f"JSON nested too deeply (limit {max_depth})") from None


def tagged_blocks(text: str, tag: str) -> list[str]:
    """The contents of every ``<tag>...</tag>`` block in ``text``, in order (case-insensitive
    tags, no nesting: a block ends at the first closing tag after it opens).

    Each search starts where the last one ended, so repeated or unclosed tags cost no more
    than their length. A block whose closing tag is missing is not returned.
    """
    open_tag = re.compile(re.escape(f"<{tag}>"), re.IGNORECASE)
    close_tag = re.compile(re.escape(f"</{tag}>"), re.IGNORECASE)
    blocks: list[str] = []
    position = 0
    while True:
        start = open_tag.search(text, position)
        if start is None:
            return blocks
        end = close_tag.search(text, start.end())
        if end is None:
            return blocks
        blocks.append(text[start.end() : end.start()])
        position = end.end()


def strip_code_fence(text: str, *, not_tags: frozenset[str] = frozenset()) -> str:
    """The stripped body of ``text`` when it is one Markdown code fence, else ``text``.

    A language tag (a word right after the opening fence, followed by white space) is
    dropped unless its upper-case form is in ``not_tags`` (``CLICK`` in ```` ```CLICK(3)``` ````
    is the content, not a tag).
    """
    if len(text) < 6 or not text.startswith("```") or not text.endswith("```"):
        return text
    body = text[3:-3]
    tag = _LANGUAGE_TAG.match(body)
    name = tag.group(0) if tag else ""
    rest = body[len(name) :]
    if name and name.upper() not in not_tags and (not rest or rest[0].isspace()):
        body = rest
    return body.strip()


def without_lone_surrogates(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD.

    A ``\\ud83d`` escape in model output (or JSON) decodes to a lone surrogate, which no
    encoder accepts: left in, it reaches the screen and crashes every writer downstream.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
