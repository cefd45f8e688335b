"""WebShop search kernels: the numba-compiled loops and the numpy fallback, full pass and
block-max, give the same top k in the same order (ties in catalog order) on hand-built
indexes, including ones where float32 rounding depends on the order terms are added in.

The catalog-backed check (every goal of the 1,000 catalog, both kernels) is in
tests/test_webshop.py; the 1,000,000 figure is ``benchmarks/bench_webshop.py --search-only``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled

from gui_gym.envs.webshop import search as search_module
from gui_gym.envs.webshop.search import SearchIndex
from tests.conftest import require

PATHS = ("numpy full", "compiled full", "numpy block", "compiled block")


def _index(postings: list[dict[int, float]], num_docs: int, groups=None) -> SearchIndex:
    """A SearchIndex over hand-written columns: postings[t] maps product -> BM25 weight (kept
    in the dict's order, so columns need not be sorted by product)."""
    indptr = np.cumsum([0] + [len(p) for p in postings]).astype(np.int64)
    indices = np.array([d for p in postings for d in p], dtype=np.int32)
    data = np.array([w for p in postings for w in p.values()], dtype=np.float32)
    vocab = {f"t{i}": i for i in range(len(postings))}
    return SearchIndex(data, indices, indptr, vocab, num_docs, groups)


def _path(index: SearchIndex, path: str, block_size: int = 2) -> SearchIndex:
    """A copy of ``index`` searching one way (the copies share the arrays)."""
    if path.startswith("compiled"):
        require("numba", "webshop")
    copy = SearchIndex(
        index.data, index.indices, index.indptr, index.vocab, index.num_docs, index.groups
    )
    copy.compiled = path.startswith("compiled")
    copy.blocks_from = 0 if path.endswith("block") else 10**12
    copy.block_size = block_size
    return copy


@pytest.mark.parametrize("path", PATHS)
def test_ties_go_to_the_earlier_product_not_the_earlier_block(path: str) -> None:
    # scores: d0 1.0, d1 2.0, d2 2.0, d3 0.25, d4 2.0, d5 2.0; the layout puts d3-d5 (group
    # "a") before d0-d2 (group "b"), yet equal scores come back in catalog order
    postings = [{5: 0.5, 0: 1.0, 2: 2.0, 4: 1.0}, {1: 2.0, 4: 1.0, 5: 1.5, 3: 0.25}]
    index = _path(_index(postings, 6, ["b", "b", "b", "a", "a", "a"]), path)
    assert index.search("t0 t1", 50) == (1, 2, 4, 5, 0, 3)
    assert index.search("t0 t1", 3) == (1, 2, 4)
    assert index.search("t1", 2) == (1, 5)
    assert index.search("t0 t1", 0) == ()
    assert index.search("t0 t1", 10**15) == (1, 2, 4, 5, 0, 3)  # no 10**15-entry heap
    assert index.search("t9 zzz", 5) == () and index.search("", 5) == ()


@pytest.mark.parametrize("path", PATHS)
def test_scores_are_added_in_the_querys_term_order(path: str) -> None:
    # float32: (1 + 2^-24) + 2^-24 rounds to 1.0 twice, (2^-24 + 2^-24) + 1 is 1 + 2^-23.
    # Product 1 holds 1, 2^-24, 2^-24 under t0, t1, t2; product 0 holds 1.0 under t3.
    tiny = 2.0**-24
    postings = [{1: 1.0}, {1: tiny}, {1: tiny}, {0: 1.0}]
    index = _path(_index(postings, 2, ["a", "b"]), path, block_size=1)
    assert index.search("t0 t1 t2 t3") == (0, 1)  # a tie at 1.0: catalog order
    assert index.search("t1 t2 t0 t3") == (1, 0)  # 1 + 2^-23 beats 1.0
    assert index.search("t3 t0 t1 t2") == (0, 1)
    reference = index.scores("t1 t2 t0 t3")
    assert reference.dtype == np.float32 and reference[1] == np.float32(1 + 2 * tiny)


def test_every_path_agrees_on_random_tie_heavy_indexes() -> None:
    """Weights from a set of four values (so most scores tie), unsorted columns, groups that
    scatter the catalog order across blocks, a partial last block, repeated query terms,
    k from 1 to more than match: the four paths return the same tuples."""
    require("numba", "webshop")
    rng = np.random.default_rng(0)
    checked = 0
    for num_docs, terms, block_size in ((1, 2, 4), (57, 9, 5), (300, 25, 16), (1000, 40, 64)):
        postings = []
        for _ in range(terms):
            docs = rng.choice(num_docs, size=rng.integers(0, num_docs + 1), replace=False)
            postings.append({int(d): float(rng.choice([0.25, 0.5, 1.0, 1.75])) for d in docs})
        groups = [f"g{g}" for g in rng.integers(0, 7, size=num_docs)]
        base = _index(postings, num_docs, groups)
        indexes = [_path(base, path, block_size) for path in PATHS]
        for _ in range(40):
            query = " ".join(f"t{t}" for t in rng.integers(0, terms + 2, size=rng.integers(1, 9)))
            for k in (1, 3, 50, num_docs + 5):
                answers = [index.search(query, k) for index in indexes]
                assert all(a == answers[0] for a in answers), (num_docs, query, k, answers)
                scores = base.scores(query)
                ranked = sorted(np.flatnonzero(scores), key=lambda d: (-scores[d], d))[:k]
                assert answers[0] == tuple(int(d) for d in ranked)
                checked += 1
    assert checked == 4 * 40 * 4


def test_the_compiled_layout_is_the_numpy_layout() -> None:
    require("numba", "webshop")
    rng = np.random.default_rng(1)
    num_docs, terms = 500, 30
    postings = []
    for _ in range(terms):
        docs = rng.choice(num_docs, size=rng.integers(0, 200), replace=False)
        postings.append({int(d): float(rng.random()) for d in docs})
    groups = [f"g{g}" for g in rng.integers(0, 5, size=num_docs)]
    compiled = _path(_index(postings, num_docs, groups), "compiled block", block_size=32)
    plain = _path(_index(postings, num_docs, groups), "numpy block", block_size=32)
    a, b = compiled._build_blocks(), plain._build_blocks()
    for name in ("products", "positions", "data", "offsets", "block_max"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert compiled.layout_nbytes == plain.layout_nbytes > 0


def test_blocks_are_skipped_and_the_first_bound_is_scored_first() -> None:
    require("numba", "webshop")
    # t0 is strong in block 0 and weak in the other nine: a k = 2 search needs block 0 only;
    # the compiled loop scores it alone, the numpy loop its first chunk of four blocks
    postings = [{0: 5.0, 1: 4.0, **{d: 0.1 for d in range(4, 40)}}]
    for path, scored in (("compiled block", 1), ("numpy block", 4)):
        index = _path(_index(postings, 40, ["g"] * 40), path, block_size=4)
        assert index.search("t0", 2) == (0, 1)
        assert index.blocks_scored == scored, path
        assert index.search("t0", 3) == (0, 1, 4)  # the third best is in block 1: scored too


def test_threads_searching_at_once_build_the_layout_once(monkeypatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(2)
    postings = [{int(d): 1.0 + (d % 3) for d in rng.choice(400, 150, replace=False)}]
    postings += [{int(d): 0.5 for d in rng.choice(400, 200, replace=False)}]
    index = _index(postings, 400, [f"g{i % 4}" for i in range(400)])
    index.blocks_from, index.block_size = 0, 8
    builds = []
    real_build = SearchIndex._build_blocks

    def counted(self):
        builds.append(1)
        return real_build(self)

    monkeypatch.setattr(SearchIndex, "_build_blocks", counted)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda k: index._search(("t0", "t1"), k), [20] * 16))
    assert builds == [1] and len(set(answers)) == 1 and len(answers[0]) == 20


@pytest.mark.parametrize("k", [-1, 1.5, "3", True, None])
def test_k_must_be_a_non_negative_int(k) -> None:
    index = _index([{0: 1.0}], 1)
    with pytest.raises(ValueError, match="k must be a non-negative int"):
        index.search("t0", k)
    assert index.search("t0", np.int64(1)) == (0,)


def test_the_compiled_loops_are_the_default_when_numba_is_installed() -> None:
    require("numba", "webshop")
    assert search_module.compiled_kernels() is not None
    index = _index([{0: 1.0}], 1)
    assert index.compiled is None and index._use_compiled()


def test_without_numba_the_numpy_loops_answer_the_same(monkeypatch) -> None:
    postings = [{2: 1.0, 0: 1.0, 1: 0.5}, {1: 0.5, 3: 2.0}]
    answers = {}
    for available, blocks_from in itertools.product((True, False), (0, 10**12)):
        if available:
            require("numba", "webshop")
        else:
            monkeypatch.setattr(search_module, "compiled_kernels", lambda: None)
        index = _index(postings, 4, ["x", "y", "x", "y"])
        index.blocks_from, index.block_size = blocks_from, 2
        assert index._use_compiled() is available
        answers[available, blocks_from] = index.search("t0 t1", 3)
    assert set(answers.values()) == {(3, 0, 1)}
    index = _index(postings, 4)
    index.compiled = True  # asked for numba, which is "missing"
    with pytest.raises(DependencyNotInstalled, match=r"gui-gym\[webshop\]"):
        index.search("t0")
