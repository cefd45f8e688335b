"""The actor as its own verifier: GUI-Shepherd's baseline for best-of-N (Sec. 5.4, Table 5:
"the actor model serves as its own verifier, using its internal logits to rank its own
candidate actions").

:class:`ActorVerifier` is a :class:`~gui_gym.models.prm.ProcessRewardModel` made of the policy's
own local causal LM, so :class:`~gui_gym.agents.BestOfNAgent`, ``PRMWrapper`` and the PRM
benchmarks take it where they take a trained PRM. Two ways to ask the actor (both ours; the
paper names only "its internal logits"):

* ``mode="logprob"``: the policy's mean per-token log-probability of writing the candidate
  (the completion its prompt format would write for that action, after the prompt it was
  acting on). Best-of-N ranks by it (:meth:`ActorVerifier.positive_logits`); ``score`` is its
  exponential, the geometric-mean token probability, in [0, 1].
* ``mode="judge"``: a yes/no self-judgement prompt written by us (:data:`SELF_JUDGE_PROMPT`):
  the actor is shown the goal, the screen, its earlier actions and the candidate, and the
  logit of its next token `` yes`` ranks (as GUI-Shepherd's PRM is ranked by its positive
  label's logit); ``score`` is the two-way softmax of the `` yes`` and `` no`` logits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gui_gym.agents.prompts import PromptFormat, PromptInput, get_prompt
from gui_gym.rewards.prm import PRMQuery

__all__ = ["ACTOR_VERIFIER_MODES", "SELF_JUDGE_PROMPT", "ActorVerifier"]

ACTOR_VERIFIER_MODES = ("logprob", "judge")

SELF_JUDGE_PROMPT = (
    "You are checking your own next action in a graphical user interface.\n"
    "Goal: {instruction}\n"
    "Your earlier actions:\n{history}\n"
    "Current screen, one element per line with its id:\n{screen}\n"
    "Proposed next action: {action} ({description})\n"
    "Does this action move the task toward the goal? Answer yes or no.\n"
    "Answer:"
)
"""The self-judgement prompt of ``mode="judge"`` (written by us); its fields are filled from
the :class:`~gui_gym.rewards.prm.PRMQuery`."""


class ActorVerifier:
    """The policy's own causal LM scoring candidate actions.

    Args:
        llm: The policy's :class:`~gui_gym.models.llm.TransformersLLM` (its model, tokenizer
            and prompt rendering; the chat template when it has one).
        prompt: The policy's prompt: a name of :data:`~gui_gym.agents.prompts.PROMPTS`, a
            :class:`~gui_gym.agents.prompts.PromptFormat`, or a ``str.format`` template with
            ``{instruction}``, ``{history}`` and ``{screen}`` (an
            :class:`~gui_gym.agents.LLMPolicy`'s ``prompt_template``, whose completions are
            ``<action>...</action>``). Only ``mode="logprob"`` uses it.
        mode: ``logprob`` or ``judge`` (see the module docstring).
        batch_size: Queries per forward pass.

    Raises:
        ValueError: for an unknown mode or prompt, or a tokenizer that cannot write the
            judge's `` yes``/`` no`` answers.
    """

    requires_env = False

    def __init__(
        self,
        llm: Any,
        prompt: str | PromptFormat = "default",
        *,
        mode: str = "logprob",
        batch_size: int = 8,
    ):
        if mode not in ACTOR_VERIFIER_MODES:
            raise ValueError(f"mode must be one of {', '.join(ACTOR_VERIFIER_MODES)}, got {mode!r}")
        for name in ("model", "tokenizer", "format_prompt"):
            if not hasattr(llm, name):
                raise TypeError(
                    f"the actor verifier scores with a local model: llm needs .{name} "
                    f"(a TransformersLLM), got {type(llm).__name__}"
                )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        self.llm = llm
        self.mode = mode
        self.batch_size = batch_size
        self.template: str | None = None
        self.format: PromptFormat | None = None
        if isinstance(prompt, str) and "{screen}" in prompt:
            self.template = prompt
        else:
            self.format = get_prompt(prompt)
        if mode == "judge":
            self.answer_ids = tuple(self._first_token(word) for word in (" yes", " no"))
        self.name = f"actor({mode})"

    def _first_token(self, word: str) -> int:
        tokenizer = self.llm.tokenizer
        ids = tokenizer.encode(word, add_special_tokens=False)
        if not ids or ids[0] == tokenizer.unk_token_id:
            raise ValueError(f"the policy's tokenizer cannot write {word.strip()!r}")
        return int(ids[0])

    # -------------------------------------------------------------------------- prompts

    def _history(self, query: PRMQuery) -> str:
        return "\n".join(f"- {h}" for h in query.history) or "- (none yet)"

    def _policy_prompt(self, query: PRMQuery) -> tuple[str, str]:
        """The text the policy saw and the completion it would write for the candidate."""
        if self.template is not None:
            prompt: Any = self.template.format(
                instruction=query.instruction, history=self._history(query), screen=query.screen
            )
            completion = f"<action>{query.action}</action>"
        else:
            assert self.format is not None
            prompt = self.format.build(
                PromptInput(
                    instruction=query.instruction,
                    screen=query.screen,
                    history=list(query.history),
                    step=query.step,
                )
            )
            completion = self.format.completion(None, query.action)
        return self.llm.format_prompt(prompt), completion

    def judge_prompt(self, query: PRMQuery) -> str:
        """The self-judgement text for ``query`` (``mode="judge"``)."""
        return self.llm.format_prompt(
            SELF_JUDGE_PROMPT.format(
                instruction=query.instruction,
                history=self._history(query),
                screen=query.screen,
                action=query.action,
                description=query.action_description or "no description",
            )
        )

    # -------------------------------------------------------------------------- scoring

    def _forward(self, rows: list[list[int]]) -> Any:
        """Logits of right-padded ``rows`` (no grad)."""
        torch = self.llm._torch
        tokenizer = self.llm.tokenizer
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[i, : len(row)] = 1
        with torch.no_grad():
            model = self.llm.model
            out = model(input_ids=ids.to(self.llm.device), attention_mask=mask.to(self.llm.device))
        return out.logits.float().cpu()

    def _mean_logprobs(self, queries: Sequence[PRMQuery]) -> np.ndarray:
        torch = self.llm._torch
        tokenizer = self.llm.tokenizer
        out: list[float] = []
        for start in range(0, len(queries), self.batch_size):
            rows, spans = [], []
            for query in queries[start : start + self.batch_size]:
                prompt, completion = self._policy_prompt(query)
                prompt_ids = tokenizer.encode(prompt, add_special_tokens=False)
                completion_ids = tokenizer.encode(completion, add_special_tokens=False)
                if not prompt_ids or not completion_ids:
                    raise ValueError(f"empty prompt or completion for action {query.action!r}")
                rows.append(prompt_ids + completion_ids)
                spans.append((len(prompt_ids), len(completion_ids)))
            logits = self._forward(rows)
            for i, (row, (begin, length)) in enumerate(zip(rows, spans)):
                # position p predicts token p + 1
                scores = torch.log_softmax(logits[i, begin - 1 : begin - 1 + length], dim=-1)
                target = torch.tensor(row[begin : begin + length])
                out.append(float(scores.gather(-1, target[:, None]).mean()))
        return np.asarray(out, dtype=np.float64)

    def _answer_logits(self, queries: Sequence[PRMQuery]) -> np.ndarray:
        tokenizer = self.llm.tokenizer
        out = []
        for start in range(0, len(queries), self.batch_size):
            rows = [
                tokenizer.encode(self.judge_prompt(q), add_special_tokens=False)
                for q in queries[start : start + self.batch_size]
            ]
            logits = self._forward(rows)
            for i, row in enumerate(rows):
                out.append(logits[i, len(row) - 1, list(self.answer_ids)].numpy())
        return np.asarray(out, dtype=np.float64).reshape(-1, 2)

    def positive_logits(
        self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None
    ) -> np.ndarray:
        """What best-of-N ranks by: the mean token log-probability (``logprob``) or the
        `` yes`` logit (``judge``)."""
        queries = list(queries)
        if not queries:
            return np.zeros(0)
        if self.mode == "logprob":
            return self._mean_logprobs(queries)
        return self._answer_logits(queries)[:, 0]

    def score(self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None) -> np.ndarray:
        """One score in [0, 1] per query: the geometric-mean token probability
        (``logprob``) or P(yes) of the two-way softmax (``judge``)."""
        queries = list(queries)
        if not queries:
            return np.zeros(0)
        if self.mode == "logprob":
            return np.exp(self._mean_logprobs(queries))
        logits = self._answer_logits(queries)
        return 1.0 / (1.0 + np.exp(logits[:, 1] - logits[:, 0]))
