"""LLM-backed ProRe components: reasoner, evaluator agent, claim extractor, claim filter and
chain-of-claims judge (seed 004, Sec. 3 and the prompts of App. E, rephrased). The raw
ablation judge and the trajectory-only baselines are in
:mod:`gui_gym.models.judge.llm_baselines`.

Each takes any object with the :class:`gui_gym.models.llm.LLM` method
``generate(prompts, max_new_tokens, temperature, n) -> list[list[str]]`` (duck typed, so a
local transformers model, an OpenAI-compatible server or a scripted stand-in all work).

Model output is parsed strictly (:mod:`gui_gym.models.judge.llm_parsing`): a goal must sit
on a ``Goal:`` line and have at most 20 words, claims and filter decisions must be JSON of
the documented shape (read with ``json.loads``, never evaluated), a verdict must be a single
``Status: success|failure`` line, an evaluator step a single action of the gui-gym grammar.
Output that does not parse is asked again with a note saying what was wrong
(:func:`~gui_gym.models.llm.ask_until_parsed`); after the retries the reasoner, evaluator,
extractor and filter raise :class:`~gui_gym.models.judge.types.ComponentError` (the pipeline
fails that probe, or judges without it), and the judge returns an ``invalid`` verdict that
says why, so garbage never turns into a reward silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from gui_gym.core.actions import parse_action
from gui_gym.models.judge.llm_parsing import (
    parse_claims,
    parse_decisions,
    parse_plan,
    parse_status,
    reply_analysis,
)
from gui_gym.models.judge.session import ProbeSession
from gui_gym.models.judge.types import (
    MAX_CLAIMS,
    Claim,
    ComponentError,
    FilterDecision,
    ProbePlan,
    Trace,
    Verdict,
)
from gui_gym.models.llm.base import LLM, ask_until_parsed
from gui_gym.models.llm.chat_messages import Prompt
from gui_gym.models.llm.vision_prompts import (
    ScreenshotReader,
    screenshot_prompt,
    use_screenshots,
    with_note,
)

T = TypeVar("T")

__all__ = [
    "FILTER_CRITERIA",
    "LLMClaimExtractor",
    "LLMClaimFilter",
    "LLMEvaluator",
    "LLMJudge",
    "LLMReasoner",
    "TextGenerator",
    "check_component_screenshots",
    "components_read_screenshots",
    "llm_components",
]

FILTER_CRITERIA = ("paper", "grounded")
"""What the claim filter checks. ``paper`` (App. E.3 Stage 1, Sec. 3.4): discard evaluator
claims about what the evaluator itself caused and claims with no causal link to the task;
keep those that are evidence of the policy's outcome. ``grounded`` (ours): also drop claims
the cited screens do not show."""

TextGenerator = LLM
"""What the components need from an LLM: :class:`gui_gym.models.llm.LLM`'s ``generate``
(duck typed)."""


def _check_llm(llm: object) -> None:
    if not callable(getattr(llm, "generate", None)):
        raise TypeError(
            f"expected an LLM with generate(prompts, max_new_tokens, temperature, n); got {type(llm).__name__}"
        )


def _check_retries(retries: int) -> int:
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries must be an int >= 0, got {retries!r}")
    return retries


def _with_retry_note(prompt: Prompt, error: str) -> Prompt:
    """The prompt of a retry: the original with the parser's complaint appended (to its
    text; screenshots stay where they were)."""
    return with_note(
        prompt,
        f"\n\nYour previous reply could not be used: "
        f"{error}\nReply again, following the output format exactly.",
    )


class _Unparsed(ComponentError):
    """Every reply failed to parse; ``last`` is the last reply."""

    def __init__(self, message: str, last: str):
        super().__init__(message)
        self.last = last


class _LLMComponent(ScreenshotReader):
    """An LLM with a completion budget and a retry count (the base of every component).

    Components that look at screens also take ``screenshots`` (None: automatic, True,
    False; see :mod:`gui_gym.models.llm.vision_prompts`) and ``max_images`` (most screenshots
    one prompt shows)."""

    temperature: float = 0.0
    screenshots: bool | None = False  # components that never look at screens
    max_images: int = 1

    def __init__(
        self,
        llm: TextGenerator,
        max_new_tokens: int,
        retries: int,
        screenshots: bool | None = False,
        max_images: int = 1,
    ):
        _check_llm(llm)
        self.llm = llm
        self.max_new_tokens = int(max_new_tokens)
        self.retries = _check_retries(retries)
        self._init_screenshots(llm, screenshots, max_images)

    def _shows(self, *traces: Trace) -> bool:
        """Whether this prompt shows screenshots of ``traces`` (see
        :func:`~gui_gym.models.llm.vision_prompts.use_screenshots`)."""
        available = bool(traces) and all(t.has_screenshots for t in traces)
        return use_screenshots(self.llm, self.screenshots, available, type(self).__name__, "trace")

    def _trace_shots(
        self, trace: Trace, screens: list[int], prefix: str = ""
    ) -> list[tuple[str, Any]]:
        """``(label, screenshot)`` of the last ``max_images`` of ``screens`` of ``trace``."""
        picked = screens[-self.max_images :]
        return [(f"{prefix}Screen {i}:", trace.screenshots[i]) for i in picked]

    def _with_screens(self, prompt: str, trace: Trace) -> Prompt:
        """``prompt`` after the screenshots of the screens :meth:`Trace.render` shows (the
        redundant ones left out when condensing), when this component shows screenshots."""
        if not self._shows(trace):
            return prompt
        left_out = trace.redundant_screens() if getattr(self, "condense", False) else {}
        kept = [i for i in range(len(trace.screens)) if i not in left_out]
        return screenshot_prompt(prompt, self._trace_shots(trace, kept))

    def _ask(self, prompt: Prompt, parse: Callable[[str], T], what: str) -> T:
        """``parse(reply)`` of the first reply that parses; after a reply that does not, ask
        again (up to ``retries`` more times) with the parser's complaint appended.

        Raises:
            ComponentError: (an ``_Unparsed``) when no reply parsed; the message names
                ``what``.
            LLMError: when the backend fails or gives no completion.
        """
        [answer] = ask_until_parsed(
            self.llm,
            [prompt],
            parse,
            self.retries,
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            reprompt=_with_retry_note,
        )
        if not answer.parsed:
            raise _Unparsed(
                f"no usable {what} after {answer.attempts} attempts: {answer.error}", answer.reply
            )
        return answer.result()


def _history(trace: Trace, limit: int = 30) -> str:
    lines = []
    for i, step in enumerate(trace.steps[-limit:], start=max(1, len(trace.steps) - limit + 1)):
        status = "" if step.valid else f" (refused: {step.error})"
        lines.append(f"{i}. {step.action} - {step.description}{status}")
    if trace.answer is not None:
        lines.append(f"Answer given: {trace.answer}")
    return "\n".join(lines) or "[no actions]"


# ------------------------------------------------------------------------------ prompts

REASONER_PROMPT = """You check whether a phone or web GUI task was really completed.

Two agents are involved. The policy agent has already tried the task. An evaluator agent
will now look around the same device, starting from the state the policy left, to find
evidence; it does not redo the task, it only navigates and reads screens.

First analyse what the user expects and which screens, labels or values would prove that
the task is done (or not done). Then write ONE short goal, at most 20 words, telling the
evaluator exactly what to look for and where. When the task has several key states on
different screens or apps, you may instead write up to 3 goals, one per line, which the
evaluator carries out one after another. Write goals like these examples:
- What is the phone number for the contact Hugo Pereira?
- Check the Notifications folder for the file q2a8_fancy_banana.mp3.
- Confirm the timer is set to 16 minutes and 35 seconds and is not running.
- Find the note shy_king_copy.md in the MeetingMinutes folder.

Task: {task}

What the policy agent did:
{history}

Reply in exactly this form and add nothing else:
Analysis: <what the user expects, and what evidence would settle it>
Goal: <the goal, at most 20 words>
(optionally a second and third line "Goal: ..." for later steps of the same check)"""

REVISE_PROMPT = """You check whether a phone or web GUI task was really completed.

The policy agent has tried the task. An evaluator agent then probed the device with the
goal below and reported what it found. Improve the goal for another probe: say what
evidence is still missing or doubtful, and where the evaluator should look this time.

Task: {task}

What the user expects: {expectation}

Previous goal: {previous}

What that probe found:
{claims}

Reply in exactly this form and add nothing else:
Analysis: <what is missing and why the previous probe fell short>
Goal: <the revised goal, at most 20 words>
(optionally up to two more "Goal: ..." lines, carried out one after another)"""

EVALUATOR_PROMPT = """You are an evaluator agent on a phone or web screen. Your goal is to
find evidence, not to change anything: navigate and read, but never save, send, delete,
create or toggle anything.

Goal: {goal}

Actions so far:
{history}

Current screen (elements with their ids):
{screen}

Allowed actions: CLICK(id), LONG_CLICK(id), INPUT(id, "text") (search fields only),
SCROLL(up|down), GOBACK(), HOME(), OPEN_APP("name"), ANSWER("what you found"), DONE().
Reply with one action inside <action></action>, e.g. <action>CLICK(3)</action>. When you
have seen enough, reply <action>ANSWER("...")</action> with what you found."""

CLAIMS_PROMPT = """You turn a GUI agent's trace into short, checkable claims.

The policy agent tried the task; afterwards an evaluator agent looked around the device to
gather evidence. Write claims for the {role} agent only.

{guidelines}

Each claim lists the screen numbers that support it, a brief reason, and the claim itself.
Put the details that decide success into the claims (names, titles, numbers, times,
confirmations, error messages). Do not judge success or failure here. Write {min_claims}
to {max_claims} claims.

Task: {task}
{goal_line}
Trace of the {role} agent (screens numbered from 0; each action leads to the next screen):
{trace}

Reply with JSON only, in this shape:
{{"{key}": [{{"steps": [<screen numbers>], "reasoning": "<why>", "claim": "<claim>"}}]}}"""

POLICY_GUIDELINES = """Report as the actor: what you did and what you directly saw or caused.
For edits or deletions, state the item before and after. Report errors, wrong screens and
unintended actions. For a question, state the exact answer given. Skip the launcher, status
bar and repeated screens."""

EVALUATOR_GUIDELINES = """Report as a detective arriving after the policy agent left: describe
the state as the policy left it, using what you saw as proof. Never claim anything about
your own actions (if you opened a dialog, that is not the policy's doing). Say what is
present and what is missing, and point out anything that contradicts the task (not saved,
wrong name, wrong folder, setting unchanged)."""

FILTER_PROMPT_PAPER = """You vet an evaluator agent's claims before they are used as evidence.

The policy agent tried the task; the evaluator agent then looked around the device. Keep a
claim only if it is evidence about the outcome the policy agent left. Discard claims about
actions or outcomes the evaluator itself caused (its own taps, scrolls, stray edits or
saves), and claims with no causal link to the task or the probing goal. When in doubt,
discard.

Task: {task}
{goal_line}
Trace (screens numbered from 0):
{trace}

Claims:
{claims}

Reply with JSON only, one decision per claim:
{{"decisions": [{{"claim": <number>, "keep": true or false, "reason": "<why>"}}]}}"""

FILTER_PROMPT = """You vet claims about a GUI agent's trace before they are used as evidence.

Keep a claim only if the cited screens support it and it says something about the outcome of
the task as the policy agent left it. Drop claims the screens do not show, claims about
what the evaluator itself did (its own taps, stray edits or saves), and claims unrelated to
the task. When in doubt, drop.

Task: {task}
{goal_line}
Trace (screens numbered from 0):
{trace}

Claims:
{claims}

Reply with JSON only, one decision per claim:
{{"decisions": [{{"claim": <number>, "keep": true or false, "reason": "<why>"}}]}}"""

JUDGE_PROMPT = """You decide whether a GUI agent (the policy agent) completed the user's task.

The policy agent acted; its claims summarise its own trace. An evaluator agent then probed
the device and its claims report the state the policy left. Compare them:
- confirmed: an evaluator claim supports a policy claim;
- contradicted: an evaluator claim disproves a policy claim;
- complementary: the evaluator adds relevant evidence;
- unsupported: no evaluator claim addresses a policy claim.
Agents looking at different parts of the same content are complementary, not in conflict.
When claims do conflict, weigh which is better supported. Check the target (right item,
right app, right value). For a question, the policy must have given the exact answer asked
for. {completion_rule}

Task: {task}

What the user expects (the reasoner's analysis): {expectation}

Policy claims:
{policy_claims}

Evaluator claims:
{evaluator_claims}

Reply in exactly this form:
Analysis: <the relations and how they decide the outcome>
Status: success or failure"""

COMPLETION_RULE = (
    "This benchmark counts a policy that did not declare the task complete (DONE or an answer) "
    "as a failure."
)


def _claims_block(claims: Sequence[Claim]) -> str:
    if not claims:
        return "[none]"
    return "\n".join(
        f"{i}. {c.text} (screens {list(c.steps)}; {c.reasoning})" for i, c in enumerate(claims)
    )


# ---------------------------------------------------------------------------- components


class LLMReasoner(_LLMComponent):
    """Schedules probing goals with an LLM (ProRe Eq. 1, Eq. 5; prompts after App. E.1).

    Args:
        llm: Any object with the ``models.llm`` ``generate`` method.
        temperature: Sampling temperature; parallel probes draw their goals as ``n``
            samples, so a temperature above 0 gives them different goals.
        max_new_tokens: Completion budget.
        retries: Extra attempts when a reply does not parse.

    Raises:
        TypeError: when ``llm`` has no ``generate`` method.
    """

    def __init__(
        self,
        llm: TextGenerator,
        temperature: float = 0.7,
        max_new_tokens: int = 256,
        retries: int = 2,
    ):
        super().__init__(llm, max_new_tokens, retries)
        self.temperature = float(temperature)

    def _plan(self, prompt: str) -> ProbePlan:
        return self._ask(prompt, parse_plan, "goal")

    def schedule(self, instruction: str, policy: Trace, n_goals: int) -> list[ProbePlan]:
        """``n_goals`` plans, one LLM sample each: the reply's analysis is the expectation
        (Eq. 1's ``Exp``), its goal lines the sequential sub-goals.

        Raises:
            ComponentError: when a goal stays unparseable after the retries.
        """
        prompt = REASONER_PROMPT.format(task=instruction, history=_history(policy))
        out = self.llm.generate(
            [prompt], max_new_tokens=self.max_new_tokens, temperature=self.temperature, n=n_goals
        )
        plans = []
        for text in out[0] if out else []:
            try:
                plans.append(parse_plan(text))
            except ValueError:
                plans.append(self._plan(prompt))
        while len(plans) < n_goals:
            plans.append(self._plan(prompt))
        return plans[:n_goals]

    def revise(
        self,
        instruction: str,
        policy: Trace,
        previous_goal: str,
        previous_claims: Sequence[Claim],
        expectation: str = "",
    ) -> ProbePlan:
        """The next iterative plan (Eq. 5), from the expectation, the previous goal and the
        claims its probe produced.

        Raises:
            ComponentError: when the reply stays unparseable after the retries.
        """
        prompt = REVISE_PROMPT.format(
            task=instruction,
            expectation=expectation or "[not analysed]",
            previous=previous_goal,
            claims=_claims_block(previous_claims),
        )
        return self._plan(prompt)


class LLMEvaluator(_LLMComponent):
    """An LLM evaluator agent (ProRe Eq. 2): one action per step, read from the screen.

    On an env that makes screenshots, an image-text backend sees the current screen's
    screenshot before the prompt (ProRe's evaluator, an M3A-style agent, reads screens).

    Args:
        llm: Any object with the ``models.llm`` ``generate`` method.
        max_new_tokens: Completion budget per step.
        retries: Extra attempts per step when the reply holds no valid action.
        history: How many previous actions the prompt shows.
        screenshots: None (automatic: show the screenshot when the probe has one; a
            text-only backend then is an error), True (always; an error without one) or
            False (UI text only). See :mod:`gui_gym.models.llm.vision_prompts`.

    Raises:
        TypeError: when ``llm`` has no ``generate`` method.
        ValueError: for ``screenshots=True`` with a text-only backend.
    """

    def __init__(
        self,
        llm: TextGenerator,
        max_new_tokens: int = 96,
        retries: int = 2,
        history: int = 8,
        screenshots: bool | None = None,
    ):
        super().__init__(llm, max_new_tokens, retries, screenshots, max_images=1)
        self.history = int(history)

    def probe(self, goal: str, session: ProbeSession) -> None:
        """Act until the model answers, says DONE, or the budget runs out.

        Raises:
            ComponentError: when a step's reply stays unparseable after the retries (the
                pipeline then fails this probe, and the vote goes on without it).
        """
        while session.steps_left > 0:
            text = EVALUATOR_PROMPT.format(
                goal=goal,
                history=_history(session.trace, self.history),
                screen=session.screen.text,
            )
            shots = []
            if self._shows(session.trace):
                shots = [("Current screen:", session.trace.screenshots[-1])]
            action = self._ask(screenshot_prompt(text, shots), parse_action, "action")
            session.step(action)
            if session.finished:
                return


class LLMClaimExtractor(_LLMComponent):
    """Claims with an LLM (ProRe Eq. 3; prompts after App. E.2): the actor's report for the
    policy trace, the detective's report for a probe trace.

    Args:
        llm: Any object with the ``models.llm`` ``generate`` method.
        max_new_tokens: Completion budget.
        retries: Extra attempts when a reply does not parse.
        min_claims: Fewest claims asked for (the parser accepts 1 to 4).
        max_screen_chars: Longest screen text put in the prompt.
        condense: Leave home screens, unchanged screens and loops out of the prompt
            (ProRe Sec. 3.4; :meth:`~gui_gym.models.judge.Trace.render`). False shows every
            screen.
        screenshots: None (automatic), True or False: whether the screenshots of the
            screens shown go before the prompt, in order (ProRe App. E.2: "HTML +
            screenshots are attached in order"). See :mod:`gui_gym.models.llm.vision_prompts`.
        max_images: Most screenshots shown: the last ones of the screens kept.

    Raises:
        TypeError: when ``llm`` has no ``generate`` method.
        ValueError: for ``screenshots=True`` with a text-only backend.
    """

    def __init__(
        self,
        llm: TextGenerator,
        max_new_tokens: int = 512,
        retries: int = 2,
        min_claims: int = 1,
        max_screen_chars: int = 3000,
        condense: bool = True,  # ProRe Sec. 3.4, "Minimizing Overhead"
        screenshots: bool | None = None,
        max_images: int = 4,
    ):
        super().__init__(llm, max_new_tokens, retries, screenshots, max_images)
        self.min_claims = int(min_claims)
        self.max_screen_chars = int(max_screen_chars)
        self.condense = bool(condense)

    def extract(self, instruction: str, trace: Trace) -> list[Claim]:
        """1 to 4 claims about ``trace``.

        Raises:
            ComponentError: when the reply stays unparseable after the retries.
        """
        policy = trace.role == "policy"
        key = "policy_claims" if policy else "evaluator_claims"
        prompt = CLAIMS_PROMPT.format(
            role="policy" if policy else "evaluator",
            guidelines=POLICY_GUIDELINES if policy else EVALUATOR_GUIDELINES,
            min_claims=self.min_claims,
            max_claims=MAX_CLAIMS,
            task=instruction,
            goal_line="" if policy else f"Evaluator's probing goal: {trace.goal}",
            trace=trace.render(self.max_screen_chars, condense=self.condense),
            key=key,
        )
        source = "policy" if policy else "probe"
        return self._ask(
            self._with_screens(prompt, trace),
            lambda text: parse_claims(text, key, len(trace.screens), source),
            "claims",
        )


class LLMClaimFilter(_LLMComponent):
    """Vets claims with an LLM (ProRe Sec. 3.4 claim filter, App. E.3 Stage 1).

    Args:
        llm: Any object with the ``models.llm`` ``generate`` method.
        max_new_tokens: Completion budget.
        retries: Extra attempts when a reply does not parse.
        max_screen_chars: Longest screen text put in the prompt.
        criterion: ``paper`` (default: drop evaluator-caused and task-unrelated claims) or
            ``grounded`` (ours: also drop claims the cited screens do not show); see
            :data:`FILTER_CRITERIA`.
        condense: Leave redundant screens out of the prompt (ProRe Sec. 3.4).
        screenshots: None (automatic), True or False: the screenshots of the screens shown,
            as the claim extractor shows them.
        max_images: Most screenshots shown.

    Raises:
        TypeError: when ``llm`` has no ``generate`` method.
        ValueError: for an unknown criterion, or ``screenshots=True`` with a text-only
            backend.
    """

    def __init__(
        self,
        llm: TextGenerator,
        max_new_tokens: int = 384,
        retries: int = 2,
        max_screen_chars: int = 3000,
        criterion: str = "paper",  # ProRe App. E.3 Stage 1
        condense: bool = True,  # ProRe Sec. 3.4
        screenshots: bool | None = None,
        max_images: int = 4,
    ):
        super().__init__(llm, max_new_tokens, retries, screenshots, max_images)
        if criterion not in FILTER_CRITERIA:
            raise ValueError(f"criterion must be one of {FILTER_CRITERIA}, got {criterion!r}")
        self.max_screen_chars = int(max_screen_chars)
        self.criterion = criterion
        self.condense = bool(condense)

    def filter(
        self, instruction: str, trace: Trace, claims: Sequence[Claim]
    ) -> list[FilterDecision]:
        """One decision per claim.

        Raises:
            ComponentError: when the reply stays unparseable after the retries.
        """
        if not claims:
            return []
        template = FILTER_PROMPT_PAPER if self.criterion == "paper" else FILTER_PROMPT
        prompt = template.format(
            task=instruction,
            goal_line="" if trace.role == "policy" else f"Evaluator's probing goal: {trace.goal}",
            trace=trace.render(self.max_screen_chars, condense=self.condense),
            claims=_claims_block(claims),
        )
        return self._ask(
            self._with_screens(prompt, trace),
            lambda text: parse_decisions(text, len(claims)),
            "filter decisions",
        )


class LLMJudge(_LLMComponent):
    """Chain-of-claims judgment with an LLM (ProRe Eq. 4; prompt after App. E.3 Stage 2).

    On an env that makes screenshots, an image-text backend also sees the final screen the
    policy left (its screenshot, before the claims), so a verdict can rest on what the
    screen shows and no claim put into words.

    Args:
        llm: Any object with the ``models.llm`` ``generate`` method.
        max_new_tokens: Completion budget.
        retries: Extra attempts when a reply has no single valid ``Status:`` line.
        screenshots: None (automatic), True or False (see
            :mod:`gui_gym.models.llm.vision_prompts`).

    Raises:
        TypeError: when ``llm`` has no ``generate`` method.
        ValueError: for ``screenshots=True`` with a text-only backend.
    """

    def __init__(
        self,
        llm: TextGenerator,
        max_new_tokens: int = 512,
        retries: int = 2,
        screenshots: bool | None = None,
    ):
        super().__init__(llm, max_new_tokens, retries, screenshots, max_images=1)

    def judge(
        self,
        instruction: str,
        policy_claims: Sequence[Claim],
        evaluator_claims: Sequence[Claim],
        policy: Trace,
        expectation: str = "",
    ) -> Verdict:
        """The verdict (Eq. 4: from the task, the expectation and the claims; every probe's
        claims at once in a joint judgment); ``invalid`` (with the reason and the last raw
        reply) when the model's replies stay unparseable after the retries."""
        prompt = JUDGE_PROMPT.format(
            completion_rule=COMPLETION_RULE if policy.completion_required else "",
            task=instruction,
            expectation=expectation or "[not analysed]",
            policy_claims=_claims_block(policy_claims),
            evaluator_claims=_claims_block(evaluator_claims),
        )
        shots = []
        if self._shows(policy):
            last = len(policy.screens) - 1
            shots = [(f"Final screen the policy left (screen {last}):", policy.screenshots[-1])]
        return _verdict_or_invalid(self, screenshot_prompt(prompt, shots), parse_status)


def _verdict_or_invalid(
    component: _LLMComponent, prompt: Prompt, parse: Callable[[str], str]
) -> Verdict:
    """Ask until a reply parses to a verdict; ``invalid`` (saying why, with the last raw
    reply) when none does after the retries."""

    def verdict(text: str) -> Verdict:
        return Verdict(parse(text), reply_analysis(text), raw=text)

    try:
        return component._ask(prompt, verdict, "verdict")
    except _Unparsed as err:
        reason = str(err).split(": ", 1)[-1]
        return Verdict(
            "invalid",
            f"the judge's reply stayed unparseable after {component.retries + 1} attempts: {reason}",
            raw=err.last,
        )


def llm_components(
    llm: TextGenerator, screenshots: bool | None = None, **overrides: Any
) -> dict[str, object]:
    """All five LLM components on one model, as keyword arguments of
    :class:`~gui_gym.models.judge.ProReJudge` (``ProReJudge(**llm_components(llm))``).

    Args:
        llm: Any object with the ``models.llm`` ``generate`` method.
        screenshots: The evaluator's, extractor's, filter's and judge's ``screenshots``
            (None: automatic; the reasoner plans from the task and the actions, text only).
        **overrides: Replace a component by name (e.g. ``evaluator=ScriptedEvaluator()``).

    Raises:
        ValueError: for ``screenshots=True`` with a text-only backend, or an unknown
            component name.
    """
    components: dict[str, object] = {
        "reasoner": LLMReasoner(llm),
        "evaluator": LLMEvaluator(llm, screenshots=screenshots),
        "claim_extractor": LLMClaimExtractor(llm, screenshots=screenshots),
        "claim_filter": LLMClaimFilter(llm, screenshots=screenshots),
        "judge": LLMJudge(llm, screenshots=screenshots),
    }
    unknown = set(overrides) - set(components)
    if unknown:
        raise ValueError(f"unknown component(s) {sorted(unknown)}; known: {sorted(components)}")
    components.update(overrides)
    return components


def check_component_screenshots(components: Sequence[object], env_screenshots: bool) -> None:
    """Check every LLM component among ``components`` against an env that does (or does
    not) make screenshots (rule-based and scripted components are skipped): what
    :class:`~gui_gym.wrappers.ProbingJudgeWrapper` runs at construction.

    Raises:
        ValueError: (one line) for a text-only backend on an env with screenshots left on
            automatic, or ``screenshots=True`` on an env without them.
    """
    for component in components:
        if isinstance(component, _LLMComponent):
            component.check_env(env_screenshots)


def components_read_screenshots(components: Sequence[object]) -> bool:
    """Whether any of ``components`` is an LLM component that may show screenshots (so the
    traces it reads must keep them; rule-based components read UI trees only)."""
    return any(getattr(c, "reads_screenshots", False) is True for c in components)
