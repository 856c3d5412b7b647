"""Calibration: from a recording's full-scale units to sound pressure.

A calibration is an offset in dB per frequency added to a level in dB re 1 FS
(full scale): ``20 log10(V_fs) - S - G - R(f)``, with ``V_fs`` the voltage of
digital full scale, ``S`` the sensitivity (dB re 1 V/µPa for a hydrophone,
dB re 1 V/Pa for a microphone), ``G`` the gain before the converter and ``R(f)``
an optional frequency response relative to ``S``.  Changing it never recomputes a
spectrum.  Without a calibration levels are in dBFS.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError, shown
from ..types import CalibrationKind, choices

__all__ = ["KINDS", "MAX_TABLE_BYTES", "UNITS", "Calibration", "CalibrationError",
           "load_calibration", "read_response_csv"]

Kind = CalibrationKind
#: the sensitivity unit of each kind of sensor, as a calibration file states it
UNITS: dict[str, str] = {"hydrophone": "dB re 1 V/uPa", "microphone": "dB re 1 V/Pa"}
KINDS: tuple[str, ...] = choices(CalibrationKind)
#: other spellings of the units that are accepted
_UNIT_FORMS = {
    "db re 1 v/upa": "hydrophone", "db re 1 v/µpa": "hydrophone", "db re 1v/upa": "hydrophone",
    "db re 1 v/pa": "microphone", "db re 1v/pa": "microphone",
}
#: the reference pressure of each kind's levels, in the unit its sensitivity names
_P_REF = {"hydrophone": 1.0, "microphone": 20e-6}
_LEVEL_UNIT = {"hydrophone": "dB re 1 µPa", "microphone": "dB re 20 µPa"}


class CalibrationError(InputError):
    """A calibration cannot be used; ``field`` names the value, ``value`` repeats it."""

    def __init__(self, field_name: str, value: Any, problem: str, *, path: Any = None) -> None:
        self.field, self.value, self.problem = field_name, value, problem
        self.path = None if path is None else str(path)
        where = f"{self.path}: " if self.path else ""
        super().__init__(f"{where}calibration {field_name}={shown(value)}: {problem}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.field, self.value, self.problem, self.path))


def _rebuild(field_name: str, value: Any, problem: str, path: Any) -> CalibrationError:
    return CalibrationError(field_name, value, problem, path=path)


def _number(name: str, value: Any, path: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CalibrationError(name, value, "must be a finite number", path=path)
    return float(value)


@dataclass(frozen=True)
class Calibration:
    """How a recording's full-scale values become sound pressure.

    Parameters
    ----------
    kind : {"hydrophone", "microphone"}
        Hydrophone levels are in dB re 1 µPa, microphone levels in dB re 20 µPa.
    sensitivity_db : float
        Sensitivity in dB re 1 V/µPa (hydrophone) or dB re 1 V/Pa (microphone).
    gain_db : float
        Gain between the sensor and the converter, in dB.
    full_scale_v : float
        Peak voltage that digital full scale (1.0) stands for.
    response : tuple of (tuple of float, tuple of float), optional
        Frequencies in Hz (increasing) and the response in dB added to
        ``sensitivity_db`` at each; linear in between.
    """

    kind: Kind = "hydrophone"
    sensitivity_db: float = 0.0
    gain_db: float = 0.0
    full_scale_v: float = 1.0
    response: tuple[tuple[float, ...], tuple[float, ...]] | None = field(default=None)

    def __post_init__(self) -> None:
        if self.kind not in UNITS:
            raise CalibrationError("kind", self.kind, f"must be one of {', '.join(KINDS)}")
        for name in ("sensitivity_db", "gain_db", "full_scale_v"):
            _number(name, getattr(self, name), None)
        if self.full_scale_v <= 0:
            raise CalibrationError("full_scale_v", self.full_scale_v, "must be above 0 V")
        if self.response is not None:
            f, db = (np.asarray(a, dtype=np.float64) for a in self.response)
            if f.ndim != 1 or f.shape != db.shape or f.size < 2:
                raise CalibrationError("response", f"{f.size} frequencies, {db.size} values",
                                       "needs two or more (frequency, dB) rows")
            if not (np.all(np.isfinite(f)) and np.all(np.isfinite(db))):
                raise CalibrationError("response", "non-finite value",
                                       "frequencies and dB must be finite numbers")
            bad = np.flatnonzero(np.diff(f) <= 0)
            if bad.size:
                k = int(bad[0]) + 1
                raise CalibrationError("response", float(f[k]),
                                       f"frequencies must increase (row {k + 1} after "
                                       f"{float(f[k - 1]):g} Hz)")

    @property
    def level_unit(self) -> str:
        """The unit of a level: ``"dB re 1 µPa"`` or ``"dB re 20 µPa"``."""
        return _LEVEL_UNIT[self.kind]

    @property
    def density_unit(self) -> str:
        """The unit of a spectral density level: ``"dB re 1 µPa²/Hz"``..."""
        return _LEVEL_UNIT[self.kind].replace("Pa", "Pa²") + "/Hz"

    def check_covers(self, low: float, high: float) -> None:
        """Raise :class:`CalibrationError` when the response does not span ``low``–``high`` Hz."""
        if self.response is None:
            return
        f = self.response[0]
        if f[0] > low or f[-1] < high:
            raise CalibrationError("response", f"{f[0]:g}-{f[-1]:g} Hz",
                                   f"does not cover the band {low:g}-{high:g} Hz")

    def offset_db(self, frequencies: Sequence[float] | np.ndarray) -> np.ndarray:
        """dB to add to a level in dB re 1 FS (or FS²/Hz) at each frequency.

        Parameters
        ----------
        frequencies : array_like
            Frequencies in Hz.

        Returns
        -------
        ndarray of float64
        """
        f = np.asarray(frequencies, dtype=np.float64)
        flat = (20 * math.log10(self.full_scale_v) - self.sensitivity_db - self.gain_db
                - 20 * math.log10(_P_REF[self.kind]))
        if self.response is None:
            return np.full(f.shape, flat)
        return flat - np.interp(f, self.response[0], self.response[1])

    def to_dict(self) -> dict[str, Any]:
        """The calibration as a calibration file holds it."""
        out: dict[str, Any] = {"kind": self.kind, "unit": UNITS[self.kind],
                               "sensitivity_db": self.sensitivity_db, "gain_db": self.gain_db,
                               "full_scale_v": self.full_scale_v}
        if self.response is not None:
            out["response"] = {"frequency_hz": list(self.response[0]),
                               "db": list(self.response[1])}
        return out

    @classmethod
    def from_dict(cls, d: Any, path: Any = None) -> Calibration:
        """A calibration from the mapping a calibration file holds.

        Raises
        ------
        CalibrationError
            A value is missing, of the wrong kind, or the unit is not a sensitivity unit.
        """
        if not isinstance(d, dict):
            raise CalibrationError("file", type(d).__name__, "must be a JSON object", path=path)
        known = {"kind", "unit", "sensitivity_db", "gain_db", "full_scale_v", "response"}
        extra = sorted(set(d) - known)
        if extra:
            raise CalibrationError(extra[0], d[extra[0]],
                                   f"is not a calibration field ({', '.join(sorted(known))})",
                                   path=path)
        kind = d.get("kind")
        unit = d.get("unit")
        if unit is not None:
            by_unit = _UNIT_FORMS.get(" ".join(str(unit).lower().split()))
            if by_unit is None:
                raise CalibrationError("unit", unit, f"is not a sensitivity unit "
                                       f"({' or '.join(UNITS.values())})", path=path)
            if kind is not None and kind != by_unit:
                raise CalibrationError("unit", unit, f"is not the unit of a {kind}", path=path)
            kind = by_unit
        if "sensitivity_db" not in d:
            raise CalibrationError("sensitivity_db", None, "is missing", path=path)
        resp = d.get("response")
        response = None
        if resp is not None:
            if not isinstance(resp, dict) or set(resp) != {"frequency_hz", "db"}:
                raise CalibrationError("response", resp, "must be an object with the lists "
                                       "frequency_hz and db", path=path)
            try:
                response = (tuple(_number("response frequency", v, path)
                                  for v in resp["frequency_hz"]),
                            tuple(_number("response db", v, path) for v in resp["db"]))
            except TypeError:
                raise CalibrationError("response", resp, "must hold lists of numbers",
                                       path=path) from None
        try:
            return cls(kind=kind or "hydrophone",
                       sensitivity_db=_number("sensitivity_db", d["sensitivity_db"], path),
                       gain_db=_number("gain_db", d.get("gain_db", 0.0), path),
                       full_scale_v=_number("full_scale_v", d.get("full_scale_v", 1.0), path),
                       response=response)
        except CalibrationError as exc:
            if exc.path is None and path is not None:
                raise CalibrationError(exc.field, exc.value, exc.problem, path=path) from None
            raise


#: the largest response table read
MAX_TABLE_BYTES = 4 << 20


def read_response_csv(path: Any) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The (frequencies, dB) of a CSV table of rows ``frequency, dB`` (a header is skipped).

    Fields are separated by commas, or by semicolons with a decimal comma (``100;-165,5``);
    tabs and spaces around them are ignored.

    Raises
    ------
    CalibrationError
        The file cannot be read, is larger than :data:`MAX_TABLE_BYTES`, or a line is not
        two numbers.
    """
    from ..files import note_inputs

    note_inputs(path)
    rows: list[tuple[float, float]] = []
    try:
        with open(path, encoding="utf-8-sig") as fh:
            text = fh.read(MAX_TABLE_BYTES + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError("response", str(path), f"cannot be read ({exc})") from None
    if len(text) > MAX_TABLE_BYTES:
        raise CalibrationError("response", str(path), f"is larger than "
                               f"{MAX_TABLE_BYTES >> 20} MiB; a response table is a few "
                               "hundred rows", path=path)
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if ";" in line:
            parts = [p.strip().replace(",", ".") for p in line.split(";")]
        else:
            parts = [p.strip() for p in line.split(",")]
        try:
            if len(parts) != 2:
                raise ValueError(line)
            rows.append((float(parts[0]), float(parts[1])))
        except ValueError:
            if not rows and n == 1:  # a header
                continue
            raise CalibrationError("response", line.strip(),
                                   f"line {n} is not 'frequency, dB'", path=path) from None
    return tuple(r[0] for r in rows), tuple(r[1] for r in rows)


def load_calibration(path: str | os.PathLike[str]) -> Calibration:
    """Read a calibration file: JSON (see :meth:`Calibration.to_dict`), or a CSV table.

    A ``.csv`` file holds rows of frequency (Hz) and a hydrophone's sensitivity at it
    (dB re 1 V/µPa, linear in between); a JSON file may name such a table in
    ``"response": "table.csv"`` (relative to the JSON file), whose values are then
    added to its ``sensitivity_db``.

    Raises
    ------
    CalibrationError
        The file cannot be read or a value cannot be used (named in the message).
    """
    from pathlib import Path

    from ..jsonsafe import load_file

    p = Path(path)
    if p.suffix.lower() == ".csv":  # the sensitivity per frequency, a hydrophone's
        return Calibration(sensitivity_db=0.0, response=read_response_csv(p))
    d = load_file(p, what="calibration file")
    if isinstance(d, dict) and isinstance(d.get("response"), str):
        table = p.parent / d["response"]
        f, db = read_response_csv(table)
        d = {**d, "response": {"frequency_hz": list(f), "db": list(db)}}
    return Calibration.from_dict(d, path=p)
