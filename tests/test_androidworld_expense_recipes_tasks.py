"""Pro Expense, Broccoli and Tasks on the simulated phone: app behaviour, and that the
templates' checks read the app state (half-done, wrong-row and wrong-app states score 0)."""

from __future__ import annotations

from dataclasses import replace

import pytest

import gui_gym  # noqa: F401
from gui_gym.core.actions import Action, ActionType
from gui_gym.envs.androidworld.apps.expense import Expense, parse_amount, parse_day
from gui_gym.envs.androidworld.apps.recipes import Recipe
from gui_gym.envs.androidworld.apps.tasks_app import visible_task_ids
from gui_gym.envs.androidworld.tasks.tasks_app import reword_date
from tests.androidworld_helpers import (
    assert_clean_start,
    click,
    fill,
    make,
    oracle_until,
    score,
    step,
    templates_of,
)

MINE = templates_of("expense", "recipes", "tasks_app")


def test_at_least_sixteen_templates_are_registered() -> None:
    assert len(MINE) >= 16
    assert {"ExpenseAddSingle", "RecipeDeleteDuplicateRecipes", "TasksDueNextWeek"} <= set(MINE)


@pytest.mark.parametrize("name", MINE)
def test_no_milestone_at_reset_and_params_are_json_plain(name: str) -> None:
    assert_clean_start(name)


# -- Pro Expense -----------------------------------------------------------------------------


def test_amount_and_date_parsing() -> None:
    assert parse_amount("$123.4") == 12340
    assert parse_amount("1,234.56") == 123456
    assert parse_amount("12") == 1200
    assert parse_amount("-3") is None and parse_amount("ten") is None
    assert parse_day("Oct 5, 2023") == "2023-10-05" and parse_day("5th") is None


def test_expense_editor_saves_the_record_with_a_picked_category() -> None:
    env = make("ExpenseAddSingle")
    base = env.unwrapped
    before = len(base.state.apps["expense"].expenses)
    step(env, 'OPEN_APP("pro expense")')
    click(env, handler="expense.new")
    fill(env, "name", "Taxi home")
    fill(env, "amount", "$42.5")
    click(env, handler="expense.pick_category")
    assert base.state.screen_name == "expense/category"
    click(env, handler="expense.set_category", text="Transportation")
    fill(env, "note", "Late train")
    info = click(env, handler="expense.save")
    assert base.state.screen_name == "expense/main" and "Expense saved" in base.ui_tree.text
    rows = base.state.apps["expense"].expenses
    assert len(rows) == before + 1
    new = rows[-1]
    assert (new.name, new.amount, new.category_name, new.note) == (
        "Taxi home",
        4250,
        "Transportation",
        "Late train",
    )
    assert info["action_valid"]
    assert base.ui_tree.find_one(handler="expense.open", handler_arg=str(new.id)) is not None


def test_expense_editor_rejects_a_bad_amount_without_saving() -> None:
    env = make("ExpenseAddSingle")
    base = env.unwrapped
    before = list(base.state.apps["expense"].expenses)
    step(env, 'OPEN_APP("Pro Expense")')
    click(env, handler="expense.new")
    fill(env, "name", "Coffee")
    fill(env, "amount", "a lot")
    save = base.ui_tree.find_one(handler="expense.save")
    info = step(env, f"CLICK({save.index})")
    assert not info["action_valid"] and "amount" in info["action_error"]
    assert base.state.apps["expense"].expenses == before
    assert base.state.screen_name == "expense/edit"


def test_expense_delete_can_be_cancelled_then_confirmed() -> None:
    env = make("ExpenseDeleteSingle")
    base = env.unwrapped
    data = base.state.apps["expense"]
    victim = data.ordered()[0]
    step(env, 'OPEN_APP("Pro Expense")')
    click(env, handler="expense.open", handler_arg=str(victim.id))
    assert base.state.screen_name == "expense/detail"
    click(env, handler="expense.delete")
    assert base.ui_tree.find_one(role="dialog").text == "Delete expense?"
    click(env, handler="expense.cancel")
    assert base.state.dialog is None and data.get(victim.id) == victim
    click(env, handler="expense.delete")
    click(env, handler="expense.confirm_delete")
    assert data.get(victim.id) is None and base.state.screen_name == "expense/main"


def test_expense_long_press_selects_rows_for_one_delete() -> None:
    env = make("ExpenseDeleteMultiple")
    base = env.unwrapped
    data = base.state.apps["expense"]
    first, second = data.ordered()[:2]
    step(env, 'OPEN_APP("Pro Expense")')
    row = base.ui_tree.find_one(handler="expense.open", handler_arg=str(first.id))
    step(env, f"LONG_CLICK({row.index})")
    assert base.ui_tree.find_one(text="1 selected") is not None
    click(env, handler="expense.open", handler_arg=str(second.id))  # a tap adds to the selection
    assert data.selected == [first.id, second.id]
    step(env, "GOBACK()")  # back leaves selection mode, the app stays open
    assert data.selected == [] and base.state.screen_name == "expense/main"
    for e in (first, second):
        row = base.ui_tree.find_one(handler="expense.open", handler_arg=str(e.id))
        step(env, f"LONG_CLICK({row.index})")
    click(env, handler="expense.delete_selected")
    click(env, handler="expense.confirm_delete_selected")
    assert data.get(first.id) is None and data.get(second.id) is None and not data.selected


def test_expense_edit_replaces_the_row() -> None:
    env = make("ExpenseDeleteSingle")
    base = env.unwrapped
    data = base.state.apps["expense"]
    row = data.ordered()[-1]
    step(env, 'OPEN_APP("Pro Expense")')
    while base.ui_tree.find_one(handler="expense.open", handler_arg=str(row.id)) is None:
        step(env, "SCROLL(down)")
    click(env, handler="expense.open", handler_arg=str(row.id))
    click(env, handler="expense.edit")
    assert base.state.forms["expense"]["name"] == row.name
    fill(env, "amount", "1.00")
    click(env, handler="expense.save")
    assert data.get(row.id) == replace(row, amount=100)
    assert base.state.screen_name == "expense/detail"


def test_long_expense_list_scrolls() -> None:
    env = make("ExpenseDeleteMultiple2")
    base = env.unwrapped
    step(env, 'OPEN_APP("Pro Expense")')
    first = {e.handler_arg for e in base.ui_tree.find(handler="expense.open")}
    assert base.ui_tree.can_scroll_down
    step(env, "SCROLL(down)")
    after = {e.handler_arg for e in base.ui_tree.find(handler="expense.open")}
    assert first and after and first != after
    assert len(base.state.apps["expense"].expenses) == 53


def test_expense_add_scores_only_the_saved_right_row() -> None:
    env = make("ExpenseAddSingle", seed=2)
    base = env.unwrapped
    state = base.state
    target = base.task.params["targets"][0]
    data = state.apps["expense"]
    assert score(env) == 0.0
    state.forms["expense"] = {
        "name": target["name"],
        "amount": str(target["amount"] / 100),
        "category": str(target["category"]),
        "note": target["note"],
    }
    assert score(env) == 0.0  # typed, never saved
    fields = {k: target[k] for k in ("name", "amount", "category", "note")}
    wrong_category = data.add(**dict(fields, category=target["category"] % 11 + 1))
    assert score(env) == 0.0  # saved with the wrong category
    data.expenses.remove(wrong_category)
    wrong_cents = data.add(**dict(fields, amount=target["amount"] + 1))
    assert score(env) == 0.0  # amounts compare exactly
    data.expenses.remove(wrong_cents)
    right = data.add(**dict(fields, name=target["name"].lower()))  # names fuzzy-match
    assert score(env) == 1.0
    data.add(name="Extra", amount=100)
    assert score(env) == 0.0  # one row too many
    data.expenses.pop()
    noise = data.expenses[0]
    data.expenses[0] = replace(noise, note="changed")
    assert score(env) == 0.0  # an earlier row was edited
    data.expenses[0] = noise
    assert score(env) == 1.0 and right in data.expenses


def test_expense_added_in_the_wrong_app_scores_zero() -> None:
    env = make("ExpenseAddSingle", seed=1)
    base = env.unwrapped
    target = base.task.params["targets"][0]
    base.state.apps["recipes"].add(title=target["name"], description=target["note"])
    base.state.apps["contacts"].contacts.clear()
    assert score(env) == 0.0


def test_expense_add_multiple_needs_both_rows() -> None:
    env = make("ExpenseAddMultiple", seed=3)
    base = env.unwrapped
    targets = base.task.params["targets"]
    assert len(targets) == 2 and "20-step" in type(base.task).__doc__
    data = base.state.apps["expense"]
    fields = [{k: t[k] for k in ("name", "amount", "category", "note")} for t in targets]
    data.add(**fields[0])
    assert score(env) == 0.0
    data.add(**fields[0])
    assert score(env) == 0.0  # the same row twice does not count for the other
    data.expenses.pop()
    data.add(**fields[1])
    assert score(env) == 1.0


def test_expense_delete_checks_the_other_rows() -> None:
    env = make("ExpenseDeleteSingle", seed=4)
    base = env.unwrapped
    data = base.state.apps["expense"]
    (target,) = base.task.params["targets"]
    assert len(data.expenses) >= 5 and base.task.params["names"] == data.get(target).name
    snapshot = list(data.expenses)
    other = next(e for e in data.expenses if e.id != target)
    data.expenses = [e for e in snapshot if e.id != other.id]
    assert score(env) == 0.0  # the wrong row
    data.expenses = [e for e in snapshot if e.id not in (other.id, target)]
    assert score(env) == 0.0  # the target and one more
    data.expenses = []
    assert score(env) == 0.0  # everything
    data.expenses = [e for e in snapshot if e.id != target]
    assert score(env) == 1.0
    data.add(name="New", amount=500)
    assert score(env) == 0.0  # nothing may be added


def test_expense_duplicates_keep_exactly_one() -> None:
    env = make("ExpenseDeleteDuplicates2", seed=6)
    base = env.unwrapped
    data = base.state.apps["expense"]
    a, b = base.task.params["targets"]
    assert data.get(a).content == data.get(b).content
    contents = [e.content for e in data.expenses]
    assert sum(c == data.get(a).content for c in contents) == 2  # one duplicate pair only
    near = [e for e in data.expenses if e.name == data.get(a).name and e.id not in (a, b)]
    assert len(near) >= 2 and all(e.amount != data.get(a).amount for e in near)
    snapshot = list(data.expenses)
    data.expenses = [e for e in snapshot if e.id not in (a, b)]
    assert score(env) == 0.0  # both copies gone
    data.expenses = [e for e in snapshot if e.id != near[0].id]
    assert score(env) == 0.0  # a near-copy is not a duplicate
    data.expenses = [e for e in snapshot if e.id != b]
    assert score(env) == 1.0
    data.expenses = [e for e in snapshot if e.id != a]
    assert score(env) == 1.0


def test_fork_keeps_expense_rows_apart() -> None:
    env = make("ExpenseDeleteSingle")
    base = env.unwrapped
    fork = base.fork()
    while fork.task.score(fork.state) < 1.0:
        fork.step(fork.oracle_action())
    assert base.task.score(base.state) == 0.0
    assert len(fork.state.apps["expense"].expenses) + 1 == len(base.state.apps["expense"].expenses)
    assert isinstance(base.state.apps["expense"].expenses[0], Expense)


# -- Broccoli --------------------------------------------------------------------------------


def test_recipe_editor_saves_every_field() -> None:
    env = make("RecipeAddSingleRecipe")
    base = env.unwrapped
    step(env, 'OPEN_APP("Broccoli app")')
    click(env, handler="recipes.new")
    values = {
        "title": "Miso Soup",
        "description": "Warm and light.",
        "servings": "2 servings",
        "preparation_time": "10 mins",
        "source": "Grandma",
        "ingredients": "miso, tofu",
        "directions": "Whisk miso into hot dashi. Add tofu.",
    }
    for field, value in values.items():
        fill(env, field, value)
    click(env, handler="recipes.save")
    saved = base.state.apps["recipes"].recipes[-1]
    assert {k: getattr(saved, k) for k in values} == values and not saved.favorite
    assert base.state.screen_name == "recipes/main"


def test_recipe_without_title_is_rejected() -> None:
    env = make("RecipeAddSingleRecipe")
    base = env.unwrapped
    step(env, 'OPEN_APP("Broccoli")')
    click(env, handler="recipes.new")
    fill(env, "description", "No title")
    save = base.ui_tree.find_one(handler="recipes.save")
    info = step(env, f"CLICK({save.index})")
    assert not info["action_valid"] and "title" in info["action_error"]


def test_recipe_search_filters_by_directions_and_back_closes_it() -> None:
    env = make("RecipeDeleteMultipleRecipesWithConstraint", seed=2)
    base = env.unwrapped
    ingredient = base.task.params["ingredient"]
    data = base.state.apps["recipes"]
    step(env, 'OPEN_APP("Broccoli")')
    click(env, handler="recipes.open_search")
    box = base.ui_tree.find_one(handler="recipes.search")
    assert box is not None and box.focused
    step(env, Action(ActionType.INPUT, index=box.index, text=ingredient))
    shown = {int(e.handler_arg) for e in base.ui_tree.find(handler="recipes.open")}
    assert shown == set(base.task.params["targets"])
    assert all(ingredient in data.get(i).directions.lower() for i in shown)
    step(env, "GOBACK()")  # hides the keyboard
    step(env, "GOBACK()")  # closes the search
    assert not data.searching and base.state.screen_name == "recipes/main"
    assert base.ui_tree.can_scroll_down  # 32 recipes do not fit on one screen


def test_recipe_favorite_toggle_and_delete_dialog() -> None:
    env = make("RecipeDeleteSingleRecipe")
    base = env.unwrapped
    data = base.state.apps["recipes"]
    r = data.ordered()[0]
    step(env, 'OPEN_APP("Broccoli")')
    click(env, handler="recipes.open", handler_arg=str(r.id))
    click(env, handler="recipes.favorite")
    assert data.get(r.id).favorite and base.ui_tree.find_one(handler="recipes.favorite").checked
    click(env, handler="recipes.delete")
    step(env, "GOBACK()")  # dismisses the dialog
    assert base.state.dialog is None and data.get(r.id) is not None
    click(env, handler="recipes.delete")
    click(env, handler="recipes.confirm_delete")
    assert data.get(r.id) is None and base.state.screen_name == "recipes/main"


def test_recipe_add_scores_only_the_saved_right_recipe() -> None:
    env = make("RecipeAddSingleRecipe", seed=3)
    base = env.unwrapped
    target = dict(base.task.params["targets"][0])
    data = base.state.apps["recipes"]
    target.pop("favorite")
    base.state.forms["recipes"] = dict(target)
    assert score(env) == 0.0  # typed, never saved
    data.add(**dict(target, servings="99 servings"))
    assert score(env) == 0.0  # one field wrong
    data.recipes.pop()
    data.add(**dict(target, favorite=True))
    assert score(env) == 0.0  # favourite must match too
    data.recipes.pop()
    data.add(**target)
    assert score(env) == 1.0
    data.recipes[0] = replace(data.recipes[0], title="Renamed")
    assert score(env) == 0.0


def test_recipe_delete_multiple_needs_all_and_only_the_targets() -> None:
    env = make("RecipeDeleteMultipleRecipesWithNoise", seed=1)
    base = env.unwrapped
    data = base.state.apps["recipes"]
    targets = base.task.params["targets"]
    titles = base.task.params["titles"].split(", ")
    assert len(targets) == 3 and len(data.recipes) == 32
    assert sorted(data.get(i).title for i in targets) == sorted(titles)
    snapshot = list(data.recipes)
    data.recipes = [r for r in snapshot if r.id not in targets[:2]]
    assert score(env) == 0.0  # two of three
    data.recipes = [r for r in snapshot if r.id not in targets]
    assert score(env) == 1.0
    data.recipes.pop()
    assert score(env) == 0.0  # one extra deletion


def test_recipe_constraint_targets_are_exactly_the_rows_using_the_ingredient() -> None:
    for seed in range(5):
        env = make("RecipeDeleteMultipleRecipesWithConstraint", seed=seed)
        task = env.unwrapped.task
        ingredient = task.params["ingredient"]
        data = env.unwrapped.state.apps["recipes"]
        using = {r.id for r in data.recipes if ingredient in r.directions.lower()}
        assert using == set(task.params["targets"]) and len(using) == 3
        assert ingredient in task.instruction


def test_recipe_duplicates_keep_exactly_one() -> None:
    env = make("RecipeDeleteDuplicateRecipes3", seed=2)
    base = env.unwrapped
    data = base.state.apps["recipes"]
    a, b = base.task.params["targets"]
    contents = [r.content for r in data.recipes]
    assert len(contents) == 32 and len(set(contents)) == 31  # one duplicate pair only
    lookalikes = [
        r
        for r in data.recipes
        if r.id not in (a, b)
        and (r.title, r.description) == (data.get(a).title, data.get(a).description)
    ]
    assert lookalikes
    snapshot = list(data.recipes)
    data.recipes = [r for r in snapshot if r.id != lookalikes[0].id]
    assert score(env) == 0.0
    data.recipes = [r for r in snapshot if r.id not in (a, b)]
    assert score(env) == 0.0
    data.recipes = [r for r in snapshot if r.id != a]
    assert score(env) == 1.0
    assert isinstance(data.recipes[0], Recipe)


# -- Tasks -----------------------------------------------------------------------------------


def test_tasks_list_hides_completed_and_sorts() -> None:
    env = make("TasksCompletedTasksForDate", seed=1)
    base = env.unwrapped
    data = base.state.apps["tasks_app"]
    step(env, 'OPEN_APP("Tasks app")')
    rows = {int(e.handler_arg) for e in base.ui_tree.find(handler="tasks_app.open")}
    assert rows and all(not data.get(i).done for i in rows)
    click(env, handler="tasks_app.toggle_completed")
    assert base.ui_tree.find_one(resource_id="completed") is not None
    click(env, handler="tasks_app.sort_menu")
    assert base.ui_tree.find_one(role="dialog").text == "Sort by"
    click(env, handler="tasks_app.set_sort", handler_arg="priority")
    open_rows = [int(e.handler_arg) for e in base.ui_tree.find(handler="tasks_app.open")]
    open_rows = [i for i in open_rows if not data.get(i).done]
    priorities = [data.get(i).importance for i in open_rows]
    assert priorities == sorted(priorities)
    assert base.ui_tree.find_one(description="Sort: Priority") is not None


def test_task_detail_marks_completed() -> None:
    env = make("TasksDueOnDate", seed=2)
    base = env.unwrapped
    data = base.state.apps["tasks_app"]
    step(env, 'OPEN_APP("Tasks")')
    row = base.ui_tree.find(handler="tasks_app.open")[0]
    task_id = int(row.handler_arg)
    click(env, handler="tasks_app.open", handler_arg=str(task_id))
    assert f"Priority: {data.get(task_id).priority}" in base.ui_tree.text
    click(env, handler="tasks_app.toggle_done")
    assert data.get(task_id).completed == "2023-10-15"
    step(env, "GOBACK()")
    shown = {int(e.handler_arg) for e in base.ui_tree.find(handler="tasks_app.open")}
    assert task_id not in shown  # completed tasks are hidden


def test_visible_rows_match_the_screen() -> None:
    env = make("TasksCompletedTasksForDate", seed=4)
    base = env.unwrapped
    assert visible_task_ids(base.state) == set()
    step(env, 'OPEN_APP("Tasks")')
    click(env, handler="tasks_app.toggle_completed")
    for _ in range(3):
        shown = {int(e.handler_arg) for e in base.ui_tree.find(handler="tasks_app.open")}
        assert visible_task_ids(base.state) == shown
        step(env, "SCROLL(down)")


def test_reworded_dates() -> None:
    import random

    rng = random.Random(0)
    seen = {reword_date(rng, "2023-10-16") for _ in range(200)}
    assert seen == {"October 16", "October 16 2023", "tomorrow", "Monday", "this Monday"}
    seen = {reword_date(rng, "2023-10-25") for _ in range(200)}
    assert "the Wednesday after next" in seen and "tomorrow" not in seen


@pytest.mark.parametrize(
    "name",
    [
        "TasksDueOnDate",
        "TasksHighPriorityTasks",
        "TasksHighPriorityTasksDueOnDate",
        "TasksCompletedTasksForDate",
        "TasksIncompleteTasksOnDate",
    ],
)
def test_tasks_answers_follow_the_app_data(name: str) -> None:
    for seed in range(4):
        env = make(name, seed=seed)
        task = env.unwrapped.task
        tasks = env.unwrapped.state.apps["tasks_app"].tasks
        day = task.params.get("due_date", "")
        if name == "TasksDueOnDate":
            want = {t.title for t in tasks if t.due == day}
        elif name == "TasksHighPriorityTasks":
            want = {t.title for t in tasks if t.importance == 0}
        elif name == "TasksHighPriorityTasksDueOnDate":
            want = {t.title for t in tasks if t.importance == 0 and t.due == day}
        elif name == "TasksCompletedTasksForDate":
            want = {t.title for t in tasks if t.due == day and t.done}
        else:
            want = {t.title for t in tasks if t.due <= day and not t.done}
        assert want == set(task.expected_answer()) and len(tasks) > 20


def test_tasks_due_next_week_counts_monday_to_sunday() -> None:
    counts = set()
    for seed in range(8):
        env = make("TasksDueNextWeek", seed=seed)
        tasks = env.unwrapped.state.apps["tasks_app"].tasks
        n = sum("2023-10-16" <= t.due <= "2023-10-22" for t in tasks)
        assert env.unwrapped.task.expected_answer() == [str(n)]
        counts.add(n)
    assert len(counts) > 1  # not a constant answer


def test_tasks_answer_scoring_and_milestones() -> None:
    env = make("TasksCompletedTasksForDate", seed=3)
    base = env.unwrapped
    titles = base.task.expected_answer()
    oracle_until(env, lambda: "answer_in_view" in base.milestones)
    assert base.state.apps["tasks_app"].show_completed
    assert base.milestones == ["tasks_app_opened", "answer_in_view"]
    fork = base.fork()
    _, reward, terminated, _, _ = fork.step(Action(ActionType.ANSWER, text=", ".join(titles[:2])))
    assert terminated and reward == 0.0  # a title missing
    fork = base.fork()
    _, reward, _, _, _ = fork.step(Action(ActionType.ANSWER, text="Water Plants"))
    assert reward == 0.0
    fork = base.fork()
    answer = ", ".join(t.upper() for t in reversed(titles))  # order and case do not matter
    _, reward, _, _, _ = fork.step(Action(ActionType.ANSWER, text=answer))
    assert reward == 1.0
    _, reward, terminated, _, _ = env.step("DONE()")
    assert terminated and reward == 0.0  # no answer given


def test_tasks_count_answer_is_a_number() -> None:
    env = make("TasksDueNextWeek", seed=1)
    n = env.unwrapped.task.expected_answer()[0]
    fork = env.unwrapped.fork()
    assert fork.step(Action(ActionType.ANSWER, text=str(int(n) + 1)))[1] == 0.0
    assert env.step(Action(ActionType.ANSWER, text=f"{n}.0"))[1] == 1.0
