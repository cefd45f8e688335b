"""Unit costs of SmolLM2-135M-Instruct on this project's 2-core CPU, for the cost plans of
``benchmarks/paper_comparisons.py`` and ``benchmarks/baselines.py`` (``--plan-only``,
``--budget-hours``).

Measured at 2 torch threads in fp32 (this machine is an AMD EPYC with AVX2 only: no native
bf16, so ``dtype="auto"`` is fp32 here), with ~700-900-token prompts, on a machine shared
with another session's jobs: every figure here is an estimate's input, not a measurement of
the run it sizes. Each run's own seconds are in its results JSON. The turn cost was measured
with 20 episodes in flight; ``baselines.py`` plays 16 at once (MiniWoB++ 4, whose turns may
cost more).
"""

from __future__ import annotations

SFT_SECONDS_PER_EXAMPLE = 9.0
"""Wall seconds per SFT example of a ``--model`` start (LoRA, batch 4, prompts of ~700-900
SmolLM2 tokens, 2 threads, fp32): an SFT step of 4 examples took about 0.6 minutes
(docs/real_model.md, "Cost on this machine"; docs/baselines.md sizes its rows with it)."""

EVAL_SECONDS_PER_TURN = 3.0
"""Wall seconds per greedy turn: 20 WikiHow test episodes of the SFT'd SmolLM2 at 4 steps took
213 s at 2 threads, about 70 turns (docs/real_model.md). Also used for the learned ORM's sampled
rollouts and for SOP's one generation per recorded step."""

RL_SECONDS_PER_EPISODE_STEP = 6 * 60 / (8 * 4)
"""Wall seconds of RL training per episode and step of its budget: a GRPO iteration of 8
WikiHow episodes at 4 steps (28 turns, 4 optimizer steps) took about 6 minutes at 2 threads
(docs/real_model.md): sampling, scoring and update together."""

PROMPT_SCALE = {
    "GuiGym/AndroidWorld-v0": 1.5,
    "GuiGym/ALFWorld-v0": 1.4,
    "GuiGym/WebShop-v0": 0.9,
    "GuiGym/MiniWoB-v0": 0.6,
}
"""Cost of a turn (and of an SFT example) relative to WikiHow's (1.0 for envs not listed), from
the default prompt's length (history 8) in SmolLM2 tokens (its chat template) at the 90th
percentile over expert steps: a batch is left-padded to its longest prompt, so the upper
tail, not the median, sets its cost.

For ``paper_comparisons.py`` (the oracle steps of each env's first 16 short train tasks):
WikiHow 891, AndroidWorld 1,371, ALFWorld 1,233, WebShop 789 (medians 797, 730, 719, 582).

For ``baselines.py`` (``scripts/measure_plan_inputs.py``: the expert steps of the first 120
train episodes in recording order, ALFWorld's first 60, and of the first 50 test episodes;
90th percentile / median / longest): WikiHow 894 / 794 / 929 and 896 / 809 / 919;
AndroidWorld 871 / 549 / 3,757 and 777 / 541 / 2,120; WebShop (10,000-product catalog)
800 / 609 / 853 and 803 / 616 / 843 (the first 20 test episodes: 805 / 604); ALFWorld
1,090 / 659 / 1,438 and 876 / 705 / 1,099; MiniWoB++ (the 12 tasks) 492 / 327 / 1,159 and
484 / 320 / 1,161 (the first 20: 484 / 326; email-inbox is the long tail).

So WebShop is 0.9 (its spread is narrow: the longest prompt is within 7% of the 90th
percentile) and MiniWoB++ 0.6 (0.55 at the 90th percentile, rounded up for its long tail
with 4 episodes in flight). AndroidWorld's 1.5 and ALFWorld's 1.4 stay for both scripts:
on the baselines' episodes their 90th percentiles are lower (0.87-1.22), but their long tails
(AndroidWorld to 3,757 tokens) pad whole batches, so the estimate is on the high side there,
not far off."""

ORACLE_STEPS = {
    "GuiGym/WikiHow-v0": 2.94,
    "GuiGym/AndroidWorld-v0": 2.56,
    "GuiGym/ALFWorld-v0": 4.88,
    "GuiGym/WebShop-v0": 5.69,
}
"""Mean oracle steps of a short train task (the same 16 tasks per env): SFT examples per task
and SOP turns per recorded trajectory."""

UNIT_NEW_TOKENS = 32
"""The ``max_new_tokens`` the turn and RL unit costs above were measured at."""

DECODE_SHARE = 0.25
"""Share of a turn's cost that is token-by-token decoding at :data:`UNIT_NEW_TOKENS`; the rest
is the prompt's forward pass, which does not depend on ``max_new_tokens``. From
``benchmarks/reference/bench_smollm2.json`` (1 thread, fp32): a decoded token of a batch of 8
to 32 costs 0.12-0.18 s per sequence, a prompt token about 0.03 s (a training step's forward
and backward over 64 tokens, 5.3 s, taken as three forwards), so a ~800-token prompt and 32
new tokens is about 15% decoding; 0.25 leaves room for the zero-shot model, whose invalid
answers run to the token limit every turn. An assumption, not a measurement of a turn."""


def token_factor(max_new_tokens: int) -> float:
    """Cost of a turn at ``max_new_tokens`` relative to one at :data:`UNIT_NEW_TOKENS`
    (:data:`DECODE_SHARE` scales with the tokens, the rest stays): 1.125 at 48."""
    return 1.0 + DECODE_SHARE * (max_new_tokens / UNIT_NEW_TOKENS - 1.0)


RECORDED_STEPS: dict[str, dict[int, float]] = {
    "GuiGym/WikiHow-v0": {4: 2.33, 5: 2.91, 6: 3.11},
    "GuiGym/AndroidWorld-v0": {
        **{4: 1.0, 5: 1.92, 6: 2.27, 7: 2.85, 8: 3.12, 9: 3.94, 10: 4.28, 11: 4.92, 12: 5.12},
        **{13: 5.55, 14: 5.78, 15: 5.78, 16: 6.05, 17: 6.05, 18: 6.5, 19: 6.66, 20: 7.16},
    },
    "GuiGym/WebShop-v0": {4: 0.31, 5: 2.1, 6: 3.8, 7: 5.08, 8: 5.42, 9: 5.87},
    "GuiGym/ALFWorld-v0": {4: 0.98, 5: 1.48, 6: 2.98, 7: 4.38, 8: 5.45, 9: 5.75, 10: 5.92},
    "GuiGym/MiniWoB-v0": {4: 2.06, 5: 2.18, 6: 2.33},
}
"""SFT examples per recorded expert episode of ``benchmarks/baselines.py`` at a step budget:
the expert's steps on the train split in the order the script records its SFT data (task
``i`` of the split, seed ``i``; WebShop's 10,000-product catalog, the 12 MiniWoB++ tasks),
counting only the episodes it finishes within the budget (SFT learns from successful episodes
only), over the first 120 episodes (ALFWorld: 60). Each table ends where every episode fits:
the mean expert steps per episode, WikiHow 3.11, AndroidWorld 7.16 (116 templates in the
120), WebShop 5.87, ALFWorld 5.92, MiniWoB++ 2.33 (longest 6, 20, 9, 10, 6).
``scripts/measure_plan_inputs.py`` measured them (the expert, no model)."""


def recorded_steps(env_id: str, budget: int) -> float:
    """:data:`RECORDED_STEPS` at ``budget``: the figure at the smallest measured budget at or
    above it (an upper bound: fewer episodes finish within less), the last one beyond the
    table; 6 for an env not measured."""
    table = RECORDED_STEPS.get(env_id)
    if not table:
        return 6.0
    above = [b for b in table if b >= budget]
    return table[min(above)] if above else table[max(table)]


ORACLE_CEILING: dict[str, dict[int, float]] = {
    "GuiGym/WikiHow-v0": {4: 0.86, 5: 0.96, 6: 0.98, 7: 1.0},
    "GuiGym/AndroidWorld-v0": {
        **{4: 0.38, 5: 0.52, 6: 0.56, 7: 0.64, 8: 0.66, 9: 0.78, 10: 0.8, 11: 0.88, 12: 0.88},
        **{13: 0.94, 14: 0.96, 15: 0.96, 16: 0.96, 17: 0.96, 18: 1.0},
    },
    "GuiGym/WebShop-v0": {4: 0.12, 5: 0.36, 6: 0.6, 7: 0.9, 8: 0.98, 9: 0.98, 10: 1.0},
    "GuiGym/ALFWorld-v0": {4: 0.24, 5: 0.36, 6: 0.6, 7: 0.84, 8: 0.9, 9: 1.0},
    "GuiGym/MiniWoB-v0": {3: 0.88, 4: 1.0},
}
"""Share of the first 50 test episodes of ``benchmarks/baselines.py`` (episode ``i``: the
split's task ``i``, seed ``10_000 + i``; the SmolLM2 rows' default ``--llm-episodes``) that
the expert finishes within a step budget: the ceiling of every row at that budget. Each
table ends where the expert finishes all 50 (it does at every env's own budget). On the first
20 episodes: WikiHow 19/20 at 4, 20/20 from 5; AndroidWorld 6, 7, 8, 10, 10, 14, 15, 17, 17
of 20 at 4-12, 20/20 from 13; WebShop 1, 6, 13, 19 of 20 at 4-7, 20/20 from 8; ALFWorld 6,
8, 11, 17, 18 of 20 at 4-8, 20/20 from 9; MiniWoB++ 17/20 at 3, 20/20 from 4.
``scripts/measure_plan_inputs.py`` measured them, played at the env's budget and cut at
each shorter one (played directly at 6 steps, every env gave the same successes)."""


def oracle_ceiling(env_id: str, budget: int) -> float | None:
    """:data:`ORACLE_CEILING` at ``budget``: 1.0 beyond its table, None below it or for an
    env not measured."""
    table = ORACLE_CEILING.get(env_id)
    if not table or budget < min(table):
        return None
    return table.get(budget, 1.0 if budget > max(table) else None)


def check_budget(hours: float, budget: float | None, cut: str) -> None:
    """Refuse a plan whose estimated wall ``hours`` exceed ``budget`` (``--budget-hours``;
    None: no budget).

    Raises:
        SystemExit: one line with the estimate, the budget and ``cut``, the options that cut
            the plan.
    """
    if budget is not None and hours > budget:
        raise SystemExit(
            f"the plan needs an estimated {hours:.2f} h, over --budget-hours {budget:g}: {cut}"
        )
