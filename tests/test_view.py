"""gui-gym view / serve without a browser: what the pages are built from, how text is
embedded, what the CLI says, and what the server refuses (tests/test_view_browser.py opens
the pages in Chromium)."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import math
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from typer.testing import CliRunner

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents import OracleAgent
from gui_gym.cli import app
from gui_gym.core.trajectory import Step, read_jsonl, recorded_info, write_jsonl
from gui_gym.models.progress import MilestoneProgress
from gui_gym.view import (
    ViewError,
    category_success,
    embed_json,
    load_run,
    render_report,
    reward_series,
    run_names,
    screenshot_path,
)
from gui_gym.view.sample import record_sample_run
from gui_gym.view.server import confine, make_server
from gui_gym.wrappers import ProgressRewardWrapper, RecordTrajectories

runner = CliRunner()

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _record(**fields) -> dict:
    """A minimal trajectory record with ``fields`` overriding the defaults."""
    record = {
        "env_id": "GuiGym/WikiHow-v0",
        "task_id": "t1",
        "instruction": "do it",
        "steps": [],
        "success": False,
        "metadata": {"category": "QA"},
    }
    record.update(fields)
    return record


def _write_ascii(path: Path, records: list) -> None:
    """JSON Lines with every non-ASCII character escaped, as other tools write them: lone
    surrogates survive as ``\\udXXX`` escapes (the library's UTF-8 writer cannot write them)."""
    path.write_text("".join(json.dumps(r, ensure_ascii=True) + "\n" for r in records))


def _step(index: int, **fields) -> dict:
    step = {"index": index, "screen": "", "action": "WAIT()", "reward": 0.0, "task_reward": 0.0}
    step.update(fields)
    return step


# ------------------------------------------------------------------------ recording info


def test_recorded_steps_keep_each_wrappers_reward_components(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    env = ProgressRewardWrapper(
        gym.make("GuiGym/WikiHow-v0", task="clean_oil_paint_brushes-bookmark"), MilestoneProgress()
    )
    env = RecordTrajectories(env, path)
    agent = OracleAgent(env)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
    env.close()
    (record,) = read_jsonl(path)
    progress = [s["info"]["progress"] for s in record["steps"]]
    assert progress[-1]["value"] == 1.0
    # ProgRM Eq. 2 with k = 1: each delta is the value minus the previous value
    values = [0.0] + [p["value"] for p in progress]
    assert [p["delta"] for p in progress] == pytest.approx(np.diff(values).tolist())
    assert record["steps"][-1]["info"]["final_state_score"] == 1.0


def test_recorded_info_is_json_safe_and_keeps_only_named_keys() -> None:
    info = {
        "prm": {"score": np.float32(0.5), "components": (1, np.int64(2)), "error": None},
        "progress": {"value": math.nan, "delta": math.inf},
        "milestones": ["a"],  # a Step field of its own, not copied again
        "action_target": ("button", "OK", ""),
    }
    kept = recorded_info(info)
    assert kept == {
        "prm": {"score": 0.5, "components": [1, 2], "error": None},
        "progress": {"value": None, "delta": None},
    }
    json.dumps(kept, allow_nan=False)
    step = Step.from_transition(0, "", "WAIT()", 0.0, False, False, info)
    assert step.info == kept


# ------------------------------------------------------------------------- reward series


def test_reward_series_collects_every_numeric_component() -> None:
    steps = [
        _step(
            0,
            reward=0.4,
            info={
                "progress": {"value": 0.5, "delta": 0.5, "reference": 0.0},
                "prm": {"score": 1.0, "components": {"format": 0.1}, "error": None},
                "milestone": {"hit": True, "r_mil": 1.0, "version": 3, "pointer": 1},
            },
            advantage=0.25,
            logprobs=[-0.5, -0.25],
        ),
        _step(
            1,
            reward=1.0,
            task_reward=1.0,
            info={
                "progress": {"value": 1.0, "delta": 0.5, "reference": 0.5},
                "milestone": {"hit": False, "r_mil": 0.0, "episode_rewards": [1.0, 0.5]},
                "judge": {"reward": 1.0, "verdict": "success"},
            },
            advantage=-0.25,
        ),
    ]
    record = _record(steps=steps, metadata={"advantages": [0.7, -0.7]})
    series = {s["name"]: s for s in reward_series(steps, record)}
    assert series["env.reward"]["values"] == [0.4, 1.0]
    assert series["env.task_reward"]["values"] == [0.0, 1.0]
    assert series["progress.delta"]["values"] == [0.5, 0.5]
    assert series["prm.score"]["values"] == [1.0, None]  # not judged on step 1
    assert series["prm.components.format"]["values"] == [0.1, None]
    assert series["milestone.hit"]["values"] == [1.0, 0.0]  # booleans as 0/1
    assert series["milestone.episode_rewards"]["values"] == [1.0, 0.5]  # the final list
    assert series["judge.reward"]["values"] == [None, 1.0]
    assert series["trainer.advantage"]["values"] == [0.25, -0.25]
    assert series["trainer.advantages"]["values"] == [0.7, -0.7]
    assert series["policy.logprob_sum"]["values"] == [-0.75, None]
    assert "milestone.version" not in series and "milestone.pointer" not in series
    assert series["progress.delta"]["primary"] and not series["progress.reference"]["primary"]
    components = [s["component"] for s in reward_series(steps, record)]
    order = ["env", "progress", "prm", "milestone", "judge", "policy", "trainer"]
    assert sorted(set(components), key=components.index) == order


def test_non_finite_and_mislength_values_are_left_out() -> None:
    steps = [_step(0, reward=math.nan, info={"prm": {"score": math.inf, "curve": [1.0, 2.0]}})]
    series = {s["name"]: s["values"] for s in reward_series(steps, _record(steps=steps))}
    assert "env.reward" not in series and "prm.score" not in series
    assert "prm.curve" not in series  # two values for a one-step episode


# ------------------------------------------------------------------------------ episodes


def test_load_run_reads_outcomes_milestones_generation_and_new_fields(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    steps = [
        _step(
            0,
            milestones=["typed"],
            completion="<think>go</think>CLICK(1)",
            completion_ids=[5, 6, 7],
            prompt=[
                {"role": "system", "content": "You operate a phone."},
                {
                    "role": "user",
                    "content": [{"type": "image"}, {"type": "text", "text": "Goal: do it"}],
                },
            ],
        ),
        _step(
            1,
            milestones=["typed", "opened"],
            action="nonsense",
            action_valid=False,
            info={"action_error": "unknown action 'nonsense'"},
        ),
    ]
    write_jsonl(
        path,
        [
            {"header": {"env_id": "GuiGym/WikiHow-v0", "agent": "llm"}},
            _record(steps=steps, success=True, group_id="g7", anchor_step=1),
            _record(task_id="t2", infra_error="env crashed: BrokenPipeError", metadata={}),
            {"episode": 3, "task_id": "t3", "category": "QA", "success": False, "steps": 9},
        ],
    )
    run = load_run(path)
    assert run.header == {"env_id": "GuiGym/WikiHow-v0", "agent": "llm"}
    first, crashed, row = run.episodes
    assert first["outcome"] == "success" and first["group"] == "g7" and first["n"] == 2
    assert [s["new_milestones"] for s in first["steps"]] == [["typed"], ["opened"]]
    assert first["steps"][0]["generated"] == "<think>go</think>CLICK(1)"
    assert first["steps"][0]["tokens"] == 3
    assert first["steps"][1]["valid"] is False
    assert first["steps"][1]["error"] == "unknown action 'nonsense'"
    assert first["anchor_step"] == 1
    assert "prompt" not in first["steps"][0]  # prompts only when asked for
    with_prompts = load_run(path, prompts=True).episodes[0]["steps"]
    assert with_prompts[0]["prompt"] == "system: You operate a phone.\n\nuser: [image]\nGoal: do it"
    assert with_prompts[1]["prompt"] is None
    assert crashed["outcome"] == "infra_error"
    assert crashed["infra_error"] == "env crashed: BrokenPipeError"
    assert (row["n"], row["steps"], row["category"]) == (9, [], "QA")  # an evaluation row
    # infra errors count apart: the rate is successes over scored episodes
    total = category_success(run.episodes)[-1]
    assert total == {"category": None, "episodes": 3, "success": 1, "infra_error": 1, "rate": 0.5}


def test_target_box_and_screen_line_are_those_of_the_acted_on_element(tmp_path: Path) -> None:
    path = record_sample_run(tmp_path / "run.jsonl", episodes=1, random_every=0)
    (episode,) = load_run(path).episodes
    raw = next(read_jsonl(path))
    for page_step, step in zip(episode["steps"], raw["steps"]):
        match = re.match(r"\w+\((\d+)", step["action"])
        if match is None:
            continue
        index = int(match.group(1))
        element = step["tree"]["elements"][index]
        assert page_step["box"] == element["bounds"]
        line = step["screen"].split("\n")[page_step["highlight_line"]]
        assert f" id={index}" in line.split(">")[0]
        assert page_step["size"] == [360, 720]
    assert episode["outcome"] == "success"
    assert {s["component"] for s in episode["series"]} >= {
        "env",
        "progress",
        "prm",
        "milestone",
        "judge",
    }


def test_bad_files_get_errors_naming_the_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(ViewError, match="no such file"):
        load_run(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_record()) + "\n[1, 2]\n")
    with pytest.raises(ViewError, match=r"bad\.jsonl:2: expected a trajectory object, got list"):
        load_run(bad)
    bad.write_text(json.dumps(_record(steps="many")) + "\n")
    with pytest.raises(ViewError, match=r"bad\.jsonl:1: 'steps' must be a list"):
        load_run(bad)
    bad.write_text("{not json\n")
    with pytest.raises(ViewError, match=r"bad\.jsonl:1: corrupt JSON"):
        load_run(bad)


def test_an_empty_file_is_a_run_without_episodes(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    run = load_run(path)
    assert run.episodes == [] and run.to_page()["categories"] == []
    assert '"episodes":[]' in render_report([run])


def test_screenshots_are_confined_to_the_run_folder(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    (runs / "shots").mkdir(parents=True)
    (runs / "shots" / "a.png").write_bytes(PNG)
    (tmp_path / "secret.png").write_bytes(PNG)
    (runs / "shots" / "link.png").symlink_to(tmp_path / "secret.png")
    assert screenshot_path(runs / "r.jsonl", "shots/a.png") == (runs / "shots/a.png").resolve()
    for hostile in (
        "../secret.png",
        str(tmp_path / "secret.png"),
        "shots/link.png",
        "shots\\..\\..\\secret.png",
    ):
        with pytest.raises(ViewError):
            screenshot_path(runs / "r.jsonl", hostile)
    path = runs / "r.jsonl"
    write_jsonl(
        path,
        [_record(steps=[_step(0, screenshot="shots/a.png"), _step(1, screenshot="../secret.png")])],
    )
    ok, refused = load_run(path).episodes[0]["steps"]
    assert ok["image"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert refused["image"] is None and "not relative" in refused["image_note"]


# ------------------------------------------------------------------------------ the page

HOSTILE = [
    "<script>window.__pwned = 1</script>",
    '"><img src=x onerror="window.__pwned = 2">',
    "</script><script>window.__pwned = 3</script>",
    "<!-- <script>",
    'it\'s "quoted" & <b>bold</b>',
    "lone \ud800 surrogate \udfff",
    "\u2028line separators\u2029",
]


def test_embedded_json_cannot_close_its_script_and_round_trips() -> None:
    text = embed_json({"texts": HOSTILE, HOSTILE[0]: 1})
    assert re.fullmatch(r"[\x20-\x7e]*", text)  # ASCII only: no raw surrogates or separators
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"texts": HOSTILE, HOSTILE[0]: 1}
    # NaN and infinity (JSON has none; four rewards of 1e308 sum to one) are null
    assert embed_json({"x": math.nan, "y": [math.inf, -math.inf, 1.0]}) == (
        '{"x":null,"y":[null,null,1.0]}'
    )


def test_report_page_has_exactly_its_own_scripts_allowed_by_hash(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    steps = [_step(0, action=text, thought=text, screen=text) for text in HOSTILE]
    _write_ascii(path, [_record(task_id=text, instruction=text, steps=steps) for text in HOSTILE])
    page = render_report([load_run(path)])
    # the list data, one element per episode, and the page's script: nothing else
    assert page.count("<script") == 2 + len(HOSTILE) == page.count("</script>")
    assert page.count('<script type="application/json"') == 1 + len(HOSTILE)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    script = re.search(r"<script>(.*)</script>", page, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp and "unsafe" not in csp
    page.encode("utf-8")  # lone surrogates were escaped, so the page is valid UTF-8


def test_run_names_tell_same_named_files_apart() -> None:
    assert run_names([Path("a/run.jsonl"), Path("b/run.jsonl")]) == ["a/run.jsonl", "b/run.jsonl"]
    assert run_names([Path("x/before.jsonl"), Path("x/after.jsonl")]) == [
        "before.jsonl",
        "after.jsonl",
    ]


# ---------------------------------------------------------------------------------- CLI


def test_view_command_writes_one_self_contained_file(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    write_jsonl(path, [_record(steps=[_step(0)]), _record(task_id="t2", success=True)])
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["view", str(path), str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "4 episodes, 2 steps from 2 file(s)" in result.output
    page = out.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing fetched from outside


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["view", "nope.jsonl"], "nope.jsonl: no such file"),
        (["view", "{dir}"], "is a folder; give its .jsonl files"),
        (["view", "{run}", "--out", "{dir}"], "is a folder"),
        (["view", "{bad}"], "bad.jsonl:1: corrupt JSON"),
        (["serve", "{run}"], "is a file, not a folder"),
        (["serve", "{dir}", "--port", "70000"], "less than or equal to 65535"),
    ],
)
def test_cli_mistakes_are_one_line_with_exit_code_2(tmp_path: Path, args, message) -> None:
    run = tmp_path / "run.jsonl"
    write_jsonl(run, [_record()])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n")
    args = [a.format(run=run, dir=tmp_path, bad=bad) for a in args]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert re.match(rf"\S+ {args[0]}: error: ", lines[0]), lines[0]


# -------------------------------------------------------------------------------- server


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, int, Path]]:
    """A server on a folder with one run and a screenshot; beside the folder, secrets."""
    base = tmp_path_factory.mktemp("serve")
    root = base / "runs"
    (root / "sub" / "shots").mkdir(parents=True)
    (root / "sub" / "shots" / "a.png").write_bytes(PNG)
    write_jsonl(root / "sub" / "run.jsonl", [_record(steps=[_step(0, screenshot="shots/a.png")])])
    (base / "secret.png").write_bytes(PNG)
    write_jsonl(base / "secret.jsonl", [_record(task_id="SECRET")])
    (root / "escape.png").symlink_to(base / "secret.png")
    (root / "escape.jsonl").symlink_to(base / "secret.jsonl")
    (root / os.fsdecode(b"not-utf8-\xff.jsonl")).write_text("")
    (root / "<b>&amp;.jsonl").write_text("")
    server = make_server(root, port=0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield host, port, base
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def _get(served, path: str, method: str = "GET") -> tuple[int, bytes]:
    host, port, _ = served
    connection = http.client.HTTPConnection(host, port, timeout=10)
    try:
        connection.request(method, path)  # sent as written: no client-side normalising
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_server_binds_loopback_and_lists_runs(served) -> None:
    assert served[0] == "127.0.0.1"
    status, body = _get(served, "/")
    assert status == 200 and b"sub/run.jsonl" in body
    assert b"&lt;b&gt;&amp;amp;.jsonl" in body and b"<b>" not in body  # names are escaped
    assert b"not-utf8" not in body  # a name a URL cannot carry is left out
    assert b"escape.jsonl" not in body  # a link leading outside is not listed


def test_server_renders_a_run_with_linked_screenshots(served) -> None:
    status, body = _get(served, "/view?run=sub/run.jsonl")
    assert status == 200
    detail = json.loads(re.search(rb'id="gg-e-0-0">(.*?)</script>', body, re.S).group(1))
    assert detail["steps"][0]["image"] == "/file/sub/shots/a.png"
    status, body = _get(served, "/file/sub/shots/a.png")
    assert status == 200 and body == PNG


@pytest.mark.parametrize(
    "path",
    [
        "/file/../secret.png",
        "/file/sub/../../secret.png",
        "/file/%2e%2e/secret.png",
        "/file/%2E%2E%2Fsecret.png",
        "/file/sub/..%2f..%2fsecret.png",
        "/file/%252e%252e/secret.png",
        "/file//etc/passwd",
        "/file/%2Fetc%2Fpasswd",
        "/file/escape.png",
        "/file/sub/run.jsonl",  # inside, but not an image
        "/file/sub%00.png",
        "/view?run=../secret.jsonl",
        "/view?run=%2e%2e%2fsecret.jsonl",
        "/view?run=/etc/passwd",
        "/view?run=escape.jsonl",
        "/view?run=sub",
        "/view",
        "/../secret.png",
    ],
)
def test_server_never_reads_outside_its_folder(served, path: str) -> None:
    status, body = _get(served, path)
    assert status == 404
    assert b"SECRET" not in body and PNG not in body


def test_the_confinement_check_itself(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(PNG)
    assert confine(tmp_path, "a.png") == (tmp_path / "a.png").resolve()
    for bad in ("", "..", "../a.png", "/etc/passwd", "x/../../a.png", "a\\..\\b", "~/x", "a\x00b"):
        with pytest.raises(ValueError):
            confine(tmp_path, bad)


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_server_is_read_only(served, method: str) -> None:
    status, _ = _get(served, "/view?run=sub/run.jsonl", method=method)
    assert status == 405
