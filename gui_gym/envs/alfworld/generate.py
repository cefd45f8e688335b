"""Deterministic ALFWorld game generator (issue 32a, first step).

ALFWorld's game files cannot be downloaded here, so games are generated from what the
``alfworld`` wheel ships: the PDDL domain and text grammar, the AI2-THOR floor-plan layouts
(receptacle ids and navigation points), ``goal_library`` goal snippets and templates and the
``constants`` affordance tables. :func:`make_game` builds one game from ``(split, index,
seed)`` with no global state, so any game can be built lazily on first use.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["OPENABLE", "TASK_TYPES", "Game", "game_folder", "make_game", "scenes"]

TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
OPENABLE = ("Fridge", "Cabinet", "Microwave", "Drawer", "Safe")
LAMP_HOSTS = ("Desk", "SideTable", "Dresser", "Shelf", "CoffeeTable", "DiningTable")
CONSTANT_TYPES = ("SinkBasinType", "MicrowaveType", "FridgeType", "KnifeType", "ButterKnifeType")
NEEDS = {
    "pick_clean_then_place_in_recep": ("SinkBasin", "Cleanable"),
    "pick_heat_then_place_in_recep": ("Microwave", "Heatable"),
    "pick_cool_then_place_in_recep": ("Fridge", "Coolable"),
}
SPLIT_SCENES = {"train": (1, 25), "valid_seen": (1, 25), "valid_unseen": (26, 31)}
"""Scene numbers within each room group (kitchens 1-30, living rooms 201-230, bedrooms
301-330, bathrooms 401-430): unseen scenes are held out of the train split, as ALFWorld's
valid-unseen split uses rooms training never saw."""


def _alfworld_root() -> Path:
    import alfworld

    return Path(alfworld.__file__).parent


def _escape(name: str) -> str:
    for a, b in (("|", "_bar_"), ("-", "_minus_"), ("+", "_plus_"), (".", "_dot_")):
        name = name.replace(a, b)
    return name


def _rtype(rid: str) -> str:
    """A receptacle's type from its AI2-THOR id (``Sink|x|y|z|SinkBasin`` is a SinkBasin)."""
    last = rid.split("|")[-1]
    return last if last[:1].isalpha() else rid.split("|")[0]


def scenes(split: str) -> list[int]:
    """The floor plans of a split that have layout files."""
    if split not in SPLIT_SCENES:
        raise ValueError(f"split must be one of {sorted(SPLIT_SCENES)}, got {split!r}")
    lo, hi = SPLIT_SCENES[split]
    layouts = _alfworld_root() / "gen" / "layouts"
    out = []
    for group in (0, 200, 300, 400):
        for n in range(lo, hi + 1):
            scene = group + n
            if (layouts / f"FloorPlan{scene}-openable.json").exists():
                out.append(scene)
    return out


@dataclass(frozen=True)
class Game:
    """One generated game: what ALFWorld's loader reads from a game folder."""

    task_type: str
    scene: int
    pddl_params: dict[str, Any]
    pddl_problem: str

    def traj_data(self) -> dict[str, Any]:
        return {
            "task_type": self.task_type,
            "scene": {"floor_plan": f"FloorPlan{self.scene}"},
            "pddl_params": self.pddl_params,
        }


def _layout(scene: int) -> tuple[list[str], dict[str, list[float]]]:
    root = _alfworld_root() / "gen" / "layouts"
    objects = json.loads((root / f"FloorPlan{scene}-objects.json").read_text())
    receptacles = json.loads((root / f"FloorPlan{scene}-openable.json").read_text())
    return objects, receptacles


def make_game(split: str, index: int, seed: int = 0, max_tries: int = 200) -> Game:
    """Build game ``index`` of ``split`` deterministically from ``seed``."""
    from alfworld.gen import constants

    rng = random.Random(f"{seed}:{split}:{index}")
    pool = scenes(split)
    task_type = TASK_TYPES[index % len(TASK_TYPES)]
    recep_objects = constants.VAL_RECEPTACLE_OBJECTS
    actions = constants.VAL_ACTION_OBJECTS
    for _ in range(max_tries):
        scene = rng.choice(pool)
        objects, layout = _layout(scene)
        receps = {rid: loc for rid, loc in layout.items() if _rtype(rid) in recep_objects}
        rtypes = sorted({_rtype(rid) for rid in receps})
        pickup = sorted(
            {o for o in objects if any(o in recep_objects[r] for r in rtypes)} - set(rtypes)
        )
        need_recep, need_action = NEEDS.get(task_type, (None, None))
        if need_recep and need_recep not in rtypes:
            continue
        candidates = [o for o in pickup if need_action is None or o in actions[need_action]]
        if task_type == "look_at_obj_in_light":
            lamp = (
                "DeskLamp"
                if "DeskLamp" in objects
                else "FloorLamp"
                if "FloorLamp" in objects
                else None
            )
            hosts = [r for r in receps if _rtype(r) in LAMP_HOSTS]
            if lamp is None or not hosts:
                continue
        if not candidates:
            continue
        obj = rng.choice(candidates)
        goal_receps = [r for r in rtypes if obj in recep_objects[r] and r != need_recep]
        if task_type != "look_at_obj_in_light" and not goal_receps:
            continue
        parent = "" if task_type == "look_at_obj_in_light" else rng.choice(goal_receps)
        # Where things start: each pickupable object type gets 1-3 instances on receptacles
        # that can hold it, the target never on a receptacle of the goal type (no step-0 win).
        placements: list[tuple[str, str]] = []
        for otype in pickup:
            hosts_for = [r for r in receps if otype in recep_objects[_rtype(r)]]
            if otype == obj:
                hosts_for = [r for r in hosts_for if _rtype(r) != parent]
            if not hosts_for:
                continue
            want = 2 if task_type == "pick_two_obj_and_place" and otype == obj else 1
            count = max(
                want, rng.choice((1, 1, 1, 2, 3)) if otype == obj else rng.choice((0, 1, 1, 2))
            )
            for _ in range(count):
                placements.append((otype, rng.choice(hosts_for)))
        if sum(1 for t, _ in placements if t == obj) < (
            2 if task_type == "pick_two_obj_and_place" else 1
        ):
            continue
        toggle = ""
        if task_type == "look_at_obj_in_light":
            toggle = lamp
            placements.append((lamp, rng.choice(hosts)))
        params = {
            "object_target": obj,
            "parent_target": parent,
            "toggle_target": toggle,
            "mrecep_target": "",
            "object_sliced": False,
        }
        problem = _problem(task_type, params, receps, placements, rtypes, objects, rng)
        return Game(task_type, scene, params, problem)
    raise RuntimeError(f"could not build {split} game {index} (seed {seed}) in {max_tries} tries")


def _loc(xzrh: list[float]) -> str:
    x, z, rot, hor = xzrh
    return f"loc_bar_{round(x * 4)}_bar_{round(z * 4)}_bar_{int(rot)}_bar_{int(hor)}".replace(
        "-", "_minus_"
    )


def _problem(task_type, params, receps, placements, rtypes, scene_objects, rng) -> str:
    from alfworld.gen import constants, goal_library

    recep_objects = constants.VAL_RECEPTACLE_OBJECTS
    actions = constants.VAL_ACTION_OBJECTS
    lines_obj, init = ["agent1 - agent"], []
    otypes = sorted({t for t, _ in placements})
    for t in sorted(set(otypes) | {"Knife", "ButterKnife"}):
        lines_obj.append(f"{t}Type - otype")
    for t in sorted(set(rtypes) | {"SinkBasin", "Microwave", "Fridge"}):
        lines_obj.append(f"{t}Type - rtype")
    locations: dict[str, str] = {}
    for rid, xzrh in sorted(receps.items()):
        name = _escape(rid)
        loc = _loc(xzrh)
        locations[rid] = loc
        lines_obj.append(f"{name} - receptacle")
        rtype = _rtype(rid)
        init += [f"(receptacleType {name} {rtype}Type)", f"(receptacleAtLocation {name} {loc})"]
        if rtype in OPENABLE:
            init.append(f"(openable {name})")
    start = "loc_bar_start_bar_0_bar_0_bar_0"
    all_locs = sorted(set(locations.values()) | {start})
    lines_obj += [f"{loc} - location" for loc in all_locs]
    init.append(f"(atLocation agent1 {start})")
    for i, (otype, host) in enumerate(placements):
        oid = _escape(f"{otype}|{i:03d}|{rng.randint(0, 999):03d}")
        lines_obj.append(f"{oid} - object")
        init += [
            f"(objectType {oid} {otype}Type)",
            f"(inReceptacle {oid} {_escape(host)})",
            f"(objectAtLocation {oid} {locations[host]})",
        ]
        if otype not in ("DeskLamp", "FloorLamp"):
            init.append(f"(pickupable {oid})")
        for flag, key in (
            ("cleanable", "Cleanable"),
            ("heatable", "Heatable"),
            ("coolable", "Coolable"),
            ("toggleable", "Toggleable"),
            ("sliceable", "Sliceable"),
        ):
            if otype in actions[key]:
                init.append(f"({flag} {oid})")
    for rt in sorted(rtypes):
        for ot in otypes:
            if ot in recep_objects.get(rt, ()):
                init.append(f"(canContain {rt}Type {ot}Type)")
    goal = (
        goal_library.gdict[task_type]["pddl"]
        .format(
            obj=params["object_target"],
            recep=params["parent_target"],
            toggle=params["toggle_target"],
            mrecep="",
        )
        .replace("#", "-")
    )
    return (
        "(define (problem plan_trial)\n    (:domain alfred)\n    (:objects\n        "
        + "\n        ".join(lines_obj)
        + "\n    )\n    (:init\n        "
        + "\n        ".join(init)
        + "\n    )\n"
        + goal
    )


def game_folder(game: Game, root: Path) -> Path:
    """Write ``game`` as an ALFWorld game folder under ``root`` (game.tw-pddl, traj_data.json)."""
    from alfworld.agents.utils.misc import add_task_to_grammar

    from gui_gym.core.files import atomic_write_text

    alf = _alfworld_root() / "data"
    traj = game.traj_data()
    rng = random.Random(game.pddl_problem)
    data = {
        "pddl_domain": (alf / "alfred.pddl").read_text(),
        "grammar": add_task_to_grammar((alf / "alfred.twl2").read_text(), traj, rng=rng),
        "pddl_problem": game.pddl_problem,
        "solvable": True,
    }
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(root / "traj_data.json", json.dumps(traj))
    atomic_write_text(root / "game.tw-pddl", json.dumps(data))
    return root
