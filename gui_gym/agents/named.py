"""Agents by name: what ``gui-gym eval/record --agent NAME`` builds.

:func:`make_agent` builds the built-in one-env agents (oracle, random, the WebShop greedy
baseline) for an env; :func:`make_llm_agent` builds an :class:`~gui_gym.agents.llm.LLMAgent`
on a local or a served model. The run layer (:mod:`gui_gym.runs`) and the CLI take agents by
these names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym

from gui_gym.agents.base import Agent, BatchAgent
from gui_gym.agents.llm import LLMAgent
from gui_gym.agents.oracle import OracleAgent, ScreenshotOracleAgent
from gui_gym.agents.prompts import get_prompt
from gui_gym.agents.random_agent import RandomAgent
from gui_gym.agents.webshop_greedy import WebShopGreedyAgent
from gui_gym.models.llm import OpenAICompatLLM, TransformersLLM
from gui_gym.models.llm.local import resolve_model

__all__ = ["AGENTS", "make_agent", "make_llm_agent"]

AGENTS = (
    "oracle",
    "oracle-xy",
    "random",
    "random:done=<p>",
    "webshop-greedy",
    "webshop-greedy:informed",
    "webshop-greedy:informed,on-screen",
    "llm",
    "openai",
)
"""Agent names ``gui-gym eval --agent`` accepts (``llm``/``openai`` need ``--model``)."""
WEBSHOP_GREEDY_OPTIONS = ("", "informed", "on-screen", "informed,on-screen")
"""``webshop-greedy:<options>``: ``informed`` (price ceiling, named options) and
``on-screen`` (clicks by index on the visible screen, ``GuiGym/WebShop-v0`` only)."""


def make_agent(name: str, env: gym.Env, seed: int = 0) -> Agent:
    """Build a named built-in agent for ``env``: ``oracle``, ``oracle-xy`` (the expert by
    screen coordinates, as a screenshot-only policy acts), ``random``, ``random:done=P``
    (a random agent that declares DONE with probability P at each step), or
    ``webshop-greedy`` (WebShop's BM25-greedy baseline, WebShop ids only) or
    ``webshop-greedy:informed`` (the same agent also keeping to the instruction's price
    ceiling and choosing the options it names: still only what the page shows), with
    ``,on-screen`` clicking by the element's index on the visible screen (``WebShop-v0``).

    Raises:
        ValueError: for an unknown name or option, listing the known ones.
    """
    base, _, option = name.partition(":")
    if base == "oracle" and not option:
        return OracleAgent(env)
    if base == "oracle-xy" and not option:
        return ScreenshotOracleAgent(env)
    if base == "webshop-greedy" and option in WEBSHOP_GREEDY_OPTIONS:
        return WebShopGreedyAgent(
            env, informed="informed" in option, on_screen="on-screen" in option
        )
    if base == "random":
        done_prob = 0.0
        if option:
            key, _, value = option.partition("=")
            try:
                done_prob = float(value)
            except ValueError:
                key = ""
            if key != "done":
                raise ValueError(f"bad agent option {option!r}; expected random:done=<probability>")
        return RandomAgent(env, seed=seed, done_prob=done_prob)
    if base in ("llm", "openai"):
        raise ValueError(f"agent {name!r} needs a model: use make_llm_agent (--model)")
    raise ValueError(f"unknown agent {name!r}; choose one of {', '.join(AGENTS)}")


def make_llm_agent(
    kind: str,
    model: str | Path,
    *,
    base_url: str | None = None,
    prompt: str = "default",
    screenshot: bool = False,
    images: int = 0,
    temperature: float = 0.0,
    max_new_tokens: int = 128,
    history: int = 8,
    device: str | None = None,
    max_concurrency: int = 64,
    coordinates: str = "screen",
) -> BatchAgent:
    """An :class:`~gui_gym.agents.llm.LLMAgent` on a local model (``kind="llm"``, ``model``
    a registry name such as ``"smollm2-135m-instruct"``, a ``.gguf`` file or a Hugging Face
    folder, as every ``--model`` takes: :func:`~gui_gym.models.llm.local.resolve_model`) or
    a served one (``kind="openai"``, ``model`` the served name, ``base_url`` the API root).

    Raises:
        ValueError: for an unknown kind or prompt, a missing base URL, or a local model that
            is not a model folder; :class:`~gui_gym.models.llm.local.ModelError` (a
            ValueError, one line) for an unknown name (naming the names that work), a
            missing wheel, or a GGUF that cannot be converted.
    """
    prompt_format = get_prompt(prompt)  # an unknown name fails before any model loads
    if kind == "llm":
        folder = resolve_model(model, "--model")  # a name or a .gguf: its converted folder
        if not (folder / "config.json").is_file():
            raise ValueError(
                f"--model {model}: not a local Hugging Face model folder (no config.json); "
                "for a served model use --agent openai --base-url URL --model NAME"
            )
        llm: Any = TransformersLLM(folder, device=device)
    elif kind == "openai":
        if not base_url:
            raise ValueError("--agent openai needs --base-url (e.g. http://localhost:8000/v1)")
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"--base-url {base_url!r} is not an http(s) URL (e.g. http://localhost:8000/v1)"
            )
        llm = OpenAICompatLLM(str(model), base_url, max_concurrency=max_concurrency)
    else:
        raise ValueError(f"unknown LLM agent kind {kind!r}; choose llm or openai")
    return LLMAgent(
        llm,
        prompt_format,
        history=history,
        images=images,
        screenshot=screenshot,
        temperature=temperature,
        max_new_tokens=max_new_tokens,
        name=f"{kind}:{model}:{prompt_format.name}",
        coordinates=coordinates,
    )
