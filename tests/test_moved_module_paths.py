"""Modules that became packages keep their old import paths (the docs show them): each old
path gives the very objects the package holds."""

from __future__ import annotations

import importlib

import pytest

MOVED = [
    # (old module, new module, names the old module gives)
    (
        "gui_gym.models.judge_scripted",
        "gui_gym.models.judge",
        ["RuleJudge", "ScriptedEvaluator", "ScriptedReasoner", "analyse_task", "RULE_PROMPT_GOAL"],
    ),
    (
        "gui_gym.models.judge_llm",
        "gui_gym.models.judge",
        ["LLMJudge", "llm_components", "parse_status", "MAX_GOAL_WORDS", "FILTER_CRITERIA"],
    ),
    (
        "gui_gym.models.prm_llm",
        "gui_gym.models.prm",
        ["LLMStepJudgePRM", "ADMIRE_PROCESS_REWARD_WEIGHT", "parse_step_verdict"],
    ),
    ("gui_gym.envs.miniwob.oracle", "gui_gym.envs.miniwob.oracles", ["ORACLES", "OracleStuck"]),
]


@pytest.mark.parametrize(("old", "new", "names"), MOVED, ids=[m[0] for m in MOVED])
def test_the_old_module_path_gives_the_packages_objects(
    old: str, new: str, names: list[str]
) -> None:
    before, after = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(before, name) is getattr(after, name), name


def test_the_prm_package_still_gives_the_atomic_folder_writer() -> None:
    from gui_gym.core.files import write_folder_atomically
    from gui_gym.models.prm import write_folder_atomically as old_path

    assert old_path is write_folder_atomically
