"""Annotations: marked regions of recordings, their file formats and measurements.

:class:`Annotation` is the model (a box in time and, optionally, frequency,
with a label).  :func:`read_annotations` / :func:`write_annotations` read and
write SigMF metadata, Raven selection tables, Audacity label files and CSV
(:data:`FORMATS`); :func:`measure` measures a box of a recording.  Nothing here
imports Qt.
"""

from .formats import (
    FORMATS,
    AnnotationFormat,
    annotations_of_recording,
    detect_format,
    read_annotations,
    write_annotations,
)
from .measure import Measurement, measure, measure_annotation
from .model import FIELDS, Annotation

__all__ = ["FIELDS", "FORMATS", "Annotation", "AnnotationFormat", "Measurement",
           "annotations_of_recording", "detect_format", "measure", "measure_annotation",
           "read_annotations", "write_annotations"]
