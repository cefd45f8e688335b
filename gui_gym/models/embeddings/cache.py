"""A bounded least-recently-used map filled in batches, for model outputs that are cheaper per
item in one call (sentence embeddings, judge answers)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

__all__ = ["BatchLRUCache"]


class BatchLRUCache(Generic[K, V]):
    """Keeps up to ``size`` values, dropping the least recently used first.

    :meth:`get_many` looks every key up and computes the missing ones in one call, each
    distinct key once. The lock guards the map, not the computation: two threads missing the
    same key may both compute it (the values are deterministic, so either is kept).

    Args:
        size: Most values kept (0 keeps none: every call computes what it needs).

    Raises:
        ValueError: for a negative size.
    """

    def __init__(self, size: int):
        if size < 0:
            raise ValueError(f"cache size must be >= 0, got {size}")
        self.size = size
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get_many(self, keys: Sequence[K], compute: Callable[[list[K]], Sequence[V]]) -> list[V]:
        """The value of each key, in order; ``compute(missing)`` gives the values of the
        distinct keys not cached, in the order asked.

        Raises:
            ValueError: when ``compute`` returns a different number of values.
        """
        with self._lock:
            missing = [k for k in dict.fromkeys(keys) if k not in self._data]
        fresh: dict[K, V] = {}
        if missing:
            values = compute(missing)
            if len(values) != len(missing):
                raise ValueError(f"computed {len(values)} values for {len(missing)} keys")
            fresh = dict(zip(missing, values))
        with self._lock:
            out = []
            for key in keys:
                if key in fresh:
                    out.append(fresh[key])
                else:
                    out.append(self._data[key])
                    self._data.move_to_end(key)
            self._data.update(fresh)
            while len(self._data) > self.size:
                self._data.popitem(last=False)
        return out
