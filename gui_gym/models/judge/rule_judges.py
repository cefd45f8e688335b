"""Model-free judges: the chain-of-claims judge (ProRe Eq. 4), the raw-observation
ablation (Table 4) and the trajectory-only baselines (Table 2), and
:func:`scripted_components`, the whole model-free pipeline.

The model-free components need no model, run in microseconds, and are deterministic, so
tests and the benchmark (``benchmarks/judge_accuracy.py``) can measure what probing adds
over judging the trajectory alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gui_gym.core.actions import ActionType
from gui_gym.core.ui import UITree
from gui_gym.models.judge.rule_claims import RuleClaimExtractor, RuleClaimFilter
from gui_gym.models.judge.rule_probing import ScriptedEvaluator, ScriptedReasoner
from gui_gym.models.judge.rule_reading import (
    DELETING_WORDS,
    TaskAnalysis,
    analyse_task,
    format_values,
    is_displayed,
    last_clause,
    launcher_labels,
    normalize,
    quoted_strings,
    read_toggle,
    text_contains,
    word_stems,
)
from gui_gym.models.judge.types import (
    Claim,
    ClaimRelation,
    JudgeReport,
    Trace,
    Verdict,
)

__all__ = [
    "RuleJudge",
    "RuleRawJudge",
    "RuleTrajectoryJudge",
    "scripted_components",
]


# ------------------------------------------------------------------------------- judge


def _values_of(claims: Sequence[Claim], kind: str) -> list[tuple[int, str]]:
    return [(i, v) for i, c in enumerate(claims) if c.kind == kind for v in c.values]


def _has(pairs: list[tuple[int, str]], target: str) -> int | None:
    for i, v in pairs:
        if text_contains(v, target) or text_contains(target, v):
            return i
    return None


def _covered(pairs: list[tuple[int, str]], target: str) -> int | None:
    """The claim whose value covers ``target``: contains it, or is contained in it while
    carrying at least half its words (typing "block" does not cover "How to Block a Phone
    Number"; typing "320.10" covers "$320.1")."""
    words = len(normalize(target).split())
    for i, v in pairs:
        if text_contains(v, target):
            return i
        if text_contains(target, v) and 2 * len(normalize(v).split()) >= words:
            return i
    return None


def _answer_items(answer: str) -> list[str]:
    return [p.strip() for p in re.split(r",|\band\b", answer) if normalize(p.strip())]


class RuleJudge:
    """Chain-of-claims judgment by rules (ProRe Eq. 4, App. E.3 Stage 2).

    Each string the instruction requires is looked up in the evaluator's claims first
    (``shown`` confirms, ``absent`` or ``draft`` contradicts) and, when no evaluator claim
    addresses it, in the policy's (typed, or displayed on the last screens). Then:

    * a benchmark that scores unfinished episodes as failures fails a policy that did not
      declare completion;
    * questions need an answer; a probe's count or reading must agree with it;
    * deletions need the strings gone, moves need them in the destination, settings the
      requested state, drafts the strings typed but not stored;
    * everything else needs every required string confirmed or, unaddressed by the probe,
      covered by the policy; a contradiction fails it.

    Without evaluator claims this is the trajectory-only judge.
    """

    def judge(
        self,
        instruction: str,
        policy_claims: Sequence[Claim],
        evaluator_claims: Sequence[Claim],
        policy: Trace,
        expectation: str = "",
    ) -> Verdict:
        """The verdict. ``expectation`` is accepted for the protocol (Eq. 4) and not read:
        the rules derive the same expectations from the instruction (:func:`analyse_task`,
        :func:`rule_expectation`)."""
        a = analyse_task(instruction)
        relations: list[ClaimRelation] = []
        notes: list[str] = []
        kinds = {c.kind for c in policy_claims}
        ended = next(
            (
                i
                for i, c in enumerate(policy_claims)
                if c.kind in ("declared_done", "answered", "unfinished")
            ),
            None,
        )
        if policy.completion_required and ("unfinished" in kinds or ended is None):
            return self._verdict(
                False,
                [
                    "the policy did not declare completion, and this benchmark scores that as a failure"
                ],
                relations,
            )

        shown = _values_of(evaluator_claims, "shown")
        seen = _values_of(evaluator_claims, "seen")
        absent = _values_of(evaluator_claims, "absent")
        drafts = _values_of(evaluator_claims, "draft")
        final_shown = _values_of(policy_claims, "final_shown")
        final_draft = _values_of(policy_claims, "final_draft")
        final_absent = _values_of(policy_claims, "final_absent")
        entered = _values_of(policy_claims, "entered")
        committed = _values_of(policy_claims, "committed")

        def link(
            policy_index: int | None, evaluator_index: int | None, relation: str, note: str
        ) -> None:
            if policy_index is not None:
                relations.append(ClaimRelation(policy_index, evaluator_index, relation, note))

        if a.intent == "answer":
            answered = next((c for c in policy_claims if c.kind == "answered"), None)
            if answered is None:
                return self._verdict(
                    False, ["the task asks a question and the policy gave no answer"], relations
                )
            p_index = policy_claims.index(answered)
            answer = answered.values[0] if answered.values else ""
            counts = [(i, c) for i, c in enumerate(evaluator_claims) if c.kind == "count"]
            if counts and a.count_of:
                i, c = counts[0]
                number = re.findall(r"\d+", normalize(answer))
                ok = bool(number) and number[0] == c.values[0]
                link(
                    p_index,
                    i,
                    "confirmed" if ok else "contradicted",
                    f"probe counted {c.values[0]}",
                )
                return self._verdict(
                    ok,
                    [f"the probe counted {c.values[0]}, the policy answered {answer!r}"],
                    relations,
                )
            reads = [(i, c) for i, c in enumerate(evaluator_claims) if c.kind == "read"]
            items = _answer_items(answer)
            if reads and items:
                i, c = reads[-1]
                text = " | ".join(c.values)
                if all(text_contains(text, item) for item in items):
                    link(p_index, i, "confirmed", "the probe read the answer")
                    return self._verdict(
                        True, ["every part of the answer is on the probe's screens"], relations
                    )
                # Not finding the answer's words is weak evidence (answers are reformatted:
                # "October 21 2023 02:45" for "Sat, Oct 21 2023 · 02:45"), so it does not
                # contradict; the policy's own screens decide.
                link(p_index, i, "unsupported", "the probe's reading does not show it verbatim")
            seen = " | ".join(s.all_text for s in policy.screens)
            ok = bool(items) and all(text_contains(seen, item) for item in items)
            if not reads:
                link(p_index, None, "unsupported", "no probe reading")
            return self._verdict(
                ok,
                [
                    "the answer appears on the policy's screens"
                    if ok
                    else "the answer does not appear on the policy's screens"
                ],
                relations,
            )

        if a.intent == "toggle":
            ok_all = True
            for name, state in a.toggles:
                probe_state = _toggle_state(evaluator_claims, name)
                policy_state = _toggle_state(policy_claims, name)
                got = probe_state if probe_state is not None else policy_state
                if got is None:
                    notes.append(f"nothing shows the {name} state")
                    ok_all = False
                elif got != state:
                    notes.append(f"{name} is {got}, the task wants {state}")
                    ok_all = False
                else:
                    notes.append(
                        f"{name} is {state}" + (" (probed)" if probe_state is not None else "")
                    )
            return self._verdict(ok_all, notes, relations)

        deleting = [(i, v) for i, v in committed if set(normalize(v).split()) & DELETING_WORDS]
        if a.intent == "delete":
            if not a.targets:
                ok = bool(deleting)
                return self._verdict(
                    ok,
                    [
                        "no named item to check; "
                        + (
                            "the policy tapped a deleting control"
                            if ok
                            else "the policy never tapped a deleting control"
                        )
                    ],
                    relations,
                )
            ok_all = True
            for t in a.targets:
                e_shown, e_absent = _has(shown + seen, t), _has(absent, t)
                if e_shown is not None:
                    notes.append(f"{t!r} still exists (probe)")
                    link(ended, e_shown, "contradicted", f"{t!r} still exists")
                    ok_all = False
                elif e_absent is not None:
                    notes.append(f"{t!r} is gone (probe)")
                    link(ended, e_absent, "confirmed", f"{t!r} is gone")
                elif _has(final_absent, t) is not None and deleting:
                    notes.append(f"{t!r} is gone from the last screen after a deleting tap")
                else:
                    notes.append(f"nothing shows {t!r} was deleted")
                    ok_all = False
            return self._verdict(ok_all, notes, relations)

        if a.intent == "draft":
            ok_all = True
            for t in a.targets[:2]:
                if _has(shown, t) is not None:
                    notes.append(f"{t!r} was saved (probe)")
                    ok_all = False
                elif _has(final_draft, t) is None:
                    notes.append(f"{t!r} is not in the form on the last screen")
                    ok_all = False
            return self._verdict(
                ok_all, notes or ["the form holds the values and nothing was saved"], relations
            )

        if a.intent == "move" and a.targets:
            # The probe looked in the destination (the goal names it): finding the item there
            # settles it, not finding it refutes it; otherwise the policy's last screen and a
            # moving tap decide.
            t = a.targets[0]
            e_shown, e_absent = _has(shown, t), _has(absent, t)
            if e_shown is not None:
                link(ended, e_shown, "confirmed", f"{t!r} is in {a.destination}")
                return self._verdict(True, [f"{t!r} found in {a.destination} (probe)"], relations)
            if e_absent is not None:
                link(ended, e_absent, "contradicted", f"{t!r} is not in {a.destination}")
                return self._verdict(False, [f"{t!r} not in {a.destination} (probe)"], relations)
            moved = any("move" in normalize(v).split() for _, v in committed)
            ok = moved and _has(final_shown, t) is not None
            return self._verdict(
                ok, [f"moving tap: {moved}; {t!r} on the last screen: {ok}"], relations
            )

        ok_all = True
        by_policy = 0
        for t in a.targets:
            e_shown, e_absent, e_draft = _has(shown, t), _has(absent, t), _has(drafts, t)
            p_cover = _covered(entered, t)
            p_cover = p_cover if p_cover is not None else _has(final_shown, t)
            p_index = _policy_claim_index(policy_claims, t)
            by_policy += p_cover is not None
            e_seen = _has(seen, t)
            if e_shown is None and e_seen is not None and p_cover is not None:
                e_shown = e_seen  # found while browsing: it confirms what the policy claims
            if (
                e_absent is not None
                and e_shown is not None
                and evaluator_claims[e_absent].source != evaluator_claims[e_shown].source
            ):
                # A joint judgment over several probes: one found it stored, another looked
                # elsewhere. Different views of the same state are complementary, not a
                # contradiction (App. E.3 Stage 2); what was found stored decides.
                e_absent = None
            if e_absent is not None or (e_draft is not None and e_shown is None):
                why = "only in an unsaved field" if e_absent is None else "not found"
                notes.append(f"{t!r} {why} (probe)")
                link(p_index, e_absent if e_absent is not None else e_draft, "contradicted", t)
                ok_all = False
            elif e_shown is not None:
                notes.append(f"{t!r} confirmed by the probe")
                # found but never claimed by the policy: it may have been there all along
                relation = "confirmed" if p_cover is not None else "complementary"
                link(p_index, e_shown, relation, t)
            elif p_cover is not None:
                notes.append(f"{t!r} covered by the policy's claims only")
                link(p_index, None, "unsupported", t)
            elif _has(final_draft, t) is not None:
                notes.append(f"{t!r} only typed into a field")
                ok_all = False
            else:
                notes.append(f"nothing shows {t!r}")
                ok_all = False
        if a.targets and ok_all and by_policy == 0:
            # Everything required exists, but the policy's claims touch none of it: the probe
            # may just have found what was there before the policy started.
            notes.append("nothing the policy did produced any of the required strings")
            ok_all = False
        if not a.targets:
            ok_all = self._keywords_met(a, policy, evaluator_claims, notes)
        elif (
            ok_all
            and not launcher_labels(policy)
            and not any(
                s.valid and (p := s.parsed) is not None and p.type is ActionType.OPEN_APP
                for s in policy.steps
            )
        ):
            # A single-app navigation task (no launcher): the strings exist regardless of
            # what the policy did, so the task's last step must show in its last moves too.
            ok_all = self._keywords_met(a, policy, evaluator_claims, notes)
        return self._verdict(ok_all, notes, relations)

    @staticmethod
    def _keywords_met(
        a: TaskAnalysis, policy: Trace, evaluator_claims: Sequence[Claim], notes: list[str]
    ) -> bool:
        """Without strings to check, the last clause's words must show on the last screen or
        in the policy's last actions."""
        if not a.keywords:
            notes.append("nothing specific to check; the policy's report is taken")
            return True
        evidence = (
            policy.screens[-1].all_text
            + " "
            + " ".join(s.target + " " + s.description for s in policy.steps[-2:])
        )
        named = quoted_strings(last_clause(policy.goal))
        if named and all(is_displayed(policy.screens[-1], q) for q in named):
            notes.append(
                f"the last screen shows {format_values(named)}, which the task's last step names"
            )
            return True
        found = [k for k in a.keywords if k in word_stems(evidence)]
        ok = 2 * len(found) >= len(a.keywords)
        notes.append(
            f"last-clause words on the last screen or actions: {found} of {list(a.keywords)}"
        )
        return ok

    @staticmethod
    def _verdict(ok: bool, notes: list[str], relations: list[ClaimRelation]) -> Verdict:
        return Verdict("success" if ok else "failure", "; ".join(notes), tuple(relations))


def _toggle_state(claims: Sequence[Claim], name: str) -> str | None:
    """The state (``on``, ``off``, ...) the first ``toggle`` claim gives setting ``name``."""
    return next(
        (
            v.partition("=")[2]
            for c in claims
            if c.kind == "toggle"
            for v in c.values
            if v.startswith(name + "=")
        ),
        None,
    )


def _policy_claim_index(claims: Sequence[Claim], target: str) -> int | None:
    for i, c in enumerate(claims):
        if any(text_contains(v, target) or text_contains(target, v) for v in c.values):
            return i
    return None


# ------------------------------------------------ raw-observation and trajectory judges


def _outcome_from_screens(
    instruction: str,
    screens: Sequence[UITree],
    answer: str | None,
    typed: str = "",
) -> tuple[bool, str]:
    """Success by reading screens as they are, without claims: the task's strings shown
    (gone, for deletions), the switches in the asked state, a question's answer on some
    screen. ``typed``: text the agent typed, counted as covering a string (WebRL's judge
    reads the action history). Later screens override earlier ones for switches."""
    a = analyse_task(instruction)
    text = " | ".join(e.label for s in screens for e in s.elements if e.label and not e.editable)
    if a.intent == "answer":
        if answer is None:
            return False, "no answer was given"
        items = _answer_items(answer)
        ok = bool(items) and all(text_contains(text, item) for item in items)
        return ok, f"the answer {'is' if ok else 'is not'} on the screens"
    if a.intent == "toggle":
        notes, ok = [], True
        for name, state in a.toggles:
            read = next((r for s in reversed(screens) if (r := read_toggle(s, name))), None)
            ok = ok and read == state
            notes.append(f"{name}: {read or 'not shown'}")
        return ok, "; ".join(notes)
    if not a.targets:
        keywords = set(a.keywords)
        found = keywords & word_stems(screens[-1].all_text if screens else "")
        ok = not keywords or 2 * len(found) >= len(keywords)
        return ok, f"last-clause words on the last screen: {sorted(found)} of {sorted(keywords)}"
    if a.intent == "delete":
        still = [t for t in a.targets if text_contains(text, t)]
        return not still, f"still shown: {format_values(still)}" if still else "none of them shown"
    missing = [t for t in a.targets if not (text_contains(text, t) or text_contains(typed, t))]
    return not missing, f"not shown: {format_values(missing)}" if missing else "every string shown"


class RuleRawJudge:
    """ProRe's ablation without chain-of-claims (Table 4), by rules: the verdict from the
    raw screens of the policy's last state and of every probe, with none of the claims'
    care (which screens count as stored state, what the evaluator changed itself). A
    :class:`~gui_gym.models.judge.RawObservationJudge` for ``ProReJudge(raw_judge=...)``.
    """

    def judge_raw(
        self,
        instruction: str,
        policy: Trace,
        probes: Sequence[Trace],
        expectation: str = "",
    ) -> Verdict:
        """The verdict; ``expectation`` is not read (see :class:`RuleJudge`)."""
        if policy.completion_required and not policy.declared_done:
            return Verdict("failure", "the policy did not declare completion")
        screens = [s for s in policy.screens[-1:]] + [s for t in probes for s in t.screens[1:]]
        ok, why = _outcome_from_screens(instruction, screens, policy.answer)
        return Verdict("success" if ok else "failure", why)


class RuleTrajectoryJudge:
    """Trajectory-only judges after ProRe Table 2's baselines, by rules (their LLM forms
    are :class:`~gui_gym.models.judge.llm_baselines.LLMTrajectoryJudge`): ``digirl`` reads
    the last ``last_states`` screens only; ``webrl`` also reads the action history (what was
    typed, whether the agent declared completion). An
    :class:`~gui_gym.models.judge.EpisodeJudge`.

    Args:
        style: ``digirl`` or ``webrl``.
        last_states: Screens read from the end: 1 ("Last N States = 1") or None ("Full").

    Raises:
        ValueError: for an unknown style or ``last_states`` below 1.
    """

    def __init__(self, style: str = "digirl", last_states: int | None = 1):
        if style not in ("digirl", "webrl"):
            raise ValueError(f"style must be 'digirl' or 'webrl', got {style!r}")
        if last_states is not None and (isinstance(last_states, bool) or last_states < 1):
            raise ValueError(f"last_states must be >= 1 or None (full), got {last_states!r}")
        self.style = style
        self.last_states = last_states

    def judge_episode(self, env: object, policy: Trace) -> JudgeReport:
        """The verdict on ``policy`` (``env`` is not looked at: no probing)."""
        screens = (
            policy.screens if self.last_states is None else policy.screens[-self.last_states :]
        )
        typed = ""
        if self.style == "webrl":
            if policy.completion_required and not policy.declared_done:
                final = Verdict("failure", "the action history shows no declared completion")
                return JudgeReport(verdict=final.verdict, mode="trajectory", final=final)
            typed = " | ".join(
                p.text or ""
                for s in policy.steps
                if s.valid and (p := s.parsed) is not None and p.type is ActionType.INPUT
            )
        ok, why = _outcome_from_screens(policy.goal, screens, policy.answer, typed)
        final = Verdict("success" if ok else "failure", why)
        return JudgeReport(verdict=final.verdict, mode="trajectory", final=final)


def scripted_components() -> dict[str, object]:
    """The model-free components as keyword arguments of
    :class:`~gui_gym.models.judge.ProReJudge` (``ProReJudge(**scripted_components())``)."""
    return {
        "reasoner": ScriptedReasoner(),
        "evaluator": ScriptedEvaluator(),
        "claim_extractor": RuleClaimExtractor(),
        "claim_filter": RuleClaimFilter(),
        "judge": RuleJudge(),
    }
