"""Open the app window from a notebook or a script, without blocking it."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from specscope.compute.errors import InputError
from specscope.compute.io import ArrayRecording, Recording
from specscope.compute.pipeline import Pipeline

#: windows opened by show(), kept alive while the notebook holds none
_WINDOWS: list[Any] = []


def show(data: Any, fs: float | None = None, pipeline: Any = None, *, block: bool = False,
         **options: Any):
    """Show a recording, a file or an array in a specscope window.

    Parameters
    ----------
    data : path, Recording or array_like
        A file to open (with reader ``options``), an open Recording, or samples
        shaped (samples,) or (samples, channels), real or complex.
    fs : float, optional
        Sample rate of an array (required then).
    pipeline : Pipeline, dict or path, optional
        Processing to apply (the app's Processing panel shows it).
    block : bool
        Run the event loop until the window closes (for scripts).  In IPython
        use ``%gui qt`` and leave it False: the window stays interactive while
        the notebook goes on.

    Returns
    -------
    MainWindow
        The window, e.g. to call ``open_pipeline`` or ``export_to`` on it.
    """
    from PyQt6.QtWidgets import QApplication
    from specscope.app.desktop.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    if isinstance(data, (str, os.PathLike)):
        rec = None
    elif isinstance(data, Recording):
        rec = data
    else:
        if fs is None:
            raise InputError("show(array): give the sample rate, e.g. show(x, fs=48000)")
        rec = ArrayRecording(np.asarray(data), fs, name="array")
    win = MainWindow()
    win.show()
    _WINDOWS.append(win)
    win.destroyed.connect(lambda *_: _WINDOWS.remove(win) if win in _WINDOWS else None)
    if rec is None:
        win.open_path(data, **options)
    else:
        win.open_recording(rec)
    if pipeline is not None:
        if isinstance(pipeline, dict):
            pipeline = Pipeline.from_dict(pipeline)
        win.open_pipeline(pipeline)
    if block:
        app.exec()
    return win
