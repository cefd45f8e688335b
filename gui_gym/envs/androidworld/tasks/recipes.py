"""Broccoli recipe tasks (AndroidWorld ``task_evals/single/recipe.py``).

Checks follow AndroidWorld's ``sqlite_validators`` on the ``recipes`` table, read from the
app's rows (see :mod:`~gui_gym.envs.androidworld.tasks.table`): an *add* task needs every target recipe present (title, description, servings,
preparation time, source, ingredients and directions fuzzy; favourite exact), exactly that
many new rows, and every earlier row unchanged; a *delete* task needs the target rows gone,
every other row unchanged and nothing added. Starting rows and their ids are parameters.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from gui_gym.core.actions import Action
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.recipes import EDITOR_FIELDS, Recipe, RecipesData
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    fuzzy_match,
    reach,
    register,
    type_into,
)
from gui_gym.envs.androidworld.tasks.table import (
    TableAddFromNoteTask,
    TableAddFromPictureTask,
    TableAddTask,
    TableDeleteDuplicatesTask,
    TableDeleteTask,
    TableTask,
    draw_distinct,
    with_ids,
)

__all__ = ["BASE_RECIPES", "COMMON_INGREDIENTS", "random_recipe"]

BASE_RECIPES: tuple[tuple[str, str], ...] = (
    (
        "Spicy Tuna Wraps",
        "Mix canned tuna with mayo and sriracha. Spread on tortillas, add lettuce and "
        "cucumber slices, roll up.",
    ),
    (
        "Avocado Toast with Egg",
        "Toast bread, top with mashed avocado, a fried egg, salt, pepper, and chili flakes.",
    ),
    (
        "Greek Salad Pita Pockets",
        "Fill pita pockets with lettuce, cucumber, tomato, feta, olives, and Greek dressing.",
    ),
    (
        "Quick Fried Rice",
        "Sauté cooked rice with vegetables, add soy sauce and scrambled eggs. Toss until hot.",
    ),
    (
        "Pesto Pasta with Peas",
        "Cook pasta, stir in pesto sauce and cooked peas. Add Parmesan cheese before serving.",
    ),
    (
        "BBQ Chicken Quesadillas",
        "Mix shredded cooked chicken with BBQ sauce. Place on tortillas with cheese, fold and "
        "cook until crispy.",
    ),
    (
        "Tomato Basil Bruschetta",
        "Top sliced baguette with a mix of chopped tomatoes, basil, garlic, olive oil, salt, "
        "and pepper.",
    ),
    (
        "Lemon Garlic Tilapia",
        "Sauté tilapia in butter, add lemon juice and garlic. Serve with steamed vegetables.",
    ),
    (
        "Turkey and Cheese Panini",
        "Layer turkey and cheese on bread, grill in a panini press until golden.",
    ),
    (
        "Veggie and Hummus Sandwich",
        "Spread hummus on bread, add cucumber, bell pepper, carrot, and lettuce.",
    ),
    (
        "Mango Chicken Curry",
        "Cook chicken pieces in a pan, add onions, garlic, and ginger. Stir in curry powder, "
        "coconut milk, and mango pieces. Simmer until chicken is cooked.",
    ),
    (
        "Beef Stir Fry",
        "Stir-fry beef slices with broccoli, bell peppers, and onions in soy sauce and "
        "garlic. Serve over rice or noodles.",
    ),
    (
        "Shrimp Avocado Salad",
        "Mix cooked shrimp with avocado, tomatoes, cucumber, and onion. Dress with lime juice, "
        "olive oil, salt, and pepper.",
    ),
    (
        "Spinach and Feta Stuffed Chicken",
        "Stuff chicken breasts with a mixture of spinach, feta, garlic, and herbs. Bake until "
        "chicken is cooked through.",
    ),
    (
        "Zucchini Noodles with Pesto",
        "Spiralize zucchini into noodles, sauté with garlic, then mix with pesto sauce. Top "
        "with grated Parmesan cheese.",
    ),
    (
        'Cauliflower Fried "Rice"',
        "Pulse cauliflower in a food processor until it resembles rice. Sauté with "
        "vegetables, soy sauce, and add scrambled eggs.",
    ),
    (
        "Sweet Potato and Black Bean Tacos",
        "Roast sweet potato cubes, mix with black beans, and use as filling for tacos. Top "
        "with avocado and cilantro lime sauce.",
    ),
    (
        "Salmon with Dill Sauce",
        "Bake salmon fillets and serve with a sauce made from Greek yogurt, dill, lemon juice, "
        "and garlic.",
    ),
    (
        "Quinoa Salad with Vegetables",
        "Mix cooked quinoa with diced vegetables, feta cheese, and a lemon olive oil dressing.",
    ),
    (
        "Chickpea Vegetable Soup",
        "Sauté onions, carrots, and celery, add broth, canned tomatoes, and chickpeas. Simmer "
        "with spinach and seasonings.",
    ),
    (
        "Chicken Caesar Salad Wrap",
        "Toss chopped romaine lettuce with Caesar dressing, grilled chicken strips, and "
        "Parmesan cheese. Wrap in a large tortilla.",
    ),
    (
        "Vegetarian Chili",
        "Cook onions, garlic, bell peppers, and carrots. Add canned tomatoes, kidney beans, "
        "black beans, corn, and chili seasoning. Simmer until vegetables are tender.",
    ),
    (
        "Pan-Seared Salmon with Quinoa",
        "Pan-sear salmon fillets until crispy. Serve over cooked quinoa with a side of "
        "steamed asparagus.",
    ),
    (
        "Caprese Salad Skewers",
        "Thread cherry tomatoes, basil leaves, and mozzarella balls onto skewers. Drizzle with "
        "balsamic glaze.",
    ),
    (
        "Chicken Alfredo Pasta",
        "Cook fettuccine pasta, toss with Alfredo sauce and grilled chicken strips. Serve with "
        "a sprinkle of Parmesan cheese.",
    ),
    (
        "Stuffed Bell Peppers",
        "Mix cooked quinoa, black beans, corn, tomato sauce, and spices. Stuff into bell "
        "peppers and bake until tender.",
    ),
    (
        "Eggplant Parmesan",
        "Slice eggplant, bread, and fry. Layer in a baking dish with marinara sauce and "
        "mozzarella cheese. Bake until bubbly.",
    ),
    (
        "Thai Peanut Noodle Salad",
        "Toss cooked noodles with a Thai peanut sauce, sliced red bell peppers, cabbage, "
        "carrots, and cilantro.",
    ),
    (
        "Butternut Squash Soup",
        "Sauté onions and garlic, add cubed butternut squash and broth. Puree until smooth and "
        "season with nutmeg, salt, and pepper.",
    ),
    (
        "Baked Cod with Lemon and Dill",
        "Place cod fillets in a baking dish, season with lemon juice, dill, salt, and pepper. "
        "Bake until fish flakes easily.",
    ),
    (
        "Vegetable Stir Fry with Tofu",
        "Stir-fry tofu cubes until golden, add assorted vegetables and a stir-fry sauce. Serve "
        "over rice or noodles.",
    ),
    (
        "Classic Margherita Pizza",
        "Spread pizza dough with tomato sauce, top with slices of mozzarella cheese and fresh "
        "basil leaves. Bake until crust is golden.",
    ),
    (
        "Raspberry Almond Smoothie",
        "Blend together raspberries, almond milk, banana, and a scoop of almond butter until "
        "smooth.",
    ),
    (
        "Moroccan Chickpea Stew",
        "Sauté onions, garlic, carrots, and spices. Add canned chickpeas, diced tomatoes, and "
        "vegetable broth. Simmer until flavors meld.",
    ),
    (
        "Kale and Quinoa Salad",
        "Toss chopped kale, cooked quinoa, dried cranberries, sliced almonds, and feta cheese "
        "with a lemon vinaigrette.",
    ),
    (
        "Grilled Cheese with Tomato and Basil",
        "Butter bread slices, layer with cheese, tomato slices, and basil. Grill until bread "
        "is toasted and cheese is melted.",
    ),
    (
        "Sausage and Peppers Skillet",
        "Sauté sliced sausage, bell peppers, and onions until browned. Serve with mustard or "
        "on a hoagie roll.",
    ),
    (
        "Lentil Soup",
        "Cook onions, carrots, celery, garlic, and lentils in vegetable broth until lentils "
        "are tender. Season with thyme and bay leaves.",
    ),
    (
        "Garlic Butter Shrimp",
        "Sauté shrimp in butter and minced garlic until pink. Sprinkle with parsley and serve "
        "with lemon wedges.",
    ),
)
"""AndroidWorld's ``_RECIPES``: (title, directions)."""

DESCRIPTIONS = (
    "A quick and easy meal, perfect for busy weekdays.",
    "A delicious and healthy choice for any time of the day.",
    "An ideal recipe for experimenting with different flavors and ingredients.",
)
DIRECTION_ADDITIONS = (
    "Try adding a pinch of your favorite spices for extra flavor.",
    "Feel free to substitute with ingredients you have on hand.",
    "Garnish with fresh herbs for a more vibrant taste.",
)
INGREDIENT_NOTES = (
    "see directions",
    "as per recipe",
    "varies",
    "to preference",
    "quantities to taste",
    "as needed",
    "optional ingredients",
    "n/a",
    "various amounts",
    "adjustable",
    "to your liking",
    "flexible ingredients",
    "per individual taste",
    "as desired",
    "subject to change",
)
SERVINGS = ("1 serving", "2 servings", "3-4 servings", "6 servings", "8 servings")
PREP_TIMES = ("10 mins", "20 mins", "30 mins", "45 mins", "1 hrs", "2 hrs", "3 hrs", "4 hrs")

COMMON_INGREDIENTS = (
    "tuna",
    "mayonnaise",
    "sriracha",
    "tortillas",
    "lettuce",
    "cucumber",
    "bread",
    "avocado",
    "eggs",
    "salt",
    "pepper",
    "chili flakes",
    "pita bread",
    "tomatoes",
    "feta cheese",
    "olives",
    "Greek dressing",
    "rice",
    "vegetables",
    "soy sauce",
    "pesto sauce",
    "peas",
    "Parmesan cheese",
    "chicken",
    "BBQ sauce",
    "cheese",
    "baguette",
    "basil",
    "garlic",
    "olive oil",
    "tilapia",
    "butter",
    "lemon juice",
    "turkey",
    "hummus",
    "bell peppers",
    "carrots",
    "mango",
    "curry powder",
    "coconut milk",
    "beef",
    "broccoli",
    "onions",
    "shrimp",
    "spinach",
    "herbs",
    "zucchini",
    "cauliflower",
    "sweet potato",
    "black beans",
    "cilantro",
    "Greek yogurt",
    "dill",
    "quinoa",
    "chickpeas",
    "romaine lettuce",
    "Caesar dressing",
    "Parmesan",
    "kidney beans",
    "corn",
    "chili seasoning",
    "asparagus",
    "mozzarella balls",
    "balsamic glaze",
    "fettuccine",
    "Alfredo sauce",
    "tomato sauce",
    "eggplant",
    "marinara sauce",
    "mozzarella cheese",
    "noodles",
    "Thai peanut sauce",
    "red bell peppers",
    "cabbage",
    "butternut squash",
    "nutmeg",
    "tofu",
    "pizza dough",
    "raspberries",
    "almond milk",
    "banana",
    "almond butter",
    "lentils",
    "thyme",
    "bay leaves",
    "parsley",
    "lemon wedges",
    "ghee",
    "cardamom",
    "fenugreek",
    "rose water",
    "galangal",
    "lemongrass",
    "seaweed",
    "black truffle",
)
"""AndroidWorld's ``_COMMON_INGREDIENTS`` (repeats dropped; only a sample of its exotic tail)."""

_USABLE_INGREDIENTS = tuple(
    i
    for i in COMMON_INGREDIENTS
    if any(i in f"{d} {extra}".lower() for _, d in BASE_RECIPES for extra in DIRECTION_ADDITIONS)
)
"""Ingredients some recipe's directions mention: AndroidWorld can draw one that none does and
then has nothing to delete (the start state already passes); those are left out here."""

_FIELDS = tuple(name for name, _ in EDITOR_FIELDS)
_TEXT_FIELDS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("title", lambda r: r["title"]),
    ("description", lambda r: r["description"]),
    ("servings", lambda r: r["servings"]),
    ("preparationTime", lambda r: r["preparation_time"]),
    ("ingredients", lambda r: r["ingredients"]),
    ("directions", lambda r: r["directions"]),
)


def random_recipe(rng: random.Random) -> dict[str, Any]:
    """One of the base recipes with a random description, servings, preparation time,
    ingredient note and an extra sentence of directions (``_generate_random_recipe``)."""
    title, directions = rng.choice(BASE_RECIPES)
    return {
        "title": title,
        "description": rng.choice(DESCRIPTIONS),
        "servings": rng.choice(SERVINGS),
        "preparation_time": rng.choice(PREP_TIMES),
        "source": "",
        "ingredients": rng.choice(INGREDIENT_NOTES),
        "directions": f"{directions} {rng.choice(DIRECTION_ADDITIONS)}",
        "favorite": False,
    }


# -- templates -------------------------------------------------------------------------------


class _RecipeTask(TableTask):
    """Broccoli's ``recipes`` table; the search box is what Back closes first."""

    app = "recipes"
    app_title = "Broccoli"
    row_type = Recipe
    rows_attr = "recipes"
    row_noun = "recipe"
    key_field = "title"
    random_row = staticmethod(random_recipe)

    def _reset_list(self, data: RecipesData) -> None:
        data.searching, data.query = False, ""

    def _busy(self, data: RecipesData) -> bool:
        return data.searching

    def _list_order(self, data: RecipesData) -> list[str]:
        return [str(r.id) for r in data.shown()]


class _RecipeAdd(_RecipeTask, TableAddTask):
    template = "Add the following recipes into the Broccoli app:\n{recipes}"
    text_fields = _TEXT_FIELDS

    @staticmethod
    def _same(r: Recipe, t: dict[str, Any]) -> bool:
        return r.favorite == t["favorite"] and all(
            fuzzy_match(getattr(r, name), t[name]) for name in _FIELDS
        )

    def _form_ready(self, phone: PhoneState) -> bool:
        if phone.screen_name != "recipes/edit":
            return False
        form = phone.forms.get("recipes", {})
        t = self.params["targets"][0]
        return all(fuzzy_match(form.get(name, ""), t[name]) for name in _FIELDS)

    def _editor_step(self, phone: PhoneState, screen: UITree, t: dict[str, Any]) -> Action | None:
        current = phone.screen
        assert current is not None
        if current.name != "edit" or current.arg:
            return None
        form = phone.forms.get("recipes", {})
        for name in _FIELDS:
            action = type_into(screen, name, t[name], form)
            if action is not None:
                return action
        return reach(screen, handler="recipes.save")


@register
class RecipeAddSingleRecipe(_RecipeAdd):
    """Add one recipe given as CSV or a text block; 10 other recipes are already there."""

    name = "RecipeAddSingleRecipe"
    complexity = 2.4
    n_rows = 1


@register
class RecipeAddMultipleRecipes(_RecipeAdd):
    """Add several recipes. Adapted: 2 recipes instead of AndroidWorld's 3, so the scripted
    expert (8 actions per recipe) fits the 20-step episode."""

    name = "RecipeAddMultipleRecipes"
    complexity = 6
    n_rows = 2


@register
class RecipeAddMultipleRecipesFromMarkor(TableAddFromNoteTask, _RecipeAdd):
    """Add the recipes that ``recipes.txt`` (in Markor) lists; 10 others are already there.
    Adapted: 2 recipes instead of AndroidWorld's 3, so the expert fits 20 steps."""

    name = "RecipeAddMultipleRecipesFromMarkor"
    complexity = 6
    n_rows = 2
    source_name = "recipes.txt"
    noise_in_source = False
    template = "Add the recipes from recipes.txt in Markor to the Broccoli recipe app."


@register
class RecipeAddMultipleRecipesFromMarkor2(TableAddFromNoteTask, _RecipeAdd):
    """Add the recipes of ``recipes.txt`` that take a given preparation time: the note lists
    them among 40 others (with other times), which are already in the app. Adapted: 2 target
    recipes instead of AndroidWorld's 3, so the expert fits 20 steps."""

    name = "RecipeAddMultipleRecipesFromMarkor2"
    complexity = 6
    n_rows = 2
    n_noise = 40
    source_name = "recipes.txt"
    template = (
        "Add the recipes from recipes.txt in Markor that take {prep_time} to prepare into the "
        "Broccoli recipe app."
    )

    @classmethod
    def draw_rows(cls, rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        prep_time = rng.choice(PREP_TIMES)
        targets = draw_distinct(
            rng,
            cls.n_rows,
            random_recipe,
            keep=lambda r: r["preparation_time"] == prep_time,
            key=lambda r: r["title"],
        )
        noise = draw_distinct(
            rng, cls.n_noise, random_recipe, keep=lambda r: r["preparation_time"] != prep_time
        )
        return targets, noise

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        params = super().generate_params(rng)
        params["prep_time"] = params["targets"][0]["preparation_time"]
        return params


@register
class RecipeAddMultipleRecipesFromImage(TableAddFromPictureTask, _RecipeAdd):
    """Add the recipes that the picture ``recipes.jpg`` shows (only as pixels: a vision
    task). Adapted: 2 recipes instead of AndroidWorld's 3, so the expert fits 20 steps."""

    name = "RecipeAddMultipleRecipesFromImage"
    complexity = 6
    n_rows = 2
    source_name = "recipes.jpg"
    template = "Add the recipes from recipes.jpg in Simple Gallery Pro to the Broccoli recipe app."


class _RecipeDelete(_RecipeTask, TableDeleteTask):
    """Delete recipes named in the goal; titles are unique in the starting list."""

    template = "Delete the following recipes from Broccoli app: {titles}."
    targets_first = False


@register
class RecipeDeleteSingleRecipe(_RecipeDelete):
    """Delete one recipe. Adapted: 4-7 other recipes are listed too (AndroidWorld has only
    the target), so deleting everything fails."""

    name = "RecipeDeleteSingleRecipe"
    complexity = 1
    n_rows = 1
    n_noise = (4, 7)


@register
class RecipeDeleteSingleWithRecipeWithNoise(_RecipeDelete):
    """Delete one recipe among 29 others."""

    name = "RecipeDeleteSingleWithRecipeWithNoise"
    complexity = 2
    n_rows = 1
    n_noise = (29, 29)


@register
class RecipeDeleteMultipleRecipes(_RecipeDelete):
    """Delete three recipes. Adapted: 4-7 other recipes are listed too (AndroidWorld has only
    the targets), so deleting everything fails."""

    name = "RecipeDeleteMultipleRecipes"
    complexity = 2.4
    n_rows = 3
    n_noise = (4, 7)


@register
class RecipeDeleteMultipleRecipesWithNoise(_RecipeDelete):
    """Delete three recipes among 29 others."""

    name = "RecipeDeleteMultipleRecipesWithNoise"
    complexity = 3.4
    n_rows = 3
    n_noise = (29, 29)


@register
class RecipeDeleteMultipleRecipesWithConstraint(_RecipeDelete):
    """Delete every recipe whose directions mention an ingredient (3 of them) among 29 that
    do not. Titles may repeat here: it is the directions that decide."""

    name = "RecipeDeleteMultipleRecipesWithConstraint"
    complexity = 4
    template = "Delete the recipes from Broccoli app that use {ingredient} in the directions."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        ingredient = rng.choice(_USABLE_INGREDIENTS)
        noise = draw_distinct(
            rng, 29, random_recipe, keep=lambda r: ingredient not in r["directions"].lower()
        )
        targets = draw_distinct(
            rng, 3, random_recipe, keep=lambda r: ingredient in r["directions"].lower()
        )
        all_rows = with_ids(rng, targets + noise)
        return {
            "ingredient": ingredient,
            "rows": all_rows,
            "targets": [r["id"] for r in all_rows if ingredient in r["directions"].lower()],
        }


class _RecipeDeleteDuplicates(_RecipeTask, TableDeleteDuplicatesTask):
    """Two identical recipes; exactly one must go and nothing else may change."""

    complexity = 1
    template = (
        "Delete all but one of any recipes in the Broccoli app that are exact duplicates, "
        "ensuring at least one instance of each unique recipe remains"
    )

    @classmethod
    def _draw(cls, rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        rows = draw_distinct(rng, 6, random_recipe)
        return rows[-1], rows[:-1]


def _variants(
    rng: random.Random,
    n: int,
    target: dict[str, Any],
    taken: list[dict[str, Any]],
    same: Callable[[dict[str, Any]], bool],
) -> list[dict[str, Any]]:
    """``n`` recipes that share what ``same`` asks of ``target`` but differ from it and from
    each other (AndroidWorld draws these with replacement, which can add a second duplicate
    pair by chance; here every noise row is unique)."""
    return draw_distinct(rng, n, random_recipe, keep=same, taken=[target, *taken])


@register
class RecipeDeleteDuplicateRecipes(_RecipeDeleteDuplicates):
    """One duplicated recipe among 5 others."""

    name = "RecipeDeleteDuplicateRecipes"


@register
class RecipeDeleteDuplicateRecipes2(_RecipeDeleteDuplicates):
    """One duplicated recipe among 10 others, 4 of them variants with the same title."""

    name = "RecipeDeleteDuplicateRecipes2"
    complexity = 2.4

    @classmethod
    def _draw(cls, rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        noise = draw_distinct(rng, 7, random_recipe)
        target = noise.pop()
        noise += _variants(rng, 4, target, noise, lambda r: r["title"] == target["title"])
        return target, noise


@register
class RecipeDeleteDuplicateRecipes3(_RecipeDeleteDuplicates):
    """One duplicated recipe among 30 others: 3 'Avocado Toast with Egg' variants sort to the
    top, and 9 variants share the target's title and description (only details differ)."""

    name = "RecipeDeleteDuplicateRecipes3"
    complexity = 3.4

    @classmethod
    def _draw(cls, rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        avocado = "Avocado Toast with Egg"
        noise = draw_distinct(rng, 22, random_recipe, keep=lambda r: r["title"] != avocado)
        target = noise.pop()
        noise += draw_distinct(rng, 3, random_recipe, keep=lambda r: r["title"] == avocado)
        noise += _variants(
            rng,
            30 - len(noise),
            target,
            noise,
            lambda r: r["title"] == target["title"] and r["description"] == target["description"],
        )
        return target, noise
