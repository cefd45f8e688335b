"""Step-level GRPO with ADMIRE's adaptive milestone reward, in one file.

ADMIRE (Adaptive Milestone Reward for GUI Agents) trains a GUI agent with GRPO at the step
level (Sec. 3.3, Algorithm 1):

1. roll out a group of episodes per task with the current policy;
2. successes initialise or refine the task's milestones (``MilestoneWrapper`` does this, and
   keeps them in a JSON store that survives the run);
3. every step gets ``R_total = R_outcome + eta * R_format + lambda0 * gamma**epoch * R_mil``,
   with the asymmetric milestone reward (Eq. 10 for successes, Eq. 11 for failures); the
   wrapper hands these over at the end of each episode (``info["milestone"]``);
4. advantages are step rewards normalised over all steps of the group (Eq. 13);
5. a PPO-clipped update (Eq. 12, clip 0.2, no KL, no entropy bonus, as in App. A.1.2).

The policy here ranks the env's candidate actions (``env.unwrapped.candidate_actions()``): it
scores each candidate's description by its mean token log-likelihood under a causal LM after
a prompt with the instruction, the screen and the history, and samples from the softmax over
candidates. Every sampled action is valid, so even a random tiny model can explore; the
paper's agent writes free-form actions instead (Figures 17-19).

On CPU without ``--model`` a tiny random GPT-2 with a character tokenizer is built from a
config (no download), so the loop runs in about a minute. With ``--model`` a local Hugging
Face causal LM is trained (bfloat16 on CUDA), e.g.::

    python examples/admire_grpo.py                      # tiny, CPU, a minute
    python examples/admire_grpo.py --model /models/Qwen2.5-0.5B-Instruct \\
        --iterations 200 --tasks-per-iteration 4 --group-size 8 --max-steps 20

Milestones come from the LLM-free trajectory generator by default; ``--generator llm`` asks
an OpenAI-compatible server (``--llm-base-url``, ``--llm-model``) with the appendix's prompts.

The paper's comparison arms: ``--milestones static`` keeps the milestones the expert's episode
gave (Table 3's static baseline: generated once, never refined); ``--algo rloo`` (leave-one-out
baseline) and ``--algo dapo`` (clip-higher 0.28, groups with equal rewards dropped) are Table
4's other RL algorithms; ``--lambda0 0`` is the outcome-only reward.
"""

from __future__ import annotations

import inspect
import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np
import torch
import tyro

import gui_gym  # registers the ids
from gui_gym.agents import OracleAgent
from gui_gym.core.actions import describe
from gui_gym.models.embeddings import default_embedder
from gui_gym.models.llm import OpenAICompatLLM
from gui_gym.models.milestones import (
    CosineMatcher,
    LLMMilestoneGenerator,
    TrajectoryMilestoneGenerator,
)
from gui_gym.rewards.advantages import rloo_advantages
from gui_gym.rewards.milestones import step_grpo_advantages
from gui_gym.rewards.semi_online import group_std
from gui_gym.wrappers import MilestoneWrapper

MAX_CANDIDATE_TOKENS = 128
"""A candidate's description is scored on its first tokens (AndroidWorld's typed texts can be
long; the tiny model has positions for the prompt plus this many)."""


@dataclass
class Args:
    env_id: str = "GuiGym/WikiHow-v0"
    """the env to train on"""
    split: str = "train"
    """task split"""
    category: str | None = "auto"
    """task category (None: all; auto: Cross-Page on WikiHow, whose QA questions the ranking
    policy cannot answer, all elsewhere). AndroidWorld's categories are apps (clock, ...)"""
    num_tasks: int = 4
    """distinct training tasks (the first N of the env's list for the split and category)"""
    tasks_per_iteration: int = 2
    """tasks sampled per iteration (4 in the paper)"""
    group_size: int = 4
    """episodes per task: the GRPO group (8 in the paper)"""
    iterations: int = 3
    """training iterations; the milestone weight decays once per iteration"""
    max_steps: int = 6
    """step budget of an episode (20 in the paper)"""
    model: str | None = None
    """a local causal LM folder; None builds a tiny random GPT-2"""
    device: str | None = None
    """cpu or cuda (None: cuda when available)"""
    cpu_threads: int = 1
    """torch threads on CPU (one is fastest for the tiny model and MiniLM's single sentences)"""
    learning_rate: float | None = None
    """None: 1e-6 for a real model (the paper's), 1e-3 for the tiny one"""
    algo: Literal["grpo", "rloo", "dapo"] = "grpo"
    """step-level GRPO (Eq. 13), RLOO's leave-one-out baseline, or DAPO (clip-higher, groups
    whose rewards are all equal dropped): ADMIRE Table 4's three algorithms"""
    clip: float = 0.2
    """PPO clip ratio epsilon"""
    clip_high: float | None = None
    """upper clip epsilon (None: --clip, or DAPO's 0.28 with --algo dapo)"""
    update_epochs: int = 2
    """passes over each iteration's steps"""
    minibatch_size: int = 32
    """steps per optimiser step"""
    max_prompt_tokens: int = 256
    """the prompt is cut from the left to this many tokens (raise it for a real model)"""
    temperature: float = 1.0
    """softmax temperature over candidate scores"""
    store: str = "runs/admire/milestones.json"
    """the milestone store (kept across runs: milestones keep adapting)"""
    milestones: Literal["adaptive", "static"] = "adaptive"
    """adaptive (refined from successes) or static (Table 3: the expert's, never refined)"""
    generator: Literal["trajectory", "llm"] = "trajectory"
    """milestone generator: LLM-free key steps + Soft-LCS, or an LLM with the paper's prompts"""
    llm_base_url: str = "http://localhost:8000/v1"
    """OpenAI-compatible server for --generator llm"""
    llm_model: str = "gpt-4o"
    """model name on that server"""
    screenshot: bool = False
    """envs make screenshots and --generator llm reads each success's screenshots with its
    actions (sent as PNG image_url parts: the server must serve a vision-language model)"""
    embedder: Literal["minilm", "hashing"] = "minilm"
    """sentence embedder for matching (MiniLM as in the paper; hashing is not semantic)"""
    seed_with_oracle: bool = True
    """run the task's expert once per task first, so milestones exist from the start (the
    paper warms its model up instead; a random tiny model rarely succeeds on its own)"""
    delta: float = 0.75
    zeta: float = 0.5
    lambda0: float = 0.3
    decay: float = 0.99
    eta: float = 0.5
    seed: int = 0
    log: str | None = None
    """write one JSON line of metrics per iteration here"""


@dataclass
class StepRecord:
    prompt: str
    candidates: list[str]
    chosen: int
    old_logprob: float
    advantage: float = 0.0


@dataclass
class Episode:
    steps: list[StepRecord] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    success: bool = False
    progress: float = 0.0
    env_milestones: int = 0  # the env's own ground-truth milestones reached (not a reward)


def char_tokenizer():
    """A character-level tokenizer for the tiny model (printable ASCII and newline)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = [chr(c) for c in range(32, 127)] + ["\n"]
    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2} | {c: i + 3 for i, c in enumerate(chars)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )


def load_model(args: Args, device: str):
    from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2Config, GPT2LMHeadModel

    if args.model is None:
        tokenizer = char_tokenizer()
        config = GPT2Config(
            vocab_size=len(tokenizer),
            n_positions=args.max_prompt_tokens + MAX_CANDIDATE_TOKENS,
            n_embd=64,
            n_layer=2,
            n_head=2,
            bos_token_id=1,
            eos_token_id=1,
            pad_token_id=0,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
        )
        return GPT2LMHeadModel(config).to(device).eval(), tokenizer
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    # eval mode throughout: no dropout, so PPO's ratio compares the same function twice
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=dtype).to(device).eval()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


class CandidatePolicy:
    """pi(a | h): a softmax over candidate actions of their mean token log-likelihood."""

    def __init__(self, model, tokenizer, device: str, max_prompt_tokens: int, temperature: float):
        self.model = model
        self.tokenizer = tokenizer
        self.device = device
        self.max_prompt_tokens = max_prompt_tokens
        self.temperature = temperature
        # transformers 5.x renames forward's `past_key_values` to `cache` (the old name goes
        # in 5.40); 4.x knows only the old one
        forward = inspect.signature(model.forward).parameters
        self.cache_keyword = "cache" if "cache" in forward else "past_key_values"

    @staticmethod
    def prompt(observation: dict[str, Any], history: list[str]) -> str:
        done = "; ".join(history[-5:]) or "nothing yet"
        # the screen first: a prompt cut from the left keeps the instruction and history
        return (
            f"Screen:\n{observation['screen']}\n"
            f"Instruction: {observation['instruction']}\n"
            f"Done so far: {done}\n"
            f"Next action:"
        )

    def logprobs(self, prompt: str, candidates: list[str]) -> torch.Tensor:
        """Log-probabilities over ``candidates`` (differentiable).

        The prompt is run once; its key/value cache is repeated for the candidates, which
        are scored in one right-padded batch (far cheaper than prompt + candidate per row).
        """
        tok, device = self.tokenizer, self.device
        prompt_ids = tok(prompt, add_special_tokens=False)["input_ids"][-self.max_prompt_tokens :]
        rows = [
            tok(" " + c, add_special_tokens=False)["input_ids"][:MAX_CANDIDATE_TOKENS]
            or [tok.pad_token_id]
            for c in candidates
        ]
        prefix = self.model(input_ids=torch.tensor([prompt_ids], device=device), use_cache=True)
        cache = getattr(prefix, "cache", None) or prefix.past_key_values
        cache.batch_repeat_interleave(len(rows))
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), tok.pad_token_id, dtype=torch.long)
        valid = torch.zeros((len(rows), width), dtype=torch.bool)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = torch.tensor(row)
            valid[i, : len(row)] = True
        ids, valid = ids.to(device), valid.to(device)
        mask = torch.cat(
            [
                torch.ones((len(rows), len(prompt_ids)), dtype=torch.long, device=device),
                valid.long(),
            ],
            dim=1,
        )
        logits = self.model(
            input_ids=ids, attention_mask=mask, **{self.cache_keyword: cache}
        ).logits
        # token j of a candidate is predicted by the prompt's last position (j = 0) or by
        # candidate position j - 1
        first = prefix.logits[:, -1:].expand(len(rows), 1, -1)
        logits = torch.cat([first, logits[:, :-1]], dim=1).float()
        token_logp = torch.log_softmax(logits, dim=-1).gather(-1, ids[..., None]).squeeze(-1)
        weights = valid.float()
        scores = (token_logp * weights).sum(-1) / weights.sum(-1)
        return torch.log_softmax(scores / self.temperature, dim=-1)


def category_of(args: Args) -> str | None:
    """The category to train on: ``auto`` is Cross-Page on WikiHow, every category elsewhere."""
    if args.category != "auto":
        return args.category
    return "Cross-Page" if args.env_id == "GuiGym/WikiHow-v0" else None


def make_env(args: Args, embedder, adaptive: bool = True) -> MilestoneWrapper:
    env = gym.make(
        args.env_id,
        split=args.split,
        category=category_of(args),
        max_steps=args.max_steps,
        screenshot=args.screenshot,
    )
    if args.generator == "llm":
        generator = LLMMilestoneGenerator(
            OpenAICompatLLM(args.llm_model, args.llm_base_url), screenshots=args.screenshot
        )
    else:
        generator = TrajectoryMilestoneGenerator(embedder)
    return MilestoneWrapper(
        env,
        store=args.store,
        generator=generator,
        matcher=CosineMatcher(embedder),
        delta=args.delta,
        zeta=args.zeta,
        lambda0=args.lambda0,
        decay=args.decay,
        eta=args.eta,
        credit="deferred",
        adaptive=adaptive,
    )


def rollout(env: MilestoneWrapper, policy: CandidatePolicy, task_id: str, seed: int) -> Episode:
    observation, info = env.reset(seed=seed, options={"task": task_id})
    episode, history = Episode(), []
    while True:
        base = env.unwrapped
        actions = base.candidate_actions()
        screen = base.ui_tree
        texts = [describe(a, screen) for a in actions]
        prompt = policy.prompt(observation, history)
        with torch.no_grad():
            logp = policy.logprobs(prompt, texts)
        choice = int(torch.multinomial(logp.exp(), 1))
        observation, _, terminated, truncated, info = env.step(actions[choice])
        episode.steps.append(StepRecord(prompt, texts, choice, float(logp[choice])))
        history.append(texts[choice])
        if terminated or truncated:
            break
    milestone = info["milestone"]
    episode.rewards = milestone["episode_total_rewards"]  # R_total(t), Algorithm 1 line 35
    episode.success = bool(milestone["success"])
    episode.progress = milestone["k"] / milestone["K"] if milestone["K"] else 0.0
    episode.env_milestones = len(info.get("milestones", []))
    return episode


def group_advantages(rewards: list[list[float]], algo: str) -> list[list[float]] | None:
    """Per-step advantages of one group's episodes, or None for a group DAPO drops."""
    flat = [r for row in rewards for r in row]
    if algo == "dapo" and group_std(flat) == 0:
        return None  # DAPO dynamic sampling: equal rewards teach nothing
    if algo == "rloo":  # each step's reward minus the mean of the group's other steps
        values, out, start = rloo_advantages(flat), [], 0
        for row in rewards:
            out.append(values[start : start + len(row)])
            start += len(row)
        return out
    return [list(a) for a in step_grpo_advantages(rewards)]  # Eq. 13


def ppo_update(policy: CandidatePolicy, optimizer, steps: list[StepRecord], args: Args) -> float:
    """PPO-clipped step-level objective (Eq. 12), averaged over all steps."""
    high = (
        args.clip_high
        if args.clip_high is not None
        else (0.28 if args.algo == "dapo" else args.clip)
    )
    losses = []
    for _ in range(args.update_epochs):
        random.shuffle(steps)
        for start in range(0, len(steps), args.minibatch_size):
            batch = steps[start : start + args.minibatch_size]
            optimizer.zero_grad()
            for step in batch:  # one step at a time: candidate batches can be large
                new = policy.logprobs(step.prompt, step.candidates)[step.chosen]
                ratio = torch.exp(new - step.old_logprob)
                clipped = torch.clamp(ratio, 1 - args.clip, 1 + high)
                loss = -torch.min(ratio * step.advantage, clipped * step.advantage) / len(batch)
                loss.backward()
                losses.append(loss.item() * len(batch))
            torch.nn.utils.clip_grad_norm_(policy.model.parameters(), 1.0)
            optimizer.step()
    return float(np.mean(losses)) if losses else 0.0


def refuse(args: Args) -> str | None:
    """Why this run cannot work (checked before anything is loaded), or None."""
    if args.env_id in gui_gym.REPLAY_ENV_IDS:
        return f"{args.env_id} replays an expert dataset; ADMIRE needs an env that samples tasks"
    if args.env_id not in gym.registry:
        return f"unknown env id {args.env_id!r}; see gui-gym list"
    try:
        gym.make(
            args.env_id, split=args.split, category=category_of(args), max_steps=args.max_steps
        ).close()
    except (ValueError, KeyError, gym.error.DependencyNotInstalled) as err:
        return f"{args.env_id}: {err}"
    if args.screenshot and args.generator != "llm":
        return "--screenshot is for --generator llm (the LLM milestone generator reads them)"
    if not args.seed_with_oracle and not Path(args.store).is_file():
        return (
            "without --seed-with-oracle and an existing --store no task has milestones, and a "
            "policy that never succeeds never learns any: the milestone reward would be 0"
        )
    return None


def seed_milestones(env: MilestoneWrapper, tasks: list[str], seed: int) -> dict[str, list[str]]:
    """One expert episode per task; a success initialises (or refines) its milestones."""
    learned = {}
    for task_id in tasks:
        observation, info = env.reset(seed=seed, options={"task": task_id})
        oracle, done = OracleAgent(env), False
        while not done:
            observation, _, terminated, truncated, info = env.step(oracle.act(observation, info))
            done = terminated or truncated
        learned[task_id] = list(info["milestone"]["milestones"])
        outcome = "" if info["success"] else f" (the expert failed in {info['step']} steps)"
        print(f"  {task_id}: {learned[task_id]}{outcome}")
    return learned


def main(args: Args) -> list[dict[str, Any]]:
    reason = refuse(args)
    if reason is not None:
        raise SystemExit(f"admire_grpo.py: error: {reason}")
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        torch.set_num_threads(args.cpu_threads)
    embedder = default_embedder(args.embedder)
    seeding = make_env(args, embedder)  # adaptive: the expert's successes write the store
    tasks = list(seeding.unwrapped.task_ids)[: args.num_tasks]  # the env's own list
    print(f"{len(tasks)} tasks on {args.env_id}, device {device}, store {args.store}")

    if args.seed_with_oracle:  # one expert success per task initialises its milestones
        # static milestones are generated once: a task the store already has keeps its own
        fresh = [t for t in tasks if args.milestones == "adaptive" or t not in seeding.store]
        learned = seed_milestones(seeding, fresh, args.seed)
        learned |= {t: list(seeding.store.get(t).milestones) for t in tasks if t not in fresh}
        if not any(learned.values()):
            seeding.close()
            raise SystemExit(
                f"admire_grpo.py: error: no task of {args.env_id} has milestones after the "
                f"expert's episodes (it did not succeed within --max-steps {args.max_steps}?): "
                "the milestone reward would be 0 on every step; raise --max-steps"
            )
    seeding.close()
    # static milestones (Table 3) are the ones seeded above, never refined in training
    env = make_env(args, embedder, adaptive=args.milestones == "adaptive")
    model, tokenizer = load_model(args, device)
    policy = CandidatePolicy(model, tokenizer, device, args.max_prompt_tokens, args.temperature)
    lr = args.learning_rate or (1e-6 if args.model else 1e-3)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)

    history: list[dict[str, Any]] = []
    rng = random.Random(args.seed)
    for iteration in range(args.iterations):
        started = time.perf_counter()
        env.set_epoch(iteration)  # lambda0 * gamma**epoch (Algorithm 1 line 4)
        batch_steps: list[StepRecord] = []
        episodes: list[Episode] = []
        dropped = 0
        for task_id in rng.sample(tasks, min(args.tasks_per_iteration, len(tasks))):
            group = [
                rollout(env, policy, task_id, seed=rng.randrange(2**31))
                for _ in range(args.group_size)
            ]
            episodes.extend(group)
            advantages = group_advantages([e.rewards for e in group], args.algo)
            if advantages is None:
                dropped += 1
                continue
            for episode, adv in zip(group, advantages):
                for step, a in zip(episode.steps, adv):
                    step.advantage = float(a)
                batch_steps.extend(episode.steps)
        loss = ppo_update(policy, optimizer, batch_steps, args)
        metrics = {
            "iteration": iteration,
            "episodes": len(episodes),
            "steps": len(batch_steps),
            "success_rate": float(np.mean([e.success for e in episodes])),
            "milestone_progress": float(np.mean([e.progress for e in episodes])),
            "env_milestones": float(np.mean([e.env_milestones for e in episodes])),
            "mean_step_reward": float(np.mean([r for e in episodes for r in e.rewards])),
            "milestone_weight": env.weight,
            "dropped_groups": dropped,
            "loss": loss,
            "seconds": round(time.perf_counter() - started, 2),
        }
        history.append(metrics)
        print(
            f"iter {iteration}: success {metrics['success_rate']:.2f}, "
            f"k/K {metrics['milestone_progress']:.2f}, "
            f"R_total/step {metrics['mean_step_reward']:.3f}, "
            f"weight {metrics['milestone_weight']:.3f}, loss {loss:.4f}, {metrics['seconds']}s"
        )
        if args.log:
            Path(args.log).parent.mkdir(parents=True, exist_ok=True)
            with open(args.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(metrics) + "\n")
    env.close()
    return history


if __name__ == "__main__":
    main(tyro.cli(Args))
