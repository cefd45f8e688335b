"""The product catalog and its goals, generated once per size and cached on disk.

``load_catalog(size)`` returns the :class:`Catalog` of ``size`` products (1,000, 10,000 or
100,000). The first call generates it (:mod:`gui_gym.envs.webshop.generate`, fixed seed) and
writes it atomically to the cache folder; later calls, in any process, read that file. The
file's SHA-256 is the catalog's *hash*, which keys its search index
(:mod:`gui_gym.envs.webshop.search`).

The cache folder is ``$GUI_GYM_CACHE/webshop`` when ``GUI_GYM_CACHE`` is set, else
``~/.cache/gui-gym/webshop``. Files are only ever replaced whole (temp file + rename), so a
crash or a concurrent process never leaves a half-written catalog behind.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import json
import logging
import os
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from gui_gym.core.trajectory import atomic_write_text
from gui_gym.core.untrusted_text import load_json
from gui_gym.envs.webshop.generate import (
    GENERATOR_VERSION,
    GOAL_FIELDS,
    PRODUCT_FIELDS,
    generate_catalog_data,
    write_details,
)
from gui_gym.envs.webshop.lexicon import TYPE_BY_KEY, ProductType
from gui_gym.envs.webshop.reward import GoalSpec, ProductSpec

__all__ = [
    "CATALOG_SEED",
    "CATALOG_SIZES",
    "Catalog",
    "Goal",
    "Product",
    "cache_dir",
    "load_catalog",
]

logger = logging.getLogger(__name__)

CATALOG_SIZES = (1_000, 10_000, 100_000, 1_000_000)
"""Catalog sizes the envs offer: tests, default, benchmark, WebShop's full scale (1.18M
products; about 8 minutes to build on first use, then cached)."""
CATALOG_SEED = 20220704
"""The fixed generator seed (WebShop's arXiv date)."""
CATALOG_FORMAT = "gui-gym/webshop-catalog"


def cache_dir() -> Path:
    """Where WebShop files are cached: ``$GUI_GYM_CACHE/webshop`` or
    ``~/.cache/gui-gym/webshop``."""
    root = os.environ.get("GUI_GYM_CACHE")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "gui-gym"
    return base / "webshop"


class Product(NamedTuple):
    """One product.

    Attributes:
        index: Position in the catalog (search results and goals refer to it).
        asin: Its id, shown as the product link, e.g. ``B0K2Z81QXA``.
        title: Its title.
        price: Its price in dollars.
        type_key: Its product type (WebShop's ``query``).
        family: Its near-duplicate family number.
        attributes: Canonical attributes.
        options: Option groups ``(name, values)``.
        features: Bullet points.
        title_nouns: Nouns of the title.
        seed: Seed its description and reviews are written from.
    """

    index: int
    asin: str
    title: str
    price: float
    type_key: str
    family: int
    attributes: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]
    features: tuple[str, ...]
    title_nouns: tuple[str, ...]
    seed: int

    @property
    def product_type(self) -> ProductType:
        return TYPE_BY_KEY[self.type_key]

    @property
    def category(self) -> str:
        return TYPE_BY_KEY[self.type_key].category

    @property
    def product_category(self) -> str:
        return TYPE_BY_KEY[self.type_key].product_category

    @property
    def price_text(self) -> str:
        return f"${self.price:.2f}"

    @property
    def brand(self) -> str:
        return self.title.split(" ", 1)[0]

    def option_values(self, name: str) -> tuple[str, ...]:
        for option, values in self.options:
            if option == name:
                return values
        return ()


class Goal(NamedTuple):
    """One shopping goal: buy a product like the target with these attributes and options.

    Attributes:
        goal_id: ``train-00042`` or ``test-00007``.
        split: ``train`` or ``test``; no target product (nor its family) is in both.
        product: Index of the target product.
        instruction: What the shopper is told.
        attributes: Attributes asked for (canonical wordings).
        options: ``(name, value)`` pairs asked for.
        price_upper: The price ceiling.
    """

    goal_id: str
    split: str
    product: int
    instruction: str
    attributes: tuple[str, ...]
    options: tuple[tuple[str, str], ...]
    price_upper: float


class Catalog:
    """Products and goals of one generated catalog.

    Args:
        data: Catalog data as :func:`~gui_gym.envs.webshop.generate.generate_catalog_data`
            writes it.
        digest: The SHA-256 of the data's canonical JSON (its cache file's bytes).

    Raises:
        ValueError: when ``data`` is not a catalog this version reads.
    """

    def __init__(self, data: dict[str, Any], digest: str):
        if not isinstance(data, dict):
            raise ValueError(f"a catalog is a JSON object, got {type(data).__name__}")
        if data.get("format") != CATALOG_FORMAT or data.get("version") != 1:
            raise ValueError(f"not a {CATALOG_FORMAT} version 1 file")
        if data.get("product_fields") != list(PRODUCT_FIELDS) or data.get("goal_fields") != list(
            GOAL_FIELDS
        ):
            raise ValueError("catalog columns differ from this version's")
        self.size: int = int(data["size"])
        self.seed: int = int(data["seed"])
        self.hash = digest
        self.products: tuple[Product, ...] = tuple(
            Product(
                index=i,
                asin=asin,
                title=title,
                price=float(price),
                type_key=type_key,
                family=int(family),
                attributes=tuple(attributes),
                options=tuple((name, tuple(values)) for name, values in options),
                features=tuple(features),
                title_nouns=tuple(nouns),
                seed=int(seed),
            )
            for i, (
                asin,
                title,
                price,
                type_key,
                family,
                attributes,
                options,
                features,
                nouns,
                seed,
            ) in enumerate(data["products"])
        )
        if len(self.products) != self.size:
            raise ValueError(f"catalog says {self.size} products but holds {len(self.products)}")
        self.goals: tuple[Goal, ...] = tuple(
            Goal(
                goal_id=goal_id,
                split=split,
                product=int(product),
                instruction=instruction,
                attributes=tuple(attributes),
                options=tuple((name, value) for name, value in options),
                price_upper=float(price_upper),
            )
            for goal_id, split, product, instruction, attributes, options, price_upper in data[
                "goals"
            ]
        )
        self.by_asin: dict[str, int] = {p.asin: p.index for p in self.products}

    def __len__(self) -> int:
        return len(self.products)

    def __iter__(self) -> Iterator[Product]:
        return iter(self.products)

    def __getitem__(self, index: int) -> Product:
        return self.products[index]

    @functools.lru_cache(maxsize=2048)  # noqa: B019 - catalogs live as long as the process
    def details(self, index: int) -> tuple[str, tuple[tuple[int, str], ...]]:
        """The product's description and reviews ``((stars, text), ...)``, written on demand."""
        product = self.products[index]
        ptype = product.product_type
        return write_details(
            product.seed, product.brand, ptype.goal_names[0], ptype, product.attributes
        )

    def rating(self, index: int) -> float:
        """Mean review stars, one decimal."""
        _, reviews = self.details(index)
        return round(sum(stars for stars, _ in reviews) / len(reviews), 1)

    def product_spec(self, index: int) -> ProductSpec:
        """What the reward reads of a product."""
        product = self.products[index]
        description, _ = self.details(index)
        return ProductSpec(
            query=product.type_key,
            product_category=product.product_category,
            title=product.title,
            title_nouns=product.title_nouns,
            attributes=product.attributes,
            bullet_points=product.features,
            description=description,
        )

    def goal_spec(self, goal: Goal) -> GoalSpec:
        """What the reward reads of a goal (type, breadcrumb and title nouns of its target)."""
        target = self.products[goal.product]
        return GoalSpec(
            query=target.type_key,
            product_category=target.product_category,
            name_nouns=target.title_nouns,
            attributes=goal.attributes,
            options=goal.options,
            price_upper=goal.price_upper,
        )


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    # Millions of small lists and tuples are made at once here; the cyclic collector would
    # rescan them again and again (it makes loading the 100,000 catalog 5x slower).
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def catalog_json(data: dict[str, Any]) -> str:
    """The canonical on-disk form (compact, UTF-8, stable): its SHA-256 is the catalog hash."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"


@functools.cache
def generator_fingerprint() -> str:
    """A digest of the generator's code and words: any edit to them changes the cache key, so
    a stale cached catalog is never read (its index is reused when the output is unchanged,
    since indexes are keyed by the catalog's own hash)."""
    package = resources.files("gui_gym.envs.webshop")
    digest = hashlib.sha256(f"v{GENERATOR_VERSION}".encode())
    for name in ("generate.py", "lexicon.py"):
        digest.update(package.joinpath(name).read_bytes())
    return digest.hexdigest()[:16]


def catalog_path(size: int, seed: int = CATALOG_SEED, folder: Path | None = None) -> Path:
    """The cache file of a catalog: keyed by size, seed and :func:`generator_fingerprint`."""
    folder = cache_dir() if folder is None else folder
    return folder / f"catalog-{size}-seed{seed}-{generator_fingerprint()}.json"


def _check_size(size: int) -> None:
    if size not in CATALOG_SIZES:
        allowed = ", ".join(f"{s:,}" for s in CATALOG_SIZES)
        raise ValueError(f"catalog_size must be one of {allowed}, got {size!r}")


def build_catalog(size: int, seed: int = CATALOG_SEED) -> Catalog:
    """Generate a catalog in memory (no cache)."""
    _check_size(size)
    with _collector_paused():
        text = catalog_json(generate_catalog_data(size, seed))
        return Catalog(json.loads(text), hashlib.sha256(text.encode("utf-8")).hexdigest())


def load_catalog(size: int, seed: int = CATALOG_SEED, folder: Path | None = None) -> Catalog:
    """The catalog of ``size`` products, from the cache or generated and cached atomically.

    A cache file that cannot be read as a catalog (truncated by hand, from another version)
    is reported and regenerated.

    Args:
        size: 1,000, 10,000, 100,000 or 1,000,000.
        seed: Generator seed (the default is the published catalog).
        folder: Cache folder (default :func:`cache_dir`).

    Raises:
        ValueError: for a size not offered.
    """
    _check_size(size)
    path = catalog_path(size, seed, folder)
    with _collector_paused():
        if path.exists():
            raw = path.read_bytes()
            try:
                return Catalog(load_json(raw), hashlib.sha256(raw).hexdigest())
            except Exception as err:  # a cache: whatever is wrong, regenerate
                logger.warning(
                    "WebShop catalog cache %s is unreadable (%s: %s); regenerating",
                    path,
                    type(err).__name__,
                    err,
                )
        text = catalog_json(generate_catalog_data(size, seed))
        atomic_write_text(path, text)
        return Catalog(json.loads(text), hashlib.sha256(text.encode("utf-8")).hexdigest())
