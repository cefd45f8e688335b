"""GuiGym/ALFWorld-v0 on alfworld's engine: the planner oracle wins a sample of games over the
six task types, observations and rewards equal raw alfworld's (TextWorld's PddlEnv) on the
same game and actions, the reward contract, fork, and the Gymnasium contract."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import require

require("alfworld", "alfworld")

from gui_gym.envs.alfworld.env import MILESTONES, ALFWorldEnv, load_suite  # noqa: E402
from gui_gym.envs.alfworld.generate import (  # noqa: E402
    CAPACITY,
    COUNTS,
    TASK_TYPES,
    _rtype,
    make_game,
    scenes,
)

FULL = os.environ.get("GUI_GYM_DOCS_FULL", "") == "1"
SMALL = {"train": 30, "valid_seen": 2, "valid_unseen": 6}
CHEAP = {
    "pick_and_place_simple": "train/0012",
    "look_at_obj_in_light": "train/0013",
    "pick_clean_then_place_in_recep": "train/0026",
    "pick_heat_then_place_in_recep": "train/0015",
    "pick_cool_then_place_in_recep": "train/0010",
    "pick_two_obj_and_place": "train/0011",
}
"""The default suite's games, one per type: the cheapest of the first 30 train games to build
(planner 0.1-0.6 CPU s each, measured; a big-kitchen heat game takes 13-30 CPU s). Every
test of the file plays among these, so each is built once per session (``cache``);
`make check-docs` plays the 60-game sample."""
PLACE, LOOK, CLEAN, HEAT, COOL, TWO = CHEAP.values()


@pytest.fixture(scope="session")
def cache(tmp_path_factory):
    """One game cache for the whole session (every test's games are built once).
    ``GUI_GYM_ALFWORLD_TEST_CACHE`` names a folder to keep it across runs (games are
    deterministic and written atomically, so a kept cache is always valid)."""
    mp = pytest.MonkeyPatch()
    kept = os.environ.get("GUI_GYM_ALFWORLD_TEST_CACHE")
    path = kept or str(tmp_path_factory.mktemp("alfworld-cache"))
    mp.setenv("GUI_GYM_CACHE", path)
    mp.delenv("GUI_GYM_ALFWORLD_PLANNER_CPU_S", raising=False)
    mp.delenv("GUI_GYM_ALFWORLD_PLANNER_MEMORY_MB", raising=False)
    yield path
    mp.undo()


@pytest.fixture(scope="module")
def env(cache):
    e = ALFWorldEnv(num_games=SMALL)
    yield e
    e.close()


def play_oracle(env, task_id):
    obs, info = env.reset(seed=0, options={"task": task_id})
    assert info["success"] is False
    assert f"Your task is to: {obs['instruction']}." in " ".join(obs["screen"].split())
    reward, done, steps = 0.0, False, 0
    while not done:
        obs, reward, term, trunc, info = env.step(env.oracle_action())
        done, steps = term or trunc, steps + 1
    return reward, term, steps, info


def test_splits_have_alfworlds_counts_and_scenes():
    assert COUNTS == {"train": 3553, "valid_seen": 140, "valid_unseen": 134}
    suite = load_suite()
    ids = suite.task_ids if hasattr(suite, "task_ids") else [t.task_id for t in suite]
    assert len(ids) == 3827
    by_split = {s: [t for t in suite if t.params["alfworld_split"] == s] for s in COUNTS}
    assert {s: len(ts) for s, ts in by_split.items()} == COUNTS
    # valid-unseen games use ALFRED's held-out floor plans (scenes 1-6 of each room group)
    assert {t.params["scene"] % 100 for t in by_split["valid_unseen"]} <= set(range(1, 7))
    assert all(t.params["scene"] % 100 >= 7 for t in by_split["train"])
    assert not set(scenes("valid_unseen")) & set(scenes("train"))
    for split, tasks in by_split.items():
        assert {t.category for t in tasks} == set(TASK_TYPES), split
    # the same seed gives the same games; another seed other games
    assert make_game("train", 5).pddl_problem == make_game("train", 5).pddl_problem
    assert make_game("train", 5, seed=1).pddl_problem != make_game("train", 5).pddl_problem
    env = ALFWorldEnv(split="valid_unseen")
    assert {t.params["alfworld_split"] for t in env._pool} == {"valid_unseen"}
    assert len(env._pool) == 134 and len(ALFWorldEnv(split="test")._pool) == 274
    with pytest.raises(ValueError, match="split must be one of"):
        ALFWorldEnv(split="valid")
    with pytest.raises(ValueError, match="num_games keys"):
        ALFWorldEnv(num_games={"test": 3})


def test_realistic_placement():
    from alfworld.gen import constants

    counts: dict[str, int] = {}
    fridge = food = 0
    for i in range(120):
        game = make_game("train", i)
        lines = game.pddl_problem.splitlines()
        hosts = [line.split()[2].rstrip(")") for line in lines if "(inReceptacle " in line]
        for host in hosts:
            counts[host] = counts.get(host, 0) + 1
        for h in set(hosts):  # capacities
            assert hosts.count(h) <= CAPACITY.get(_rtype(h.replace("_bar_", "|")), 3), (i, h)
        assert "(pickupable HousePlant" not in game.pddl_problem
        assert "(pickupable DeskLamp" not in game.pddl_problem
        assert "(pickupable FloorLamp" not in game.pddl_problem
        for line in lines:
            if "(inReceptacle " in line and line.split()[1].startswith(("Apple_", "Tomato_")):
                food += 1
                fridge += "Fridge" in line
        # the target never starts in a receptacle of the goal type
        parent = game.pddl_params["parent_target"]
        target = game.pddl_params["object_target"]
        if parent:
            for line in lines:
                if "(inReceptacle " in line and line.split()[1].startswith(target + "_bar_"):
                    assert not line.split()[2].startswith(parent + "_bar_"), (i, line)
    assert constants.PICKUP_REPEAT_MAX == 4
    # food is drawn to fridges more often than a uniform choice over hosts would
    assert food and fridge / food > 0.2


def _translated(split, index, draw):
    from pathlib import Path

    import alfworld

    from gui_gym.envs.alfworld.engine import _translate

    domain = (Path(alfworld.__file__).parent / "data" / "alfred.pddl").read_text()
    _, sas, sas_replan = _translate(domain, make_game(split, index, draw=draw).pddl_problem)
    return sas, sas_replan


@pytest.mark.timeout(120)
def test_the_planner_is_bounded_in_cpu_memory_and_wall_time():
    """A placement the blind planner needs minutes and gigabytes for (train/0017's draw 1, a
    pick-two in a 22-receptacle bedroom: over 256 MiB and 29 CPU s here) is stopped at its
    bound with an error that says which; the wall-clock backstop stops it even when the child
    gets no CPU. Within a bound, the child's plan is the one the planner finds in-process."""
    from gui_gym.envs.alfworld.planner import (
        PlannerLimitExceeded,
        PlannerOverloaded,
        bounded_plan,
    )

    sas, sas_replan = _translated("train", 17, draw=1)
    with pytest.raises(PlannerLimitExceeded, match="CPU time bound"):
        bounded_plan(sas, sas_replan, cpu_s=1, memory_mb=4096)
    with pytest.raises(PlannerLimitExceeded, match="memory bound"):
        bounded_plan(sas, sas_replan, cpu_s=60, memory_mb=16)
    with pytest.raises(PlannerOverloaded, match="wall time"):
        bounded_plan(sas, sas_replan, cpu_s=60, memory_mb=4096, wall_s=0.5)
    with pytest.raises(ValueError, match="positive"):
        bounded_plan(sas, sas_replan, cpu_s=0)
    # a small problem: the same plan as TextWorld's own in-process planner
    from fast_downward.interface import Operator, load_lib

    sas, sas_replan = _translated("train", 12, draw=0)
    result = bounded_plan(sas, sas_replan)
    lib = load_lib()
    lib.load_sas(sas.encode())
    lib.load_sas_replan(sas_replan.encode())
    assert lib.replan(False)
    ops = (Operator * lib.get_last_plan_length())()
    lib.get_last_plan(ops)
    assert result.operators == [op.name for op in ops] and len(result.operators) == 4
    assert result.cpu_s > 0 and result.peak_mb > 0


@pytest.mark.timeout(300)
def test_a_game_over_the_planner_bound_is_replaced_by_its_next_draw(tmp_path, monkeypatch):
    """train/0005's first placement needs 8-16 MiB of planner memory, its second 1-2 MiB:
    under a 4 MiB bound the build replaces the first by the second (the scene, goal and task
    text stay), records why, and does so identically on a rebuild; the oracle wins it. With
    no draw left it fails with a clear error instead of searching on."""
    from gui_gym.envs.alfworld.env import build_game, game_dir

    monkeypatch.setenv("GUI_GYM_CACHE", str(tmp_path))
    monkeypatch.setenv("GUI_GYM_ALFWORLD_PLANNER_MEMORY_MB", "4")
    folder = game_dir("train", 5, 0)
    assert folder.parent.parent.name == "seed0-cpu300-mem4"  # another bound, another cache
    e = ALFWorldEnv(num_games={"train": 6, "valid_seen": 0, "valid_unseen": 0})
    reward, term, steps, info = play_oracle(e, "train/0005")
    assert reward == 1.0 and term and info["success"] and steps >= 8
    build = json.loads((folder / "build.json").read_text())
    assert build["draw"] == 1 and build["bound"] == {"cpu_s": 300.0, "memory_mb": 4}
    assert [r["draw"] for r in build["replaced"]] == [0]
    assert "memory bound" in build["replaced"][0]["why"]
    first, second = make_game("train", 5, draw=0), make_game("train", 5, draw=1)
    game = json.loads((folder / "game.tw-pddl").read_text())
    assert game["pddl_problem"] == second.pddl_problem != first.pddl_problem
    assert json.loads((folder / "traj_data.json").read_text()) == first.traj_data()
    assert (second.scene, second.task_text) == (first.scene, first.task_text)
    assert e.task.instruction == first.task_text
    again = build_game("train", 5, 0, tmp_path / "again", memory_mb=4)
    assert (again / "game.tw-pddl").read_text() == (folder / "game.tw-pddl").read_text()
    assert json.loads((again / "oracle_plan.json").read_text()) == json.loads(
        (folder / "oracle_plan.json").read_text()
    )
    with pytest.raises(RuntimeError, match=r"no placement of 1 is solvable.*memory bound"):
        build_game("train", 5, 0, tmp_path / "none", memory_mb=4, max_draws=1)
    assert not (tmp_path / "none").exists() and not list(tmp_path.glob(".none.*"))


def test_later_draws_keep_the_task_and_thin_the_clutter():
    """A replacement draw keeps the scene, goal and text; draws 3+ place fewer other objects
    (the planner's cost grows with them), never fewer targets than the goal needs."""
    dense = thin = 0
    for i in range(12):
        first = make_game("train", i)
        for draw in (1, 5):
            game = make_game("train", i, draw=draw)
            assert (game.scene, game.pddl_params, game.task_text) == (
                first.scene,
                first.pddl_params,
                first.task_text,
            )
            target = game.pddl_params["object_target"]
            need = 2 if game.task_type == "pick_two_obj_and_place" else 1
            assert game.pddl_problem.count(f"(objectType {target}_bar_") >= need
        dense += first.pddl_problem.count(" - object")
        thin += make_game("train", i, draw=5).pddl_problem.count(" - object")
    assert thin < 0.6 * dense
    with pytest.raises(ValueError, match="draw must be"):
        make_game("train", 0, draw=-1)


def test_pick_two_games_avoid_the_largest_scenes():
    from gui_gym.envs.alfworld.generate import PICK_TWO_MAX_RECEPTACLES, _scene_summary

    suite = load_suite()
    two = [t for t in suite if t.category == "pick_two_obj_and_place"]
    assert len(two) == sum(n // 6 for n in COUNTS.values())  # game i has type i mod 6
    sizes = {t.params["scene"]: len(_scene_summary(t.params["scene"])[1]) for t in two}
    assert max(sizes.values()) <= PICK_TWO_MAX_RECEPTACLES
    # the large scenes still host the other types
    big = {t.params["scene"] for t in suite if len(_scene_summary(t.params["scene"])[1]) > 25}
    assert big and {16, 30} <= big


@pytest.mark.timeout(1800)
def test_oracle_wins_a_sample_of_every_type(env, cache):
    """6 games here (one per type, the cheapest builds), 60 under `make check-docs` (48
    train, 6 valid-seen, 6 valid-unseen; big kitchens' builds take up to a minute of CPU)."""
    if FULL:
        big = ALFWorldEnv(num_games={"train": 48, "valid_seen": 6, "valid_unseen": 6})
        ids = [t.task_id for t in big.suite]
    else:
        big = env
        ids = list(CHEAP.values())
    seen = set()
    for task_id in ids:
        reward, term, steps, info = play_oracle(big, task_id)
        category = big.task.category
        seen.add(category)
        assert reward == 1.0 and term and info["success"], (task_id, steps)
        assert info["milestones"] and set(info["milestones"]) == set(MILESTONES[category])
    assert seen == set(TASK_TYPES)


@pytest.mark.timeout(600)
def test_matches_raw_alfworld_on_the_same_game_and_actions(env):
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
    from textworld.envs.pddl import PddlEnv

    task_id = CLEAN
    _, _, _, _ = play_oracle(env, task_id)
    winning = []
    obs, _ = env.reset(seed=0, options={"task": task_id})
    rng = np.random.default_rng(0)
    raw = AlfredDemangler(PddlEnv(textworld.EnvInfos(won=True, admissible_commands=True)))
    raw.load(str(env.game_path(env.task)))
    state = raw.reset()

    def same(obs, state):
        # the engine's text and commands exactly; the screen shows them (whitespace folded)
        assert env._feedback == state.feedback.strip()
        assert env._state["admissible_commands"] == state["admissible_commands"]
        screen = " ".join(obs["screen"].split())
        assert " ".join(state.feedback.split()) in screen
        assert all(f">{command}</button>" in screen for command in state["admissible_commands"])
        return True

    assert same(obs, state)
    # random commands, then the oracle to the win: text, commands and reward agree
    for step in range(24):
        if step < 8:
            commands = state["admissible_commands"]
            command = commands[int(rng.integers(len(commands)))]
        else:
            action = env.oracle_action()
            command = state["admissible_commands"][action.index - 1]
        assert env._state["admissible_commands"] == state["admissible_commands"]
        obs, reward, term, trunc, info = env.step(command)
        state, raw_score, raw_done = raw.step(command)
        winning.append(command)
        assert same(obs, state)
        assert reward == float(raw_score) and term == bool(raw_done)
        if term:
            break
    assert reward == 1.0 and info["success"]


@pytest.mark.timeout(600)
def test_reward_contract_do_nothing_look_and_random(env):
    for task_id in (PLACE, LOOK, TWO):
        env.reset(seed=0, options={"task": task_id})
        rewards = []
        done = False
        while not done:  # doing nothing
            _, r, term, trunc, info = env.step("WAIT()")
            rewards.append(r)
            done = term or trunc
        assert sum(rewards) == 0.0 and trunc and info["action_valid"]
        env.reset(seed=0, options={"task": task_id})
        done = False
        while not done:  # `look` forever
            _, r, term, trunc, info = env.step("look")
            assert info["action_valid"] and r == 0.0
            done = term or trunc
        assert trunc and not info["success"]
        _, info = env.reset(seed=0, options={"task": task_id})
        rng = np.random.default_rng(1)
        total, done = 0.0, False
        while not done:  # a random agent over the admissible commands
            candidates = env.candidate_actions()
            _, r, term, trunc, info = env.step(candidates[int(rng.integers(len(candidates)))])
            total += r
            done = term or trunc
        # a random walk can really solve a game (ALFWorld's random baselines are near 0, not
        # 0): then, and only then, it is paid, once, with every milestone of the type reached
        if total:
            assert total == 1.0 and env._state["won"] and info["success"]
            assert set(info["milestones"]) == set(MILESTONES[env.task.category])
            assert env._history[-1].startswith(("move ", "use "))
        else:
            assert not env._state["won"] and not info["success"]
        env.reset(seed=0, options={"task": task_id})
        obs, r, term, trunc, info = env.step("DONE()")
        assert term and r == 0.0 and not info["success"]


def test_invalid_actions_are_refused_with_a_reason(env):
    env.reset(seed=0, options={"task": LOOK})
    n = len(env.candidate_actions())
    assert n == len(env._state["admissible_commands"]) and n > 3
    _, r, _, _, info = env.step("fly to the moon")
    assert info["action_valid"] is False and r == 0.0
    _, _, _, _, info = env.step(f"CLICK({n + 1})")
    assert info["action_valid"] is False and f"no element {n + 1}" in info["action_error"]
    _, _, _, _, info = env.step("GOBACK()")
    assert info["action_valid"] is False and "not an ALFWorld action" in info["action_error"]
    assert info["step"] == 3


@pytest.mark.timeout(600)
def test_fork_is_equal_and_independent(env):
    env.reset(seed=0, options={"task": COOL})
    for _ in range(3):
        env.step(env.oracle_action())
    with pytest.MonkeyPatch.context() as mp:  # a fork never rebuilds through pickling
        mp.setattr(ALFWorldEnv, "__setstate__", lambda *a: pytest.fail("fork() unpickled"))
        clone = env.fork()
    assert clone.ui_tree == env.ui_tree and clone.milestones == env.milestones
    assert clone.steps_taken == env.steps_taken and clone.suite is env.suite
    assert pickle.loads(pickle.dumps(env)).suite is env.suite  # the suite is shared, cached
    a = str(env.candidate_actions()[0])
    assert pickle.dumps(clone.step(a)) == pickle.dumps(env.step(a))
    before = env.ui_tree
    clone.step("look")
    clone.step(str(clone.candidate_actions()[-1]))
    assert env.ui_tree == before
    # the original still wins by the oracle, and so does a fresh fork
    second = env.fork()
    for e in (env, second):
        done = False
        while not done:
            _, r, term, trunc, info = e.step(e.oracle_action())
            done = term or trunc
        assert r == 1.0


@pytest.mark.timeout(600)
def test_gymnasium_contract(cache):
    from gymnasium.utils.env_checker import check_env

    env = gym.make("GuiGym/ALFWorld-v0", num_games=SMALL, task=LOOK)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()

    def rollout(seed):
        e = gym.make(
            "GuiGym/ALFWorld-v0", num_games={"train": 3, "valid_seen": 0, "valid_unseen": 0}
        )
        obs, info = e.reset(seed=seed)
        rng = np.random.default_rng(seed)
        out = [(obs, info["task_id"])]
        for _ in range(6):
            candidates = e.unwrapped.candidate_actions()
            action = str(candidates[int(rng.integers(len(candidates)))])
            obs, reward, term, trunc, info = e.step(action)
            out.append((action, obs, reward, term, trunc, info["milestones"]))
        return out, e

    first, e = rollout(7)
    assert pickle.dumps(first) == pickle.dumps(rollout(7)[0])
    # picklable mid-episode: the copy replays the commands and continues identically
    clone = pickle.loads(pickle.dumps(e.unwrapped))
    assert clone.ui_tree == e.unwrapped.ui_tree and clone.task.task_id == e.unwrapped.task.task_id
    a = str(clone.candidate_actions()[0])
    assert pickle.dumps(clone.step(a)) == pickle.dumps(e.unwrapped.step(a))
    again = gym.make(e.spec)
    assert again.unwrapped._num_games == e.unwrapped._num_games


@pytest.mark.timeout(600)
def test_async_vector_env(cache):
    kwargs = {"num_games": {"train": 3, "valid_seen": 0, "valid_unseen": 0}}
    envs = gym.make_vec("GuiGym/ALFWorld-v0", num_envs=2, vectorization_mode="async", **kwargs)
    try:
        obs, info = envs.reset(seed=0)
        assert all("Your task is to:" in s for s in obs["screen"])
        obs, reward, term, trunc, info = envs.step(["look", "junk"])
        assert reward.shape == (2,) and list(info["action_valid"]) == [True, False]
    finally:
        envs.close()


def test_listed_by_the_cli():
    out = subprocess.run(
        [sys.executable, "-m", "gui_gym.cli", "list", "GuiGym/ALFWorld-v0"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert out.returncode == 0, out.stderr
    assert "GuiGym/ALFWorld-v0" in out.stdout and "3827" in out.stdout


def test_registered():
    assert "GuiGym/ALFWorld-v0" in gym.registry


@pytest.mark.timeout(900)
def test_bench_against_raw_and_its_summary(tmp_path, cache):
    from typer.testing import CliRunner

    from gui_gym.cli import app
    from gui_gym.cli.bench.summary import write_summary

    out = tmp_path / "bench_alfworld.json"
    result = CliRunner().invoke(
        app, ["bench", "--alfworld", "--games", "1", "--steps", "4", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    s = report["summary"]
    assert s["games"] == 1 and s["observations_agree"] is True
    assert s["ours_steps_per_s"] > 0 and s["raw_steps_per_s"] > 0 and s["ratio"] > 0
    row = report["games"][0]
    assert row["ours"]["steps"] == row["raw"]["steps"] == 4
    headline = json.loads(write_summary(tmp_path).read_text())["benchmarks"]
    assert headline["bench_alfworld"]["headline"]["ratio"] == s["ratio"]


def test_progrm_env_progress_follows_the_milestones(env):
    """ProgRM-Env's rule-based progress (milestones reached / the type's count) as a shaped
    reward: it rises along an oracle episode and reaches 1 at the win."""
    from gui_gym.models.progress import MilestoneProgress
    from gui_gym.wrappers.progress import ProgressRewardWrapper

    model = MilestoneProgress.from_suite(env.suite)
    wrapped = ProgressRewardWrapper(env, model)
    wrapped.reset(seed=0, options={"task": COOL})
    progress, done = [], False
    while not done:
        _, reward, term, trunc, info = wrapped.step(env.oracle_action())
        assert info["progress"]["value"] == len(info["milestones"]) / len(env.task.milestones)
        progress.append(info["progress"]["value"])
        done = term or trunc
    assert progress == sorted(progress) and progress[-1] == 1.0 and reward > 1.0
    assert len(set(progress)) >= 3  # it rises in steps, not only at the end


FUZZ_SEEDS = (
    "CLICK(3)",
    "CLICK(999)",
    "go to countertop 1",
    "take apple 1 from countertop 1",
    "look",
    'INPUT(0, "apple")',
    "GOBACK()",
    'ANSWER("3")',
    '{"action_type": "click", "index": 2}',
    "<action>CLICK(1)</action>",
    "CLICK_XY(10, 20)",
    "DONE()",
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=60), st.sampled_from(FUZZ_SEEDS)), data=st.data())
def test_no_string_makes_step_raise(env, text, data):
    """The contract suite's fuzz test, on an ALFWorld game: any string is a step, never an
    exception; an invalid one says why and pays nothing."""
    if data.draw(st.booleans()):  # a typo'd command
        chars = list(text)
        for pos, ch in data.draw(
            st.lists(st.tuples(st.integers(0, 60), st.characters()), max_size=3)
        ):
            chars.insert(pos % (len(chars) + 1), ch)
        text = "".join(chars)
    env.reset(seed=0, options={"task": CLEAN})
    for _ in range(data.draw(st.integers(0, 3))):  # wander off the start first
        candidates = env.candidate_actions()
        env.step(candidates[data.draw(st.integers(0, len(candidates) - 1))])
    obs, reward, term, trunc, info = env.step(text)
    assert isinstance(obs["screen"], str) and isinstance(info["action_valid"], bool)
    if not info["action_valid"]:
        assert isinstance(info["action_error"], str) and info["action_error"]
        assert reward == 0.0


def test_alfworld_envs_take_turns_on_the_rollout_engines_threads() -> None:
    """Its PDDL translation rewrites the process-wide ``sys.argv``: the rollout engine must
    serialise its envs' calls (``thread_safe = False``) while other envs run together."""
    from gui_gym.core.env import GuiEnv
    from gui_gym.envs.alfworld.env import ALFWorldEnv
    from gui_gym.runs.slots import _serial_lock

    assert GuiEnv.thread_safe and not ALFWorldEnv.thread_safe
    env = object.__new__(ALFWorldEnv)  # the lock is per class: no game needs building
    assert _serial_lock(env) is _serial_lock(object.__new__(ALFWorldEnv)) is not None
    assert _serial_lock(gym.make("GuiGym/WikiHow-v0")) is None


def test_records_an_oracle_dataset_and_refuses_screenshots(cache, tmp_path):
    # every gui-gym env takes screenshot=False (the recorder, SFT data, PRM data and the
    # engine adapters pass it); ALFWorld has no screen, so True is one clear error
    from gui_gym.runs.record import record_dataset

    with pytest.raises(ValueError, match="no screen to draw"):
        gym.make("GuiGym/ALFWorld-v0", num_games=SMALL, task=LOOK, screenshot=True)
    out = record_dataset(
        "GuiGym/ALFWorld-v0",
        "oracle",
        episodes=1,
        out=tmp_path / "data",
        tasks=[LOOK],
        env_kwargs={"num_games": SMALL, "max_steps": 30},
        progress=False,
    )
    rows = [json.loads(line) for line in (tmp_path / "data" / "trajectories.jsonl").open()]
    assert out.successes == 1 and len(rows) == 1 and rows[0]["task_id"] == LOOK
    assert out.lost == 0 and rows[0]["steps"][0]["action"]  # the expert's commands, recorded


@pytest.mark.timeout(600)
def test_plans_are_kept_by_state_for_every_env_and_process(cache, monkeypatch):
    """A state's plan is a function of the game and the state: a second env (a GRPO group's
    other episode) or a new process meeting the same state, by any commands, reuses it, and a
    planner bound error from that state comes back without running the planner again."""
    from gui_gym.envs.alfworld import env as alfworld_env
    from gui_gym.envs.alfworld.engine import FastPddlEnv
    from gui_gym.envs.alfworld.planner import PlannerLimitExceeded

    runs: list[int] = []
    real_plan = FastPddlEnv.plan

    def counted(self, *args, **kwargs):
        runs.append(1)
        return real_plan(self, *args, **kwargs)

    def fresh_process() -> None:
        monkeypatch.setattr(alfworld_env, "_PLANS", type(alfworld_env._PLANS)())

    fresh_process()
    first, second = ALFWorldEnv(num_games=SMALL), ALFWorldEnv(num_games=SMALL)
    for e in (first, second):
        e.reset(seed=0, options={"task": PLACE})  # (builds the game on first use)
    folder = first.game_path(first.task).parent / alfworld_env.PLANS_FOLDER
    shutil.rmtree(folder, ignore_errors=True)  # a kept test cache may hold plans already
    # the same state by other commands: "look" then "inventory", and the other way round
    first.step("look")
    first.step("inventory")
    second.step("inventory")
    second.step("look")
    monkeypatch.setattr(FastPddlEnv, "plan", counted)
    plan = first.plan()
    assert runs == [1] and plan
    assert second.plan() == plan and runs == [1]
    assert len(list(folder.glob("*.json"))) == 1
    fresh_process()  # another process (or run) reads the game folder's plans
    third = ALFWorldEnv(num_games=SMALL)
    third.reset(seed=0, options={"task": PLACE})
    third.step("inventory")
    third.step("look")
    assert third.oracle_action() is not None and runs == [1]
    # a bound error is kept too
    elsewhere = next(
        c for c in first._state["admissible_commands"] if c.startswith("go to ") and c != plan[0]
    )
    for e in (first, second):
        e.step(elsewhere)  # a new state, off the plan

    def over_bound(self, *args, **kwargs):
        runs.append(1)
        raise PlannerLimitExceeded("the planner hit its memory bound")

    monkeypatch.setattr(FastPddlEnv, "plan", over_bound)
    for e in (first, second):
        with pytest.raises(PlannerLimitExceeded, match="no plan from this state after 3"):
            e.oracle_action()
    assert runs == [1, 1]
    # a broken kept file is ignored (the planner runs again)
    for kept in folder.glob("*.json"):
        kept.write_text("{not json")
    fresh_process()
    monkeypatch.setattr(FastPddlEnv, "plan", counted)
    fourth = ALFWorldEnv(num_games=SMALL)
    fourth.reset(seed=0, options={"task": PLACE})
    fourth.step("look")
    fourth.step("inventory")
    assert fourth.plan() == plan and runs == [1, 1, 1]


def test_forks_reuse_the_fast_downward_libraries_of_collected_engines(env, monkeypatch):
    """Each engine's library is a 34 MB file copy that stays (deleted but mapped) for the
    process's life: forks must reuse those of collected engines, not load new ones."""
    import gc

    import fast_downward

    loads: list[int] = []
    real = fast_downward.load_lib

    def counted():
        loads.append(1)
        return real()

    monkeypatch.setattr(fast_downward, "load_lib", counted)
    env.reset(seed=0, options={"task": PLACE})
    env.step(env.oracle_action())
    for _ in range(20):
        clone = env.fork()
        clone.step("look")
        del clone
        gc.collect()
    assert len(loads) <= 5  # (20 without reuse: one per fork)
