"""Simple SMS Messenger (``com.simplemobiletools.smsmessenger``): conversations, a thread
view with message bubbles and a compose box, and a "new conversation" screen.

The conversation list shows one row per address, newest first, named after the contact whose
number matches (from the Contacts app) or the number itself. The + button opens a recipient
box ("Add contact or number"): matching contacts are listed, and a typed number offers a
"Send to" row (the check icon or ENTER does the same). A thread lists its messages oldest
first and keeps the compose box in view; Send adds an outgoing message stamped with the device
time (marked failed while airplane mode is on).

A failed message reads "Not sent"; tapping it offers Resend or Delete. A long press on any
message offers Copy text, Delete and (for sent ones) Resend; a long press on a text box offers
Paste. Addresses are stored as typed without spaces, dashes, dots or parentheses, the form
AndroidWorld's checks compare.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.contacts import digits
from gui_gym.envs.androidworld.apps.files import short_date
from gui_gym.envs.androidworld.apps.rows import ImmutableRow, RowTable
from gui_gym.envs.androidworld.phone import AppView, Dialog, PhoneApp, PhoneState, Screen, icon

__all__ = ["Message", "SmsApp", "SmsData", "clean_address", "is_number"]

_PINNED = 10**6  # a scroll offset past the end: the view clamps it to "show the newest"
_NUMBER = re.compile(r"\+?\d{3,15}")


def clean_address(text: str) -> str:
    """An address as stored: spaces, dashes, dots and parentheses removed."""
    return re.sub(r"[\s\-().]", "", text)


def is_number(text: str) -> bool:
    """Whether ``text`` (cleaned) is a phone number one can text."""
    return _NUMBER.fullmatch(clean_address(text)) is not None


@dataclass(frozen=True)
class Message(ImmutableRow):
    """One SMS. ``status`` is ``received`` for incoming, ``sent`` or ``failed`` for outgoing;
    ``time`` is ``"YYYY-MM-DD HH:MM"``."""

    id: int
    address: str
    body: str
    time: str
    outgoing: bool = False
    status: str = "received"


@dataclass
class SmsData(RowTable[Message]):
    """All messages (any order; ``id`` grows with insertion)."""

    rows_attr = "messages"
    row_type = Message

    messages: list[Message] = field(default_factory=list)
    next_id: int = 1

    def add(
        self, address: str, body: str, time: str, outgoing: bool = False, status: str = ""
    ) -> Message:
        status = status or ("sent" if outgoing else "received")
        message = Message(self.next_id, clean_address(address), body, time, outgoing, status)
        self.next_id += 1
        self.messages.append(message)
        return message

    def sent(self) -> list[Message]:
        """Successfully sent messages, oldest first (the ``content://sms/sent`` box)."""
        return sorted(
            (m for m in self.messages if m.outgoing and m.status == "sent"),
            key=lambda m: (m.time, m.id),
        )

    def thread(self, address: str) -> list[Message]:
        return sorted(
            (m for m in self.messages if m.address == address), key=lambda m: (m.time, m.id)
        )

    def threads(self) -> list[tuple[str, Message]]:
        """``(address, newest message)`` per conversation, newest conversation first."""
        last: dict[str, Message] = {}
        for m in self.messages:
            seen = last.get(m.address)
            if seen is None or (m.time, m.id) > (seen.time, seen.id):
                last[m.address] = m
        return sorted(last.items(), key=lambda am: (am[1].time, am[1].id), reverse=True)


def contact_names(phone: PhoneState) -> dict[str, str]:
    """Contact name by the digits of their number."""
    contacts = getattr(phone.apps.get("contacts"), "contacts", ())
    return {digits(c.phone): c.name for c in contacts if c.phone}


class SmsApp(PhoneApp):
    key = "sms"
    title = "Simple SMS Messenger"
    package = "com.simplemobiletools.smsmessenger"
    aliases = (
        "sms",
        "messages",
        "simple sms",
        "simple sms messenger app",
        "sms messenger",
        "messaging",
        "text messages",
    )
    launcher_order = 22

    def initial_data(self) -> SmsData:
        return SmsData()

    # -- views ---------------------------------------------------------------------------------

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        if screen.name == "thread":
            return self._thread(phone, screen.arg)
        if screen.name == "new":
            return self._new(phone)
        data: SmsData = self.data(phone)
        names = contact_names(phone)
        rows: list[Block] = []
        for address, last in data.threads():
            if last.status == "failed":
                snippet = f"Not sent: {last.body}"
            else:
                snippet = f"You: {last.body}" if last.outgoing else last.body
            if len(snippet) > 60:
                snippet = snippet[:57] + "..."
            rows.append(
                Block(
                    "listitem",
                    names.get(digits(address), address),
                    description=f"{snippet} · {short_date(last.time)}",
                    resource_id="conversation_row",
                    clickable=True,
                    handler="sms.open",
                    handler_arg=address,
                    gap=2,
                )
            )
        if not rows:
            rows.append(Block("text", "No stored conversations have been found"))
        return AppView(
            "Simple SMS Messenger",
            rows,
            fab=icon("Start a conversation", "sms.new", "fab"),
        )

    def _new(self, phone: PhoneState) -> AppView:
        typed = self.form(phone).get("recipient", "")
        content = [self.field("recipient", "Add contact or number…", phone)]
        if is_number(typed):
            number = clean_address(typed)
            content.append(
                Block(
                    "listitem",
                    f"Send to {number}",
                    resource_id="send_to_number",
                    clickable=True,
                    handler="sms.start",
                    handler_arg=number,
                    gap=2,
                )
            )
        query = typed.strip().lower()
        query_digits = digits(typed)
        contacts = getattr(phone.apps.get("contacts"), "contacts", ())
        for c in sorted(contacts, key=lambda c: c.name.lower()):
            if not c.phone:
                continue
            if (
                query
                and query not in c.name.lower()
                and not (query_digits and query_digits in digits(c.phone))
            ):
                continue
            content.append(
                Block(
                    "listitem",
                    c.name,
                    description=c.phone,
                    resource_id="contact_row",
                    clickable=True,
                    handler="sms.start",
                    handler_arg=clean_address(c.phone),
                    gap=2,
                )
            )
        return AppView(
            "New conversation",
            content,
            actions=[icon("Confirm", "sms.confirm", "confirm")],
        )

    def _thread(self, phone: PhoneState, address: str) -> AppView:
        data: SmsData = self.data(phone)
        content: list[Block] = []
        for m in data.thread(address):
            when = short_date(m.time)
            if not m.outgoing:
                note = f"Received {when}"
            elif m.status == "failed":
                note = "Not sent. Tap to retry"
            else:
                note = f"Sent {when}"
            content.append(
                Block(
                    "text",
                    m.body,
                    description=note,
                    resource_id="message_out" if m.outgoing else "message_in",
                    indent=56 if m.outgoing else 0,
                    clickable=m.status == "failed",
                    long_clickable=True,
                    handler="sms.message",
                    handler_arg=str(m.id),
                )
            )
        if not content:
            content.append(Block("text", "No messages yet", resource_id="empty"))
        content += [
            replace(self.field("message", "Type a message…", phone), long_clickable=True),
            self.button("Send", "send", address, resource_id="send"),
        ]
        return AppView(contact_names(phone).get(digits(address), address), content)

    # -- helpers -------------------------------------------------------------------------------

    def _pin(self, phone: PhoneState) -> None:
        """Keep a thread scrolled to its newest message and the compose box."""
        stack = phone.stacks.get(self.key)
        if stack and stack[-1].name == "thread":
            stack[-1].scroll = _PINNED

    def _open_thread(self, phone: PhoneState, address: str) -> None:
        stack = phone.stacks[self.key]
        if stack[-1].name == "new":
            stack.pop()
        self.push(phone, "thread", address, form={})
        self._pin(phone)

    def _send(self, phone: PhoneState, address: str, body: str) -> None:
        data: SmsData = self.data(phone)
        status = "failed" if phone.system.airplane else "sent"
        data.add(address, body, phone.system.now, outgoing=True, status=status)
        phone.toast = "Message not sent" if status == "failed" else ""

    def _message(self, phone: PhoneState, arg: str) -> Message:
        message = self.data(phone).get(int(arg))
        if message is None:
            raise InvalidAction("this message no longer exists")
        return message

    # -- handlers ------------------------------------------------------------------------------

    def on_click_field(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        super().on_click_field(phone, element, action)
        self._pin(phone)

    def on_input_field(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        super().on_input_field(phone, element, action)
        self._pin(phone)

    def on_long_click_field(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        buttons = []
        if phone.system.clipboard:
            buttons.append(("Paste", "sms.paste", element.handler_arg))
        buttons.append(("Cancel", "sms.cancel", ""))
        phone.dialog = Dialog("Text", buttons=buttons)

    def on_click_paste(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        name = element.handler_arg
        form = self.form(phone)
        form[name] = form.get(name, "") + phone.system.clipboard
        phone.dialog = None
        phone.focus = f"sms.{name}"
        self._pin(phone)

    def on_click_open(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._open_thread(phone, element.handler_arg)

    def on_click_new(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "new", form={"recipient": ""})
        phone.focus = "sms.recipient"

    def on_click_start(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._open_thread(phone, element.handler_arg)

    def _confirm(self, phone: PhoneState) -> None:
        typed = self.form(phone).get("recipient", "")
        if is_number(typed):
            self._open_thread(phone, clean_address(typed))
            return
        query = typed.strip().lower()
        contacts = getattr(phone.apps.get("contacts"), "contacts", ())
        found = [c for c in contacts if c.phone and query and query in c.name.lower()]
        if len(found) != 1:
            raise InvalidAction("type a phone number or pick a contact from the list")
        self._open_thread(phone, clean_address(found[0].phone))

    def on_click_confirm(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._confirm(phone)

    def on_enter(self, phone: PhoneState, field_name: str) -> None:
        if field_name == "recipient" and self.form(phone).get("recipient", "").strip():
            self._confirm(phone)
            return
        super().on_enter(phone, field_name)

    def on_click_send(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        form = self.form(phone)
        body = form.get("message", "")
        if not body.strip():
            raise InvalidAction("type a message first")
        self._send(phone, element.handler_arg, body)
        form["message"] = ""
        self._pin(phone)

    def on_click_message(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        m = self._message(phone, element.handler_arg)
        if m.status != "failed":
            phone.toast = f"{'Sent' if m.outgoing else 'Received'} {m.time}"
            return
        phone.dialog = Dialog(
            "Message not sent",
            m.body,
            [
                ("Cancel", "sms.cancel", ""),
                ("Delete", "sms.delete_message", str(m.id)),
                ("Resend", "sms.resend", str(m.id)),
            ],
        )

    def on_long_click_message(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        m = self._message(phone, element.handler_arg)
        buttons = [
            ("Copy text", "sms.copy", str(m.id)),
            ("Delete", "sms.delete_message", str(m.id)),
        ]
        if m.outgoing:
            buttons.append(("Resend", "sms.resend", str(m.id)))
        buttons.append(("Cancel", "sms.cancel", ""))
        phone.dialog = Dialog("Message options", m.body, buttons)

    def on_click_copy(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.system.clipboard = self._message(phone, element.handler_arg).body
        phone.dialog = None
        phone.toast = "Message copied"

    def on_click_delete_message(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        m = self._message(phone, element.handler_arg)
        data: SmsData = self.data(phone)
        data.messages = [x for x in data.messages if x.id != m.id]
        phone.dialog = None

    def on_click_resend(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        m = self._message(phone, element.handler_arg)
        data: SmsData = self.data(phone)
        if m.status == "failed":  # the failed copy is replaced by the new attempt
            data.messages = [x for x in data.messages if x.id != m.id]
        phone.dialog = None
        self._send(phone, m.address, m.body)
        self._pin(phone)
