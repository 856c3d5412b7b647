"""Template matching: "find similar" by normalised cross-correlation of a spectrogram patch.

:class:`TemplateDetector` (``detect.template``) slides the dB spectrogram of a box of
a recording along the recording's spectrogram; matches are lags scoring at least
``threshold`` and the largest within the template's length.  Its kernel :func:`ncc`
(``detect.ncc``) is written against ``xp``, FFTs on the calling thread.

See docs/explanation/rooms/detect.md.
"""

from __future__ import annotations

import hashlib
import threading

import numpy as np
import scipy.fft

from .. import backend as _backend
from .. import spectral
from ..errors import InputError, operator_error
from ..io import open_recording
from ..operators import Param, dispatch, registry
from ..types import TemplateScale, choices
from .core import Detector, FrameStream, band_bins, register
from .events import Events

__all__ = ["BLOCK_LAGS", "TemplateDetector", "ncc"]

#: lags per correlation block (a fixed grid: chunked runs equal whole runs)
BLOCK_LAGS = 4096


def _next_fast_len(n: int) -> int:
    return int(scipy.fft.next_fast_len(int(n), real=True))


#: conj(rfft) of recent templates by (namespace, size, shape, content): every full
#: block of a run has the same size, so its template is transformed once
_SPECTRA: dict[tuple, object] = {}
_SPECTRA_LOCK = threading.Lock()


def _template_spectrum(tz, size: int, rfft, xp):
    host = np.asarray(_backend.to_host(tz))
    key = (xp.__name__, int(size), host.shape, hashlib.sha1(host.tobytes()).hexdigest())
    with _SPECTRA_LOCK:
        spec = _SPECTRA.get(key)
    if spec is None:
        spec = xp.conj(rfft(tz, size, -1))
        with _SPECTRA_LOCK:
            while len(_SPECTRA) >= 8:
                _SPECTRA.pop(next(iter(_SPECTRA)))
            _SPECTRA[key] = spec
    return spec


def _ffts(xp):
    """``(rfft, irfft)`` of ``xp``; on NumPy scipy.fft's on the calling thread (``workers=1``)."""
    if xp is np:
        return (lambda a, n, axis: scipy.fft.rfft(a, n=n, axis=axis, workers=1),
                lambda a, n, axis: scipy.fft.irfft(a, n=n, axis=axis, workers=1))
    return (lambda a, n, axis: xp.fft.rfft(a, n=n, axis=axis),
            lambda a, n, axis: xp.fft.irfft(a, n=n, axis=axis))


def _numerator(d, tz, lags: int, xp):
    """``sum over bins of correlate(d, tz, 'valid')`` of FFT-length rows: ``(..., lags)``."""
    size = int(d.shape[-1])
    rfft, irfft = _ffts(xp)
    spec = rfft(d, size, -1)
    spec *= _template_spectrum(tz, size, rfft, xp)
    return irfft(xp.sum(spec, axis=-2), size, -1)[..., :lags]


with registry.namespace(None):
    @registry.operator(
        "detect.ncc", family="detect",
        summary="Normalised cross-correlation of a 2-D template along the last axis",
        params=[Param("template", "array", help="(bins, frames) patch, as the input's bins")],
        reference="sum over bins of scipy.signal.correlate(D, T - mean T, 'valid') / "
                  "(local std of D under the template * norm of T - mean T)",
        history=lambda p: int(np.shape(p["template"])[-1]) - 1)
    def ncc(x, *, template, xp):
        """Scores at every lag where the template fits: shape ``(..., n - frames + 1)``.

        ``x`` may be float32 (a view in any layout); the sums are float64.
        """
        x = xp.asarray(x)
        if x.dtype not in (xp.float32, xp.float64):
            x = x.astype(xp.float64)
        t = xp.asarray(template, dtype=xp.float64)
        if t.ndim != 2 or x.ndim < 2 or x.shape[-2] != t.shape[0]:
            raise operator_error(InputError, "detect.ncc", f"template of shape {tuple(t.shape)} needs an input "
                             f"shaped (..., {t.shape[0] if t.ndim == 2 else 'bins'}, frames), "
                             f"got {tuple(x.shape)}")
        bins, k = int(t.shape[0]), int(t.shape[1])
        n = int(x.shape[-1])
        lags = n - k + 1
        if lags <= 0:
            return xp.zeros((*x.shape[:-2], 0), dtype=xp.float64)
        # rows padded to the FFT length; a constant offset changes no score, and
        # centring keeps the sums small
        padded = xp.zeros((*x.shape[:-1], _next_fast_len(n)), dtype=xp.float64)
        d = padded[..., :n]
        xp.subtract(x, xp.mean(x, axis=(-2, -1), keepdims=True, dtype=xp.float64), out=d)
        tz = t - xp.mean(t)
        norm_t = xp.sqrt(xp.sum(tz * tz))
        num = _numerator(padded, tz, lags, xp)
        zero = xp.zeros((*x.shape[:-2], 1), dtype=xp.float64)
        c1 = xp.concatenate([zero, xp.cumsum(xp.sum(d, axis=-2), axis=-1)], axis=-1)
        c2 = xp.concatenate([zero, xp.cumsum(xp.einsum("...bi,...bi->...i", d, d), axis=-1)],
                            axis=-1)
        s1 = c1[..., k:] - c1[..., :lags]
        s2 = c2[..., k:] - c2[..., :lags]
        var = xp.maximum(s2 - s1 * s1 / (bins * k), 0.0)
        den = xp.sqrt(var) * norm_t
        ok = den > 1e-12 * xp.maximum(xp.max(den), 1e-300) if den.size else den > 0
        return xp.where(ok, num / xp.where(ok, den, 1.0), 0.0)


class _Samples:
    """A 1-D array read like a recording, in its own dtype (no float32 copy)."""

    def __init__(self, x: np.ndarray, fs: float, fc: float) -> None:
        if x.ndim != 1:
            raise operator_error(InputError, "detect.template", f"the signal must be 1-D, got shape {x.shape}")
        self.x, self.sample_rate, self.center_frequency = x, fs, fc
        self.n_samples = x.size

    def read(self, start: int, stop: int, channels=None) -> np.ndarray:
        return self.x[start:stop, None]


@register
class TemplateDetector(Detector):
    """Template matching on the spectrogram: copies of a box of the recording ("find similar")."""

    name = "detect.template"
    summary = "Template matching: normalised cross-correlation of a spectrogram box"
    REFERENCE = ("normalised cross-correlation of the dB spectrogram patch (monitoR / XBAT "
                 "template detectors); matches = lags >= threshold, the largest within the "
                 "template's length")
    PARAMS = (
        Param("template_start_s", float, min=0.0, unit="s", help="start of the template box"),
        Param("template_stop_s", float, min=0.0, unit="s", help="end of the template box"),
        Param("template_low_hz", float, None, unit="Hz",
              help="lower edge of the template box (default: the lowest bin)"),
        Param("template_high_hz", float, None, unit="Hz",
              help="upper edge of the template box (default: the highest bin)"),
        Param("template_file", str, "",
              help="recording the template box is in (default: the one searched)"),
        Param("template_channel", int, None, min=0,
              help="channel of the template box (default: the channel searched)"),
        Param("threshold", float, 0.5, min=-1.0, max=1.0,
              help="lowest correlation of a match"),
        Param("scale", str, "db", choices=choices(TemplateScale),
              help="correlate dB (default) or power spectrograms"),
        Param("nfft", int, 512, min=8, unit="samples", help="STFT frame length"),
        Param("hop", int, 256, min=1, unit="samples", help="samples between frames"),
        Param("window", "window", "hann", help="STFT window"),
        Param("label", str, "template", help="label of the events"),
    )

    def _setup(self) -> None:
        p = self.params
        if p["template_stop_s"] <= p["template_start_s"]:
            raise InputError(f"{self.name}: template_stop_s={p['template_stop_s']!r} must be "
                             f"> template_start_s={p['template_start_s']!r}")
        if p["hop"] > p["nfft"]:
            raise InputError(f"{self.name}: hop={p['hop']} must be <= nfft={p['nfft']}")
        self.stft = spectral.StftParams(p["nfft"], p["hop"], p["window"], "spectrum")
        self.frames = FrameStream(self.stft, self.fs, self.backend)
        # (capacity, bins) float32 levels of the frames from `base` on, `filled` rows valid
        self.buffer: np.ndarray | None = None
        self.filled = 0
        self.base = 0
        self.lags_done = 0
        self.scores = np.zeros(0)  # scores of lags from `score_base` on, not all decided
        self.score_base = 0
        self.decided = 0
        keep = getattr(self, "template", None)
        if keep is None:
            self.template = None

    @property
    def lookback(self) -> int:  # type: ignore[override]
        """The frames a match's neighbours (one template length) span before it."""
        k = 0 if self.template is None else self.template.shape[1]
        return self.params["nfft"] - self.params["hop"] + max(0, k - 1) * self.params["hop"]

    @property
    def lookahead(self) -> int:  # type: ignore[override]
        """The template's frames and one template length of neighbours after a lag."""
        k = 0 if self.template is None else self.template.shape[1]
        return self.params["nfft"] + 2 * max(0, k - 1) * self.params["hop"]

    @property
    def latency(self) -> int:  # type: ignore[override]
        """Lags are computed in blocks of :data:`BLOCK_LAGS`."""
        return self.lookahead + BLOCK_LAGS * self.params["hop"]

    @property
    def grid(self) -> int:  # type: ignore[override]
        """One block of lags: blocks are counted from a stream's first frame."""
        return BLOCK_LAGS * self.params["hop"]

    @property
    def part_lookback(self) -> int:  # type: ignore[override]
        """One template length of lags a match must top before it, and one frame."""
        k = 0 if self.template is None else self.template.shape[1]
        return self.params["nfft"] + max(0, k - 1) * self.params["hop"]

    @property
    def settled(self) -> int:  # type: ignore[override]
        """The first undecided lag's box start (matches start at lag * hop + offset)."""
        if self.closed:
            return self.samples_in
        if self.template is None:
            return 0
        return max(0, self.decided * self.params["hop"] + self.offset)

    # -- the template -----------------------------------------------------------------

    def _levels(self, power: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """(frames, bins) power -> (frames, band bins) float32 levels on the template's scale.

        dB: ``ln(power + eps)`` (scale-free for the correlation); power: the power itself.
        Written into ``out`` when given.
        """
        band = power[:, self.i0:self.i1]
        if out is None:
            out = np.empty(band.shape, np.float32)
        if self.params["scale"] == "db":
            np.add(band, self.eps, out=out, casting="same_kind")
            np.log(out, out=out)
        else:
            np.copyto(out, band, casting="same_kind")
        return out

    def _append(self, power: np.ndarray) -> None:
        """Add the levels of new frames to the buffer (grown, never shrunk)."""
        n = self.filled + power.shape[0]
        if self.buffer is None or n > self.buffer.shape[0]:
            cap = max(n, BLOCK_LAGS + self.template.shape[1],
                      0 if self.buffer is None else 2 * self.buffer.shape[0])
            grown = np.empty((cap, self.i1 - self.i0), np.float32)
            if self.buffer is not None:
                grown[:self.filled] = self.buffer[:self.filled]
            self.buffer = grown
        self._levels(power, self.buffer[self.filled:n])
        self.filled = n

    def prepare(self, recording, channel: int | None = None) -> None:
        """Cut the template box out of ``recording`` (or the ``template_file``).

        ``recording`` may be a :class:`~specscope.compute.io.Recording` or a
        1-D array at this detector's sample rate.
        """
        p = self.params
        if p["template_file"]:
            recording = open_recording(p["template_file"])
        elif not hasattr(recording, "read"):
            recording = _Samples(np.asarray(recording), self.fs, self.center_frequency)
        if abs(float(recording.sample_rate) - self.fs) > 1e-9 * self.fs:
            raise InputError(f"{self.name}: the template's recording runs at "
                             f"{recording.sample_rate:g} Hz, the one searched at {self.fs:g} Hz")
        chan = p["template_channel"] if p["template_channel"] is not None else (channel or 0)
        nfft, hop = p["nfft"], p["hop"]
        a, b = round(p["template_start_s"] * self.fs), round(p["template_stop_s"] * self.fs)
        s0, s1 = max(0, a - nfft // 2), min(recording.n_samples, b + nfft // 2)
        if b > recording.n_samples or s1 - s0 < nfft:
            raise InputError(f"{self.name}: the template box {p['template_start_s']:g}.."
                             f"{p['template_stop_s']:g} s does not fit in the recording "
                             f"({recording.n_samples / self.fs:g} s) with nfft={nfft}")
        x = recording.read(s0, s1, channels=[chan])[:, 0]
        complex_in = x.dtype.kind == "c"
        f = self.stft.frequencies(self.fs, two_sided=complex_in)
        if complex_in:
            f = f + float(recording.center_frequency or 0.0)
        self.freqs = f
        self.i0, self.i1 = band_bins(f, p["template_low_hz"], p["template_high_hz"],
                                     self.name)
        power = dispatch.call("stft_power", x, backend="numpy", fs=self.fs,
                              two_sided=complex_in, layout="frames",
                              **self.stft.operator_params())
        centres = np.arange(power.shape[0]) * hop + nfft // 2 + s0
        inside = np.flatnonzero((centres >= a) & (centres <= b))
        if inside.size == 0:
            raise InputError(f"{self.name}: the template box is shorter than one hop; make "
                             f"it longer than {hop / self.fs:g} s")
        band = np.asarray(power[inside, self.i0:self.i1], dtype=np.float64)
        self.eps = max(float(band.max()) * 1e-12, float(np.finfo(np.float32).tiny))
        t = np.ascontiguousarray(self._levels(power[inside]).T)
        if t.size < 2 or float(np.std(t)) == 0.0:
            raise InputError(f"{self.name}: the template box is flat (one value); choose a "
                             "box around a sound")
        self.template = t
        self.complex_template = complex_in
        # where the box starts relative to the template's first frame
        self.offset = a - (s0 + int(inside[0]) * hop)
        self.length = b - a

    def run(self, x) -> Events:
        if self.template is None:
            self.prepare(np.asarray(x))
        return super().run(x)

    # -- streaming --------------------------------------------------------------------

    def _push(self, x: np.ndarray, final: bool) -> Events:
        if self.template is None:
            raise InputError(f"{self.name}: no template; call prepare(recording) first")
        if (x.dtype.kind == "c") != self.complex_template:
            raise InputError(f"{self.name}: the template is from a "
                             f"{'complex' if self.complex_template else 'real'} signal, the "
                             "one searched is not")
        _, power = self.frames.push(x)
        if power is not None:
            self._append(power)
        k = self.template.shape[1]
        n_frames = self.frames.frames_done
        new = []
        while True:
            m0 = self.lags_done
            avail = n_frames - k + 1 - m0  # lags computable now
            take = BLOCK_LAGS if avail >= BLOCK_LAGS else (avail if final else 0)
            if take <= 0:
                break
            d = self.buffer[m0 - self.base:m0 - self.base + take + k - 1].T
            if self.backend != "numpy":
                d = _backend.to_device(np.ascontiguousarray(d), self.backend)
            new.append(np.asarray(_backend.to_host(dispatch.call(
                "detect.ncc", d, backend=self.backend, template=self.template))))
            self.lags_done += take
        drop = self.lags_done - self.base
        if drop:  # keep the frames of the lags to come at the front
            rest = self.filled - drop
            self.buffer[:rest] = self.buffer[drop:self.filled]
            self.filled, self.base = rest, self.lags_done
        if new:
            self.scores = np.concatenate([self.scores, *new])
        return self._matches(final)

    def _matches(self, final: bool) -> Events:
        k = self.template.shape[1]
        w = k - 1  # lags on each side a match must top
        end = self.score_base + self.scores.size
        limit = end if final else end - w
        s, base = self.scores, self.score_base
        thr = self.params["threshold"]
        found = []
        lo = self.decided - base
        hi = limit - base
        if hi > lo:
            cand = np.flatnonzero(s[lo:hi] >= thr) + lo
            for i in cand:
                v = s[i]
                left = s[max(0, i - w):i]
                right = s[i + 1:i + 1 + w]
                if (left.size == 0 or v > left.max()) and (right.size == 0 or v >= right.max()):
                    found.append((int(i) + base, float(v)))
            self.decided = limit
        # keep what later decisions still look at: `w` lags before the first undecided one
        keep_from = max(0, self.decided - w - base)
        self.scores, self.score_base = s[keep_from:], base + keep_from
        if not found:
            return self.empty()
        hop = self.params["hop"]
        lag = np.array([m for m, _ in found], np.int64)
        start = np.maximum(lag * hop + self.offset, 0)
        stop = np.maximum(lag * hop + self.offset + self.length, start)
        p, f = self.params, self.freqs
        lo_hz = f[self.i0] if p["template_low_hz"] is None else p["template_low_hz"]
        hi_hz = f[self.i1 - 1] if p["template_high_hz"] is None else p["template_high_hz"]
        n = lag.size
        return Events(start, stop, self.fs, np.full(n, lo_hz), np.full(n, hi_hz),
                      [v for _, v in found], (p["label"],) * n, None, self.name, self.params)
