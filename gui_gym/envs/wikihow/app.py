"""The simulated WikiHow app: state, screens and behaviour.

Screens follow the Mobile-Env WikiHow app (wikiHow 2.9.6): a home tab with a search box,
search results, article pages (title, author, category, intro, methods with numbered steps,
Tips, Warnings, Things You'll Need, Related wikiHows, References, About This Article, a
"Was this article helpful?" Yes/No), author pages, category pages, the editorial "trust"
page, bookmarks, and a share sheet. The screen is phone-sized (360x720) and long pages
scroll, 60% of the visible height per SCROLL.

State is plain data (:class:`WikiHowState`); every screen is a pure function of it.
"""

from __future__ import annotations

import functools
import json
import re
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block, ScrollPage, SimApp
from gui_gym.core.task import Task
from gui_gym.core.ui import UIElement, UITree

__all__ = ["Corpus", "Page", "WikiHowApp", "WikiHowState", "load_corpus"]

WIDTH, HEIGHT = 360, 720
APP_BAR = 52
BOTTOM_BAR = 52
CONTENT_TOP = APP_BAR
CONTENT_BOTTOM = HEIGHT - BOTTOM_BAR
MAX_RESULTS = 15
SHARE_TARGETS = ("Messages", "Email", "Copy link")

ABOUT_TEXT = (
    "Information You Can Trust",
    "wikiHow's mission is to help everyone in the world learn how to do anything. Every "
    "article is written by our community and checked by our editorial team.",
    "A Guide to our Editorial Process",
    "Articles are researched, written and reviewed before publication, and updated when new "
    "information becomes available. Expert co-authors review articles in their field.",
    "Reader feedback on whether an article was helpful is used to keep articles accurate.",
)


# ------------------------------------------------------------------------------------- corpus


@dataclass(frozen=True)
class Article:
    slug: str
    title: str
    category: str
    author: str
    intro: str
    methods: tuple[tuple[str, tuple[str, ...]], ...]
    tips: tuple[str, ...]
    warnings: tuple[str, ...]
    things_needed: tuple[str, ...]
    references: tuple[str, ...]
    views: int
    coauthors: int
    updated: str
    related: tuple[str, ...]

    @property
    def topic(self) -> str:
        """The title without "How to ": what a user would search for."""
        return self.title[7:] if self.title.startswith("How to ") else self.title


@dataclass(frozen=True)
class Author:
    name: str
    slug: str
    bio: str
    role: str


_STOPWORDS = frozenset(
    [
        "how",
        "to",
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "for",
        "and",
        "or",
        "with",
        "without",
        "your",
        "you",
        "my",
        "from",
        "at",
        "by",
        "is",
        "are",
        "be",
        "it",
    ]
)
_TOKEN = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def search_tokens(text: str) -> list[str]:
    """Lower-cased, stemmed content words of ``text`` (the search engine's view of it)."""
    return [_stem(w) for w in _TOKEN.findall(text.lower()) if w not in _STOPWORDS]


class Corpus:
    """The article corpus with a small keyword search engine over titles and categories."""

    def __init__(self, data: dict[str, Any]):
        if data.get("format") != "gui-gym/wikihow-corpus":
            raise ValueError("not a gui-gym WikiHow corpus (format field)")
        self.articles: dict[str, Article] = {}
        for a in data["articles"]:
            self.articles[a["slug"]] = Article(
                slug=a["slug"],
                title=a["title"],
                category=a["category"],
                author=a["author"],
                intro=a["intro"],
                methods=tuple((m["title"], tuple(m["steps"])) for m in a["methods"]),
                tips=tuple(a["tips"]),
                warnings=tuple(a["warnings"]),
                things_needed=tuple(a["things_needed"]),
                references=tuple(a["references"]),
                views=int(a["views"]),
                coauthors=int(a["coauthors"]),
                updated=a["updated"],
                related=tuple(a["related"]),
            )
        self.authors: dict[str, Author] = {
            a["slug"]: Author(a["name"], a["slug"], a["bio"], a["role"]) for a in data["authors"]
        }
        self.author_by_name = {a.name: a for a in self.authors.values()}
        self.categories: list[str] = [c["name"] for c in data["categories"]]
        self.by_category: dict[str, list[str]] = {c: [] for c in self.categories}
        self.by_author: dict[str, list[str]] = {a: [] for a in self.authors}
        for art in sorted(self.articles.values(), key=lambda a: (-a.views, a.slug)):
            self.by_category.setdefault(art.category, []).append(art.slug)
            self.by_author.setdefault(self.author_by_name[art.author].slug, []).append(art.slug)
        self.featured = [
            a.slug for a in sorted(self.articles.values(), key=lambda a: (-a.views, a.slug))[:8]
        ]
        self._title_tokens = {s: set(search_tokens(a.title)) for s, a in self.articles.items()}
        self._index: dict[str, list[str]] = {}
        for slug, tokens in self._title_tokens.items():
            for t in tokens:
                self._index.setdefault(t, []).append(slug)
        self._cat_tokens = {s: set(search_tokens(a.category)) for s, a in self.articles.items()}

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - the corpus lives as long as the process
    def search(self, query: str) -> tuple[str, ...]:
        """Slugs of the best-matching articles for ``query``, best first (at most 15).

        Title words count 3, category words 1; ties go to the more viewed article.
        """
        tokens = set(search_tokens(query))
        if not tokens:
            return ()
        scores: dict[str, int] = {}
        for t in tokens:
            for slug in self._index.get(t, ()):
                scores[slug] = scores.get(slug, 0) + 3
        for slug in list(scores):
            scores[slug] += len(tokens & self._cat_tokens[slug])
        ranked = sorted(scores, key=lambda s: (-scores[s], -self.articles[s].views, s))
        return tuple(ranked[:MAX_RESULTS])


@functools.cache
def load_corpus() -> Corpus:
    """The packaged corpus (``data/articles.json``), loaded once per process."""
    text = resources.files("gui_gym.envs.wikihow").joinpath("data/articles.json").read_text("utf-8")
    return Corpus(json.loads(text))


# -------------------------------------------------------------------------------------- state


@dataclass
class Page:
    """One entry of the navigation stack."""

    kind: str  # home | search | article | author | category | about | bookmarks
    arg: str = ""  # query, article slug, author slug or category name
    scroll: int = 0

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.arg}" if self.arg else self.kind


@dataclass
class WikiHowState:
    """Everything the app remembers. Task predicates read these fields by path.

    Attributes:
        stack: Navigation stack; ``page`` is its top.
        search_text: Text in the search box.
        search_focused: Whether the search box has keyboard focus.
        queries: Submitted searches, in order.
        bookmarks: Bookmarked article slugs, in order added.
        ratings: ``{slug: "yes" | "no"}`` from "Was this article helpful?".
        shares: ``[{"slug": ..., "via": ...}]``, one per completed share.
        dialog: ``"share"`` while the share sheet is open, else ``""``.
        toast: A transient message shown for one screen.
        visited: Page keys opened, in order (``article:Bake-Lobster-Tails``).
    """

    stack: list[Page] = field(default_factory=lambda: [Page("home")])
    search_text: str = ""
    search_focused: bool = False
    queries: list[str] = field(default_factory=list)
    bookmarks: list[str] = field(default_factory=list)
    ratings: dict[str, str] = field(default_factory=dict)
    shares: list[dict[str, str]] = field(default_factory=list)
    dialog: str = ""
    toast: str = ""
    visited: list[str] = field(default_factory=list)

    @property
    def page(self) -> Page:
        return self.stack[-1]

    @property
    def last_query(self) -> str:
        return self.queries[-1] if self.queries else ""


# ---------------------------------------------------------------------------------------- app


def _fmt_views(n: int) -> str:
    return f"{n:,}"


class WikiHowApp(SimApp[WikiHowState]):
    """Screens and behaviour of the simulated WikiHow app over a :class:`Corpus`."""

    width = WIDTH
    height = HEIGHT

    def __init__(self, corpus: Corpus):
        super().__init__()
        self.corpus = corpus
        self._pages: OrderedDict[Hashable, ScrollPage] = OrderedDict()

    def initial_state(self, task: Task, rng: np.random.Generator) -> WikiHowState:
        return WikiHowState()

    # -- layouts ------------------------------------------------------------------------------

    def layout(self, state: WikiHowState) -> ScrollPage:
        """The scrolling content of the current page (cached per page and variant)."""
        page = state.page
        variant: Hashable = None
        if page.kind == "article":
            variant = state.ratings.get(page.arg, "")
        elif page.kind == "bookmarks":
            variant = tuple(state.bookmarks)
        key = (page.kind, page.arg, variant)
        layout = self._pages.get(key)
        if layout is None:
            layout = ScrollPage(self._blocks(page, state), WIDTH, CONTENT_TOP, CONTENT_BOTTOM)
            self._pages[key] = layout
            if len(self._pages) > 2048:
                self._pages.popitem(last=False)
        return layout

    def _blocks(self, page: Page, state: WikiHowState) -> list[Block]:
        kind = page.kind
        if kind == "home":
            return self._home_blocks()
        if kind == "search":
            return self._search_blocks(page.arg)
        if kind == "article":
            return self._article_blocks(
                self.corpus.articles[page.arg], state.ratings.get(page.arg, "")
            )
        if kind == "author":
            return self._author_blocks(self.corpus.authors[page.arg])
        if kind == "category":
            return self._category_blocks(page.arg)
        if kind == "about":
            return [
                Block("heading", t, resource_id="trustworthy_head")
                if i in (0, 2)
                else Block("text", t)
                for i, t in enumerate(ABOUT_TEXT)
            ]
        if kind == "bookmarks":
            return self._bookmark_blocks(state.bookmarks)
        raise AssertionError(f"unknown page kind {kind!r}")

    def _link(self, slug: str, resource_id: str = "") -> Block:
        return Block(
            "link",
            self.corpus.articles[slug].title,
            resource_id=resource_id,
            clickable=True,
            handler="open_article",
            handler_arg=slug,
        )

    def _home_blocks(self) -> list[Block]:
        blocks = [Block("heading", "Featured Articles")]
        blocks += [self._link(s, "featured_article") for s in self.corpus.featured]
        blocks.append(Block("heading", "Explore Categories"))
        blocks += [
            Block("link", c, clickable=True, handler="open_category", handler_arg=c)
            for c in self.corpus.categories
        ]
        blocks.append(
            Block(
                "link",
                "About wikiHow",
                clickable=True,
                handler="open_about",
                resource_id="about_link",
            )
        )
        return blocks

    def _search_blocks(self, query: str) -> list[Block]:
        results = self.corpus.search(query)
        if not results:
            return [Block("text", f'No results for "{query}". Try different keywords.')]
        blocks = [
            Block("text", f'{len(results)} results for "{query}"', resource_id="results_count")
        ]
        for slug in results:
            art = self.corpus.articles[slug]
            blocks.append(self._link(slug, "search_result"))
            blocks.append(
                Block("text", f"{_fmt_views(art.views)} views · Updated {art.updated}", gap=10)
            )
        return blocks

    def _article_blocks(self, art: Article, rating: str) -> list[Block]:
        author = self.corpus.author_by_name[art.author]
        b = [
            Block("heading", art.title, resource_id="section_0"),
            Block(
                "link",
                f"Co-authored by {art.author}",
                resource_id="authors_container",
                clickable=True,
                handler="open_author",
                handler_arg=author.slug,
            ),
            Block(
                "link",
                f"Category: {art.category}",
                resource_id="cat_navigation",
                clickable=True,
                handler="open_category",
                handler_arg=art.category,
            ),
            Block("text", f"Updated {art.updated} · {_fmt_views(art.views)} views"),
            Block("text", art.intro, gap=10),
        ]
        for i, (title, steps) in enumerate(art.methods, 1):
            label = f"Method {i}: {title}" if len(art.methods) > 1 else title
            b.append(Block("heading", label, resource_id=f"method_{i}"))
            b += [Block("text", f"{j}. {s}", indent=6) for j, s in enumerate(steps, 1)]
        for heading, items, rid in (
            ("Tips", art.tips, "tips"),
            ("Warnings", art.warnings, "warnings"),
            ("Things You'll Need", art.things_needed, "things_youll_need"),
        ):
            if items:
                b.append(Block("heading", heading, resource_id=rid))
                b += [Block("text", f"• {t}", indent=6) for t in items]
        if art.related:
            b.append(Block("heading", "Related wikiHows", resource_id="related"))
            b += [self._link(s, "related_article") for s in art.related]
        b.append(Block("heading", "References", resource_id="references"))
        b += [Block("text", f"{i}. {r}", indent=6) for i, r in enumerate(art.references, 1)]
        b.append(Block("heading", "About This Article", resource_id="about_this_article"))
        b.append(
            Block(
                "text",
                f"Co-authored by: {art.author}, {author.role}. This article has been viewed "
                f"{_fmt_views(art.views)} times. {art.coauthors} co-authors.",
            )
        )
        b.append(
            Block(
                "link",
                "Learn why people trust wikiHow",
                clickable=True,
                handler="open_about",
                resource_id="trust_link",
            )
        )
        b.append(Block("heading", "Was this article helpful?", resource_id="helpful"))
        b.append(
            Block(
                "button",
                "Yes",
                clickable=True,
                handler="rate",
                handler_arg="yes",
                selected=rating == "yes",
                height=30,
            )
        )
        b.append(
            Block(
                "button",
                "No",
                clickable=True,
                handler="rate",
                handler_arg="no",
                selected=rating == "no",
                height=30,
            )
        )
        if rating:
            b.append(Block("text", "Thanks for your feedback!", resource_id="feedback_thanks"))
        return b

    def _author_blocks(self, author: Author) -> list[Block]:
        blocks = [
            Block("heading", author.name, resource_id="author_name"),
            Block("text", author.role),
            Block("text", author.bio, gap=10),
            Block("heading", f"Articles by {author.name}"),
        ]
        blocks += [
            self._link(s, "author_article") for s in self.corpus.by_author.get(author.slug, [])
        ]
        return blocks

    def _category_blocks(self, category: str) -> list[Block]:
        slugs = self.corpus.by_category.get(category, [])
        blocks = [
            Block("heading", category, resource_id="cat_navigation"),
            Block("text", f"{len(slugs)} articles in {category}"),
        ]
        blocks += [self._link(s, "category_article") for s in slugs]
        return blocks

    def _bookmark_blocks(self, bookmarks: list[str]) -> list[Block]:
        if not bookmarks:
            return [
                Block("heading", "Bookmarks"),
                Block("text", "No bookmarks yet. Tap the bookmark icon on an article to save it."),
            ]
        blocks = [
            Block("heading", "Bookmarks"),
            Block("text", "Long-press an article to remove it."),
        ]
        for slug in bookmarks:
            blocks.append(
                Block(
                    "link",
                    self.corpus.articles[slug].title,
                    resource_id="bookmark_item",
                    clickable=True,
                    long_clickable=True,
                    handler="open_article",
                    handler_arg=slug,
                )
            )
        return blocks

    # -- views --------------------------------------------------------------------------------

    def view_key(self, state: WikiHowState) -> Hashable:
        page = state.page
        extra: Hashable = None
        if page.kind in ("home", "search"):
            extra = (state.search_text, state.search_focused)
        elif page.kind == "article":
            extra = (page.arg in state.bookmarks, state.ratings.get(page.arg, ""))
        elif page.kind == "bookmarks":
            extra = tuple(state.bookmarks)
        return (
            page.kind,
            page.arg,
            page.scroll,
            len(state.stack) > 1,
            extra,
            state.dialog,
            state.toast,
        )

    def build_view(self, state: WikiHowState) -> UITree:
        page = state.page
        layout = self.layout(state)
        elements: list[UIElement] = list(self._app_bar(state))
        elements += layout.window(page.scroll, first_index=len(elements))
        elements += self._bottom_bar(page, len(elements))
        if state.dialog == "share":
            elements += self._share_sheet(len(elements))
        if state.toast:
            elements.append(
                UIElement(len(elements), "toast", state.toast, bounds=(40, 600, 320, 630))
            )
        return self.tree(
            elements,
            name=page.key if not state.dialog else f"{page.key}|{state.dialog}",
            can_up=page.scroll > 0,
            can_down=page.scroll < layout.max_scroll,
        )

    def _app_bar(self, state: WikiHowState) -> list[UIElement]:
        page = state.page
        bar: list[UIElement] = []

        def icon(
            label: str, resource_id: str, x0: int, handler: str, arg: str = "", **flags: bool
        ) -> None:
            bar.append(
                UIElement(
                    len(bar),
                    "button",
                    description=label,
                    resource_id=resource_id,
                    bounds=(x0, 6, x0 + 40, 46),
                    clickable=True,
                    handler=handler,
                    handler_arg=arg,
                    **flags,
                )
            )

        x = 4
        if page.kind != "home":
            icon("Navigate up", "navigate_up", 4, "navigate_up")
            x = 48
        if page.kind in ("home", "search"):
            bar.append(
                UIElement(
                    len(bar),
                    "input",
                    text=state.search_text,
                    description="Search wikiHow",
                    resource_id="search_src_text",
                    bounds=(x, 6, 312, 46),
                    editable=True,
                    clickable=True,
                    focused=state.search_focused,
                    handler="search_box",
                )
            )
            icon("Search", "action_search", 316, "submit_search")
            return bar
        title = {
            "article": "wikiHow",
            "author": "Author",
            "category": "Category",
            "about": "About wikiHow",
            "bookmarks": "Bookmarks",
        }[page.kind]
        bar.append(
            UIElement(len(bar), "text", title, bounds=(x, 6, 200, 46), resource_id="toolbar_title")
        )
        if page.kind == "article":
            marked = page.arg in state.bookmarks
            label = "Remove bookmark" if marked else "Bookmark"
            icon(label, "bookmark", 228, "bookmark", page.arg, selected=marked)
            icon("Share", "share", 272, "share", page.arg)
        icon("Search", "action_search", 316, "open_search")
        return bar

    def _bottom_bar(self, page: Page, start: int) -> list[UIElement]:
        y0 = HEIGHT - BOTTOM_BAR + 4
        return [
            UIElement(
                start,
                "tab",
                "Home",
                resource_id="tab_home",
                bounds=(0, y0, 180, HEIGHT - 4),
                clickable=True,
                selected=page.kind == "home",
                handler="tab_home",
            ),
            UIElement(
                start + 1,
                "tab",
                "Bookmarks",
                resource_id="tab_bookmarks",
                bounds=(180, y0, 360, HEIGHT - 4),
                clickable=True,
                selected=page.kind == "bookmarks",
                handler="tab_bookmarks",
            ),
        ]

    def _share_sheet(self, start: int) -> list[UIElement]:
        out = [
            UIElement(
                start, "dialog", "Share via", resource_id="share_sheet", bounds=(0, 440, 360, 720)
            )
        ]
        y = 480
        for target in (*SHARE_TARGETS, "Cancel"):
            out.append(
                UIElement(
                    start + len(out),
                    "button",
                    target,
                    resource_id="share_target",
                    bounds=(16, y, 344, y + 44),
                    clickable=True,
                    handler="share_to" if target != "Cancel" else "share_cancel",
                    handler_arg=target,
                )
            )
            y += 52
        return out

    # -- behaviour ----------------------------------------------------------------------------

    def update(self, state: WikiHowState, action: Action, screen: UITree) -> None:
        toast = state.toast
        state.toast = ""
        try:
            super().update(state, action, screen)
        except InvalidAction:
            state.toast = toast  # an impossible action changes nothing
            raise

    def _push(self, state: WikiHowState, page: Page) -> None:
        state.stack.append(page)
        state.search_focused = False
        state.visited.append(page.key)

    def _require_no_dialog(self, state: WikiHowState, element: UIElement) -> None:
        if state.dialog:
            raise InvalidAction(
                f"the share sheet covers the page; choose a share target, Cancel, or GOBACK "
                f"(element {element.index} is behind it)"
            )

    def on_click_open_article(
        self, state: WikiHowState, element: UIElement, action: Action
    ) -> None:
        self._require_no_dialog(state, element)
        self._push(state, Page("article", element.handler_arg))

    def on_long_click_open_article(
        self, state: WikiHowState, element: UIElement, action: Action
    ) -> None:
        self._require_no_dialog(state, element)
        if state.page.kind == "bookmarks" and element.handler_arg in state.bookmarks:
            state.bookmarks.remove(element.handler_arg)
            state.page.scroll = min(state.page.scroll, self.layout(state).max_scroll)
            state.toast = "Bookmark removed"

    def on_click_open_author(self, state: WikiHowState, element: UIElement, action: Action) -> None:
        self._require_no_dialog(state, element)
        self._push(state, Page("author", element.handler_arg))

    def on_click_open_category(
        self, state: WikiHowState, element: UIElement, action: Action
    ) -> None:
        self._require_no_dialog(state, element)
        self._push(state, Page("category", element.handler_arg))

    def on_click_open_about(self, state: WikiHowState, element: UIElement, action: Action) -> None:
        self._require_no_dialog(state, element)
        self._push(state, Page("about"))

    def on_click_open_search(self, state: WikiHowState, element: UIElement, action: Action) -> None:
        self._require_no_dialog(state, element)
        state.stack = [Page("home")]
        state.search_focused = True

    def on_click_navigate_up(self, state: WikiHowState, element: UIElement, action: Action) -> None:
        self.back(state)

    def on_click_tab_home(self, state: WikiHowState, element: UIElement, action: Action) -> None:
        self.home(state)

    def on_click_tab_bookmarks(
        self, state: WikiHowState, element: UIElement, action: Action
    ) -> None:
        self._require_no_dialog(state, element)
        if state.page.kind != "bookmarks":
            self._push(state, Page("bookmarks"))

    def on_click_search_box(self, state: WikiHowState, element: UIElement, action: Action) -> None:
        state.search_focused = True

    def on_input_search_box(self, state: WikiHowState, element: UIElement, action: Action) -> None:
        # Typing submits with the keyboard's search key, as Mobile-Env's INPUT does.
        state.search_text = (action.text or "").strip()
        state.search_focused = False
        if state.search_text:
            self._submit(state)

    def on_click_submit_search(
        self, state: WikiHowState, element: UIElement, action: Action
    ) -> None:
        if not state.search_text:
            raise InvalidAction("the search box is empty; type a query first")
        self._submit(state)

    def _submit(self, state: WikiHowState) -> None:
        state.queries.append(state.search_text)
        page = Page("search", state.search_text)
        if state.page.kind == "search":
            state.stack[-1] = page  # a new search replaces the results, as in the app
            state.visited.append(page.key)
        else:
            self._push(state, page)

    def enter(self, state: WikiHowState, screen: UITree) -> None:
        if state.page.kind in ("home", "search") and state.search_focused and state.search_text:
            state.search_focused = False
            self._submit(state)
            return
        raise InvalidAction("ENTER does nothing here: no text field with text is focused")

    def on_click_bookmark(self, state: WikiHowState, element: UIElement, action: Action) -> None:
        self._require_no_dialog(state, element)
        slug = element.handler_arg
        if slug in state.bookmarks:
            state.bookmarks.remove(slug)
            state.toast = "Bookmark removed"
        else:
            state.bookmarks.append(slug)
            state.toast = "Article bookmarked"

    def on_click_share(self, state: WikiHowState, element: UIElement, action: Action) -> None:
        self._require_no_dialog(state, element)
        state.dialog = "share"

    def on_click_share_to(self, state: WikiHowState, element: UIElement, action: Action) -> None:
        state.shares.append({"slug": state.page.arg, "via": element.handler_arg})
        state.dialog = ""
        state.toast = (
            "Link copied"
            if element.handler_arg == "Copy link"
            else f"Shared via {element.handler_arg}"
        )

    def on_click_share_cancel(
        self, state: WikiHowState, element: UIElement, action: Action
    ) -> None:
        state.dialog = ""

    def on_click_rate(self, state: WikiHowState, element: UIElement, action: Action) -> None:
        self._require_no_dialog(state, element)
        state.ratings[state.page.arg] = element.handler_arg

    def back(self, state: WikiHowState) -> None:
        if state.dialog:
            state.dialog = ""
        elif len(state.stack) > 1:
            state.stack.pop()
        state.search_focused = False

    def home(self, state: WikiHowState) -> None:
        state.dialog = ""
        state.search_focused = False
        state.stack = [Page("home")]

    def scroll(self, state: WikiHowState, direction: str, element: UIElement | None) -> None:
        if state.dialog:
            return  # the share sheet does not scroll; the page behind it stays put
        if direction in ("left", "right"):
            return  # nothing scrolls sideways; a horizontal swipe changes nothing
        layout = self.layout(state)
        delta = layout.scroll_step if direction == "down" else -layout.scroll_step
        state.page.scroll = layout.clamp(state.page.scroll + delta)

    def search(self, state: WikiHowState, query: str) -> None:
        if state.page.kind not in ("home", "search"):
            raise InvalidAction("there is no search box on this screen; open search first")
        state.search_text = query.strip()
        if not state.search_text:
            raise InvalidAction("SEARCH needs a non-empty query")
        self._submit(state)


@functools.cache
def get_app() -> WikiHowApp:
    """The app over the packaged corpus, shared by every env in the process (its caches
    hold only immutable screens)."""
    return WikiHowApp(load_corpus())
