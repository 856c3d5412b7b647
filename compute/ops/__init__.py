"""Built-in signal operators, grouped by family, and helpers plugins may build on.

Importing this package declares every built-in operator
(:func:`specscope.compute.operators.get` imports it on first lookup, so
``import specscope.compute`` stays light).  The built-ins are declared at the
top level even when a plugin's import is what imports them first.

The array helpers of :mod:`.helpers` (:func:`frames`,
:func:`frame_magnitudes`, :func:`as_float`, :func:`float_dtype`, :func:`sums_at`) are public:
a plugin's ``xp`` body may use them.
"""

from ..operators.registry import namespace
from .helpers import as_float, float_dtype, frame_magnitudes, frames, sums_at

with namespace(None):
    from . import (  # noqa: F401 - imported for their declarations
        analysis,
        basic,
        features,
        fft,
        filter_design,
        filtering,
        generators,
        timefreq,
        wavelets,
        windows,
    )

__all__ = ["as_float", "float_dtype", "frame_magnitudes", "frames", "sums_at"]
