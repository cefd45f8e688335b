"""The ``Embedder`` protocol the similarity formulas need (Soft-LCS, milestone matching).

It lives here, beside the formulas that use it, so ``rewards/`` never imports from
``models/``; ``gui_gym.models.embeddings`` implements it (MiniLM, hashed bag-of-words) and
re-exports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder"]


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into L2-normalised float32 rows (``(len(texts), dim)``)."""

    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...
