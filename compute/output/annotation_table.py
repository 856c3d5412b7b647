"""The annotations an HDF5 export carries: the recording's, cut to the exported range.

Every HDF5 writer of :mod:`specscope.compute.output` (spectrogram, display
image, pipeline outputs and through them range, filtered and batch exports)
calls :func:`write_annotation_table`, which keeps the annotations inside the
output's time range and channels (:func:`~specscope.compute.annotations.clip_annotations`),
shifts them to the output's time 0 and writes the ``/annotations`` table whose
layout :mod:`specscope.compute.annotations.hdf5_table` defines (and
:func:`~specscope.compute.annotations.read_annotations` reads back).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..annotations import Annotation, clip_annotations
from ..annotations.hdf5_table import write_table

__all__ = ["write_annotation_table"]


def write_annotation_table(f: Any, annotations: Sequence[Annotation] | None, *,
                           start_s: float, stop_s: float,
                           channels: Sequence[int] | None = None) -> Any:
    """Write the annotations of ``[start_s, stop_s)`` as the ``/annotations`` table.

    Parameters
    ----------
    f : h5py.File
        The export being written.
    annotations : sequence of Annotation or None
        The recording's (seconds from its first sample); ``None`` or empty
        writes an empty table, so every export says whether it has any.
    start_s, stop_s : float
        The source time of the output's first sample (its time 0, stored as
        the table's ``time_offset``) and the end of what it covers.
    channels : sequence of int, optional
        The source channels of the output, in its order; annotations of other
        channels are left out and the rest get their output position.

    Returns
    -------
    h5py.Group
        The table.
    """
    kept = clip_annotations(annotations or (), start_s, stop_s, channels=channels)
    return write_table(f, kept, time_offset=float(start_s))
