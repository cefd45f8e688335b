"""An LLM that writes its own action: think, then one action, as all five papers' agents do.

::

    from gui_gym.agents import LLMAgent
    from gui_gym.models.llm import TransformersLLM

    agent = LLMAgent(TransformersLLM("/models/qwen"), prompt="default", temperature=0.7)
    steps = agent.act_batch(observations, infos, histories)   # one AgentStep per env
    steps = await agent.aact_batch(observations, infos, histories)   # server backends

:class:`LLMAgent` is a :class:`~gui_gym.agents.base.BatchAgent` (stateless; the rollout
engine passes each env's earlier turns) and also a plain :class:`~gui_gym.agents.base.Agent`
(``reset``/``act`` keep one episode's history), so ``run_episode`` and the SOP evaluator
use it too.

Each step builds the prompt with a :class:`~gui_gym.agents.prompts.PromptFormat`, generates
one completion, reads the ``<action>`` out of it and sends the canonical action string to
the env; a generation with no readable action is sent as it is, so the env's invalid-action
path (and any format reward) handles it. When the LLM backend has ``generate_with_tokens``
(:class:`~gui_gym.models.llm.TransformersLLM`, and :class:`~gui_gym.models.llm.OpenAICompatLLM`
when the server returns tokens), the :class:`~gui_gym.agents.base.AgentStep` carries the
exact prompt ids, sampled completion ids and their log-probs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from gui_gym.agents.base import AgentStep, Turn, history_description
from gui_gym.agents.prompts import PromptFormat, PromptInput, get_prompt
from gui_gym.core.actions import ActionParseError, parse_action

__all__ = ["LLMAgent"]

HISTORY_ITEM_CHARS = 120
"""Longest history entry a prompt shows (longer ones end in ``...``)."""


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= HISTORY_ITEM_CHARS else text[: HISTORY_ITEM_CHARS - 3] + "..."


class LLMAgent:
    """A generating agent over any :class:`~gui_gym.models.llm.LLM` backend.

    Args:
        llm: The backend (``generate``; ``generate_with_tokens`` and
            ``agenerate_with_tokens``/``agenerate`` are used when present).
        prompt: A prompt name (see :data:`~gui_gym.agents.prompts.PROMPTS`), a
            :class:`~gui_gym.agents.prompts.PromptFormat`, or a callable
            ``PromptInput -> chat messages``.
        history: How many earlier action descriptions the prompt shows (the latest ones).
        images: How many earlier screenshots the prompt shows besides the current one
            (UI-S1 keeps two); only with ``screenshot=True``.
        screenshot: Show the current screenshot (the env must be made with
            ``screenshot=True``, the model must take images).
        temperature: Sampling temperature (0 is greedy).
        max_new_tokens: Longest generation.
        name: The agent's name in trajectories (default ``llm:<prompt>``).
        coordinates: The space the model's ``_XY`` coordinates are in (a
            :class:`~gui_gym.agents.screen_space.CoordinateSpace` or its kind: ``screen``,
            ``qwen2_5_vl``, ``relative_1000``): actions go to the env in screen pixels, and
            SFT targets (:func:`gui_gym.train.sft.build_examples`) are written in this space.
            Needs ``screenshot=True`` unless it is ``screen``.

    Raises:
        ValueError: for an unknown prompt or coordinate space, a negative
            ``history``/``images``, or a prompt that needs screenshots without them.
    """

    def __init__(
        self,
        llm: Any,
        prompt: str | PromptFormat | Callable[[PromptInput], list[dict[str, Any]]] = "default",
        *,
        history: int = 8,
        images: int = 0,
        screenshot: bool = False,
        temperature: float = 0.0,
        max_new_tokens: int = 128,
        name: str | None = None,
        coordinates: Any = "screen",
    ):
        from gui_gym.agents.screen_space import CoordinateSpace

        if not isinstance(history, int) or history < 0:
            raise ValueError(f"history must be an int >= 0, got {history!r}")
        if not isinstance(images, int) or images < 0:
            raise ValueError(f"images must be an int >= 0, got {images!r}")
        if images and not screenshot:
            raise ValueError("images > 0 shows earlier screenshots: it needs screenshot=True")
        if not temperature >= 0.0:
            raise ValueError(f"temperature must be >= 0, got {temperature!r}")
        if not hasattr(llm, "generate"):
            raise TypeError(f"llm must have generate(), got {type(llm).__name__}")
        self.llm = llm
        self.prompt = get_prompt(prompt)
        self.coordinates = (
            coordinates
            if isinstance(coordinates, CoordinateSpace)
            else CoordinateSpace(coordinates)
        )
        if (self.prompt.screenshot_only or self.coordinates.kind != "screen") and not screenshot:
            raise ValueError(
                f"prompt {self.prompt.name!r} with {self.coordinates.kind} coordinates shows the "
                "policy the screenshot only: it needs screenshot=True (--screenshot)"
            )
        self.history = history
        self.images = images
        self.screenshot = screenshot
        self.temperature = float(temperature)
        self.max_new_tokens = max_new_tokens
        self.name = name or f"llm:{self.prompt.name}"
        self.last_thought: str | None = None
        self.last_step: AgentStep | None = None
        self._turns: list[Turn] = []

    # ---------------------------------------------------------------------------- prompts

    def prompt_input(
        self, observation: dict[str, Any], info: dict[str, Any], turns: Sequence[Turn]
    ) -> PromptInput:
        """What the prompt shows for one env at one step."""
        # an invalid action has no description: its raw text stands in, cut short so a
        # rambling generation cannot flood every later prompt
        descriptions = [_clip(t.action_description or t.step.action) for t in turns]
        shots: list[Any] = []
        current = None
        if self.screenshot:
            current = observation.get("screenshot")
            if current is None:
                raise ValueError(
                    "LLMAgent(screenshot=True) needs envs made with screenshot=True "
                    "(the observation has no 'screenshot')"
                )
            if self.images:
                shots = [t.screenshot for t in turns if t.screenshot is not None][-self.images :]
        return PromptInput(
            instruction=str(observation.get("instruction", "")),
            screen=str(observation.get("screen", "")),
            history=descriptions[-self.history :] if self.history else [],
            step=len(turns),
            screenshot=current,
            earlier_screenshots=shots,
            info=dict(info),
        )

    def build_prompt(
        self, observation: dict[str, Any], info: dict[str, Any], turns: Sequence[Turn] = ()
    ) -> list[dict[str, Any]]:
        """The chat messages for one env at one step."""
        return self.prompt.build(self.prompt_input(observation, info, turns))

    def to_step(self, prompt: Any, generation: Any) -> AgentStep:
        """An :class:`AgentStep` from a prompt and a generation (a
        :class:`~gui_gym.models.llm.Generation` or a plain string)."""
        text = generation if isinstance(generation, str) else generation.text
        thought, action_text = self.prompt.parse(text)
        try:
            action = parse_action(action_text).to_string()
        except ActionParseError:
            action = text  # the env reports what was wrong; format rewards see it too
        tokens: dict[str, Any] = {}
        if not isinstance(generation, str):
            tokens = {
                "prompt_ids": generation.prompt_ids,
                "completion_ids": generation.completion_ids,
                "logprobs": generation.logprobs,
                "vision": generation.vision,
            }
        return AgentStep(action=action, prompt=prompt, text=text, thought=thought, **tokens)

    def encode_state(
        self, observation: dict[str, Any], info: dict[str, Any], turns: Sequence[Turn] = ()
    ) -> dict[str, Any] | None:
        """The prompt this agent would act on at a state, as exact ids and without acting:
        ``{"prompt_ids", "vision", "prompt"}`` (the prompt sanitised as trajectories store
        it), or None when the backend gives no ids (a server without token ids). PPO reads
        the critic's bootstrap value ``V(s_T)`` of an episode cut by a step limit from it."""
        encode = getattr(self.llm, "encode_prompts", None)
        if encode is None:
            return None
        prompt = self.build_prompt(observation, info, turns)
        [encoded] = encode([prompt])
        return {"prompt_ids": encoded.prompt_ids, "vision": encoded.vision, "prompt": prompt}

    # ------------------------------------------------------------------------- coordinates

    def _convert(self, action: str, screenshot: Any, to_screen: bool) -> str:
        if self.coordinates.kind == "screen" or screenshot is None:
            return action
        try:
            parsed = parse_action(action)
        except ActionParseError:
            return action
        if not parsed.has_point:
            return action
        from dataclasses import replace

        height, width = int(screenshot.shape[0]), int(screenshot.shape[1])
        convert = self.coordinates.to_screen if to_screen else self.coordinates.from_screen
        x, y = convert(parsed.x, parsed.y, width, height)
        fields: dict[str, Any] = {"x": x, "y": y}
        if parsed.end_x is not None and parsed.end_y is not None:
            fields["end_x"], fields["end_y"] = convert(parsed.end_x, parsed.end_y, width, height)
        if parsed.via:
            pairs = [
                convert(a, b, width, height) for a, b in zip(parsed.via[::2], parsed.via[1::2])
            ]
            fields["via"] = tuple(v for pair in pairs for v in pair)
        return replace(parsed, **fields).to_string()

    def to_screen_action(self, action: str, observation: dict[str, Any]) -> str:
        """A model action with its coordinates mapped from :attr:`coordinates` to the
        screen's pixels (the observation's screenshot gives the screen's size)."""
        return self._convert(action, observation.get("screenshot"), to_screen=True)

    def to_model_action(self, action: str, screenshot: Any) -> str:
        """A recorded (screen-pixel) action in the model's coordinate space: an SFT target."""
        return self._convert(action, screenshot, to_screen=False)

    # ------------------------------------------------------------------------------ batch

    def _prompts(
        self,
        observations: Sequence[dict[str, Any]],
        infos: Sequence[dict[str, Any]],
        histories: Sequence[Sequence[Turn]] | None,
    ) -> list[list[dict[str, Any]]]:
        if len(observations) != len(infos) or (
            histories is not None and len(histories) != len(observations)
        ):
            raise ValueError(
                f"act_batch got {len(observations)} observations, {len(infos)} infos and "
                f"{'no' if histories is None else len(histories)} histories; they must match"
            )
        return [
            self.build_prompt(obs, info, histories[i] if histories is not None else ())
            for i, (obs, info) in enumerate(zip(observations, infos, strict=True))
        ]

    def act_batch(
        self,
        observations: Sequence[dict[str, Any]],
        infos: Sequence[dict[str, Any]],
        histories: Sequence[Sequence[Turn]] | None = None,
    ) -> list[AgentStep]:
        """One :class:`AgentStep` per env, generated in one batched call.

        Raises:
            gui_gym.models.llm.LLMError: when the backend cannot answer.
        """
        prompts = self._prompts(observations, infos, histories)
        if not prompts:
            return []
        kwargs = {"max_new_tokens": self.max_new_tokens, "temperature": self.temperature}
        if hasattr(self.llm, "generate_with_tokens"):
            rows: list[list[Any]] = self.llm.generate_with_tokens(prompts, **kwargs)
        else:
            rows = self.llm.generate(prompts, **kwargs)
        return self._steps(prompts, rows, observations)

    def _steps(
        self, prompts: list[Any], rows: list[list[Any]], observations: Sequence[dict[str, Any]]
    ) -> list[AgentStep]:
        steps = [self.to_step(p, row[0]) for p, row in zip(prompts, rows, strict=True)]
        if self.coordinates.kind != "screen":
            for step, observation in zip(steps, observations, strict=True):
                step.action = self.to_screen_action(step.action, observation)
        return steps

    async def aact_batch(
        self,
        observations: Sequence[dict[str, Any]],
        infos: Sequence[dict[str, Any]],
        histories: Sequence[Sequence[Turn]] | None = None,
    ) -> list[AgentStep]:
        """The coroutine form of :meth:`act_batch`: awaits the backend's
        ``agenerate_with_tokens``/``agenerate`` when it has one, else runs the blocking
        call in a thread."""
        prompts = self._prompts(observations, infos, histories)
        if not prompts:
            return []
        kwargs = {"max_new_tokens": self.max_new_tokens, "temperature": self.temperature}
        if hasattr(self.llm, "agenerate_with_tokens"):
            rows: list[list[Any]] = await self.llm.agenerate_with_tokens(prompts, **kwargs)
        elif hasattr(self.llm, "agenerate"):
            rows = await self.llm.agenerate(prompts, **kwargs)
        else:
            return await asyncio.to_thread(self.act_batch, observations, infos, histories)
        return self._steps(prompts, rows, observations)

    @property
    def is_async(self) -> bool:
        """Whether the backend has a coroutine API (the engine then keeps one request in
        flight per env instead of batching)."""
        return hasattr(self.llm, "agenerate_with_tokens") or hasattr(self.llm, "agenerate")

    async def adisconnect(self) -> None:
        """Close the backend's connections of the running event loop, where it keeps any
        (:meth:`OpenAICompatLLM.adisconnect <gui_gym.models.llm.OpenAICompatLLM.adisconnect>`);
        the agent stays usable."""
        disconnect = getattr(self.llm, "adisconnect", None)
        if disconnect is not None:
            await disconnect()

    # ------------------------------------------------------------------- one env (Agent)

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        """Start an episode (forget the history)."""
        self._turns = []
        self.last_thought = None
        self.last_step = None

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        """The action string for one env (keeps the history between calls)."""
        if self._turns:  # what the env made of the previous action arrived with this info
            last = self._turns[-1]
            last.action_description = history_description(info)
            last.action_valid = bool(info.get("action_valid", True))
        [step] = self.act_batch([observation], [info], [self._turns])
        self._turns.append(
            Turn(
                screen=str(observation.get("screen", "")),
                step=step,
                screenshot=observation.get("screenshot") if self.images else None,
            )
        )
        self.last_thought = step.thought
        self.last_step = step
        return step.action
