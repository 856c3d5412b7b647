"""A filter's band edges drawn over a spectrogram view and its spectrum slice, draggable.

:class:`FilterLines` is a part of
:class:`~specscope.widgets.spectrogram_view.SpectrogramView`: dragging a line emits
``filterLineMoved(field, index, Hz, finished)``.
"""

from __future__ import annotations

import pyqtgraph as pg

from .frequency_axis import forward, inverse

__all__ = ["FilterLines"]


class FilterLines:
    """Draggable lines at a filter's band edges over the view (see :meth:`set_filter_lines`)."""

    def set_filter_lines(self, edges: list[tuple[str, int, float]]) -> None:
        """Draggable lines at a filter's band edges ``(field, index, Hz)``, over the
        spectrogram and over the spectrum slice beside it."""
        keys = [(n, i) for n, i, _ in edges]
        if keys != [(n, i) for n, i, _ in self._filter_lines]:
            for _, _, lines in self._filter_lines:
                self.plot.removeItem(lines[0])
                self.slice.removeItem(lines[1])
            self._filter_lines = []
            for name, i, _ in edges:
                pair = []
                for host, label in ((self.plot, name), (self.slice, None)):
                    line = pg.InfiniteLine(angle=0, movable=True,
                                           pen=pg.mkPen((255, 220, 80), width=2,
                                                        style=pg.QtCore.Qt.PenStyle.DashLine),
                                           hoverPen=pg.mkPen("w", width=3), label=label,
                                           labelOpts={"position": 0.03,
                                                      "color": (255, 220, 80)})
                    line.sigDragged.connect(self._filter_line_dragged)
                    line.sigPositionChangeFinished.connect(self._filter_line_released)
                    host.addItem(line, ignoreBounds=True)
                    pair.append(line)
                self._filter_lines.append((name, i, tuple(pair)))
        for (_, _, lines), (_, _, f) in zip(self._filter_lines, edges, strict=True):
            for line in lines:
                if not line.moving:
                    line.blockSignals(True)
                    line.setValue(float(forward(self.freq_scale, f)))
                    line.blockSignals(False)

    def _filter_line_event(self, line: pg.InfiniteLine, finished: bool) -> None:
        for name, i, lines in self._filter_lines:
            if line in lines:
                f = float(inverse(self.freq_scale, line.value()))
                self.filterLineMoved.emit(name, i, f, finished)
                return

    def _filter_line_dragged(self, line: pg.InfiniteLine) -> None:
        self._filter_line_event(line, False)

    def _filter_line_released(self, line: pg.InfiniteLine) -> None:
        self._filter_line_event(line, True)
