"""Exports from the app: the spectrogram of the recording, the view's values, the view as PNG.

The file exports run in the compute thread (chunked, with progress, crash-safe
HDF5); the PNG is a grab of the view.
"""

from __future__ import annotations

from pathlib import Path

from PyQt6.QtCore import QObject
from PyQt6.QtWidgets import QFileDialog
from specscope.compute.output import (
    export_range,
    export_recording,
    export_spectrogram,
    write_display_image,
)
from specscope.compute.pipeline import Pipeline

from .shell import Shell
from .view_controller import ViewController
from .worker import JobCallbacks, JobResult, TaskControl

__all__ = ["HDF5_FILTER", "Exports"]

HDF5_FILTER = "HDF5 (*.h5 *.hdf5)"


class Exports(QObject):
    """Export dialogs and jobs of a :class:`Shell` (results reported in its status bar)."""

    def __init__(self, shell: Shell, views: ViewController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shell, self.views = shell, views

    def _submit(self, out: Path, job) -> int:
        return self.shell.worker.submit("export", job, label=f"Exporting {out.name}",
                                        callbacks=JobCallbacks(done=self._done,
                                                               failed=self._failed,
                                                               cancelled=self._cancelled))

    def _done(self, result: JobResult) -> None:
        self.shell.show_message(f"Exported {result.value}", 10000)

    def _failed(self, message: str) -> None:
        self.shell.show_error(message)

    def _cancelled(self) -> None:
        self.shell.show_message("Export cancelled; nothing was written", 5000)

    # -- the recording's spectrogram --------------------------------------------------
    def export_dialog(self) -> None:
        """Ask for an HDF5 file and export the spectrogram of the whole recording."""
        doc = self.shell.document
        if doc is None:
            return
        default = str(doc.path.with_suffix(".spectrogram.h5"))
        path, _ = QFileDialog.getSaveFileName(self.shell.dialog_parent(),
                                              "Export spectrogram to HDF5", default, HDF5_FILTER)
        if path:
            self.export_to(path)

    def export_to(self, out: str | Path) -> int:
        """Export the full-resolution spectrogram of the current channel (compute thread);
        returns the job id."""
        doc = self.shell.document
        if doc is None:
            raise RuntimeError("nothing is open")
        rec, s, options = doc.recording, doc.settings, dict(doc.options)
        out = Path(out)

        if s.channel < 0:  # every channel, through the pipeline of the app

            def job(control: TaskControl) -> Path:
                return export_range(rec, out, pipeline=Pipeline.from_dict(s.pipeline_dict()),
                                    options=options, progress=control.progress,
                                    cancelled=control.cancelled)

            return self._submit(out, job)

        pipeline = Pipeline.from_dict(s.pipeline_dict()) if s.steps else None

        def job(control: TaskControl) -> Path:
            if pipeline is not None:  # the processing, then the spectrogram, with provenance
                return export_recording(pipeline, rec, out, channel=s.channel, options=options,
                                        progress=control.progress, cancelled=control.cancelled)
            return export_spectrogram(rec, out, s.stft, channel=s.channel,
                                      progress=control.progress, cancelled=control.cancelled)

        return self._submit(out, job)

    # -- the view ---------------------------------------------------------------------
    def export_view_dialog(self) -> None:
        """Ask for an HDF5 file and write the values of the view to it."""
        path, _ = QFileDialog.getSaveFileName(self.shell.dialog_parent(),
                                              "Export view values to HDF5", "view.h5",
                                              HDF5_FILTER)
        if path:
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
                                       freq_scale=s.freq_scale)

        return self._submit(out, job)

    def export_png_dialog(self) -> None:
        """Ask for a PNG file and save the view to it."""
        path, _ = QFileDialog.getSaveFileName(self.shell.dialog_parent(), "Export view as PNG",
                                              "view.png", "PNG (*.png)")
        if path:
            self.export_png(path)

    def export_png(self, path: str | Path) -> bool:
        """Save the spectrogram view (with axes and colour bar) as PNG."""
        if not self.shell.view.grab().save(str(path), "PNG"):
            self.shell.show_error(f"{path}: could not write the PNG")
            return False
        self.shell.show_message(f"Saved {path}")
        return True
