"""Sentence embeddings: ProgRM's step similarity and ADMIRE's milestone matching compare
texts by the cosine of their embeddings.

* :mod:`~gui_gym.models.embeddings.embedders`: the :class:`Embedder` protocol's
  implementations, :class:`SentenceEmbedder` (sentence-transformers, the offline
  all-MiniLM-L6-v2 by default) and :class:`HashingEmbedder` (hashed n-grams, no dependency,
  for tests), with :func:`default_embedder` and :func:`cosine_matrix`;
* :mod:`~gui_gym.models.embeddings.cache`: :class:`BatchLRUCache`, the bounded cache filled in
  batches that the embedders and the milestone matchers keep their model outputs in.

The protocol itself is :class:`gui_gym.rewards.embedding.Embedder` (re-exported here).
Every public name is importable from here; sentence-transformers is imported only when a
:class:`SentenceEmbedder` is built.
"""

from gui_gym.models.embeddings.cache import BatchLRUCache
from gui_gym.models.embeddings.embedders import (
    Embedder,
    HashingEmbedder,
    SentenceEmbedder,
    cosine_matrix,
    default_embedder,
)

__all__ = [
    "BatchLRUCache",
    "Embedder",
    "HashingEmbedder",
    "SentenceEmbedder",
    "cosine_matrix",
    "default_embedder",
]
