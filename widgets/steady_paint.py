"""pyqtgraph plots painted once per change of their view, without work it does not need
(:func:`steady_paint`)."""

from __future__ import annotations

import pyqtgraph as pg

__all__ = ["steady_paint"]


def steady_paint(item: pg.PlotItem) -> None:
    """One paint per change of ``item``'s view, with no work the change does not need.

    pyqtgraph moves a view box's contents to a new range in the paint that follows
    (``prepareForPaint``); moved there, every item in the box is marked dirty while it is
    painted and the view is painted a second time, with nothing new.  The box's transform
    follows each change of its range or size at once instead, so the one paint finds it
    current.  An axis without units rewrites its label (HTML) on every change of range for
    an SI prefix it never shows: its prefix is turned off.

    Parameters
    ----------
    item : pyqtgraph.PlotItem
        The plot whose view box and axes are set up.
    """
    vb = item.getViewBox()
    vb.sigRangeChanged.connect(_update_matrix)
    vb.sigResized.connect(_update_matrix)
    for name in ("left", "bottom", "right", "top"):
        axis = item.getAxis(name)
        if not axis.labelUnits and axis.autoSIPrefix:
            axis.enableAutoSIPrefix(False)


def _update_matrix(vb: pg.ViewBox, *_: object) -> None:
    vb.updateMatrix()
