"""Contacts tasks (AndroidWorld ``task_evals/single/contacts.py``)."""

from __future__ import annotations

import random
from typing import Any

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.contacts import ContactsData, digits
from gui_gym.envs.androidworld.data import random_name, random_phone
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    fuzzy_match,
    go_to_root,
    milestone,
    open_app,
    reach,
    register,
    type_into,
)

_DRAFT_FIRST = ("Hugo", "Maria", "Liam", "Sofia", "Noah", "Emma", "Omar", "Chloe", "Ivan", "Zara")
_DRAFT_LAST = (
    "Pereira",
    "Nguyen",
    "Schmidt",
    "Okafor",
    "Rossi",
    "Kim",
    "Dubois",
    "Haddad",
    "Silva",
    "Novak",
)


def _open_editor(phone: PhoneState, screen: UITree) -> Action | None:
    """Expert path to an empty 'Create contact' editor; None once there."""
    action = open_app(phone, "contacts", "Contacts")
    if action is not None:
        return action
    current = phone.screen
    assert current is not None
    if current.name == "edit" and not current.arg:
        return None
    if current.name != "main":
        return go_to_root(phone, "contacts") or Action(ActionType.GOBACK)
    return reach(screen, handler="contacts.new")


@register
class ContactsAddContact(AndroidWorldTask):
    """Create a contact with a name and phone number (checked by name + phone digits)."""

    name = "ContactsAddContact"
    app = "contacts"
    complexity = 1.2
    template = "Create a new contact for {name}. Their number is {number}."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"name": random_name(rng), "number": random_phone(rng)}

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        from gui_gym.envs.androidworld.apps.contacts import Contact

        data: ContactsData = phone.apps["contacts"]
        for _ in range(rng.randint(2, 6)):  # noise contacts
            first, last = random_name(rng).split(" ", 1)
            data.contacts.append(Contact(first, last, random_phone(rng)))

    def _form_ready(self, phone: PhoneState) -> bool:
        form = phone.forms.get("contacts", {})
        first, last = self.params["name"].split(" ", 1)
        return (
            form.get("first") == first
            and form.get("last") == last
            and digits(form.get("phone", "")) == digits(self.params["number"])
        )

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("editor_opened", lambda p: p.screen_name == "contacts/edit"),
            milestone("details_entered", self._form_ready),
            self.done_milestone("contact_saved"),
        ]

    def score(self, phone: PhoneState) -> float:
        want = (self.params["name"].lower(), digits(self.params["number"]))
        data: ContactsData = phone.apps["contacts"]
        return float(any((c.name.lower(), digits(c.phone)) == want for c in data.contacts))

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if not self._form_ready(phone) or phone.screen_name != "contacts/edit":
            action = _open_editor(phone, screen)
            if action is not None:
                return action
            first, last = self.params["name"].split(" ", 1)
            form = phone.forms.get("contacts", {})
            for field_name, value in (
                ("first", first),
                ("last", last),
                ("phone", self.params["number"]),
            ):
                action = type_into(screen, field_name, value, form)
                if action is not None:
                    return action
        return reach(screen, handler="contacts.save")


@register
class ContactsNewContactDraft(AndroidWorldTask):
    """Fill in a new contact without saving it (AndroidWorld checks the editor fields)."""

    name = "ContactsNewContactDraft"
    app = "contacts"
    complexity = 1.2
    template = (
        "Go to the new contact screen and enter the following details: First Name: {first}, "
        "Last Name: {last}, Phone: {phone}, Phone Label: {phone_label}. Do NOT hit save."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {
            "first": rng.choice(_DRAFT_FIRST),
            "last": rng.choice(_DRAFT_LAST),
            "phone": f"{rng.randint(100, 999)}-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
            "phone_label": rng.choice(("Home", "Work")),
        }

    def _fields_ok(self, phone: PhoneState) -> bool:
        form = phone.forms.get("contacts", {})
        return (
            fuzzy_match(form.get("first", ""), self.params["first"])
            and fuzzy_match(form.get("last", ""), self.params["last"])
            and digits(form.get("phone", "")) == digits(self.params["phone"])
        )

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("editor_opened", lambda p: p.screen_name == "contacts/edit"),
            milestone("fields_entered", self._fields_ok),
            self.done_milestone("label_set"),
        ]

    def score(self, phone: PhoneState) -> float:
        # The draft must be on screen, filled in, labelled, and NOT saved.
        on_editor = phone.screen_name == "contacts/edit" and phone.stacks["contacts"][-1].arg == ""
        label_ok = phone.forms.get("contacts", {}).get("label") == self.params["phone_label"]
        name = f"{self.params['first']} {self.params['last']}".lower()
        saved = any(c.name.lower() == name for c in phone.apps["contacts"].contacts)
        return float(
            on_editor and self._fields_ok(phone) and label_ok and not saved and phone.dialog is None
        )

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if phone.dialog is not None:
            return reach(
                screen, handler="contacts.set_label", handler_arg=self.params["phone_label"]
            )
        action = _open_editor(phone, screen)
        if action is not None:
            return action
        form = phone.forms.get("contacts", {})
        for field_name in ("first", "last", "phone"):
            action = type_into(screen, field_name, self.params[field_name], form)
            if action is not None:
                return action
        if phone.focus:
            return Action(ActionType.GOBACK)  # hide the keyboard to reach the label button
        return reach(screen, handler="contacts.pick_label")
