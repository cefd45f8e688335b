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
  components, their prompts and the strict parsers of their replies.

Every public name is importable from here (``from gui_gym.models.judge import ProReJudge,
RuleJudge, LLMJudge``).
"""

from gui_gym.models.judge.llm import (
    FILTER_CRITERIA,
    TRAJECTORY_STYLES,
    LLMClaimExtractor,
    LLMClaimFilter,
    LLMEvaluator,
    LLMJudge,
    LLMRawJudge,
    LLMReasoner,
    LLMTrajectoryJudge,
    TextGenerator,
    llm_components,
)
from gui_gym.models.judge.llm_parsing import (
    parse_claims,
    parse_decisions,
    parse_goal,
    parse_plan,
    parse_status,
    parse_yes_no,
)
from gui_gym.models.judge.pipeline import (
    ProReJudge,
)
from gui_gym.models.judge.protocols import (
    ClaimExtractor,
    ClaimFilter,
    ClaimJudge,
    EpisodeJudge,
    ProbeEvaluator,
    ProbeReasoner,
    RawObservationJudge,
)
from gui_gym.models.judge.rule_claims import (
    RuleClaimExtractor,
    RuleClaimFilter,
)
from gui_gym.models.judge.rule_judges import (
    RuleJudge,
    RuleRawJudge,
    RuleTrajectoryJudge,
    scripted_components,
)
from gui_gym.models.judge.rule_probing import (
    RULE_PROMPT_GOAL,
    RulePromptReasoner,
    ScriptedEvaluator,
    ScriptedReasoner,
    goal_app,
    policy_apps,
    rule_expectation,
)
from gui_gym.models.judge.rule_reading import (
    TaskAnalysis,
    analyse_task,
    normalize,
    text_contains,
)
from gui_gym.models.judge.session import (
    PolicyTraceRecorder,
    ProbeSession,
)
from gui_gym.models.judge.types import (
    AGGREGATIONS,
    MAX_CLAIMS,
    MAX_GOAL_WORDS,
    MAX_SUB_GOALS,
    PROBE_MODES,
    RELATIONS,
    Claim,
    ClaimRelation,
    ComponentError,
    FilterDecision,
    JudgeReport,
    ProbeBudgetExhausted,
    ProbePlan,
    ProbeRecord,
    Trace,
    TraceStep,
    Verdict,
    is_home_screen,
    kept_claims,
)

__all__ = [
    "AGGREGATIONS",
    "FILTER_CRITERIA",
    "MAX_CLAIMS",
    "MAX_GOAL_WORDS",
    "MAX_SUB_GOALS",
    "PROBE_MODES",
    "RELATIONS",
    "RULE_PROMPT_GOAL",
    "TRAJECTORY_STYLES",
    "Claim",
    "ClaimExtractor",
    "ClaimFilter",
    "ClaimJudge",
    "ClaimRelation",
    "ComponentError",
    "EpisodeJudge",
    "FilterDecision",
    "JudgeReport",
    "LLMClaimExtractor",
    "LLMClaimFilter",
    "LLMEvaluator",
    "LLMJudge",
    "LLMRawJudge",
    "LLMReasoner",
    "LLMTrajectoryJudge",
    "PolicyTraceRecorder",
    "ProReJudge",
    "ProbeBudgetExhausted",
    "ProbeEvaluator",
    "ProbePlan",
    "ProbeReasoner",
    "ProbeRecord",
    "ProbeSession",
    "RawObservationJudge",
    "RuleClaimExtractor",
    "RuleClaimFilter",
    "RuleJudge",
    "RulePromptReasoner",
    "RuleRawJudge",
    "RuleTrajectoryJudge",
    "ScriptedEvaluator",
    "ScriptedReasoner",
    "TaskAnalysis",
    "TextGenerator",
    "Trace",
    "TraceStep",
    "Verdict",
    "analyse_task",
    "goal_app",
    "is_home_screen",
    "kept_claims",
    "llm_components",
    "normalize",
    "parse_claims",
    "parse_decisions",
    "parse_goal",
    "parse_plan",
    "parse_status",
    "parse_yes_no",
    "policy_apps",
    "rule_expectation",
    "scripted_components",
    "text_contains",
]
