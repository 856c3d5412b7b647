"""What a filter designer shows of a design, computed in one job off the GUI thread.

:func:`compute_shown` designs a spec, analyses it on a grid fine enough for its
narrowest notch (:func:`grid_points`), verifies it against its tolerance, thins
the impulse and step responses to at most :data:`MAX_DRAWN` points, and
multiplies the magnitude of the chain around it.  The desktop designer, the
notebook designer and the app's compute thread run this one function.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .analysis import Analysis, Verdict, analyze, verify
from .design import MAX_NOTCH_HARMONICS, design
from .designed import Design
from .spec import NOTCH_DESIGNS, FilterSpec

__all__ = ["MAX_DRAWN", "NOTCH_GRID_DESIGNS", "Prepare", "Shown", "compute_shown",
           "grid_points"]

#: most points kept of an impulse or step response
MAX_DRAWN = 8192
#: designs whose grid is refined to their notch width
NOTCH_GRID_DESIGNS = NOTCH_DESIGNS
#: ``prepare(spec, fs) -> (spec, note)``: completes a spec before it is designed (e.g. the
#: harmonics of a notch, from the recording)
Prepare = Callable[[Any, float], tuple[Any, str]]


@dataclass(frozen=True)
class Shown:
    """A design with everything drawn of it.

    Parameters
    ----------
    spec : FilterSpec
        The spec designed (completed by ``prepare`` or capped where needed).
    design : Design
        The designed filter.
    analysis : Analysis
        Its analysis views, computed.
    verdict : Verdict
        The check against the spec's tolerance.
    note : str
        What was found or changed to design it (``""`` when nothing).
    impulse, step : tuple of numpy.ndarray
        ``(t in s, h)`` of the impulse and step responses, at most :data:`MAX_DRAWN` points.
    combined : numpy.ndarray, optional
        Magnitude of the whole chain at ``analysis.f`` (None: no chain around this filter).
    """

    spec: FilterSpec
    design: Design
    analysis: Analysis
    verdict: Verdict
    #: what was found or changed to design it ("" when nothing)
    note: str
    impulse: tuple[np.ndarray, np.ndarray]
    step: tuple[np.ndarray, np.ndarray]
    #: magnitude of the whole chain at ``analysis.f`` (None: no chain around this filter)
    combined: np.ndarray | None = None


def grid_points(spec: FilterSpec, fs: float) -> int:
    """Frequency points enough that a narrow notch is not missed between two of them.

    Parameters
    ----------
    spec : FilterSpec
        The filter; notches, peaks and combs (:data:`NOTCH_GRID_DESIGNS`) get a finer grid.
    fs : float
        Sample rate (Hz).

    Returns
    -------
    int
        2048, or for a notch four points per notch width up to Nyquist, at most 16384.

    Examples
    --------
    >>> from specscope.compute.filters import FilterSpec
    >>> grid_points(FilterSpec("iirnotch", frequency=300.0, q=30.0), 48000.0)
    9600
    """
    if spec.frequency and spec.q and spec.design in NOTCH_GRID_DESIGNS:
        width = spec.frequency / spec.q
        return int(min(1 << 14, max(2048, 4 * (fs / 2) / width)))
    return 2048


def _thin(t: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    step = max(1, math.ceil(t.size / MAX_DRAWN))
    return t[::step], h[::step]


def compute_shown(spec: FilterSpec, fs: float, prepare: Prepare | None = None,
                  others: Sequence[FilterSpec] | None = None, in_chain: bool = True
                  ) -> Shown:
    """Design ``spec`` and compute every analysis drawn (a designer's job).

    A ``notches`` spec for "every harmonic up to Nyquist" with more harmonics
    than :data:`~specscope.compute.filters.MAX_NOTCH_HARMONICS` is completed by
    ``prepare`` (those above the noise floor of the recording) or capped.

    Parameters
    ----------
    spec : FilterSpec
        The filter shown.
    fs : float
        The sample rate (Hz).
    prepare : callable, optional
        Completes a spec before it is designed (see :data:`Prepare`).
    others : sequence of FilterSpec, optional
        The chain's other enabled filters: ``combined`` is the magnitude of
        them all (and of ``spec`` when ``in_chain``) on the same grid.
    in_chain : bool
        Whether ``spec`` itself is enabled in the chain.

    Returns
    -------
    Shown
        The design, its analysis, verdict, thinned responses and the chain's magnitude.

    Raises
    ------
    FilterSpecError
        If ``spec`` (or one of ``others``) cannot be designed for ``fs``.
    """
    note = ""
    if spec.design == "notches" and spec.harmonics is None:
        top = math.ceil(fs / 2 / spec.frequency) - 1
        if top > MAX_NOTCH_HARMONICS:
            if prepare is not None:
                spec, note = prepare(spec, fs)
            else:
                spec = dataclasses.replace(spec, harmonics=MAX_NOTCH_HARMONICS)
                note = (f"{top} harmonics lie below Nyquist: notches for the first "
                        f"{MAX_NOTCH_HARMONICS} only")
    others = list(others) if others is not None else None
    # one grid fine enough for every notch of the chain
    n = max(grid_points(s, fs) for s in [spec, *(others or [])])
    d = design(spec, fs)
    a = analyze(d, n).compute_all()
    v = verify(d, analysis=a)
    # computed here, cached on the design (the view's pipeline reuses it: settle)
    _ = (d.minimum_phase, d.delay_s, d.stable, d.settle)
    combined = None
    if others is not None:
        combined = a.magnitude.copy() if in_chain else np.ones_like(a.magnitude)
        for other in others:
            od = design(other, fs)
            _ = od.settle  # the view's pipeline applies it next
            combined *= analyze(od, n).magnitude
    return Shown(spec, d, a, v, note, _thin(*a.impulse), _thin(*a.step), combined)
