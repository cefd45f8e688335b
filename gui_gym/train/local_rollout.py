"""A minimal lockstep rollout over a local policy: a stand-in until the shared rollout engine
(:mod:`gui_gym.train.rollout`) is merged, then removed.

It steps a batch of envs together, generates one completion per active env in one batched
``generate`` call, and records each step with the exact prompt ids, sampled ids and their
log-probabilities. An env that raises ends its episode with ``infra_error`` set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gui_gym.core.trajectory import Step, Trajectory

PromptFn = Callable[[dict[str, Any], list[str]], str]


def default_prompt(observation: dict[str, Any], history: list[str]) -> str:
    lines = [f"Task: {observation.get('instruction', '')}"]
    if history:
        lines.append("History: " + " ; ".join(history))
    lines.append(f"Screen:\n{observation.get('screen', '')}")
    lines.append("Action:")
    return "\n".join(lines)


def sample_completions(
    policy: Any, prompts: Sequence[str], *, max_new_tokens: int, temperature: float
) -> list[tuple[list[int], list[int], list[float], str]]:
    """``(prompt_ids, completion_ids, logprobs, text)`` for each prompt, sampled from
    ``softmax(logits / temperature)`` over the whole vocabulary."""
    import torch

    tok = policy.tokenizer
    encoded = [tok.encode(p, add_special_tokens=False) for p in prompts]
    width = max(len(e) for e in encoded)
    ids = torch.full((len(prompts), width), policy.pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, e in enumerate(encoded):
        ids[i, width - len(e) :] = torch.tensor(e)
        mask[i, width - len(e) :] = 1
    ids, mask = ids.to(policy.device), mask.to(policy.device)
    with torch.no_grad():
        out = policy.model.generate(
            input_ids=ids,
            attention_mask=mask,
            max_new_tokens=max_new_tokens,
            do_sample=True,
            temperature=temperature,
            top_k=0,
            top_p=1.0,
            pad_token_id=policy.pad_id,
            output_scores=True,
            return_dict_in_generate=True,
        )
    new = out.sequences[:, width:]
    logprobs = torch.stack([torch.log_softmax(s.float(), dim=-1) for s in out.scores], dim=1)
    picked = logprobs.gather(-1, new[..., None]).squeeze(-1)
    eos = tok.eos_token_id
    results = []
    for i, e in enumerate(encoded):
        row = new[i].tolist()
        end = len(row)
        if eos is not None and eos in row:
            end = row.index(eos) + 1
        completion = row[:end]
        text = tok.decode(completion, skip_special_tokens=True)
        results.append((e, completion, picked[i, :end].tolist(), text))
    return results


def run_episodes(
    policy: Any,
    make_env: Callable[[], Any],
    requests: Sequence[dict[str, Any]],
    *,
    max_new_tokens: int,
    temperature: float,
    prompt: PromptFn = default_prompt,
    env_id: str = "",
) -> list[Trajectory]:
    """Run one episode per request (``{"seed": int, "options": dict}``) in lockstep."""
    envs: list[Any] = []
    starts: list[tuple[dict[str, Any], dict[str, Any]] | str] = []
    for request in requests:
        env = make_env()
        envs.append(env)
        try:
            starts.append(env.reset(seed=request.get("seed"), options=request.get("options")))
        except Exception as err:  # an env that fails is infrastructure, not the agent
            starts.append(f"reset: {type(err).__name__}: {err}")
    try:
        return continue_episodes(
            policy,
            envs,
            starts,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            prompt=prompt,
            env_id=env_id,
            seeds=[r.get("seed") for r in requests],
        )
    finally:
        for env in envs:
            env.close()


def continue_episodes(
    policy: Any,
    envs: Sequence[Any],
    starts: Sequence[tuple[dict[str, Any], dict[str, Any]] | str],
    *,
    max_new_tokens: int,
    temperature: float,
    prompt: PromptFn = default_prompt,
    env_id: str = "",
    seeds: Sequence[int | None] | None = None,
    max_policy_steps: int | None = None,
    history: Sequence[str] = (),
) -> list[Trajectory]:
    """Let the policy act in envs that are already reset (or forked mid-episode): ``starts``
    holds each env's ``(observation, info)``, or an error text for an env that failed to
    start. Stops each episode at its end or after ``max_policy_steps`` policy steps."""
    trajectories: list[Trajectory] = []
    observations: list[dict[str, Any]] = []
    histories: list[list[str]] = []
    active: list[int] = []
    for i, start in enumerate(starts):
        seed = seeds[i] if seeds is not None else None
        histories.append(list(history))
        if isinstance(start, str):
            trajectory = Trajectory(env_id, "", "", seed=seed)
            trajectory.infra_error = start  # type: ignore[attr-defined]
            trajectories.append(trajectory)
            observations.append({})
            continue
        obs, info = start
        trajectory = Trajectory(
            env_id, str(info.get("task_id", "")), str(obs.get("instruction", "")), seed=seed
        )
        trajectory.infra_error = None  # type: ignore[attr-defined]
        trajectories.append(trajectory)
        observations.append(obs)
        active.append(i)
    taken = 0
    while active and (max_policy_steps is None or taken < max_policy_steps):
        taken += 1
        prompts = [prompt(observations[i], histories[i]) for i in active]
        samples = sample_completions(
            policy, prompts, max_new_tokens=max_new_tokens, temperature=temperature
        )
        still: list[int] = []
        for i, text_prompt, (prompt_ids, completion_ids, logprobs, text) in zip(
            active, prompts, samples
        ):
            screen = observations[i].get("screen", "")
            try:
                obs, reward, terminated, truncated, info = envs[i].step(text.strip())
            except Exception as err:
                trajectories[i].infra_error = f"step: {type(err).__name__}: {err}"  # type: ignore[attr-defined]
                continue
            step = Step.from_transition(
                len(trajectories[i].steps), screen, text, reward, terminated, truncated, info
            )
            step.prompt, step.prompt_ids = text_prompt, prompt_ids  # type: ignore[attr-defined]
            step.completion_ids, step.logprobs = completion_ids, logprobs  # type: ignore[attr-defined]
            step.info = {
                k: info[k] for k in ("semi_online", "milestone", "prm", "judge") if k in info
            }
            trajectories[i].steps.append(step)
            histories[i].append(str(info.get("action_description") or text))
            observations[i] = obs
            if terminated or truncated:
                trajectories[i].finish(obs, info)
            else:
                still.append(i)
        active = still
    return trajectories
