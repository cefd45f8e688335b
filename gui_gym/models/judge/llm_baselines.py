"""The LLM judges ProRe compares itself with: the raw-observation judge of its ablation
"without chain-of-claims" (Table 4, :class:`LLMRawJudge`) and the trajectory-only judges in
the style of DigiRL and WebRL (Table 2, :class:`LLMTrajectoryJudge`), which judge the policy's
trace with no probing. Prompts are written by us after the structure of theirs; replies are
parsed as strictly as the pipeline's components' (:mod:`gui_gym.models.judge.llm`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gui_gym.models.judge.llm import (
    COMPLETION_RULE,
    TextGenerator,
    _history,
    _LLMComponent,
    _verdict_or_invalid,
)
from gui_gym.models.judge.llm_parsing import parse_status, parse_yes_no
from gui_gym.models.judge.types import JudgeReport, Trace, Verdict
from gui_gym.models.llm.vision_prompts import screenshot_prompt

__all__ = [
    "DIGIRL_PROMPT",
    "TRAJECTORY_STYLES",
    "WEBRL_PROMPT",
    "LLMRawJudge",
    "LLMTrajectoryJudge",
]


RAW_JUDGE_PROMPT = """You decide whether a GUI agent (the policy agent) completed the user's task.

Below are the raw observations: the policy agent's trace, then the traces of evaluator
agents that looked around the device afterwards, starting from the state the policy left
(their own actions are not part of the task). {completion_rule}

Task: {task}

What the user expects (the reasoner's analysis): {expectation}

Policy agent's trace (screens numbered from 0):
{policy}

{probes}

Reply in exactly this form:
Analysis: <what the observations show>
Status: success or failure"""


class LLMRawJudge(_LLMComponent):
    """ProRe's ablation "without chain-of-claims" (Table 4): the reasoner receives the raw
    observations of the policy and evaluator agents, with no claims and no structured
    analysis. A :class:`~gui_gym.models.judge.RawObservationJudge` for
    ``ProReJudge(raw_judge=...)``.

    Args:
        llm: Any object with the ``models.llm`` ``generate`` method.
        max_new_tokens: Completion budget.
        retries: Extra attempts when a reply has no single valid ``Status:`` line.
        max_screen_chars: Longest screen text put in the prompt.
        screenshots: None (automatic), True or False: the last screenshots of the policy's
            trace and of each probe's, labelled, before the prompt.
        max_images: Most screenshots shown per trace.

    Raises:
        TypeError: when ``llm`` has no ``generate`` method.
        ValueError: for ``screenshots=True`` with a text-only backend.
    """

    def __init__(
        self,
        llm: TextGenerator,
        max_new_tokens: int = 512,
        retries: int = 2,
        max_screen_chars: int = 2000,
        screenshots: bool | None = None,
        max_images: int = 2,
    ):
        super().__init__(llm, max_new_tokens, retries, screenshots, max_images)
        self.max_screen_chars = int(max_screen_chars)

    def judge_raw(
        self,
        instruction: str,
        policy: Trace,
        probes: Sequence[Trace],
        expectation: str = "",
    ) -> Verdict:
        """The verdict from the traces; ``invalid`` when the replies stay unparseable."""
        blocks = [
            f"Evaluator trace {i} (goal: {t.goal}):\n{t.render(self.max_screen_chars)}"
            for i, t in enumerate(probes)
        ]
        prompt = RAW_JUDGE_PROMPT.format(
            completion_rule=COMPLETION_RULE if policy.completion_required else "",
            task=instruction,
            expectation=expectation or "[not analysed]",
            policy=policy.render(self.max_screen_chars),
            probes="\n\n".join(blocks) or "[no evaluator traces]",
        )
        shots: list[tuple[str, Any]] = []
        if self._shows(policy, *probes):
            every = list(range(len(policy.screens)))
            shots = self._trace_shots(policy, every, "Policy agent's trace, ")
            for i, t in enumerate(probes):
                every = list(range(len(t.screens)))
                shots += self._trace_shots(t, every, f"Evaluator trace {i}, ")
        return _verdict_or_invalid(self, screenshot_prompt(prompt, shots), parse_status)


# ------------------------------------------------------ trajectory-only baselines (Table 2)

TRAJECTORY_STYLES = ("digirl", "webrl")
"""ProRe Table 2's trajectory-only baselines, prompts written by us after their structure:
``digirl`` (DigiRL's evaluator: the task and the last screens, a short reasoning, then
``Status: success|failure``), ``webrl`` (WebRL's outcome reward model: the task, the action
history and the final screen(s), answered ``YES`` or ``NO``)."""

DIGIRL_PROMPT = """You are an expert in evaluating the performance of an agent on a phone or
web screen. The agent is designed to help a human user complete a task. Given the user's
task and the agent's final state of the screen, decide whether the task has been
completed. The screens are given as text; later screens are more recent.

Task: {task}

{screens}

First describe briefly what the final screen shows and whether it satisfies the task, then
give your verdict on the last line in exactly this form:
Status: success or failure"""

WEBRL_PROMPT = """You are checking whether a GUI agent completed a user's instruction.

You are given the instruction, the agent's action history, and the screen(s) the agent
ended on. Judge only from this evidence. {completion_rule}

Instruction: {task}

Action history:
{history}

{screens}

Think step by step, then end with exactly one line:
Answer: YES (the instruction was completed) or Answer: NO"""


class LLMTrajectoryJudge(_LLMComponent):
    """A trajectory-only LLM judge in the style of ProRe Table 2's baselines (DigiRL,
    WebRL), judging the policy's trace with no probing (an
    :class:`~gui_gym.models.judge.EpisodeJudge`).

    Args:
        llm: Any object with the ``models.llm`` ``generate`` method.
        style: ``digirl`` or ``webrl`` (see :data:`TRAJECTORY_STYLES`).
        last_states: How many final screens it sees: 1 (Table 2's "Last N States = 1") or
            None for the full trajectory ("Full").
        max_new_tokens: Completion budget.
        retries: Extra attempts when a reply does not parse.
        max_screen_chars: Longest screen text put in the prompt.
        screenshots: None (automatic), True or False: the screenshots of the screens it
            sees (DigiRL's and WebRL's evaluators read final screenshots), before the prompt.
        max_images: Most screenshots shown (the last ones).

    Raises:
        TypeError: when ``llm`` has no ``generate`` method.
        ValueError: for an unknown style, ``last_states`` below 1, or ``screenshots=True``
            with a text-only backend.
    """

    def __init__(
        self,
        llm: TextGenerator,
        style: str = "digirl",
        last_states: int | None = 1,
        max_new_tokens: int = 384,
        retries: int = 2,
        max_screen_chars: int = 2000,
        screenshots: bool | None = None,
        max_images: int = 4,
    ):
        super().__init__(llm, max_new_tokens, retries, screenshots, max_images)
        if style not in TRAJECTORY_STYLES:
            raise ValueError(f"style must be one of {TRAJECTORY_STYLES}, got {style!r}")
        if last_states is not None and (isinstance(last_states, bool) or last_states < 1):
            raise ValueError(f"last_states must be >= 1 or None (full), got {last_states!r}")
        self.style = style
        self.last_states = last_states
        self.max_screen_chars = int(max_screen_chars)

    def _first(self, trace: Trace) -> int:
        return 0 if self.last_states is None else max(0, len(trace.screens) - self.last_states)

    def _shots(self, trace: Trace) -> list[tuple[str, Any]]:
        if not self._shows(trace):
            return []
        last = len(trace.screens) - 1
        shots = self._trace_shots(trace, list(range(self._first(trace), last + 1)))
        return [(label.replace(f"Screen {last}:", "Final screen:"), i) for label, i in shots]

    def _screens(self, trace: Trace) -> str:
        first = self._first(trace)
        out = []
        for i in range(first, len(trace.screens)):
            text = trace.screens[i].text
            if len(text) > self.max_screen_chars:
                text = text[: self.max_screen_chars] + "\n<!-- screen cut -->"
            label = "Final screen" if i == len(trace.screens) - 1 else f"Screen {i}"
            out.append(f"--- {label} ---\n{text}")
        if trace.answer is not None:
            out.append(f"The agent answered: {trace.answer}")
        return "\n".join(out)

    def judge_episode(self, env: object, policy: Trace) -> JudgeReport:
        """The verdict on ``policy`` (``env`` is not looked at: no probing)."""
        if self.style == "digirl":
            prompt = DIGIRL_PROMPT.format(task=policy.goal, screens=self._screens(policy))
            final = _verdict_or_invalid(
                self, screenshot_prompt(prompt, self._shots(policy)), parse_status
            )
        else:
            prompt = WEBRL_PROMPT.format(
                completion_rule=COMPLETION_RULE if policy.completion_required else "",
                task=policy.goal,
                history=_history(policy),
                screens=self._screens(policy),
            )
            final = _verdict_or_invalid(
                self, screenshot_prompt(prompt, self._shots(policy)), parse_yes_no
            )
        report = JudgeReport(verdict=final.verdict, mode="trajectory", final=final)
        if final.verdict == "invalid":
            report.notes.append(final.reasoning)
        return report
