"""BM25 search over the catalog (``bm25s``), built once per catalog and cached on disk.

WebShop searches with Pyserini's BM25 (k1 = 0.9, b = 0.4) and returns the top 50 products
(``SEARCH_RETURN_N``). We index, per product, its title, attributes and bullet points with the
same BM25 parameters using ``bm25s`` (no Java), lower-cased, split on non-alphanumerics, plural
``s`` stripped, and a short stopword list removed.

The index is keyed by the catalog's hash and saved under the cache folder as
``index-<hash>/`` (bm25s's ``.npy`` arrays, no pickle, plus our ``meta.json``). It is built in
a temp folder beside it and renamed into place, so concurrent processes either see a whole
index or none; when two build at once, the first rename wins and the other is discarded.

Results are deterministic: ties in score go to the lower product index.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import shutil
import tempfile
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium.error import DependencyNotInstalled

from gui_gym.envs.webshop.catalog import Catalog, Product, cache_dir

if TYPE_CHECKING:
    import bm25s

__all__ = [
    "SEARCH_RETURN_N",
    "SearchIndex",
    "compiled_kernels",
    "document_text",
    "load_index",
    "tokenize",
]

logger = logging.getLogger(__name__)

SEARCH_RETURN_N = 50
"""Products a search returns (WebShop's ``SEARCH_RETURN_N``)."""
BM25_K1 = 0.9
BM25_B = 0.4
INDEX_FORMAT = "gui-gym/webshop-index"

_TOKEN = re.compile(r"[a-z0-9]+")
_STOPWORD_TEXT = """
    a an and are as at be but by can do for from has have i i'm im in is it its me my need of
    on or our please so some that the their them this to us want was we what which will with
    would you your
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
"""Words left out of documents and queries."""


def _stem(word: str) -> str:
    if len(word) > 3:
        if word.endswith("ies"):
            return word[:-3] + "y"
        if word.endswith("s") and not word.endswith(("ss", "us")):
            return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Search terms of ``text``: lower-cased alphanumeric runs, stopwords out, plurals cut.
    Text that is not ASCII is NFKC-folded first, so full-width and other compatibility
    forms (``"ＳＨＡＭＰＯＯ"``) are the words they look like."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return [_stem(w) for w in _TOKEN.findall(text.lower()) if w not in STOPWORDS]


def document_text(product: Product) -> str:
    """What the index reads of a product: title, bullet points and option values, as
    WebShop's documents hold title, description, first bullet point and options. Not the
    attribute list: WebShop does not index it, and indexing its canonical wording would let
    a search find exactly the goal's attributes."""
    options = " ".join(f"{name} {' '.join(values)}" for name, values in product.options)
    return " ".join((product.title, *product.features, options))


def _import_bm25s() -> Any:
    try:
        import bm25s
    except ImportError as err:
        raise DependencyNotInstalled(
            f"WebShop search needs bm25s ({err}); install it with: pip install 'gui-gym[webshop]'"
        ) from None
    return bm25s


@dataclass(frozen=True)
class _Blocks:
    """The block-max layout of an index (built on first use; see ``_build_blocks``)."""

    products: np.ndarray  # position -> product index
    positions: np.ndarray  # postings as positions (int32), grouped by (term, block)
    data: np.ndarray  # their scores, in the same order
    offsets: np.ndarray  # (terms, blocks + 1): a term's postings from block b on
    block_max: np.ndarray  # (terms, blocks): a term's largest score in a block

    @property
    def nbytes(self) -> int:
        arrays = (self.products, self.positions, self.data, self.offsets, self.block_max)
        return sum(int(a.nbytes) for a in arrays)


class SearchIndex:
    """BM25 scores of every catalog term, as a term-by-document sparse matrix.

    Args:
        data, indices, indptr: The CSC arrays bm25s builds (one column per term).
        vocab: Term -> column.
        num_docs: Number of products.
    """

    block_size: int = 1024
    """Products per block of the block-max search."""
    blocks_from: int | None = None
    """Catalog size from which :meth:`search` skips blocks that cannot reach the top ``k``;
    smaller catalogs are scored whole, which is as fast. None: 50,000 products with the
    compiled loops, 200,000 with numpy's (measured crossovers); tests set 0."""
    compiled: bool | None = None
    """Whether searches run numba-compiled loops: None (default) when numba is installed,
    False for the numpy loops (same answers; tests compare the two), True to require numba."""

    def __init__(
        self,
        data: np.ndarray,
        indices: np.ndarray,
        indptr: np.ndarray,
        vocab: dict[str, int],
        num_docs: int,
        groups: Sequence[str] | None = None,
    ):
        # read-only views whether built here or memory-mapped from the cache: the index is
        # never written, and the compiled loops then see one array type (one compilation)
        self.data, self.indices, self.indptr = (_read_only(a) for a in (data, indices, indptr))
        self.vocab = vocab
        self.num_docs = num_docs
        self.groups = groups
        self._blocks: _Blocks | None = None
        self._layout_lock = threading.Lock()  # envs stepped on threads build it once
        self.blocks_scored = 0
        self._cache: OrderedDict[bytes, tuple[int, ...]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.cache_nbytes = 0
        """Bytes the search cache's keys and answers hold (bounded by
        :data:`SEARCH_CACHE_ENTRIES` of at most :data:`CACHED_QUERY_TERMS` terms each)."""

    @classmethod
    def from_bm25s(cls, retriever: bm25s.BM25, groups: Sequence[str] | None = None) -> SearchIndex:
        """The index of a bm25s retriever; ``groups`` (one label per product, e.g. its
        product type) orders products into blocks for the block-max search."""
        scores = retriever.scores
        # Plain ndarray views of (possibly memory-mapped) arrays: slicing a np.memmap costs a
        # Python-level finalizer call each time.
        return cls(
            np.asarray(scores["data"]),
            np.asarray(scores["indices"]),
            np.asarray(scores["indptr"]),
            dict(retriever.vocab_dict),
            int(scores["num_docs"]),
            groups,
        )

    @property
    def nbytes(self) -> int:
        """Bytes held by the score arrays (the vocabulary dict not counted)."""
        return int(self.data.nbytes + self.indices.nbytes + self.indptr.nbytes)

    @property
    def layout_nbytes(self) -> int:
        """Bytes held by the block-max layout (0 until the first search of a catalog large
        enough for it builds it; see :attr:`blocks_from`)."""
        return self._blocks.nbytes if self._blocks is not None else 0

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every product for ``query`` (float32, one per product)."""
        return self._term_scores(tuple(tokenize(query)))

    def _term_scores(self, terms: tuple[str, ...]) -> np.ndarray:
        scores = np.zeros(self.num_docs, dtype=np.float32)
        for term in terms:
            column = self.vocab.get(term)
            if column is None:
                continue
            start, end = self.indptr[column], self.indptr[column + 1]
            # A product appears once per term column, so plain fancy-index addition is exact
            # (and several times faster than np.add.at).
            scores[self.indices[start:end]] += self.data[start:end]
        return scores

    def search(self, query: str, k: int = SEARCH_RETURN_N) -> tuple[int, ...]:
        """Indices of the ``k`` best-scoring products for ``query``, best first (equal scores
        in catalog order); products sharing no term with the query are never returned.
        Cached per query.

        Raises:
            ValueError: for a ``k`` that is not a non-negative int.
        """
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise ValueError(f"k must be a non-negative int (products to return), got {k!r}")
        k = int(k)
        # a term outside the vocabulary scores nothing: the search (and its cache key) is that
        # of the known terms, in order, as column numbers (4 bytes a term)
        vocab = self.vocab
        terms = tuple(t for t in tokenize(query) if t in vocab)
        if len(terms) > CACHED_QUERY_TERMS:  # long queries are rare: searched, not kept
            return self._search(terms, k)
        key = np.array([k, *(vocab[t] for t in terms)], dtype=np.int64).tobytes()
        with self._cache_lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                return found
        found = self._search(terms, k)
        with self._cache_lock:
            if key not in self._cache:
                self._cache[key] = found
                self.cache_nbytes += _entry_nbytes(key, found)
                while len(self._cache) > SEARCH_CACHE_ENTRIES:
                    old_key, old = self._cache.popitem(last=False)
                    self.cache_nbytes -= _entry_nbytes(old_key, old)
        return found

    def _columns(self, terms: tuple[str, ...]) -> np.ndarray:
        """The query's term columns in query order (repeats kept: the full pass adds a
        repeated term twice); unknown terms dropped."""
        columns = [c for c in (self.vocab.get(t) for t in terms) if c is not None]
        return np.asarray(columns, dtype=np.int64)

    def _blocked(self) -> bool:
        """Whether searches use the block-max layout (see :attr:`blocks_from`)."""
        if self.groups is None:
            return False
        if self.blocks_from is not None:
            return self.num_docs >= self.blocks_from
        return self.num_docs >= (50_000 if self._use_compiled() else 200_000)

    def _use_compiled(self) -> bool:
        if self.compiled is False:
            return False
        if compiled_kernels() is not None:
            return True
        if self.compiled:
            raise DependencyNotInstalled(
                "SearchIndex.compiled = True needs numba; install it with: "
                "pip install 'gui-gym[webshop]'"
            )
        return False

    def _search(self, terms: tuple[str, ...], k: int) -> tuple[int, ...]:
        k = min(k, self.num_docs)  # the compiled loops keep a heap of k entries
        if k <= 0:
            return ()
        if self._blocked():
            return self._block_search(terms, k)
        if self._use_compiled():
            columns = self._columns(terms)
            if not len(columns):
                return ()
            _, docs = compiled_kernels().full_top_k(
                self.indptr, self.indices, self.data, columns, self.num_docs, k
            )
            return tuple(docs.tolist())  # already best first
        scores = self._term_scores(terms)
        best = float(scores.max()) if self.num_docs else 0.0
        if best <= 0.0:
            return ()
        # Only products scoring at least half the best can be in the top k when k of them do,
        # so the selection below runs over a few hundred candidates, not the whole catalog
        # (np.partition over 100,000 scores with many ties costs milliseconds).
        for fraction in (0.5, 0.25, 0.0):
            if fraction:
                candidates = np.flatnonzero(scores >= best * fraction)
            else:
                candidates = np.flatnonzero(scores > 0.0)
            if len(candidates) >= k:
                break
        values = scores[candidates]
        if len(candidates) > k:
            threshold = np.partition(values, len(values) - k)[len(values) - k]
            above = candidates[values > threshold]
            ties = candidates[values == threshold][: k - len(above)]
            candidates = np.concatenate((above, ties))
        return _ranked(scores[candidates], candidates, k)

    def _block_search(self, terms: tuple[str, ...], k: int) -> tuple[int, ...]:
        """:meth:`_search`'s answer without scoring every product (block-max pruning).

        Products are laid out by group (product type), in blocks of :attr:`block_size`; a
        block's bound is the sum over the query's terms of the largest score each gives a
        product of the block. Blocks are scored whole, highest bound first, until the next
        bound is below the ``k``-th best score found: no product of a later block can reach
        the top ``k``, nor tie into it. Inside a block each product's score is added term by
        term in query order, as the full pass adds it, so scores, ties and the catalog-order
        tie-break are the full pass's own. Compiled (numba) when it is installed; the numpy
        loop below otherwise.
        """
        blocks = self._layout()
        columns = self._columns(terms)
        if not len(columns):
            self.blocks_scored = 0
            return ()
        bound = blocks.block_max[columns].sum(axis=0, dtype=np.float64)
        order = np.argsort(-bound, kind="stable")  # equal bounds in layout order
        if self._use_compiled():
            _, docs, self.blocks_scored = compiled_kernels().block_top_k(
                columns,
                order,
                bound,
                blocks.positions,
                blocks.data,
                blocks.offsets,
                blocks.products,
                self.block_size,
                k,
            )
            return tuple(docs.tolist())  # already best first
        bound = bound[order] * (1 + 1e-5) + 1e-6  # float32 sums may round above the max sum
        size = self.block_size
        found_pos: list[np.ndarray] = []
        found_scores: list[np.ndarray] = []
        kth, done, step = -1.0, 0, 4
        while done < len(order) and bound[done] > 1e-6 and bound[done] >= kth:
            chunk = np.sort(order[done : done + step])
            done += len(chunk)
            step = min(step * 2, 64)
            # runs of consecutive blocks: one slice per term and run
            breaks = np.flatnonzero(np.diff(chunk) != 1) + 1
            for run in np.split(chunk, breaks):
                first, last = int(run[0]), int(run[-1]) + 1
                base = first * size
                local = np.zeros(min(last * size, self.num_docs) - base, dtype=np.float32)
                for column in columns:
                    a = blocks.offsets[column, first]
                    b = blocks.offsets[column, last]
                    if b > a:
                        local[blocks.positions[a:b] - base] += blocks.data[a:b]
                hit = np.flatnonzero(local)
                found_pos.append(hit + base)
                found_scores.append(local[hit])
            scores = np.concatenate(found_scores)
            if len(scores) >= k:
                kth = float(np.partition(scores, len(scores) - k)[len(scores) - k])
                keep = scores >= kth  # what can still be in the top k
                found_pos, found_scores = [np.concatenate(found_pos)[keep]], [scores[keep]]
        self.blocks_scored = done  # the last block search's work (benchmarks, tests)
        if not found_pos:
            return ()
        positions = np.concatenate(found_pos)
        return _ranked(np.concatenate(found_scores), blocks.products[positions], k)

    def _layout(self) -> _Blocks:
        """The block layout, built by the first search that needs it (one thread builds it
        while the others wait)."""
        if self._blocks is None:
            with self._layout_lock:
                if self._blocks is None:
                    self._build_blocks()
        assert self._blocks is not None
        return self._blocks

    def _build_blocks(self) -> _Blocks:
        """The block layout: products ordered by group (ties in catalog order), postings
        renumbered to positions and grouped by (term, block) in CSC order, each term's
        postings offset per block, block maxima. Compiled: about 3 s for 1,000,000 products
        (a counting sort); numpy: a stable sort of 32 million keys, about 6 s (both under a
        load of 4 on 2 cores)."""
        logger.info("WebShop search: laying out %d products in blocks (once)", self.num_docs)
        groups = self.groups if self.groups is not None else [""] * self.num_docs
        codes = np.unique(np.asarray(groups), return_inverse=True)[1]
        products = np.lexsort((np.arange(self.num_docs), codes))  # position -> product
        where = np.empty(self.num_docs, dtype=np.int64)
        where[products] = np.arange(self.num_docs)
        size = self.block_size
        count = -(-self.num_docs // size)
        if self._use_compiled():
            positions, data, offsets, block_max = compiled_kernels().block_layout(
                self.indptr, self.indices, self.data, where, size, count
            )
        else:
            lengths = np.diff(self.indptr)
            term_of = np.repeat(np.arange(len(lengths)), lengths)
            positions = where[self.indices]
            block_of = positions // size
            keys = term_of * (count + 1) + block_of
            sort = np.argsort(keys, kind="stable")  # by (term, block), CSC order within
            keys, positions, data = keys[sort], positions[sort].astype(np.int32), self.data[sort]
            term_of, block_of = term_of[sort], block_of[sort]
            # offsets[t, b]: first posting of term t in block b or later
            grid = np.arange(len(lengths))[:, None] * (count + 1) + np.arange(count + 1)[None, :]
            offsets = np.searchsorted(keys, grid.ravel()).reshape(len(lengths), count + 1)
            block_max = np.zeros((len(lengths), count), dtype=np.float32)
            if len(keys):  # keys are sorted: one maximum per run of equal (term, block)
                starts = np.concatenate(([0], np.flatnonzero(np.diff(keys)) + 1))
                block_max[term_of[starts], block_of[starts]] = np.maximum.reduceat(data, starts)
        self._blocks = _Blocks(
            *(_read_only(a) for a in (products, positions, data, offsets, block_max))
        )
        return self._blocks


SEARCH_CACHE_ENTRIES = 8192
"""Searches an index remembers (least recently used out first)."""

CACHED_QUERY_TERMS = 64
"""Known terms a query may hold to be cached (longer ones are searched every time), so a
cache entry is at most about 1 KB and the whole cache under 10 MB, whatever the queries."""


def _entry_nbytes(key: bytes, answer: tuple[int, ...]) -> int:
    """What one cache entry holds: its key bytes and its answer's ids (8 bytes each), plus
    the Python objects' own headers."""
    return len(key) + 8 * len(answer) + 200


def _read_only(array: np.ndarray) -> np.ndarray:
    view = np.asarray(array).view()
    view.flags.writeable = False
    return view


def _ranked(scores: np.ndarray, docs: np.ndarray, k: int) -> tuple[int, ...]:
    """The ``k`` best of ``docs``: best score first, equal scores in catalog order
    (lexsort's last key is primary)."""
    order = np.lexsort((docs, -scores))[:k]
    return tuple(int(i) for i in docs[order])


@functools.cache
def compiled_kernels() -> ModuleType | None:
    """The numba-compiled search loops (:mod:`gui_gym.envs.webshop.search_kernels`), or None
    when numba is not installed (the numpy path then gives the same answers, slower)."""
    try:
        from gui_gym.envs.webshop import search_kernels
    except ImportError as err:
        logger.info("WebShop search: numba unavailable (%s); using numpy", err)
        return None
    return search_kernels


def build_index(catalog: Catalog) -> tuple[SearchIndex, Any]:
    """Index ``catalog`` in memory; returns the index and the bm25s retriever (for saving)."""
    bm25s = _import_bm25s()
    corpus = [tokenize(document_text(p)) for p in catalog]
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")
    retriever.index(corpus, show_progress=False)
    return SearchIndex.from_bm25s(retriever, [p.type_key for p in catalog]), retriever


def index_path(catalog: Catalog, folder: Path | None = None) -> Path:
    """The cache folder of ``catalog``'s index, keyed by the catalog hash."""
    folder = cache_dir() if folder is None else folder
    return folder / f"index-{catalog.hash[:32]}"


def _read_index(path: Path, catalog: Catalog) -> SearchIndex:
    bm25s = _import_bm25s()
    meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    if meta.get("format") != INDEX_FORMAT or meta.get("catalog_hash") != catalog.hash:
        raise ValueError(f"{path} is not the index of catalog {catalog.hash[:12]}")
    retriever = bm25s.BM25.load(str(path), mmap=True, load_corpus=False, show_progress=False)
    index = SearchIndex.from_bm25s(retriever, [p.type_key for p in catalog])
    if index.num_docs != len(catalog):
        raise ValueError(f"{path} indexes {index.num_docs} products, not {len(catalog)}")
    return index


def _fsync_tree(folder: Path) -> None:
    """Flush every file of ``folder`` and the folder itself to disk before it is renamed."""
    for file in folder.iterdir():
        fd = os.open(file, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def load_index(catalog: Catalog, folder: Path | None = None) -> SearchIndex:
    """``catalog``'s search index: read from the cache, or built and cached atomically.

    An unreadable cached index (hand-edited, from another bm25s) is reported and rebuilt.

    Raises:
        gymnasium.error.DependencyNotInstalled: without bm25s (``pip install 'gui-gym[webshop]'``).
    """
    _import_bm25s()
    path = index_path(catalog, folder)
    if path.exists():
        try:
            return _read_index(path, catalog)
        except Exception as err:  # a cache: whatever is wrong with it, rebuild
            # (an empty .npy raises EOFError, a bad header ValueError, bm25s its own errors)
            logger.warning(
                "WebShop index cache %s is unreadable (%s: %s); rebuilding",
                path,
                type(err).__name__,
                err,
            )
            shutil.rmtree(path, ignore_errors=True)
    index, retriever = build_index(catalog)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        retriever.save(str(tmp), show_progress=False)
        meta = {"format": INDEX_FORMAT, "catalog_hash": catalog.hash, "num_docs": len(catalog)}
        (tmp / "meta.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")
        _fsync_tree(tmp)
        try:
            tmp.rename(path)  # atomic; fails if another process got there first
        except OSError:
            if not path.exists():
                raise
            logger.info("WebShop index %s was built by another process; using it", path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(tmp)
    return index
