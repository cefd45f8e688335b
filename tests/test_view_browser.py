"""The report pages in a real headless Chromium (Debian's, driven by Selenium as MiniWoB++ is):
they open with no console errors, the filters work, an episode page shows its steps, runs
compare side by side, hostile text stays text, and ``gui-gym serve`` pages load their
screenshots. One browser for the module; screenshots of the pages are saved as test
artifacts (under pytest's tmp path, and copied to ``$GUI_GYM_TEST_ARTIFACTS`` when set)."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gui_gym.view import build_report, load_run
from gui_gym.view.sample import record_sample_run
from gui_gym.view.server import make_server
from tests.conftest import require, require_browser

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # one browser start: about 5 s

LONG = "x" * 200_000
HOSTILE = {
    "task_id": "<script>window.__pwned = 1</script>",
    "instruction": '"><img src=x onerror="window.__pwned = 2"> it\'s "quoted" & <b>bold</b>',
    "category": "</script><script>window.__pwned = 3</script>",
    "agent": "lone \ud800 surrogate \udfff and \u2028 separator",
    "action": 'CLICK("<svg onload=window.__pwned=4>")',
    "thought": "<!-- <script>window.__pwned = 5</script> -->",
    "completion": "<think></script><script>window.__pwned = 6</script></think>" + LONG,
    "screen": '<button id=0 clickable><img src=x onerror="window.__pwned=7"></button>\n'
    + "y" * 50_000,
    "description": "javascript:window.__pwned=8",
    "milestone": "<iframe src=javascript:window.__pwned=9>",
    "prompt": "<style>body{display:none}</style><script>window.__pwned=10</script>",
}


SCRIPTS = (
    "return [document.querySelectorAll('script:not([type=\"application/json\"])').length,"
    " document.querySelectorAll('script[type=\"application/json\"]').length]"
)


def _hostile_records() -> list[dict[str, Any]]:
    step = {
        "index": 0,
        "screen": HOSTILE["screen"],
        "action": HOSTILE["action"],
        "action_description": HOSTILE["description"],
        "thought": HOSTILE["thought"],
        "completion": HOSTILE["completion"],
        "prompt": [{"role": "user", "content": HOSTILE["prompt"]}],
        "milestones": [HOSTILE["milestone"]],
        "reward": 0.5,
        "info": {"</script>": {"<b>": 1.0}, "prm": {"score": 0.25}},
        "target": ["button", HOSTILE["instruction"], "x"],
    }
    first = {
        "env_id": "GuiGym/WikiHow-v0",
        "task_id": HOSTILE["task_id"],
        "instruction": HOSTILE["instruction"],
        "agent": HOSTILE["agent"],
        "steps": [step],
        "success": True,
        "metadata": {"category": HOSTILE["category"], "</script>": "<script>"},
    }
    second = dict(first, task_id="t" * 5_000, success=False, steps=[])
    return [first, second]


# -------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module; afterwards no browser process of ours is left."""
    require("selenium", "miniwob")
    from gui_gym.envs.miniwob.browser import (
        close_chromium,
        descendants,
        open_chromium,
    )

    require_browser()
    driver = open_chromium(width=1280, height=900)
    driver.set_page_load_timeout(60)
    yield driver
    close_chromium(driver)
    leftovers = []
    for pid in descendants(os.getpid()):
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if "chrom" in name:
            leftovers.append((pid, name))
    assert not leftovers, f"browser processes left behind: {leftovers}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Two real WikiHow runs over the same tasks (before: oracle and random alternate, with
    screenshots; after: oracle only), a hostile run, and their reports."""
    folder = tmp_path_factory.mktemp("view")
    before = record_sample_run(folder / "before.jsonl", episodes=6, screenshots=True)
    after = record_sample_run(folder / "after.jsonl", episodes=6, random_every=0)
    hostile = folder / "hostile.jsonl"
    hostile.write_text("".join(json.dumps(r) + "\n" for r in _hostile_records()))
    paths = {"before": before, "after": after, "hostile": hostile, "folder": folder}
    for name, sources in (("single", [before]), ("compare", [before, after]), ("evil", [hostile])):
        paths[name] = folder / f"{name}.html"
        build_report(sources, paths[name], prompts=name == "evil")
    return paths


# --------------------------------------------------------------------------------- helpers


def _open(driver: Any, url: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")  # drop what earlier tests left
    driver.get(url)
    WebDriverWait(driver, 20).until(
        lambda d: d.execute_script("return document.body.dataset.view || ''")
    )


def _go(driver: Any, fragment: str, view: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("location.hash = arguments[0]", fragment)
    WebDriverWait(driver, 20).until(
        lambda d: d.execute_script("return document.body.dataset.view") == view
    )


def _console_problems(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]


def _visible_rows(driver: Any) -> list[tuple[str, str, str]]:
    return driver.execute_script(
        "return [...document.querySelectorAll('tr.episode-row')].filter(r => !r.hidden)"
        ".map(r => [r.dataset.task, r.dataset.category, r.dataset.outcome]);"
    )


def _save_artifact(driver: Any, tmp_path: Path, name: str, full_page: bool = False) -> Path:
    size = driver.get_window_size()
    if full_page:
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(size["width"], min(int(height), 6000))
    path = tmp_path / name
    try:
        assert driver.save_screenshot(str(path))
    finally:
        if full_page:
            driver.set_window_size(size["width"], size["height"])
    destination = os.environ.get("GUI_GYM_TEST_ARTIFACTS")
    if destination:
        Path(destination).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(destination) / name)
    assert path.stat().st_size > 1000  # a real picture, not an empty file
    return path


def _code_points(driver: Any, script: str) -> list[int]:
    """Code units of a page string as numbers (a lone surrogate survives as itself)."""
    return driver.execute_script(
        f"const s = {script}; return Array.from(s, c => c.codePointAt(0));"
    )


# ------------------------------------------------------------------------------------ tests


def test_report_opens_without_console_errors(browser, runs, tmp_path: Path) -> None:
    _open(browser, runs["single"].as_uri())
    episodes = load_run(runs["before"], image_source=None).episodes
    assert len(_visible_rows(browser)) == len(episodes) == 6
    assert browser.find_element("id", "episode-count").text == "6 of 6 episodes"
    assert browser.title == "gui-gym report: before.jsonl"
    _save_artifact(browser, tmp_path, "view_list.png")
    assert _console_problems(browser) == []


def test_filters_select_by_task_category_and_outcome(browser, runs) -> None:
    from selenium.webdriver.support.ui import Select

    _open(browser, runs["single"].as_uri())
    episodes = load_run(runs["before"], image_source=None).episodes
    outcome = Select(browser.find_element("id", "filter-outcome"))
    outcome.select_by_value("failure")
    failures = [e["task"] for e in episodes if e["outcome"] == "failure"]
    assert [r[0] for r in _visible_rows(browser)] == failures and failures
    assert browser.find_element("id", "episode-count").text == f"{len(failures)} of 6 episodes"
    outcome.select_by_value("")
    category = episodes[0]["category"]
    Select(browser.find_element("id", "filter-category")).select_by_value(category)
    assert [r[0] for r in _visible_rows(browser)] == [
        e["task"] for e in episodes if e["category"] == category
    ]
    Select(browser.find_element("id", "filter-category")).select_by_value("")
    task = episodes[1]["task"]
    box = browser.find_element("id", "filter-task")
    box.send_keys(task[3:12].upper())  # a case-insensitive substring
    assert [r[0] for r in _visible_rows(browser)] == [
        e["task"] for e in episodes if task[3:12] in e["task"]
    ]
    assert _console_problems(browser) == []


def test_an_episode_page_shows_its_steps_curves_and_targets(browser, runs, tmp_path) -> None:
    _open(browser, runs["single"].as_uri())
    episodes = load_run(runs["before"], image_source=None).episodes
    i = next(i for i, e in enumerate(episodes) if e["outcome"] == "success")
    browser.find_elements("css selector", "a.episode-link")[i].click()
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script("return document.body.dataset.view") == "episode"
    )
    episode = episodes[i]
    cards = browser.find_elements("css selector", "article.step")
    assert len(cards) == episode["n"] > 0
    assert [c.find_element("css selector", "code").text for c in cards] == [
        s["action"] for s in episode["steps"]
    ]
    components = browser.execute_script(
        "return [...document.querySelectorAll('#curves > .curve-grid > figure.curve')]"
        ".map(f => f.dataset.component);"
    )
    assert components[:5] == ["env", "progress", "prm", "milestone", "judge"]
    # each primary series is drawn with one dot per step that has a value
    dots = browser.execute_script(
        "return document.querySelectorAll("
        "'#curves > .curve-grid > figure[data-component=progress] circle.dot').length"
    )
    assert dots == 2 * episode["n"]  # progress.value and progress.delta
    browser.execute_script("document.getElementById('step-0').scrollIntoView()")
    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script(
            "const img = document.querySelector('#step-0 img');"
            "return img && img.complete && img.naturalWidth > 0;"
        )
    )
    box = browser.execute_script(
        "const r = document.querySelector('#step-0 svg.overlay rect.target');"
        "return r && [r.x.baseVal.value, r.y.baseVal.value];"
    )
    assert box == episode["steps"][0]["box"][:2]
    milestones = browser.execute_script(
        "return [...document.querySelectorAll('ul.milestones li')].map(li => li.textContent)"
    )
    assert milestones == [m for s in episode["steps"] for m in s["new_milestones"]]
    _save_artifact(browser, tmp_path, "view_episode.png", full_page=True)
    assert _console_problems(browser) == []


def test_two_runs_compare_side_by_side_per_category(browser, runs, tmp_path) -> None:
    _open(browser, runs["compare"].as_uri() + "#/compare")
    assert browser.execute_script("return document.body.dataset.view") == "compare"
    before = load_run(runs["before"], image_source=None).to_page()["categories"]
    after = load_run(runs["after"], image_source=None).to_page()["categories"]
    rows = browser.execute_script(
        "return [...document.querySelectorAll('#compare-categories tbody tr')]"
        ".map(r => [...r.cells].map(c => c.textContent));"
    )
    assert [r[0] for r in rows] == [c["category"] or "all" for c in before]
    total = rows[-1]
    assert total[1] == f"{100 * before[-1]['rate']:.1f}% ({before[-1]['success']}/6)"
    assert total[2] == f"{100 * after[-1]['rate']:.1f}% (6/6)"
    delta = 100 * (after[-1]["rate"] - before[-1]["rate"])
    assert total[3] == f"+{delta:.1f} pt"
    tasks = browser.execute_script(
        "return [...document.querySelectorAll('tr.task-row')].map(r =>"
        " [r.dataset.task, ...[...r.querySelectorAll('td.chips')].map(c => c.textContent)]);"
    )
    episodes = load_run(runs["before"], image_source=None).episodes
    assert sorted(t[0] for t in tasks) == sorted({e["task"] for e in episodes})
    for task, marks_before, marks_after in tasks:
        assert marks_after == "✓"  # the oracle solves every task
        outcome = next(e["outcome"] for e in episodes if e["task"] == task)
        assert marks_before == ("✓" if outcome == "success" else "✗")
    _save_artifact(browser, tmp_path, "view_compare.png")
    browser.find_element("css selector", "tr.task-row td.chips a").click()
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script("return document.body.dataset.view") == "episode"
    )
    assert browser.find_elements("css selector", "article.step")
    assert _console_problems(browser) == []


def test_hostile_text_is_shown_as_text_and_never_runs(browser, runs, tmp_path) -> None:
    _open(browser, runs["evil"].as_uri())
    never_ran = "return window.__pwned === undefined"
    assert browser.execute_script(never_ran)
    assert browser.execute_script(SCRIPTS) == [1, 3]  # its own; list data and 2 episodes
    rows = _visible_rows(browser)
    assert rows[0] == [HOSTILE["task_id"], HOSTILE["category"], "success"]
    assert _code_points(
        browser, "document.querySelector('tr.episode-row td.clip').textContent"
    ) == [ord(c) for c in HOSTILE["agent"]]
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "filter-category")).select_by_value(HOSTILE["category"])
    assert len(_visible_rows(browser)) == 2
    # the very long task id is cut by the table, not spread across the page
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth + 1"
    )
    _go(browser, "#/e/0/0", "episode")
    assert browser.execute_script(never_ran)
    assert browser.execute_script(SCRIPTS) == [1, 3]  # its own; list data and 2 episodes
    page = {
        "task": "document.querySelector('#episode-task .task-id').textContent",
        "instruction": "document.getElementById('episode-instruction').textContent",
        "action": "document.querySelector('#step-0 code').textContent",
        "description": "document.querySelector('#step-0 .description').textContent",
        "thought": "document.querySelector('#step-0 .thought pre').textContent",
        "generated": "document.querySelector('#step-0 .generated pre').textContent",
        "milestone": "document.querySelector('ul.milestones li').textContent",
        "screen": "document.querySelector('#step-0 pre.screen').textContent",
        "prompt": "document.querySelector('#step-0 .prompt pre').textContent",
    }
    expected = {
        "task": HOSTILE["task_id"],
        "instruction": HOSTILE["instruction"],
        "action": HOSTILE["action"],
        "description": HOSTILE["description"],
        "thought": HOSTILE["thought"],
        "generated": HOSTILE["completion"],
        "milestone": HOSTILE["milestone"],
        "screen": HOSTILE["screen"],
        "prompt": "user: " + HOSTILE["prompt"],
    }
    for key, script in page.items():
        assert browser.execute_script(f"return {script}") == expected[key], key
    # no element came out of the strings: no image, frame or inline handler anywhere
    assert (
        browser.execute_script(
            "return document.querySelectorAll('img, iframe, [onerror], [onload]').length"
            " + [...document.querySelectorAll('b')].filter(b => b.textContent === 'bold').length"
        )
        == 0
    )
    # a 200,000-character generation wraps inside its box
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth + 1"
    )
    assert browser.execute_script(
        "return [...document.querySelectorAll('#curves figure')].map(f => f.dataset.component)"
    ) == ["env", "prm", "</script>"]
    _save_artifact(browser, tmp_path, "view_hostile.png")
    assert browser.execute_script(never_ran)
    assert _console_problems(browser) == []


def test_served_pages_load_their_screenshots_from_the_server(browser, runs, tmp_path) -> None:
    server = make_server(runs["folder"], port=0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _open(browser, server.url + "view?run=before.jsonl#/e/0/0")
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(browser, 20).until(
            lambda d: d.execute_script(
                "const img = document.querySelector('#step-0 img');"
                "return img && img.complete && img.naturalWidth > 0;"
            )
        )
        src = browser.execute_script("return document.querySelector('#step-0 img').src")
        assert src.startswith(server.url + "file/before_shots/")
        assert _console_problems(browser) == []
        browser.get(server.url)
        links = browser.execute_script("return [...document.links].map(a => a.textContent)")
        assert links == ["after.jsonl", "before.jsonl", "hostile.jsonl"]
        assert _console_problems(browser) == []
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
