"""Deterministic generator of the 577-task WikiHow suite from the article corpus.

The task mix follows ProgRM's description of the Mobile-Env canonical set: 577 tasks, 427
train / 150 test, in three categories (Cross-Page, In-Page, QA). Each task starts with the
Mobile-Env "search an article to learn how to ..." step and its milestones mirror
Mobile-Env's event slots: the query typed, the target shown in the results, the article
opened, then the task's own sub-goals. Instructions concatenate the step instructions, as the
older Mobile-Env task files did. Train and test tasks never share a target article.

Run ``python scripts/generate_wikihow.py`` to regenerate ``data/articles.json`` and
``data/tasks.json``; the output is byte-identical for the same seed.
"""

from __future__ import annotations

import random
import re
from typing import Any

from gui_gym.envs.wikihow.app import Corpus, search_tokens

__all__ = ["SPLIT_PLAN", "generate_tasks"]

# (category, kind) -> (train count, test count). Totals: 427 train, 150 test, 577 overall.
# The test split per category is ProgRM's: its Table 1 success rates are multiples of 1/59
# (Cross-Page), 1/51 (In-Page) and 1/40 (QA); the train split keeps the same proportions
# (168 / 145 / 114). "article" is Mobile-Env's plain search-then-open task (4 of its 10 public
# sample task files).
SPLIT_PLAN: dict[tuple[str, str], tuple[int, int]] = {
    ("Cross-Page", "article"): (40, 14),
    ("Cross-Page", "references"): (22, 8),
    ("Cross-Page", "about"): (18, 6),
    ("Cross-Page", "author"): (20, 7),
    ("Cross-Page", "category"): (20, 7),
    ("Cross-Page", "author_article"): (17, 6),
    ("Cross-Page", "category_article"): (16, 6),
    ("Cross-Page", "related_article"): (15, 5),
    ("In-Page", "bookmark"): (36, 13),
    ("In-Page", "bookmark_check"): (18, 6),
    ("In-Page", "share"): (38, 13),
    ("In-Page", "rate_yes"): (30, 11),
    ("In-Page", "rate_no"): (23, 8),
    ("QA", "methods_count"): (17, 6),
    ("QA", "author_name"): (17, 6),
    ("QA", "category_name"): (15, 5),
    ("QA", "tips_count"): (15, 5),
    ("QA", "first_thing_needed"): (13, 4),
    ("QA", "references_count"): (14, 5),
    ("QA", "first_method_title"): (14, 5),
    ("QA", "views"): (9, 4),
}

_SHARE_TARGETS = ("Messages", "Email", "Copy link")


def _state(path: str, op: str, value: Any = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"path": path, "op": op}
    if value is not None:
        spec["value"] = value
    return {"state": spec}


def _on_page(kind: str, arg: str | None = None) -> dict[str, Any]:
    parts = [_state("page.kind", "eq", kind)]
    if arg is not None:
        parts.append(_state("page.arg", "eq", arg))
    parts.append(_state("dialog", "eq", ""))
    return {"all": parts}


def _article_link(slug: str) -> dict[str, str]:
    return {"handler": "open_article", "handler_arg": slug}


def _keyword_regex(words: list[str]) -> str:
    return r"(?i)\b(" + "|".join(re.escape(w) for w in words) + r")"


def _sentence_topic(topic: str) -> str:
    # Mobile-Env commands lower-case the goal: "learn how to bake lobster tails."
    return topic.lower()


class _Builder:
    def __init__(self, corpus: Corpus):
        self.corpus = corpus

    def base(
        self, slug: str
    ) -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]], list[str]]:
        art = self.corpus.articles[slug]
        query = art.topic.lower()
        keywords = []
        for word in re.findall(r"[A-Za-z0-9]+", art.topic):
            if search_tokens(word) and word.lower() not in keywords:
                keywords.append(word.lower())
        steps = [
            f"Search an article to learn how to {_sentence_topic(art.topic)}.",
            f'Then, access the article "{art.title}".',
        ]
        milestones = [
            {
                "name": "query_typed",
                "description": "a search with a keyword of the article was submitted",
                "predicate": _state("last_query", "regex", _keyword_regex(keywords)),
            },
            {
                "name": "results_shown",
                "description": "the target article is listed in search results on screen",
                # ours, between Mobile-Env's search and article events: it pays nothing there
                "reward": 0,
                "predicate": {
                    "all": [
                        _on_page("search"),
                        {"element": {"handler": "open_article", "handler_arg": slug}},
                    ]
                },
            },
            {
                "name": "article_opened",
                "description": f"the article {art.title!r} is open",
                "predicate": _on_page("article", slug),
            },
        ]
        plan = [
            {"op": "search", "query": query},
            {"op": "click", "page": "search", "target": _article_link(slug)},
        ]
        return steps, milestones, plan, keywords[:4]

    def build(self, kind: str, slug: str, rng: random.Random) -> dict[str, Any] | None:
        art = self.corpus.articles[slug]
        steps, milestones, plan, vocabulary = self.base(slug)
        page = f"article:{slug}"
        author = self.corpus.author_by_name[art.author]
        success: dict[str, Any]
        category = "Cross-Page"

        def final(name: str, description: str, predicate: dict[str, Any]) -> dict[str, Any]:
            milestones.append({"name": name, "description": description, "predicate": predicate})
            return predicate

        if kind == "article":
            # Mobile-Env's search2article task: done when the article is open.
            success = milestones[-1]["predicate"]
        elif kind == "references":
            steps.append("Then, check the reference list.")
            target = {"role": "heading", "text": "References"}
            plan.append({"op": "scroll_to", "page": page, "target": target})
            success = final(
                "references_reached",
                "the References section is on screen",
                {"all": [_on_page("article", slug), {"element": target}]},
            )
        elif kind == "about":
            steps.append("Then, access the about page to learn why people trust wikiHow.")
            plan.append(
                {
                    "op": "click",
                    "page": page,
                    "target": {"handler": "open_about", "resource_id": "trust_link"},
                }
            )
            success = final("about_opened", "the trust page is open", _on_page("about"))
        elif kind == "author":
            steps.append(f"Then, check the author page of {author.name}.")
            plan.append(
                {
                    "op": "click",
                    "page": page,
                    "target": {"handler": "open_author", "handler_arg": author.slug},
                }
            )
            success = final(
                "author_opened", f"{author.name}'s page is open", _on_page("author", author.slug)
            )
        elif kind == "category":
            steps.append(f"Then, access the page of category {art.category}.")
            plan.append(
                {
                    "op": "click",
                    "page": page,
                    "target": {"handler": "open_category", "handler_arg": art.category},
                }
            )
            success = final(
                "category_opened",
                f"category {art.category} is open",
                _on_page("category", art.category),
            )
        elif kind in ("author_article", "category_article", "related_article"):
            if kind == "author_article":
                pool = [s for s in self.corpus.by_author.get(author.slug, []) if s != slug]
                hop_page, hop_target = (
                    f"author:{author.slug}",
                    {"handler": "open_author", "handler_arg": author.slug},
                )
            elif kind == "category_article":
                pool = [s for s in self.corpus.by_category.get(art.category, []) if s != slug]
                hop_page, hop_target = (
                    f"category:{art.category}",
                    {"handler": "open_category", "handler_arg": art.category},
                )
            else:
                pool = [s for s in art.related if s != slug]
                hop_page, hop_target = page, None
            if not pool:
                return None
            other = pool[rng.randrange(min(len(pool), 6))]
            other_title = self.corpus.articles[other].title
            if kind == "author_article":
                steps.append(f"Then, check the author page of {author.name}.")
                milestones.append(
                    {"name": "author_opened", "predicate": _on_page("author", author.slug)}
                )
            elif kind == "category_article":
                steps.append(f"Then, access the page of category {art.category}.")
                milestones.append(
                    {"name": "category_opened", "predicate": _on_page("category", art.category)}
                )
            if hop_target is not None:
                plan.append({"op": "click", "page": page, "target": hop_target})
            if kind == "related_article":
                steps.append(f'Then, open the related article "{other_title}".')
            else:
                steps.append(f'Then, access the article "{other_title}".')
            plan.append({"op": "click", "page": hop_page, "target": _article_link(other)})
            success = final(
                "second_article_opened",
                f"the article {other_title!r} is open",
                _on_page("article", other),
            )
        elif kind in ("bookmark", "bookmark_check"):
            category = "In-Page"
            steps.append("Then, bookmark the article.")
            marked = _state("bookmarks", "contains", slug)
            plan.append(
                {
                    "op": "click",
                    "page": page,
                    "target": {"resource_id": "bookmark", "handler_arg": slug},
                    "when": {"not": marked},
                }
            )
            if kind == "bookmark":
                success = final("bookmarked", "the article is bookmarked", marked)
            else:
                milestones.append({"name": "bookmarked", "predicate": marked})
                steps.append("Then, check your bookmarks.")
                plan.append(
                    {
                        "op": "click",
                        "page": page,
                        "target": {"handler": "tab_bookmarks"},
                        "when": marked,
                    }
                )
                success = final(
                    "bookmarks_checked",
                    "the bookmarks tab lists the article",
                    {"all": [_on_page("bookmarks"), marked]},
                )
        elif kind == "share":
            category = "In-Page"
            via = _SHARE_TARGETS[rng.randrange(len(_SHARE_TARGETS))]
            phrase = (
                "copy the link to the article"
                if via == "Copy link"
                else f"share the article via {via}"
            )
            steps.append(f"Then, {phrase}.")
            plan.append(
                {"op": "click", "page": page, "target": {"handler": "share", "handler_arg": slug}}
            )
            plan.append(
                {
                    "op": "click",
                    "page": "dialog:share",
                    "target": {"handler": "share_to", "handler_arg": via},
                }
            )
            milestones.append(
                {"name": "share_sheet_opened", "predicate": _state("dialog", "eq", "share")}
            )
            success = final(
                "shared",
                f"the article was shared via {via}",
                _state("shares", "contains", {"slug": slug, "via": via}),
            )
        elif kind in ("rate_yes", "rate_no"):
            category = "In-Page"
            value = "yes" if kind == "rate_yes" else "no"
            steps.append(
                "Then, tell wikiHow that the article was helpful."
                if value == "yes"
                else "Then, tell wikiHow that the article was not helpful."
            )
            plan.append(
                {"op": "click", "page": page, "target": {"handler": "rate", "handler_arg": value}}
            )
            milestones.append(
                {
                    "name": "feedback_reached",
                    "predicate": {
                        "all": [
                            _on_page("article", slug),
                            {"element": {"text": "Was this article helpful?"}},
                        ]
                    },
                }
            )
            success = final(
                "rated", f"the article is rated {value!r}", _state(f"ratings.{slug}", "eq", value)
            )
        else:
            category = "QA"
            qa = self._question(kind, slug)
            if qa is None:
                return None
            question, answers, mode, reveal = qa
            steps.append(f"Then, answer my question: {question}")
            plan.append({"op": "answer", "page": page, "target": reveal, "text": answers[0]})
            milestones.append(
                {
                    "name": "answer_in_view",
                    "description": "the part of the article holding the answer is on screen",
                    "reward": 0,  # ours: Mobile-Env pays the answer event only
                    "predicate": {"all": [_on_page("article", slug), {"element": reveal}]},
                }
            )
            # As in Mobile-Env's QA tasks, the answer counts only after the page part that
            # holds it was on screen: a guess at step 1 earns nothing, so an agent cannot win by
            # guessing without reading.
            success = final(
                "answered",
                "the answer, given after seeing it, matches the article",
                {
                    "all": [
                        {"milestone": "answer_in_view"},
                        {"answer": {"values": answers, "mode": mode}},
                    ]
                },
            )
        task_id = f"{slug.lower().replace('-', '_')}-{kind}"
        return {
            "task_id": task_id,
            "instruction": " ".join(steps),
            "category": category,
            "split": "train",
            "params": {"kind": kind, "article": slug},
            "vocabulary": vocabulary,
            "milestones": milestones,
            "success": success,
            "plan": plan,
        }

    def _question(self, kind: str, slug: str) -> tuple[str, list[str], str, dict[str, str]] | None:
        art = self.corpus.articles[slug]
        title = art.title
        if kind == "methods_count":
            n = len(art.methods)
            if n < 2:
                return None
            last = f"Method {n}: {art.methods[-1][0]}"
            return (
                f'How many methods does "{title}" describe?',
                [str(n)],
                "numeric",
                {"role": "heading", "text": last},
            )
        if kind == "author_name":
            names = [art.author]
            if "," in art.author:
                names.append(art.author.split(",")[0])
            return (
                f'Who co-authored "{title}"?',
                names,
                "normalized",
                {"resource_id": "authors_container"},
            )
        if kind == "category_name":
            return (
                f'Which category is "{title}" filed under?',
                [art.category],
                "normalized",
                {"resource_id": "cat_navigation"},
            )
        if kind == "tips_count":
            if not art.tips:
                return None
            return (
                f'How many tips does "{title}" give?',
                [str(len(art.tips))],
                "numeric",
                {"role": "text", "text": f"• {art.tips[-1]}"},
            )
        if kind == "first_thing_needed":
            if not art.things_needed:
                return None
            return (
                f'What is the first item under "Things You\'ll Need" in "{title}"?',
                [art.things_needed[0]],
                "normalized",
                {"role": "text", "text": f"• {art.things_needed[0]}"},
            )
        if kind == "references_count":
            n = len(art.references)
            return (
                f'How many references does "{title}" cite?',
                [str(n)],
                "numeric",
                {"role": "text", "text": f"{n}. {art.references[-1]}"},
            )
        if kind == "first_method_title":
            if len(art.methods) < 2:
                return None
            first = art.methods[0][0]
            return (
                f'What is the title of the first method in "{title}"?',
                [first, f"Method 1: {first}"],
                "normalized",
                {"role": "heading", "text": f"Method 1: {first}"},
            )
        if kind == "views":
            return (
                f'How many times has "{title}" been viewed?',
                [str(art.views)],
                "numeric",
                {"role": "text", "text": f"Updated {art.updated} · {art.views:,} views"},
            )
        raise ValueError(f"unknown task kind {kind!r}")


def generate_tasks(corpus_data: dict[str, Any], seed: int = 577) -> dict[str, Any]:
    """Build the task-file data for the suite (see :data:`SPLIT_PLAN` for the mix).

    Every task's target article is used by that task only, so train and test share none.

    Raises:
        RuntimeError: if the corpus is too small to fill the plan.
    """
    corpus = Corpus(corpus_data)
    builder = _Builder(corpus)
    rng = random.Random(seed)
    slugs = sorted(corpus.articles)
    rng.shuffle(slugs)
    # Only articles the search finds from their own topic can anchor a task.
    slugs = [s for s in slugs if s in corpus.search(corpus.articles[s].topic.lower())]
    used: set[str] = set()
    tasks: list[dict[str, Any]] = []
    cursor = 0
    for split_index, split in enumerate(("train", "test")):
        for (_category, kind), counts in SPLIT_PLAN.items():
            need = counts[split_index]
            made = 0
            scan = 0
            while made < need:
                if scan >= len(slugs):
                    raise RuntimeError(f"corpus too small for {need} {kind!r} tasks in {split}")
                slug = slugs[(cursor + scan) % len(slugs)]
                scan += 1
                if slug in used:
                    continue
                task = builder.build(kind, slug, rng)
                if task is None:
                    continue
                task["split"] = split
                used.add(slug)
                tasks.append(task)
                made += 1
            cursor = (cursor + scan) % len(slugs)
    return {
        "format": "gui-gym/tasks",
        "version": 1,
        "suite": "wikihow",
        "metadata": {
            "generator": "gui_gym.envs.wikihow.gen_tasks",
            "seed": seed,
            "counts": {
                split: sum(1 for t in tasks if t["split"] == split) for split in ("train", "test")
            },
        },
        "tasks": tasks,
    }
