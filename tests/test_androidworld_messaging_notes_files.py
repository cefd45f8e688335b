"""Simple SMS Messenger, Markor and Files on the simulated phone: app behaviour, and that the
templates' checks read the app state (half-done, wrong-row and wrong-app states score 0)."""

from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401
from gui_gym.envs.androidworld.apps.files import join
from gui_gym.envs.androidworld.apps.markor import Note
from gui_gym.envs.androidworld.apps.sms import clean_address
from tests.androidworld_helpers import (
    assert_clean_start,
    click,
    long_click,
    make,
    oracle_until,
    score,
    step,
    templates_of,
    type_in,
)

MINE = templates_of("sms", "markor", "files")
NOW = "2023-10-15 15:34"


# -- registry ---------------------------------------------------------------------------------


def test_the_family_registers_its_templates() -> None:
    assert len(MINE) >= 16
    assert {
        "SimpleSmsSend",
        "SimpleSmsReply",
        "SimpleSmsReplyMostRecent",
        "SimpleSmsResend",
        "SimpleSmsSendReceivedAddress",
        "SimpleSmsSendClipboardContent",
        "MarkorCreateNote",
        "MarkorCreateFolder",
        "MarkorDeleteNote",
        "MarkorDeleteNewestNote",
        "MarkorDeleteAllNotes",
        "MarkorEditNote",
        "MarkorAddNoteHeader",
        "MarkorChangeNoteContent",
        "MarkorMoveNote",
        "MarkorCreateNoteFromClipboard",
        "MarkorCreateNoteAndSms",
        "FilesDeleteFile",
        "FilesMoveFile",
    } <= set(MINE)


@pytest.mark.parametrize("name", MINE)
def test_no_milestone_at_reset_and_params_are_json_plain(name: str) -> None:
    env = assert_clean_start(name)
    assert len(env.unwrapped.task.milestones) >= 2


# -- Simple SMS Messenger ---------------------------------------------------------------------


def _open_sms(env: gym.Env) -> None:
    info = step(env, 'OPEN_APP("messages")')  # an alias
    assert info["action_valid"] and env.unwrapped.state.screen_name == "sms/main"


def test_sms_new_conversation_sends_to_the_cleaned_number() -> None:
    env = make("SimpleSmsSend")
    base = env.unwrapped
    _open_sms(env)
    click(env, handler="sms.new")
    assert base.state.focus == "sms.recipient"
    type_in(env, "+1 (555) 010-2030", handler_arg="recipient")
    click(env, handler="sms.start", handler_arg="+15550102030")
    assert base.state.screen_name == "sms/thread" and base.state.screen.arg == "+15550102030"
    send = base.ui_tree.find_one(handler="sms.send")
    info = step(env, f"CLICK({send.index})")
    assert not info["action_valid"] and "type a message" in info["action_error"]
    type_in(env, "On my way", handler_arg="message")
    click(env, handler="sms.send")
    sent = base.state.apps["sms"].sent()[-1]
    assert (sent.address, sent.body, sent.time, sent.outgoing) == (
        "+15550102030",
        "On my way",
        NOW,
        True,
    )
    assert base.state.forms["sms"]["message"] == ""
    bubble = base.ui_tree.find_one(resource_id="message_out", text="On my way")
    assert bubble is not None and bubble.description == "Sent 15:34"
    step(env, "GOBACK()")
    step(env, "GOBACK()")
    rows = base.ui_tree.find(handler="sms.open")
    assert rows[0].handler_arg == "+15550102030"  # newest conversation first
    assert "You: On my way" in rows[0].description


def test_sms_conversations_are_named_after_contacts_and_newest_first() -> None:
    env = make("SimpleSmsSendReceivedAddress", seed=2)
    base = env.unwrapped
    task = base.task
    _open_sms(env)
    rows = base.ui_tree.find(handler="sms.open")
    assert rows[0].text == task.params["name2"]  # they texted last
    assert task.params["message"] in rows[0].description
    click(env, handler="sms.new")
    type_in(env, task.params["name1"], handler_arg="recipient")
    names = [e.text for e in base.ui_tree.find(resource_id="contact_row")]
    assert task.params["name1"] in names and task.params["name2"] not in names


def test_sms_enter_on_recipient_opens_the_thread() -> None:
    env = make("SimpleSmsSend")
    base = env.unwrapped
    _open_sms(env)
    click(env, handler="sms.new")
    type_in(env, "5550001111", handler_arg="recipient")
    step(env, "ENTER()")
    assert base.state.screen_name == "sms/thread" and base.state.screen.arg == "5550001111"
    assert len(base.state.stacks["sms"]) == 2  # the "new" screen was replaced


def test_sms_airplane_mode_fails_then_resend_succeeds() -> None:
    env = make("SimpleSmsSend")
    base = env.unwrapped
    base.state.system.airplane = True
    _open_sms(env)
    click(env, handler="sms.new")
    type_in(env, "+15550109999", handler_arg="recipient")
    click(env, handler="sms.start", handler_arg="+15550109999")
    type_in(env, "Hello?", handler_arg="message")
    click(env, handler="sms.send")
    data = base.state.apps["sms"]
    failed = data.messages[-1]
    assert failed.status == "failed" and failed not in data.sent()
    bubble = base.ui_tree.find_one(resource_id="message_out", text="Hello?")
    assert bubble.clickable and bubble.description == "Not sent. Tap to retry"
    base.state.system.airplane = False
    click(env, resource_id="message_out", text="Hello?")
    assert base.state.dialog.title == "Message not sent"
    click(env, handler="sms.cancel")
    assert data.messages[-1] == failed
    click(env, resource_id="message_out", text="Hello?")
    click(env, handler="sms.resend")
    assert [m.body for m in data.thread("+15550109999")] == ["Hello?"]
    assert data.sent()[-1].body == "Hello?" and data.get(failed.id) is None


def test_sms_long_press_pastes_and_copies() -> None:
    env = make("SimpleSmsSendClipboardContent")
    base = env.unwrapped
    clip = base.state.system.clipboard
    assert clip == base.task.params["message"]
    _open_sms(env)
    click(env, handler="sms.new")
    type_in(env, "+15550102030", handler_arg="recipient")
    click(env, handler="sms.start", handler_arg="+15550102030")
    long_click(env, handler="sms.field", handler_arg="message")
    click(env, handler="sms.paste")
    assert base.state.forms["sms"]["message"] == clip
    click(env, handler="sms.send")
    base.state.system.clipboard = ""
    long_click(env, resource_id="message_out")
    click(env, handler="sms.copy")
    assert base.state.system.clipboard == clip


def test_sms_long_thread_keeps_the_compose_box_in_view() -> None:
    env = make("SimpleSmsSend")
    base = env.unwrapped
    data = base.state.apps["sms"]
    for i in range(40):
        data.add("+15550000000", f"Message number {i}", f"2023-10-14 10:{i:02d}")
    _open_sms(env)
    click(env, handler="sms.open", handler_arg="+15550000000")
    tree = base.ui_tree
    assert tree.find_one(handler="sms.send") is not None and tree.can_scroll_up
    assert tree.find_one(text="Message number 39") is not None
    assert tree.find_one(text="Message number 0") is None
    type_in(env, "Reply", handler_arg="message")  # the keyboard opens, the box stays visible
    assert base.ui_tree.find_one(handler="sms.send") is not None
    step(env, "SCROLL(up)")
    assert base.ui_tree.find_one(text="Message number 39") is None


def test_sms_send_checks_number_text_recency_and_foreground() -> None:
    env = make("SimpleSmsSend", seed=3)
    base = env.unwrapped
    task = base.task
    data = base.state.apps["sms"]
    number, message = task.params["number"], task.params["message"]
    base.state.foreground = "sms"
    base.state.forms["sms"] = {"message": message}
    assert score(env) == 0.0  # typed, not sent
    data.add("+19999999999", message, NOW, outgoing=True)
    assert score(env) == 0.0  # wrong number
    data.add(number, "Something else entirely", NOW, outgoing=True)
    assert score(env) == 0.0  # wrong text
    data.add(number, message, "2023-10-15 15:20", outgoing=True)
    assert score(env) == 0.0  # sent too long ago
    data.add(number, message, NOW, outgoing=True, status="failed")
    assert score(env) == 0.0  # not delivered
    data.add(number, message, NOW, outgoing=True)
    assert score(env) == 1.0
    base.state.foreground = "markor"
    assert score(env) == 0.0  # AndroidWorld also wants the app in front


def test_sms_reply_most_recent_to_another_thread_scores_zero() -> None:
    env = make("SimpleSmsReplyMostRecent", seed=1)
    base = env.unwrapped
    task = base.task
    data = base.state.apps["sms"]
    _open_sms(env)
    first, *others = base.ui_tree.find(handler="sms.open")
    assert first.handler_arg == task.params["number"]
    assert base.state.notifications[-1]["text"] == task.params["messages"][-1]["body"]
    data.add("+10000000001", task.params["message"], NOW, outgoing=True)
    assert score(env) == 0.0
    data.add(task.params["number"], task.params["message"], NOW, outgoing=True)
    assert score(env) == 1.0


def test_sms_resend_needs_exactly_one_new_sent_message() -> None:
    env = make("SimpleSmsResend", seed=4)
    base = env.unwrapped
    task = base.task
    data = base.state.apps["sms"]
    failed = [m for m in data.messages if m.status == "failed"]
    assert len(failed) == 1 and failed[0].body == task.params["message"]
    base.state.foreground = "sms"
    data.add(task.params["number"], "A different text", NOW, outgoing=True)
    assert score(env) == 0.0
    env = make("SimpleSmsResend", seed=4)
    oracle_until(env, lambda: score(env) == 1.0, limit=25)
    data = env.unwrapped.state.apps["sms"]
    assert not [m for m in data.messages if m.status == "failed"]
    data.add(task.params["number"], task.params["message"], NOW, outgoing=True)
    assert score(env) == 0.0  # sent twice


def test_sms_received_address_must_go_to_the_first_contact() -> None:
    env = make("SimpleSmsSendReceivedAddress", seed=6)
    base = env.unwrapped
    p = base.task.params
    base.state.foreground = "sms"
    base.state.apps["sms"].add(p["number2"], p["message"], NOW, outgoing=True)
    assert score(env) == 0.0  # sent back to the sender
    base.state.apps["sms"].add(p["number"], p["message"], NOW, outgoing=True)
    assert score(env) == 1.0


# -- Markor -------------------------------------------------------------------------------------


def _open_markor(env: gym.Env) -> None:
    info = step(env, 'OPEN_APP("Markor")')
    assert info["action_valid"] and env.unwrapped.state.screen_name == "markor/main"


def test_markor_creates_notes_with_extensions_and_rejects_duplicates() -> None:
    env = make("MarkorCreateNote")
    base = env.unwrapped
    data = base.state.apps["markor"]
    _open_markor(env)
    click(env, handler="markor.new")
    type_in(env, "groceries", handler_arg="name")
    click(env, handler="markor.create_note")
    assert base.state.screen_name == "markor/edit" and base.state.screen.arg == "groceries.md"
    note = data.get("groceries.md")
    assert note.content == "" and note.modified == NOW
    type_in(env, "Milk\nEggs", resource_id="note_content")
    assert data.get("groceries.md").content == "Milk\nEggs"
    step(env, "ENTER()")
    assert data.get("groceries.md").content == "Milk\nEggs\n"
    step(env, "GOBACK()")
    step(env, "GOBACK()")
    click(env, handler="markor.new")
    click(env, handler="markor.set_type", handler_arg="txt")
    type_in(env, "todo", handler_arg="name")
    click(env, handler="markor.create_note")
    assert data.get("todo.txt") is not None
    step(env, "GOBACK()")
    click(env, handler="markor.new")
    type_in(env, "todo.txt", handler_arg="name")  # an extension is kept as typed
    create = base.ui_tree.find_one(handler="markor.create_note")
    info = step(env, f"CLICK({create.index})")
    assert not info["action_valid"] and "already exists" in info["action_error"]
    assert base.state.screen_name == "markor/create"


def test_markor_folders_nest_and_notes_open_inside_them() -> None:
    env = make("MarkorCreateFolder")
    base = env.unwrapped
    data = base.state.apps["markor"]
    _open_markor(env)
    click(env, handler="markor.new")
    type_in(env, "Trips", handler_arg="name")
    click(env, handler="markor.create_folder")
    assert "Trips" in data.folders and base.state.screen_name == "markor/main"
    click(env, handler="markor.entry", handler_arg="Trips")
    assert base.ui_tree.find_one(resource_id="empty") is not None
    click(env, handler="markor.new")
    type_in(env, "Rome", handler_arg="name")
    click(env, handler="markor.create_folder")
    assert "Trips/Rome" in data.folders
    click(env, handler="markor.new")
    type_in(env, "packing.md", handler_arg="name")
    click(env, handler="markor.create_note")
    assert data.get("Trips/packing.md") is not None
    assert data.find("packing.md") and not data.find("packing.md", "Work")


def test_markor_delete_can_be_cancelled_and_back_leaves_selection_mode() -> None:
    env = make("MarkorDeleteNote")
    base = env.unwrapped
    data = base.state.apps["markor"]
    target = base.task.params["file_name"]
    before = list(data.notes)
    _open_markor(env)
    long_click(env, handler="markor.entry", handler_arg=target)
    assert data.selected == [target] and base.ui_tree.find_one(text="1 selected")
    step(env, "GOBACK()")
    assert data.selected == [] and base.state.screen_name == "markor/main"
    long_click(env, handler="markor.entry", handler_arg=target)
    click(env, handler="markor.delete")
    assert base.ui_tree.find_one(role="dialog").text == f"Delete {target}?"
    click(env, handler="markor.cancel")
    assert data.notes == before
    click(env, handler="markor.delete")
    click(env, handler="markor.confirm_delete")
    assert data.get(target) is None and len(data.notes) == len(before) - 1
    assert score(env) == 1.0


def test_markor_rename_and_move_with_the_folder_picker() -> None:
    env = make("MarkorMoveNote", seed=2)
    base = env.unwrapped
    data = base.state.apps["markor"]
    p = base.task.params
    source, dest, name = p["source_folder"], p["destination_folder"], p["file_name"]
    _open_markor(env)
    click(env, handler="markor.entry", handler_arg=source)
    long_click(env, handler="markor.entry", handler_arg=join(source, name))
    click(env, handler="markor.move")
    here = base.ui_tree.find_one(handler="markor.move_here")
    info = step(env, f"CLICK({here.index})")  # the root: fine, but let us go deeper
    assert info["action_valid"] and data.get(name) is not None
    assert score(env) == 0.0  # moved to the wrong folder
    step(env, "GOBACK()")
    long_click(env, handler="markor.entry", handler_arg=name)
    click(env, handler="markor.move")
    click(env, handler="markor.pick", handler_arg=dest)
    click(env, handler="markor.move_here")
    assert data.get(join(dest, name)) is not None and score(env) == 1.0
    click(env, handler="markor.entry", handler_arg=dest)
    long_click(env, handler="markor.entry", handler_arg=join(dest, name))
    click(env, handler="markor.rename")
    type_in(env, "renamed.md", handler_arg="name")
    click(env, handler="markor.apply_rename")
    assert data.get(join(dest, "renamed.md")) is not None and score(env) == 0.0


def test_markor_cannot_move_a_folder_into_itself() -> None:
    env = make("MarkorMoveNote")
    base = env.unwrapped
    _open_markor(env)
    long_click(env, handler="markor.entry", handler_arg="Work")
    click(env, handler="markor.move")
    assert base.ui_tree.find_one(handler="markor.pick", handler_arg="Work") is None
    click(env, handler="markor.pick", handler_arg="Ideas")
    base.state.apps["markor"].folders.append("Work/Sub")
    base.state.stacks["markor"][-1].arg = "Work/Sub"  # even if it were offered
    env.unwrapped._screen_cache = None
    here = base.ui_tree.find_one(handler="markor.move_here")
    info = step(env, f"CLICK({here.index})")
    assert not info["action_valid"] and "into itself" in info["action_error"]


def test_markor_sort_by_date_and_paste() -> None:
    env = make("MarkorDeleteNewestNote", seed=3)
    base = env.unwrapped
    notes = base.task.params["notes"]
    _open_markor(env)
    click(env, handler="markor.sort")
    click(env, handler="markor.set_sort", handler_arg="date")
    rows = [e.handler_arg for e in base.ui_tree.find(handler="markor.entry")]
    assert rows == [n["path"] for n in sorted(notes, key=lambda n: n["modified"], reverse=True)]
    base.state.system.clipboard = "pasted!"
    click(env, handler="markor.entry", handler_arg=rows[-1])
    long_click(env, resource_id="note_content")
    click(env, handler="markor.paste")
    note = base.state.apps["markor"].get(rows[-1])
    assert note.content.endswith("pasted!") and note.modified == NOW
    assert score(env) == 0.0  # the oldest note is now the newest, but nothing was deleted


def test_markor_long_folder_scrolls() -> None:
    env = make("MarkorCreateNote")
    base = env.unwrapped
    data = base.state.apps["markor"]
    for i in range(50):
        data.notes.append(Note(f"note_{i:02d}.md", "x", "2023-10-01 10:00"))
    _open_markor(env)
    first = {e.handler_arg for e in base.ui_tree.find(handler="markor.entry")}
    assert base.ui_tree.can_scroll_down
    step(env, "SCROLL(down)")
    after = {e.handler_arg for e in base.ui_tree.find(handler="markor.entry")}
    assert first and after and first != after


def test_markor_create_note_scores_saved_text_only() -> None:
    env = make("MarkorCreateNote", seed=2)
    base = env.unwrapped
    data = base.state.apps["markor"]
    p = base.task.params
    base.state.forms["markor"] = {"name": p["file_name"], "type": "md"}
    assert score(env) == 0.0  # name typed, never created
    data.add(p["file_name"], "Something else")
    assert score(env) == 0.0  # wrong text
    data.notes.clear()
    data.add(join("Work", p["file_name"]), p["text"] + "\n")
    assert score(env) == 1.0  # found recursively, stripped


def test_markor_delete_tasks_keep_other_notes() -> None:
    env = make("MarkorDeleteNote", seed=1)
    base = env.unwrapped
    data = base.state.apps["markor"]
    data.notes = [n for n in data.notes if n.name != base.task.params["file_name"]][1:]
    assert score(env) == 0.0  # a second note went too
    data.notes.clear()
    assert score(env) == 0.0  # everything deleted
    env = make("MarkorDeleteNewestNote", seed=1)
    data = env.unwrapped.state.apps["markor"]
    oldest = min(data.notes, key=lambda n: n.modified)
    data.notes.remove(oldest)
    assert score(env) == 0.0  # the wrong note
    env = make("MarkorDeleteAllNotes", seed=1)
    data = env.unwrapped.state.apps["markor"]
    data.notes = data.notes[:1]
    assert score(env) == 0.0
    data.notes.clear()
    data.folders.append("Leftover")
    assert score(env) == 0.0  # a folder is still listed
    data.folders.clear()
    assert score(env) == 1.0


def test_markor_delete_all_uses_select_all() -> None:
    env = make("MarkorDeleteAllNotes", seed=2)
    base = env.unwrapped
    _open_markor(env)
    first = base.ui_tree.find(handler="markor.entry")[0]
    step(env, f"LONG_CLICK({first.index})")
    click(env, handler="markor.select_all")
    assert len(base.state.apps["markor"].selected) == len(base.task.params["notes"])
    click(env, handler="markor.delete")
    click(env, handler="markor.confirm_delete")
    assert score(env) == 1.0 and base.ui_tree.find_one(resource_id="empty") is not None


def test_markor_header_must_be_exact_and_the_note_renamed() -> None:
    env = make("MarkorAddNoteHeader", seed=3)
    base = env.unwrapped
    data = base.state.apps["markor"]
    p = base.task.params
    old = data.find(p["original_name"])[0]
    assert old.content == p["original_content"] + "\n"
    good = f"{p['header']}\n\n{p['original_content']}\n"
    data.notes[data.notes.index(old)] = replace(old, content=good)
    assert score(env) == 0.0  # not renamed yet
    note = data.find(p["original_name"])[0]
    data.notes[data.notes.index(note)] = replace(note, path=p["new_name"])
    assert score(env) == 1.0
    note = data.find(p["new_name"])[0]
    no_blank = f"{p['header']}\n{p['original_content']}\n"
    data.notes[data.notes.index(note)] = replace(note, content=no_blank)
    assert score(env) == 0.0  # the blank line is required


def test_markor_change_content_needs_both_changes() -> None:
    env = make("MarkorChangeNoteContent", seed=4)
    base = env.unwrapped
    data = base.state.apps["markor"]
    p = base.task.params
    old = data.find(p["original_name"])[0]
    data.notes[data.notes.index(old)] = replace(old, path=p["new_name"])
    assert score(env) == 0.0  # renamed, old text
    note = data.find(p["new_name"])[0]
    data.notes[data.notes.index(note)] = replace(note, content=p["updated_content"])
    assert score(env) == 1.0


def test_markor_edit_note_checks_the_edit_kind() -> None:
    for seed in range(12):
        env = make("MarkorEditNote", seed=seed)
        p = env.unwrapped.task.params
        data = env.unwrapped.state.apps["markor"]
        note = data.find(p["file_name"])[0]
        data.notes[data.notes.index(note)] = replace(note, content=p["text"] + "\n")
        ok = score(env)
        assert ok == (1.0 if p["edit_type"] == "replace" else 0.0)


def test_markor_move_note_left_behind_scores_zero() -> None:
    env = make("MarkorMoveNote", seed=3)
    base = env.unwrapped
    p = base.task.params
    data = base.state.apps["markor"]
    original = data.find(p["file_name"])[0]
    data.notes.append(replace(original, path=join(p["destination_folder"], p["file_name"])))
    assert score(env) == 0.0  # copied, not moved
    data.notes.remove(original)
    assert score(env) == 1.0


def test_markor_merge_needs_blank_lines_between_parts() -> None:
    env = make("MarkorMergeNotes", seed=1)
    p = env.unwrapped.task.params
    data = env.unwrapped.state.apps["markor"]
    parts = [p["file1_content"], p["file2_content"], p["file3_content"]]
    data.add(p["new_file_name"] + ".md", "\n".join(parts))
    assert score(env) == 0.0
    data.notes.pop()
    data.add(p["new_file_name"] + ".md", "\n\n".join(parts) + "\n")
    assert score(env) == 1.0


def test_markor_note_and_sms_composite_gives_partial_credit() -> None:
    env = make("MarkorCreateNoteAndSms", seed=2)
    base = env.unwrapped
    p = base.task.params
    oracle_until(env, lambda: base.state.foreground == "sms", limit=25)
    assert score(env) == 0.5  # the note is written, the text not sent
    base.state.apps["markor"].notes.clear()
    base.state.apps["sms"].add(p["number"], p["text"], NOW, outgoing=True)
    assert score(env) == 0.5  # the text sent, the note gone
    base.state.apps["markor"].add(p["file_name"], p["text"])
    assert score(env) == 1.0


# -- Files ------------------------------------------------------------------------------------


def _open_files(env: gym.Env) -> None:
    info = step(env, 'OPEN_APP("Files")')
    assert info["action_valid"] and env.unwrapped.state.screen_name == "files/main"


def test_files_details_delete_and_move_follow_the_file() -> None:
    env = make("FilesMoveFile", seed=1)
    base = env.unwrapped
    data = base.state.apps["files"]
    p = base.task.params
    path = join(p["source_folder"], p["file_name"])
    _open_files(env)
    assert "sdk_gphone_x86_64" in base.ui_tree.text
    click(env, handler="files.entry", handler_arg=p["source_folder"])
    click(env, handler="files.entry", handler_arg=path)
    assert base.state.screen_name == "files/item"
    assert base.ui_tree.find_one(resource_id="file_name").text == p["file_name"]
    click(env, handler="files.move", handler_arg=path)
    same = base.ui_tree.find_one(handler="files.pick", handler_arg=p["source_folder"])
    step(env, f"CLICK({same.index})")
    here = base.ui_tree.find_one(handler="files.move_here")
    info = step(env, f"CLICK({here.index})")
    assert not info["action_valid"] and "already in this folder" in info["action_error"]
    click(env, handler="files.cancel_move")
    assert base.state.screen_name == "files/item" and data.moving == []
    click(env, handler="files.move", handler_arg=path)
    click(env, handler="files.pick", handler_arg=p["destination_folder"])
    click(env, handler="files.move_here")
    moved = join(p["destination_folder"], p["file_name"])
    assert base.state.screen_name == "files/item" and base.state.screen.arg == moved
    assert score(env) == 1.0
    click(env, handler="files.delete", handler_arg=moved)
    click(env, handler="files.confirm_delete")
    assert base.state.screen_name == "files/folder" and not data.find(p["file_name"])
    assert score(env) == 0.0  # deleted, not moved


def test_files_new_folder_and_folder_delete_takes_its_contents() -> None:
    env = make("FilesDeleteFile", seed=2)
    base = env.unwrapped
    data = base.state.apps["files"]
    p = base.task.params
    _open_files(env)
    click(env, handler="files.new_folder")
    type_in(env, "Scans", handler_arg="name")
    click(env, handler="files.make_folder")
    assert "Scans" in data.folders
    long_click(env, handler="files.entry", handler_arg=p["subfolder"])
    click(env, handler="files.delete")
    click(env, handler="files.confirm_delete")
    assert p["subfolder"] not in data.folders
    assert not any(f.folder == p["subfolder"] for f in data.files)
    assert score(env) == 0.0  # the target went, and every other file in the folder too


def test_files_delete_file_checks_the_other_files() -> None:
    env = make("FilesDeleteFile", seed=3)
    base = env.unwrapped
    data = base.state.apps["files"]
    p = base.task.params
    target = join(p["subfolder"], p["file_name"])
    other = next(f for f in data.files if f.path != target)
    data.files.remove(other)
    assert score(env) == 0.0  # the wrong file
    data.files.append(other)
    data.files = [f for f in data.files if f.path != target]
    assert score(env) == 1.0
    env = make("FilesDeleteFile", seed=3)
    oracle_until(env, lambda: score(env) == 1.0, limit=25)
    assert len(env.unwrapped.state.apps["files"].files) == len(p["files"]) - 1


def test_files_move_to_the_wrong_folder_scores_zero() -> None:
    env = make("FilesMoveFile", seed=4)
    base = env.unwrapped
    data = base.state.apps["files"]
    p = base.task.params
    wrong = next(
        f for f in sorted(data.folders) if f not in (p["source_folder"], p["destination_folder"])
    )
    target = join(p["source_folder"], p["file_name"])
    data.files = [
        replace(f, path=join(wrong, f.name)) if f.path == target else f for f in data.files
    ]
    assert score(env) == 0.0
    data.files = [
        replace(f, path=join(p["destination_folder"], f.name)) if f.name == p["file_name"] else f
        for f in data.files
    ]
    assert score(env) == 1.0


def test_clean_address_matches_androidworld() -> None:
    assert clean_address("+1 555-010-2030") == "+15550102030"
    assert clean_address("(555) 010.2030") == "5550102030"
