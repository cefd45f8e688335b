"""Simple SMS Messenger tasks (AndroidWorld ``task_evals/single/sms.py``).

AndroidWorld's ``sms_validators`` look in ``content://sms/sent`` for a message whose address
(dashes and spaces removed) equals the number, whose body fuzzy-matches the message, and whose
date is within 5 minutes of the device time, and they require Simple SMS Messenger in front.
Here the same test reads the app's messages (new messages carry the device time; every
starting message is older than 5 minutes). All starting conversations and contacts are drawn
into the parameters.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.contacts import Contact
from gui_gym.envs.androidworld.apps.sms import SmsData, clean_address
from gui_gym.envs.androidworld.data import random_name, random_phone, random_sentence
from gui_gym.envs.androidworld.phone import DEVICE_TIME, PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    fuzzy_match,
    milestone,
    open_app,
    reach,
    register,
    tap,
    type_into,
)
from gui_gym.envs.androidworld.tasks.system import _settings_toggle

__all__ = ["ADDRESSES", "noise_conversations", "sent_ok", "sms_send_expert", "write_sms"]

_FMT = "%Y-%m-%d %H:%M"
_NOW = datetime.strptime(DEVICE_TIME, _FMT)
TITLE = "Simple SMS Messenger"

ADDRESSES = (
    "1420 Maple Avenue, Springfield, IL 62704",
    "88 Harbor View Road, Portland, ME 04101",
    "2301 Pine Street, Boulder, CO 80302",
    "57 Lakeshore Drive, Madison, WI 53703",
    "910 Sunset Boulevard, Austin, TX 78704",
    "316 Oak Hill Lane, Asheville, NC 28801",
    "4402 Cedar Court, Tucson, AZ 85719",
    "75 Riverside Terrace, Burlington, VT 05401",
)
"""Street addresses the SendReceivedAddress template texts around."""


def _stamp(minutes_ago: int) -> str:
    return (_NOW - timedelta(minutes=minutes_ago)).strftime(_FMT)


def noise_conversations(
    rng: random.Random, threads: int, avoid: Sequence[str] = ()
) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """``threads`` conversations with other numbers: (contacts, messages). Every message is
    at least 15 minutes old; about half the numbers belong to a contact."""
    contacts: list[dict[str, str]] = []
    messages: list[dict[str, Any]] = []
    used = set(avoid)
    taken_names: list[str] = []
    for _ in range(threads):
        number = random_phone(rng)
        while number in used:
            number = random_phone(rng)
        used.add(number)
        if rng.random() < 0.5:
            name = random_name(rng, exclude=tuple(taken_names))
            taken_names.append(name)
            contacts.append({"name": name, "number": number})
        ago = rng.randint(60, 5 * 24 * 60)
        for _ in range(rng.randint(1, 3)):
            messages.append(
                {
                    "address": number,
                    "body": random_sentence(rng),
                    "minutes_ago": ago,
                    "outgoing": rng.random() < 0.4,
                }
            )
            ago -= rng.randint(2, 40)
            ago = max(ago, 15)
    return contacts, messages


def write_sms(
    phone: PhoneState,
    contacts: Sequence[dict[str, str]],
    messages: Sequence[dict[str, Any]],
) -> None:
    """Write contacts and messages (oldest first) into Contacts and the SMS app."""
    book = phone.apps["contacts"].contacts
    for c in contacts:
        first, _, last = c["name"].partition(" ")
        book.append(Contact(first, last, c["number"]))
    data: SmsData = phone.apps["sms"]
    for m in sorted(messages, key=lambda m: -m["minutes_ago"]):
        data.add(
            m["address"],
            m["body"],
            _stamp(m["minutes_ago"]),
            outgoing=m["outgoing"],
            status=m.get("status", ""),
        )


def sent_ok(phone: PhoneState, number: str, message: str) -> bool:
    """AndroidWorld's ``was_sent``: a sent message to ``number`` (dashes/spaces removed)
    whose body fuzzy-matches ``message``, dated within 5 minutes of the device time."""
    data: SmsData = phone.apps["sms"]
    now = datetime.strptime(phone.system.now, _FMT)
    for m in data.messages:
        if not (m.outgoing and m.status == "sent"):
            continue
        if m.address.replace("-", "").replace(" ", "") != number:
            continue
        if abs(now - datetime.strptime(m.time, _FMT)) <= timedelta(minutes=5) and fuzzy_match(
            m.body, message
        ):
            return True
    return False


def _in_thread(phone: PhoneState, number: str) -> bool:
    return (
        phone.screen_name == "sms/thread"
        and phone.screen is not None
        and (phone.screen.arg == number)
    )


def _draft_is(phone: PhoneState, number: str, message: str) -> bool:
    draft = phone.forms.get("sms", {}).get("message", "")
    return _in_thread(phone, number) and bool(draft) and fuzzy_match(draft, message)


def sms_send_expert(
    phone: PhoneState,
    screen: UITree,
    number: str,
    body: str,
    contact: str = "",
    paste: bool = False,
) -> Action:
    """Expert that texts ``body`` to ``number``: opens the conversation (or starts one, by
    ``contact`` name when given), types (or pastes) the text and taps Send."""
    if phone.system.airplane:  # messages would fail: switch airplane mode off first
        return _settings_toggle(phone, screen, "network", "airplane")
    action = open_app(phone, "sms", TITLE)
    if action is not None:
        return action
    if phone.dialog is not None:
        if paste:
            paste_tap = tap(screen, handler="sms.paste")
            if paste_tap is not None:
                return paste_tap
        return Action(ActionType.GOBACK)
    top = phone.screen
    assert top is not None
    form = phone.forms.get("sms", {})
    if top.name == "thread":
        if top.arg != number:
            return Action(ActionType.GOBACK)
        if form.get("message", "") != body:
            if paste and phone.system.clipboard == body and not form.get("message"):
                field = screen.find_one(handler="sms.field", handler_arg="message")
                if field is not None:
                    return Action(ActionType.LONG_CLICK, index=field.index)
            action = type_into(screen, "message", body, form)
            if action is not None:
                return action
        return reach(screen, handler="sms.send")
    if top.name == "new":
        action = type_into(screen, "recipient", contact or number, form)
        if action is not None:
            return action
        return reach(screen, handler="sms.start", handler_arg=number)
    data: SmsData = phone.apps["sms"]
    if any(m.address == number for m in data.messages):
        return reach(screen, handler="sms.open", handler_arg=number)
    return tap(screen, handler="sms.new") or Action(ActionType.GOBACK)


# -- templates -------------------------------------------------------------------------------


class _SmsTask(AndroidWorldTask):
    """Writes ``params["contacts"]`` and ``params["messages"]`` at the start; succeeds when
    ``params["message"]`` was sent to ``params["number"]`` with the app in front."""

    app = "sms"
    complexity = 1.2
    paste: ClassVar[bool] = False

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        write_sms(phone, self.params["contacts"], self.params["messages"])

    def score(self, phone: PhoneState) -> float:
        return float(
            phone.foreground == "sms"
            and sent_ok(phone, self.params["number"], self.params["message"])
        )

    def milestone_checks(self):
        number, message = self.params["number"], self.params["message"]
        return [
            self.opened_milestone(),
            milestone("conversation_opened", lambda p: _in_thread(p, number)),
            milestone("message_typed", lambda p: _draft_is(p, number, message)),
            self.done_milestone("message_sent"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        return sms_send_expert(
            phone, screen, self.params["number"], self.params["message"], paste=self.paste
        )


@register
class SimpleSmsSend(_SmsTask):
    """Text a new number."""

    name = "SimpleSmsSend"
    template = "Send a text message using Simple SMS Messenger to {number} with message: {message}"

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        number, message = random_phone(rng), random_sentence(rng)
        contacts, messages = noise_conversations(rng, rng.randint(1, 5), avoid=[number])
        return {"number": number, "message": message, "contacts": contacts, "messages": messages}


def _notify(phone: PhoneState, number: str, body: str) -> None:
    contacts = phone.apps["contacts"].contacts
    who = next(
        (c.name for c in contacts if clean_address(c.phone) == number),
        number,
    )
    phone.notifications.append({"app": "sms", "title": who, "text": body})


@register
class SimpleSmsReply(_SmsTask):
    """Reply to a number that texted; its message sits among other conversations."""

    name = "SimpleSmsReply"
    template = "Reply to {number} with message: {message} in Simple SMS Messenger"

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        number, message = random_phone(rng), random_sentence(rng)
        contacts, messages = noise_conversations(rng, rng.randint(1, 5), avoid=[number])
        incoming = {
            "address": number,
            "body": random_sentence(rng),
            "minutes_ago": rng.randint(15, 3 * 24 * 60),
            "outgoing": False,
        }
        messages.insert(rng.randint(0, len(messages)), incoming)
        return {"number": number, "message": message, "contacts": contacts, "messages": messages}

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        super().initialize_task(phone, rng)
        incoming = next(m for m in self.params["messages"] if m["address"] == self.params["number"])
        _notify(phone, self.params["number"], incoming["body"])


@register
class SimpleSmsReplyMostRecent(_SmsTask):
    """Reply to whoever texted last."""

    name = "SimpleSmsReplyMostRecent"
    template = (
        "Reply to the most recent text message using Simple SMS Messenger with message: {message}"
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        number, message = random_phone(rng), random_sentence(rng)
        contacts, messages = noise_conversations(rng, rng.randint(0, 5), avoid=[number])
        if rng.random() < 0.5:
            name = random_name(rng, exclude=tuple(c["name"] for c in contacts))
            contacts.append({"name": name, "number": number})
        messages.append(
            {"address": number, "body": random_sentence(rng), "minutes_ago": 8, "outgoing": False}
        )
        return {"message": message, "number": number, "contacts": contacts, "messages": messages}

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        super().initialize_task(phone, rng)
        _notify(phone, self.params["number"], self.params["messages"][-1]["body"])


@register
class SimpleSmsSendClipboardContent(_SmsTask):
    """Text what is on the clipboard (long-press the compose box, Paste)."""

    name = "SimpleSmsSendClipboardContent"
    template = "Send a message to {number} with the clipboard content in Simple SMS Messenger"
    paste = True

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        number, message = random_phone(rng), random_sentence(rng)
        contacts, messages = noise_conversations(rng, rng.randint(1, 5), avoid=[number])
        return {"number": number, "message": message, "contacts": contacts, "messages": messages}

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        super().initialize_task(phone, rng)
        phone.system.clipboard = self.params["message"]

    def milestone_checks(self):
        checks = super().milestone_checks()
        number, message = self.params["number"], self.params["message"]
        checks[2] = milestone("message_pasted", lambda p: _draft_is(p, number, message))
        return checks


@register
class SimpleSmsSendReceivedAddress(_SmsTask):
    """Forward the address one contact texted to another contact (found by name)."""

    name = "SimpleSmsSendReceivedAddress"
    complexity = 1.8
    template = (
        "Text the address of the event to {name1} that {name2} just sent me in Simple SMS Messenger"
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        name1 = random_name(rng)
        name2 = random_name(rng, exclude=(name1,))
        number, number2 = random_phone(rng), random_phone(rng)
        message = rng.choice(ADDRESSES)
        contacts, messages = noise_conversations(rng, rng.randint(1, 4), avoid=[number, number2])
        contacts = [c for c in contacts if c["name"] not in (name1, name2)]
        contacts += [{"name": name1, "number": number}, {"name": name2, "number": number2}]
        messages.append({"address": number2, "body": message, "minutes_ago": 12, "outgoing": False})
        return {
            "name1": name1,
            "name2": name2,
            "number": number,
            "number2": number2,
            "message": message,
            "contacts": contacts,
            "messages": messages,
        }

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        super().initialize_task(phone, rng)
        _notify(phone, self.params["number2"], self.params["message"])

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        return sms_send_expert(
            phone, screen, self.params["number"], self.params["message"], self.params["name1"]
        )


@register
class SimpleSmsResend(AndroidWorldTask):
    """A message to a contact failed; send it again (exactly one more sent message, and the
    newest one is that text to that number)."""

    name = "SimpleSmsResend"
    app = "sms"
    complexity = 1.2
    template = "Resend the message I just sent to {name} in Simple SMS Messenger"

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        name, number, message = random_name(rng), random_phone(rng), random_sentence(rng)
        contacts, messages = noise_conversations(rng, rng.randint(1, 4), avoid=[number])
        contacts = [c for c in contacts if c["name"] != name]
        contacts.append({"name": name, "number": number})
        ago = rng.randint(60, 600)
        for _ in range(rng.randint(0, 2)):
            messages.append(
                {
                    "address": number,
                    "body": random_sentence(rng),
                    "minutes_ago": ago,
                    "outgoing": rng.random() < 0.5,
                }
            )
            ago -= rng.randint(5, 20)
        messages.append(
            {
                "address": number,
                "body": message,
                "minutes_ago": 10,
                "outgoing": True,
                "status": "failed",
            }
        )
        return {
            "name": name,
            "number": number,
            "message": message,
            "contacts": contacts,
            "messages": messages,
        }

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        write_sms(phone, self.params["contacts"], self.params["messages"])

    @property
    def _sent_before(self) -> int:
        return sum(
            1 for m in self.params["messages"] if m["outgoing"] and m.get("status") != "failed"
        )

    def score(self, phone: PhoneState) -> float:
        sent = phone.apps["sms"].sent()
        if len(sent) != self._sent_before + 1:
            return 0.0
        newest = sent[-1]
        return float(
            newest.address == self.params["number"]
            and fuzzy_match(newest.body, self.params["message"])
        )

    def milestone_checks(self):
        number = self.params["number"]

        def offered(p: PhoneState) -> bool:
            return p.dialog is not None and any(h == "sms.resend" for _, h, _a in p.dialog.buttons)

        return [
            self.opened_milestone(),
            milestone("conversation_opened", lambda p: _in_thread(p, number)),
            milestone("resend_offered", offered),
            self.done_milestone("message_resent"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        number, message = self.params["number"], self.params["message"]
        data: SmsData = phone.apps["sms"]
        failed = [m for m in data.thread(number) if m.status == "failed"]
        if not failed or phone.system.airplane:  # nothing to resend: send the text again
            sent = data.sent()
            if len(sent) > self._sent_before:  # a resend already happened; it cannot be undone
                return Action(ActionType.DONE)
            return sms_send_expert(phone, screen, number, message)
        action = open_app(phone, "sms", TITLE)
        if action is not None:
            return action
        if phone.dialog is not None:
            return tap(screen, handler="sms.resend") or Action(ActionType.GOBACK)
        if not _in_thread(phone, number):
            if phone.screen is not None and phone.screen.name != "main":
                return Action(ActionType.GOBACK)
            return reach(screen, handler="sms.open", handler_arg=number)
        if phone.focus:
            return Action(ActionType.GOBACK)
        return reach(screen, handler="sms.message", handler_arg=str(failed[-1].id))
