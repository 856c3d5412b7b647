"""Built-in signal operators, grouped by family.

Importing this package registers every built-in operator with
:mod:`specscope.compute.operators.registry` (the registry imports it on first lookup,
so ``import specscope.compute`` stays light).
"""

from . import (  # noqa: F401 - imported for their registrations
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
