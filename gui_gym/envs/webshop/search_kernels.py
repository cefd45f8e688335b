"""Compiled (numba) loops of the WebShop search: the same answers as the numpy path in
``search.py``, bit for bit, several times faster.

Imported only by :func:`gui_gym.envs.webshop.search.compiled_kernels`, which falls back to
numpy when numba is not installed. Every function is compiled on first use and cached on disk
(``cache=True``: once per machine, a few seconds) and releases the GIL (``nogil=True``), so
envs searching on several threads run in parallel; buffers are allocated per call.

Exactness: a product's score is a float32 sum of its BM25 weights added term by term in the
query's order, exactly as ``scores[indices[a:b]] += data[a:b]`` adds them in numpy (no
``fastmath``, so no reassociation). The top ``k`` is kept in a heap ordered by score, then by
product index, which is the numpy path's ``lexsort((products, -scores))[:k]``, and returned
in that order.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["block_layout", "block_top_k", "full_top_k"]

_jit = numba.njit(cache=True, nogil=True)


@_jit
def _worse(s1: float, d1: int, s2: float, d2: int) -> bool:
    """Whether (score s1, product d1) ranks below (s2, d2): lower score, or the same score
    and a later product."""
    return s1 < s2 or (s1 == s2 and d1 > d2)


@_jit
def _push(heap_s: np.ndarray, heap_d: np.ndarray, n: int, s: float, d: int) -> int:
    """Offer (s, d) to the min-heap of the ``len(heap_s)`` best so far (root: the worst);
    returns the heap's new size."""
    k = heap_s.shape[0]
    if n < k:  # not full: sift up from the end
        j = n
        n += 1
        while j > 0:
            parent = (j - 1) // 2
            if _worse(s, d, heap_s[parent], heap_d[parent]):
                heap_s[j] = heap_s[parent]
                heap_d[j] = heap_d[parent]
                j = parent
            else:
                break
        heap_s[j] = s
        heap_d[j] = d
        return n
    if not _worse(heap_s[0], heap_d[0], s, d):
        return n  # no better than the worst kept
    _sift_down(heap_s, heap_d, n, s, d)  # replaces the root
    return n


@_jit
def _sift_down(heap_s: np.ndarray, heap_d: np.ndarray, size: int, s: float, d: int) -> None:
    """Put (s, d) at the root of the heap's first ``size`` entries and sift it down."""
    j = 0
    while True:
        child = 2 * j + 1
        if child >= size:
            break
        right = child + 1
        if right < size and _worse(heap_s[right], heap_d[right], heap_s[child], heap_d[child]):
            child = right
        if _worse(heap_s[child], heap_d[child], s, d):
            heap_s[j] = heap_s[child]
            heap_d[j] = heap_d[child]
            j = child
        else:
            break
    heap_s[j] = s
    heap_d[j] = d


@_jit
def _drain(heap_s: np.ndarray, heap_d: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The heap's ``n`` entries best first (equal scores in catalog order), by popping the
    worst into the last free slot."""
    scores = np.empty(n, np.float32)
    docs = np.empty(n, np.int64)
    for last in range(n - 1, -1, -1):
        scores[last] = heap_s[0]
        docs[last] = heap_d[0]
        # the last leaf, sifted down from the root over the entries still in the heap
        _sift_down(heap_s, heap_d, last, heap_s[last], heap_d[last])
    return scores, docs


@_jit
def full_top_k(
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    columns: np.ndarray,
    num_docs: int,
    k: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Score every product (term at a time over the CSC columns, in ``columns`` order) and
    keep the ``k`` best with a positive score. Returns (scores, products), best first."""
    scores = np.zeros(num_docs, np.float32)
    for c in columns:
        for j in range(indptr[c], indptr[c + 1]):
            scores[indices[j]] += data[j]
    heap_s = np.empty(k, np.float32)
    heap_d = np.empty(k, np.int64)
    n = 0
    for d in range(num_docs):
        if scores[d] > 0:
            n = _push(heap_s, heap_d, n, scores[d], d)
    return _drain(heap_s, heap_d, n)


@_jit
def block_layout(
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    where: np.ndarray,
    block_size: int,
    blocks: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The postings renumbered to positions (``where[product]``) and grouped by (term, block)
    with a counting sort, keeping the CSC order inside a group (what a stable sort on the
    (term, block) key gives). Returns (positions int32, data float32, offsets int64 of shape
    (terms, blocks + 1): a term's first posting in block b or later, block maxima float32 of
    shape (terms, blocks))."""
    terms = indptr.shape[0] - 1
    offsets = np.zeros((terms, blocks + 1), np.int64)
    block_max = np.zeros((terms, blocks), np.float32)
    positions = np.empty(indices.shape[0], np.int32)
    out = np.empty(data.shape[0], np.float32)
    fill = np.empty(blocks, np.int64)
    for t in range(terms):
        a, b = indptr[t], indptr[t + 1]
        for j in range(a, b):
            offsets[t, where[indices[j]] // block_size + 1] += 1
        offsets[t, 0] = a
        for blk in range(1, blocks + 1):
            offsets[t, blk] += offsets[t, blk - 1]
        for blk in range(blocks):
            fill[blk] = offsets[t, blk]
        for j in range(a, b):
            p = where[indices[j]]
            blk = p // block_size
            slot = fill[blk]
            fill[blk] = slot + 1
            positions[slot] = p
            out[slot] = data[j]
            if data[j] > block_max[t, blk]:
                block_max[t, blk] = data[j]
    return positions, out, offsets, block_max


@_jit
def block_top_k(
    columns: np.ndarray,
    order: np.ndarray,
    bound: np.ndarray,
    positions: np.ndarray,
    data: np.ndarray,
    offsets: np.ndarray,
    products: np.ndarray,
    block_size: int,
    k: int,
) -> tuple[np.ndarray, np.ndarray, int]:
    """The ``k`` best products by block-max pruning (see ``SearchIndex._block_search``):
    blocks scored whole in ``order`` (highest ``bound`` first) until the next bound is below
    the k-th best. Returns (scores, products, blocks scored), best first."""
    num_docs = products.shape[0]
    local = np.zeros(block_size, np.float32)
    heap_s = np.empty(k, np.float32)
    heap_d = np.empty(k, np.int64)
    n = 0
    scored = 0
    for blk in order:
        # float32 sums may round a little above the sum of maxima: widen the bound
        limit = bound[blk] * (1 + 1e-5) + 1e-6
        if bound[blk] <= 0 or (n == k and limit < heap_s[0]):
            break  # neither this block nor any later one can reach (or tie into) the top k
        scored += 1
        base = blk * block_size
        for c in columns:
            for j in range(offsets[c, blk], offsets[c, blk + 1]):
                local[positions[j] - base] += data[j]
        for p in range(min(block_size, num_docs - base)):
            if local[p] > 0:
                n = _push(heap_s, heap_d, n, local[p], products[base + p])
                local[p] = 0
    scores, docs = _drain(heap_s, heap_d, n)
    return scores, docs, scored
