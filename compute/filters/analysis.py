"""Analysis of a designed filter: responses, delays, impulse and step, and the verdict.

:func:`analyze` gives every view the filter designer draws (computed on first
access); :func:`verify` checks the applied response against the tolerance
bands of the specification (:func:`tolerance_bands`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .designed import Design
from .spec import BTYPES, DESIGNS, FilterSpec, FilterSpecError, field_array

__all__ = ["VERDICT_TOL_DB", "Analysis", "BandCheck", "Verdict", "analyze",
           "tolerance_bands", "verify"]

#: the error of every impossible specification (a short name for the checks below)
_fail = FilterSpecError
#: a band edge met to within this (dB) passes: minimum-order designs meet edges exactly
VERDICT_TOL_DB = 1e-6


@dataclass(frozen=True, eq=False)
class Analysis:
    """Every analysis view of a design, computed on first access (the GUI pays for what it shows).

    Frequencies ``f`` are ``n`` points from 0 to Nyquist inclusive (Hz).
    Responses are those *applied*: for zero-phase designs the forward-backward
    response ``|H|**2`` with zero phase and zero group delay.

    Parameters
    ----------
    design : Design
        The designed filter.
    n : int
        Number of frequency points from 0 Hz to Nyquist inclusive.
    """

    design: Design
    n: int = 2048

    @cached_property
    def f(self) -> np.ndarray:
        return np.linspace(0.0, self.design.sample_rate / 2.0, self.n)

    @cached_property
    def w(self) -> np.ndarray:
        return np.linspace(0.0, np.pi, self.n)

    @cached_property
    def h(self) -> np.ndarray:
        """Complex response (applied)."""
        h = self.design.response(self.w, self.n)
        if self.design.zero_phase:
            return (np.abs(h) ** 2).astype(complex)
        return h

    @cached_property
    def magnitude(self) -> np.ndarray:
        return np.abs(self.h)

    @cached_property
    def magnitude_db(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.maximum(20.0 * np.log10(self.magnitude), -400.0)

    @cached_property
    def phase(self) -> np.ndarray:
        """Wrapped phase (rad)."""
        return np.angle(self.h)

    @cached_property
    def phase_unwrapped(self) -> np.ndarray:
        return np.unwrap(self.phase)

    @cached_property
    def group_delay(self) -> np.ndarray:
        """Group delay in samples (computed from the sections, robust at zeros)."""
        if self.design.zero_phase:
            return np.zeros(self.n)
        return self.design.group_delay(self.w)

    @property
    def group_delay_s(self) -> np.ndarray:
        return self.group_delay / self.design.sample_rate

    @cached_property
    def zpk(self) -> tuple[np.ndarray, np.ndarray, float] | None:
        """Zeros, poles, gain of the one-pass filter (None: FIR too long to factor)."""
        return self.design.zpk

    @cached_property
    def impulse(self) -> tuple[np.ndarray, np.ndarray]:
        """(t in s, h): causal, or for zero-phase the two-sided forward-backward response."""
        d = self.design
        n = d.display_length()
        h = d.impulse_response(n)
        if d.zero_phase:
            h = np.convolve(h, h[::-1])
            k = np.arange(-(n - 1), n)
            return k / d.sample_rate, h
        return np.arange(n) / d.sample_rate, h

    @cached_property
    def step(self) -> tuple[np.ndarray, np.ndarray]:
        t, h = self.impulse
        return t, np.cumsum(h)

    def compute_all(self) -> Analysis:
        """Compute every view now (a worker thread can do this before handing it over)."""
        for name in ("magnitude_db", "phase_unwrapped", "group_delay", "zpk", "step"):
            getattr(self, name)
        return self


def analyze(d: Design, n: int = 2048) -> Analysis:
    """The analysis views of a design on ``n`` frequencies (lazy; see :class:`Analysis`).

    Parameters
    ----------
    d : Design
        The designed filter.
    n : int
        Number of frequency points from 0 Hz to Nyquist inclusive (at least 2).

    Returns
    -------
    Analysis
        The views, each computed on first access.

    Raises
    ------
    FilterSpecError
        If ``n`` is not a whole number >= 2.
    """
    if not isinstance(n, numbers.Integral) or n < 2:
        raise _fail("n", f"n={n!r} must be a whole number >= 2")
    return Analysis(d, int(n))


# -- specification verdict ---------------------------------------------------------------


@dataclass(frozen=True)
class BandCheck:
    """One tolerance band and how the response sits in it (dB; margin < 0: violated).

    Parameters
    ----------
    kind : str
        ``"pass"`` or ``"stop"``.
    f0, f1 : float
        Band edges (Hz).
    lo_db, hi_db : float
        Lower and upper limit of the response (dB); ``lo_db`` is ``-inf`` for stopbands.
    worst_db : float
        The response value that comes closest to (or beyond) a limit (dB).
    worst_hz : float
        Frequency of that value (Hz).
    margin_db : float
        Distance from ``worst_db`` to the nearest limit (dB; negative: violated).
    """

    kind: str        # "pass" or "stop"
    f0: float
    f1: float
    lo_db: float     # -inf for stopbands
    hi_db: float
    worst_db: float  # the response value that comes closest to (or beyond) a limit
    worst_hz: float
    margin_db: float

    @property
    def passed(self) -> bool:
        return self.margin_db >= -VERDICT_TOL_DB


@dataclass(frozen=True)
class Verdict:
    """Pass/fail of a design against its tolerance bands.

    ``passed`` is None when the spec sets no tolerance (nothing to check);
    ``worst`` is the band with the smallest margin.

    Parameters
    ----------
    bands : tuple of BandCheck
        One check per tolerance band (empty: nothing to check).
    """

    bands: tuple[BandCheck, ...]

    @property
    def passed(self) -> bool | None:
        return None if not self.bands else all(b.passed for b in self.bands)

    @property
    def worst(self) -> BandCheck | None:
        return min(self.bands, key=lambda b: b.margin_db) if self.bands else None

    def text(self) -> str:
        w = self.worst
        if w is None:
            return "no tolerance to check"
        state = "meets the specification" if self.passed else "misses the specification"
        return (f"{state}: worst margin {w.margin_db:+.2f} dB at {w.worst_hz:g} Hz "
                f"({w.kind}band {w.f0:g}-{w.f1:g} Hz)")


def tolerance_bands(spec: FilterSpec, fs: float) -> list[tuple[str, float, float, float, float]]:
    """``(kind, f0, f1, lo_db, hi_db)`` of each tolerance band (what the plot draws).

    Parameters
    ----------
    spec : FilterSpec
        The specification; its ``rp``/``rs`` and passband/stopband (or, for remez and
        firls, ``bands``/``desired``) set the bands.
    fs : float
        Sample rate (Hz).

    Returns
    -------
    list of tuple
        ``(kind, f0, f1, lo_db, hi_db)``: ``"pass"`` or ``"stop"``, the edges (Hz) and
        the limits (dB, ``lo_db = -inf`` for stopbands); empty when the spec sets no
        tolerance.
    """
    nyq = fs / 2.0
    out = []
    if spec.design in ("remez", "firls") and spec.bands is not None:
        b, des = field_array(spec.bands), field_array(spec.desired)
        for i in range(b.size // 2):
            g = des[i] if des.size == b.size // 2 else des[2 * i]
            if g > 0 and spec.rp is not None:
                ref = 20 * math.log10(g)
                out.append(("pass", b[2 * i], b[2 * i + 1], ref - spec.rp, ref + spec.rp))
            elif g == 0 and spec.rs is not None:
                out.append(("stop", b[2 * i], b[2 * i + 1], -math.inf, -spec.rs))
        return out
    if spec.btype not in BTYPES or "passband" not in DESIGNS[spec.design][1]:
        return out
    if spec.passband is not None and spec.rp is not None:
        p = field_array(spec.passband).tolist()
        spans = {"lowpass": [(0.0, p[0])], "highpass": [(p[0], nyq)],
                 "bandpass": [(p[0], p[-1])], "bandstop": [(0.0, p[0]), (p[-1], nyq)]}
        out += [("pass", a, b, -spec.rp, spec.rp) for a, b in spans[spec.btype]]
    if spec.stopband is not None and spec.rs is not None:
        s = field_array(spec.stopband).tolist()
        spans = {"lowpass": [(s[0], nyq)], "highpass": [(0.0, s[0])],
                 "bandpass": [(0.0, s[0]), (s[-1], nyq)], "bandstop": [(s[0], s[-1])]}
        out += [("stop", a, b, -math.inf, -spec.rs) for a, b in spans[spec.btype]]
    return out


def verify(d: Design, spec: FilterSpec | None = None, analysis: Analysis | None = None
           ) -> Verdict:
    """Check the applied response against the tolerance of ``spec`` (default: the design's).

    The response is evaluated on the analysis grid (``analysis``, or 2048
    points) plus exactly at every band edge.

    Parameters
    ----------
    d : Design
        The designed filter.
    spec : FilterSpec, optional
        The specification to check against (default: ``d.spec``).
    analysis : Analysis, optional
        Analysis of ``d`` whose frequency grid to use (default: 2048 points).

    Returns
    -------
    Verdict
        One :class:`BandCheck` per tolerance band; no bands when there is no tolerance.
    """
    spec = spec if spec is not None else d.spec
    if spec is None:
        return Verdict(())
    bands = tolerance_bands(spec, d.sample_rate)
    if not bands:
        return Verdict(())
    a = analysis if analysis is not None else analyze(d)
    fs = d.sample_rate
    edges = np.array(sorted({x for _, f0, f1, _, _ in bands for x in (f0, f1)}))
    he = d.response(2 * np.pi * edges / fs)
    if d.zero_phase:
        he = np.abs(he) ** 2
    with np.errstate(divide="ignore"):
        edge_db = 20 * np.log10(np.abs(he))
    f_all = np.concatenate([a.f, edges])
    db_all = np.concatenate([a.magnitude_db, edge_db])
    checks = []
    for kind, f0, f1, lo, hi in bands:
        sel = (f_all >= f0 - 1e-9 * fs) & (f_all <= f1 + 1e-9 * fs)
        f_in, db_in = f_all[sel], db_all[sel]
        m = np.minimum(db_in - lo, hi - db_in) if kind == "pass" else hi - db_in
        i = int(np.argmin(m))
        checks.append(BandCheck(kind, float(f0), float(f1), float(lo), float(hi),
                                float(db_in[i]), float(f_in[i]), float(m[i])))
    return Verdict(tuple(checks))
