"""Comparing a stored batch output with a fresh run of it (``specscope rerun --verify``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["RerunResult", "compare_outputs"]


@dataclass
class RerunResult:
    """What :func:`~specscope.compute.batch.rerun.rerun` found.

    Parameters
    ----------
    output : str
        The output file that was run again.
    identical : bool or None
        Whether every dataset of the fresh run equals the stored one; None when the
        output was replaced rather than verified.
    max_abs_diff : float
        The largest absolute difference of a numeric dataset (NaN equals NaN).
    differences : list of str
        One line per dataset that differs (``"spectrogram: values differ"``).
    """

    output: str
    identical: bool | None
    max_abs_diff: float = 0.0
    differences: list[str] = field(default_factory=list)



def compare_outputs(stored: Path, fresh: Path) -> RerunResult:
    """Compare two outputs dataset by dataset (``rerun --verify``).

    Numeric datasets are compared in blocks of about four million values, NaN
    equal to NaN; text datasets (the stored pipeline) as values.

    Parameters
    ----------
    stored : Path
        The output as it was stored.
    fresh : Path
        The output of the new run.

    Returns
    -------
    RerunResult
        For ``stored``: identical or not, the largest difference and the datasets
        that differ (only in one file, of another shape, or with other values).
    """
    import h5py

    diffs: list[str] = []
    worst = 0.0
    with h5py.File(stored, "r") as a, h5py.File(fresh, "r") as b:
        names: list[str] = []
        a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        other: list[str] = []
        b.visititems(lambda n, o: other.append(n) if isinstance(o, h5py.Dataset) else None)
        for n in sorted(set(names) ^ set(other)):
            diffs.append(f"{n}: only in one file")
        for n in sorted(set(names) & set(other)):
            da, db = a[n], b[n]
            if da.shape != db.shape:
                diffs.append(f"{n}: shape {da.shape} != {db.shape}")
                continue
            if da.dtype.kind not in "biufc":  # text, e.g. provenance/pipeline
                if not np.array_equal(np.asarray(da[()], object), np.asarray(db[()], object)):
                    diffs.append(f"{n}: values differ")
                continue
            step = max(1, (1 << 22) // max(1, int(np.prod(da.shape[1:], dtype=np.int64))))
            for i in range(0, da.shape[0] if da.ndim else 1, step):
                xa = da[i:i + step] if da.ndim else da[()]
                xb = db[i:i + step] if db.ndim else db[()]
                if not np.array_equal(xa, xb, equal_nan=True):
                    d = float(np.nanmax(np.abs(np.asarray(xa, complex) - np.asarray(xb, complex))))
                    worst = max(worst, d)
                    if not diffs or not diffs[-1].startswith(n + ":"):
                        diffs.append(f"{n}: values differ")
    return RerunResult(str(stored), not diffs, worst, diffs)
