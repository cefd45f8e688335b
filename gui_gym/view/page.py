"""The report page: one self-contained HTML file (styles, script and data inlined; no CDN).

The trajectories travel as JSON inside ``<script type="application/json">``; the page's own
script (``assets/report.js``) builds every element from it with DOM calls and
``textContent``, so text from apps and models is never parsed as HTML. The JSON is escaped so
that no string can close its script element (``<``, ``>`` and ``&`` become ``\\u003c``,
``\\u003e``, ``\\u0026``; everything non-ASCII, lone surrogates included, becomes ``\\uXXXX``),
and a Content-Security-Policy allows only the page's own script and style (by hash), as a
second wall.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from gui_gym.core.trajectory import atomic_write_text, dumps_json
from gui_gym.view.runs import OUTCOMES, ImageSource, Run, inline_image, load_run

__all__ = ["ReportSummary", "build_report", "embed_json", "render_report", "run_names"]

FORMAT = "gui-gym/report"
VERSION = 1


@functools.cache
def _asset(name: str) -> str:
    return resources.files("gui_gym.view").joinpath("assets", name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return (
        "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"
    )


def content_security_policy(img_self: bool = False) -> str:
    """The page's policy: its own script and style only (by hash), images inline (and from
    the server under ``gui-gym serve``), nothing else loaded, no forms sent anywhere."""
    images = "data: 'self'" if img_self else "data:"
    return (
        f"default-src 'none'; script-src {_csp_hash(_asset('report.js'))}; "
        f"style-src {_csp_hash(_asset('report.css'))}; img-src {images}; "
        "base-uri 'none'; form-action 'none'"
    )


def embed_json(data: Any) -> str:
    """``data`` as JSON text safe inside an HTML ``<script>`` element.

    Raises:
    NaN and infinity (JSON has none) are written as ``null``.
    """
    text = dumps_json(data, ensure_ascii=True, separators=(",", ":"))
    # '<', '>' and '&' occur in JSON only inside strings, where \\u escapes mean the same
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_report(runs: Sequence[Run], *, img_self: bool = False) -> str:
    """The HTML of a report on ``runs`` (one run: its episodes; two or more: also the
    side-by-side comparison).

    Args:
        runs: Loaded runs (:func:`~gui_gym.view.runs.load_run`).
        img_self: Allow images from the page's own server (``gui-gym serve``).
    """
    data = {
        "format": FORMAT,
        "version": VERSION,
        "outcomes": list(OUTCOMES),
        "runs": [run.to_page() for run in runs],
    }
    # Each episode's steps sit in their own JSON element, parsed only when its page opens:
    # the list of a 1,000-episode run then opens without parsing tens of megabytes.
    details = "".join(
        f'<script type="application/json" id="gg-e-{r}-{i}">{embed_json(detail)}</script>\n'
        for r, run in enumerate(runs)
        for i, detail in enumerate(run.details())
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(img_self)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        "<title>gui-gym report</title>\n"
        f"<style>{_asset('report.css')}</style>\n</head>\n<body>\n"
        '<div id="app"><noscript>This report needs JavaScript.</noscript></div>\n'
        f'<script type="application/json" id="gg-data">{embed_json(data)}</script>\n'
        f"{details}"
        f"<script>{_asset('report.js')}</script>\n</body>\n</html>\n"
    )


def run_names(paths: Sequence[Path]) -> list[str]:
    """Display names for ``paths``: file names, with as many parent folders as it takes to
    tell two apart (``a/run.jsonl``, ``b/run.jsonl``)."""
    depth = 1
    while True:
        names = ["/".join(p.parts[-depth:]) for p in paths]
        if len(set(names)) == len(names) or all(depth >= len(p.parts) for p in paths):
            return names
        depth += 1


@dataclass
class ReportSummary:
    """What :func:`build_report` wrote."""

    out: Path
    runs: int
    episodes: int
    steps: int
    bytes: int


def build_report(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    image_source: ImageSource | None = inline_image,
    prompts: bool = False,
) -> ReportSummary:
    """Read trajectory files and write their report, atomically, to ``out``.

    Args:
        paths: One JSONL file (its episodes) or several (also compared side by side).
        out: The HTML file to write.
        image_source: How screenshots are embedded; None leaves them out (smaller file).
        prompts: Also show each step's prompt (what an LLM policy was shown).

    Raises:
        ViewError: when a file is missing or holds something other than trajectories.
    """
    files = [Path(p) for p in paths]
    runs = [
        load_run(path, name=name, image_source=image_source, prompts=prompts)
        for path, name in zip(files, run_names(files))
    ]
    html = render_report(runs)
    atomic_write_text(out, html)
    return ReportSummary(
        out=Path(out),
        runs=len(runs),
        episodes=sum(len(r.episodes) for r in runs),
        steps=sum(len(e["steps"]) for r in runs for e in r.episodes),
        bytes=len(html.encode("utf-8")),
    )
