"""The GUI tests' shared window (tests/_gui.py, conftest.py): its timeout scale, and the
check after close that fails when a window leaves a thread or its recording behind."""

import threading

import _gui
import pytest
from _gui import WindowLife, make_main_window, open_and_wait
from specscope.compute import open_recording


def test_the_timeout_scale_is_read_and_a_bad_one_is_named(monkeypatch):
    monkeypatch.setenv("SPECSCOPE_TEST_TIMEOUT_SCALE", "2.5")
    assert _gui.timeout_scale() == 2.5
    monkeypatch.delenv("SPECSCOPE_TEST_TIMEOUT_SCALE")
    assert _gui.timeout_scale() == 1.0
    for bad in ("fast", "0", "-1"):
        monkeypatch.setenv("SPECSCOPE_TEST_TIMEOUT_SCALE", bad)
        with pytest.raises(ValueError, match=f"SPECSCOPE_TEST_TIMEOUT_SCALE='{bad}'"):
            _gui.timeout_scale()


def test_a_closed_window_passes_its_check_and_is_deleted(qtbot, example_path):
    from PyQt6 import sip

    life = WindowLife()
    w = make_main_window()
    open_and_wait(w, example_path)
    assert w.document.recording.path == example_path
    life.close(w)
    life.check(w)
    assert sip.isdeleted(w)


def test_the_check_names_a_thread_left_running(qtbot):
    life = WindowLife()
    w = make_main_window()
    release = threading.Event()
    stray = threading.Thread(target=release.wait, name="left-behind")
    stray.start()
    try:
        life.close(w)
        with pytest.raises(AssertionError, match="left-behind"):
            life.check(w, grace_ms=300)
    finally:
        release.set()
        stray.join()
    life.check(w)  # once it ended, the window passes


def test_the_check_names_a_recording_left_open(qtbot, example_path):
    life = WindowLife()
    w = make_main_window()
    open_and_wait(w, example_path)
    held = open_recording(example_path)  # as if the window had not closed its own
    try:
        life.close(w)
        with pytest.raises(AssertionError, match="scene.wav still open"):
            life.check(w, grace_ms=300)
    finally:
        held.close()
    life.check(w)
