"""ProgRM's prompted reward models (App. G, Tables 7-10) and its LLM-judge ORM baseline.

ProgRM compares its trained progress model with an outcome reward model that prompts a
general LLM ("ORM-Claude", Tables 9 and 10 of the paper): the LLM reads the instruction, the
history of actions and the current screen and answers with a percentage of progress, either
directly or after a ``<think>`` block. :class:`LLMProgressJudge` is that baseline behind the
:class:`~gui_gym.models.progress.protocol.ProgressModel` protocol, so it plugs into
``ProgressRewardWrapper`` and ``benchmarks/progress_table.py`` like a trained ProgRM.

The prompt texts are ours, written after the structure of the paper's tables: a system prompt
that makes the model an expert of the app who assesses how far someone got, the three inputs,
and what to answer (:data:`PROMPTS`). The user message is
:func:`~gui_gym.models.progress.protocol.format_state`, the same layout a trained ProgRM reads.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from gui_gym.core.untrusted_text import tagged_blocks
from gui_gym.models.llm.base import LLM, LLMError, ask_until_parsed
from gui_gym.models.progress.protocol import ProgressQuery, format_state

__all__ = [
    "PROMPTS",
    "LLMProgressJudge",
    "parse_progress",
    "progress_messages",
]

logger = logging.getLogger(__name__)

_EXPERT = (
    "You are an expert user of mobile apps, and of the {app} app in particular: you use it "
    "every day and know how people search for content, open pages, follow links, and use "
    "its features. You can therefore tell precisely how far someone has got with a task in "
    "this app.\n"
    "You will see a record of someone else's session:\n"
    "* the instructions, which state the goal of the task;\n"
    "* the actions taken so far;\n"
    "* the current screen, which shows the state those actions led to.\n"
)

PROMPTS: dict[str, str] = {
    # Table 7: the system prompt a ProgRM backbone is fine-tuned with.
    "progrm": _EXPERT + "Estimate the progress made on the task as a percentage.",
    # Table 8: the same for an ORM fine-tuned to judge the outcome.
    "orm": _EXPERT + "Judge whether the task has been completed: answer success or failure.",
    # Table 9: the prompted LLM judge, answering directly.
    "orm_llm": _EXPERT
    + "Estimate the progress made on the task as a percentage. Answer with the number only, "
    "with no explanation or other text.",
    # Table 10: the prompted LLM judge with a thought first.
    "orm_llm_cot": _EXPERT
    + "Estimate the progress made on the task as a percentage. Reason about it first, then "
    "answer, in exactly this form:\n<think>\nyour reasoning\n</think>\n<answer>\n0.42\n"
    "</answer>\nThe number in this example is only an illustration of the form and has "
    "nothing to do with the session below.",
}
"""System prompts by name, after ProgRM's Tables 7 (``progrm``), 8 (``orm``), 9
(``orm_llm``) and 10 (``orm_llm_cot``); ``{app}`` is filled with the app's name."""

_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s?(%?)")  # linear: no two quantifiers overlap
_VERDICT = re.compile(r"\b(success|successful|completed|failure|failed)\b", re.IGNORECASE)


def progress_messages(
    query: ProgressQuery, prompt: str = "orm_llm", app: str = "WikiHow"
) -> list[dict[str, str]]:
    """The chat messages for ``query``: the named system prompt and the state.

    Raises:
        ValueError: for a prompt name not in :data:`PROMPTS`.
    """
    if prompt not in PROMPTS:
        raise ValueError(f"prompt must be one of {sorted(PROMPTS)}, got {prompt!r}")
    return [
        {"role": "system", "content": PROMPTS[prompt].format(app=app)},
        {"role": "user", "content": format_state(query)},
    ]


def parse_progress(text: str) -> float:
    """The progress in ``[0, 1]`` an LLM stated in ``text``.

    The last ``<answer>`` block is read when there is one (Table 10's format), else the whole
    text. Its last number is the answer: with ``%`` or above 1 it is a percentage (``42%``,
    ``42``), otherwise a fraction (``0.42``). Without a number, a verdict word counts
    (``success`` 1.0, ``failure`` 0.0), as the ORM prompt (Table 8) asks for one. Linear in
    the length of ``text``.

    Raises:
        ValueError: when the text states no progress, or one outside 0-100%.
    """
    answers = tagged_blocks(text, "answer")
    body = answers[-1] if answers else text
    last = None
    for last in _NUMBER.finditer(body):  # noqa: B007  (the last match is the answer)
        pass
    if last is None:
        verdicts = _VERDICT.findall(body)
        if verdicts:
            return 1.0 if verdicts[-1].lower() in ("success", "successful", "completed") else 0.0
        raise ValueError(f"no progress value in the reply {body[:120]!r}")
    value = float(last.group(1))
    if last.group(2) or value > 1.0:
        value /= 100.0
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"the stated progress {last.group(0)!r} is outside 0-100%")
    return value


class LLMProgressJudge:
    """ProgRM's "ORM-Claude" baseline: a prompted LLM estimates each state's progress.

    Each query is sent as :func:`progress_messages` (system prompt ``prompt``, the state as
    the user message) in one batched ``llm.generate`` call at temperature 0. A reply that
    states no usable progress is asked again up to ``retries`` times; if it still does not,
    or the backend fails, :class:`~gui_gym.models.llm.LLMError` is raised, which
    ``ProgressRewardWrapper`` turns into a zero progress reward for that step with a warning
    and ``info["progress"]["model_error"]``. The replies of the last call are kept in
    ``last_replies``.

    Args:
        llm: Any :class:`~gui_gym.models.llm.LLM` backend (``OpenAICompatLLM`` for a
            hosted model, ``TransformersLLM``, ``ScriptedLLM`` in tests).
        prompt: ``"orm_llm"`` (Table 9, direct answer; default) or ``"orm_llm_cot"``
            (Table 10, think first), or any name in :data:`PROMPTS`.
        app: The app named in the system prompt.
        max_new_tokens: Reply budget (default 16 direct, 512 with a thought).
        retries: Extra attempts for a reply with no usable progress.

    Raises:
        ValueError: for an unknown prompt or a negative ``retries``.
        TypeError: when ``llm`` has no ``generate``.
    """

    def __init__(
        self,
        llm: LLM,
        prompt: str = "orm_llm",
        *,
        app: str = "WikiHow",
        max_new_tokens: int | None = None,
        retries: int = 1,
    ):
        if not callable(getattr(llm, "generate", None)):
            raise TypeError(f"llm must have generate(prompts, ...), got {type(llm).__name__}")
        if prompt not in PROMPTS:
            raise ValueError(f"prompt must be one of {sorted(PROMPTS)}, got {prompt!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be an int >= 0, got {retries!r}")
        self.llm = llm
        self.prompt = prompt
        self.app = app
        self.max_new_tokens = max_new_tokens or (512 if prompt.endswith("_cot") else 16)
        self.retries = retries
        self.last_replies: list[str] = []

    def predict(self, queries: Sequence[ProgressQuery]) -> np.ndarray:
        """Progress in ``[0, 1]`` per query.

        Raises:
            LLMError: when the backend fails, or a reply has no usable progress after
                ``retries`` more attempts.
        """
        prompts: list[Any] = [progress_messages(q, self.prompt, self.app) for q in queries]
        answers = ask_until_parsed(
            self.llm, prompts, parse_progress, self.retries, max_new_tokens=self.max_new_tokens
        )
        self.last_replies = [a.reply for a in answers]
        failed = [a for a in answers if not a.parsed]
        if failed:
            raise LLMError(
                f"{len(failed)} of {len(prompts)} replies stated no usable progress after "
                f"{self.retries + 1} attempts, e.g. {failed[0].error}"
            )
        values = [a.value for a in answers]
        return np.asarray(values, dtype=np.float64)
