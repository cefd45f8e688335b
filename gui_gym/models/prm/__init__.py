"""Process reward models (GUI-Shepherd): scorers of one step ``(instruction, state, action)``.

Every scorer implements :class:`ProcessRewardModel`: ``score(queries, envs=None)`` returns,
for each :class:`~gui_gym.rewards.prm.PRMQuery`, the probability in [0, 1] that its action
is correct. The package, one scorer a module:

* :mod:`~gui_gym.models.prm.protocol`: the protocol, its errors and warning, and
  :func:`verification_scores` (what best-of-N ranks by);
* :mod:`~gui_gym.models.prm.rule`: :class:`RulePRM`, a reference judge from the task's
  expert and env milestones (it needs the env in the state before the action);
* :mod:`~gui_gym.models.prm.transformers_prm`: :class:`TransformersPRM`, a causal LM read
  at the label position (Sec. 3, Eq. 2), with the tiny-model builders tests use;
* :mod:`~gui_gym.models.prm.vision_prm`: :class:`VisionPRM`, the same read from a
  vision-language model given the screenshot (GUI-Shepherd's Qwen2.5-VL PRM);
* :mod:`~gui_gym.models.prm.server`: :class:`OpenAICompatPRM`, any OpenAI-compatible
  server (vLLM, ...), from the label tokens' log-probabilities (App. B.2);
* :mod:`~gui_gym.models.prm.llm`: :class:`LLMStepJudgePRM`, ADMIRE's LLM step judge
  (yes/no) as a PRM;
* :mod:`~gui_gym.models.prm.checkpoint`: :func:`read_prm_config`, the check of a checkpoint
  folder's ``prm.json`` that the two transformers PRMs share.

torch, transformers and openai are imported inside the classes that need them.
"""

from gui_gym.models.prm.llm import (
    ADMIRE_PROCESS_REWARD_WEIGHT,
    STEP_JUDGE_PROMPT,
    LLMStepJudgePRM,
    parse_step_verdict,
)
from gui_gym.models.prm.protocol import (
    PRMOutputError,
    PRMResponseWarning,
    ProcessRewardModel,
    verification_scores,
)
from gui_gym.models.prm.rule import RulePRM
from gui_gym.models.prm.server import OpenAICompatPRM
from gui_gym.models.prm.transformers_prm import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_VERSION,
    TransformersPRM,
    build_tokenizer,
    tiny_causal_lm,
)
from gui_gym.models.prm.vision_prm import VisionPRM

__all__ = [
    "ADMIRE_PROCESS_REWARD_WEIGHT",
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "STEP_JUDGE_PROMPT",
    "LLMStepJudgePRM",
    "OpenAICompatPRM",
    "PRMOutputError",
    "PRMResponseWarning",
    "ProcessRewardModel",
    "RulePRM",
    "TransformersPRM",
    "VisionPRM",
    "build_tokenizer",
    "parse_step_verdict",
    "tiny_causal_lm",
    "verification_scores",
]
