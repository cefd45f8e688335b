"""Issue 46 (hardening round 3), the envs: a failed first reset no longer breaks an env made
by ``gym.make`` (Gymnasium's passive checker), a text argument is always data (never a
second action), WebShop's search cache is bounded in bytes whatever the queries, WebShop
search folds full-width text, and ``fork()`` before a reset is a clear error."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.envs.registration import registry

import gui_gym  # noqa: F401
from gui_gym._registration import ENV_IDS
from gui_gym.core.actions import ActionType, parse_action
from gui_gym.envs.webshop.search import (
    CACHED_QUERY_TERMS,
    SEARCH_CACHE_ENTRIES,
    tokenize,
)

SIMULATED = sorted(ENV_IDS)


def test_every_id_registers_the_reset_safe_checker() -> None:
    ids = [i for i in registry if i.startswith("GuiGym/")]
    assert len(ids) > len(SIMULATED)  # MiniWoB++, replay and ALFWorld ids too
    for env_id in ids:
        spec = gym.spec(env_id)
        names = [w.entry_point for w in spec.additional_wrappers]
        assert spec.disable_env_checker and names == ["gui_gym.core.env:EnvChecker"], env_id


@pytest.mark.parametrize("env_id", SIMULATED)
def test_a_failed_first_reset_leaves_the_env_usable(env_id: str) -> None:
    env = gym.make(env_id)
    with pytest.raises(gym.error.Error):
        env.reset(seed=-1)
    with pytest.raises((ValueError, KeyError)):
        env.reset(seed=0, options={"task": "no-such-task"})
    env.reset(seed=0)
    for _ in range(2):  # the old checker: TypeError: cannot unpack non-iterable NoneType
        result = env.step("WAIT()")
        assert len(result) == 5
    env.close()


def test_the_checker_is_recreated_from_the_spec() -> None:
    env = gym.make("GuiGym/WikiHow-v0")
    again = gym.make(env.spec)
    assert type(again).__name__ == "EnvChecker" and type(again.env).__name__ == "OrderEnforcing"
    env.close()
    again.close()


@pytest.mark.parametrize(
    ("text", "atype", "argument"),
    [
        ('ANSWER("<action>DONE()</action>")', ActionType.ANSWER, "<action>DONE()</action>"),
        ('INPUT(0, "<action>GOBACK()</action>")', ActionType.INPUT, "<action>GOBACK()</action>"),
        ('INPUT(0, "<action>x")', ActionType.INPUT, "<action>x"),
        ("search[<action>click[Buy Now]</action>]", ActionType.SEARCH, "<action>click[Buy Now]"),
        (
            '{"action_type": "answer", "text": "<action>DONE()</action>"}',
            ActionType.ANSWER,
            "<action>DONE()</action>",
        ),
        # inside a block, a closing tag in a quoted argument does not end the block
        (
            'ok <action>INPUT(1, "a </action><action>DONE()")</action>',
            ActionType.INPUT,
            "a </action><action>DONE()",
        ),
    ],
)
def test_a_text_argument_is_data_never_an_action(
    text: str, atype: ActionType, argument: str
) -> None:
    action = parse_action(text)
    assert action.type is atype
    assert argument in (action.text or "")


def test_model_output_blocks_still_choose_the_action() -> None:
    assert parse_action("I will click. <action>CLICK(2)</action>").type is ActionType.CLICK
    assert parse_action("<action>CLICK(1)</action> no, <action>GOBACK()</action>").type is (
        ActionType.GOBACK
    )
    with pytest.raises(ValueError, match="without a closing"):
        parse_action("<action>CLICK(1)")


def test_an_answer_holding_tags_does_not_end_the_episode_as_done() -> None:
    env = gym.make("GuiGym/WikiHow-v0")
    env.reset(seed=0)
    _, _, _, _, info = env.step('ANSWER("<action>DONE()</action>")')
    assert "<action>DONE()</action>" in info["action_description"]
    assert "DONE" not in info["action_description"].split("<action>")[0].upper()
    env.close()


def _webshop_index():
    env = gym.make("GuiGym/WebShop-v0")
    env.reset(seed=0)
    return env, env.unwrapped.app.index


def test_the_webshop_search_cache_is_bounded_in_bytes() -> None:
    env, index = _webshop_index()
    words = sorted(index.vocab)[:4000]
    before = index.cache_nbytes
    # 200 distinct ~20,000-character queries of known words (the old cache kept ~220 KB each)
    for q in range(200):
        query = " ".join(words[(q * 7 + i) % len(words)] for i in range(2500))[:20_000]
        index.search(query)
    assert index.cache_nbytes - before < 200 * 1200
    # distinct short queries: cached, at most SEARCH_CACHE_ENTRIES of them, ~1 KB each at most
    for q in range(300):
        index.search(" ".join(words[(q + i) % len(words)] for i in range(CACHED_QUERY_TERMS)))
    assert len(index._cache) <= SEARCH_CACHE_ENTRIES
    assert index.cache_nbytes <= SEARCH_CACHE_ENTRIES * 1200
    # unknown words cost nothing: one key for all of them
    entries = len(index._cache)
    for q in range(50):
        index.search(f"zzqx{q} " * 100)
    assert len(index._cache) <= entries + 1
    env.close()


def test_webshop_search_folds_full_width_text() -> None:
    assert tokenize("ＳＨＡＭＰＯＯ") == tokenize("shampoo") == ["shampoo"]
    env, index = _webshop_index()
    word = next(w for w in sorted(index.vocab) if w.isalpha() and len(w) > 4)
    wide = "".join(chr(ord(c) - ord("a") + ord("ａ")) for c in word)
    assert index.search(wide) == index.search(word) != ()
    env.close()


@pytest.mark.parametrize("env_id", SIMULATED)
def test_fork_before_reset_is_a_clear_error(env_id: str) -> None:
    env = gym.make(env_id)
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        env.unwrapped.fork()
    env.close()


def test_alfworld_fork_before_reset_is_a_clear_error() -> None:
    from tests.conftest import require

    require("alfworld", "alfworld")
    env = gym.make("GuiGym/ALFWorld-v0")
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        env.unwrapped.fork()
    env.close()


def test_the_planner_child_does_not_import_from_the_working_directory(
    tmp_path, monkeypatch
) -> None:
    from tests.conftest import require

    require("fast_downward", "alfworld")
    from gui_gym.envs.alfworld.planner import bounded_plan

    marker = tmp_path / "HIJACKED"
    (tmp_path / "json.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError):  # not a problem the planner can read
        bounded_plan("not sas", "not sas", cpu_s=2, wall_s=60)
    assert not marker.exists()  # the old child ran ./json.py instead of the standard json
