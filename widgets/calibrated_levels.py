"""The calibration of a spectrogram view's level images, applied as they are drawn.

A calibration adds an offset in dB per frequency row to the images as computed (kept
aside): the colour bar and the readout say the calibrated unit and nothing is computed
again.  :class:`CalibratedLevels` is a part of
:class:`~specscope.widgets.spectrogram_view.SpectrogramView`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from specscope.compute.view.levels import calibrated, row_offsets

__all__ = ["BAR_LABELS", "CalibratedLevels"]

#: the colour bar's title of each quantity ({} the unit of a level)
BAR_LABELS = {"level": "Level ({})", "difference": "Difference (dB)"}


class CalibratedLevels:
    """The view's calibration: :meth:`set_calibration`, the unit, the offset images."""

    def set_calibration(self, calibration, unit: str, *, keep_colours: bool = True) -> None:
        """Show the level images calibrated: ``calibration.offset_db(f)`` dB added to each
        row at its frequency ``f``, the unit ``unit`` on the colour bar and in the readout.

        Nothing is recomputed: the images as computed are offset again.

        Parameters
        ----------
        calibration : Calibration or None
            A :class:`~specscope.compute.levels.Calibration`; None: levels as computed.
        unit : str
            The unit of a level (:func:`~specscope.compute.view.levels.level_unit`).
        keep_colours : bool
            Move the dB range by the change of the calibration's flat offset, so the
            image keeps its colours; False: the range stays (it was given in the new
            unit already, e.g. by a session).
        """
        if calibration == self.calibration and unit == self.level_unit:
            return
        shift = _flat_offset(calibration) - _flat_offset(self.calibration)
        self.calibration, self.level_unit = calibration, unit
        self._set_bar_label()
        self._show_calibrated()
        if keep_colours and shift:
            kept = self._kept_levels.get("level")
            if kept is not None:
                self._kept_levels["level"] = (kept[0] + shift, kept[1] + shift)
            if self.quantity == "level":
                lo, hi = self.levels()
                self.set_levels(lo + shift, hi + shift)
                self.levelsChanged.emit(lo + shift, hi + shift)

    @property
    def readout_unit(self) -> str:
        """The unit the readout gives a level in: the calibrated unit, else ``"dB"``."""
        return self.level_unit if self.calibration is not None else "dB"

    def _set_bar_label(self) -> None:
        self.colorbar.getAxis("left").setLabel(
            BAR_LABELS[self.quantity].format(self.level_unit))

    def _row_offsets(self, freq_edges: np.ndarray) -> np.ndarray | None:
        """The calibration's dB per row of a level image (None: nothing to add)."""
        if self.calibration is None or self.quantity != "level":
            return None
        split = self._stack_split
        to_hz = None if split is None else (
            lambda rows: np.array([split(float(y))[1] for y in rows]))
        return row_offsets(self.calibration, freq_edges, to_hz)

    def _show_calibrated(self) -> None:
        """Draw the images as computed with the calibration of now."""
        if self._db_raw is not None and self._f_edges is not None:
            self._db = calibrated(self._db_raw, self._row_offsets(self._f_edges))
            self.image.setImage(self._db, autoLevels=False, levels=self.levels())
        if self._bg_raw is not None and self._bg is not None:
            _, te, fe = self._bg
            self._bg = (calibrated(self._bg_raw, self._row_offsets(fe)), te, fe)
            self.background.setImage(self._bg[0], autoLevels=False, levels=self.levels())
        self._cursor_timer.start()


def _flat_offset(calibration) -> float:
    """The part of a calibration's offset that is the same at every frequency (dB)."""
    if calibration is None:
        return 0.0
    flat = replace(calibration, response=None) if calibration.response is not None \
        else calibration
    return float(flat.offset_db([1000.0])[0])
