"""Tiny handmade expert datasets for the semi-online replay tests."""

from __future__ import annotations

from pathlib import Path

from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.core.ui import UIElement, UITree
from gui_gym.envs.replay import ExpertDatasetWriter


def screen(k: int) -> UITree:
    """Expert state ``k``: a button, a text field and a scrollable list."""
    return UITree.build(
        [
            UIElement(0, "button", text=f"Next {k}", bounds=(20, 100, 180, 160), clickable=True),
            UIElement(
                0, "input", text="Name", bounds=(20, 200, 340, 250), clickable=True, editable=True
            ),
            UIElement(0, "list", bounds=(0, 300, 360, 700), scrollable=True),
        ],
        name=f"s{k}",
        can_scroll_down=True,
    )


def make_dataset(
    root: Path,
    trajectories: list[list[str]],
    *,
    thoughts: bool = True,
    screenshots: bool = False,
) -> Path:
    """Write one trajectory per action list; step ``k`` of each shows :func:`screen` ``(k)``."""
    with ExpertDatasetWriter(root, {"kind": "test"}, (360, 720)) as writer:
        for i, actions in enumerate(trajectories):
            steps = []
            for k, action in enumerate(actions):
                tree = screen(k)
                shot = None
                if screenshots:
                    from gui_gym.core.draw import draw_screenshot

                    shot = writer.save_image(f"images/{i}/{k}.png", draw_screenshot(tree))
                steps.append(
                    Step(
                        index=k,
                        screen=tree.text,
                        action=action,
                        thought=f"expert thought {i}.{k}" if thoughts else None,
                        tree=tree.to_dict(),
                        screenshot=shot,
                        milestones=[f"m{k}"],
                    )
                )
            writer.write(
                Trajectory(
                    env_id="test",
                    task_id=f"task{i}",
                    instruction=f"Do task {i}",
                    steps=steps,
                    final_screen="<text id=0>done</text>",
                    success=True,
                    metadata={
                        "trajectory_id": f"t{i}",
                        "category": "even" if i % 2 == 0 else "odd",
                        "final_tree": UITree.build([UIElement(0, "text", text="done")]).to_dict(),
                    },
                )
            )
    return root
