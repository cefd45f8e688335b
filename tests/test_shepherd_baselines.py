"""GUI-Shepherd's baselines (issue 20 item 14): the ORM reward of its ORM-based PPO (the task's
outcome on the final step plus a per-step format reward, App. B.2), and the actor as its own
verifier in best-of-N (Sec. 5.4, Table 5)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gui_gym  # noqa: F401
from gui_gym.rewards.prm import format_step_reward
from gui_gym.train.reward_stack import RewardStack, parse_reward
from gui_gym.wrappers import FormatRewardWrapper
from tests.conftest import require

WIKIHOW = "GuiGym/WikiHow-v0"


def test_format_reward_pays_parsed_actions_and_penalises_the_rest() -> None:
    assert format_step_reward(parsed=True, valid=True).total == pytest.approx(0.1)
    rejected = format_step_reward(parsed=True, valid=False, invalid_penalty=-0.3)
    assert (rejected.format, rejected.invalid, rejected.prm) == (0.1, -0.3, 0.0)
    assert format_step_reward(parsed=False, valid=False).total == pytest.approx(-0.1)
    with pytest.raises(ValueError, match="implies parsed"):
        format_step_reward(parsed=False, valid=True)


def test_orm_reward_is_the_outcome_on_the_last_step_plus_format_on_each() -> None:
    env = FormatRewardWrapper(gym.make(WIKIHOW, split="test", max_steps=20))
    env.reset(seed=0)
    _, garbage, *_ = env.step("make me a sandwich")
    _, rejected, _, _, info = env.step("CLICK(999)")
    assert (garbage, rejected) == (pytest.approx(-0.1), pytest.approx(0.0))
    assert info["format"]["components"] == {"format": 0.1, "invalid": -0.1}
    rewards, done = [], False
    while not done:
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        rewards.append(reward)
        done = terminated or truncated
    assert info["success"] and info["task_reward"] == 1.0
    assert rewards == pytest.approx([0.1] * (len(rewards) - 1) + [1.1])
    with pytest.raises(ValueError, match="weight must be a finite number"):
        FormatRewardWrapper(gym.make(WIKIHOW), weight=float("nan"))


def test_format_is_a_reward_term_and_not_twice_with_the_prm() -> None:
    assert parse_reward("outcome+format") == {"outcome": 1.0, "format": 1.0}
    with pytest.raises(ValueError, match="already holds GUI-Shepherd's format term"):
        parse_reward("prm+format")
    env = RewardStack.from_text("outcome+format").wrap(gym.make(WIKIHOW))
    assert isinstance(env, FormatRewardWrapper)


# ------------------------------------------------ the actor as its own verifier (Table 5)

SCREEN = "<button id=1 clickable>Search</button>\n<button id=2 clickable>Share</button>"
GOAL = "Search for a recipe"
POLICY_TEMPLATE = "Goal: {instruction}\nDone: {history}\nScreen:\n{screen}\nAction:"
STEPS = 40


def _actor(mode: str):
    """A tiny policy LM, taught in a few steps to write CLICK(1) after its prompt (logprob)
    or to answer yes to CLICK(1) and no to CLICK(2) (judge)."""
    torch = require("torch", "llm")
    torch.set_num_threads(1)  # a tiny model gains nothing from threads on a busy machine
    from gui_gym.agents.actor_verifier import SELF_JUDGE_PROMPT, ActorVerifier
    from gui_gym.models.llm import TransformersLLM
    from gui_gym.rewards.prm import PRMQuery
    from tests.tiny_llm import bpe_tokenizer, small_gpt2

    torch.manual_seed(0)
    texts = [SCREEN, GOAL, POLICY_TEMPLATE, SELF_JUDGE_PROMPT, "<action>CLICK(1)</action>"] * 8
    tokenizer = bpe_tokenizer(texts, vocab_size=1000)
    llm = TransformersLLM(small_gpt2(len(tokenizer), n_positions=256), tokenizer, device="cpu")
    verifier = ActorVerifier(llm, POLICY_TEMPLATE, mode=mode)
    queries = [PRMQuery(GOAL, SCREEN, f"CLICK({i})", f"click button {i}") for i in (1, 2)]
    if mode == "logprob":
        prompt, completion = verifier._policy_prompt(queries[0])
        examples = [(prompt, completion)]
    else:
        examples = [
            (verifier.judge_prompt(q), answer) for q, answer in zip(queries, (" yes", " no"))
        ]
    model = llm.model
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)
    for _ in range(STEPS):
        for prompt, target in examples:
            p = tokenizer.encode(prompt, add_special_tokens=False)
            t = tokenizer.encode(target, add_special_tokens=False)
            ids = torch.tensor([p + t])
            logits = model(input_ids=ids).logits[0, len(p) - 1 : -1]
            loss = torch.nn.functional.cross_entropy(logits, ids[0, len(p) :])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval()
    return verifier, queries


def test_actor_logprob_verifier_ranks_what_the_policy_would_write() -> None:
    from gui_gym.agents import BestOfNAgent

    verifier, queries = _actor("logprob")
    logits = verifier.positive_logits(queries)
    assert logits[0] > logits[1] and (logits < 0).all()  # mean token log-probabilities
    scores = verifier.score(queries)
    assert scores == pytest.approx(np.exp(logits)) and 0 < scores[1] < scores[0] <= 1

    class Proposes:  # a policy proposing the wrong action three times, the right one once
        def sample(self, observation, info, n):
            return ["CLICK(2)", "CLICK(2)", "CLICK(1)", "CLICK(2)"][:n]

    agent = BestOfNAgent(Proposes(), verifier, 4)
    chosen = agent.act({"instruction": GOAL, "screen": SCREEN}, {"step": 0})
    assert str(chosen) == "CLICK(1)" and agent.last_info["counts"] == [3, 1]


def test_actor_self_judgement_scores_p_yes_from_its_own_answer() -> None:
    verifier, queries = _actor("judge")
    prompt = verifier.judge_prompt(queries[0])
    assert "Proposed next action: CLICK(1) (click button 1)" in prompt
    assert prompt.rstrip().endswith("Answer:") and f"Goal: {GOAL}" in prompt
    scores = verifier.score(queries)
    assert scores[0] > 0.5 > scores[1]
    logits = verifier.positive_logits(queries)
    assert logits[0] > logits[1]  # best-of-N ranks by the " yes" logit


def test_actor_verifier_refuses_what_it_cannot_use() -> None:
    require("torch", "llm")
    from gui_gym.agents.actor_verifier import ActorVerifier
    from gui_gym.models.llm import ScriptedLLM, TransformersLLM
    from tests.tiny_llm import tiny_gpt2, tiny_tokenizer

    with pytest.raises(TypeError, match="scores with a local model"):
        ActorVerifier(ScriptedLLM([]))
    tokenizer = tiny_tokenizer()
    llm = TransformersLLM(tiny_gpt2(len(tokenizer)), tokenizer, device="cpu")
    with pytest.raises(ValueError, match="mode must be one of logprob, judge"):
        ActorVerifier(llm, mode="vote")
    assert ActorVerifier(llm, mode="judge").answer_ids  # " yes" and " no" are words there
    with pytest.raises(ValueError, match="unknown prompt 'nope'"):
        ActorVerifier(llm, "nope")
