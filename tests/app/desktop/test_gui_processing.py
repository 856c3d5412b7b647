"""Processing steps, pipelines, plugin views and the plugins dialog in the app."""

import json

import h5py
import numpy as np
import pytest
from _gui import TIMEOUT_MS, WindowLife, open_and_wait, wait_until
from specscope.compute import StftParams, open_recording
from specscope.compute.operators import call
from specscope.compute.pipeline import Pipeline
from specscope.compute.view import plugin_image, plugin_view


@pytest.fixture
def window(opened):
    """The example open, the plugin menus filled."""
    wait_until(lambda: opened.processing.editor.add.menu() is not None
               and len(opened.representation_menu.actions()) > 1, what="the plugin menus")
    return opened


def detail_done(window):
    return {"check_params_cb": lambda i, kind, r: kind == "detail"}


def test_sample_wise_processing_changes_the_view(qtbot, window, example_path):
    before = window.last_image.db.copy()
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS, **detail_done(window)):
        window.processing.set_steps([{"op": "gain", "params": {"factor": 10.0}}])
    # a detail job of the old settings may be the one that finished: wait for the new image
    qtbot.waitUntil(lambda: window.last_image is not None
                    and not np.array_equal(window.last_image.db, before), timeout=TIMEOUT_MS)
    # power scales with the square of the gain: +20 dB everywhere
    np.testing.assert_allclose(window.last_image.db - before, 20.0, atol=1e-3)
    assert json.loads(window.settings.processing) == [{"op": "gain",
                                                         "params": {"factor": 10.0}}]
    window.undo_stack.undo()
    assert window.settings.processing == "[]"
    assert window.processing.editor.steps() == []


def test_bad_step_is_named_in_the_editor(qtbot, window):
    window.processing.set_steps([{"op": "gain", "params": {"factor": -1.0}}])
    assert "factor=-1.0" in window.processing.editor.error.text()
    assert window.settings.processing == "[]"


def test_pipeline_save_open_and_export(qtbot, window, example_path, tmp_path):
    steps = [{"op": "filter", "params": {"design": "butter", "btype": "highpass", "order": 4,
                                          "cutoff": 500.0, "zero_phase": False}}]
    window.processing.set_steps(steps)
    qtbot.waitUntil(window.views.up_to_date, timeout=TIMEOUT_MS)
    # the view filters too, or says that only the export does
    assert window.engine.pipeline is not None or "without processing" in window.views.view_note
    path = tmp_path / "p.json"
    window.processing.save_pipeline(path)
    saved = Pipeline.load(path)
    assert saved.stft_params == StftParams(1024, 256)
    assert saved.to_dict()["steps"][0]["op"] == "filter"
    # the export runs the same pipeline as the CLI runner would
    out = tmp_path / "gui.h5"
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "export"):
        window.export_to(out)
    with open_recording(example_path) as rec:
        ref = saved.run(rec, channels=[0])
    with h5py.File(out, "r") as h:
        np.testing.assert_allclose(h["spectrogram"][...], ref.data[0].T, rtol=1e-5,
                                   atol=1e-6 * float(np.max(ref.data)))
        assert "pipeline" in h
    # a new window opens that pipeline file: same steps, same STFT
    window.undo_stack.undo()
    assert window.settings.processing == "[]"
    assert window.open_pipeline(path)
    assert window.settings.steps == saved.signal_part().to_dict()["steps"]


def test_open_pipeline_reports_bad_files(qtbot, window, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"specscope": "pipeline/1", "steps": [{"op": "nope"}]}))
    with qtbot.waitSignal(window.errorShown, timeout=TIMEOUT_MS) as b:
        assert not window.open_pipeline(bad)
    assert "nope" in b.args[0]


def test_plugin_view_scalogram(qtbot, window, example_path):
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS, **detail_done(window)):
        window.view.set_time_range(1.0, 1.5)
    with qtbot.waitSignal(window.worker.finished, timeout=TIMEOUT_MS, **detail_done(window)):
        window.processing.set_representation("scalogram.morlet")
    qtbot.waitUntil(lambda: window.processing.view_form is not None, timeout=TIMEOUT_MS)
    r = window.last_request
    t0, t1 = r.t0, r.t1
    params = json.loads(window.settings.view_params)
    # the view's columns: the operator at the view's width, with the recording around the span
    with open_recording(example_path) as rec:
        ref = plugin_view("scalogram.morlet", lambda a, b: rec.read(a, b, 0)[:, 0],
                          rec.n_samples, 48000.0, int(t0 * 48000), int(np.ceil(t1 * 48000)),
                          params, columns=r.width, n_rows=window.last_image.db.shape[0])
    assert window.last_image.db.shape[1] <= r.width
    np.testing.assert_allclose(window.last_image.db, ref.db, atol=1e-4)
    assert window.view._bg is None  # no STFT background under another representation
    # the generated form edits the view's parameters
    form = window.processing.view_form
    assert {p["name"] for p in form.schema} >= {"fmin", "n_freqs", "wavelet"}
    window.undo_stack.undo()
    assert window.settings.representation == "stft"


def test_chunked_plugin_image_equals_one_call():
    """Chunks read with the context the operator's impulse response needs give the
    columns of one call over the whole signal."""
    fs = 16000.0
    x = np.random.default_rng(3).standard_normal(100_000).astype(np.float32)
    params = {"hop": 16}
    freqs, times, values = call("scalogram.morlet", x, fs=fs, **params)
    # on a log axis of as many rows as the operator has, row k is the operator's row k
    img = plugin_image("scalogram.morlet", x, fs, 0.0, params, freq_scale="log",
                       n_rows=freqs.size)
    assert img.db.shape == (freqs.size, times.size)
    # The context reaches the impulse response's -80 dB point, so a chunk's error is that
    # far below the signal's level: 0.05 dB (1.2 %) in power, plus an absolute 1e-6 of
    # the median power for the deep nulls of a noise scalogram, where dB magnify it.
    power = values.astype(np.float64)
    np.testing.assert_allclose(10 ** (img.db / 10), power, rtol=0.012,
                               atol=1e-6 * np.median(power))
    np.testing.assert_allclose((img.column_edges[:-1] + img.column_edges[1:])[1:-1] / 2,
                               times[1:-1], atol=1e-9)


def test_plugin_view_at_the_views_width_is_cancellable():
    """60 s of a scalogram for a 632-pixel view: at most 2 x 632 columns, progress as it
    goes, and cancelled within the chunk it is computing (each is sized for ~0.08 s)."""
    import threading

    from specscope.compute.errors import Cancelled

    fs, width = 8000.0, 632
    x = np.random.default_rng(4).standard_normal(int(60 * fs)).astype(np.float32)
    seen = []
    img = plugin_image("scalogram.morlet", x, fs, 0.0, {}, columns=width,
                       progress=seen.append)
    assert img.db.shape[1] <= 2 * width
    assert img.column_edges[0] == 0.0 and img.column_edges[-1] == pytest.approx(60.0, abs=0.1)
    assert len(seen) >= 10 and seen == sorted(seen) and seen[-1] == 1.0
    stop = threading.Event()
    ended: list = []
    going = threading.Event()
    after: list = []  # progress reports (one a chunk) once Cancel was pressed

    def report(fraction):
        if stop.is_set():
            after.append(fraction)
        going.set()

    def run():
        try:
            plugin_image("scalogram.morlet", x, fs, 0.0, {"n_freqs": 65}, columns=width,
                         cancelled=stop.is_set, progress=report)
        except Cancelled:
            ended.append(True)

    thread = threading.Thread(target=run)
    thread.start()
    assert going.wait(30)  # Cancel is pressed while it computes (after its first chunk)
    stop.set()
    thread.join(30)
    assert ended, "the computation was not cancelled"
    # counted, not timed: the chunk running when Cancel came is the last one
    assert len(after) <= 1 and (not after or after[0] < 1.0), f"chunks after Cancel: {after}"


def test_plugins_dialog_lists_shipped_plugins(qtbot, window):
    window.processing.show_plugins_dialog()
    dlg = window.processing.plugins_dialog
    names = {dlg.table.item(r, 0).text() for r in range(dlg.table.rowCount())}
    assert {"mel", "cqt", "scalogram", "reassigned"} <= names
    dlg.close()


def test_param_form_generates_widgets_from_a_schema(qtbot):
    from PyQt6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox
    from specscope.compute.errors import InputError
    from specscope.widgets.param_form import ParamForm

    schema = [
        {"name": "f", "type": "float", "default": 2.5, "min": 0.0, "max": 10.0, "unit": "Hz"},
        {"name": "n", "type": "int", "default": 4, "min": 1, "max": 64},
        {"name": "mode", "type": "str", "default": "a", "choices": ["a", "b"]},
        {"name": "flag", "type": "bool", "default": False},
        {"name": "taps", "type": "array", "default": None},
        {"name": "must", "type": "float", "default": None, "required": True},
    ]
    form = ParamForm(schema)
    qtbot.addWidget(form)
    w = form._widgets
    assert isinstance(w["f"], QDoubleSpinBox) and w["f"].maximum() == 10.0
    assert w["f"].suffix() == " Hz"
    assert isinstance(w["n"], QSpinBox) and (w["n"].minimum(), w["n"].maximum()) == (1, 64)
    assert isinstance(w["mode"], QComboBox) and isinstance(w["flag"], QCheckBox)
    assert isinstance(w["taps"], QLineEdit)
    with pytest.raises(InputError, match="must is required"):
        form.values()
    form.set_values({"f": 7.0, "n": 8, "mode": "b", "flag": True, "taps": [1, 2],
                     "must": 3.0})
    assert form.values() == {"f": 7.0, "n": 8, "mode": "b", "flag": True, "taps": [1, 2],
                             "must": 3.0}
    w["taps"].setText("[1, 2")
    with pytest.raises(InputError, match="taps="):
        form.values()


def test_show_an_array_from_a_notebook(qtbot, tmp_path):
    import specscope.app

    fs = 8000.0
    t = np.arange(int(fs * 3)) / fs
    x = np.sin(2 * np.pi * 1000 * t).astype(np.float32)
    life = WindowLife()
    win = specscope.app.show(x, fs=fs,
                             pipeline={"specscope": "pipeline/1",
                                       "steps": [{"op": "gain", "params": {"factor": 2.0}},
                                                 {"op": "spectrogram",
                                                  "params": {"nfft": 256, "hop": 64}}]})
    try:
        with qtbot.waitSignal(win.imageShown, timeout=TIMEOUT_MS):
            pass
        assert win.settings.stft.nfft == 256
        assert win.settings.steps == [{"op": "gain", "params": {"factor": 2.0}}]
        img = win.last_image
        f = (img.frequency_edges[:-1] + img.frequency_edges[1:]) / 2
        assert f[np.nanargmax(np.nanmean(img.db, axis=1))] == pytest.approx(1000.0, abs=fs / 256)
        out = tmp_path / "arr.h5"
        with qtbot.waitSignal(win.worker.finished, timeout=TIMEOUT_MS,
                              check_params_cb=lambda i, kind, r: kind == "export"):
            win.export_to(out)
        with h5py.File(out, "r") as h:
            assert h.attrs["source_path"] == "array" and h.attrs["source_sha256"] == ""
    finally:
        life.close(win)
    life.check(win)
    with pytest.raises(Exception, match="give the sample rate"):
        specscope.app.show(x)


def test_hdf5_with_several_signals_asks_which(qtbot, make_window, tmp_path, monkeypatch):
    from PyQt6.QtWidgets import QInputDialog

    path = tmp_path / "multi.h5"
    with h5py.File(path, "w") as f:
        f["a/x"] = np.zeros(4000, np.float32)
        f["a/x"].attrs["sample_rate"] = 1000.0
        f["b/y"] = np.sin(np.arange(8000) * 0.3).astype(np.float32)
        f["b/y"].attrs["sample_rate"] = 2000.0
    asked = []

    def choose(parent, title, label, items, current, editable):
        asked.append(items)
        return items[1], True

    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(choose))
    w = make_window(nfft=256, hop=64, interactive=True)
    open_and_wait(w, path)
    assert len(asked) == 1 and len(asked[0]) == 2 and "/b/y" in asked[0][1]
    rec = w.document.recording
    assert rec.sample_rate == 2000.0 and rec.n_samples == 8000


def test_stacked_channels(qtbot, make_window, stereo_wav, tmp_path):
    path, _x, fs = stereo_wav  # 1 kHz left, 3 kHz right
    w = make_window(nfft=256, hop=64)
    open_and_wait(w, path)
    assert w.controls.channel.minimum() == -1
    w.controls.channel.setValue(-1)           # "all (stacked)"
    qtbot.waitUntil(lambda: isinstance(w.engine, type(w.engine))
                    and w.engine.__class__.__name__ == "StackedEngine"
                    and w.last_image is not None and not w.worker.is_busy(),
                    timeout=TIMEOUT_MS)
    e = w.engine
    img = w.last_image
    centres = (img.frequency_edges[:-1] + img.frequency_edges[1:]) / 2
    with np.errstate(all="ignore"):
        m = np.nanmean(np.where(np.isfinite(img.db), img.db, -400.0), axis=1)
    half = centres < e.band
    c0, f0 = e.split(centres[half][np.nanargmax(m[half])])
    c1, f1 = e.split(centres[~half][np.nanargmax(m[~half])])
    assert (c0, c1) == (0, 1)
    assert f0 == pytest.approx(1000.0, abs=fs / 256) and f1 == pytest.approx(3000.0,
                                                                             abs=fs / 256)
    # rows stay uniform (a whole number of gap rows between the bands)
    np.testing.assert_allclose(np.diff(img.frequency_edges), fs / 256)
    # the axis labels frequencies inside each band
    labels = w.view.freq_axis.tickStrings([e.band + 500.0 - e.f0], 1.0, 1.0)
    assert labels == w.view.freq_axis.tickStrings([500.0 - e.f0], 1.0, 1.0)
    out = tmp_path / "both.h5"
    with qtbot.waitSignal(w.worker.finished, timeout=TIMEOUT_MS,
                          check_params_cb=lambda i, kind, r: kind == "export"):
        w.export_to(out)
    with h5py.File(out, "r") as h:
        assert h["spectrogram"].shape[0] == 2   # (channel, time, frequency)
