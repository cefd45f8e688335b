"""Contacts (Simple Contacts Pro): a list, a contact editor with phone labels, details."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.phone import AppView, Dialog, PhoneApp, PhoneState, Screen, icon

__all__ = ["Contact", "ContactsApp", "ContactsData", "digits"]

PHONE_LABELS = ("Mobile", "Home", "Work", "Other")


def digits(number: str) -> str:
    """Only the digits of a phone number (AndroidWorld's ``clean_phone_number``)."""
    return re.sub(r"\D", "", number)


@dataclass
class Contact:
    first: str
    last: str = ""
    phone: str = ""
    label: str = "Mobile"
    email: str = ""

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}".strip()


@dataclass
class ContactsData:
    contacts: list[Contact] = field(default_factory=list)

    def find(self, name: str) -> Contact | None:
        for c in self.contacts:
            if c.name.lower() == name.strip().lower():
                return c
        return None


class ContactsApp(PhoneApp):
    key = "contacts"
    launcher_order = 10
    title = "Contacts"
    package = "com.simplemobiletools.contacts.pro"
    aliases = (
        "simple contacts",
        "simple contacts pro",
        "contacts app",
        "com.google.android.contacts",
    )

    def initial_data(self) -> ContactsData:
        return ContactsData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        data: ContactsData = self.data(phone)
        if screen.name == "main":
            rows: list[Block] = [
                self.row(c.name, "open", str(i), resource_id="contact_row")
                for i, c in sorted(enumerate(data.contacts), key=lambda ic: ic[1].name.lower())
            ]
            if not rows:
                rows = [Block("text", "No contacts found. Tap + to create one.")]
            fab = icon("Create contact", "contacts.new", "fab")
            return AppView("Contacts", rows, fab=fab)
        if screen.name == "edit":
            form = self.form(phone)
            label = form.get("label", "Mobile")
            return AppView(
                "Edit contact" if screen.arg else "Create contact",
                [
                    self.field("first", "First name", phone),
                    self.field("last", "Last name", phone),
                    self.field("phone", "Phone", phone),
                    self.button(
                        label, "pick_label", resource_id="phone_label", description=f"{label} Phone"
                    ),
                    self.field("email", "Email", phone),
                ],
                actions=[icon("Save", "contacts.save", "save")],
            )
        contact = data.contacts[int(screen.arg)]
        return AppView(
            contact.name,
            [
                Block("heading", contact.name, resource_id="contact_name"),
                Block(
                    "text",
                    f"{contact.phone} ({contact.label})" if contact.phone else "No phone number",
                    resource_id="contact_phone",
                ),
                Block("text", contact.email or "No email"),
                self.button("Edit", "edit", screen.arg),
                self.button("Delete", "delete", screen.arg),
            ],
        )

    def on_click_new(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "edit", "", form={"label": "Mobile"})

    def on_click_open(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "detail", element.handler_arg)

    def on_click_edit(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        c: Contact = self.data(phone).contacts[int(element.handler_arg)]
        self.push(
            phone,
            "edit",
            element.handler_arg,
            form={
                "first": c.first,
                "last": c.last,
                "phone": c.phone,
                "label": c.label,
                "email": c.email,
            },
        )

    def on_click_pick_label(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.dialog = Dialog(
            "Phone label", buttons=[(label, "contacts.set_label", label) for label in PHONE_LABELS]
        )

    def on_click_set_label(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.form(phone)["label"] = element.handler_arg
        phone.dialog = None

    def on_click_save(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        form = self.form(phone)
        first, last = form.get("first", "").strip(), form.get("last", "").strip()
        if not first and not last:
            raise InvalidAction("cannot save a contact without a name")
        contact = Contact(
            first,
            last,
            form.get("phone", "").strip(),
            form.get("label", "Mobile"),
            form.get("email", "").strip(),
        )
        data: ContactsData = self.data(phone)
        screen = phone.stacks[self.key][-1]
        if screen.arg:
            data.contacts[int(screen.arg)] = contact
        else:
            data.contacts.append(contact)
        phone.forms[self.key] = {}
        self.pop(phone)
        phone.toast = "Contact saved"

    def on_click_delete(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.ask_delete(
            phone, "Delete contact?", "This contact will be removed.", element.handler_arg
        )

    def on_click_confirm_delete(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        del self.data(phone).contacts[int(element.handler_arg)]
        phone.dialog = None
        self.pop(phone)
        phone.toast = "Contact deleted"
