"""A tiny policy folder and a one-step env where exactly one action string is right.

The tokenizer has one token per candidate action (lines are tokens), so a completion is an
action and an end token, and the probability of the right action is easy to read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tiny_llm import tiny_gpt2


def _first_expert_step() -> tuple[str, str]:
    """Task id and first expert action of the bundled sample dataset's trajectory 0."""
    from gui_gym.envs.replay import SAMPLE_DATASET
    from gui_gym.envs.replay.dataset import ExpertDataset

    first = ExpertDataset.load(SAMPLE_DATASET)[0]
    return first.task_id, str(first.steps[0].action)


TASK, RIGHT = _first_expert_step()
ACTIONS = [RIGHT, 'INPUT(0, "letter")', "CLICK(1)", "CLICK(4)", "SCROLL(down)", "GOBACK()"]
PROMPT = "Task: take the first step of the recorded task"
PROMPT_LINE = f"user: {PROMPT}"  # how TransformersLLM renders it without a chat template


def line_tokenizer() -> Any:
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<eos>", "<unk>"]
    vocab = {w: i for i, w in enumerate(specials + ACTIONS + [PROMPT, PROMPT_LINE])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("\n"), behavior="removed")
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )


def policy_folder(path: Path, seed: int = 0) -> Path:
    tokenizer = line_tokenizer()
    model = tiny_gpt2(len(tokenizer), seed=seed)
    model.generation_config.pad_token_id = 0
    model.save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


def one_step_prompt(prompt_input: Any) -> list[dict[str, str]]:
    """A fixed one-line prompt (the one-step env needs no screen to be learned)."""
    return [{"role": "user", "content": PROMPT}]


_DATASET: list[Any] = []


def make_env() -> Any:
    """The first step of a WikiHow expert trajectory replayed semi-online (UI-S1 Eq. 8
    reward: 1.0 for the expert's action, 0.5 the right type, 0.1 a wrong type, 0 malformed)."""
    from gui_gym.envs.replay import SAMPLE_DATASET, SemiOnlineReplayEnv
    from gui_gym.envs.replay.dataset import ExpertDataset

    if not _DATASET:
        _DATASET.append(ExpertDataset.load(SAMPLE_DATASET))
    # no <think> block required: the completion is the bare action (UI-S1 App. H asks for one)
    return SemiOnlineReplayEnv(
        _DATASET[0], trajectory=0, epsilon=0, max_steps=1, require_think=False
    )


def right_action_logprob(trainer: Any) -> float:
    """log p(RIGHT | the agent's prompt) under the trainer's policy (one-token completions)."""
    import torch

    from gui_gym.train.losses import TurnSample, score_completions

    policy = trainer.policy
    tok = policy.tokenizer
    text = trainer.agent.llm.format_prompt(one_step_prompt(None))
    turn = TurnSample(
        prompt_ids=tok(text)["input_ids"],
        completion_ids=tok.encode(RIGHT, add_special_tokens=False),
        advantages=[0.0],
    )
    with torch.no_grad():
        return float(score_completions(policy.model, [turn], pad_id=policy.pad_id)[0].sum())
