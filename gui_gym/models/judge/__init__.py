"""ProRe, the proactive outcome judge (seed 004): probe the final state of an episode, turn
what the policy and the probes saw into claims, and judge from the chain of claims.

The package, by job:

* :mod:`~gui_gym.models.judge.types`: traces, probe plans, claims, verdicts, reports;
* :mod:`~gui_gym.models.judge.session`: the policy's trace recorder and the evaluator's
  :class:`ProbeSession` on a fork of the final state;
* :mod:`~gui_gym.models.judge.protocols`: the five component protocols (reasoner,
  evaluator, claim extractor, claim filter, judge) and the raw and whole-episode judges;
* :mod:`~gui_gym.models.judge.pipeline`: :class:`ProReJudge`, which runs them;
* ``rule_*``: model-free components (:mod:`~gui_gym.models.judge.rule_reading` reads
  instructions and screens, :mod:`~gui_gym.models.judge.rule_probing` schedules and carries
  out probes, :mod:`~gui_gym.models.judge.rule_claims` extracts and filters claims,
  :mod:`~gui_gym.models.judge.rule_judges` judges);
* :mod:`~gui_gym.models.judge.llm` and :mod:`~gui_gym.models.judge.llm_parsing`: the LLM
  components, their prompts and the strict parsers of their replies;
  :mod:`~gui_gym.models.judge.llm_baselines`: the LLM judges ProRe is compared with (the
  raw-observation ablation judge, the DigiRL- and WebRL-style trajectory-only judges).

Every public name is importable from here (``from gui_gym.models.judge import ProReJudge,
RuleJudge, LLMJudge``).
"""

from gui_gym.models.judge import (
    llm,
    llm_baselines,
    llm_parsing,
    pipeline,
    protocols,
    rule_claims,
    rule_judges,
    rule_probing,
    session,
    types,
)
from gui_gym.models.judge.llm import *  # noqa: F403
from gui_gym.models.judge.llm_baselines import *  # noqa: F403
from gui_gym.models.judge.llm_parsing import *  # noqa: F403
from gui_gym.models.judge.pipeline import *  # noqa: F403
from gui_gym.models.judge.protocols import *  # noqa: F403
from gui_gym.models.judge.rule_claims import *  # noqa: F403
from gui_gym.models.judge.rule_judges import *  # noqa: F403
from gui_gym.models.judge.rule_probing import *  # noqa: F403
from gui_gym.models.judge.rule_reading import TaskAnalysis, analyse_task, normalize, text_contains
from gui_gym.models.judge.session import *  # noqa: F403
from gui_gym.models.judge.types import *  # noqa: F403

__all__ = [
    *types.__all__,
    *session.__all__,
    *protocols.__all__,
    *pipeline.__all__,
    *rule_probing.__all__,
    *rule_claims.__all__,
    *rule_judges.__all__,
    *llm_parsing.__all__,
    *llm.__all__,
    *llm_baselines.__all__,
    "TaskAnalysis",
    "analyse_task",
    "normalize",
    "text_contains",
]
