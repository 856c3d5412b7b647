"""Deployments: a folder of recordings explored as one timeline.

A recorder left at a site writes thousands of files; :func:`index_deployment` finds
them, reads each header once (cached in the user cache folder, nothing written beside
the files), puts them in order by their start times (from metadata, else from their
names) and reports per file what does not fit.  :class:`Deployment` reads the files
that fit as one :class:`~specscope.compute.io.Recording`, gaps kept as gaps.
``open_recording(FOLDER)`` returns one.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..io.base import register_folder_opener
from .headers import Header, HeaderError, read_header
from .index import (
    DeploymentError,
    DeploymentIndex,
    FileEntry,
    Gap,
    Problem,
    Segment,
    index_deployment,
)
from .layout import DEPLOYMENT_FORMAT, write_deployment_group
from .recording import Deployment, open_deployment, segments_in
from .times import NAME_FORMS, PatternError, compile_pattern, name_time, parse_zone

__all__ = ["DEPLOYMENT_FORMAT", "NAME_FORMS", "Deployment", "DeploymentError",
           "DeploymentIndex", "FileEntry", "Gap", "Header", "HeaderError", "PatternError", "Problem", "Segment",
           "compile_pattern", "index_deployment", "name_time", "open_deployment",
           "parse_zone", "read_header", "segments_in", "write_deployment_group"]

#: the options ``open_recording(FOLDER, ...)`` passes on
FOLDER_OPTIONS = ("name_pattern", "tz", "cache", "tolerance_s")


def _open_folder(path: Any, **options: Any) -> Deployment:
    for name in options:
        if name not in FOLDER_OPTIONS:
            raise InputError(f"{name} does not apply to a folder of recordings ({path}; a "
                             f"deployment takes: {', '.join(FOLDER_OPTIONS)})")
    return open_deployment(path, **options)


register_folder_opener(_open_folder)
