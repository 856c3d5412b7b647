"""Recordings held in memory: arrays from a notebook, generators, tests."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..params import parse_number
from .base import Recording


class ArrayRecording(Recording):
    """A Recording over an array shaped (samples,) or (samples, channels).

    Parameters
    ----------
    data : array_like
        Real or complex samples.
    sample_rate : float or str
        Samples per second (a number, or text like ``"48k"``).
    center_frequency : float, optional
        For complex (IQ) data: the RF frequency of 0 Hz.
    name : str
        Shown where a file name would be.
    """

    format = "array"

    def __init__(self, data: np.ndarray, sample_rate: float, *,
                 center_frequency: float | None = None, name: str = "array",
                 units: str = "FS") -> None:
        super().__init__(name)
        arr = np.asarray(data)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise InputError(f"data of shape {np.shape(data)} must be (samples,) or "
                             "(samples, channels)")
        fs = parse_number(sample_rate, "sample_rate", positive=True)
        self.is_complex = bool(np.iscomplexobj(arr))
        self._data = arr.astype(self.dtype, copy=False)
        self.sample_rate = fs
        self.n_samples, self.n_channels = self._data.shape
        self.center_frequency = center_frequency
        self.units = units

    def _read(self, start: int, stop: int) -> np.ndarray:
        return self._data[start:stop]
