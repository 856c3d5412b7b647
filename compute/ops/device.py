"""The GPU side of the tile engine: pyramid cells streamed through the device.

The public face of :mod:`specscope.compute.ops._cuda` for code outside the
operators: :class:`CellStream` turns host samples into the sums and maxima of
the tile engine's cells on the device, copies overlapping compute, and brings
back only the cells; :class:`TransferStats` says what crossed the bus.  Nothing
here imports CuPy: the module to run with is passed in.
"""

from __future__ import annotations

from ._cuda import DEFAULT_BUDGET, CellStream, TransferStats, kernel_sources

__all__ = ["DEFAULT_BUDGET", "CellStream", "TransferStats", "kernel_sources"]
