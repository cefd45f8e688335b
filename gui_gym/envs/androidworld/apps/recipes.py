"""Broccoli (``com.flauschcode.broccoli``): a recipe list sorted by title with search, a recipe
editor, recipe details with a favourite star, and deletion with a confirm dialog.

Fields follow the app's ``recipes`` table: title, description, servings, preparation time,
source, ingredients, directions and favourite. Rows are immutable; edits replace a row.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.rows import ImmutableRow, RowTable
from gui_gym.envs.androidworld.phone import AppView, PhoneApp, PhoneState, Screen, icon

__all__ = ["EDITOR_FIELDS", "Recipe", "RecipesApp", "RecipesData"]

EDITOR_FIELDS = (
    ("title", "Title"),
    ("description", "Description"),
    ("servings", "Servings"),
    ("preparation_time", "Preparation time"),
    ("source", "Source"),
    ("ingredients", "Ingredients"),
    ("directions", "Directions"),
)
"""Editor fields in screen order: (Recipe attribute, hint)."""


@dataclass(frozen=True)
class Recipe(ImmutableRow):
    """One row of Broccoli's ``recipes`` table."""

    id: int
    title: str
    description: str = ""
    servings: str = ""
    preparation_time: str = ""
    source: str = ""
    ingredients: str = ""
    directions: str = ""
    favorite: bool = False

    @property
    def content(self) -> tuple[str, str, str, str, str, str, str, bool]:
        """Everything but the id (what makes two rows duplicates)."""
        return (
            self.title,
            self.description,
            self.servings,
            self.preparation_time,
            self.source,
            self.ingredients,
            self.directions,
            self.favorite,
        )

    def matches(self, query: str) -> bool:
        q = query.strip().lower()
        return not q or any(
            q in text.lower()
            for text in (self.title, self.description, self.ingredients, self.directions)
        )


@dataclass
class RecipesData(RowTable[Recipe]):
    """The app's data: the rows, the next id, and the search box state."""

    rows_attr = "recipes"
    row_type = Recipe

    recipes: list[Recipe] = field(default_factory=list)
    next_id: int = 1
    searching: bool = False
    query: str = ""

    def ordered(self) -> list[Recipe]:
        """Display order: by title (case-insensitive), then oldest first."""
        return sorted(self.recipes, key=lambda r: (r.title.lower(), r.id))

    def shown(self) -> list[Recipe]:
        """The rows the list shows (filtered by the search query while searching)."""
        rows = self.ordered()
        if self.searching and self.query.strip():
            rows = [r for r in rows if r.matches(self.query)]
        return rows


@functools.lru_cache(maxsize=4096)
def _row(r: Recipe) -> Block:
    """A recipe's list row (rows are immutable, so they are cached)."""
    text = f"{r.title} — {r.description}" if r.description else r.title
    return Block(
        "listitem",
        text,
        resource_id="recipe_row",
        clickable=True,
        handler="recipes.open",
        handler_arg=str(r.id),
        gap=2,
    )


class RecipesApp(PhoneApp):
    key = "recipes"
    title = "Broccoli"
    package = "com.flauschcode.broccoli"
    aliases = ("broccoli", "broccoli app", "recipes", "broccoli recipe app", "recipe app")
    launcher_order = 45

    def initial_data(self) -> RecipesData:
        return RecipesData()

    # -- views ---------------------------------------------------------------------------------

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        data: RecipesData = self.data(phone)
        if screen.name == "edit":
            return AppView(
                "Edit recipe" if screen.arg else "New recipe",
                [self.field(name, hint, phone) for name, hint in EDITOR_FIELDS],
                actions=[icon("Save", "recipes.save", "save")],
            )
        if screen.name == "detail":
            return self._detail(data, screen)
        content: list[Block] = []
        if data.searching:
            content.append(
                Block(
                    "input",
                    data.query,
                    description="Search recipes",
                    resource_id="search_box",
                    editable=True,
                    clickable=True,
                    focused=phone.focus == "recipes.search",
                    handler="recipes.search",
                    handler_arg="search",
                )
            )
        rows = data.shown()
        content.extend(_row(r) for r in rows)
        if not rows:
            content.append(
                Block("text", "No matching recipes." if data.recipes else "No recipes yet.")
            )
        return AppView(
            "Recipes",
            content,
            actions=[] if data.searching else [icon("Search", "recipes.open_search", "search")],
            fab=icon("Add recipe", "recipes.new", "fab"),
            back=data.searching,
        )

    def _detail(self, data: RecipesData, screen: Screen) -> AppView:
        r = data.get(int(screen.arg))
        if r is None:
            return AppView("Recipe", [Block("text", "This recipe was deleted.")])
        content = [Block("heading", r.title, resource_id="recipe_title")]
        if r.description:
            content.append(Block("text", r.description, resource_id="recipe_description"))
        content += [
            Block("text", f"Servings: {r.servings or '-'}", resource_id="recipe_servings"),
            Block(
                "text",
                f"Preparation time: {r.preparation_time or '-'}",
                resource_id="recipe_time",
            ),
        ]
        if r.source:
            content.append(Block("text", f"Source: {r.source}", resource_id="recipe_source"))
        content += [
            Block("heading", "Ingredients"),
            Block("text", r.ingredients or "-", resource_id="recipe_ingredients"),
            Block("heading", "Directions"),
            Block("text", r.directions or "-", resource_id="recipe_directions"),
        ]
        return AppView(
            "Recipe",
            content,
            actions=[
                icon(
                    "Remove from favorites" if r.favorite else "Add to favorites",
                    "recipes.favorite",
                    "favorite",
                    screen.arg,
                    checkable=True,
                    checked=r.favorite,
                ),
                icon("Edit", "recipes.edit", "edit", screen.arg),
                icon("Delete", "recipes.delete", "delete", screen.arg),
            ],
        )

    # -- navigation ----------------------------------------------------------------------------

    def pop(self, phone: PhoneState) -> None:
        data: RecipesData = self.data(phone)
        stack = phone.stacks.get(self.key, [])
        if data.searching and stack and stack[-1].name == "main":
            data.searching = False  # back closes the search box first
            data.query = ""
            phone.focus = ""
            return
        super().pop(phone)

    # -- handlers ------------------------------------------------------------------------------

    def on_click_open_search(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: RecipesData = self.data(phone)
        data.searching = True
        phone.focus = "recipes.search"

    def on_click_search(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.focus = "recipes.search"

    def on_input_search(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: RecipesData = self.data(phone)
        data.query = action.text or ""
        phone.focus = "recipes.search"
        phone.stacks[self.key][-1].scroll = 0

    def on_click_new(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "edit", "", form={})

    def on_click_open(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "detail", element.handler_arg)

    def on_click_edit(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        r = self.data(phone).get(int(element.handler_arg))
        if r is None:
            raise InvalidAction("this recipe no longer exists")
        self.push(
            phone,
            "edit",
            element.handler_arg,
            form={name: getattr(r, name) for name, _ in EDITOR_FIELDS},
        )

    def on_click_favorite(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: RecipesData = self.data(phone)
        recipe_id = int(element.handler_arg)
        data.recipes = [
            replace(r, favorite=not r.favorite) if r.id == recipe_id else r for r in data.recipes
        ]

    def on_click_save(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        form = self.form(phone)
        fields = {name: form.get(name, "").strip() for name, _ in EDITOR_FIELDS}
        if not fields["title"]:
            raise InvalidAction("a recipe needs a title")
        data: RecipesData = self.data(phone)
        screen = phone.stacks[self.key][-1]
        if screen.arg:
            recipe_id = int(screen.arg)
            data.recipes = [replace(r, **fields) if r.id == recipe_id else r for r in data.recipes]
        else:
            data.add(**fields)
        phone.forms[self.key] = {}
        self.pop(phone)
        phone.toast = "Recipe saved"

    def on_click_delete(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.ask_delete(
            phone, "Delete recipe?", "This recipe will be deleted permanently.", element.handler_arg
        )

    def on_click_confirm_delete(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        data: RecipesData = self.data(phone)
        recipe_id = int(element.handler_arg)
        data.recipes = [r for r in data.recipes if r.id != recipe_id]
        phone.dialog = None
        self.pop(phone)
        phone.toast = "Recipe deleted"
