"""Band levels per time bin as PyPAM computes them: the reference of the level tests.

Run with the interpreter of ``.venv-pypam`` (built by ``scripts/pypam_venv``), never from
the project's venv: PyPAM (lifewatch-pypam, GPL-3.0) is a test reference only::

    .venv-pypam/bin/python tests/reference/pypam_levels.py REQUEST.json

REQUEST.json (keys with defaults are optional)::

    files        list of WAV paths; only channel 0 is read (PyPAM reads no other)
    start_times  ISO datetime per file, default "1970-01-01T00:00:00" (naive UTC)
    sample_rate  expected rate of every file (Hz)
    nfft         FFT length; PyPAM's hybrid millidecades assume nfft = sample_rate (1 Hz)
    overlap      Welch overlap as a fraction, default 0.5 (PyPAM's default)
    window       scipy window name, default "hann" (PyPAM's only choice through AcuFile)
    binsize      seconds per time bin, default 60
    bands        "hmd" | "decidecade" | "octave"
    band_limits  [low, high] Hz: bands whose centre lies in [low, high] are kept,
                 default [0, sample_rate / 2]
    first_centre centre of the first decidecade / octave band, default 10 Hz / 1000*G^-6
    octave_base  10 (G = 10^0.3, IEC 61260) or 2, default 10
    calibration  {"sensitivity": dB re 1 V/uPa, "gain": dB, "vpp": ADC volts peak to peak}
                 ("full_scale_voltage": V instead of vpp means vpp = 2 V); default
                 sensitivity 0, gain 0, vpp 2 (levels re full scale)
    gridded      PyPAM's AcuFile gridded (bins on whole minutes), default false
    method       "acufile" (default with hann) or "signal" (any window)
    output       path of the .npz written

The .npz holds float64 arrays: ``band_centre``, ``band_low``, ``band_high`` (Hz);
``time`` (seconds since 1970 of each bin's start), ``start_sample``, ``end_sample``,
``file_index``; ``band_db`` (time x band, PyPAM's band value, see below); ``psd_freq`` and
``psd_db`` (time x bin, 10 log10 of PyPAM's PSD in uPa^2/Hz); scalars ``fft_bin_width``,
``calibration_db`` (the dB added to levels re full scale), ``elapsed_s`` (compute time
without the imports); the string ``pypam_version``.

What it calls (lifewatch-pypam 1.0.0):

- ``pypam.AcuFile(path, hydrophone, p_ref=1.0, gridded=...)`` with a
  ``pyhydrophone.hydrophone.Hydrophone`` whose file datetimes come from the request.
- method "acufile", bands "hmd": ``AcuFile.hybrid_millidecade_bands(nfft, fft_overlap,
  binsize, db=True)`` (band = [0, fs/2]; its ``millidecade_bands`` and ``band_density``).
  Bands "decidecade" / "octave": ``AcuFile.psd(binsize, nfft=, fft_overlap=, db=False)``,
  then ``utils.spectra_ds_to_bands(psd, edges, centres, fft_bin_width=fs/nfft, db=True)``
  with edges from ``utils.get_decidecade_limits([first_centre, fs/2], nfft, fs)`` or
  ``utils.get_bands_limits(..., base=10**0.3 or 2, bands_per_division=1,
  hybrid_mode=False, fs)``; HMD edges are ``utils.get_hybrid_millidecade_limits([0, fs/2],
  nfft)``.
- method "signal": per bin of ``AcuFile._bins(binsize)``, ``chunk.signal("upa")`` then
  ``Signal.spectrum(scaling="density", nfft, db=False, overlap, window_name=window)``
  (what mbari-pbp calls), then the same banding.

PyPAM's defaults and conventions that specscope reproduces:

- PSD: ``scipy.signal.welch(x, fs, window=get_window(window, nfft)`` (periodic Hann),
  ``noverlap=int(nfft * overlap), detrend=False, scaling="density")``: one-sided, mean of
  the segments, ``1 / (fs * sum(win**2))``; segments stay inside a time bin and a tail
  shorter than a segment is dropped.
- Time bins: ``int(binsize * fs)`` samples from the start frame (0, or with ``gridded``
  the first whole minute of the file's datetime); ``floor`` of the bins that fit, and the
  LAST bin runs to the end of the file (the remainder joins it); a file shorter than one
  bin gives none (this script refuses it).
- Calibration (``wav2upa``): ``x_uPa = x_wav * (vpp / 2) / (10**(S/20) * 10**(G/20))``
  with ``p_ref = 1`` and ``x_wav`` in full scale (PCM / 2**(bits-1)), i.e.
  ``calibration_db = 20 log10(vpp / 2) - S - G`` added to levels re full scale.
- Bands: ``spectra_ds_to_bands`` splits a PSD bin between bands by the fraction of its
  width inside each and returns ``10 log10(sum_k P_k * frac_k / (f_high - f_low))``: the
  band-mean PSD in dB re 1 uPa^2/Hz when the bin width is 1 Hz, and that minus
  ``10 log10(fft_bin_width)`` otherwise (the sum lacks the bin width).
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import datetime
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
# This folder holds the project-side pypam.py, which must not shadow the real package.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) != _HERE]


class RequestError(Exception):
    """A request this script cannot run; its message is the one line printed."""


def _read_request(path: Path) -> dict:
    try:
        req = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RequestError(f"cannot read the request {path}: {exc}") from None
    if not isinstance(req, dict):
        raise RequestError(f"the request {path} is not a JSON object")
    for key in ("files", "sample_rate", "nfft", "bands", "output"):
        if key not in req:
            raise RequestError(f"the request has no {key!r}")
    if req["bands"] not in ("hmd", "decidecade", "octave"):
        raise RequestError(
            f"bands {req['bands']!r} is not one of 'hmd', 'decidecade', 'octave'"
        )
    if not req["files"]:
        raise RequestError("the request lists no files")
    return req


def _calibration(cal: dict) -> tuple[float, float, float]:
    """Return (sensitivity dB re 1 V/uPa, gain dB, vpp V) of a request's calibration."""
    sens = float(cal.get("sensitivity", 0.0))
    gain = float(cal.get("gain", 0.0))
    if "vpp" in cal and "full_scale_voltage" in cal:
        raise RequestError("calibration gives both vpp and full_scale_voltage")
    vpp = float(cal["vpp"]) if "vpp" in cal else 2.0 * float(cal.get("full_scale_voltage", 1.0))
    if not vpp > 0:
        raise RequestError(f"calibration vpp {vpp} is not positive")
    return sens, gain, vpp


def _band_edges(req: dict, fs: float, nfft: int):
    """Return PyPAM's (edges, centres) of the request's band kind over [.., fs/2]."""
    from pypam import utils

    kind = req["bands"]
    if kind == "hmd":
        return utils.get_hybrid_millidecade_limits([0, fs / 2], nfft)
    if kind == "decidecade":
        first = float(req.get("first_centre", 10.0))
        return utils.get_decidecade_limits([first, fs / 2], nfft, fs)
    base = float(req.get("octave_base", 10))
    if base not in (2.0, 10.0):
        raise RequestError(f"octave_base {base:g} is not 10 or 2")
    g = 10**0.3 if base == 10.0 else 2.0
    first = float(req.get("first_centre", 1000.0 * g**-6))
    return utils.get_bands_limits(
        [first, fs / 2], nfft, base=g, bands_per_division=1, hybrid_mode=False, fs=fs
    )


def _signal_psd(acu, binsize: float, nfft: int, overlap: float, window: str):
    """PSD per bin through ``pypam.signal.Signal.spectrum`` (any window): a DataArray."""
    import numpy as np
    import xarray

    rows, coords = [], {"datetime": [], "start_sample": [], "end_sample": []}
    freq = None
    for _, chunk in acu._bins(binsize):
        sig = chunk.signal("upa")
        freq, psd, _ = sig.spectrum(
            scaling="density", nfft=nfft, db=False, overlap=overlap,
            force_calc=True, window_name=window,
        )
        rows.append(psd)
        coords["datetime"].append(chunk.time_bin)
        coords["start_sample"].append(chunk.start_frame)
        coords["end_sample"].append(chunk.end_frame)
    n = len(rows)
    return xarray.DataArray(
        np.array(rows),
        coords={
            "id": np.arange(n),
            "datetime": ("id", np.array(coords["datetime"], dtype="datetime64[ns]")),
            "start_sample": ("id", np.array(coords["start_sample"])),
            "end_sample": ("id", np.array(coords["end_sample"])),
            "frequency": freq,
        },
        dims=["id", "frequency"],
    )


def run(req: dict) -> dict:
    """Compute the request's levels with PyPAM; return the arrays of the .npz."""
    from importlib.metadata import version

    import numpy as np
    import pyhydrophone.hydrophone
    import pypam
    import soundfile
    from pypam import utils

    fs = float(req["sample_rate"])
    nfft = int(req["nfft"])
    overlap = float(req.get("overlap", 0.5))
    window = str(req.get("window", "hann"))
    binsize = float(req.get("binsize", 60))
    method = req.get("method", "acufile" if window == "hann" else "signal")
    if method not in ("acufile", "signal"):
        raise RequestError(f"method {method!r} is not 'acufile' or 'signal'")
    if method == "acufile" and window != "hann":
        raise RequestError(
            f"window {window!r} needs method 'signal' (AcuFile always uses hann)"
        )
    if not 0 <= overlap < 1:
        raise RequestError(f"overlap {overlap} is not a fraction in [0, 1)")
    sens, gain, vpp = _calibration(req.get("calibration", {}))
    files = [Path(f) for f in req["files"]]
    starts = req.get("start_times") or ["1970-01-01T00:00:00"] * len(files)
    if len(starts) != len(files):
        raise RequestError(f"{len(starts)} start_times for {len(files)} files")
    by_name: dict[str, datetime] = {}
    for path, start in zip(files, starts, strict=True):
        if not path.is_file():
            raise RequestError(f"no such file: {path}")
        info = soundfile.info(str(path))
        if info.samplerate != fs:
            raise RequestError(
                f"{path.name}: sample rate {info.samplerate} Hz, the request says {fs:g}"
            )
        if info.frames < int(binsize * fs):
            raise RequestError(
                f"{path.name}: {info.frames / fs:g} s is shorter than one {binsize:g} s bin"
            )
        when = datetime.fromisoformat(start).replace(tzinfo=None)
        if by_name.setdefault(path.name, when) != when:
            raise RequestError(f"two files named {path.name} with different start times")

    class _Hydrophone(pyhydrophone.hydrophone.Hydrophone):
        """A flat-response hydrophone whose file datetimes are the request's."""

        def get_name_datetime(self, date_string):
            return by_name[date_string]

    hyd = _Hydrophone(
        "specscope-reference", "flat", 0, sensitivity=sens, preamp_gain=gain, Vpp=vpp,
        string_format="",
    )
    edges, centres = _band_edges(req, fs, nfft)
    w = fs / nfft
    t0 = time.perf_counter()
    parts = []
    for index, path in enumerate(files):
        acu = pypam.AcuFile(path, hyd, p_ref=1.0, gridded=bool(req.get("gridded", False)))
        if method == "acufile" and req["bands"] == "hmd":
            ds = acu.hybrid_millidecade_bands(
                nfft=nfft, fft_overlap=overlap, binsize=binsize, db=True
            )
            psd, bands = ds["band_density"], ds["millidecade_bands"]
        else:
            if method == "acufile":
                psd = acu.psd(binsize=binsize, nfft=nfft, fft_overlap=overlap, db=False)
                psd = psd["band_density"]
            else:
                psd = _signal_psd(acu, binsize, nfft, overlap, window)
            bands = utils.spectra_ds_to_bands(psd, edges, centres, fft_bin_width=w, db=True)
        parts.append((index, psd, bands))
    elapsed = time.perf_counter() - t0

    lows = np.asarray(parts[0][2]["lower_frequency"].values, dtype=float)
    highs = np.asarray(parts[0][2]["upper_frequency"].values, dtype=float)
    cents = np.asarray(parts[0][2]["frequency_bins"].values, dtype=float)
    low, high = req.get("band_limits", [0.0, fs / 2])
    keep = (cents >= float(low)) & (cents <= float(high))
    epoch = np.datetime64("1970-01-01T00:00:00", "ns")

    def cat(fn):
        return np.concatenate([fn(i, p, b) for i, p, b in parts])

    with np.errstate(divide="ignore"):
        psd_db = cat(lambda i, p, b: 10 * np.log10(np.asarray(p.values, dtype=float)))
    return {
        "band_centre": cents[keep],
        "band_low": lows[keep],
        "band_high": highs[keep],
        "time": cat(lambda i, p, b: (p["datetime"].values - epoch) / np.timedelta64(1, "s")),
        "start_sample": cat(lambda i, p, b: p["start_sample"].values.astype(float)),
        "end_sample": cat(lambda i, p, b: p["end_sample"].values.astype(float)),
        "file_index": cat(lambda i, p, b: np.full(p.shape[0], float(i))),
        "band_db": cat(lambda i, p, b: np.asarray(b.values, dtype=float)[:, keep]),
        "psd_freq": np.asarray(parts[0][1]["frequency"].values, dtype=float),
        "psd_db": psd_db,
        "fft_bin_width": np.float64(w),
        "calibration_db": np.float64(20 * np.log10(vpp / 2) - sens - gain),
        "elapsed_s": np.float64(elapsed),
        "pypam_version": np.str_(version("lifewatch-pypam")),
    }


def main(argv: list[str]) -> int:
    """Run the request named in ``argv``; print one line and return 2 on a bad request."""
    if len(argv) != 2:
        print("usage: pypam_levels.py REQUEST.json", file=sys.stderr)
        return 2
    try:
        req = _read_request(Path(argv[1]))
        out = run(req)
    except RequestError as exc:
        print(f"pypam reference: {exc}", file=sys.stderr)
        return 2
    import numpy as np

    target = Path(req["output"])
    partial = target.with_name(target.name + ".partial")
    with open(partial, "wb") as fh:
        np.savez(fh, **out)
    os.replace(partial, target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
