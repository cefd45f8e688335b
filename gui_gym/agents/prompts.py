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
    "ACTION_GRAMMAR",
    "PROMPTS",
    "SCREENSHOT_ACTION_GRAMMAR",
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


def _system_and_user(
    system: str, text_before: str, inp: PromptInput, text_after: str
) -> list[dict[str, Any]]:
    """The chat of the prompt formats: the ``system`` message, then the user message of
    :func:`_user_content` (``text_before``, the screenshots, ``text_after``)."""
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": _user_content(text_before, inp, text_after)},
    ]


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
        action_prefix: Text before the ``<action>`` block in a completion (e.g.
            ``"Action: "`` for the UI-TARS style of GUI-Shepherd's policy).
        screenshot_only: The prompt shows the screenshot and no UI tree; the policy acts
            by coordinates (an agent with it needs ``screenshot=True``).
    """

    name: str
    build: Callable[[PromptInput], list[dict[str, Any]]]
    thought_tag: str = "Thought:"
    description: str = ""
    action_prefix: str = ""
    screenshot_only: bool = False

    def completion(self, thought: str | None, action: str) -> str:
        """The completion text for ``thought`` and ``action`` in this format (SFT targets
        are written with it, so a fine-tuned model answers the way :meth:`parse` reads)."""
        block = f"{self.action_prefix}<action>{action}</action>"
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
    return _system_and_user(_DEFAULT_SYSTEM, before, inp, after)


# ---------------------------------------------------------------------------------- ProgRM
# After ProgRM's actor prompt (seed 000, Appendix G, Table 11): a system message that makes
# the model a WikiHow expert, lists the actions as Python-style calls with a comment each,
# gives examples and asks for <think>...</think> then <action>...</action>; a user message
# with the instruction, the current screen and the action history.

_PROGRM_SYSTEM = (
    "You are a skilful mobile assistant who knows this app well and navigates it expertly. "
    "You will be given the task and the screen at the current step, and you must take one "
    "appropriate action to move the task forward. Write the action as a function call. "
    "Available actions:\n"
    "* INPUT(element_id: int, text: str) # type text into a text box\n"
    "* CLICK(element_id: int) # click a clickable element\n"
    "* LONG_CLICK(element_id: int) # long-press a clickable element\n"
    "* SCROLL(direction) # scroll UP/DOWN/LEFT/RIGHT to see more of a long or wide page\n"
    "* ANSWER(text: str) # give me the answer to a question\n"
    "* GOBACK() # press the back button\n"
    "* DO_NOTHING() # wait one step\n"
    "* DONE() # the task is complete\n"
    'Examples of actions: INPUT(3, "scooter"), CLICK(4), SCROLL(DOWN), GOBACK().\n'
    "First reason briefly, then give the action, in this format:\n"
    "<think>your reasoning</think>\n<action>ONE ACTION</action>\n"
    "The examples only show the format; they have nothing to do with the task below."
)


def _progrm(inp: PromptInput) -> list[dict[str, Any]]:
    before = f"Current instruction:\n{inp.instruction}\n"
    after = f"\nCurrent screen:\n{inp.screen}\nAction history:\n{_numbered(inp.history)}"
    return _system_and_user(_PROGRM_SYSTEM, before, inp, after)


# ---------------------------------------------------------------------------------- ADMIRE
# After ADMIRE's agent prompt (seed 001, Figs. 17-19, itself AndroidWorld's): the agent
# operates a phone for a user; it is shown the goal, a history of what it has done (as
# natural-language descriptions) and the current screen; short guidelines; it answers
# "Reason: ..." then the action.

_ADMIRE_SYSTEM = (
    "You are an agent who can operate an Android phone on behalf of a user. If the goal is "
    'a question, find the answer and reply with ANSWER("text"); otherwise complete the '
    "task step by step by performing actions on the phone. At each step you get the "
    "current screen and a history of what you have done; choose one action:\n"
    f"{ACTION_GRAMMAR}\n"
    "Guidelines: pick the easiest way; if something does not work, do not repeat it, try "
    "another way; scroll to reveal more content (to see content further down, scroll "
    "down); use INPUT to type text instead of clicking keys; finish with DONE() when the "
    "goal is achieved.\n"
    "Answer in this form:\nReason: why you take the action\nAction: <action>ONE ACTION</action>"
)


def _admire(inp: PromptInput) -> list[dict[str, Any]]:
    before = (
        f"The current user goal/request is: {inp.instruction}\n"
        f"Here is a history of what you have done so far:\n{_numbered(inp.history)}\n"
    )
    after = f"\nThe current screen:\n{inp.screen}\nYour answer:"
    return _system_and_user(_ADMIRE_SYSTEM, before, inp, after)


# ---------------------------------------------------------------------------------- UI-S1
# After UI-S1's system prompt (seed 002, appendix): a GUI agent given the task and its action
# history with screenshots; output <think>...</think> <action>...</action>. UI-S1 keeps the
# two latest earlier screenshots besides the current one (LLMAgent(images=2)).

_UI_S1_SYSTEM = (
    "You are a GUI agent. You are given a task and your action history, with screenshots. "
    "You need to perform the next action to complete the task.\n"
    "## Output format\n<think> ... </think> <action> ... </action>\n"
    f"## Action space\n{ACTION_GRAMMAR}\n"
    'Use DONE() when the task is complete and ANSWER("text") to reply to a question.'
)


def _ui_s1(inp: PromptInput) -> list[dict[str, Any]]:
    before = f"Task: {inp.instruction}\nAction history:\n{_numbered(inp.history)}\n"
    after = f"\nCurrent screen elements:\n{inp.screen}"
    return _system_and_user(_UI_S1_SYSTEM, before, inp, after)


# ---------------------------------------------------------------------------- GUI-Shepherd
# GUI-Shepherd's policy (seed 003) is UI-TARS-1.5, whose answers are a "Thought:" line and an
# "Action:" line; its PRM reads that text. Ours keeps that layout with the action in the
# gui-gym grammar inside <action> tags.

_SHEPHERD_SYSTEM = (
    "You are a GUI agent. You are given a task and your action history, with the current "
    "screen. You need to perform the next action to complete the task.\n"
    "## Output format\nThought: ...\nAction: <action>...</action>\n"
    f"## Action space\n{ACTION_GRAMMAR}\n"
    "## Note\nWrite a small plan and the next step in one or two sentences in Thought."
)


def _gui_shepherd(inp: PromptInput) -> list[dict[str, Any]]:
    before = f"## User instruction\n{inp.instruction}\n## History\n{_numbered(inp.history)}\n"
    after = f"\n## Screen\n{inp.screen}"
    return _system_and_user(_SHEPHERD_SYSTEM, before, inp, after)


# ------------------------------------------------------------------------ screenshot only
# UI-S1's and GUI-Shepherd's Qwen2.5-VL policies see pixels, not a UI tree, and act by
# coordinates: the goal, the history and the screenshots, nothing else.

SCREENSHOT_ACTION_GRAMMAR = (
    'CLICK_XY(x, y) | LONG_CLICK_XY(x, y) | TYPE("text") | SCROLL(up|down|left|right[, x, y]) '
    '| DRAG_XY(x0, y0, x1, y1) | KEY("name") | GOBACK() | HOME() | ENTER() | OPEN_APP("name") '
    '| ANSWER("text") | WAIT() | DONE()'
)
"""The actions a screenshot-only policy writes: points in the screenshot's pixels; ``TYPE``
writes into the field a click focused."""

_SCREENSHOT_SYSTEM = (
    "You are a GUI agent that sees the screen as an image. You are given a task, your action "
    "history and screenshots. Perform the next action to complete the task; points are "
    "pixel coordinates in the current screenshot, and TYPE writes into the focused field.\n"
    "## Output format\n<think> ... </think> <action> ... </action>\n"
    f"## Action space\n{SCREENSHOT_ACTION_GRAMMAR}"
)


def _screenshot_only(inp: PromptInput) -> list[dict[str, Any]]:
    if inp.screenshot is None:
        raise ValueError("the screenshot prompt needs the screenshot (screenshot=True)")
    before = f"Task: {inp.instruction}\nAction history:\n{_numbered(inp.history)}\n"
    return [
        {"role": "system", "content": _SCREENSHOT_SYSTEM},
        {"role": "user", "content": _user_content(before, inp, "\nYour action:")},
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
register_prompt(
    PromptFormat(
        "progrm",
        _progrm,
        thought_tag="<think>",
        description="ProgRM's actor prompt: <think> + <action>",
    )
)
register_prompt(
    PromptFormat(
        "admire",
        _admire,
        thought_tag="Reason:",
        action_prefix="Action: ",
        description="ADMIRE's (AndroidWorld's) agent prompt: Reason + Action",
    )
)
register_prompt(
    PromptFormat(
        "ui_s1",
        _ui_s1,
        thought_tag="<think>",
        description="UI-S1's system prompt: <think> + <action>, earlier screenshots",
    )
)
register_prompt(
    PromptFormat(
        "gui_shepherd",
        _gui_shepherd,
        thought_tag="Thought:",
        action_prefix="Action: ",
        description="UI-TARS layout of GUI-Shepherd's policy: Thought + Action",
    )
)

register_prompt(
    PromptFormat(
        "screenshot",
        _screenshot_only,
        thought_tag="<think>",
        description="screenshot only (no UI tree), coordinate actions: UI-S1/GUI-Shepherd VLMs",
        screenshot_only=True,
    )
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
