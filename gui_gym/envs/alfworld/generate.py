"""Deterministic ALFWorld game generator (issue 32a, first step).

ALFWorld's game files cannot be downloaded here, so games are generated from what the
``alfworld`` wheel ships: the PDDL domain and text grammar, the AI2-THOR floor-plan layouts
(receptacle ids and navigation points), ``goal_library`` goal snippets and templates and the
``constants`` affordance tables. :func:`make_game` builds one game from ``(split, index,
seed)`` with no global state, so any game can be built lazily on first use.
"""

from __future__ import annotations

import functools
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
SPLITS = ("train", "valid_seen", "valid_unseen")
"""ALFWorld's splits: train and valid-seen games use ALFRED's training floor plans
(``constants.TRAIN_SCENE_NUMBERS``: scenes 7-30 of each room group), valid-unseen games its
held-out ones (``TEST_SCENE_NUMBERS``: scenes 1-6), rooms training never sees."""
GENERATOR_VERSION = 3
"""Bumped whenever a game built from the same ``(split, index, seed)`` would change: cached
game folders live under ``v{GENERATOR_VERSION}``, so an old cache is never served."""
PICK_TWO_MAX_RECEPTACLES = 25
"""Pick-two games are drawn among scenes with at most this many receptacles. TextWorld's
planner is a blind breadth-first search, and a pick-two plan (8-12 steps, the first object
placed before the second is found) makes it explore every way of moving any object anywhere:
in the 40-receptacle kitchen FloorPlan16 it ran 8 CPU-minutes and 3 GB without a plan, where
22 receptacles took 5 CPU-seconds. 11 of the 96 training scenes (large kitchens, one living
room) and 2 of the 24 held-out ones are over it; they keep the other five task types."""
COUNTS = {"train": 3553, "valid_seen": 140, "valid_unseen": 134}
"""ALFWorld's game counts per split (games are built lazily, so these are the defaults)."""

HOST_WEIGHT = {
    "CounterTop": 4.0, "DiningTable": 4.0, "TableTop": 4.0, "CoffeeTable": 3.0,
    "SideTable": 3.0, "Desk": 3.0, "Dresser": 3.0, "Bed": 3.0, "Sofa": 3.0, "Shelf": 2.0,
    "ArmChair": 2.0, "TVStand": 2.0, "Toilet": 1.5, "SinkBasin": 1.0, "BathtubBasin": 1.0,
    "Cabinet": 1.0, "Drawer": 1.0, "Fridge": 1.0, "StoveBurner": 1.0, "Microwave": 0.5,
    "GarbageCan": 0.5, "Safe": 0.5, "Ottoman": 1.0, "Cart": 1.0,
}  # fmt: skip
"""Relative chance that an object starts on a receptacle of each type (other types 1.0):
open surfaces hold most things, containers and appliances fewer, as in ALFRED's scenes."""
DISTRACTORS = ((0, 1, 1, 1, 2, 3),) * 3 + ((0, 0, 1, 1, 2),) * 2 + ((0, 0, 1),)
"""Instances of each non-target pickupable type, per placement draw (``DISTRACTORS[draw]``,
the last for later draws): ALFRED-like density (1.3 on average) for the first three draws,
then fewer (0.8, then 0.33). Measured on pick-two placements that are expensive densely
(256 MiB bound): dense, train/0017 2 of 4 draws over it and train/0041 1 of 2; on
train/0017, train/0041 and valid_unseen/0005 (3 draws each), 0.8 a type 3 of 9 over, 0.33
none (1.5-16 CPU s)."""
FOOD = ("Apple", "Bread", "Egg", "Lettuce", "Potato", "Tomato")
FOOD_IN_FRIDGE = 4.0
"""Food starts in the fridge four times as often as the fridge's base weight."""
CAPACITY = {
    "CounterTop": 8, "DiningTable": 8, "TableTop": 6, "CoffeeTable": 5, "SideTable": 4,
    "Desk": 5, "Dresser": 5, "Bed": 4, "Sofa": 3, "ArmChair": 2, "Shelf": 3, "TVStand": 3,
    "Cabinet": 3, "Drawer": 2, "Fridge": 5, "Microwave": 1, "StoveBurner": 1, "Toaster": 1,
    "CoffeeMachine": 1, "SinkBasin": 2, "BathtubBasin": 2, "GarbageCan": 2, "Toilet": 2,
    "Safe": 2, "HandTowelHolder": 1, "TowelHolder": 1, "ToiletPaperHanger": 1,
}  # fmt: skip
"""How many objects a receptacle of each type holds at the start (other types 3)."""
SCENERY = {
    "HousePlant": ("CounterTop", "DiningTable", "CoffeeTable", "SideTable", "Shelf", "Dresser"),
    "Television": ("TVStand", "Dresser", "Shelf"),
}
"""Non-pickupable scenery shown on receptacles (besides lamps) where the scene has it."""


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
    if split not in SPLITS:
        raise ValueError(f"split must be one of {list(SPLITS)}, got {split!r}")
    return list(_scenes(split))


@functools.cache
def _scenes(split: str) -> tuple[int, ...]:
    from alfworld.gen import constants

    numbers = (
        constants.TEST_SCENE_NUMBERS if split == "valid_unseen" else constants.TRAIN_SCENE_NUMBERS
    )
    layouts = _alfworld_root() / "gen" / "layouts"
    return tuple(n for n in numbers if (layouts / f"FloorPlan{n}-openable.json").exists())


@dataclass(frozen=True)
class Game:
    """One generated game: what ALFWorld's loader reads from a game folder."""

    task_type: str
    scene: int
    pddl_params: dict[str, Any]
    pddl_problem: str
    task_text: str = ""
    """The task line (``Your task is to: ...``), one of ALFWorld's templates for the type."""

    def traj_data(self) -> dict[str, Any]:
        return {
            "task_type": self.task_type,
            "scene": {"floor_plan": f"FloorPlan{self.scene}"},
            "pddl_params": self.pddl_params,
        }


def _task_text(split: str, index: int, seed: int, task_type: str, p: dict[str, Any]) -> str:
    """ALFWorld's templated task text (``misc.get_templated_task_desc``), with the template
    drawn from the game's own seed: upstream draws it from the global ``random`` even when
    given an ``rng``, which would make a rebuilt game's text differ."""
    from alfworld.gen import goal_library

    templates = goal_library.gdict[task_type]["templates"]
    template = random.Random(f"{seed}:{split}:{index}:text").choice(templates)
    return template.format(
        obj=p["object_target"].lower(),
        recep=p["parent_target"].lower(),
        toggle=p["toggle_target"].lower(),
        mrecep=p["mrecep_target"].lower(),
    )


@functools.lru_cache(maxsize=256)
def _layout(scene: int) -> tuple[list[str], dict[str, list[float]]]:
    root = _alfworld_root() / "gen" / "layouts"
    objects = json.loads((root / f"FloorPlan{scene}-objects.json").read_text())
    receptacles = json.loads((root / f"FloorPlan{scene}-openable.json").read_text())
    return objects, receptacles


@functools.lru_cache(maxsize=256)
def _scene_summary(scene: int) -> tuple[list[str], dict[str, Any], list[str], list[str]]:
    """A scene's object types, receptacles (id -> navigation point), receptacle types and
    the object types that some receptacle of the scene can hold."""
    from alfworld.gen import constants

    recep_objects = constants.VAL_RECEPTACLE_OBJECTS
    objects, layout = _layout(scene)
    receps = {rid: loc for rid, loc in layout.items() if _rtype(rid) in recep_objects}
    rtypes = sorted({_rtype(rid) for rid in receps})
    pickup = sorted(
        {o for o in objects if any(o in recep_objects[r] for r in rtypes)} - set(rtypes)
    )
    return objects, receps, rtypes, pickup


def make_game(
    split: str,
    index: int,
    seed: int = 0,
    max_tries: int = 200,
    params_only: bool = False,
    draw: int = 0,
) -> Game:
    """Build game ``index`` of ``split`` deterministically from ``seed``.

    ``params_only`` stops once the scene and goal are drawn (``pddl_problem`` is then empty):
    the task text needs only those, so a suite of ALFWorld's 3,827 games loads quickly. Every
    retry happens before that point, so the full game has the same scene and goal.

    ``draw`` selects the placement: draw 0 continues the game's own random stream, draw ``k``
    starts a stream of its own (``"{seed}:{split}:{index}:draw{k}"``). The scene, goal and
    task text never depend on it: the build (:func:`~gui_gym.envs.alfworld.env.build_game`)
    moves to the next draw when the planner cannot solve a placement within its bound.
    """
    if not isinstance(draw, int) or isinstance(draw, bool) or draw < 0:
        raise ValueError(f"draw must be an int >= 0, got {draw!r}")
    from alfworld.gen import constants

    rng = random.Random(f"{seed}:{split}:{index}")
    pool = scenes(split)
    task_type = TASK_TYPES[index % len(TASK_TYPES)]
    recep_objects = constants.VAL_RECEPTACLE_OBJECTS
    actions = constants.VAL_ACTION_OBJECTS
    for _ in range(max_tries):
        scene = rng.choice(pool)
        objects, receps, rtypes, pickup = _scene_summary(scene)
        need_recep, need_action = NEEDS.get(task_type, (None, None))
        if need_recep and need_recep not in rtypes:
            continue
        if task_type == "pick_two_obj_and_place" and len(receps) > PICK_TWO_MAX_RECEPTACLES:
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
        need = 2 if task_type == "pick_two_obj_and_place" else 1
        target_hosts = [
            r for r in receps if obj in recep_objects[_rtype(r)] and _rtype(r) != parent
        ]
        if sum(CAPACITY.get(_rtype(r), 3) for r in target_hosts) < need:
            continue
        params = {
            "object_target": obj,
            "parent_target": parent,
            "toggle_target": lamp if task_type == "look_at_obj_in_light" else "",
            "mrecep_target": "",
            "object_sliced": False,
        }
        if params_only:
            return Game(
                task_type, scene, params, "", _task_text(split, index, seed, task_type, params)
            )
        if draw:
            rng = random.Random(f"{seed}:{split}:{index}:draw{draw}")
        # draws 3 and later thin the other objects out (DISTRACTORS): the planner's cost
        # grows with them, so a game the planner cannot solve densely still gets a placement
        # Where things start: every pickupable type of the scene gets 0-3 instances (the
        # target 1-4, at least 2 for pick-two; ALFRED's MAX_NUM_OF_OBJ_INSTANCES and
        # PICKUP_REPEAT_MAX), each on a receptacle that can hold it, drawn by HOST_WEIGHT
        # among those with room left (CAPACITY); the target never on a receptacle of the goal
        # type (no game is won at step 0).
        load: dict[str, int] = {}
        placements: list[tuple[str, str]] = []
        lamp_hosts = [r for r in receps if _rtype(r) in LAMP_HOSTS]
        for lamp_type in ("DeskLamp", "FloorLamp"):  # scenery: lamps cannot be picked up
            if lamp_type in objects and lamp_hosts:  # placed first: every host has room
                placements.append((lamp_type, _pick_host(rng, lamp_type, lamp_hosts, load)))
        for otype in [obj] + [o for o in pickup if o != obj]:
            hosts_for = [r for r in receps if otype in recep_objects[_rtype(r)]]
            if otype == obj:
                hosts_for = [r for r in hosts_for if _rtype(r) != parent]
                count = max(need, rng.randint(1, constants.PICKUP_REPEAT_MAX))
            else:
                count = rng.choice(DISTRACTORS[min(draw, len(DISTRACTORS) - 1)])
            for _ in range(count):
                host = _pick_host(rng, otype, hosts_for, load)
                if host is not None:
                    placements.append((otype, host))
        assert sum(1 for t, _ in placements if t == obj) >= need  # room checked above
        for thing, thing_hosts in SCENERY.items():
            where = [r for r in receps if _rtype(r) in thing_hosts]
            if thing in objects and where:
                host = _pick_host(rng, thing, where, load)
                if host is not None:
                    placements.append((thing, host))
        problem = _problem(task_type, params, receps, placements, rtypes, objects, rng)
        return Game(
            task_type, scene, params, problem, _task_text(split, index, seed, task_type, params)
        )
    raise RuntimeError(f"could not build {split} game {index} (seed {seed}) in {max_tries} tries")


def _pick_host(
    rng: random.Random, otype: str, hosts: list[str], load: dict[str, int]
) -> str | None:
    """A receptacle for one ``otype`` instance, by :data:`HOST_WEIGHT` among those with room."""
    free = [r for r in hosts if load.get(r, 0) < CAPACITY.get(_rtype(r), 3)]
    if not free:
        return None
    weights = []
    for r in free:
        w = HOST_WEIGHT.get(_rtype(r), 1.0)
        if otype in FOOD and _rtype(r) == "Fridge":
            w *= FOOD_IN_FRIDGE
        weights.append(w)
    host = rng.choices(free, weights=weights)[0]
    load[host] = load.get(host, 0) + 1
    return host


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
        if otype not in ("DeskLamp", "FloorLamp") and otype not in SCENERY:
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
    from gui_gym.core.files import atomic_write_text

    alf = _alfworld_root() / "data"
    traj = game.traj_data()
    # what alfworld.agents.utils.misc.add_task_to_grammar does, with the game's own text
    grammar = (alf / "alfred.twl2").read_text().replace("UNKNOWN GOAL", game.task_text)
    data = {
        "pddl_domain": (alf / "alfred.pddl").read_text(),
        "grammar": grammar,
        "pddl_problem": game.pddl_problem,
        "solvable": True,
    }
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(root / "traj_data.json", json.dumps(traj))
    atomic_write_text(root / "game.tw-pddl", json.dumps(data))
    return root
