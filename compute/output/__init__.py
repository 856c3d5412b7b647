"""Files out: crash-safe HDF5, provenance; spectrogram, pipeline, filtered and range exports.

Every writer publishes its file atomically (:func:`atomic_file` of
:mod:`specscope.compute.files`, :func:`atomic_h5`) and records where the data came from
(:func:`write_provenance`) and carries the recording's annotations inside it
(:func:`write_annotation_table`).  The HDF5 layouts are documented in
``docs/reference/hdf5-layout.md``.
"""

from ..files import STALE_PARTIAL_S, atomic_file, clean_stale_partials
from .annotation_table import write_annotation_table
from .filtered import filter_recording
from .hdf5 import atomic_h5, compression_options, dataset_options
from .provenance import (
    PROVENANCE_ATTRS,
    package_versions,
    provenance,
    recording_provenance,
    sha256_file,
    write_provenance,
)
from .range import (
    AUDIO_SUFFIXES,
    HDF5_SUFFIXES,
    RF64_THRESHOLD,
    SIGMF_SUFFIXES,
    RangePlan,
    audio_container,
    export_range,
    export_targets,
    label_path,
    output_kind,
    plan_range,
    seconds_to_samples,
)
from .signal import SIGNAL_FORMAT, export_recording, recording_meta, write_pipeline_output
from .spectrogram import (
    FORMAT_TAG,
    VIEW_FORMAT_TAG,
    create_spectrogram_datasets,
    export_spectrogram,
    read_spectrogram,
    write_display_image,
)
from .track import TRACK_FORMAT_TAG, TRACK_SUFFIXES, write_track

__all__ = [
    "AUDIO_SUFFIXES",
    "FORMAT_TAG",
    "HDF5_SUFFIXES",
    "PROVENANCE_ATTRS",
    "RF64_THRESHOLD",
    "SIGMF_SUFFIXES",
    "SIGNAL_FORMAT",
    "STALE_PARTIAL_S",
    "TRACK_FORMAT_TAG",
    "TRACK_SUFFIXES",
    "VIEW_FORMAT_TAG",
    "RangePlan",
    "atomic_file",
    "atomic_h5",
    "audio_container",
    "clean_stale_partials",
    "compression_options",
    "create_spectrogram_datasets",
    "dataset_options",
    "export_range",
    "export_recording",
    "export_spectrogram",
    "export_targets",
    "filter_recording",
    "label_path",
    "output_kind",
    "package_versions",
    "plan_range",
    "provenance",
    "read_spectrogram",
    "recording_meta",
    "recording_provenance",
    "seconds_to_samples",
    "sha256_file",
    "write_annotation_table",
    "write_display_image",
    "write_pipeline_output",
    "write_provenance",
    "write_track",
]
