"""Exports from the app: a range of the recording, its spectrogram, the view's values, the
view as PNG.

The file exports run in the compute thread (chunked, with progress and Cancel,
published atomically); the PNG is a grab of the view.  A range export
(File › Export range…) asks with :class:`~specscope.widgets.export_dialog.ExportRangeDialog`
and runs :func:`specscope.compute.output.export_range`; on a recording with absolute
times (a deployment) its Start and Stop read and take dates and times.  The HDF5 exports
of a calibrated recording carry its calibration (the root attribute ``calibration``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from PyQt6.QtCore import QObject
from PyQt6.QtWidgets import QFileDialog
from specscope.app.qt.shell import Shell
from specscope.app.qt.view_controller import ViewController
from specscope.app.qt.worker import JobCallbacks, JobError, JobResult, TaskControl
from specscope.compute.output import (
    export_range,
    export_recording,
    export_spectrogram,
    seconds_to_samples,
    write_display_image,
)
from specscope.compute.pipeline import Pipeline
from specscope.widgets.export_dialog import FORMATS, ExportRangeDialog, format_of

__all__ = ["HDF5_FILTER", "Exports"]

HDF5_FILTER = "HDF5 (*.h5 *.hdf5)"


class Exports(QObject):
    """Export dialogs and jobs of a :class:`Shell` (results reported in its status bar).

    Parameters
    ----------
    shell : Shell
        The window: document, settings, worker, view and messages.
    views : ViewController
        The view controller; the view exports write its last image.
    parent : QObject or None, optional
        The Qt parent.
    """

    def __init__(self, shell: Shell, views: ViewController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shell, self.views = shell, views
        #: the open range dialog (None when none is open)
        self.range_dialog: ExportRangeDialog | None = None
        #: gives the selection's span (s) or None; the range dialog starts with it
        self.selection_span: Callable[[], tuple[float, float] | None] | None = None
        #: what the export dialogs were last given in this session: "folder", and for a
        #: range "format", "subtype", "channels", "range" (a Range choice), "custom" (s, s)
        self.remembered: dict[str, object] = {}

    def _folder(self) -> Path:
        """Where the file dialogs start: the last folder exported to, else the recording's."""
        doc = self.shell.document
        folder = self.remembered.get("folder")
        if isinstance(folder, Path) and folder.is_dir():
            return folder
        return doc.path.parent if doc is not None else Path.cwd()

    def _remember_folder(self, path: str | Path) -> None:
        self.remembered["folder"] = Path(path).expanduser().resolve().parent

    def _submit(self, out: Path, job) -> int:
        return self.shell.worker.submit("export", job, label=f"Exporting {out.name}",
                                        callbacks=JobCallbacks(done=self._done,
                                                               failed=self._failed,
                                                               cancelled=self._cancelled))

    def _done(self, result: JobResult) -> None:
        self.shell.show_message(f"Exported {result.value}", 10000)

    def _failed(self, error: JobError) -> None:
        self.shell.show_error(error.message)

    def _cancelled(self) -> None:
        self.shell.show_message("Export cancelled; nothing was written", 5000)

    # -- a range ----------------------------------------------------------------------
    def export_range_dialog(self, span: tuple[float, float] | None = None) -> None:
        """Ask for a range, channels, output and processing, then export it.

        Parameters
        ----------
        span : (float, float), optional
            The range shown first (s); by default the selection, else the visible span.
        """
        doc = self.shell.document
        if doc is None:
            return
        rec, s, mem = doc.recording, doc.settings, self.remembered
        selection = span if span is not None else (
            self.selection_span() if self.selection_span is not None else None)
        t0, t1, _, _ = self.shell.view.visible_range()
        ranges = {"Visible span": (max(0.0, t0), min(rec.duration, t1)),
                  "Whole recording": (0.0, rec.duration)}
        if selection is not None:
            ranges["Selection"] = selection
        custom = mem.get("custom")
        if isinstance(custom, tuple) and custom[0] < rec.duration:
            ranges["Custom"] = custom
        # an explicit span (the Selection panel's Export…) wins; then the last choice
        choice = "Selection" if span is not None else str(mem.get("range", ""))
        if choice not in ranges:
            choice = "Selection" if selection is not None else "Visible span"
        first = ranges[choice]
        processing = ", ".join(step.get("op", "?") for step in s.steps)
        # every channel unless this session chose others (that this recording has)
        channels = mem.get("channels")
        if not (isinstance(channels, tuple) and channels
                and all(c < rec.n_channels for c in channels)):
            channels = tuple(range(rec.n_channels))
        ext = FORMATS.get(str(mem.get("format", "")), ".h5")
        dlg = ExportRangeDialog(duration=rec.duration, n_channels=rec.n_channels,
                                start=first[0], stop=first[1],
                                path=str(self._folder() / (doc.path.stem + "-range" + ext)),
                                channels=channels, processing=processing, ranges=ranges,
                                range_choice=choice,
                                subtype=mem.get("subtype") if isinstance(
                                    mem.get("subtype"), str) else None,
                                # a deployment's dates and times, as the time axis shows
                                timeline=getattr(self.shell.view, "timeline", None),
                                parent=self.shell.dialog_parent())
        dlg.accepted.connect(self._range_chosen)
        dlg.finished.connect(self._range_dialog_closed)
        self.range_dialog = dlg
        dlg.open()

    def _range_chosen(self) -> None:
        dlg = self.range_dialog
        if dlg is None:
            return
        c = dlg.choice()
        self._remember_folder(c.path)
        self.remembered.update(format=format_of(str(c.path)), channels=tuple(c.channels),
                               range=c.range_choice, custom=(c.start, c.stop))
        if c.subtype is not None:
            self.remembered["subtype"] = c.subtype
        self.export_range_to(c.path, c.start, c.stop, c.channels, processed=c.processed,
                             subtype=c.subtype)

    def _range_dialog_closed(self, _result: int) -> None:
        dlg, self.range_dialog = self.range_dialog, None
        if dlg is not None:
            dlg.deleteLater()

    def export_range_to(self, out: str | Path, start: float, stop: float,
                        channels: Sequence[int] | None = None, *,
                        processed: bool = False, subtype: str | None = None) -> int:
        """Export ``start .. stop`` s of ``channels`` to ``out`` (compute thread).

        Parameters
        ----------
        out : path
            The output; its extension picks HDF5, WAV/FLAC or SigMF.
        start, stop : float
            The range in seconds from the start of the recording.
        channels : sequence of int, optional
            Source channels (all by default).
        processed : bool
            Through the current processing (steps and the designer's filter),
            else the samples as they are.
        subtype : str, optional
            The sample format of a WAV/FLAC output (``"PCM_16"``, ``"PCM_24"``,
            ``"FLOAT"``); the format's default when None.

        Returns
        -------
        int
            The job id.
        """
        doc = self.shell.document
        if doc is None:
            raise RuntimeError("nothing is open")
        rec, options, out = doc.recording, dict(doc.options), Path(out)
        cal = doc.settings.calibration_obj
        steps = doc.settings.steps if processed else []
        pipeline = Pipeline.from_steps(steps) if steps else None
        fs = rec.sample_rate
        a = seconds_to_samples(start, fs, "start")
        b = min(seconds_to_samples(stop, fs, "stop"), rec.n_samples)
        chans = list(channels) if channels is not None else None
        n_ch = len(chans) if chans is not None else rec.n_channels

        def job(control: TaskControl) -> str:
            t0 = time.perf_counter()
            path = export_range(rec, out, pipeline=pipeline, start=a, stop=b, channels=chans,
                                options=options, subtype=subtype, progress=control.progress,
                                cancelled=control.cancelled, calibration=cal)
            seconds = max(time.perf_counter() - t0, 1e-9)
            rate = (b - a) * n_ch / seconds
            return (f"{path} ({b - a} samples × {n_ch} ch in {seconds:.2f} s, "
                    f"{rate / 1e6:.1f} M samples/s)")

        return self._submit(out, job)

    # -- the recording's spectrogram --------------------------------------------------
    def export_dialog(self) -> None:
        """Ask for an HDF5 file and export the spectrogram of the whole recording."""
        doc = self.shell.document
        if doc is None:
            return
        default = str(self._folder() / (doc.path.stem + ".spectrogram.h5"))
        path, _ = QFileDialog.getSaveFileName(self.shell.dialog_parent(),
                                              "Export spectrogram to HDF5", default, HDF5_FILTER)
        if path:
            self._remember_folder(path)
            self.export_to(path)

    def export_to(self, out: str | Path) -> int:
        """Export the full-resolution spectrogram, after the processing (compute thread);
        returns the job id.

        Every channel of a recording of several, whichever the view shows:
        ``spectrogram`` shaped (channel, time, frequency) with its ``channel`` scale.
        """
        doc = self.shell.document
        if doc is None:
            raise RuntimeError("nothing is open")
        rec, s, options = doc.recording, doc.settings, dict(doc.options)
        out = Path(out)
        n_ch = rec.n_channels
        cal = s.calibration_obj

        if s.channel < 0 or n_ch > 1:  # every channel, through the pipeline of the app
            def job(control: TaskControl) -> str:
                path = export_range(rec, out, pipeline=Pipeline.from_dict(s.pipeline_dict()),
                                    options=options, progress=control.progress,
                                    cancelled=control.cancelled, calibration=cal)
                return f"{path} ({n_ch} channel{'s' if n_ch != 1 else ''})"

            return self._submit(out, job)

        pipeline = Pipeline.from_dict(s.pipeline_dict()) if s.steps else None

        def job(control: TaskControl) -> Path:
            if pipeline is not None and cal is not None:  # the same writer, with the attribute
                return export_range(rec, out, pipeline=pipeline, channels=[s.channel],
                                    options=options, progress=control.progress,
                                    cancelled=control.cancelled, calibration=cal)
            if pipeline is not None:  # the processing, then the spectrogram, with provenance
                return export_recording(pipeline, rec, out, channel=s.channel, options=options,
                                        progress=control.progress, cancelled=control.cancelled)
            return export_spectrogram(rec, out, s.stft, channel=s.channel,
                                      progress=control.progress, cancelled=control.cancelled,
                                      calibration=cal)

        return self._submit(out, job)

    # -- the view ---------------------------------------------------------------------
    def export_view_dialog(self) -> None:
        """Ask for an HDF5 file and write the values of the view to it."""
        path, _ = QFileDialog.getSaveFileName(self.shell.dialog_parent(),
                                              "Export view values to HDF5",
                                              str(self._folder() / "view.h5"), HDF5_FILTER)
        if path:
            self._remember_folder(path)
            self.export_view(path)

    def export_view(self, out: str | Path) -> int | None:
        """Write the values of the view (dB image and its axes) to HDF5 (compute thread);
        returns the job id, None when nothing is drawn yet."""
        img, doc = self.views.last_image, self.shell.document
        if img is None or doc is None:
            self.shell.show_error("nothing to export yet: wait for the view to be drawn",
                                  dialog=False)
            return None
        s, out = doc.settings, Path(out)

        def job(control: TaskControl) -> Path:
            return write_display_image(img, out, doc.recording, s.stft, channel=s.channel,
                                       freq_scale=s.freq_scale, calibration=s.calibration_obj)

        return self._submit(out, job)

    def export_png_dialog(self) -> None:
        """Ask for a PNG file and save the view to it."""
        path, _ = QFileDialog.getSaveFileName(self.shell.dialog_parent(), "Export view as PNG",
                                              str(self._folder() / "view.png"), "PNG (*.png)")
        if path:
            self._remember_folder(path)
            self.export_png(path)

    def export_png(self, path: str | Path) -> bool:
        """Save the spectrogram view (with axes and colour bar) as PNG, without the
        mouse's crosshair and readouts."""
        if not self.shell.view.grab_clean().save(str(path), "PNG"):
            self.shell.show_error(f"{path}: could not write the PNG")
            return False
        self.shell.show_message(f"Saved {path}")
        return True
