"""Edits of regions of time and frequency: attenuate, gain, remove or isolate what a box,
a lasso, brush strokes or a box with its harmonics cover.

:mod:`.regions` holds the shapes, :mod:`.core` the edit (analysis, a gain per cell,
synthesis added as a change: outside the region and its feather the signal is returned
bit for bit).  A pipeline step ``{"op": "edit", "params": RegionEdit.to_dict()}`` runs
it in exports, batch runs and on Dask.  Nothing here imports Qt.
"""

from .core import EDIT_OPERATIONS, REMOVE_FILLS, RegionEdit, apply_edit
from .regions import REGION_SHAPES, Box, Brush, Harmonics, Lasso, Region, region_from_dict

__all__ = ["EDIT_OPERATIONS", "REGION_SHAPES", "REMOVE_FILLS", "Box", "Brush", "Harmonics", "Lasso", "Region",
           "RegionEdit", "apply_edit", "region_from_dict"]
