"""What a progress model scores and the protocol it implements (ProgRM Sec. 2.3).

* :class:`ProgressQuery` is what a model scores: the task goal ``g``, the actions taken so far
  and the current screen, i.e. ProgRM's state ``s_t = [a_1, ..., a_{t-1}, o_t]`` (Eq. 6).
* :class:`ProgressModel` is the protocol wrappers call: ``predict(queries) -> values``.
* :func:`format_state` is the text a learned or prompted model reads;
  :func:`trajectory_queries` turns a recorded episode into its states.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from gui_gym.core.trajectory import Trajectory

__all__ = ["ProgressModel", "ProgressQuery", "format_state", "trajectory_queries"]


class ProgressQuery(NamedTuple):
    """One state to score: ProgRM's ``[g, s_t]`` with ``s_t = [a_1, ..., a_{t-1}, o_t]``.

    A ``NamedTuple`` so that building one per env step costs next to nothing.

    Attributes:
        instruction: The task goal ``g``.
        actions: Actions taken so far, oldest first (natural-language descriptions).
        screen: The current screen ``o_t`` (rendered text).
        task_id: The task, for models keyed by task (milestone totals).
        milestones: Env milestones reached so far (``info["milestones"]``).
        milestone_total: The task's number of milestones, when the caller knows it.
    """

    instruction: str
    actions: Sequence[str]
    screen: str
    task_id: str = ""
    milestones: Sequence[str] = ()
    milestone_total: int | None = None


@runtime_checkable
class ProgressModel(Protocol):
    """Anything that scores states: one progress value in ``[0, 1]`` per query."""

    def predict(self, queries: Sequence[ProgressQuery]) -> Sequence[float]: ...


def format_state(query: ProgressQuery) -> str:
    """The text a learned progress model reads: goal, action history, current screen.

    Laid out like ProgRM's prompt (Appendix G, Table 7): instructions, history actions,
    current screen; the screen comes last so truncation cuts the end of the screen first.
    """
    history = "\n".join(f"{i}. {a}" for i, a in enumerate(query.actions, 1)) or "(none)"
    return (
        f"Instructions:\n{query.instruction}\n"
        f"History actions:\n{history}\n"
        f"Current screen:\n{query.screen}"
    )


def _action_text(step: Any) -> str:
    return step.action_description or step.action


def trajectory_queries(trajectory: Trajectory) -> list[ProgressQuery]:
    """The states ``s_0 .. s_T`` of a recorded episode as queries.

    ``s_0`` is the reset screen with no actions; ``s_t`` (t >= 1) is the screen after step
    ``t - 1`` with its actions so far, which is where that step's progress label belongs.
    """
    steps = trajectory.steps
    if not steps:
        return [
            ProgressQuery(trajectory.instruction, (), trajectory.final_screen, trajectory.task_id)
        ]
    actions = [_action_text(s) for s in steps]
    queries = [ProgressQuery(trajectory.instruction, (), steps[0].screen, trajectory.task_id)]
    for t, step in enumerate(steps):
        screen = steps[t + 1].screen if t + 1 < len(steps) else trajectory.final_screen
        queries.append(
            ProgressQuery(
                trajectory.instruction,
                tuple(actions[: t + 1]),
                screen,
                trajectory.task_id,
                tuple(step.milestones),
            )
        )
    return queries
