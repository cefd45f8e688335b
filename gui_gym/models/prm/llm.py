"""ADMIRE's process-reward baseline (seed 001, Table 1 "Process Reward", App. A.2 and
Fig. 16): an LLM judges each step "helpful toward the goal?" and answers ``yes`` or ``no``.

:class:`LLMStepJudgePRM` is that judge behind the
:class:`~gui_gym.models.prm.ProcessRewardModel` protocol, so it plugs into ``PRMWrapper``
(score 1.0 for ``yes``, 0.0 for ``no``). ADMIRE weighs the process reward 0.3
(App. A.1.2, :data:`ADMIRE_PROCESS_REWARD_WEIGHT`) and keeps the outcome reward:

    PRMWrapper(env, LLMStepJudgePRM(llm), weight=0.3, outcome_weight=1.0)

The prompt is ours, written after the structure of Fig. 16: a strict, conservative judge of
one step; what it is given; ``yes`` for a step that completes the task or ends it; the action
(not the thought) decides; examples of helpful and unhelpful steps; ``no`` when in doubt or
when the action is empty; answer with the single word. Fig. 16 shows screenshots before and
after the step; a :class:`~gui_gym.rewards.prm.PRMQuery` carries the screen the action was
chosen on, the action, its description and the earlier actions, and that is what the
judge reads (the rendered screen text, not an image).

Bad replies are handled as :class:`~gui_gym.models.prm.OpenAICompatPRM` handles bad server
responses: a reply that is not ``yes``/``no`` is asked again ``retries`` times; then, or when
the backend raises :class:`~gui_gym.models.llm.LLMError`, ``on_error="neutral"`` (default)
gives ``neutral_score`` with a :class:`~gui_gym.models.prm.PRMResponseWarning` and the reason
in ``last_errors`` (``PRMWrapper`` puts it in ``info["prm"]["error"]``), and
``on_error="raise"`` raises :class:`~gui_gym.models.llm.LLMError`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from gui_gym.models.llm.base import LLM, LLMError, ModelUnavailable, ask_until_parsed
from gui_gym.models.prm.protocol import PRMResponseWarning, check_on_error, check_queries
from gui_gym.rewards.prm import PRMQuery

__all__ = [
    "ADMIRE_PROCESS_REWARD_WEIGHT",
    "STEP_JUDGE_PROMPT",
    "LLMStepJudgePRM",
    "parse_step_verdict",
]

ADMIRE_PROCESS_REWARD_WEIGHT = 0.3
"""ADMIRE App. A.1.2: "the weight assigned to the process reward is fixed at 0.3"."""

STEP_JUDGE_PROMPT = """You judge whether one step of a GUI agent helps it complete its task.
You can tell when a task is done, whether an action is relevant to the goal, and the
difference between real progress and an action that does nothing for it.

You are given the task goal, the screen the agent acted on, the agent's earlier actions,
and this step's action (its text and what it did on the screen). Decide whether this step
moves the agent toward the goal.

Rules:
- If the task is complete with this step, or the action ends the task, answer yes.
- If the agent's reasoning and its action disagree, judge the action.
- Helpful: entering the right information, moving on to the next stage, selecting the
  target option, saving progress, and the like.
- Not helpful: taps on irrelevant things, dismissing a dialog that matters, opening an
  unrelated or wrong app, doing nothing, incomplete or wrong operations.
- If you are not sure, or the case is ambiguous, answer no.
- If the action text or description is empty, answer no.

Examples:
- Goal: fill out an expense report. Action: tap the "Add" button. The screen has "Add" at the
  top right and "Delete" on the left, and the tap is on "Add". Answer: yes
- Same goal and screen, but the tap is on "Delete". Answer: no

Say yes only for a step that clearly and directly moves the task forward; be strict.
Answer with exactly one word, yes or no, and nothing else.

Goal: {goal}

Earlier actions:
{history}

Screen the action was taken on:
{screen}

Step action text: {action}

Step action description: {description}

Does this step help progress toward the goal? Answer yes or no."""


def parse_step_verdict(text: str) -> bool:
    """True for ``yes``, False for ``no``: the whole reply, or its last non-empty line,
    stripped of spaces, quotes, ``*`` and a final period, in any case. Linear in the
    reply's length.

    Raises:
        ValueError: for anything else.
    """
    lines = [line for line in text.strip().splitlines() if line.strip()]
    candidates = [text, lines[-1]] if lines else [text]
    for candidate in candidates:
        word = candidate.strip().strip("*\"'` \t").rstrip(".!").strip("*\"'` \t").lower()
        if word.startswith("answer:"):
            word = word[len("answer:") :].strip().strip("*\"'` \t").rstrip(".")
        if word in ("yes", "no"):
            return word == "yes"
    raise ValueError(f"expected 'yes' or 'no', got {text[:80]!r}")


class LLMStepJudgePRM:
    """ADMIRE's LLM-as-judge process reward (Fig. 16) as a process reward model.

    Args:
        llm: Any :class:`~gui_gym.models.llm.LLM` backend (``OpenAICompatLLM``,
            ``TransformersLLM``, ``ScriptedLLM`` in tests).
        retries: Extra attempts for a reply that is not ``yes``/``no``.
        max_new_tokens: Reply budget.
        max_screen_chars: Longest screen text put in the prompt.
        on_error: ``"neutral"`` (default) or ``"raise"`` (see the module docstring).
        neutral_score: Score of a step whose judgment failed (0.5: no preference).

    Raises:
        TypeError: when ``llm`` has no ``generate``.
        ValueError: for a bad argument.
    """

    requires_env = False

    def __init__(
        self,
        llm: LLM,
        *,
        retries: int = 1,
        max_new_tokens: int = 8,
        max_screen_chars: int = 4000,
        on_error: str = "neutral",
        neutral_score: float = 0.5,
    ):
        if not callable(getattr(llm, "generate", None)):
            raise TypeError(f"llm must have generate(prompts, ...), got {type(llm).__name__}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be an int >= 0, got {retries!r}")
        check_on_error(on_error, neutral_score)
        self.llm = llm
        self.retries = retries
        self.max_new_tokens = int(max_new_tokens)
        self.max_screen_chars = int(max_screen_chars)
        self.on_error = on_error
        self.neutral_score = float(neutral_score)
        self.last_errors: list[str | None] = []
        self.last_replies: list[str] = []

    def prompt(self, query: PRMQuery) -> str:
        """The text sent for ``query``."""
        screen = query.screen
        if len(screen) > self.max_screen_chars:
            screen = screen[: self.max_screen_chars] + "\n<!-- screen cut -->"
        history = "\n".join(f"{i + 1}. {h}" for i, h in enumerate(query.history)) or "[none]"
        return STEP_JUDGE_PROMPT.format(
            goal=query.instruction,
            history=history,
            screen=screen,
            action=query.action,
            description=query.action_description,
        )

    def _judge(self, prompts: list[str]) -> tuple[list[bool | None], list[str], list[str | None]]:
        """Verdicts (None where none parsed), replies and errors, asking again for the
        replies that did not parse.

        Raises:
            LLMError: when the backend fails or returns the wrong number of replies.
        """
        answers = ask_until_parsed(
            self.llm, prompts, parse_step_verdict, self.retries, max_new_tokens=self.max_new_tokens
        )
        verdicts = [a.value for a in answers]
        replies = [a.reply for a in answers]
        errors = [
            None if a.parsed else f"no yes/no verdict after {a.attempts} attempts: {a.error}"
            for a in answers
        ]
        return verdicts, replies, errors

    def score(self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None) -> np.ndarray:
        """1.0 for a step judged helpful, 0.0 for one judged not; see the module docstring
        for failures. A step with an empty action text or description is 0.0 without asking
        (Fig. 16's rule).

        Raises:
            LLMError: for a failed judgment when ``on_error="raise"``.
        """
        queries = check_queries(queries)
        asked = [
            i for i, q in enumerate(queries) if q.action.strip() and q.action_description.strip()
        ]
        verdicts: list[bool | None] = [False] * len(queries)
        replies = [""] * len(queries)
        errors: list[str | None] = [None] * len(queries)
        if asked:
            try:
                got, said, failed = self._judge([self.prompt(queries[i]) for i in asked])
            except ModelUnavailable:  # no answer: infrastructure, not a score
                raise
            except LLMError as err:
                got, said, failed = [None] * len(asked), [""] * len(asked), [str(err)] * len(asked)
            for j, i in enumerate(asked):
                verdicts[i], replies[i], errors[i] = got[j], said[j], failed[j]
        self.last_replies, self.last_errors = replies, errors
        scores = np.empty(len(queries), dtype=np.float64)
        for i, verdict in enumerate(verdicts):
            if verdict is None:
                if self.on_error == "raise":
                    raise LLMError(f"the step judge failed: {errors[i]}")
                warnings.warn(
                    f"step judge failed ({errors[i]}); using neutral score {self.neutral_score}",
                    PRMResponseWarning,
                    stacklevel=2,
                )
                scores[i] = self.neutral_score
            else:
                scores[i] = 1.0 if verdict else 0.0
        return scores
