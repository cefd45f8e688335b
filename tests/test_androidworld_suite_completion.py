"""AndroidWorld's remaining templates on the simulated phone (issue 23): the cross-app "from
Markor" add templates, the next-week calendar question, and the new apps' families. Every
template also runs the per-template contract in ``test_androidworld.py`` (oracle over five
seeds, check_env, determinism, a clean start); these tests show the checks read the state:
half-done, wrong-row and wrong-app states score 0."""

from __future__ import annotations

import gui_gym  # noqa: F401
from gui_gym.core.actions import Action, ActionType
from tests.androidworld_helpers import make, oracle_until, score, step, success

_EXPENSE_FIELDS = ("name", "amount", "category", "note")


def test_expense_from_markor_note_lists_targets_among_noise_and_needs_the_plain_note() -> None:
    env = make("ExpenseAddMultipleFromMarkor", seed=2)
    base = env.unwrapped
    params = base.task.params
    targets = params["targets"]
    note = base.state.apps["markor"].get("my_expenses.txt")
    assert note is not None and base.state.apps["markor"].notes == [note]
    lines = note.content.splitlines()
    assert lines[0] == "name|amount_dollars|category_name|note" and len(lines) == 1 + 2 + 100
    assert sum("Reimbursable" in line for line in lines) == 2
    assert len(base.state.apps["expense"].expenses) == 100  # the others are logged already
    data = base.state.apps["expense"]
    rows = [{k: t[k] for k in _EXPENSE_FIELDS} for t in targets]
    data.add(**dict(rows[0], note=rows[0]["note"] + ". Reimbursable."))
    data.add(**rows[1])
    assert score(env) == 0.0  # AndroidWorld compares with the original note
    data.expenses.pop(-2)
    assert score(env) == 0.0  # half done
    data.add(**rows[0])
    assert score(env) == 1.0


def test_from_markor_milestones_need_the_note_read_first() -> None:
    env = make("RecipeAddMultipleRecipesFromMarkor", seed=1)
    base = env.unwrapped
    assert [m.name for m in base.task.milestones][:2] == ["note_opened", "editor_opened"]
    step(env, 'OPEN_APP("Broccoli")')
    new = base.ui_tree.find_one(handler="recipes.new")
    step(env, Action(ActionType.CLICK, index=new.index))
    assert base.state.screen_name == "recipes/edit" and base.milestones == []
    oracle_until(env, lambda: "editor_opened" in base.milestones, limit=8)
    assert base.milestones[:2] == ["note_opened", "editor_opened"]
    assert "recipes" in base.state.opened and "markor" in base.state.opened


def test_recipes_from_markor2_noise_of_other_prep_times_must_not_be_added() -> None:
    env = make("RecipeAddMultipleRecipesFromMarkor2", seed=3)
    base = env.unwrapped
    params = base.task.params
    prep = params["prep_time"]
    assert prep in base.task.instruction
    assert all(t["preparation_time"] == prep for t in params["targets"])
    assert all(r["preparation_time"] != prep for r in params["rows"]) and len(params["rows"]) == 40
    content = base.state.apps["markor"].get("recipes.txt").content
    assert all(t["title"] in content for t in params["targets"])
    data = base.state.apps["recipes"]
    for t in params["targets"]:
        data.add(**t)
    assert score(env) == 1.0
    extra = {k: v for k, v in params["rows"][0].items() if k != "id"}
    data.add(**extra)  # a recipe with another preparation time, copied from the note
    assert score(env) == 0.0


def test_events_in_next_week_needs_both_titles_and_both_days_viewed_in_order() -> None:
    env = make("SimpleCalendarEventsInNextWeek", seed=4)
    base = env.unwrapped
    params = base.task.params
    first, last = params["when"], params["last"]
    assert "2023-10-16" <= first < last <= "2023-10-22"
    events = base.state.apps["calendar"].events
    in_week = [e for e in events if "2023-10-15" <= e.start[:10] <= "2023-10-22"]
    assert sorted(e.title for e in in_week) == sorted(base.task.expected_answer())
    titles = base.task.expected_answer()
    base._answer = titles[0]
    assert success(env) == 0.0  # one of the two
    base._answer = f"{titles[1]}, {titles[0]}"
    assert success(env) == 1.0
    base._answer = None
    oracle_until(env, lambda: "second_day_viewed" in base.milestones, limit=15)
    assert base.milestones.index("first_day_viewed") < base.milestones.index("second_day_viewed")
