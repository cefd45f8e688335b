"""``GuiGym/WikiHow-v0``: the simulated WikiHow app with the 577-task Mobile-Env-style suite."""

from __future__ import annotations

from typing import Any

from gui_gym.core.sim import SimGuiEnv
from gui_gym.envs.wikihow.app import WikiHowApp, WikiHowState, get_app
from gui_gym.envs.wikihow.tasks import CATEGORIES, load_suite

__all__ = ["REWARD_MODES", "WikiHowEnv"]

REWARD_MODES = ("outcome", "milestones")
"""``outcome``: 1.0 at success (the default); ``milestones``: Mobile-Env's +1 per event."""


class WikiHowEnv(SimGuiEnv[WikiHowState]):
    """A simulated WikiHow app and 577 navigation, in-page and question-answering tasks.

    ## Description

    Modelled on the Mobile-Env WikiHow task set used by ProgRM (577 tasks, 427 train / 150
    test). The app has a home tab with a search box, search results, long article pages
    (methods with numbered steps, Tips, Warnings, Things You'll Need, Related wikiHows,
    References, About This Article, "Was this article helpful?"), author and category pages,
    the editorial "trust" page, bookmarks and a share sheet, on a 360x720 phone screen where
    SCROLL moves 60% of the visible height. Tasks fall in three categories, as in ProgRM:

    * **Cross-Page**: search, open an article, then reach another page or section (the
      reference list, the author's page, a category, the trust page, a related article);
    * **In-Page**: search, open an article, then act on it (bookmark, share, rate);
    * **QA**: search, open an article, then ``ANSWER`` a question about it (normalised match).

    ## Action Space

    A string in the gui-gym grammar (``CLICK(3)``, ``INPUT(1, "lobster")``, ``SCROLL(down)``,
    ``GOBACK()``, ``ANSWER("3")``, ...; AndroidWorld JSON too) or an ``Action``. Typing into the
    search box submits the search, as Mobile-Env's INPUT does. Malformed or impossible actions
    count as a step, change nothing, and set ``info["action_valid"] = False``.

    ## Observation Space

    ``Dict(instruction=UnicodeText, screen=UnicodeText[, screenshot=Box(720, 360, 3)])``: the
    task instruction, the screen rendered one element a line (``<link id=5 clickable>How to
    ...</link>``), and with ``screenshot=True`` a Pillow drawing of the same screen.

    ## Rewards

    ``reward_mode="outcome"`` (default): the outcome only, 1.0 on the step the task succeeds,
    else 0.0 (also 0.0 when the episode ends without success). ``reward_mode="milestones"``:
    Mobile-Env's own reward, +1 on the step each milestone event first fires (its
    ``reward_listener``), so a successful episode earns its number of events (2 to 4); our
    intermediate checks ``results_shown`` and ``answer_in_view`` pay nothing. That sum per
    episode is ProgRM's "Rwd" (Table 1). Either way ``info["milestone_reward"]`` holds the
    Mobile-Env reward of the step and ``info["task_reward"]`` the outcome. Milestones
    (``query_typed``, ``results_shown``, ``article_opened``, then the task's own) are reported in
    ``info["milestones"]`` for progress rewards.

    ## Starting State

    The home tab with an empty search box; the task is drawn (seeded) from the split.

    ## Episode End

    Terminated when the task succeeds (as Mobile-Env ends episodes on the last milestone) or
    the agent sends ``DONE()``/``ANSWER(...)``; truncated after ``max_steps`` steps.

    ## Arguments

    * ``task``: a task id, or None to sample one per reset.
    * ``split``: ``"train"`` (427), ``"test"`` (150) or ``"all"`` (577).
    * ``category``: ``"Cross-Page"``, ``"In-Page"`` or ``"QA"`` to restrict sampling.
    * ``screenshot``: add screenshots to observations (default False).
    * ``max_steps``: step budget (default 20).
    * ``render_mode``: ``"ansi"`` or ``"rgb_array"``.
    * ``reward_mode``: ``"outcome"`` (default) or ``"milestones"`` (Mobile-Env's per-event
      reward).

    ## Version History

    * v0: initial release.
    """

    end_on_success = True
    categories = CATEGORIES

    def __init__(
        self,
        task: str | None = None,
        split: str = "train",
        category: str | None = None,
        screenshot: bool = False,
        max_steps: int = 20,
        render_mode: str | None = None,
        reward_mode: str = "outcome",
    ):
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        self.reward_mode = reward_mode
        self.app: WikiHowApp = get_app()
        super().__init__(
            load_suite(),
            task=task,
            split=split,
            category=category,
            screenshot=screenshot,
            max_steps=max_steps,
            render_mode=render_mode,
        )

    def __getstate__(self) -> dict[str, Any]:
        # The app and suite are process-wide and rebuilt from package data on unpickling, so a
        # pickled env (multiprocessing, Ray) carries only its episode state.
        return self._portable_state()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._restore_portable_state(state, load_suite(), get_app())

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Step as :class:`~gui_gym.core.env.GuiEnv` does, adding Mobile-Env's per-event
        reward (``info["milestone_reward"]``; the reward itself with
        ``reward_mode="milestones"``)."""
        before = len(self._milestones)
        observation, reward, terminated, truncated, info = super().step(action)
        assert self.task is not None
        earned = self.task.milestone_reward(self._milestones[before:])
        info["milestone_reward"] = earned
        if self.reward_mode == "milestones":
            reward = earned
        return observation, reward, terminated, truncated, info

    def _candidate_texts(self) -> tuple[str, ...]:
        assert self.task is not None
        return self.task.vocabulary
