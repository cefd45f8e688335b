"""The shared vocabulary of gui-gym: UI trees, actions, spaces, tasks, predicates,
trajectories and the ``GuiEnv`` base class. Depends on nothing else in ``gui_gym``."""

from gui_gym.core.actions import Action, ActionParseError, ActionType, describe, parse_action
from gui_gym.core.env import ExpertUnavailable, GuiEnv, InvalidAction
from gui_gym.core.predicates import PredicateContext, compile_predicate
from gui_gym.core.spaces import UnicodeText
from gui_gym.core.task import Milestone, Task, TaskFileError, TaskSuite
from gui_gym.core.trajectory import (
    Step,
    Trajectory,
    TrajectoryWriter,
    read_trajectories,
    write_trajectories,
)
from gui_gym.core.ui import UIElement, UITree, render_text

__all__ = [
    "Action",
    "ActionParseError",
    "ActionType",
    "ExpertUnavailable",
    "GuiEnv",
    "InvalidAction",
    "Milestone",
    "PredicateContext",
    "Step",
    "Task",
    "TaskFileError",
    "TaskSuite",
    "Trajectory",
    "TrajectoryWriter",
    "UIElement",
    "UITree",
    "UnicodeText",
    "compile_predicate",
    "describe",
    "parse_action",
    "read_trajectories",
    "render_text",
    "write_trajectories",
]
