"""UnicodeText: any unicode string of admissible length, through vector-env plumbing."""

from __future__ import annotations

import copy

import numpy as np
from gymnasium.spaces.utils import flatten, unflatten
from gymnasium.vector.utils import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from gui_gym.core.spaces import UnicodeText


def test_contains_any_unicode_within_length() -> None:
    space = UnicodeText(10)
    assert space.contains("Café 中文 😀")
    assert space.contains("")
    assert not space.contains("x" * 11)
    assert not space.contains(b"bytes")
    assert not UnicodeText(10, min_length=2).contains("a")


def test_samples_are_contained() -> None:
    space = UnicodeText(50, seed=0)
    assert all(space.contains(space.sample()) for _ in range(100))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_flatten_round_trip(text: str) -> None:
    space = UnicodeText(30)
    assert unflatten(space, flatten(space, text)) == text


def test_shared_memory_round_trip() -> None:
    space = UnicodeText(16)
    memory = create_shared_memory(space, n=2)
    write_to_shared_memory(space, 0, "héllo 😀", memory)
    write_to_shared_memory(space, 1, "\x00nul", memory)
    view = read_from_shared_memory(space, memory, n=2)
    assert view == ("héllo 😀", "\x00nul")
    write_to_shared_memory(space, 0, "later", memory)
    assert view[0] == "later"  # a live view, as AsyncVectorEnv expects
    assert copy.deepcopy(view) == ("later", "\x00nul") and isinstance(copy.deepcopy(view), tuple)


def test_equality_and_hash() -> None:
    assert UnicodeText(5) == UnicodeText(5)
    assert UnicodeText(5) != UnicodeText(6)
    assert len({UnicodeText(5), UnicodeText(5)}) == 1
    assert np.asarray(flatten(UnicodeText(3), "ab")).dtype == np.int32
