"""The designed filter: :class:`Design`, its coefficients, response, roots, delay and settling.

``Design.form`` is ``"sos"`` for IIR designs (second-order sections all the
way: design, analysis, filtering, export), ``"fir"`` for FIR designs (taps
``b``; an FIR's SOS form would need the roots of a long polynomial and adds
nothing), and ``"comb"`` for ``iircomb``, whose ``(b, a)`` are non-zero only
at 0 and ``N = fs / frequency``: its SOS form has ``N / 2`` sections, so the
comb is analysed analytically and filtered as ``N`` interleaved first-order
recursions.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import InputError
from .spec import IIR_DESIGNS, FilterSpec, FilterSpecError, field_array, field_text

__all__ = ["MAX_FIR_ROOTS", "SETTLE_TOL", "STABILITY_MARGIN", "Call", "Design",
           "impulse_settle"]

#: the error of every impossible specification (a short name for the checks below)
_fail = FilterSpecError
#: IIR impulse-response tail (relative L1) treated as settled (chunked pipeline runs)
SETTLE_TOL = 1e-12
#: poles closer than this to the unit circle count as unstable: in float64 such a
#: filter rings for ~1e9 samples and coefficient rounding can push it outside
STABILITY_MARGIN = 1e-9
#: FIR longer than this gets no pole-zero analysis (polynomial roots cost O(n^3))
MAX_FIR_ROOTS = 256
#: longest impulse response searched for its settling length
MAX_SETTLE = 1 << 24


@dataclass(frozen=True)
class Call:
    """One registry design call (also what the Python export writes, as scipy).

    Parameters
    ----------
    op : str
        Name of the registry operator (a scipy.signal function).
    kwargs : dict
        Its keyword arguments, resolved.
    """

    op: str
    kwargs: dict[str, Any]


def _quad_roots(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Roots of rows ``c0 + c1 z^-1 + c2 z^-2`` as (roots shaped (n, 2), delays (n,)).

    Roots are in z; a missing root (degree < 2) is returned as 0 (no effect on
    the response's shape).  ``delays`` counts leading zero coefficients (pure
    delays z^-1).  Uses the cancellation-free form of the quadratic formula.
    """
    c = np.asarray(c, dtype=np.float64)
    c0, c1, c2 = c[:, 0], c[:, 1], c[:, 2]
    delays = np.where(c0 != 0, 0, np.where(c1 != 0, 1, 2)).astype(np.int64)
    disc = np.sqrt((c1 * c1 - 4 * c0 * c2).astype(complex))
    disc = np.where(c1 * disc.real >= 0, disc, -disc)
    qv = -0.5 * (c1 + disc)
    roots = np.zeros((c.shape[0], 2), complex)
    with np.errstate(divide="ignore", invalid="ignore"):
        quad = (delays == 0) & (qv != 0)  # qv == 0: c1 == c2 == 0, both roots at 0
        roots[:, 0] = np.where(quad, qv / np.where(c0 != 0, c0, 1), 0)
        roots[:, 1] = np.where(quad, c2 / np.where(qv != 0, qv, 1), 0)
        lin = delays == 1
        roots[:, 0] = np.where(lin, -c2 / np.where(c1 != 0, c1, 1), roots[:, 0])
    return roots, delays


def _root_gd(roots: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Group delay (samples) of the factors ``1 - r e^{jt} e^{-jw}``, summed over roots.

    ``(r^2 - r cos u) / (1 - 2 r cos u + r^2)`` with ``u = t - w``, written with
    ``sin^2(u/2)`` so that it does not cancel: a root on the unit circle gives
    exactly 1/2 (its true value everywhere but at the root itself, where the
    phase jumps by pi), so zeros on the circle never make spikes or NaNs.
    """
    roots = np.ravel(roots)
    roots = roots[roots != 0]
    out = np.zeros(w.shape, np.float64)
    for k in range(0, roots.size, 64):  # bounded temporaries
        q = roots[k:k + 64, None]
        r, t = np.abs(q), np.angle(q)
        s2 = np.sin((t - w) / 2.0) ** 2
        num = r * ((r - 1.0) + 2.0 * s2)
        den = (1.0 - r) ** 2 + 4.0 * r * s2
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(den > 1e-300, num / den, 0.5)
        out += g.sum(axis=0)
    return out


@dataclass(frozen=True, eq=False)
class Design:
    """A designed filter for one sample rate.

    Attributes
    ----------
    spec : FilterSpec or None
        None for imported coefficients.
    sample_rate : float
    form : {"sos", "fir", "comb"}
    sos : ndarray (n_sections, 6) or None
        Second-order sections (``form == "sos"``).
    b, a : ndarray or None
        Taps (``"fir"``: ``a == [1]``) or the comb's sparse ``(b, a)``.
    order : int
        Filter order (IIR: of the whole filter, e.g. 8 for a 4th-order
        band-pass; FIR: ``numtaps - 1``).
    calls : tuple of Call
        The registry (scipy) calls that made it, with resolved arguments
        (minimum order, Kaiser beta): what the Python export writes.
    """

    spec: FilterSpec | None
    sample_rate: float
    form: str
    sos: np.ndarray | None
    b: np.ndarray | None
    a: np.ndarray | None
    order: int
    calls: tuple[Call, ...] = field(default=(), repr=False)

    # -- construction from coefficients ---------------------------------------------------
    @classmethod
    def from_sos(cls, spec: FilterSpec | None, fs: float, sos: np.ndarray, order: int,
                 calls: tuple[Call, ...] = (), culprit: str = "order") -> Design:
        """A design from second-order sections, checked finite and stable.

        Raises :class:`FilterSpecError` naming ``culprit`` otherwise.
        """
        if sos.ndim != 2 or sos.shape[1] != 6 or sos.shape[0] == 0:
            raise _fail(culprit, f"the design gave sections shaped {sos.shape}, expected (n, 6)")
        if not np.all(np.isfinite(sos)):
            raise _fail(culprit, "the design gave non-finite coefficients; lower the order or "
                                 "widen the band")
        d = cls(spec, fs, "sos", sos, None, None, order, calls)
        if d.max_pole_radius >= 1.0 - STABILITY_MARGIN:
            what = f"{culprit}={field_text(getattr(spec, culprit, None))}: " if spec else ""
            where = "on or outside" if d.max_pole_radius >= 1.0 else "numerically on"
            raise _fail(culprit, f"{what}the designed filter is unstable (a pole {where} the "
                                 "unit circle); lower the order or widen the band")
        return d

    @classmethod
    def from_coefficients(cls, fs: float, *, sos: Any = None, b: Any = None, a: Any = None,
                          z: Any = None, p: Any = None, k: Any = None,
                          spec: FilterSpec | None = None) -> Design:
        """A design from coefficients: SOS, numerator/denominator, or zeros/poles/gain."""
        import scipy.signal as ss
        if isinstance(fs, bool) or not isinstance(fs, numbers.Real) or not fs > 0:
            raise _fail("fs", f"fs={fs!r} must be a positive sample rate in Hz")
        fs = float(fs)
        if sos is not None:
            sos = np.atleast_2d(np.asarray(sos, dtype=float))
            if sos.ndim != 2 or sos.shape[1] != 6:
                raise _fail("sos", f"sos must be shaped (n_sections, 6), got {sos.shape}")
            if np.any(sos[:, 3] == 0):
                raise _fail("sos", "sos: a0 (column 4) must not be 0")
            order = 2 * sos.shape[0] if np.any(sos[:, [2, 5]] != 0) else sos.shape[0]
            return cls.from_sos(spec, fs, sos, order, (), "sos")
        if z is not None or p is not None:
            if z is None or p is None or k is None:
                raise _fail("zpk", "zeros, poles and gain are all needed")
            sos = ss.zpk2sos(np.atleast_1d(z), np.atleast_1d(p), float(np.real(k)))
            return cls.from_sos(spec, fs, np.asarray(sos, float),
                                max(np.size(z), np.size(p)), (), "poles")
        if b is None:
            raise _fail("coefficients", "give sos, b (and a), or z, p and k")
        b = np.atleast_1d(np.asarray(b, dtype=float))
        a = np.ones(1) if a is None else np.atleast_1d(np.asarray(a, dtype=float))
        if a.size == 0 or a[0] == 0:
            raise _fail("a", "a[0] must not be 0")
        a_t = np.trim_zeros(a, "b")
        if a_t.size == 1:
            return cls(spec, fs, "fir", None, b / a_t[0], np.ones(1), b.size - 1)
        nz = set(np.flatnonzero(b)) | set(np.flatnonzero(a))
        if a.size == b.size and a.size > 3 and nz <= {0, a.size - 1}:
            if abs(a[-1] / a[0]) >= 1:
                raise _fail("a", "the comb filter is unstable")
            return cls(spec, fs, "comb", None, b, a, b.size - 1)
        sos = ss.tf2sos(b, a)
        return cls.from_sos(spec, fs, np.asarray(sos, float), max(a.size, b.size) - 1, (),
                            "a")

    # -- what it is ------------------------------------------------------------------
    @property
    def sections(self) -> int:
        """Second-order sections (FIR: 0; comb: the N/2 it would need)."""
        if self.form == "sos":
            return int(self.sos.shape[0])
        return 0 if self.form == "fir" else (self.order + 1) // 2

    @property
    def numtaps(self) -> int | None:
        return int(self.b.size) if self.form == "fir" else None

    @property
    def zero_phase(self) -> bool:
        return bool(self.spec.zero_phase) if self.spec is not None else False

    @property
    def coefficients(self) -> dict[str, np.ndarray]:
        """``{"sos": ...}``, ``{"b": ...}`` (FIR) or ``{"b": ..., "a": ...}`` (comb)."""
        if self.form == "sos":
            return {"sos": self.sos}
        if self.form == "fir":
            return {"b": self.b}
        return {"b": self.b, "a": self.a}

    def ba(self) -> tuple[np.ndarray, np.ndarray]:
        """Numerator and denominator (for SOS: multiplied out; ill-conditioned when long)."""
        if self.form == "sos":
            import scipy.signal as ss
            b, a = ss.sos2tf(self.sos)
            return np.asarray(b, float), np.asarray(a, float)
        return self.b, self.a

    @cached_property
    def _section_roots(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        zr, zd = _quad_roots(self.sos[:, :3])
        pr, pd = _quad_roots(self.sos[:, 3:])
        return zr, zd, pr, pd

    @cached_property
    def zpk(self) -> tuple[np.ndarray, np.ndarray, float] | None:
        """Zeros, poles and gain (None for an FIR longer than ``MAX_FIR_ROOTS``)."""
        if self.form == "sos":
            zr, zd, pr, pd = self._section_roots
            s = self.sos
            z_count = np.where(zd == 0, np.where(s[:, 2] != 0, 2, np.where(s[:, 1] != 0, 1, 0)),
                               np.where(zd == 1, np.where(s[:, 2] != 0, 1, 0), 0))
            p_count = np.where(pd == 0, np.where(s[:, 5] != 0, 2, np.where(s[:, 4] != 0, 1, 0)),
                               np.where(pd == 1, np.where(s[:, 5] != 0, 1, 0), 0))
            zeros = np.concatenate([zr[i, :z_count[i]] for i in range(len(s))])
            poles = np.concatenate([pr[i, :p_count[i]] for i in range(len(s))])
            lead_b = s[np.arange(len(s)), np.minimum(zd, 2)] if np.all(zd < 3) else s[:, 0]
            lead_a = s[np.arange(len(s)), 3 + np.minimum(pd, 2)]
            k = float(np.prod(lead_b / lead_a))
            return zeros, poles, k
        if self.form == "comb":
            n = self.order
            b0, bn, an = self.b[0] / self.a[0], self.b[-1] / self.a[0], self.a[-1] / self.a[0]
            ang = 2 * np.pi * np.arange(n) / n

            def ring(c: float) -> np.ndarray:  # the N roots of z^N = c
                return abs(c) ** (1.0 / n) * np.exp(1j * (np.angle(c) / n + ang))
            zeros = ring(-bn / b0) if b0 != 0 else np.zeros(0, complex)
            return zeros, ring(-an), float(b0)
        b = np.trim_zeros(self.b, "f")
        if b.size > MAX_FIR_ROOTS:
            return None
        if b.size <= 1:
            return np.zeros(0, complex), np.zeros(0, complex), float(b[0]) if b.size else 0.0
        return np.roots(b), np.zeros(0, complex), float(b[0])

    @cached_property
    def max_pole_radius(self) -> float:
        if self.form == "fir":
            return 0.0
        if self.form == "comb":
            return abs(self.a[-1] / self.a[0]) ** (1.0 / self.order)
        _, _, pr, _ = self._section_roots
        return float(np.max(np.abs(pr))) if pr.size else 0.0

    @property
    def stable(self) -> bool:
        """All poles strictly inside the unit circle."""
        return self.max_pole_radius < 1.0

    @cached_property
    def minimum_phase(self) -> bool | None:
        """All zeros on or inside the unit circle (None: FIR too long to factor)."""
        if self.form == "fir" and _linear_phase(self.b) and self.b.size > MAX_FIR_ROOTS:
            return False  # reciprocal zero pairs off the circle: not minimum phase
        zpk = self.zpk
        if zpk is None:
            return None
        return bool(np.all(np.abs(zpk[0]) <= 1.0 + 1e-9))

    @cached_property
    def delay_samples(self) -> float:
        """Delay shown for the filter, in samples (zero-phase: 0).

        Linear-phase FIR: ``(numtaps - 1) / 2``; otherwise the group delay at
        the centre of the passband (0 Hz for low-pass, band-stop and notches,
        Nyquist for high-pass, the geometric centre of a band-pass).
        """
        if self.zero_phase:
            return 0.0
        if self.form == "fir" and _linear_phase(self.b):
            return (self.b.size - 1) / 2.0
        f = self.reference_frequency
        return float(self.group_delay(np.array([2 * np.pi * f / self.sample_rate]))[0])

    @property
    def delay_s(self) -> float:
        return self.delay_samples / self.sample_rate

    @property
    def reference_frequency(self) -> float:
        """Where the delay is measured (Hz)."""
        s, nyq = self.spec, self.sample_rate / 2
        if s is None:
            return 0.0
        edges = s.passband if s.passband is not None else s.cutoff
        if s.design == "iirpeak":
            return float(s.frequency)
        if s.btype == "highpass" and s.design in IIR_DESIGNS + ("firwin", "remez", "firls"):
            return nyq
        if s.btype == "bandpass" and edges is not None and np.size(edges) >= 2:
            e = field_array(edges)
            return float(math.sqrt(e[0] * e[1]))
        return 0.0

    @cached_property
    def settle(self) -> int:
        """Samples after which the impulse response keeps <= SETTLE_TOL of its L1 norm."""
        return self.settle_length(SETTLE_TOL)

    def settle_length(self, tol: float) -> int:
        """Samples after which the impulse response keeps <= ``tol`` of its L1 norm.

        An FIR is settled exactly after ``numtaps - 1`` samples.
        """
        if self.form == "fir":
            return int(self.b.size) - 1
        return impulse_settle(self.impulse_response, tol)

    def response(self, w: np.ndarray, uniform_n: int | None = None) -> np.ndarray:
        """The one-pass (causal) complex response at ``w`` (rad/sample).

        ``uniform_n``: ``w`` is the uniform grid of that many points from 0 to
        pi (long FIRs then use one FFT).
        """
        return _response(self, w, uniform_n)

    def group_delay(self, w: np.ndarray) -> np.ndarray:
        """One-pass group delay in samples at ``w`` (rad/sample), from the sections."""
        return _group_delay(self, w)

    def impulse_response(self, n: int) -> np.ndarray:
        """The first ``n`` samples of the causal (one-pass) impulse response."""
        imp = np.zeros(n)
        if n:
            imp[0] = 1.0
        if self.form == "sos":
            import scipy.signal as ss
            return ss.sosfilt(self.sos, imp)
        if self.form == "fir":
            out = np.zeros(n)
            m = min(n, self.b.size)
            out[:m] = self.b[:m]
            return out
        # comb: b0 + (bN - aN b0) v / (1 + aN v), v = z^-N: h[mN] = c (-aN)^(m-1)
        nn = self.order
        b0, bn, an = self.b[0] / self.a[0], self.b[-1] / self.a[0], self.a[-1] / self.a[0]
        out = np.zeros(n)
        if n:
            out[0] = b0
        m = np.arange(1, (n - 1) // nn + 1)
        out[m * nn] = (bn - an * b0) * (-an) ** (m - 1)
        return out

    def display_length(self, tol: float = 1e-6, cap: int = 1 << 14) -> int:
        """Samples of impulse response worth showing (decayed to ``tol``)."""
        if self.form == "fir":
            return int(self.b.size) + 16
        r = self.max_pole_radius
        if r <= 0:
            return 64
        n = math.log(tol) / math.log(r) if r < 1 else cap
        # repeated poles decay as n^k r^n: pad by the order
        return int(min(cap, max(64, 1.5 * n + 8 * min(self.order, 64))))


def _linear_phase(b: np.ndarray) -> bool:
    tol = 1e-12 * max(1e-300, float(np.max(np.abs(b)))) if b.size else 0.0
    return bool(b.size and (np.all(np.abs(b - b[::-1]) <= tol)
                            or np.all(np.abs(b + b[::-1]) <= tol)))


def impulse_settle(apply: Callable[[int], np.ndarray], tol: float = SETTLE_TOL) -> int:
    """Samples after which an impulse response keeps at most ``tol`` of its L1 norm.

    The response is computed on 4096 samples, then on four times as many until its
    last eighth holds at most ``tol`` of the norm.

    Parameters
    ----------
    apply : callable
        ``apply(n)`` returns the first ``n`` samples of the impulse response.
    tol : float
        Share of the L1 norm the tail may keep.

    Returns
    -------
    int
        The settling length in samples (0 for an all-zero response).

    Raises
    ------
    InputError
        For an unstable filter (non-finite response) or one that does not settle
        within 2**24 samples.

    Examples
    --------
    >>> import numpy as np
    >>> impulse_settle(lambda n: 0.5 ** np.arange(n), tol=1e-3)
    10
    """
    n = 4096
    while True:
        h = np.abs(apply(n))
        if not np.all(np.isfinite(h)):
            raise InputError("the designed filter is unstable")
        total = float(h.sum())
        tail = np.cumsum(h[::-1])[::-1]
        if total > 0 and tail[-max(1, n // 8)] <= tol * total:
            return int(np.argmax(tail <= tol * total))
        if total == 0:
            return 0
        if n >= MAX_SETTLE:
            raise InputError(f"the designed filter does not settle within {MAX_SETTLE} "
                             "samples (unstable or too narrow)")
        n *= 4


def _poly_response(c: np.ndarray, w: np.ndarray, uniform_n: int | None) -> np.ndarray:
    """``sum c[i] e^{-j w i}``; FFT when ``w`` is the uniform grid of ``uniform_n`` points."""
    nz = np.flatnonzero(c)
    if nz.size <= 32:
        return np.exp(-1j * np.outer(w, nz)) @ c[nz]
    if uniform_n is not None and c.size <= 2 * (uniform_n - 1):
        return np.fft.rfft(c, 2 * (uniform_n - 1))
    out = np.zeros(w.shape, complex)
    zinv = np.exp(-1j * w)
    for coef in c[::-1]:  # Horner in z^-1
        out = out * zinv + coef
    return out


def _response(d: Design, w: np.ndarray, uniform_n: int | None) -> np.ndarray:
    """See :meth:`Design.response`."""
    if d.form == "sos":
        z1 = np.exp(-1j * w)
        z2 = z1 * z1
        s = d.sos
        num = s[:, 0, None] + s[:, 1, None] * z1 + s[:, 2, None] * z2
        den = s[:, 3, None] + s[:, 4, None] * z1 + s[:, 5, None] * z2
        return np.prod(num / den, axis=0)
    if d.form == "fir":
        return _poly_response(d.b, w, uniform_n)
    zn = np.exp(-1j * d.order * w)
    return (d.b[0] + d.b[-1] * zn) / (d.a[0] + d.a[-1] * zn)


def _group_delay(d: Design, w: np.ndarray) -> np.ndarray:
    """One-pass group delay in samples, from the sections (see :func:`_root_gd`)."""
    if d.form == "sos":
        zr, zd, pr, pd = d._section_roots
        return float(np.sum(zd) - np.sum(pd)) + _root_gd(zr, w) - _root_gd(pr, w)
    if d.form == "comb":
        n = d.order
        b0, bn, an = d.b[0], d.b[-1], d.a[-1] / d.a[0]
        q = -bn / b0 if b0 != 0 else 0.0
        gd = _root_gd(np.array([q]), n * w) - _root_gd(np.array([-an]), n * w)
        return n * gd + (n if b0 == 0 else 0)
    b = d.b
    if _linear_phase(b):
        return np.full(w.shape, (b.size - 1) / 2.0)
    n = np.arange(b.size)
    B = _poly_response(b, w, None)
    nB = _poly_response(n * b, w, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.real(nB / B)
    small = np.abs(B) < 1e-10 * max(1e-300, float(np.max(np.abs(B))))
    return np.where(small, np.nan, g)
