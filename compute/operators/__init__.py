"""Operators: declarations, the autotuned choice of implementation, lookup by name.

- :mod:`.registry` declares operators (:func:`operator`, :class:`Param`) and
  holds the table of declared ones;
- :mod:`.autotune` chooses among implementations and remembers the choice
  (wisdom), and records call times (:func:`profile`, :func:`stats`);
- :mod:`.watch` keeps the table of plugin calls in progress (long ones report
  themselves) and the cancellation a long plugin checks (:func:`cancelled`,
  :func:`check_cancelled`);
- :mod:`.dispatch` looks operators up by name (:func:`get`, :func:`call`,
  :func:`list_operators`), loading the built-ins and plugins on first use.
"""

from ..errors import RegistrationError
from ..params import REQUIRED, Param
from . import autotune, watch
from .autotune import Profile, forget, profile, reset_stats, set_enabled, stats, wisdom_path
from .dispatch import (
    call,
    describe,
    describe_operator,
    families,
    get,
    list_operators,
    load_builtins,
    tune,
)
from .registry import (
    Implementation,
    Operator,
    declared,
    namespace,
    operator,
    unregister,
)
from .watch import cancelled, check_cancelled

__all__ = [
    "REQUIRED",
    "Implementation",
    "Operator",
    "Param",
    "Profile",
    "RegistrationError",
    "autotune",
    "call",
    "cancelled",
    "check_cancelled",
    "declared",
    "describe",
    "describe_operator",
    "families",
    "forget",
    "get",
    "list_operators",
    "load_builtins",
    "namespace",
    "operator",
    "profile",
    "reset_stats",
    "set_enabled",
    "stats",
    "tune",
    "unregister",
    "watch",
    "wisdom_path",
]
