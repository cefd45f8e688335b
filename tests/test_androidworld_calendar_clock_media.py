"""Simple Calendar Pro, Clock, Audio Recorder and Camera on the simulated phone: app
behaviour, and that the templates' checks read the app state (half-done, wrong-row and
wrong-app states score 0)."""

from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401
from gui_gym.core.actions import Action, ActionType
from gui_gym.envs.androidworld.apps.audio_recorder import Recording
from gui_gym.envs.androidworld.apps.calendar import CalendarEvent, parse_date, parse_time
from gui_gym.envs.androidworld.apps.clock import timer_text
from gui_gym.envs.androidworld.tasks.calendar import reword_date
from tests.androidworld_helpers import (
    assert_clean_start,
    click,
    fill,
    make,
    oracle_until,
    step,
    success,
    templates_of,
)

MINE = templates_of("calendar", "clock", "media")


def test_at_least_sixteen_templates_are_registered() -> None:
    assert len(MINE) >= 16
    assert {"SimpleCalendarAddOneEvent", "ClockTimerEntry", "CameraTakeVideo"} <= set(MINE)


@pytest.mark.parametrize("name", MINE)
def test_no_milestone_at_reset_and_params_are_json_plain(name: str) -> None:
    assert_clean_start(name)


# -- Simple Calendar Pro --------------------------------------------------------------------------


def test_date_time_parsing_and_rewording() -> None:
    assert parse_date("October 16 2023") == parse_date("2023-10-16") == "2023-10-16"
    assert parse_date("10/16/2023") == "2023-10-16" and parse_date("soon") is None
    assert parse_time("2:30 PM") == parse_time("14:30") == "14:30"
    assert parse_time("12am") == "00:00" and parse_time("9h") == "09:00"
    assert parse_time("25:00") is None
    import random

    words = {reword_date(random.Random(i), "2023-10-16") for i in range(60)}
    assert {"tomorrow", "Monday", "this Monday", "October 16"} <= words


def _open_calendar(env: gym.Env) -> None:
    info = step(env, 'OPEN_APP("Simple Calendar")')
    assert info["action_valid"]
    assert env.unwrapped.state.screen_name == "calendar/main"


def test_calendar_editor_saves_the_event_and_ends_past_midnight() -> None:
    env = make("SimpleCalendarAddOneEvent")
    base = env.unwrapped
    _open_calendar(env)
    click(env, handler="calendar.new")
    assert base.state.forms["calendar"]["date"] == "2023-10-15"
    fill(env, "title", "Late call")
    fill(env, "date", "October 20 2023")
    fill(env, "start", "11:30 PM")
    fill(env, "end", "0:15")
    click(env, handler="calendar.pick_repeat")
    click(env, handler="calendar.set_repeat", handler_arg="weekly")
    click(env, handler="calendar.save")
    event = base.state.apps["calendar"].events[-1]
    assert (event.title, event.start, event.end) == (
        "Late call",
        "2023-10-20 23:30",
        "2023-10-21 00:15",
    )
    assert event.repeat == "weekly" and event.repeat_interval == 604800
    assert event.repeat_rule == 1 << 4  # Friday
    assert event.occurs_on("2023-10-27") and not event.occurs_on("2023-10-26")
    assert base.state.screen_name == "calendar/main" and base.state.forms["calendar"] == {}


def test_calendar_editor_rejects_a_missing_title_or_bad_time_without_saving() -> None:
    env = make("SimpleCalendarAddOneEvent")
    base = env.unwrapped
    _open_calendar(env)
    before = list(base.state.apps["calendar"].events)
    click(env, handler="calendar.new")
    info = step(
        env, Action(ActionType.CLICK, index=base.ui_tree.find_one(handler="calendar.save").index)
    )
    assert not info["action_valid"] and "Title" in info["action_error"]
    fill(env, "title", "Standup")
    fill(env, "start", "half past")
    info = step(
        env, Action(ActionType.CLICK, index=base.ui_tree.find_one(handler="calendar.save").index)
    )
    assert not info["action_valid"] and "start time" in info["action_error"]
    assert base.state.apps["calendar"].events == before
    assert base.state.screen_name == "calendar/edit"


def test_calendar_month_day_and_event_views_and_navigation() -> None:
    env = make("SimpleCalendarEventsOnDate", seed=2)
    base = env.unwrapped
    _open_calendar(env)
    tree = base.ui_tree
    assert tree.find_one(resource_id="toolbar_title").text == "October 2023"
    today = tree.find_one(handler="calendar.open_day", handler_arg="2023-10-15")
    assert today.selected and today.description == "Today"
    assert base.ui_tree.find_one(handler_arg="2023-10-31") is None
    assert base.ui_tree.can_scroll_down  # the month is taller than the screen
    while base.ui_tree.can_scroll_down:
        env.step("SCROLL(down)")
    assert base.ui_tree.find_one(handler_arg="2023-10-31") is not None
    assert base.ui_tree.find_one(handler_arg="2023-10-01") is None
    click(env, handler="calendar.prev_month")
    assert base.ui_tree.find_one(resource_id="toolbar_title").text == "September 2023"
    click(env, handler="calendar.today")
    day = base.task.params["when"]
    while base.ui_tree.find_one(handler_arg=day) is None:
        env.step("SCROLL(down)")
    click(env, handler="calendar.open_day", handler_arg=day)
    rows = base.ui_tree.find(resource_id="event_row")
    title = base.task.params["title"]
    assert [r.text.endswith(title) for r in rows] == [True]
    click(env, handler="calendar.next_day")
    assert base.state.screen.arg > day
    click(env, handler="calendar.prev_day")
    click(env, handler="calendar.open_event")
    assert base.ui_tree.find_one(resource_id="event_title").text == title
    assert "event_location" in {e.resource_id for e in base.ui_tree.elements}


def test_calendar_delete_can_be_cancelled_then_confirmed() -> None:
    env = make("SimpleCalendarDeleteOneEvent")
    base = env.unwrapped
    target = base.task.params["targets"][0]
    oracle_until(env, lambda: base.state.screen_name == "calendar/event")
    assert base.state.screen.arg == str(target)
    n = len(base.state.apps["calendar"].events)
    click(env, handler="calendar.delete")
    assert base.ui_tree.find_one(role="dialog").text == "Delete event?"
    click(env, handler="calendar.cancel")
    assert len(base.state.apps["calendar"].events) == n and base.state.dialog is None
    click(env, handler="calendar.delete")
    click(env, handler="calendar.confirm_delete")
    assert base.state.apps["calendar"].get(target) is None
    assert base.state.screen_name == "calendar/day"
    assert success(env) == 1.0


def test_calendar_edit_replaces_the_row() -> None:
    env = make("SimpleCalendarDeleteOneEvent", seed=3)
    base = env.unwrapped
    oracle_until(env, lambda: base.state.screen_name == "calendar/event")
    event_id = int(base.state.screen.arg)
    click(env, handler="calendar.edit")
    fill(env, "location", "Room 4")
    click(env, handler="calendar.save")
    edited = base.state.apps["calendar"].get(event_id)
    assert edited.location == "Room 4"
    assert success(env) == 0.0  # edited, not deleted


def test_add_event_scores_only_one_saved_matching_row() -> None:
    env = make("SimpleCalendarAddOneEventTomorrow", seed=1)
    base = env.unwrapped
    task, phone = base.task, base.state
    t = task.params["event"]
    data = phone.apps["calendar"]
    oracle_until(env, lambda: phone.screen_name == "calendar/edit")
    for name, value in (
        ("title", t["title"]),
        ("description", t["description"]),
        ("date", t["start"][:10]),
        ("start", t["start"][11:]),
        ("end", t["end"][11:]),
    ):
        fill(env, name, value)
    assert "details_entered" in base.milestones
    assert success(env) == 0.0  # typed, not saved
    fields = {k: v for k, v in t.items()}
    right = CalendarEvent(data.next_id, **fields)
    data.events.append(replace(right, end=t["start"]))  # wrong duration
    assert success(env) == 0.0
    data.events[-1] = replace(right, location="Office")  # a location nobody asked for
    assert success(env) == 0.0
    data.events[-1] = replace(right, title=right.title.upper())  # fuzzy, case-insensitive
    assert success(env) == 1.0
    data.events.append(replace(right, id=right.id + 1))  # a second copy
    assert success(env) == 0.0
    data.events.pop()
    if task.params["noise"]:
        first = data.events[0]
        data.events[0] = replace(first, title=first.title + " moved")
        assert success(env) == 0.0  # an old row changed


def test_add_event_on_the_wrong_day_or_without_repeat_scores_zero() -> None:
    env = make("SimpleCalendarAddOneEventRelativeDay", seed=4)
    base = env.unwrapped
    t = base.task.params["event"]
    data = base.state.apps["calendar"]
    data.add(
        **{
            **t,
            "start": t["start"][:8] + "30" + t["start"][10:],
            "end": t["end"][:8] + "30" + t["end"][10:],
        }
    )
    assert success(env) == 0.0
    env = make("SimpleCalendarAddRepeatingEvent", seed=4)
    t = env.unwrapped.task.params["event"]
    assert t["repeat"] in ("daily", "weekly")
    data = env.unwrapped.state.apps["calendar"]
    data.add(**{**t, "repeat": ""})
    assert success(env) == 0.0
    data.events[-1] = replace(data.events[-1], repeat=t["repeat"])
    assert success(env) == 1.0


def test_delete_events_needs_every_target_and_spares_the_rest() -> None:
    env = make("SimpleCalendarDeleteEvents", seed=2)
    base = env.unwrapped
    data = base.state.apps["calendar"]
    targets = set(base.task.params["targets"])
    assert len(targets) == 3
    day = base.task.params["target_day"]
    assert {e.id for e in data.events if e.day == day} == targets  # no noise on that day
    all_rows = list(data.events)
    data.events = [e for e in all_rows if e.id not in targets or e.id == min(targets)]
    assert success(env) == 0.0  # one target left
    data.events = []
    assert success(env) == 0.0  # deleting everything is not the task
    data.events = [e for e in all_rows if e.id not in targets]
    assert success(env) == 1.0
    data.events = data.events[1:]
    assert success(env) == 0.0  # a noise row deleted too


def test_delete_one_event_keeps_same_day_rows() -> None:
    env = make("SimpleCalendarDeleteOneEvent", seed=7)
    base = env.unwrapped
    data = base.state.apps["calendar"]
    target = base.task.params["targets"][0]
    others = [e for e in data.events if e.id != target]
    data.events = [e for e in data.events if e.id == target]
    assert success(env) == 0.0
    data.events = others
    assert success(env) == 1.0


def _answer(env: gym.Env, text: str) -> float:
    _, reward, terminated, _, _ = env.step(Action(ActionType.ANSWER, text=text))
    assert terminated
    return reward


def test_calendar_questions_check_the_answer() -> None:
    env = make("SimpleCalendarAnyEventsOnDate", seed=3)
    titles = env.unwrapped.task.expected_answer()
    assert len(titles) == 3
    assert _answer(env, ", ".join(reversed(titles))) == 1.0
    env.reset(seed=3)
    assert _answer(env, ", ".join(titles[:2])) == 0.0
    env = make("SimpleCalendarLocationOfEvent", seed=1)
    location = env.unwrapped.task.params["location"]
    assert _answer(env, location.lower()) == 1.0
    env.reset(seed=1)
    assert _answer(env, env.unwrapped.task.params["title"]) == 0.0


def test_next_meeting_answer_is_a_date_and_time() -> None:
    env = make("SimpleCalendarNextMeetingWithPerson", seed=2)
    start = env.unwrapped.task.params["events"][0]["start"]
    want = env.unwrapped.task.expected_answer()[0]
    assert want.endswith(start[11:])
    assert _answer(env, want) == 1.0
    env.reset(seed=2)
    assert _answer(env, want[:-5] + "00:01") == 0.0
    env.reset(seed=2)
    assert _answer(env, "tomorrow") == 0.0


def test_question_noise_avoids_the_asked_day() -> None:
    env = make("SimpleCalendarEventsOnDate", seed=6)
    base = env.unwrapped
    day = base.task.params["when"]
    data = base.state.apps["calendar"]
    assert len(data.events) == 76
    assert [e.title for e in data.on_day(day)] == [base.task.params["title"]]
    env = make("SimpleCalendarNextEvent", seed=6)
    data = env.unwrapped.state.apps["calendar"]
    upcoming = [e for e in data.on_day("2023-10-15") if e.start_time >= "15:34"]
    assert upcoming[0].title == env.unwrapped.task.params["title"]


# -- Clock ---------------------------------------------------------------------------------------


def test_timer_pad_fills_from_the_right() -> None:
    env = make("ClockTimerEntry")
    base = env.unwrapped
    step(env, 'OPEN_APP("Clock")')
    click(env, handler="clock.tab", handler_arg="timer")
    assert base.ui_tree.find_one(resource_id="fab") is None  # no Start before digits
    click(env, handler="clock.digit", handler_arg="0")  # a leading zero is ignored
    for digit in "123":
        click(env, handler="clock.digit", handler_arg=digit)
    display = base.ui_tree.find_one(resource_id="timer_setup_time")
    assert display.text == "00h 01m 23s" == timer_text("123")
    assert display.description == "0 hours, 1 minutes, 23 seconds"
    click(env, handler="clock.backspace")
    assert base.ui_tree.find_one(resource_id="timer_setup_time").text == "00h 00m 12s"
    click(env, resource_id="fab")  # Start
    assert base.state.apps["clock"].timer_seconds == 12
    assert base.ui_tree.find_one(resource_id="timer_setup_time") is None


def test_timer_entry_scores_only_the_unstarted_right_digits_in_front() -> None:
    env = make("ClockTimerEntry", seed=4)
    base = env.unwrapped
    clock = base.state.apps["clock"]
    oracle_until(env, lambda: success(env) == 1.0)
    assert base.milestones == ["clock_opened", "timer_shown", "digits_started", "timer_set"]
    step(env, "HOME()")
    assert success(env) == 0.0  # the Clock app is not on screen
    step(env, 'OPEN_APP("Clock")')
    assert success(env) == 1.0
    click(env, handler="clock.tab", handler_arg="alarm")
    assert success(env) == 0.0
    click(env, handler="clock.tab", handler_arg="timer")
    click(env, resource_id="fab")  # started: not what was asked
    assert clock.timer_seconds and success(env) == 0.0


def test_stopwatch_buttons_and_running_check() -> None:
    env = make("ClockStopWatchRunning")
    base = env.unwrapped
    clock = base.state.apps["clock"]
    step(env, 'OPEN_APP("clock")')
    click(env, handler="clock.tab", handler_arg="stopwatch")
    assert base.ui_tree.find_one(resource_id="fab").description == "Start"
    assert len(base.ui_tree.find(text="Stopwatch")) == 2  # tab and title, as DeskClock shows
    assert success(env) == 0.0
    click(env, resource_id="fab")
    descriptions = {e.description for e in base.ui_tree.elements}
    assert {"Pause", "Lap"} <= descriptions and clock.stopwatch_running
    assert success(env) == 1.0
    click(env, handler="clock.lap")
    assert clock.laps == [150]
    step(env, "HOME()")
    assert success(env) == 0.0  # running, but the stopwatch is not on display
    step(env, 'OPEN_APP("clock")')
    click(env, resource_id="fab")  # Pause
    assert not clock.stopwatch_running and success(env) == 0.0
    click(env, handler="clock.reset")
    assert clock.stopwatch_cs == 0 and clock.laps == []


def test_stopwatch_paused_verify_starts_done_and_fails_when_running() -> None:
    env = make("ClockStopWatchPausedVerify")
    base = env.unwrapped
    assert success(env) == 1.0
    step(env, 'OPEN_APP("clock")')
    click(env, handler="clock.tab", handler_arg="stopwatch")
    click(env, resource_id="fab")
    assert success(env) == 0.0
    assert base.oracle_action().type is ActionType.CLICK  # the expert pauses it again


def test_alarm_switches_and_new_alarm() -> None:
    env = make("ClockStopWatchRunning")
    base = env.unwrapped
    clock = base.state.apps["clock"]
    step(env, 'OPEN_APP("alarm")')
    switch = base.ui_tree.find_one(handler="clock.toggle_alarm", handler_arg="1")
    assert switch.checkable and not switch.checked
    click(env, handler="clock.toggle_alarm", handler_arg="1")
    assert clock.alarms[0].enabled
    click(env, resource_id="fab")
    fill(env, "time", "6:45 am")
    step(env, "GOBACK()")  # hide the keyboard
    click(env, handler="clock.save_alarm")
    assert clock.alarms[-1].time == "06:45" and clock.alarms[-1].enabled


# -- Audio Recorder --------------------------------------------------------------------------------


def test_recorder_saves_named_m4a_and_cancel_discards() -> None:
    env = make("AudioRecorderRecordAudio", seed=1)
    base = env.unwrapped
    data = base.state.apps["audio_recorder"]
    n = len(data.recordings)
    step(env, 'OPEN_APP("Audio Recorder")')
    click(env, handler="audio_recorder.record")
    assert data.recording and base.ui_tree.find_one(resource_id="recording_status")
    click(env, handler="audio_recorder.stop")
    assert base.state.screen_name == "audio_recorder/save"
    click(env, handler="audio_recorder.back")  # Cancel
    assert len(data.recordings) == n and not data.recording
    click(env, handler="audio_recorder.record")
    click(env, handler="audio_recorder.stop")
    fill(env, "name", "lecture_notes")
    step(env, "GOBACK()")
    click(env, handler="audio_recorder.save")
    assert data.recordings[-1].name == "lecture_notes.m4a" and data.recordings[-1].size_kb > 0
    row = base.ui_tree.find_one(handler="audio_recorder.play", handler_arg="lecture_notes.m4a")
    step(env, Action(ActionType.LONG_CLICK, index=row.index))
    click(env, handler="audio_recorder.confirm_delete")
    assert data.find("lecture_notes.m4a") is None


def test_record_audio_needs_exactly_one_new_saved_recording() -> None:
    env = make("AudioRecorderRecordAudio", seed=2)
    base = env.unwrapped
    data = base.state.apps["audio_recorder"]
    step(env, 'OPEN_APP("Audio Recorder")')
    click(env, handler="audio_recorder.record")
    assert success(env) == 0.0  # still recording: nothing written
    click(env, handler="audio_recorder.stop")
    assert success(env) == 0.0  # not saved yet
    click(env, handler="audio_recorder.save")
    assert success(env) == 1.0
    data.recordings.append(Recording("second.m4a", 5, 80, 99))
    assert success(env) == 0.0  # two new recordings
    data.recordings[-1] = Recording("second.m4a", 0, 0, 99)
    assert success(env) == 1.0  # an empty file does not count


def test_record_with_file_name_checks_the_name() -> None:
    env = make("AudioRecorderRecordAudioWithFileName", seed=3)
    base = env.unwrapped
    name = base.task.params["file_name"]
    assert name.endswith(".m4a") and name in base.task.instruction
    data = base.state.apps["audio_recorder"]
    data.recordings.append(Recording("Record-1.m4a", 5, 80, 50))
    assert success(env) == 0.0
    data.recordings.append(Recording(name, 5, 80, 51))  # the app adds .m4a to the typed name
    assert success(env) == 0.0
    data.recordings.append(Recording(name + ".m4a", 5, 80, 52))
    assert success(env) == 1.0


# -- Camera ----------------------------------------------------------------------------------------


def test_camera_photo_video_and_gallery() -> None:
    env = make("CameraTakeVideo")
    base = env.unwrapped
    cam = base.state.apps["camera"]
    step(env, 'OPEN_APP("camera app")')
    click(env, resource_id="shutter_button")
    assert cam.photos == ["IMG_20231015_153400.jpg"]
    click(env, handler="camera.mode", handler_arg="video")
    assert base.ui_tree.find_one(resource_id="shutter_button").description == "Start recording"
    click(env, resource_id="shutter_button")
    assert cam.recording and cam.videos == []
    info = step(
        env,
        Action(
            ActionType.CLICK,
            index=base.ui_tree.find_one(handler="camera.mode", handler_arg="photo").index,
        ),
    )
    assert not info["action_valid"]  # no mode switch while recording
    click(env, resource_id="shutter_button")
    assert cam.videos == ["VID_20231015_153401.mp4"]
    click(env, resource_id="thumbnail")
    assert base.ui_tree.find_one(resource_id="media_count").text == "1 photo, 1 video"
    click(env, handler="camera.media", handler_arg="IMG_20231015_153400.jpg")
    click(env, handler="camera.confirm_delete")
    assert cam.photos == []


def test_take_photo_and_video_count_files_in_their_folders() -> None:
    env = make("CameraTakePhoto")
    base = env.unwrapped
    cam = base.state.apps["camera"]
    step(env, 'OPEN_APP("Camera")')
    click(env, handler="camera.mode", handler_arg="video")
    click(env, resource_id="shutter_button")
    click(env, resource_id="shutter_button")
    assert cam.videos and success(env) == 0.0  # a video is not a photo
    click(env, handler="camera.mode", handler_arg="photo")
    click(env, resource_id="shutter_button")
    assert success(env) == 1.0
    click(env, resource_id="shutter_button")
    assert success(env) == 0.0  # two photos
    env = make("CameraTakeVideo")
    cam = env.unwrapped.state.apps["camera"]
    step(env, 'OPEN_APP("Camera")')
    click(env, handler="camera.mode", handler_arg="video")
    click(env, resource_id="shutter_button")
    assert success(env) == 0.0  # still recording
    click(env, resource_id="shutter_button")
    assert success(env) == 1.0


@pytest.mark.parametrize("name", ["CameraTakePhoto", "AudioRecorderRecordAudio"])
def test_expert_removes_surplus_files(name: str) -> None:
    env = make(name)
    base = env.unwrapped
    if name == "CameraTakePhoto":
        base.state.apps["camera"].photos += ["IMG_1.jpg", "IMG_2.jpg"]
    else:
        base.state.apps["audio_recorder"].recordings += [
            Recording("a.m4a", 5, 80, 90),
            Recording("b.m4a", 5, 80, 91),
        ]
    oracle_until(env, lambda: success(env) == 1.0)
