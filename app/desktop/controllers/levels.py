"""Long-term sound levels in the app: the Levels dock, its computation and its exports.

:class:`LevelsController` owns the :class:`~specscope.widgets.levels_panel.LevelsPanel`
(View › Levels, and View › Compute levels…).  Compute runs
:func:`~specscope.compute.levels.compute_levels` over the open recording or deployment
(its current channel, as recorded: the processing chain is not applied) as a job of the
compute thread, with progress in the status bar and Cancel there, in the panel and on
Esc; the job also makes the plots ready (:func:`~specscope.widgets.levels_panel.prepare_plots`),
so the GUI thread only draws.  The levels are calibrated with the recording's calibration
(View › Calibration…) unless the panel names a calibration file of its own; that file is
read in the job, and a bad one is one line in the panel.  Each plot exports PNG and CSV (the CSV's first line names the unit),
the whole product NetCDF-4; every file goes through an atomic write and never over an
input (a recording of the deployment, the calibration file).
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from PyQt6.QtCore import QBuffer, QIODevice, QObject, Qt
from PyQt6.QtWidgets import QDockWidget, QFileDialog
from specscope.app.qt.worker import JobCallbacks, JobError, JobResult, TaskControl
from specscope.compute.files import (
    atomic_write_bytes,
    atomic_write_text,
    recording_files,
    refuse_overwriting_inputs,
)
from specscope.compute.levels import SpectrumParams, compute_levels, load_calibration, write_netcdf
from specscope.widgets.levels_panel import (
    PERCENTS,
    PLOTS,
    LevelsPanel,
    LevelsPlots,
    band_text,
    diel_levels,
    prepare_plots,
)

__all__ = ["LevelsController", "csv_text"]

#: the file names the export dialogs offer first, by plot
DEFAULT_NAMES = {"ltsa": "levels_ltsa", "bands": "levels_bands", "spd": "levels_spd",
                 "diel": "levels_day_hour"}


def _num(v: float) -> str:
    return "" if not np.isfinite(v) else f"{float(v):.10g}"


def _times(plots: LevelsPlots) -> tuple[str, list[str]]:
    """The time column's name and text: ISO 8601 in the timeline's zone where absolute."""
    lv = plots.levels
    if not lv.absolute:
        return "time_s", [_num(t) for t in lv.time]
    zone = plots.timeline.zone if plots.timeline is not None else UTC
    return "time", [datetime.fromtimestamp(float(t), UTC).astimezone(zone)
                    .isoformat(timespec="milliseconds") for t in lv.time]


def _header_line(plots: LevelsPlots, what: str) -> str:
    lv = plots.levels
    a = lv.attrs
    cal = "none" if lv.calibration is None else (
        f"{lv.calibration.kind}, sensitivity {lv.calibration.sensitivity_db:g} dB")
    return (f"# {what}; levels in {plots.unit}; {a.get('bands')} bands, interval "
            f"{a.get('interval')} s, {a.get('statistic')}, nfft {a.get('nfft')}, channel "
            f"{a.get('channel')}; calibration: {cal}\n")


def csv_text(plots: LevelsPlots, which: str) -> str:
    """The numbers of plot ``which`` (see :data:`~specscope.widgets.levels_panel.PLOTS`)
    as CSV text: a first line naming the unit (``#``), a header row, the rows."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    lv, db = plots.levels, plots.db
    centres = lv.bands.centres
    if which == "ltsa":
        buf.write(_header_line(plots, "LTSA: level per interval and band"))
        name, times = _times(plots)
        w.writerow([name, "effort_s", *(f"{f:.6g} Hz" for f in centres)])
        for i, t in enumerate(times):
            w.writerow([t, _num(lv.effort[i]), *(_num(v) for v in db[i])])
    elif which == "bands":
        buf.write(_header_line(plots, "band levels against time"))
        name, times = _times(plots)
        w.writerow([name, *(f"{band_text(float(centres[k]))} ({plots.unit})"
                            for k in plots.chosen)])
        for i, t in enumerate(times):
            w.writerow([t, *(_num(db[i, k]) for k in plots.chosen)])
    elif which == "spd":
        buf.write(_header_line(plots, "spectral probability density (1/dB) per level bin, "
                                      "and percentile levels L_N"))
        e = plots.spd_edges
        w.writerow(["frequency_hz", *(f"L{p:g} ({plots.unit})" for p in PERCENTS),
                    *(f"{e[j]:g} to {e[j + 1]:g} dB" for j in range(len(e) - 1))])
        for k, f in enumerate(centres):
            w.writerow([_num(f), *(_num(v) for v in plots.exceedance[:, k]),
                        *(_num(v) for v in plots.spd_density[:, k])])
    elif which == "diel":
        d = plots.diel
        if d is None:
            raise ValueError("no day x hour levels")
        f = band_text(float(centres[d.band]))
        buf.write(_header_line(plots, f"median level of the {f} band per day and hour "
                                      f"of day ({d.tz})"))
        w.writerow(["date", "hour", f"median level ({plots.unit})", "intervals"])
        for i, day in enumerate(d.days):
            for h in range(24):
                if d.counts[i, h]:
                    w.writerow([day.isoformat(), h, _num(d.grid[i, h]), int(d.counts[i, h])])
    else:
        raise ValueError(f"no plot {which!r}")
    return buf.getvalue()


class LevelsController(QObject):
    """The Levels dock of the main window: compute, draw, export.

    Parameters
    ----------
    shell : MainWindow
        The window (its worker, document, settings, deployment controller, messages).
    parent : QObject, optional
    """

    def __init__(self, shell: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.panel = LevelsPanel()
        self.panel.computeRequested.connect(self.compute)
        self.panel.cancelRequested.connect(self.cancel)
        self.panel.exportRequested.connect(self.export_dialog)
        self.panel.dielBandChanged.connect(self.diel_band)
        self.dock = QDockWidget("Levels", shell)
        self.dock.setObjectName("levels")
        self.dock.setWidget(self.panel)
        shell.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        shell.tabifyDockWidget(shell.annotations_dock, self.dock)
        self.dock.setVisible(False)
        shell.annotations_dock.raise_()
        #: the id of the running computation (None: none)
        self.job: int | None = None
        #: the calibration file of the last computation (an input: never written over)
        self._calibration_path: Path | None = None
        #: the recording's calibration, used when the panel names no file (None: none)
        self.default_calibration: Any = None
        self.panel.show_status("Open a recording or a folder, then Compute")

    # -- showing -----------------------------------------------------------------------
    def show_panel(self) -> None:
        """View › Compute levels…: the Levels dock shown and raised, Compute focused."""
        self.dock.setVisible(True)
        self.dock.raise_()
        self.panel.compute_button.setFocus()

    def document_opened(self, recording: Any) -> None:
        """A new recording: the last one's levels go (a running computation stops)."""
        if self.job is not None:
            self.shell.worker.cancel("levels")
        self.panel.set_plots(None)
        self.panel.set_running(False)
        self.panel.show_status(f"{Path(str(recording.path)).name}: Compute gives its levels")

    def set_default_calibration(self, calibration: Any) -> None:
        """The recording's calibration (View › Calibration…), used when the panel's field
        is empty; None: levels in dB re full scale."""
        self.default_calibration = calibration
        self.panel.set_default_calibration(
            None if calibration is None else
            f"{calibration.kind}, {calibration.sensitivity_db:g} dB ({calibration.density_unit})")

    # -- computing ---------------------------------------------------------------------
    def compute(self, form: dict[str, Any] | None = None) -> int | None:
        """Compute the levels of the open recording with ``form``'s values (default: the
        panel's); returns the job id."""
        form = form or self.panel.form()
        doc = self.shell.document
        if doc is None:
            self.panel.show_status("Open a recording or a folder of recordings first", True)
            return None
        rec = doc.recording
        channel = int(self.shell.settings.channel)
        timeline = self.shell.deployment.timeline
        cal_text = str(form.get("calibration") or "")
        cal_path = Path(cal_text).expanduser() if cal_text else None
        self._calibration_path = cal_path
        default = self.default_calibration
        bands, interval, statistic = form["bands"], float(form["interval"]), form["statistic"]

        def job(control: TaskControl) -> LevelsPlots:
            control.check()
            cal = load_calibration(cal_path) if cal_path is not None else default
            params = SpectrumParams(interval=interval, statistic=statistic)
            levels = compute_levels(rec, bands=bands, params=params, channel=channel,
                                    calibration=cal,
                                    progress=lambda d, n: control.progress(d / max(n, 1)),
                                    cancelled=control.cancelled)
            control.check()
            return prepare_plots(levels, timeline)

        name = Path(str(rec.path)).name
        self.panel.set_running(True, f"Computing {bands} levels of {name}…")
        self.job = self.shell.worker.submit(
            "levels", job, label=f"Levels of {name}",
            callbacks=JobCallbacks(done=self._computed, failed=self._failed,
                                   cancelled=self._cancelled))
        return self.job

    def cancel(self) -> None:
        """Stop the running computation (its last result stays)."""
        self.shell.worker.cancel("levels")

    def _computed(self, result: JobResult) -> None:
        self.job = None
        plots: LevelsPlots = result.value
        self.panel.set_running(False)
        self.panel.set_plots(plots)
        lv = plots.levels
        text = (f"{len(lv.time)} interval(s) x {len(lv.bands)} {lv.attrs.get('bands')} bands, "
                f"levels in {lv.unit} ({result.seconds:.1f} s)")
        if lv.failed:
            text += f"; {len(lv.failed)} file(s) failed (View › Messages lists each)"
            for line in lv.failed:
                self.shell.message_log.add(line, error=True, merge=False)
        self.panel.show_status(text)
        self.shell.show_message(f"Levels: {text}", 8000)

    def _failed(self, error: JobError) -> None:
        self.job = None
        self.panel.set_running(False)
        self.panel.show_status(error.message, True)
        self.shell.show_error(error.message, dialog=False)

    def _cancelled(self) -> None:
        self.job = None
        self.panel.set_running(False)
        kept = " (the last levels stay)" if self.panel.plots is not None else ""
        self.panel.show_status(f"Computing levels cancelled{kept}")
        self.shell.show_message("Computing levels cancelled", 5000)

    def diel_band(self, band: int) -> None:
        """The day x hour plot of another band (compute thread)."""
        plots = self.panel.plots
        if plots is None or not plots.levels.absolute:
            return
        tl = plots.timeline
        zone, tz = (tl.zone, tl.tz) if tl is not None else (UTC, "UTC")

        def job(control: TaskControl):
            return plots, diel_levels(plots.levels, band, plots.db, zone, tz)

        def done(result: JobResult) -> None:
            shown, diel = result.value
            if shown is self.panel.plots:  # not levels computed since
                self.panel.set_diel(diel)

        self.shell.worker.submit("levels_diel", job, label="", callbacks=JobCallbacks(
            done=done, failed=lambda e: self.panel.show_status(e.message, True)))

    # -- exports -----------------------------------------------------------------------
    def export_dialog(self, kind: str) -> None:
        """Ask for the file of a ``"png"``, ``"csv"`` or ``"netcdf"`` export, then write it."""
        which = self.panel.current_plot()
        if kind == "netcdf":
            title, name, filt = "Export levels as NetCDF", "levels.nc", "NetCDF (*.nc)"
        else:
            title = f"Export the {PLOTS[which]} plot as {kind.upper()}"
            name = f"{DEFAULT_NAMES[which]}.{kind}"
            filt = "PNG image (*.png)" if kind == "png" else "CSV (*.csv)"
        doc = self.shell.document
        start = Path(str(doc.recording.path)).parent / name if doc is not None else Path(name)
        path, _ = QFileDialog.getSaveFileName(self.shell, title, str(start), filt)
        if path:
            self.export_to(kind, path)

    def _inputs(self) -> list[Path]:
        doc = self.shell.document
        out: list[Path] = []
        if doc is not None:
            rec = doc.recording
            out += recording_files(rec)
            out += [Path(str(f.path)) for f in getattr(rec, "files", ()) or ()]
        if self._calibration_path is not None:
            out.append(self._calibration_path)
        return out

    def export_to(self, kind: str, path: str | Path, which: str | None = None) -> int | None:
        """Write plot ``which`` (default: the one shown) as ``"png"`` or ``"csv"``, or the
        whole product as ``"netcdf"``, to ``path`` (compute thread); returns the job id."""
        plots = self.panel.plots
        if plots is None:
            self.panel.show_status("Compute the levels first", True)
            return None
        which = which or self.panel.current_plot()
        path = Path(path)
        inputs = self._inputs()
        if kind == "png":
            data = self._png(which)

            def write() -> None:
                atomic_write_bytes(path, data, what="file name ending in .png")
        elif kind == "csv":
            if which == "diel" and plots.diel is None:
                self.panel.show_status("No day x hour levels: the recording states no "
                                       "start time", True)
                return None

            def write() -> None:
                atomic_write_text(path, csv_text(plots, which),
                                  what="file name ending in .csv")
        elif kind == "netcdf":
            def write() -> None:
                write_netcdf(plots.levels, path)
        else:
            raise ValueError(f"no export {kind!r}")

        def job(control: TaskControl) -> Path:
            refuse_overwriting_inputs([path], inputs)
            write()
            return path

        def done(_: JobResult) -> None:
            what = "levels" if kind == "netcdf" else f"{PLOTS[which]} plot"
            self.panel.show_status(f"The {what} written to {path}")
            self.shell.show_message(f"The {what} written to {path}", 8000)

        def failed(error: JobError) -> None:
            self.panel.show_status(error.message, True)
            self.shell.show_error(error.message, dialog=False)

        return self.shell.worker.submit("levels_export", job, label=f"Writing {path.name}",
                                        callbacks=JobCallbacks(done=done, failed=failed))

    def _png(self, which: str) -> bytes:
        """Plot ``which`` drawn as PNG bytes (drawn here, on the GUI thread)."""
        widget = self.panel.plot_widget(which)
        image = widget.grab().toImage()
        buf = QBuffer()
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        image.save(buf, "PNG")
        return bytes(buf.data())
