"""ExportRangeDialog: which part of a recording to export, where, and how.

The person picks the output file (its extension picks the format: HDF5, WAV,
FLAC or SigMF; the format box rewrites the extension), the time range (start
and stop pre-filled by the caller, typed as seconds, milliseconds or
h:mm:ss), the channels, and whether the samples go through the current
processing.  On a recording with absolute times (``timeline``: a deployment) the
fields show dates and times as the readout writes them (``2024-05-01 14:30:05.250
UTC``) and take a typed ISO 8601 date and time (in the recording's zone unless it
names one) as well as seconds from the first sample.  The fields write times to the
millisecond; the recording's length written so stands for its end, so *Whole recording* is every sample of a
recording that lasts no whole number of milliseconds.  The dialog only asks;
:meth:`ExportRangeDialog.choice` hands the answer to whoever runs the export.

:class:`FormatFileDialog` is a Save dialog whose file type and file name agree
whatever the order they are chosen in (the annotations' exports).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from specscope.compute.deployment.timeline import TimeNotRecorded
from specscope.compute.errors import InputError
from specscope.compute.timefmt import TIME_FORMS, TimeFormatError, format_time, parse_time

__all__ = ["FORMATS", "RANGES", "SAMPLE_FORMATS", "ExportRangeChoice", "ExportRangeDialog",
           "FormatFileDialog", "format_of"]

#: format name -> the extension it writes
FORMATS = {"HDF5": ".h5", "WAV": ".wav", "FLAC": ".flac", "SigMF": ".sigmf-meta"}
_SUFFIXES = {".h5": "HDF5", ".hdf5": "HDF5", ".he5": "HDF5", ".nc": "HDF5", ".wav": "WAV",
             ".flac": "FLAC", ".sigmf-meta": "SigMF", ".sigmf-data": "SigMF"}
_FILTER = ("HDF5 (*.h5 *.hdf5);;WAV (*.wav);;FLAC (*.flac);;SigMF (*.sigmf-meta);;"
           "All files (*)")


def _suffix(path: str) -> str:
    name = Path(path).name.lower()
    for s in (".sigmf-meta", ".sigmf-data"):
        if name.endswith(s):
            return s
    return Path(name).suffix


def format_of(path: str) -> str | None:
    """The format name an output path's extension picks (None when unknown).

    Parameters
    ----------
    path : str
        The output file name.

    Returns
    -------
    str or None
        A key of :data:`FORMATS`; None when the extension is not one of theirs.

    Examples
    --------
    >>> format_of("out.WAV"), format_of("capture.sigmf-data"), format_of("notes.txt")
    ('WAV', 'SigMF', None)
    """
    return _SUFFIXES.get(_suffix(path))


#: sample formats of the audio outputs: (what a person reads, soundfile subtype)
SAMPLE_FORMATS = {"WAV": (("32-bit float", "FLOAT"), ("24-bit PCM", "PCM_24"),
                          ("16-bit PCM", "PCM_16")),
                  "FLAC": (("24-bit", "PCM_24"), ("16-bit", "PCM_16"))}
#: where the range comes from (the dialog's Range box)
RANGES = ("Selection", "Visible span", "Whole recording", "Custom")


@dataclass(frozen=True)
class ExportRangeChoice:
    """What the person chose in :class:`ExportRangeDialog`.

    Parameters
    ----------
    path : Path
        The output file.
    start, stop : float
        The range, seconds from the recording's start.
    channels : tuple of int
        The channels exported.
    processed : bool
        Whether the processing is applied.
    subtype : str or None, optional
        The sample format of an audio file (a soundfile subtype); None: the format's
        own.
    range_choice : str, optional
        Where the range came from, one of :data:`RANGES`.
    """

    path: Path
    start: float
    stop: float
    channels: tuple[int, ...]
    processed: bool
    subtype: str | None = None
    range_choice: str = "Custom"


class ExportRangeDialog(QDialog):
    """Ask for an output file, a time range, channels and whether to apply the processing.

    Parameters
    ----------
    duration : float
        Length of the recording (s): the range must lie inside it.
    n_channels : int
        Channels of the recording, one check box each.
    start, stop : float
        The range shown first (e.g. the visible span or a selection).
    path : str
        The output shown first.
    channels : sequence of int, optional
        Channels checked first (all by default).
    processing : str
        What the current processing is ("" when there is none: the box is
        disabled).
    ranges : dict or None, optional
        The spans (s, s) the Range box offers, by name (keys of :data:`RANGES`);
        Custom is always offered.
    range_choice : str, optional
        The Range box's first choice.
    subtype : str or None, optional
        The sample format chosen first for WAV and FLAC (a soundfile subtype).
    timeline : Timeline or None, optional
        The recording's absolute times
        (:class:`~specscope.compute.deployment.timeline.Timeline`): Start and Stop show
        and take dates and times; None: seconds only.
    parent : QWidget or None, optional
        The parent widget.
    """

    def __init__(self, *, duration: float, n_channels: int, start: float, stop: float,
                 path: str, channels: Sequence[int] | None = None, processing: str = "",
                 ranges: dict[str, tuple[float, float]] | None = None,
                 range_choice: str = "Custom", subtype: str | None = None,
                 timeline=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export range")
        self.duration = float(duration)
        clock = self.duration >= 60.0
        self._style = "clock" if clock else "s"
        self.timeline = timeline
        #: the points (s) the fields were given, by the text shown: which of the two
        #: times a clock shows twice (the hour repeated when summer time ends) is meant
        self._written: dict[str, float] = {}

        self.path = QLineEdit(path)
        self.path.setToolTip("The output file; its extension picks the format")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        file_row = QHBoxLayout()
        file_row.addWidget(self.path, 1)
        file_row.addWidget(browse)
        self.format = QComboBox()
        self.format.addItems(list(FORMATS))
        self.format.setToolTip("HDF5 keeps every channel and complex samples; WAV and FLAC "
                               "hold real samples; SigMF writes .sigmf-meta and .sigmf-data")
        #: 16/24-bit PCM or float for WAV, 16/24-bit for FLAC
        self.sample_format = QComboBox()
        self.sample_format.setToolTip("How the samples are stored in a WAV or FLAC file")
        self._subtype = subtype
        #: the spans the Range box offers (Custom: the fields as typed)
        self._ranges = {k: v for k, v in (ranges or {}).items() if k in RANGES}
        self.range = QComboBox()
        for name in RANGES:
            if name == "Custom" or name in self._ranges:
                self.range.addItem(name)
        self.range.setToolTip("Fill Start and Stop from the selection, the visible span or "
                              "the whole recording")
        self.start = QLineEdit(self._fmt(start))
        self.stop = QLineEdit(self._fmt(stop))
        forms = TIME_FORMS[0].upper() + TIME_FORMS[1:]
        if timeline is not None:
            forms = (f"A date and time, e.g. {self._example()} (in {timeline.tz} unless it "
                     f"names a zone), or a time into the recording: {TIME_FORMS}")
        for box in (self.start, self.stop):
            box.setToolTip(forms)
            if timeline is not None:  # room for a whole date and time
                box.setMinimumWidth(box.fontMetrics().horizontalAdvance(
                    self._fmt(self.duration) + "00") + 12)
        self.length = QLabel()
        checked = set(range(n_channels) if channels is None else channels)
        self.channel_boxes: list[QCheckBox] = []
        ch_row = QHBoxLayout()
        for c in range(n_channels):
            box = QCheckBox(f"ch {c}")
            box.setChecked(c in checked)
            self.channel_boxes.append(box)
            ch_row.addWidget(box)
        ch_row.addStretch(1)
        self.processed = QCheckBox("Through the current processing"
                                   + (f" ({processing})" if processing else ""))
        self.processed.setEnabled(bool(processing))
        self.processed.setChecked(bool(processing))
        if not processing:
            self.processed.setToolTip("No processing steps or filter are on")
        self.error = QLabel()
        self.error.setStyleSheet("color: #c00000;")
        self.error.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("File", file_row)
        form.addRow("Format", self.format)
        form.addRow("Samples", self.sample_format)
        form.addRow("Range", self.range)
        form.addRow("Start", self.start)
        form.addRow("Stop", self.stop)
        form.addRow("", self.length)
        form.addRow("Channels", ch_row)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.processed)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)

        self.path.textChanged.connect(self._path_edited)
        self.format.currentTextChanged.connect(self._format_chosen)
        self.start.textChanged.connect(self._show_length)
        self.stop.textChanged.connect(self._show_length)
        self._path_edited(path)
        self._fill_sample_formats()
        self.format.currentTextChanged.connect(self._fill_sample_formats)
        if self.range.findText(range_choice) >= 0:
            self.range.setCurrentText(range_choice)
            self._range_chosen(range_choice)
        else:
            self.range.setCurrentText("Custom")
        self.range.currentTextChanged.connect(self._range_chosen)
        for box in (self.start, self.stop):
            box.textEdited.connect(lambda _=None: self.range.setCurrentText("Custom"))
        self._show_length()

    def _fmt(self, seconds: float) -> str:
        """A point of the recording (s) as the fields write it: a date and time on a
        timeline, else seconds to the millisecond."""
        tl = self.timeline
        if tl is not None:
            text = tl.format(tl.to_time(seconds))
            self._written[text] = seconds
            return text
        return format_time(seconds, 1e-3, self._style)

    def _example(self) -> str:
        """The recording's first second as a date and time is typed."""
        tl = self.timeline
        return tl.local(tl.start).strftime("%Y-%m-%d %H:%M:%S")

    def _parse(self, text: str, name: str | None = None) -> float:
        """The point (s) a field's text says: seconds as :func:`parse_time` reads them,
        or on a timeline also a date and time (with or without the zone the fields show).

        Raises
        ------
        InputError
            The text is no time (:class:`TimeFormatError`), or a date and time at which
            nothing was recorded (:class:`TimeNotRecorded`, naming the gap).
        """
        tl = self.timeline
        if tl is None:
            return parse_time(text, name)
        typed = str(text).strip()
        zone = " " + str(tl.tz)
        if typed.lower().endswith(zone.lower()):  # the zone as the fields write it
            typed = typed[: -len(zone)].rstrip()
        elif typed.upper().endswith((" UTC", " GMT")):
            typed = typed[:-4].rstrip() + "Z"
        # a clock time without a zone may stand for two times (summer time ending)
        local = not re.search(r"(Z|[+-]\d{2}:?\d{2})$", typed, re.IGNORECASE)
        try:
            t = tl.parse(typed)
            return self._either_fold(t, None, str(text).strip()) if local else t
        except TimeNotRecorded as exc:
            try:  # the same clock time an hour later (summer time ended) was recorded
                if local:
                    return self._either_fold(None, exc.when, str(text).strip())
            except TimeNotRecorded:
                pass
            raise TimeNotRecorded(f"{name}: {exc}" if name else str(exc), exc.when,
                                  exc.gap) from None
        except InputError:
            pass
        try:
            return parse_time(text)
        except InputError:
            prefix = f"{name}=" if name else ""
            raise TimeFormatError(
                f"{prefix}{typed!r} is no date and time nor time into the recording: write "
                f"a date and time such as {self._example()} or {TIME_FORMS}", str(text)) \
                from None

    def _either_fold(self, t: float | None, when, text: str) -> float:
        """Of the two times a local clock time stands for in the hour repeated at the end
        of summer time, the recorded one (the one the field was given when both were).

        ``t`` is the axis point of the first (None when it was not recorded: ``when``,
        UTC); raises :class:`TimeNotRecorded` when neither was recorded.
        """
        tl = self.timeline
        first = tl.to_time(t) if t is not None else when
        local = tl.local(first)
        later = local.replace(fold=1).astimezone(first.tzinfo)
        if local.fold or later == first:  # no second time
            if t is None:
                raise TimeNotRecorded("not recorded", when)
            return t
        try:
            t2 = tl.to_axis(later)
        except TimeNotRecorded:
            if t is None:
                raise
            return t
        if t is None:
            return t2
        given = self._written.get(text)
        return t2 if given is not None and abs(given - t2) < abs(given - t) else t

    def _time(self, box: QLineEdit, name: str) -> float:
        """The time a field says: as typed, except that the recording's length as the
        fields write it (to the millisecond) is its end, every sample included."""
        value = self._parse(box.text(), name)
        if value == self._parse(self._fmt(self.duration)):
            return self.duration
        return value

    # -- format and file -------------------------------------------------------
    def _path_edited(self, text: str) -> None:
        name = format_of(text)
        if name is not None and name != self.format.currentText():
            self.format.blockSignals(True)
            self.format.setCurrentText(name)
            self.format.blockSignals(False)
            if hasattr(self, "_ranges"):  # after construction
                self._fill_sample_formats()

    def _format_chosen(self, name: str) -> None:
        text = self.path.text().strip()
        if not text or format_of(text) == name:
            return
        suffix = _suffix(text)
        stem = text[: -len(suffix)] if suffix and format_of(text) else text
        self.path.setText(stem + FORMATS[name])

    def _fill_sample_formats(self, *_: object) -> None:
        formats = SAMPLE_FORMATS.get(self.format.currentText(), ())
        keep = self.sample_format.currentData() or self._subtype
        self.sample_format.blockSignals(True)
        self.sample_format.clear()
        for text, subtype in formats:
            self.sample_format.addItem(text, subtype)
        i = self.sample_format.findData(keep)
        self.sample_format.setCurrentIndex(max(i, 0))
        self.sample_format.blockSignals(False)
        self.sample_format.setEnabled(bool(formats))

    def _range_chosen(self, name: str) -> None:
        span = self._ranges.get(name)
        if span is None:
            return
        self.start.setText(self._fmt(span[0]))
        self.stop.setText(self._fmt(span[1]))

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export range to", self.path.text(),
                                              _FILTER)
        if path:
            self.path.setText(path)

    def _show_length(self, *_: object) -> None:
        total = format_time(self.duration, 1e-3, self._style)
        try:
            a, b = self._parse(self.start.text()), self._parse(self.stop.text())
        except ValueError:
            self.length.setText(f"of {total}")
            return
        self.length.setText(f"{format_time(b - a, 1e-3, 's')} of {total}")

    # -- the answer --------------------------------------------------------------
    def choice(self) -> ExportRangeChoice:
        """What the fields say.

        Raises
        ------
        ValueError
            A field is wrong; the message names it.
        """
        text = self.path.text().strip()
        if not text:
            raise ValueError("give an output file")
        if format_of(text) is None:
            raise ValueError(f"{Path(text).name}: the extension picks the format; use "
                             + ", ".join(FORMATS.values()))
        start = self._time(self.start, "start")
        stop = self._time(self.stop, "stop")
        if not 0.0 <= start < stop:
            raise ValueError(f"the range {self._fmt(start)} .. {self._fmt(stop)} is empty; "
                             "stop must be after start, start at least 0")
        if start >= self.duration:
            raise ValueError(f"start {self._fmt(start)} is past the end of the recording "
                             f"({self._fmt(self.duration)})")
        channels = tuple(c for c, box in enumerate(self.channel_boxes) if box.isChecked())
        if not channels:
            raise ValueError("check at least one channel")
        subtype = self.sample_format.currentData() if self.sample_format.isEnabled() else None
        return ExportRangeChoice(Path(text).expanduser(), start, min(stop, self.duration),
                                 channels, self.processed.isChecked() and
                                 self.processed.isEnabled(), subtype,
                                 self.range.currentText())

    def accept(self) -> None:
        """Close only when the fields make an export; otherwise say what is wrong."""
        try:
            self.choice()
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        self.error.setText("")
        super().accept()


class FormatFileDialog(QFileDialog):
    """A Save dialog whose file name and file type always agree.

    Choosing a type in the dialog gives the name that type's extension at once (a
    ``.selections.txt`` chosen as Audacity labels becomes ``.labels.txt``); a name
    typed with a known extension while the type was left alone picks the type from
    the name.  :meth:`chosen` gives the file and the format, which agree whatever
    the order the person chose them in.

    Parameters
    ----------
    parent : QWidget or None
        The parent widget.
    caption : str
        The window title.
    path : str
        The file offered first; the type matching its extension is chosen first.
    formats : sequence of (str, str, sequence of str)
        ``(filter text, format name, extensions)`` per type, in the order offered; the
        first extension is the one a name gets (``".labels.txt"``), the others are
        accepted as they are (``".txt"``).
    """

    def __init__(self, parent: QWidget | None, caption: str, path: str,
                 formats: Sequence[tuple[str, str, Sequence[str]]]) -> None:
        super().__init__(parent, caption)
        self.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        self.setFileMode(QFileDialog.FileMode.AnyFile)
        self._formats = [(text, name, tuple(s.lower() for s in suffixes))
                         for text, name, suffixes in formats]
        self.setNameFilters([text for text, _, _ in self._formats])
        first = self._by_name(path) or self._formats[0][1]
        self.selectNameFilter(self._filter_text(first))
        self.selectFile(path)
        #: whether the person chose a type in this dialog (it then decides the format)
        self.type_chosen = False
        self.filterSelected.connect(self._type_chosen)

    @classmethod
    def ask(cls, parent: QWidget | None, caption: str, path: str,
            formats: Sequence[tuple[str, str, Sequence[str]]]) -> tuple[Path, str] | None:
        """Ask for a file to save (modal); its path and format, None when cancelled.

        Parameters
        ----------
        parent, caption, path, formats
            As for the dialog.

        Returns
        -------
        (Path, str) or None
            :meth:`chosen` once accepted.
        """
        dlg = cls(parent, caption, path, formats)
        try:
            return dlg.chosen() if dlg.exec() == QDialog.DialogCode.Accepted else None
        finally:
            dlg.deleteLater()

    # -- names and types --------------------------------------------------------------
    def _filter_text(self, fmt: str) -> str:
        return next(text for text, name, _ in self._formats if name == fmt)

    def _suffixes(self, fmt: str) -> tuple[str, ...]:
        return next(suffixes for _, name, suffixes in self._formats if name == fmt)

    def _matches(self, path: str) -> list[tuple[str, str]]:
        """``(extension, format)`` of every known extension ``path`` ends with."""
        lower = Path(path).name.lower()
        return [(s, name) for _, name, suffixes in self._formats for s in suffixes
                if lower.endswith(s)]

    def _by_name(self, path: str) -> str | None:
        """The format the name's extension says (the longest known one), or None."""
        found = self._matches(path)
        return max(found, key=lambda m: len(m[0]))[1] if found else None

    def _with_format(self, path: str, fmt: str, keep_own: bool = True) -> str:
        """``path`` named for ``fmt``: its known extension (and what a file dialog left of
        a two-part one, ``.selections`` of ``.selections.csv``) replaced by ``fmt``'s
        first; one of ``fmt``'s others stays when ``keep_own``."""
        own = self._suffixes(fmt) if keep_own else self._suffixes(fmt)[:1]
        folder, name = os.path.split(path)
        lower = name.lower()
        keep = next((s for s in own if lower.endswith(s)), None)
        found = self._matches(name)
        cut = max((len(s) for s, _ in found), default=0)
        stem = name[: len(name) - cut]
        parts = {s[: s.rfind(".")] for _, _, ss in self._formats for s in ss if s.count(".") > 1}
        left = next((p for p in parts if stem.lower().endswith(p)), "")
        if keep is not None and not left and len(keep) == cut:
            return path
        stem = stem[: len(stem) - len(left)] + self._suffixes(fmt)[0]
        return os.path.join(folder, stem) if folder else stem

    def _named_file(self) -> str | None:
        """The file named in the dialog now (None while no name is typed)."""
        files = self.selectedFiles()
        if not files or not Path(files[0]).name or os.path.isdir(files[0]):
            return None
        return files[0]

    def _type_chosen(self, text: str) -> None:
        self.type_chosen = True
        path = self._named_file()
        if path is not None:
            # the type's own extension (a file dialog may have put the type's first
            # pattern, ``.txt``, in place of ``.csv`` already)
            self.selectFile(self._with_format(path, self.shown_format(), keep_own=False))

    # -- the answer ------------------------------------------------------------------
    def shown_format(self) -> str:
        """The format of the type shown now."""
        chosen = self.selectedNameFilter()
        return next((name for text, name, _ in self._formats if text == chosen),
                    self._formats[0][1])

    def chosen(self) -> tuple[Path, str] | None:
        """The file and its format once accepted: the chosen type's format, the name
        carrying its extension; a name typed with a known extension while the type was
        left alone gives its own format.  None when no file was given.

        Returns
        -------
        (Path, str) or None
            The file to write and the format name.
        """
        path = self._named_file()
        if path is None:
            return None
        named = self._by_name(path)
        if self.type_chosen or named is None:
            fmt = self.shown_format()
            return Path(self._with_format(path, fmt)), fmt
        return Path(path), named
