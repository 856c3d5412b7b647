"""The filter designer inline in a notebook (:func:`design_filter`).

The desktop app's :class:`~specscope.widgets.filter_designer.FilterDesigner`,
rendered offscreen and streamed to the notebook by a :class:`~specscope.app.notebook.canvas.FrameCanvas`.
"""

from __future__ import annotations

from typing import Any

import ipywidgets
import numpy as np
from PyQt6 import sip
from PyQt6.QtWidgets import QFormLayout, QWidget
from specscope.app.notebook.canvas import FrameCanvas
from specscope.app.notebook.pump import PUMP, qt_app, qt_thread
from specscope.compute.errors import InputError
from specscope.compute.filters import FilterSpec
from specscope.compute.filters.defaults import METHODS
from specscope.compute.pipeline import Pipeline
from specscope.widgets.filter_designer import FilterDesigner

__all__ = ["DESIGNER_SIZE", "DesignerWidget", "design_filter"]

#: size of a new designer widget in CSS pixels
DESIGNER_SIZE = (900, 380)


def _hide_row(widget: QWidget, field: QWidget) -> None:
    """Hide ``field`` and its label in the form layout of ``widget`` that holds it."""
    for form in widget.findChildren(QFormLayout):
        if form.indexOf(field) >= 0:
            form.setRowVisible(field, False)
            return
    field.hide()


class DesignerWidget(ipywidgets.VBox):
    """The filter designer as a notebook widget (see :func:`design_filter`).

    Parameters
    ----------
    fs : float
        Sample rate the filter is designed for (Hz).
    spec : FilterSpec or dict or None, optional
        The design to start from (a FilterSpec or pipeline filter-step params).
    size : tuple of int, optional
        The frame's width and height (pixels); the height grows to fit the form.
    target : Explorer, optional
        An explorer whose pipeline becomes this filter after each finished change
        (and at once when ``spec`` is given).

    Raises
    ------
    InputError
        When ``spec`` cannot be designed at ``fs``.
    """

    def __init__(self, fs: float, spec: FilterSpec | dict | None = None, *,
                 size: tuple[int, int] = DESIGNER_SIZE, target: Any = None) -> None:
        super().__init__()
        qt_app()
        PUMP.attach()
        self.designer = FilterDesigner(fs)
        if spec is not None and not self.designer.set_spec(spec, emit=False):
            raise InputError(self.designer.error.text())
        _hide_row(self.designer, self.designer.method)  # the Method dropdown below picks it
        self.canvas = FrameCanvas(self.designer, *size)
        self._fit_height()
        #: an explorer whose pipeline follows each finished change of the design
        self.target = target
        #: the design method (a combo box's popup cannot open in a frame)
        self.method_picker = ipywidgets.Dropdown(
            options=[(label, key) for key, label in METHODS.items()],
            value=self.designer.spec.design, description="Method")
        self.method_picker.observe(self._method_picked, names="value")
        self.summary = ipywidgets.HTML("")
        self.designer.specChanged.connect(self._spec_changed)
        self.designer.specCommitted.connect(self._spec_committed)
        self.children = [self.method_picker, self.canvas, self.summary]
        self._spec_changed(self.designer.params())
        if target is not None and spec is not None:  # without a spec: the first change
            target.pipeline = self.pipeline

    @property
    def spec(self) -> FilterSpec:
        """The current design's specification; set a FilterSpec or filter params."""
        return self.designer.spec

    @spec.setter
    @qt_thread
    def spec(self, value: FilterSpec | dict) -> None:
        if not self.designer.set_spec(value):
            raise InputError(self.designer.error.text())
        self.canvas.request_draw()

    @property
    def pipeline_step(self) -> dict:
        """The design as a pipeline step: ``{"op": "filter", "params": {...}}``."""
        return {"op": "filter", "params": self.designer.params()}

    @property
    def pipeline(self) -> Pipeline:
        """The design as a one-step Pipeline."""
        return Pipeline.from_steps([self.pipeline_step], name="designed filter")

    def snapshot(self) -> np.ndarray:
        """The image the widget shows: RGBA uint8 shaped (height, width, 4)."""
        return self.canvas.frame()

    @qt_thread
    def close(self) -> None:
        """Close the designer and the widget (once: the widget's finaliser closes it again)."""
        if not getattr(self, "_closed", False):
            self._closed = True
            self.canvas.close()
            sip.delete(self.designer)
        super().close()

    @qt_thread
    def _method_picked(self, change: dict) -> None:
        combo = self.designer.method
        combo.setCurrentIndex(combo.findData(change["new"]))  # the designer converts
        if self.designer.spec.design != change["new"]:  # refused: the error is shown
            self.method_picker.value = self.designer.spec.design
        self.canvas.request_draw()

    def _fit_height(self) -> None:
        """Grow the canvas to the designer's form (its last fields would be cut off)."""
        form = self.designer.form_scroll.widget()
        margins = self.designer.layout().contentsMargins()
        need = form.sizeHint().height() + margins.top() + margins.bottom()
        width, height = self.canvas.size
        if need > height:
            self.canvas.css_height = f"{need}px"
            self.canvas.set_size(width, need)

    def _spec_changed(self, params: dict) -> None:
        self._fit_height()
        text = ", ".join(f"{k}={v}" for k, v in params.items() if v is not None)
        error = self.designer.error.text()
        self.summary.value = f"<code>{text}</code>" + (
            f"<br><span style='color:#c00'>{error}</span>" if error else "")
        if self.method_picker.value != self.designer.spec.design:
            self.method_picker.value = self.designer.spec.design

    def _spec_committed(self, params: dict) -> None:
        self._spec_changed(params)  # a finished change is a change too: summary and method
        if self.target is not None:
            self.target.pipeline = self.pipeline


def design_filter(fs: float = 48000.0, spec: FilterSpec | dict | None = None, *,
                  target: Any = None) -> DesignerWidget:
    """The filter designer inline in the notebook: drag band edges, read the design back.

    Parameters
    ----------
    fs : float
        Sample rate the filter is designed for (Hz).
    spec : FilterSpec or dict, optional
        The design to start from (a FilterSpec or pipeline filter-step params).
    target : Explorer, optional
        An explorer whose pipeline becomes this filter after each finished change
        (and at once when ``spec`` is given; without one its processing stays until
        the first change).

    Returns
    -------
    DesignerWidget
        The widget; ``spec`` / ``pipeline_step`` / ``pipeline`` give the design.

    Raises
    ------
    InputError
        When ``spec`` cannot be designed at ``fs``.
    """
    return DesignerWidget(fs, spec, target=target)
