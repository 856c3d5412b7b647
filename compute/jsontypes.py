"""Plain JSON types for parameter values (pipelines, filter specs)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def json_types(v: Any) -> Any:
    """JSON types for a parameter value (arrays -> lists, numpy scalars -> Python)."""
    if isinstance(v, dict):
        return {str(k): json_types(u) for k, u in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_types(u) for u in v]
    if isinstance(v, np.ndarray):
        return json_types(v.tolist())
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, numbers.Complex):
        return [float(v.real), float(v.imag)]
    return v
