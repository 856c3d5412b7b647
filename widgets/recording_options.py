"""RecordingOptionsDialog: ask for what a headerless file cannot tell."""

from __future__ import annotations

from PyQt6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)
from specscope.compute.errors import OptionError
from specscope.compute.io import extension_sample_type

#: sample types offered (the reader accepts more spellings, and _be for big-endian)
SAMPLE_TYPES = ("cf32", "cf64", "ci16", "ci8", "cu8", "cu16", "rf32", "rf64", "ri16", "ri8",
                "ru8", "cf32_be", "ci16_be", "rf32_be", "ri16_be")

#: plain words for the reader's option names
OPTION_WORDS = {"sample_rate": "the sample rate", "dtype": "the sample type",
                "center_frequency": "the centre frequency", "offset": "the header size",
                "n_channels": "the number of channels", "dataset": "the dataset",
                "variable": "the variable"}


def option_message(error: OptionError) -> str:
    """An option's error in the words of this dialog: "give the sample rate".

    The error names its option by its fields, so no message text is rewritten.
    """
    words = OPTION_WORDS.get(error.option)
    return error.text(words) if words else str(error)


class RecordingOptionsDialog(QDialog):
    """Sample type, sample rate, centre frequency, header bytes and channels.

    ``options()`` returns the keyword arguments for ``open_recording``; the
    values are validated by the reader, which names any problem.
    """

    def __init__(self, file_name: str, message: str, *, need_dtype: bool = True,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Open {file_name}")
        lay = QVBoxLayout(self)
        note = QLabel(f"{message}\n\n"
                      "specscope does not guess these: please give them.")
        note.setWordWrap(True)
        lay.addWidget(note)
        form = QFormLayout()
        self.dtype = QComboBox()
        self.dtype.setEditable(True)
        self.dtype.addItems(SAMPLE_TYPES)
        # the extension names the type of .ci16, .cu8, .cfile ... files
        named = extension_sample_type(file_name)
        if named is not None:
            self.dtype.setCurrentText(named)
        self.dtype.setToolTip("c = complex (IQ), r = real; f = float, i = signed, u = unsigned; "
                              "bits; _be = big-endian")
        self.sample_rate = QLineEdit()
        self.sample_rate.setPlaceholderText("e.g. 2.4M or 48000")
        self.center = QLineEdit()
        self.center.setPlaceholderText("optional, e.g. 100M")
        self.offset = QSpinBox()
        self.offset.setRange(0, 2**31 - 1)
        self.offset.setSuffix(" bytes")
        self.channels = QSpinBox()
        self.channels.setRange(1, 1024)
        if need_dtype:
            form.addRow("Sample type", self.dtype)
        form.addRow("Sample rate (Hz)", self.sample_rate)
        form.addRow("Centre frequency (Hz)", self.center)
        if need_dtype:
            form.addRow("Header to skip", self.offset)
            form.addRow("Channels", self.channels)
        self._need_dtype = need_dtype
        lay.addLayout(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def options(self) -> dict:
        opts: dict = {"sample_rate": self.sample_rate.text().strip() or None,
                      "center_frequency": self.center.text().strip() or None}
        if self._need_dtype:
            opts.update(dtype=self.dtype.currentText().strip() or None,
                        offset=self.offset.value() or None,
                        n_channels=self.channels.value() if self.channels.value() > 1 else None)
        return {k: v for k, v in opts.items() if v is not None}
