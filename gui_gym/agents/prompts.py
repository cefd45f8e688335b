"""Prompt formats for :class:`~gui_gym.agents.llm.LLMAgent`: one default, one per paper.

A :class:`PromptFormat` turns what the agent knows at a step (:class:`PromptInput`: goal,
current screen, earlier turns, screenshots) into chat messages, says how a completion in its
output format is written (:meth:`PromptFormat.completion`, what SFT trains on) and reads the
thought and action back out of a generation (:meth:`PromptFormat.parse`).

Every format asks for a short thought and exactly one action in the gui-gym action grammar
inside ``<action>...</action>`` (``parse_action`` reads that block out of longer text), so
any of them works with every env. The paper formats are ours, written after the structure of
each paper's appendix prompt (what it shows and in which order, what it asks for); they are
not verbatim copies:

* ``default``: goal, numbered history of the env's action descriptions, screen, then
  ``Thought: ...`` and ``<action>...</action>``.
* ``progrm`` (ProgRM, seed 000): the actor prompt of its appendix: the task, the screen
  as an HTML-like element list, the previous actions, then one reasoning line and the
  action.
* ``admire`` (ADMIRE, seed 001, Figs. 17-19): goal, past actions as natural-language
  descriptions, current page, then ``Reason: ...`` and the action.
* ``ui_s1`` (UI-S1, seed 002): a system prompt describing the action space, the user goal,
  the previous actions as descriptions and the two latest earlier screenshots besides the
  current one, then ``<thinking>...</thinking>`` and the action.
* ``gui_shepherd`` (GUI-Shepherd, seed 003): the policy's output is a
  ``Thought:`` line, an ``Action:`` line and ``<action>...</action>``, which the
  GUI-Shepherd PRM reads.

Register your own with :func:`register_prompt`, or pass a callable
``PromptInput -> messages`` to ``LLMAgent(prompt=...)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "PROMPTS",
    "PromptFormat",
    "PromptInput",
    "get_prompt",
    "register_prompt",
]

ACTION_GRAMMAR = (
    'CLICK(i) | LONG_CLICK(i) | INPUT(i, "text") | SCROLL(up|down|left|right[, i]) | '
    'GOBACK() | HOME() | ENTER() | OPEN_APP("name") | ANSWER("text") | WAIT() | DONE()'
)
"""The action grammar as the prompts state it (``i`` is an element id on the screen)."""


@dataclass
class PromptInput:
    """What a prompt may show at one step.

    Attributes:
        instruction: The task's goal.
        screen: The current screen, rendered as text (one element a line, with its id).
        history: Descriptions of the earlier actions of this episode, oldest first
            (``info["action_description"]``, or the action itself when the env gave none).
        step: 0-based index of the current step.
        screenshot: The current screenshot, when the agent shows images.
        earlier_screenshots: Screenshots of earlier steps, oldest first (at most the
            agent's ``images``).
        info: The env's latest info (milestones, categories, ...).
    """

    instruction: str
    screen: str
    history: list[str] = field(default_factory=list)
    step: int = 0
    screenshot: np.ndarray | None = None
    earlier_screenshots: list[np.ndarray] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


_ACTION_BLOCK = re.compile(r"<action>(.*?)</action>", re.IGNORECASE | re.DOTALL)


def _user_content(
    text_before: str, inp: PromptInput, text_after: str
) -> str | list[dict[str, Any]]:
    """A user message: plain text, or text with the screenshots (earlier ones first) between
    ``text_before`` and ``text_after`` when there are images."""
    images = [*inp.earlier_screenshots, *([inp.screenshot] if inp.screenshot is not None else [])]
    if not images:
        return text_before + text_after
    parts: list[dict[str, Any]] = [{"type": "text", "text": text_before}]
    for k, image in enumerate(images):
        label = (
            "Current screenshot:"
            if k == len(images) - 1 and inp.screenshot is not None
            else (f"Screenshot of step {inp.step - len(images) + k + 1}:")
        )
        parts.append({"type": "text", "text": f"\n{label}\n"})
        parts.append({"type": "image", "image": image})
    parts.append({"type": "text", "text": text_after})
    return parts


def _numbered(history: Sequence[str]) -> str:
    if not history:
        return "(none yet)"
    return "\n".join(f"{k + 1}. {h}" for k, h in enumerate(history))


@dataclass(frozen=True)
class PromptFormat:
    """One prompt: how it is built, how its completions are written and read.

    Attributes:
        name: The name ``LLMAgent(prompt=...)`` and ``--prompt`` use.
        build: ``PromptInput -> list of chat messages``.
        thought_tag: How the completion introduces its thought: ``"Thought:"`` (a line
            prefix) or ``"<thinking>"`` (an XML-style tag pair).
        description: One line for ``--help`` and error messages.
    """

    name: str
    build: Callable[[PromptInput], list[dict[str, Any]]]
    thought_tag: str = "Thought:"
    description: str = ""

    def completion(self, thought: str | None, action: str) -> str:
        """The completion text for ``thought`` and ``action`` in this format (SFT targets
        are written with it, so a fine-tuned model answers the way :meth:`parse` reads)."""
        block = f"<action>{action}</action>"
        if not thought:
            return block
        if self.thought_tag.startswith("<"):
            close = "</" + self.thought_tag[1:]
            return f"{self.thought_tag}{thought}{close}\n{block}"
        return f"{self.thought_tag} {thought}\n{block}"

    def parse(self, text: str) -> tuple[str | None, str]:
        """``(thought, action text)`` from a generation: the action is the last
        ``<action>...</action>`` block (the whole text when there is none, so the env
        reports what was wrong); the thought is what the format's tag introduces."""
        blocks = _ACTION_BLOCK.findall(text)
        action = blocks[-1].strip() if blocks else text.strip()
        thought: str | None = None
        if self.thought_tag.startswith("<"):
            close = "</" + self.thought_tag[1:]
            m = re.search(
                re.escape(self.thought_tag) + r"(.*?)" + re.escape(close), text, re.DOTALL
            )
            if m:
                thought = m.group(1).strip()
        else:
            m = re.search(re.escape(self.thought_tag) + r"\s*(.*?)(?:\n|<action>|$)", text)
            if m:
                thought = m.group(1).strip()
        return thought or None, action


# --------------------------------------------------------------------------------- default

_DEFAULT_SYSTEM = (
    "You operate a graphical user interface to complete the user's goal, one action at a "
    "time. The screen is a list of elements, one a line, each with its id. Actions:\n"
    f"{ACTION_GRAMMAR}\n"
    'Say DONE() when the goal is complete; ANSWER("text") when it asks a question.\n'
    "Reply with one short thought, then exactly one action:\n"
    "Thought: <why this action>\n<action>ACTION</action>"
)


def _default(inp: PromptInput) -> list[dict[str, Any]]:
    before = f"Goal: {inp.instruction}\nPrevious actions:\n{_numbered(inp.history)}\n"
    after = f"\nScreen:\n{inp.screen}\nWhat is the next action?"
    return [
        {"role": "system", "content": _DEFAULT_SYSTEM},
        {"role": "user", "content": _user_content(before, inp, after)},
    ]


PROMPTS: dict[str, PromptFormat] = {}
"""The registered prompt formats by name."""


def register_prompt(prompt: PromptFormat) -> PromptFormat:
    """Add ``prompt`` to :data:`PROMPTS` (replacing one of the same name)."""
    PROMPTS[prompt.name] = prompt
    return prompt


register_prompt(
    PromptFormat("default", _default, description="goal, history, screen; Thought + <action>")
)


def get_prompt(
    name: str | PromptFormat | Callable[[PromptInput], list[dict[str, Any]]],
) -> PromptFormat:
    """A prompt format by name (or a format / a build callable, wrapped as is).

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    if isinstance(name, PromptFormat):
        return name
    if callable(name):
        return PromptFormat(getattr(name, "__name__", "custom"), name)
    if name not in PROMPTS:
        raise ValueError(f"unknown prompt {name!r}; choose one of {', '.join(sorted(PROMPTS))}")
    return PROMPTS[name]
