"""Progress models (ProgRM): ``Prog([g, s_t])`` in ``[0, 1]``, how far an episode got towards
its goal, which ``ProgressRewardWrapper`` turns into a reward.

* :mod:`~gui_gym.models.progress.protocol`: :class:`ProgressQuery` (goal, actions so far,
  current screen), the :class:`ProgressModel` protocol (``predict(queries) -> values``),
  :func:`format_state` (the text models read) and :func:`trajectory_queries`;
* :mod:`~gui_gym.models.progress.rule`: :class:`MilestoneProgress`, the fraction of the env's
  milestones reached (no model; ProgRM-Env's ground truth);
* :mod:`~gui_gym.models.progress.progrm`: :class:`ProgRM`, the learned model (backbone, MLP
  head, sigmoid; also the ORM baseline) with its checkpoint format and tiny builders (its
  trainer is :mod:`gui_gym.train.progress_model`);
* :mod:`~gui_gym.models.progress.llm`: :class:`LLMProgressJudge`, the paper's prompted
  progress and outcome judges over any :class:`~gui_gym.models.llm.LLM` (App. G).

Every public name is importable from here; torch and transformers are imported only inside
:class:`ProgRM`.
"""

from gui_gym.models.progress.llm import (
    PROMPTS,
    LLMProgressJudge,
    parse_progress,
    progress_messages,
)
from gui_gym.models.progress.progrm import KINDS, ProgRM, build_word_tokenizer, tiny_backbone_config
from gui_gym.models.progress.protocol import (
    ProgressModel,
    ProgressQuery,
    format_state,
    trajectory_queries,
)
from gui_gym.models.progress.rule import MilestoneProgress

__all__ = [
    "KINDS",
    "PROMPTS",
    "LLMProgressJudge",
    "MilestoneProgress",
    "ProgRM",
    "ProgressModel",
    "ProgressQuery",
    "build_word_tokenizer",
    "format_state",
    "parse_progress",
    "progress_messages",
    "tiny_backbone_config",
    "trajectory_queries",
]
