"""A text space for screens, instructions and action strings: any unicode up to a length.

Gymnasium's :class:`~gymnasium.spaces.Text` only admits characters of a fixed charset, so a
screen with an accented name or an emoji would fall outside the space and ``check_env`` would
(rightly) complain. :class:`UnicodeText` keeps ``Text``'s interface and admits every string
whose length lies in ``[min_length, max_length]``. Its vector-env plumbing (shared memory,
flatten) stores Unicode code points, so ``AsyncVectorEnv`` with shared memory round-trips any
string exactly.
"""

from __future__ import annotations

import multiprocessing as mp
import string
from collections.abc import Sequence
from ctypes import c_int32
from multiprocessing.sharedctypes import SynchronizedArray
from types import ModuleType
from typing import Any, overload

import numpy as np
from gymnasium.spaces import Box, Text
from gymnasium.spaces.utils import flatdim, flatten, flatten_space, unflatten
from gymnasium.vector.utils.shared_memory import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

__all__ = ["SharedTextBatch", "UnicodeText"]

_SAMPLE_CHARS = string.ascii_letters + string.digits + string.punctuation + " " + "éßñ中文😀\n"


class UnicodeText(Text):
    """A :class:`~gymnasium.spaces.Text` that contains every ``str`` of admissible length.

    ``sample()`` draws from printable ASCII plus a few non-ASCII characters, which is what a
    fuzzing agent needs; ``contains()`` only checks type and length.

    Args:
        max_length: Longest admissible string, in characters.
        min_length: Shortest admissible string (default 0: empty screens exist).
        seed: Seed for ``sample()``.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | None = None):
        super().__init__(max_length, min_length=min_length, charset=_SAMPLE_CHARS, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    def __hash__(self) -> int:
        return hash(("UnicodeText", self.min_length, self.max_length))

    def encode(self, x: str) -> np.ndarray:
        """Code points + 1, zero-padded to ``max_length`` (0 marks padding)."""
        if len(x) > self.max_length:
            raise ValueError(f"string of length {len(x)} exceeds max_length={self.max_length}")
        out = np.zeros(self.max_length, dtype=np.int32)
        if x:
            out[: len(x)] = np.frombuffer(x.encode("utf-32-le"), dtype=np.uint32) + 1
        return out

    def decode(self, codes: np.ndarray) -> str:
        """Inverse of :meth:`encode`."""
        codes = np.asarray(codes, dtype=np.int64)
        used = codes[codes > 0] - 1
        return used.astype(np.uint32).tobytes().decode("utf-32-le")


@flatten.register(UnicodeText)
def _flatten_unicode_text(space: UnicodeText, x: str) -> np.ndarray:
    return space.encode(x)


@unflatten.register(UnicodeText)
def _unflatten_unicode_text(space: UnicodeText, x: np.ndarray) -> str:
    return space.decode(x)


@flatdim.register(UnicodeText)
def _flatdim_unicode_text(space: UnicodeText) -> int:
    return space.max_length


@flatten_space.register(UnicodeText)
def _flatten_space_unicode_text(space: UnicodeText) -> Box:
    return Box(low=0, high=0x110000, shape=(space.max_length,), dtype=np.int32)


@create_shared_memory.register(UnicodeText)
def _create_unicode_shared_memory(
    space: UnicodeText, n: int = 1, ctx: ModuleType = mp
) -> SynchronizedArray[c_int32]:
    return ctx.Array(np.dtype(np.int32).char, n * space.max_length)


class SharedTextBatch(Sequence[str]):
    """A live, read-only view of ``n`` strings in an async vector env's shared memory.

    ``AsyncVectorEnv`` reads shared memory once, at construction, and expects a view that
    later writes show through (numpy arrays are such views). Gymnasium's own ``Text`` returns
    decoded strings there, which go stale; this view decodes on access instead, and
    ``deepcopy`` (what the vector env returns with ``copy=True``) yields a plain tuple.
    """

    def __init__(self, space: UnicodeText, data: np.ndarray):
        self._space = space
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self._space.decode(row) for row in self._data[index])
        return self._space.decode(self._data[index])

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"SharedTextBatch({tuple(self)!r})"


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_from_shared_memory(
    space: UnicodeText, shared_memory: SynchronizedArray[c_int32], n: int = 1
) -> SharedTextBatch:
    data = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length))
    return SharedTextBatch(space, data)


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_to_shared_memory(
    space: UnicodeText, index: int, values: str, shared_memory: SynchronizedArray[c_int32]
) -> None:
    size = space.max_length
    destination = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)
    np.copyto(destination[index * size : (index + 1) * size], space.encode(values))
