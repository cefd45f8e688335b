"""gui-gym envs in verl's multi-turn agent loop (verl 0.9.1, ``pip install 'gui-gym[verl]'``).

:class:`GuiGymAgentLoop` is an ``AgentLoopBase`` registered as ``gui_gym``: for each dataset
row (``gui-gym export-tasks ENV_ID --format verl``) it makes the env with the reward stack,
renders the prompt format's first messages with verl's Continuous Token builder, asks verl's
server manager for a completion, steps the env with the action in it, appends the next screen
as a user message, and so on until the episode ends; it returns an ``AgentLoopOutput`` whose
``reward_score`` is the reward stack's episode reward and whose ``extra_fields`` carry the
per-step rewards and components.

Token-exact: the completion's token ids go into the sequence as the server returned them
(``ct_merge_assistant_token``); only the appended user turns are tokenised
(``ct_merge_context_msg``, which also inserts the boundary tokens a chat template writes after
a turn, masked out). Nothing the model wrote is decoded and tokenised again.

Settings (keyword arguments of the loop, given in the agent-loop YAML that
``actor_rollout_ref.rollout.agent.agent_loop_config_path`` names; each may also come from a
row's ``extra_info``): ``env_id``, ``reward``, ``prompt``, ``screenshot``, ``max_steps``,
``env_kwargs``, ``format_eta`` and the reward stack's ``embedder``, ``milestone_store``,
``prm_model``, ``progress_model``, ``orm_model``, ``progress_k``, ``milestone_mode``.
See ``docs/engines_verl.md``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any
from uuid import uuid4

from gymnasium.error import DependencyNotInstalled

try:
    from verl.experimental.agent_loop.agent_loop import (
        AgentLoopBase,
        AgentLoopMetrics,
        AgentLoopOutput,
        register,
    )
except ImportError as err:  # pragma: no cover - exercised by the missing-extra test
    raise DependencyNotInstalled(
        f"gui_gym.integrations.verl needs verl 0.9.1 and what its agent loop imports ({err}); "
        "install it with: pip install 'gui-gym[verl]'"
    ) from err

from gui_gym.integrations.episode import ChatEpisode, EpisodeResult

__all__ = ["AGENT_NAME", "GuiGymAgentLoop", "episode_extra_fields"]

AGENT_NAME = "gui_gym"
"""The name the loop is registered under (the ``agent_name`` column of exported rows)."""

STACK_SETTINGS = (
    "embedder",
    "milestone_store",
    "prm_model",
    "progress_model",
    "orm_model",
    "progress_k",
    "milestone_mode",
)
"""Reward-stack settings the loop passes to :class:`~gui_gym.train.reward_stack.RewardStack`."""

CONFIG_ONLY = ("prm_model", "progress_model", "orm_model", "milestone_store")
"""Settings a dataset row may not override: files the loop loads models from or writes
(the milestone store). A row is data; which files a worker reads and writes is the
agent-loop config's choice (issue 46)."""


def _plain(value: Any) -> Any:
    """A config value as plain Python (OmegaConf containers and numpy scalars unwrapped)."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf

        if isinstance(value, DictConfig | ListConfig):
            return OmegaConf.to_container(value, resolve=True)
    except ImportError:  # pragma: no cover - verl depends on omegaconf
        pass
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return value.item()
    return value


def _pil_images(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Messages with image parts as PIL images (what verl's processors take), and those
    images in order."""
    from PIL import Image

    images: list[Any] = []
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            out.append(dict(message))
            continue
        parts = []
        for part in content:
            if part["type"] == "image":
                image = part["image"]
                if not isinstance(image, Image.Image):
                    image = Image.fromarray(image).convert("RGB")
                images.append(image)
                parts.append({"type": "image", "image": image})
            else:
                parts.append(dict(part))
        out.append({**message, "content": parts})
    return out, images


def episode_extra_fields(result: EpisodeResult) -> dict[str, Any]:
    """The ``extra_fields`` of an episode's ``AgentLoopOutput``: ``turn_scores`` (``r_t`` per
    step, the field verl's tool loop fills per turn), ``gui_gym`` (per-step rewards,
    ADMIRE's ``R_total(t)``, components, task id, success) and ``reward_extra_info`` (the
    episode's scalars, which verl logs beside the score)."""
    trajectory = result.trajectory
    return {
        "turn_scores": list(result.step_rewards),
        "tool_rewards": [],
        "gui_gym": {
            "task_id": trajectory.task_id,
            "seed": trajectory.seed,
            "success": result.success,
            "ended": result.ended,
            "step_rewards": list(result.step_rewards),
            "admire_step_rewards": list(result.admire_step_rewards),
            "components": list(result.components),
            "actions": [s.action for s in trajectory.steps],
        },
        "reward_extra_info": result.summary(),
    }


@register(AGENT_NAME)
class GuiGymAgentLoop(AgentLoopBase):
    """verl's agent loop over a gui-gym env (see the module docstring).

    Args:
        env_id: Default env id (a row's ``extra_info["env_id"]`` wins).
        reward: A ``--reward`` expression of ``gui-gym train`` (``outcome+progress``, ...).
        prompt: A gui-gym prompt format name for the first turn.
        screenshot: Show screenshots (a VLM policy; verl needs its processor).
        max_steps: The env's step limit (None: the env's default); the episode also ends
            when the response reaches ``rollout.response_length`` tokens or
            ``multi_turn.max_assistant_turns`` turns.
        env_kwargs: More ``gym.make`` arguments.
        format_eta: ADMIRE's format term in the episode reward (0: not added).
        *args, **kwargs: What verl passes every agent loop (``trainer_config``,
            ``server_manager``, ``tokenizer``, ``processor``, ...); the reward-stack settings
            (:data:`STACK_SETTINGS`).
    """

    def __init__(
        self,
        *args: Any,
        env_id: str | None = None,
        reward: str = "outcome",
        prompt: str = "default",
        screenshot: bool = False,
        max_steps: int | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        format_eta: float = 0.0,
        name: str | None = None,
        **kwargs: Any,
    ):
        stack = {k: _plain(kwargs.pop(k)) for k in STACK_SETTINGS if k in kwargs}
        super().__init__(*args, **kwargs)
        self.defaults: dict[str, Any] = {
            "env_id": env_id,
            "reward": reward,
            "prompt": prompt,
            "screenshot": bool(screenshot),
            "max_steps": max_steps,
            "env_kwargs": dict(_plain(env_kwargs) or {}),
            "format_eta": float(format_eta),
            **stack,
        }
        self.name = name or AGENT_NAME
        self.response_length = int(self.rollout_config.response_length)
        multi_turn = self.rollout_config.get("multi_turn", None)
        self.max_assistant_turns = (
            multi_turn.get("max_assistant_turns", None) if multi_turn is not None else None
        )

    def _settings(self, extra_info: Mapping[str, Any]) -> dict[str, Any]:
        settings = dict(self.defaults)
        for key in CONFIG_ONLY:
            if extra_info.get(key) is not None:
                raise ValueError(
                    f"a row's extra_info may not set {key} (a file the agent loop reads or "
                    "writes); set it in the agent-loop config"
                )
        for key in settings:
            if key in extra_info and extra_info[key] is not None:
                settings[key] = _plain(extra_info[key])
        if not settings["env_id"]:
            raise ValueError(
                "the gui_gym agent loop needs an env id: set env_id in the agent-loop config "
                "or export the rows with `gui-gym export-tasks ENV_ID --format verl`"
            )
        return settings

    def _make_episode(self, extra_info: Mapping[str, Any]) -> ChatEpisode:
        settings = self._settings(extra_info)
        seed = extra_info.get("seed")
        return ChatEpisode(
            settings["env_id"],
            task_id=extra_info.get("task_id"),
            seed=None if seed is None else int(seed),
            reward=settings["reward"],
            prompt=settings["prompt"],
            screenshot=settings["screenshot"],
            max_steps=settings["max_steps"],
            env_kwargs=settings["env_kwargs"],
            stack_settings={k: settings[k] for k in STACK_SETTINGS if k in settings},
            format_eta=settings["format_eta"],
        )

    async def run(
        self, sampling_params: dict[str, Any], priority: int = 0, **kwargs: Any
    ) -> AgentLoopOutput:
        """One episode as one sequence: prompt, then (completion, next screen) turns.

        Raises:
            ValueError: for a row or setting the env or the reward stack refuses.
        """
        extra_info = _plain(kwargs.get("extra_info")) or {}
        loop = asyncio.get_running_loop()
        # env work runs in the executor, so one env's step never holds up the other
        # episodes' generation requests on this worker's event loop
        episode = await loop.run_in_executor(None, self._make_episode, extra_info)
        try:
            return await self._run_episode(episode, sampling_params, int(priority))
        finally:
            await loop.run_in_executor(None, episode.close)

    async def _run_episode(
        self, episode: ChatEpisode, sampling_params: dict[str, Any], priority: int
    ) -> AgentLoopOutput:
        loop = asyncio.get_running_loop()
        messages, images = _pil_images(await loop.run_in_executor(None, episode.reset))
        self._assert_mm_supported(bool(images))
        token_ids = await self.ct_build_initial_tokens(messages, images=images or None)
        prompt_length = len(token_ids)
        response_mask: list[int] = []
        logprobs: list[float] | None = None
        request_id = (
            f"det-{priority}"
            if getattr(self.rollout_config, "full_determinism", False)
            else uuid4().hex
        )
        metrics: dict[str, Any] = {}
        generate_time = env_time = 0.0
        turns = user_turns = 0
        num_preempted = 0
        while True:
            started = loop.time()
            output = await self.server_manager.generate(
                request_id=request_id,
                prompt_ids=token_ids,
                sampling_params=sampling_params,
                image_data=images or None,
            )
            generate_time += loop.time() - started
            num_preempted += output.num_preempted or 0
            turns += 1
            if turns == 1 and output.log_probs:
                logprobs = []
            merged, response_mask, aligned = await self.ct_merge_assistant_token(
                token_ids,
                list(output.token_ids),
                response_mask,
                logprobs,
                assistant_logprobs=list(output.log_probs) if logprobs is not None else None,
            )
            token_ids = merged.token_ids
            logprobs = aligned
            text = self.tokenizer.decode(output.token_ids, skip_special_tokens=True)
            started = loop.time()
            reply = await loop.run_in_executor(None, episode.step, text)
            env_time += loop.time() - started
            if reply is None:
                break
            out_of_turns = self.max_assistant_turns and turns >= self.max_assistant_turns
            if len(response_mask) >= self.response_length or out_of_turns:
                episode.stop()
                break
            # the assistant text only keeps the message list append-only: its tokens are
            # already in the sequence, and only the appended user turn is tokenised
            messages.append({"role": "assistant", "content": text})
            previous = list(messages)
            [reply], new_images = _pil_images([reply])
            self._assert_mm_supported(bool(new_images))
            messages.append(reply)
            merged, mask, aligned = await self.ct_merge_context_msg(
                previous, messages, token_ids, response_mask, logprobs
            )
            if len(mask) >= self.response_length:
                # the next screen would not fit: the episode is cut here (no outcome)
                episode.stop()
                break
            token_ids, response_mask, logprobs = merged.token_ids, mask, aligned
            images.extend(new_images)
            user_turns += 1
        result = await loop.run_in_executor(None, episode.result)
        metrics["generate_sequences"] = generate_time
        metrics["tool_calls"] = env_time
        metrics["num_preempted"] = num_preempted
        response_ids = token_ids[prompt_length:]
        cut = self.response_length
        multi_modal_data = {"images": images} if images else {}
        return AgentLoopOutput(
            prompt_ids=token_ids[:prompt_length],
            response_ids=response_ids[:cut],
            response_mask=response_mask[:cut],
            response_logprobs=logprobs[:cut] if logprobs is not None else None,
            multi_modal_data=multi_modal_data,
            reward_score=result.reward_score,
            num_turns=turns + user_turns + 1,  # as verl's tool loop counts: the prompt, each turn
            metrics=AgentLoopMetrics(**metrics),
            extra_fields=episode_extra_fields(result),
        )
