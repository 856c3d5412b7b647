"""The Levels panel: Compute on a recording and on a deployment, the four plots against
compute_levels's numbers, the PNG / CSV / NetCDF exports reopened, a bad calibration file
as one line, Cancel, and an export that would write over an input refused."""

from __future__ import annotations

import csv
import hashlib
import json
import threading
from datetime import UTC, timedelta

import numpy as np
import pytest
import soundfile
from _deployments import T0, stamped
from _gui import TIMEOUT_MS, idle, open_and_wait, wait_until
from PyQt6.QtCore import Qt
from PyQt6.QtGui import QImage
from PyQt6.QtWidgets import QFileDialog
from specscope.compute.levels import SpectrumParams, compute_levels
from specscope.compute.levels import run as levels_run
from specscope.widgets.levels_panel import PERCENTS, nearest_bands

FS = 8000


@pytest.fixture
def tone(tmp_path):
    """Two minutes at 8 kHz: a 1 kHz tone in noise."""
    t = np.arange(FS * 120) / FS
    x = 0.3 * np.sin(2 * np.pi * 1000 * t) + 0.01 * np.random.default_rng(0).standard_normal(
        t.size)
    path = tmp_path / "tone.wav"
    soundfile.write(str(path), x.astype(np.float32), FS, subtype="FLOAT")
    return path


#: a deployment: 2 s files every half hour from 12:00, five hours (gaps between)
STARTS = [k * 1800.0 for k in range(10)]


@pytest.fixture
def site(tmp_path):
    stamped(tmp_path / "site", STARTS, n=2 * FS, rate=FS)
    return tmp_path / "site"


def _form(panel, bands: str, interval: float) -> None:
    panel.bands_box.setCurrentIndex(panel.bands_box.findData(bands))
    panel.interval_box.setValue(interval)


def _compute(qtbot, window) -> None:
    panel = window.levels.panel
    window.menu_actions["compute_levels"].trigger()
    assert window.levels.dock.isVisible()
    qtbot.mouseClick(panel.compute_button, Qt.MouseButton.LeftButton)
    wait_until(lambda: panel.plots is not None or panel.status.styleSheet(), TIMEOUT_MS,
               "the levels computed")
    assert panel.plots is not None, panel.status.text()
    idle(window)


def _csv(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ")
    return lines[0], list(csv.reader(lines[1:]))


def _floats(cells):
    return np.array([float(c) if c else np.nan for c in cells])


def _export(qtbot, window, kind, path, which=None):
    """Click the plot's button (``which``), then the export's; the save dialog answered
    with ``path`` (the test's monkeypatch puts the dialog back)."""
    panel = window.levels.panel
    if which is not None:
        qtbot.mouseClick(panel.plot_buttons[which], Qt.MouseButton.LeftButton)
        assert panel.current_plot() == which
    QFileDialog.getSaveFileName = staticmethod(lambda *a, **k: (str(path), ""))
    qtbot.mouseClick(panel.export_buttons[kind], Qt.MouseButton.LeftButton)
    wait_until(lambda: (path.exists() and "written to" in panel.status.text())
               or panel.status.styleSheet(), TIMEOUT_MS, f"{path.name} written")
    assert path.exists(), panel.status.text()


def test_levels_of_a_recording_plot_and_export_compute_levels_numbers(
        window, tone, tmp_path, qtbot, monkeypatch):
    monkeypatch.setattr(QFileDialog, "getSaveFileName", QFileDialog.getSaveFileName)
    open_and_wait(window, tone)
    panel = window.levels.panel
    _form(panel, "decidecade", 10.0)
    _compute(qtbot, window)
    ref = compute_levels(tone, bands="decidecade", params=SpectrumParams(interval=10.0),
                         cache=False)
    db = ref.db()
    p = panel.plots
    assert db.shape == (12, len(ref.bands)) and not ref.absolute
    np.testing.assert_array_equal(p.db, db)
    assert "dB re 1 FS²/Hz" in panel.status.text()
    # (a) the LTSA: each pixel the loudest level of its interval's bands in its row
    img = panel.ltsa_image.image
    want = np.stack([db[p.ltsa_columns, a:b].max(axis=1) for a, b in p.ltsa_rows], axis=1)
    np.testing.assert_array_equal(img, want.astype(np.float32))
    assert img.shape[1] >= 36 and np.all(np.diff(p.ltsa_rows[:, 0]) >= 0)
    assert set(range(len(ref.bands))) - {0} <= {k for a, b in p.ltsa_rows for k in range(a, b)}
    assert panel.ltsa_bar.getAxis("left").labelText == "dB re 1 FS²/Hz"
    k1k = int(np.argmin(abs(ref.bands.centres - 1000)))
    assert np.all(db[:, k1k] > np.delete(db, k1k, axis=1).max(axis=1) + 20)  # the tone
    # (b) band levels: the bands nearest 63 Hz, 125 Hz, 1 kHz, then one more ticked
    assert p.chosen == nearest_bands(ref.bands.centres)
    assert [round(float(ref.bands.centres[k])) for k in p.chosen] == [63, 126, 1000]
    qtbot.mouseClick(panel.plot_buttons["bands"], Qt.MouseButton.LeftButton)
    panel.band_list.item(5).setCheckState(Qt.CheckState.Checked)
    series = panel.band_series()
    assert sorted(series) == sorted([*nearest_bands(ref.bands.centres), 5])
    for k, (x, y) in series.items():
        np.testing.assert_array_equal(x, ref.time)
        np.testing.assert_array_equal(y, db[:, k])
    # (c) SPD: L5, L50, L95 over it
    ex = ref.exceedance(PERCENTS)
    for curve, row in zip(panel.spd_curves, ex, strict=True):
        x, y = curve.getData()
        np.testing.assert_allclose(10 ** x, ref.bands.centres[p.log_bands], rtol=1e-12)
        np.testing.assert_array_equal(y, row[p.log_bands])
    _, density = ref.spd(1.0)
    np.testing.assert_array_equal(panel.spd_image.image,
                                  density[:, panel.spd_columns].T.astype(np.float32))
    # (d) no absolute times: no day x hour plot, nothing to export from it
    qtbot.mouseClick(panel.plot_buttons["diel"], Qt.MouseButton.LeftButton)
    assert p.diel is None and not panel.export_buttons["csv"].isEnabled()
    assert "no start time" in panel.diel_note.text()
    # exports: CSV numbers equal, the unit named; PNG of the plot's size; NetCDF
    source = hashlib.sha256(tone.read_bytes()).hexdigest()
    out = tmp_path / "out"
    out.mkdir()
    _export(qtbot, window, "csv", out / "ltsa.csv", "ltsa")
    head, rows = _csv(out / "ltsa.csv")
    assert "dB re 1 FS²/Hz" in head and rows[0][:2] == ["time_s", "effort_s"]
    np.testing.assert_allclose([float(f.split()[0]) for f in rows[0][2:]], ref.bands.centres,
                               rtol=1e-5)
    got = np.array([_floats(r[2:]) for r in rows[1:]])
    np.testing.assert_allclose(got, db, rtol=1e-9)
    np.testing.assert_allclose(_floats([r[0] for r in rows[1:]]), ref.time)
    _export(qtbot, window, "csv", out / "bands.csv", "bands")
    head, rows = _csv(out / "bands.csv")
    assert rows[0][1] == "63.1 Hz (dB re 1 FS²/Hz)"
    np.testing.assert_allclose(np.array([_floats(r[1:]) for r in rows[1:]]),
                               db[:, p.chosen], rtol=1e-9)
    _export(qtbot, window, "csv", out / "spd.csv", "spd")
    head, rows = _csv(out / "spd.csv")
    assert rows[0][1:4] == [f"L{q:g} (dB re 1 FS²/Hz)" for q in PERCENTS]
    table = np.array([_floats(r) for r in rows[1:]])
    np.testing.assert_allclose(table[:, 0], ref.bands.centres, rtol=1e-9)
    np.testing.assert_allclose(table[:, 1:4], ex.T, rtol=1e-9)
    np.testing.assert_allclose(table[:, 4:], density.T, rtol=1e-9)
    _export(qtbot, window, "png", out / "spd.png", "spd")
    data = (out / "spd.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    png = QImage(str(out / "spd.png"))
    size = panel.spd_widget.grab().size()
    assert (png.width(), png.height()) == (size.width(), size.height()) and png.width() > 200
    _export(qtbot, window, "netcdf", out / "levels.nc")
    import xarray as xr

    with xr.open_dataset(out / "levels.nc", engine="h5netcdf") as ds:
        np.testing.assert_allclose(ds["psd"].values, db.astype(np.float32), rtol=1e-6)
        assert ds["psd"].attrs["units"] == "dB re 1 FS^2/Hz"  # the file's ASCII form
    assert hashlib.sha256(tone.read_bytes()).hexdigest() == source


def test_levels_of_a_deployment_by_day_and_hour(window, site, tmp_path, qtbot, monkeypatch):
    from test_gui_deployment import open_site

    monkeypatch.setattr(QFileDialog, "getSaveFileName", QFileDialog.getSaveFileName)
    open_site(window, site, monkeypatch)
    panel = window.levels.panel
    _form(panel, "octave", 1.0)
    _compute(qtbot, window)
    rec = window.document.recording
    ref = compute_levels(rec, bands="octave", params=SpectrumParams(interval=1.0), cache=False)
    db = ref.db()
    p = panel.plots
    assert ref.absolute and db.shape == (20, len(ref.bands))
    np.testing.assert_array_equal(p.db, db)
    # the time axes are the view's: two intervals per file, the gaps taking no room
    np.testing.assert_allclose(p.x, np.arange(20.0))
    assert panel.ltsa_axis.timeline is window.deployment.timeline
    assert [t for t, _ in panel.ltsa_gaps.labels()] == [2.0 * k for k in range(1, 10)]
    # day x hour: the median of the chosen band per hour, 12:00 to 16:00 on 2024-05-01
    qtbot.mouseClick(panel.plot_buttons["diel"], Qt.MouseButton.LeftButton)
    k = p.chosen[0]
    hours = np.array([(T0 + timedelta(seconds=STARTS[i // 2] + i % 2)).hour
                      for i in range(20)])
    d = p.diel
    assert d.band == k and len(d.days) == 1 and d.days[0] == T0.date()
    for h in range(24):
        want = np.median(db[hours == h, k]) if np.any(hours == h) else np.nan
        np.testing.assert_allclose(d.grid[0, h], want, equal_nan=True)
    np.testing.assert_array_equal(panel.diel_image.image, d.grid.astype(np.float32))
    # another band: computed again for it
    panel.diel_box.setCurrentIndex(2)
    wait_until(lambda: panel.plots.diel.band == 2, TIMEOUT_MS, "the diel of band 2")
    d = panel.plots.diel
    np.testing.assert_allclose(d.grid[0, 12], np.median(db[hours == 12, 2]))
    out = tmp_path / "day_hour.csv"
    _export(qtbot, window, "csv", out)
    head, rows = _csv(out)
    assert "UTC" in head and "dB re 1 FS²/Hz" in head
    assert rows[0] == ["date", "hour", "median level (dB re 1 FS²/Hz)", "intervals"]
    assert [(r[0], int(r[1]), int(r[3])) for r in rows[1:]] == [
        ("2024-05-01", h, 4) for h in (12, 13, 14, 15, 16)]
    np.testing.assert_allclose([float(r[2]) for r in rows[1:]],
                               [np.median(db[hours == h, 2]) for h in range(12, 17)])
    out = tmp_path / "bands.csv"
    _export(qtbot, window, "csv", out, "bands")
    _, rows = _csv(out)
    first = (T0.replace(tzinfo=UTC)).isoformat(timespec="milliseconds")
    assert rows[1][0] == first and rows[3][0] == (T0.replace(tzinfo=UTC) + timedelta(
        seconds=1800)).isoformat(timespec="milliseconds")


def test_a_bad_calibration_file_is_one_line_in_the_panel(window, tone, tmp_path, qtbot):
    open_and_wait(window, tone)
    panel = window.levels.panel
    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps({"unit": "dB re 1 V/mPa", "sensitivity_db": -170}))
    panel.calibration_field.setText(str(cal))
    window.menu_actions["compute_levels"].trigger()
    qtbot.mouseClick(panel.compute_button, Qt.MouseButton.LeftButton)
    wait_until(lambda: panel.status.styleSheet(), TIMEOUT_MS, "the calibration refused")
    text = panel.status.text()
    assert "\n" not in text and "Traceback" not in text
    assert "calibration unit='dB re 1 V/mPa'" in text and str(cal) in text, text
    assert panel.plots is None and panel.compute_button.isEnabled()
    # a good one: levels in dB re 1 µPa²/Hz, offset by the calibration
    cal.write_text(json.dumps({"unit": "dB re 1 V/uPa", "sensitivity_db": -170,
                               "gain_db": 10}))
    _form(panel, "octave", 30.0)
    _compute(qtbot, window)
    ref = compute_levels(tone, bands="octave", params=SpectrumParams(interval=30.0),
                         cache=False)
    np.testing.assert_allclose(panel.plots.db, ref.db() + 160.0, rtol=1e-12)
    assert panel.plots.unit == "dB re 1 µPa²/Hz"
    assert panel.ltsa_bar.getAxis("left").labelText == "dB re 1 µPa²/Hz"


def test_cancel_stops_the_computation(window, tmp_path, qtbot, monkeypatch):
    from test_gui_deployment import open_site

    stamped(tmp_path / "many", [float(k) for k in range(12)], n=FS, rate=FS)
    open_site(window, tmp_path / "many", monkeypatch)
    panel = window.levels.panel
    _form(panel, "octave", 1.0)
    ran: list[int] = []
    release = threading.Event()
    task = levels_run.levels_task

    def held(spec):  # the second task waits until Cancel was clicked
        ran.append(spec["first"])
        if len(ran) == 2:
            release.wait(TIMEOUT_MS / 1000)
        return task(spec)

    monkeypatch.setattr(levels_run, "levels_task", held)
    window.menu_actions["compute_levels"].trigger()
    try:
        qtbot.mouseClick(panel.compute_button, Qt.MouseButton.LeftButton)
        wait_until(lambda: len(ran) == 2, TIMEOUT_MS, "the second task running")
        assert panel.cancel_button.isEnabled() and not panel.compute_button.isEnabled()
        assert window.progress_bar.isVisible()
        qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    finally:
        release.set()
    wait_until(lambda: "cancelled" in panel.status.text(), TIMEOUT_MS, "the cancel")
    idle(window)
    assert len(ran) == 2 and panel.plots is None
    assert panel.compute_button.isEnabled() and not panel.cancel_button.isEnabled()


def test_an_export_over_an_input_is_refused(window, tone, tmp_path, qtbot, monkeypatch):
    open_and_wait(window, tone)
    panel = window.levels.panel
    _form(panel, "octave", 60.0)
    _compute(qtbot, window)
    before = tone.read_bytes()
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(tone), "")))
    qtbot.mouseClick(panel.export_buttons["csv"], Qt.MouseButton.LeftButton)
    wait_until(lambda: panel.status.styleSheet(), TIMEOUT_MS, "the export refused")
    assert "writing it would destroy the input" in panel.status.text()
    assert "\n" not in panel.status.text()
    assert tone.read_bytes() == before
