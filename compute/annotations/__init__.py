"""Annotations: marked regions of recordings, their file formats and measurements.

:class:`Annotation` is the model (a box in time and, optionally, frequency,
with a label).  :func:`read_annotations` / :func:`write_annotations` read and
write SigMF metadata, Raven selection tables, Audacity label files, CSV,
the ``/annotations`` table of specscope's HDF5 exports, Praat TextGrids and
ELAN ``.eaf`` files (:data:`FORMATS`);
:func:`clip_annotations` cuts them to a range of a recording (what an export
of that range carries); :func:`measure` measures a box of a recording.  Nothing
here imports Qt, nor the readers of recordings (which use this package).
"""

from .formats import (
    FORMATS,
    AnnotationFormat,
    annotations_of_recording,
    detect_format,
    read_annotations,
    write_annotations,
)
from .hdf5_table import TABLE_FORMAT
from .measure import Measurement, measure, measure_annotation
from .model import FIELDS, Annotation, clip_annotations

__all__ = ["FIELDS", "FORMATS", "TABLE_FORMAT", "Annotation", "AnnotationFormat",
           "Measurement", "annotations_of_recording", "clip_annotations", "detect_format",
           "measure", "measure_annotation", "read_annotations", "write_annotations"]
