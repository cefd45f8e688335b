"""Real-device backends without a device: uiautomator2 through a fake device object, and the
accessibility XML parser on realistic dumps."""

from __future__ import annotations

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401
from gui_gym.envs.androidworld.backends.device import DEVICE_TASKS, DeviceError, hierarchy_to_tree

from .conftest import require
from .fake_device import FakeDevice


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
