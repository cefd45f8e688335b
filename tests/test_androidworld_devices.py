"""Real-device backends without a device: uiautomator2 through a fake device object, the
accessibility XML parser on realistic dumps, and the SMS/contacts/files state written and read
over adb (the fake device simulates the shell commands on its own tables)."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401
from gui_gym.envs.androidworld.apps.files import FilesData
from gui_gym.envs.androidworld.apps.sms import SmsData
from gui_gym.envs.androidworld.backends.adb_state import (
    SMS_COLUMNS,
    DeviceClock,
    content_rows,
    parse_clock,
    parse_file_listing,
    push_files,
    push_sms,
    sim_path,
)
from gui_gym.envs.androidworld.backends.device import (
    CONTACTS,
    DEVICE_TASKS,
    FILES,
    SMS,
    DeviceError,
    hierarchy_to_tree,
    read_phone_state,
)

from .conftest import require
from .fake_device import STORAGE, FakeDevice


def make(device: FakeDevice, **kwargs) -> gym.Env:
    return gym.make(
        "GuiGym/AndroidWorld-v0",
        backend="uiautomator2",
        device=device,
        wait_s=0,
        call_timeout_s=2,
        **kwargs,
    )


def test_hierarchy_xml_becomes_a_ui_tree() -> None:
    device = FakeDevice(screen="network")
    tree = hierarchy_to_tree(device._xml(), 1080, 2400)
    switch = tree.find_one(role="switch")
    assert switch is not None and switch.checkable and switch.checked
    assert switch.resource_id == "android:id/switch_widget" and switch.bounds == (
        880,
        330,
        1020,
        430,
    )
    row = tree[switch.parent]
    assert row.clickable and switch.index in row.children
    assert row.description == "Wi-Fi"  # a tappable row is labelled by its texts
    assert tree.find_one(role="text", text="Wi-Fi") is not None
    assert "<switch id=" in tree.text


def test_hostile_or_broken_xml_is_refused() -> None:
    with pytest.raises(DeviceError, match="DTD"):
        hierarchy_to_tree('<!DOCTYPE x [<!ENTITY a "b">]><hierarchy/>', 10, 10)
    with pytest.raises(DeviceError, match="unreadable"):
        hierarchy_to_tree("<hierarchy><node", 10, 10)


def test_wifi_task_end_to_end_on_the_fake_device() -> None:
    device = FakeDevice(wifi=True)
    env = make(device, task="SystemWifiTurnOff")
    obs, info = env.reset(seed=0)
    assert device.wifi is True  # SystemWifiTurnOff starts with Wi-Fi on
    assert ("press", ("home",)) in device.calls
    env.step('OPEN_APP("Settings")')
    assert ("app_start", ("com.android.settings",)) in device.calls
    tree = env.unwrapped.ui_tree
    row = tree.find_one(text="Network & internet")
    env.step(f"CLICK({row.index})")
    switch = env.unwrapped.ui_tree.find_one(role="switch")
    _, _, _, _, info = env.step(f"CLICK({switch.index})")
    assert device.wifi is False
    assert info["milestones"] == ["settings_opened", "task_complete"]
    _, reward, terminated, _, _ = env.step("DONE()")
    assert terminated and reward == 1.0


def test_task_initialisation_is_pushed_to_the_device() -> None:
    device = FakeDevice(wifi=True, bluetooth=True, brightness=102)
    make(device, task="SystemWifiTurnOn").reset(seed=0)
    assert device.wifi is False and ("shell", ("svc wifi disable",)) in device.calls
    make(device, task="SystemBrightnessMax").reset(seed=0)
    assert device.brightness == 1


def test_actions_map_to_device_calls() -> None:
    device = FakeDevice()
    env = make(device, task="ContactsAddContact")
    env.reset(seed=0)
    env.step('OPEN_APP("Contacts")')
    first = env.unwrapped.ui_tree.find_one(resource_id="first")
    env.step(f'INPUT({first.index}, "Ada")')
    x0, y0, x1, y1 = first.bounds
    assert ("click", ((x0 + x1) // 2, (y0 + y1) // 2)) in device.calls
    assert ("send_keys", ("Ada", True)) in device.calls
    env.step("SCROLL(down)")
    swipe = [c for c in device.calls if c[0] == "swipe"][-1]
    assert swipe[1][1] > swipe[1][3]  # scrolling down drags the finger up
    env.step("GOBACK()")
    env.step("ENTER()")
    env.step("LONG_CLICK_XY(100, 200)")
    assert ("press", ("back",)) in device.calls and ("press", ("enter",)) in device.calls
    assert ("long_click", (100.0, 200.0)) in device.calls
    *_, info = env.step('OPEN_APP("Telegram")')
    assert not info["action_valid"] and "unknown app" in info["action_error"]


def test_contacts_check_reads_the_contacts_provider() -> None:
    device = FakeDevice()
    env = make(device, task="ContactsAddContact")
    env.reset(seed=0)
    params = env.unwrapped.task.params
    _, reward, *_ = env.step("DONE()")
    assert reward == 0.0
    env.reset(seed=0)
    device.contacts.append((params["name"], params["number"]))
    _, reward, *_ = env.step("DONE()")
    assert reward == 1.0


def test_unsupported_tasks_fail_at_make_naming_the_supported_ones() -> None:
    with pytest.raises(ValueError, match=r"supports: .*SystemWifiTurnOn"):
        make(FakeDevice(), task="ContactsNewContactDraft")
    env = make(FakeDevice())
    assert {t.task_id for t in env.unwrapped.suite} == set(DEVICE_TASKS)


def test_new_apps_templates_are_refused_on_devices_with_the_supported_list() -> None:
    # issue 23: the templates of the apps added for the full suite check state that is not
    # read over adb (app databases, pictures, playlists): refused at make, as the others
    from gui_gym.envs.androidworld.tasks import TASKS

    new_apps = {"joplin", "opentracks", "retro", "vlc", "gallery", "draw", "chrome", "osmand"}
    refused = [n for n, c in TASKS.items() if c.app in new_apps and n not in DEVICE_TASKS]
    assert len(refused) >= 20 and not set(refused) & set(DEVICE_TASKS)
    for name in refused:
        with pytest.raises(ValueError, match=r"supports: .*SystemWifiTurnOn"):
            make(FakeDevice(), task=name)


def test_unplugged_device_gives_a_clear_error_on_the_next_step() -> None:
    device = FakeDevice()
    env = make(device, task="SystemWifiTurnOff")
    env.reset(seed=0)
    device.dead = True
    with pytest.raises(DeviceError, match="not found"):
        env.step("GOBACK()")


def test_hung_device_times_out_instead_of_hanging() -> None:
    device = FakeDevice()
    env = gym.make(
        "GuiGym/AndroidWorld-v0",
        backend="uiautomator2",
        device=device,
        wait_s=0,
        call_timeout_s=0.2,
        task="SystemWifiTurnOff",
    )
    env.reset(seed=0)
    device.hang_s = 1.0
    with pytest.raises(DeviceError, match=r"did not answer within 0\.2 s"):
        env.reset(seed=1)


def test_unknown_backend() -> None:
    with pytest.raises(ValueError, match="choose one of sim, uiautomator2, android_env"):
        gym.make("GuiGym/AndroidWorld-v0", backend="adb")


# -- android_env ---------------------------------------------------------------------------------


def make_android_env(**kwargs) -> gym.Env:
    require("android_env", "android")
    return gym.make("GuiGym/AndroidWorld-v0", backend="android_env", fake=True, **kwargs)


def test_android_env_fake_simulator_runs_an_episode() -> None:
    env = make_android_env(task="SystemWifiTurnOn", screenshot=True)
    obs, info = env.reset(seed=0)
    assert obs["screenshot"].shape == (2400, 1080, 3)
    assert obs["screen"] == ""  # pixels only: no accessibility tree from android_env
    *_, info = env.step("CLICK(0)")
    assert not info["action_valid"] and "no element 0" in info["action_error"]
    *_, info = env.step("CLICK_XY(540, 1200)")
    assert info["action_valid"]
    base = env.unwrapped
    assert base.touch_log[-2:] == [(0, 0.5, 0.5), (1, 0.5, 0.5)]  # TOUCH then LIFT, normalised
    env.step("SCROLL(down)")
    drag = base.touch_log[-7:]
    assert [k for k, *_ in drag] == [0, 0, 0, 0, 0, 0, 1]
    assert drag[0][2] > drag[-1][2]  # the finger moves up to scroll down
    env.step("LONG_CLICK_XY(10, 10)")
    assert [k for k, *_ in base.touch_log[-7:]] == [0] * 6 + [1]
    for action in (
        "GOBACK()",
        "HOME()",
        "ENTER()",
        'OPEN_APP("Settings")',
        'INPUT("hello")',
        "WAIT()",
    ):
        *_, info = env.step(action)
        assert info["action_valid"], (action, info["action_error"])
    _, reward, terminated, _, _ = env.step("DONE()")
    assert terminated and reward in (0.0, 1.0)
    env.close()


def test_android_env_needs_an_environment() -> None:
    require("android_env", "android")
    with pytest.raises(ValueError, match="fake=True"):
        gym.make("GuiGym/AndroidWorld-v0", backend="android_env")


def test_android_env_uses_a_ui_device_for_the_tree() -> None:
    device = FakeDevice(screen="network")
    env = make_android_env(task="SystemWifiTurnOff", ui_device=device)
    env.reset(seed=0)
    switch = env.unwrapped.ui_tree.find_one(role="switch")
    *_, info = env.step(f"CLICK({switch.index})")
    assert info["action_valid"]
    x0, y0, x1, y1 = switch.bounds
    kind, px, py = env.unwrapped.touch_log[-2]
    assert (
        kind == 0
        and abs(px - (x0 + x1) / 2 / 1080) < 1e-3
        and abs(py - (y0 + y1) / 2 / 2400) < 1e-3
    )


# -- SMS, contacts and files over adb ------------------------------------------------------------

SMS_TEMPLATES = (
    "SimpleSmsSend",
    "SimpleSmsReply",
    "SimpleSmsReplyMostRecent",
    "SimpleSmsSendReceivedAddress",
    "SimpleSmsResend",
)
_SMS_TYPE = {"received": 1, "sent": 2, "failed": 5}


def _template_sms(params: dict) -> Counter:
    """(address, body, type, minutes ago) of a template's starting messages."""
    out = Counter()
    for m in params["messages"]:
        status = m.get("status") or ("sent" if m["outgoing"] else "received")
        out[(m["address"], m["body"], _SMS_TYPE[status], m["minutes_ago"])] += 1
    return out


def _fake_sms(device: FakeDevice) -> Counter:
    now_ms = device.now_s * 1000
    return Counter(
        (r["address"], r["body"], r["type"], (now_ms - r["date"]) / 60_000) for r in device.sms
    )


def _shell_calls(device: FakeDevice) -> list[str]:
    return [args[0] for name, args in device.calls if name == "shell"]


def test_sms_task_pushes_its_messages_and_contacts() -> None:
    device = FakeDevice()
    device.receive_sms("+15550000000", "left over from an earlier episode")
    env = make(device, task="SimpleSmsReply")
    env.reset(seed=0)
    params = env.unwrapped.task.params
    # The provider was emptied, then each message inserted at its distance from the device's now.
    assert _fake_sms(device) == _template_sms(params)
    assert all(r["read"] == 1 for r in device.sms)
    shell = _shell_calls(device)
    assert "content delete --uri content://sms" in shell
    assert any(c.startswith("content insert --uri content://sms/inbox ") for c in shell)
    # Contacts were cleared as AndroidWorld does, then the template's contacts written.
    assert "pm clear com.android.providers.contacts" in shell
    assert sorted(device.contacts) == sorted((c["name"], c["number"]) for c in params["contacts"])


def test_failed_message_is_pushed_with_type_5() -> None:
    device = FakeDevice()
    env = make(device, task="SimpleSmsResend")
    env.reset(seed=0)
    params = env.unwrapped.task.params
    failed = [r for r in device.sms if r["type"] == 5]
    assert [(r["address"], r["body"]) for r in failed] == [(params["number"], params["message"])]
    assert _fake_sms(device) == _template_sms(params)


@pytest.mark.parametrize("template", SMS_TEMPLATES)
def test_sms_goal_state_read_over_adb_scores_one(template: str) -> None:
    device = FakeDevice()
    env = make(device, task=template)
    env.reset(seed=1)
    params = env.unwrapped.task.params
    env.step('OPEN_APP("Simple SMS Messenger")')
    assert device.package == "com.simplemobiletools.smsmessenger"
    assert env.unwrapped._predicate_state().foreground == "sms"
    device.send_sms(params["number"], params["message"])
    _, reward, terminated, _, info = env.step("DONE()")
    assert terminated and reward == 1.0, info


@pytest.mark.parametrize("template", SMS_TEMPLATES)
def test_sms_half_done_states_score_zero(template: str) -> None:
    device = FakeDevice()
    env = make(device, task=template)

    def outcome(act) -> float:
        env.reset(seed=1)
        params = env.unwrapped.task.params
        env.step('OPEN_APP("Simple SMS Messenger")')
        act(params)
        return env.step("DONE()")[1]

    # Nothing sent; sent elsewhere; the text only half right; sent and then left the app.
    assert outcome(lambda p: None) == 0.0
    assert outcome(lambda p: device.send_sms("+19995550123", p["message"])) == 0.0
    assert outcome(lambda p: device.send_sms(p["number"], "ok")) == 0.0

    def sent_then_home(p: dict) -> None:
        device.send_sms(p["number"], p["message"])
        device.press("home")

    expected_home = 1.0 if template == "SimpleSmsResend" else 0.0  # Resend does not check the app
    assert outcome(sent_then_home) == expected_home


def test_sms_sent_too_long_ago_or_failed_does_not_count() -> None:
    device = FakeDevice()
    env = make(device, task="SimpleSmsSend")
    for kwargs in ({"minutes_ago": 6}, {"failed": True}):
        env.reset(seed=2)
        params = env.unwrapped.task.params
        env.step('OPEN_APP("Simple SMS Messenger")')
        device.send_sms(params["number"], params["message"], **kwargs)
        assert env.step("DONE()")[1] == 0.0
    env.reset(seed=2)
    env.step('OPEN_APP("Simple SMS Messenger")')
    device.send_sms(params["number"], params["message"], minutes_ago=4)
    assert env.step("DONE()")[1] == 1.0


def test_resend_twice_scores_zero() -> None:
    device = FakeDevice()
    env = make(device, task="SimpleSmsResend")
    env.reset(seed=0)
    params = env.unwrapped.task.params
    device.send_sms(params["number"], params["message"])
    device.send_sms(params["number"], params["message"])
    assert env.step("DONE()")[1] == 0.0


def test_sms_read_uses_the_device_clock_and_keeps_bodies_with_commas_and_equals() -> None:
    device = FakeDevice(now_s=1_709_631_700, tz="+0100")  # 09:41:40 UTC is 10:41 on the phone
    body = "hello, world, date=5, type=2 = x"
    device.receive_sms("+1 (555) 010-2222", body, minutes_ago=90)
    device.send_sms("+15550102222", "a\nsecond line, address=1")
    device.sms.append(
        {"_id": 99, "address": None, "body": "draft", "date": 0, "type": 3, "read": 1}
    )
    env = make(device, task="SimpleSmsSend")
    state = read_phone_state(env.unwrapped.device, {}, {SMS})
    assert state.system.now == "2024-03-05 10:41"
    messages = {m.id: m for m in state.apps["sms"].messages}
    first, second, draft = messages[1], messages[2], messages[99]
    assert (first.address, first.body, first.time, first.outgoing, first.status) == (
        "+15550102222",
        body,
        "2024-03-05 09:11",
        False,
        "received",
    )
    assert (second.body, second.time, second.status) == (
        "a\nsecond line, address=1",
        "2024-03-05 10:41",
        "sent",
    )
    assert (draft.address, draft.status, draft.outgoing) == ("", "draft", True)
    assert state.apps["sms"].next_id == 100
    assert "contacts" not in state.apps and "files" not in state.apps


def test_content_rows_cut_at_the_projection_columns() -> None:
    output = "\n".join(
        [
            "Row: 0 _id=3, address=+1555, body=hello, world, date=1, type=2, date=7, type=2",
            "Row: 1 _id=4, address=NULL, body=, date=8, type=1",
            "Row: 2 _id=5, address=+1, body= spaced  ,",
            "and on, date=9, type=1",
            "Row: 3 something else entirely",
        ]
    )
    rows = content_rows(output, SMS_COLUMNS, free="body")
    assert [r["body"] for r in rows] == ["hello, world, date=1, type=2", "", " spaced  ,\nand on"]
    assert [(r["_id"], r["date"], r["type"]) for r in rows] == [
        ("3", "7", "2"),
        ("4", "8", "1"),
        ("5", "9", "1"),
    ]
    assert rows[1]["address"] == "NULL"
    assert content_rows("No result found.", SMS_COLUMNS, free="body") == []


def test_message_text_is_shell_quoted() -> None:
    nasty = """It's "fine"; echo $HOME && rm -rf / `id` \\ done"""
    device = FakeDevice()
    clock = DeviceClock(device.now_s * 1000)
    data = SmsData()
    data.add("+15550101010", nasty, "2023-10-15 15:00", outgoing=True)
    push_sms(device, data, clock)
    assert [(r["address"], r["body"], r["type"]) for r in device.sms] == [
        ("+15550101010", nasty, 2)
    ]
    insert = next(c for c in _shell_calls(device) if c.startswith("content insert"))
    assert (device.now_s - 34 * 60) * 1000 == device.sms[0]["date"]  # 15:00 is 34 min before 15:34
    # A real POSIX shell splits the command into the same words ``content`` would get.
    sh = shutil.which("sh")
    if sh is not None:
        script = 'content() { for a in "$@"; do printf "%s\\0" "$a"; done; }; ' + insert
        out = subprocess.run([sh, "-c", script], capture_output=True, check=True).stdout
        argv = out.decode().split("\0")[:-1]
        assert argv[:3] == ["insert", "--uri", "content://sms/sent"]
        assert f"body:s:{nasty}" in argv


def test_unquoted_text_would_break_the_fake_shell() -> None:
    # The fake parses like sh: an unbalanced quote is an error, so quoting above is load-bearing.
    response = FakeDevice().shell("content insert --uri content://sms --bind body:s:It's")
    assert response.exit_code != 0 and "unterminated" in response.output


def test_files_task_pushes_its_files() -> None:
    device = FakeDevice()
    env = make(device, task="FilesMoveFile")
    env.reset(seed=0)
    params = env.unwrapped.task.params
    folders = {params["source_folder"], params["destination_folder"]}
    untouched = {p: s for p, s in FakeDevice().storage().items() if p.split("/")[0] not in folders}
    device.dirs.add(f"{STORAGE}/{params['source_folder']}/stale")
    for folder in folders:  # leftovers from an earlier episode are removed at reset
        device.files[f"{STORAGE}/{folder}/stale/leftover.bin"] = (10, 0)
    env.reset(seed=0)
    expected = {r["path"]: r["size_kb"] * 1024 for r in params["files"]}
    in_task_folders = {p: s for p, s in device.storage().items() if p.split("/")[0] in folders}
    assert in_task_folders == expected
    assert {p: s for p, s in device.storage().items() if p not in expected} == untouched
    state = env.unwrapped._predicate_state()
    stamps = {f.path: f.modified for f in state.apps["files"].files}
    clock = DeviceClock(device.now_s * 1000, 3600)
    assert all(
        stamps[r["path"]] == clock.stamp(clock.from_sim(r["modified"])) for r in params["files"]
    )
    assert not any(p.startswith("Android/") for p in stamps)  # app-private data is not listed


def test_files_move_and_delete_scored_from_the_device() -> None:
    device = FakeDevice()
    env = make(device, task="FilesMoveFile")

    def move_outcome(act) -> float:
        env.reset(seed=4)
        act(env.unwrapped.task.params)
        return env.step("DONE()")[1]

    def target(p: dict) -> str:
        return f"{p['source_folder']}/{p['file_name']}"

    assert move_outcome(lambda p: None) == 0.0
    assert move_outcome(lambda p: device.move_file(target(p), p["destination_folder"])) == 1.0

    def copy(p: dict) -> None:  # copied, not moved
        size, mtime = device.files[f"{STORAGE}/{target(p)}"]
        device.files[f"{STORAGE}/{p['destination_folder']}/{p['file_name']}"] = (size, mtime)

    assert move_outcome(copy) == 0.0

    def move_all(p: dict) -> None:  # everything in the source folder moved along
        for path in list(device.storage(p["source_folder"])):
            device.move_file(path, p["destination_folder"])

    assert move_outcome(move_all) == 0.0

    env = make(device, task="FilesDeleteFile")

    def delete_outcome(act) -> float:
        env.reset(seed=4)
        act(env.unwrapped.task.params)
        return env.step("DONE()")[1]

    assert delete_outcome(lambda p: device.delete_file(f"{p['subfolder']}/{p['file_name']}")) == 1.0

    def delete_folder(p: dict) -> None:
        for path in list(device.storage(p["subfolder"])):
            device.delete_file(path)

    assert delete_outcome(delete_folder) == 0.0


def test_file_listing_parser_is_robust() -> None:
    clock = DeviceClock(1_709_631_700_000, 0)
    output = "\n".join(
        [
            "1024|1709631700|/sdcard//Download/a b|c.pdf",
            "1025|1709631700|/storage/emulated/0/Music/song.mp3",
            "find: '/sdcard/Android/data': Permission denied",
            "0|1709631700|/sdcard/Documents/empty.txt",
            "12|1709631700|/data/local/tmp/elsewhere.bin",
            "not a line at all",
        ]
    )
    data = parse_file_listing(output, clock)
    assert [(f.path, f.size_kb) for f in data.files] == [
        ("Documents/empty.txt", 0),
        ("Download/a b|c.pdf", 1),
        ("Music/song.mp3", 2),
    ]
    assert data.files[0].modified == "2024-03-05 09:41"
    assert sim_path("/sdcard") is None and sim_path("/sdcard/x/") == "x"


def test_file_paths_with_quotes_and_spaces_are_created_as_named() -> None:
    device = FakeDevice()
    data = FilesData()
    data.add("Download/it's a $file; really.pdf", 3, "2023-10-15 15:00")
    push_files(device, data, ["Download"], DeviceClock(device.now_s * 1000, 3600))
    assert device.storage("Download") == {"Download/it's a $file; really.pdf": 3072}
    assert device.files[f"{STORAGE}/Download/it's a $file; really.pdf"][1] == device.now_s - 34 * 60
    with pytest.raises(ValueError, match="refusing"):
        push_files(device, FilesData(files=[]), [""], DeviceClock(0))
    with pytest.raises(ValueError, match="refusing"):
        push_files(device, FilesData(files=[]), ["Download/../.."], DeviceClock(0))


def test_clock_output_is_parsed_with_its_offset() -> None:
    assert parse_clock("1697384040+0530") == DeviceClock(1_697_384_040_000, 5 * 3600 + 1800)
    assert parse_clock("1697384040-0800\n").utc_offset_s == -8 * 3600
    assert parse_clock("1697384040") == DeviceClock(1_697_384_040_000, 0)
    with pytest.raises(DeviceError, match="unreadable device clock"):
        parse_clock("date: bad format")


def test_settings_task_reads_no_sms_files_or_contacts() -> None:
    device = FakeDevice(wifi=False)
    env = make(device, task="SystemWifiTurnOn")
    env.reset(seed=0)
    env.step('OPEN_APP("Settings")')
    env.step("DONE()")
    shell = _shell_calls(device)
    assert shell and all(c.startswith(("settings ", "svc ", "cmd connectivity")) for c in shell)
    assert not any("content" in c or "find" in c or c.startswith("date") for c in shell)


def test_airplane_mode_is_switched_off_at_reset() -> None:
    device = FakeDevice(airplane=True)
    make(device, task="SimpleSmsSend").reset(seed=0)
    assert device.airplane is False
    assert "cmd connectivity airplane-mode disable" in _shell_calls(device)


def test_wifi_suspended_by_airplane_mode_reads_as_not_off() -> None:
    # Android reads wifi_on = 3 there; AndroidWorld's Wi-Fi-off check wants 0.
    device = FakeDevice(wifi=True)
    env = make(device, task="SystemWifiTurnOff")
    env.reset(seed=0)
    device.airplane = True
    assert read_phone_state(env.unwrapped.device, {}).system.wifi_on == 3
    _, reward, terminated, _, _ = env.step("DONE()")
    assert terminated and reward == 0.0


def test_simple_draw_is_offered_and_checked_on_the_device_storage() -> None:
    device = FakeDevice()
    env = make(device, task="SimpleDrawProCreateDrawing")
    env.reset(seed=1)
    name = env.unwrapped.task.params["file_name"]
    device.files[f"{STORAGE}/Download/{name}"] = (4096, device.now_s)
    assert env.step("DONE()")[1] == 0.0  # saved in the wrong folder
    env.reset(seed=1)
    device.files[f"{STORAGE}/Pictures/{name}"] = (4096, device.now_s)
    assert env.step("DONE()")[1] == 1.0


def test_a_provider_that_refuses_writes_fails_the_reset_clearly() -> None:
    class ReadOnlySms(FakeDevice):
        def _content(self, verb: str, args: list[str]) -> tuple[str, int]:
            if verb == "insert" and "content://sms" in args[1]:
                return "", 0  # accepted silently, stored nowhere (an OEM lock-down)
            return super()._content(verb, args)

    env = make(ReadOnlySms(), task="SimpleSmsSend")
    with pytest.raises(DeviceError, match="did not take the starting state: SMS: missing"):
        env.reset(seed=0)


def test_clipboard_template_is_not_offered_on_devices() -> None:
    assert "SimpleSmsSendClipboardContent" not in DEVICE_TASKS
    with pytest.raises(ValueError, match="cannot be checked on a real device"):
        make(FakeDevice(), task="SimpleSmsSendClipboardContent")
    assert DEVICE_TASKS["SimpleSmsSend"] == {SMS, CONTACTS}
    assert DEVICE_TASKS["FilesMoveFile"] == {FILES}
    assert DEVICE_TASKS["SystemWifiTurnOn"] == frozenset()


def test_android_env_sms_task_over_its_adb_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    require("android_env", "android")
    from android_env.components.simulators.fake import fake_simulator

    device = FakeDevice()
    original = fake_simulator.FakeAdbController.execute_command

    def execute(self, args: list[str], timeout=None, device_specific: bool = True) -> bytes:
        if args[:4] == ["shell", "am", "stack", "list"]:
            activity = f"{device.package}/.Main"
            return f"taskId=9: {activity} visible=true topActivity=ComponentInfo{{{activity}}}".encode()
        if len(args) == 2 and args[0] == "shell":  # our channel: the whole command, one argument
            response = device.shell(args[1])
            if response.exit_code:  # adb passes the device's exit status on
                raise subprocess.CalledProcessError(
                    response.exit_code, args, output=response.output.encode()
                )
            return response.output.encode()
        return original(self, args, timeout, device_specific)

    monkeypatch.setattr(fake_simulator.FakeAdbController, "execute_command", execute)
    env = make_android_env(task="SimpleSmsSend")
    env.reset(seed=3)
    params = env.unwrapped.task.params
    assert _fake_sms(device) == _template_sms(params)
    # Apps start through their LAUNCHER intent (Simple SMS's activity is not .MainActivity).
    *_, info = env.step('OPEN_APP("Simple SMS Messenger")')
    assert info["action_valid"], info["action_error"]
    assert device.package == "com.simplemobiletools.smsmessenger"
    assert any(
        c.startswith("monkey -p com.simplemobiletools.smsmessenger") for c in _shell_calls(device)
    )
    device.send_sms(params["number"], params["message"])
    _, reward, terminated, _, _ = env.step("DONE()")
    assert terminated and reward == 1.0
    env.reset(seed=3)
    device.package = "com.simplemobiletools.smsmessenger"
    _, reward, *_ = env.step("DONE()")
    assert reward == 0.0
    # The channel sends the command as one word: quoting and inner spacing reach the device.
    data = SmsData()
    data.add("+15550101010", "two  spaces; it's  $fine", "2023-10-15 15:30")
    push_sms(env.unwrapped.channel, data, DeviceClock(device.now_s * 1000))
    assert [r["body"] for r in device.sms] == ["two  spaces; it's  $fine"]
    env.close()


def test_android_env_files_task_over_its_adb_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    require("android_env", "android")
    from android_env.components.simulators.fake import fake_simulator

    device = FakeDevice()
    original = fake_simulator.FakeAdbController.execute_command

    def execute(self, args: list[str], timeout=None, device_specific: bool = True) -> bytes:
        if len(args) == 2 and args[0] == "shell":
            response = device.shell(args[1])
            if response.exit_code:
                raise subprocess.CalledProcessError(
                    response.exit_code, args, output=response.output.encode()
                )
            return response.output.encode()
        return original(self, args, timeout, device_specific)

    monkeypatch.setattr(fake_simulator.FakeAdbController, "execute_command", execute)
    env = make_android_env(task="FilesDeleteFile")
    env.reset(seed=5)
    params = env.unwrapped.task.params
    assert all(f"{STORAGE}/{r['path']}" in device.files for r in params["files"])
    device.delete_file(f"{params['subfolder']}/{params['file_name']}")
    assert env.step("DONE()")[1] == 1.0
    env.close()
