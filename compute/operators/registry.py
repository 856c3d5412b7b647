"""Operator declarations: one per operator, built-in or plugin.

:func:`operator` declares an operator (its :class:`Param` schema, reference,
history, streaming) and makes the decorated function its default
implementation; :class:`Operator` runs it on the backend the run policy
chooses.  This module holds the table of declared operators; lookup by name is
:mod:`specscope.compute.operators.dispatch`.

See docs/explanation/rooms/operators.md.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import inspect
import math
import numbers
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import backend as _backend
from ..errors import InputError, RegistrationError, SpecscopeError, operator_error
from ..params import REQUIRED, Param
from ..types import NanPolicy, choices

__all__ = ["NAN_POLICIES", "REQUIRED", "Implementation", "Operator", "Param",
           "RegistrationError", "RunPolicy", "declared", "find", "namespace", "operator",
           "set_run_policy", "typed_input_error", "unregister"]

#: keywords an operator call takes itself, so no parameter may use them
#: (the input ``x`` is positional-only, so a parameter may take scipy's name ``x``)
_RESERVED = frozenset({"backend", "fs", "name", "xp"})
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
NAN_POLICIES = choices(NanPolicy)


@dataclass
class Implementation:
    """One way to run an operator on one backend.

    ``fn`` is called with the input array, the validated parameters and, when
    ``wants_xp`` / ``wants_fs``, the array namespace and the sample rate.

    Parameters
    ----------
    fn : callable
        The function that computes the operator.
    backend : {"numpy", "cupy"}
        The backend it runs on.
    variant : str
        Its name among the implementations on that backend.
    native : bool
        False when the CuPy path copies to the host and runs NumPy.
    wants_xp : bool
        Whether ``fn`` takes the array namespace as ``xp``.
    wants_fs : bool
        Whether ``fn`` takes the sample rate as ``fs``.
    fs_default : object
        What ``fs`` is when the caller gives none: the function's own default
        (``None`` keeps scipy's "normalised frequency" meaning), else 1.0.
    derived : bool
        True when derived from the default function (generic ``xp`` code or a host
        round trip); an explicit ``.implementation(backend)`` replaces it.
    """

    fn: Callable[..., Any]
    backend: str
    variant: str = "default"
    #: False when the CuPy path copies to the host and runs NumPy
    native: bool = True
    wants_xp: bool = False
    wants_fs: bool = False
    #: what ``fs`` is when the caller gives none: the function's own default
    #: (``None`` keeps scipy's "normalised frequency" meaning), else 1.0
    fs_default: Any = 1.0
    #: derived from the default function (generic ``xp`` code or host round
    #: trip); an explicit ``.implementation(backend)`` replaces it
    derived: bool = False

    @classmethod
    def wrap(cls, fn: Callable[..., Any], backend: str, variant: str,
             native: bool = True) -> Implementation:
        """An implementation of ``fn``, reading ``xp`` / ``fs`` from its signature."""
        try:
            names = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            names = {}
        fs_default: Any = 1.0
        if "fs" in names and names["fs"].default is not inspect.Parameter.empty:
            fs_default = names["fs"].default
        return cls(fn, backend, variant, native, "xp" in names, "fs" in names, fs_default)


HistoryType = int | Callable[[dict[str, Any]], int | None] | None


@dataclass(eq=False)
class Operator:
    """A registered operator: schema, implementations and metadata.

    Call it like a function: ``op(x, backend="auto", fs=None, **params)``.
    :attr:`function` is the declared function, undecorated: code that builds
    on an operator inside its own implementation calls
    ``op.function(x, xp=xp, fs=fs, **params)`` (no validation, no backend
    choice, no copies).  Operators are made by :func:`operator`.

    Parameters
    ----------
    name : str
        The unique name (``"plugin.op"`` for a plugin's).
    family : str
        The group in listings (``fft``, ``windows``, ``timefreq``, ...).
    summary : str
        One line.
    params : tuple of Param
        The schema.
    reference : str
        What the operator must match, e.g. ``"scipy.signal.sosfilt"``.
    history : int, callable or None
        Context samples a chunked run needs: an int, a function of the validated
        parameters, or None when the operator needs the whole signal.
    streamable : bool
        Whether it can run chunk by chunk carrying state.
    takes_input : bool
        False for operators that make data from parameters only (windows, designs).
    nan_policy : {"propagate", "reject"}
        What NaN input does: propagate to the output, or raise :class:`InputError`.
    input_kind : {"array", "sequence", "any"}
        An array, a list of arrays (wavelet coefficients), or an input the
        operator checks itself (a scipy ``system``: an SOS array or ``(b, a)``).
    doc : str
        The long description (the function's docstring).
    implementations : dict
        Backend -> variant -> :class:`Implementation`.
    function : callable, optional
        The function :func:`operator` decorated (its default implementation).
    """

    name: str
    family: str
    summary: str
    params: tuple[Param, ...]
    reference: str = ""
    #: context samples a chunked run needs: an int, a function of the
    #: validated parameters, or None when the operator needs the whole signal
    history: HistoryType = 0
    #: True when the operator can run chunk by chunk carrying state
    streamable: bool = False
    #: False for operators that make data from parameters only (windows, designs)
    takes_input: bool = True
    #: what NaN input does: ``propagate`` to the output, or ``reject`` (InputError)
    nan_policy: NanPolicy = "propagate"
    #: ``"array"``, ``"sequence"`` for operators taking a list of arrays
    #: (wavelet coefficients), or ``"any"`` for an input the operator checks
    #: itself (a scipy ``system``: an SOS array or a ``(b, a)`` pair)
    input_kind: str = "array"
    doc: str = ""
    implementations: dict[str, dict[str, Implementation]] = field(default_factory=dict)
    #: the function :func:`operator` decorated (its default implementation)
    function: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        self._by_name = {p.name: p for p in self.params}
        self.__doc__ = self.doc or self.summary

    # -- implementations ----------------------------------------------------------

    def _add(self, impl: Implementation) -> None:
        if impl.backend not in _backend.BACKENDS:
            raise RegistrationError(f"{self.name}: backend={impl.backend!r} must be one of "
                                    f"{', '.join(_backend.BACKENDS)}")
        variants = self.implementations.setdefault(impl.backend, {})
        old = variants.get(impl.variant)
        if old is not None and not old.derived:
            raise RegistrationError(f"{self.name}: a {impl.backend!r} implementation named "
                                    f"{impl.variant!r} is already registered")
        variants[impl.variant] = impl

    def implementation(self, backend: str, variant: str = "default"
                       ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator adding an implementation for ``backend`` (and ``variant``)."""
        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._add(Implementation.wrap(fn, backend, variant, native=True))
            return fn
        return decorate

    @property
    def backends(self) -> list[str]:
        """Backends with at least one implementation (native or host round trip)."""
        return [b for b in _backend.BACKENDS if self.implementations.get(b)]

    def candidates(self, backends: Iterable[str], native_only: bool = True
                   ) -> list[Implementation]:
        """Implementations on ``backends``, in registration order."""
        out = []
        for b in backends:
            for impl in self.implementations.get(b, {}).values():
                if impl.native or not native_only:
                    out.append(impl)
        return out

    def get_implementation(self, backend: str, variant: str | None = None) -> Implementation:
        """The implementation on ``backend`` called ``variant`` (the first one if None)."""
        variants = self.implementations.get(backend, {})
        if not variants:
            raise operator_error(InputError, self.name, f"no implementation for backend={backend!r}; "
                             f"it has {', '.join(self.backends)}")
        if variant is None:
            return next(iter(variants.values()))
        if variant not in variants:
            raise operator_error(InputError, self.name, f"variant={variant!r} must be one of "
                             f"{', '.join(variants)} on {backend}")
        return variants[variant]

    # -- parameters ---------------------------------------------------------------

    def validate(self, params: dict[str, Any], *, python: bool = False) -> dict[str, Any]:
        """Complete ``params`` with defaults and validate them against the schema.

        ``python=True`` (a call from Python, :meth:`run`) lets an operator that
        :attr:`keeps_scipy_word` take what scipy takes; pipeline files and forms
        validate against the schema alone, so a bad file is refused before any
        data is read.
        """
        lenient = python and self.keeps_scipy_word
        if not python:
            given = [k for k in params if k in self._by_name and self._by_name[k].python_only]
            if given:
                raise operator_error(InputError, self.name, f"parameter {given[0]!r} is given "
                                     "only in a call from Python (it is not part of a "
                                     "pipeline step or a form)")
        unknown = [k for k in params if k not in self._by_name]
        if unknown:
            k = unknown[0]
            names = ", ".join(p.name for p in self.schema_params) or "none"
            close = difflib.get_close_matches(k, list(self._by_name), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise operator_error(InputError, self.name, f"unknown parameter {k!r}{hint} (parameters: {names})")
        out: dict[str, Any] = {}
        for p in self.params:
            if p.name in params:
                raw = params[p.name]
                try:
                    out[p.name] = p.validate(raw, self.name)
                except InputError:
                    if not lenient:
                        raise
                    # scipy's own checks decide (and raise scipy's exception type)
                    out[p.name] = raw
                    continue
                if lenient and p.type is int and isinstance(
                        raw, numbers.Real) and not isinstance(raw, numbers.Integral):
                    out[p.name] = raw  # 4.0 where scipy wants an integer: scipy decides
            elif p.required:
                raise operator_error(InputError, self.name, f"parameter {p.name!r} is required"
                                 + (f" ({p.help})" if p.help else ""))
            else:
                out[p.name] = p.default
        return out

    @property
    def schema_params(self) -> tuple[Param, ...]:
        """The parameters of the schema: forms, listings and pipeline steps (those a
        call from Python alone can give, such as ``out=``, left out)."""
        return tuple(p for p in self.params if not p.python_only)

    @property
    def keeps_scipy_word(self) -> bool:
        """True when the operator is the scipy.signal function of its name.

        Called from Python (:meth:`run`) it then takes every value scipy takes:
        a value outside the schema (an array window, a callable detrend,
        ``N=0``, ``btype="bp"``) goes to scipy as it is, and scipy's own checks
        accept or refuse it (refusals raise :func:`typed_input_error` classes,
        which are scipy's exception types too).  Forms and pipeline files stay
        held to the schema (:meth:`validate` without ``python``).
        """
        ref = self.reference
        return ref in (f"scipy.signal.{self.name}", f"scipy.signal.windows.{self.name}")

    def history_for(self, params: dict[str, Any]) -> int | None:
        """Context samples a chunked run needs with these (validated) parameters."""
        if callable(self.history):
            return self.history(params)
        return self.history

    # -- running ------------------------------------------------------------------

    def __call__(self, x: Any = None, /, *, backend: str = "auto", fs: float | None = None,
                 **params: Any) -> Any:
        return self.run(x, backend=backend, fs=fs, **params)

    def check_input(self, x: Any) -> Any:
        """``x`` as this operator takes it (an array, a list of arrays or None).

        Raises
        ------
        InputError
            When the input is missing, not numeric, or NaN where NaN is rejected.
        """
        if not self.takes_input:
            if x is not None:
                raise InputError(f"{self.name} takes no input array; give its parameters "
                                 "only")
            return None
        if x is None:
            raise operator_error(InputError, self.name, "an input array is required")
        if self.input_kind == "sequence":
            if not isinstance(x, (list, tuple)) or not x:
                raise operator_error(InputError, self.name, "input must be a non-empty list of arrays "
                                 "(as the matching decomposition returns)")
            return [v if _backend.is_device_array(v) or isinstance(v, (list, tuple))
                    else np.asarray(v) for v in x]
        if self.input_kind == "any" and not (isinstance(x, np.ndarray)
                                             or _backend.is_device_array(x)):
            return x  # the implementation checks what is not an array
        if not _backend.is_device_array(x):
            try:
                x = np.asarray(x)
            except (ValueError, TypeError):
                if not self.keeps_scipy_word:
                    raise
                return x  # not an array (a (b, a) pair of lengths): scipy decides
        if x.dtype.kind not in "biufc":
            if self.keeps_scipy_word and x.dtype.kind == "O":
                return x  # scipy takes object arrays of numbers, and refuses the rest
            raise operator_error(InputError, self.name, f"input must be numeric, got dtype {x.dtype}")
        if self.nan_policy == "reject" and x.dtype.kind in "fc" and x.size:
            xp = np if not _backend.is_device_array(x) else _backend.get_xp("cupy")
            if bool(xp.isnan(x).any()):
                raise operator_error(InputError, self.name, "input contains NaN; this operator rejects NaN "
                                 "(remove or interpolate them first)")
        return x

    def _parse_backend(self, backend: str) -> tuple[str, str | None]:
        if not isinstance(backend, str):
            raise InputError(f"backend={backend!r} must be one of auto, "
                             f"{', '.join(_backend.BACKENDS)}")
        name, _, variant = backend.partition(":")
        if name == "auto":
            return "auto", None
        _backend.check_backend(name)
        return name, variant or None

    def execute(self, impl: Implementation, x: Any, values: dict[str, Any],
                fs: float | None) -> Any:
        """Run one implementation: move data to its backend, call, return its result."""
        target = impl.backend if impl.native else "numpy"
        kwargs = dict(values)
        for p in self.params:
            if kwargs.get(p.name) is not None and _is_array_type(p.type) and (
                    isinstance(kwargs[p.name], np.ndarray)
                    or _backend.is_device_array(kwargs[p.name])):
                kwargs[p.name] = _backend.to_device(kwargs[p.name], target)
        if impl.wants_xp:
            kwargs["xp"] = _backend.get_xp(target)
        if impl.wants_fs:
            kwargs["fs"] = impl.fs_default if fs is None else fs
        if self.takes_input:
            result = impl.fn(_backend.to_device(x, target), **kwargs)
        else:
            result = impl.fn(**kwargs)
        if target != impl.backend:
            result = _backend.to_device(result, impl.backend)
        return result

    def run(self, x: Any = None, /, *, backend: str = "auto", fs: float | None = None,
            **params: Any) -> Any:
        """Validate, choose an implementation, run, and return the result.

        ``backend="auto"`` asks the installed :class:`RunPolicy`; every call's
        time is reported to it.  The result is in the namespace of ``x`` (NumPy
        in, NumPy out); an operator without input returns NumPy unless
        ``backend="cupy"``.
        """
        namespace_of_result = self._result_namespace(params)
        values = self.validate(params, python=True)
        if fs is not None:
            if isinstance(fs, bool) or not isinstance(fs, numbers.Real) or not (
                    math.isfinite(fs) and fs > 0):
                if not self.keeps_scipy_word:
                    raise operator_error(InputError, self.name, f"fs={fs!r} must be a positive sample rate "
                                     "in Hz")
            else:
                fs = float(fs)
        x = self.check_input(x)
        want, variant = self._parse_backend(backend)
        if want == "auto":
            impl = self._preferred(x) or _policy.choose(self, x, values, fs)
        else:
            impl = self.get_implementation(want, variant)
        # results follow the input's namespace
        if self.takes_input:
            home = _backend.backend_of(x)
        else:
            home = "cupy" if want == "cupy" else "numpy"
        t0 = time.perf_counter()
        try:
            try:
                result = self.execute(impl, x, values, fs)
            except Exception as exc:
                if impl.backend != "cupy" or not _backend.is_device_failure(exc):
                    raise
                # the GPU failed (memory, driver): the same call on the CPU
                first = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
                _backend.report_fallback(f"{self.name}: GPU failed ({first}); "
                                         "computed on the CPU")
                impl = self.get_implementation("numpy")
                x = _backend.to_host(x) if self.takes_input else x
                result = self.execute(impl, x, _backend.to_host(values), fs)
        except SpecscopeError:
            raise
        except (ValueError, TypeError, ZeroDivisionError, IndexError, NotImplementedError,
                KeyError) as exc:
            msg = " ".join(str(exc).split()) or type(exc).__name__
            if self.keeps_scipy_word:  # scipy's own words first (code matching them still does)
                raise typed_input_error(type(exc))(f"{msg} ({self.name})") from exc
            raise operator_error(typed_input_error(type(exc)), self.name, msg) from exc
        if namespace_of_result is not None:
            home = namespace_of_result
        if home != impl.backend:
            result = _backend.to_device(result, home)
        _policy.record(self.name, impl.backend, time.perf_counter() - t0)
        return result

    def _result_namespace(self, params: dict[str, Any]) -> str | None:
        """Take scipy's ``xp=`` / ``device=`` keywords of an operator without input.

        scipy's array-API functions (windows, designs) take the namespace of
        their result; NumPy (or None) and CuPy are the ones there are here.
        Removes them from ``params``; returns ``"numpy"``, ``"cupy"`` or None.
        """
        if self.takes_input or not self.keeps_scipy_word or (
                "xp" not in params and "device" not in params):
            return None
        xp = params.pop("xp", None)
        device = params.pop("device", None)
        if device is not None and str(device) != "cpu" and not hasattr(device, "id"):
            raise operator_error(InputError, self.name, f"device={device!r} must be None or 'cpu'")
        if xp is None:
            return None
        name = getattr(xp, "__name__", "")
        if "cupy" in name:
            return "cupy"
        if "numpy" in name:
            return "numpy"
        raise operator_error(typed_input_error(TypeError), self.name, f"xp={xp!r} must be NumPy or CuPy")

    def _preferred(self, x: Any) -> Implementation | None:
        """The implementation :func:`~specscope.compute.backend.set_preference` asks for.

        None leaves the choice to the run policy (preference ``"auto"``, or a
        device array, which stays where it is).
        """
        pref = _backend.preference()
        if pref == "auto" or (x is not None and _backend.is_device_array(x)):
            return None
        if pref == "cupy":
            native = self.candidates(["cupy"]) if "cupy" in _backend.available_backends() \
                else []
            return native[0] if native else self.get_implementation("numpy")
        return self.get_implementation("numpy")

    @property
    def gpu(self) -> str:
        """How the operator runs on a GPU.

        ``"native"``: a CuPy implementation computes on the device;
        ``"host"``: its CuPy path copies to the host, runs NumPy and copies back;
        ``"none"``: no CuPy path at all.
        """
        impls = self.implementations.get("cupy", {})
        if any(i.native for i in impls.values()):
            return "native"
        return "host" if impls else "none"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able description (what ``specscope ops --json`` prints)."""
        if callable(self.history):
            history: Any = "depends on parameters"
        else:
            history = self.history
        return {
            "name": self.name, "family": self.family, "summary": self.summary,
            "reference": self.reference,
            "backends": self.backends,
            "gpu": self.gpu,
            "implementations": {
                b: [{"variant": i.variant, "native": i.native} for i in v.values()]
                for b, v in self.implementations.items()},
            "params": [p.to_dict() for p in self.schema_params],
            "takes_input": self.takes_input,
            "history": history,
            "streamable": self.streamable,
            "nan_policy": self.nan_policy,
            "input_kind": self.input_kind if self.takes_input else None,
        }


_TYPED_ERRORS: dict[type, type] = {}


def typed_input_error(kind: type[BaseException]) -> type[InputError]:
    """The :class:`InputError` class that is also the built-in exception type of ``kind``.

    ``TypeError`` gives ``InputTypeError`` (an InputError and a TypeError),
    ``NotImplementedError`` gives ``InputNotImplementedError`` and so on: code
    written against scipy catches what scipy raises, the CLI and GUI see an
    InputError.  ``ValueError`` (and anything else) gives InputError itself.

    Parameters
    ----------
    kind : type
        An exception class.

    Returns
    -------
    type
        A subclass of :class:`InputError` (made once per built-in base, then
        reused), or :class:`InputError` itself.

    Examples
    --------
    >>> cls = typed_input_error(TypeError)
    >>> cls.__name__, issubclass(cls, TypeError), issubclass(cls, InputError)
    ('InputTypeError', True, True)
    >>> typed_input_error(ValueError) is InputError
    True
    """
    if isinstance(kind, type) and issubclass(kind, InputError):
        return kind
    base = next((b for b in getattr(kind, "__mro__", ()) if b.__module__ == "builtins"),
                ValueError)
    if base in (ValueError, Exception, BaseException) or issubclass(InputError, base):
        return InputError
    cls = _TYPED_ERRORS.get(base)
    if cls is None:
        try:
            cls = type(f"Input{base.__name__}", (InputError, base),
                       {"__module__": __name__,
                        "__doc__": f"An InputError that is also a {base.__name__}."})
        except TypeError:  # a base whose layout does not mix with ValueError
            return InputError
        _TYPED_ERRORS[base] = cls
    return cls


def _is_array_type(t: Any) -> bool:
    return t == "array" or (isinstance(t, tuple) and "array" in t)


# -- running: the choice of backend="auto" ------------------------------------------


@dataclass
class RunPolicy:
    """How ``backend="auto"`` picks an implementation, and where call times go.

    ``choose(op, x, values, fs)`` returns one of ``op``'s implementations for
    the checked input and validated parameters; ``record(name, backend,
    seconds)`` receives the time of every call.

    Parameters
    ----------
    choose : callable
        ``choose(op, x, values, fs) -> Implementation``.
    record : callable
        ``record(name, backend, seconds)``.
    """

    choose: Callable[[Operator, Any, dict[str, Any], float | None], Implementation]
    record: Callable[[str, str, float], None]


def _first_on_home(op: Operator, x: Any, values: dict[str, Any],
                   fs: float | None) -> Implementation:
    home = _backend.backend_of(x) if hasattr(x, "dtype") else "numpy"
    return op.get_implementation(home)


def _ignore(name: str, backend: str, seconds: float) -> None:
    pass


_policy = RunPolicy(_first_on_home, _ignore)


def set_run_policy(policy: RunPolicy) -> None:
    """Install how ``backend="auto"`` chooses and where call times are recorded.

    :mod:`specscope.compute.operators.dispatch` installs the autotuned choice
    when the operators package is imported; until then the first
    implementation on the input's backend runs.

    Parameters
    ----------
    policy : RunPolicy
        The policy every operator call uses from now on.
    """
    global _policy
    _policy = policy


# -- the table of declared operators -------------------------------------------------

_declared: dict[str, Operator] = {}
_lock = threading.RLock()
#: the namespace :func:`operator` prefixes names with (None: no prefix)
_namespace: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "specscope_operator_namespace", default=None)


@contextlib.contextmanager
def namespace(prefix: str | None) -> Iterator[None]:
    """Declare operators under ``prefix`` inside the block: ``"op"`` becomes ``"prefix.op"``.

    A plugin is imported inside ``namespace(plugin_name)``; ``namespace(None)``
    declares at the top level again (the built-ins, even when a plugin's
    import is what first imports them).  The setting is per thread and task.

    Parameters
    ----------
    prefix : str or None
        The namespace, or None for none.

    Yields
    ------
    None
        The block runs with the namespace set; the previous one is restored after.
    """
    token = _namespace.set(prefix)
    try:
        yield
    finally:
        _namespace.reset(token)


def operator(name: str, *, family: str, summary: str, params: Sequence[Param] = (),
             reference: str = "", history: HistoryType = 0, streamable: bool = False,
             takes_input: bool = True, nan_policy: NanPolicy = "propagate",
             input_kind: str = "array",
             ) -> Callable[[Callable[..., Any]], Operator]:
    """Declare an operator; the decorated function is its default implementation.

    Parameters
    ----------
    name : str
        Unique name: lower-case words joined by ``_``; plugins use a namespace,
        ``"plugin.op"``.  Registering a taken name is a :class:`RegistrationError`.
    family : str
        Group in listings: ``fft``, ``windows``, ``timefreq``, ...
    summary : str
        One line.
    params : sequence of Param
        The schema; the implementation receives these as keywords.
    reference : str
        What the operator must match, e.g. ``"scipy.signal.sosfilt"``.
    history : int, callable or None
        Context samples a chunked run needs (``None``: the whole signal).
    streamable : bool
        Whether it can run chunk by chunk with carried state.
    takes_input : bool
        False for operators computed from parameters only.
    nan_policy : {"propagate", "reject"}
        What NaN in the input does.
    input_kind : {"array", "sequence", "any"}
        ``"sequence"`` for operators taking a list of arrays (wavelet coefficients),
        ``"any"`` for an input the implementation checks itself.

    Returns
    -------
    decorator
        Turns the function into an :class:`Operator`.  A function whose
        signature names ``xp`` runs on every backend; otherwise it runs on
        NumPy and gets a host round-trip CuPy path.

    Raises
    ------
    RegistrationError
        A malformed name, an unknown ``nan_policy``, a parameter that is not a
        :class:`Param`, declared twice or with a reserved name (``backend``,
        ``fs``, ``name``, ``xp``); the decorator raises it for a name already
        registered.
    """
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise RegistrationError(f"operator name {name!r} must be lower-case words joined by "
                                "'_', with an optional namespace: 'plugin.op'")
    if nan_policy not in NAN_POLICIES:
        raise RegistrationError(f"{name}: nan_policy={nan_policy!r} must be one of "
                                f"{', '.join(NAN_POLICIES)}")
    prefix = _namespace.get()
    if prefix is not None and not name.startswith(prefix + "."):
        name = f"{prefix}.{name}"
    params = tuple(params)
    seen: set[str] = set()
    for p in params:
        if not isinstance(p, Param):
            raise RegistrationError(f"{name}: params must be Param objects, got {p!r}")
        if p.name in seen:
            raise RegistrationError(f"{name}: parameter {p.name!r} is declared twice")
        if p.name in _RESERVED:
            raise RegistrationError(f"{name}: parameter name {p.name!r} is reserved "
                                    f"({', '.join(sorted(_RESERVED))})")
        seen.add(p.name)

    def decorate(fn: Callable[..., Any]) -> Operator:
        op = Operator(name=name, family=family, summary=summary, params=params,
                      reference=reference, history=history, streamable=streamable,
                      takes_input=takes_input, nan_policy=nan_policy, input_kind=input_kind,
                      doc=inspect.getdoc(fn) or summary, function=fn)
        default = Implementation.wrap(fn, "numpy", "default")
        op._add(default)
        derived = Implementation.wrap(fn, "cupy", "default", native=default.wants_xp)
        derived.derived = True
        op._add(derived)
        with _lock:
            if name in _declared:
                raise RegistrationError(f"operator {name!r} is already registered; plugins "
                                        "register under their own namespace, 'plugin.op'")
            _declared[name] = op
        return op

    return decorate


def unregister(name: str) -> None:
    """Remove an operator (plugin reloads and tests).

    Parameters
    ----------
    name : str
        The declared name.

    Raises
    ------
    InputError
        No operator has this name.
    """
    with _lock:
        if name not in _declared:
            raise InputError(f"operator {name!r} is not registered")
        del _declared[name]


def find(name: str) -> Operator | None:
    """The operator declared as ``name``, or None (nothing is loaded to find it).

    Parameters
    ----------
    name : str
        The full name (``"plugin.op"`` for a plugin's).

    Returns
    -------
    Operator or None
        The declared operator.
    """
    return _declared.get(name)


def declared(prefix: str | None = None) -> dict[str, Operator]:
    """A snapshot of the declared operators by name, optionally those starting with ``prefix``.

    Only what is declared so far: :func:`specscope.compute.operators.list_operators`
    loads the built-ins and plugins first.

    Parameters
    ----------
    prefix : str, optional
        Keep only names starting with it (``"clicks."``: one plugin's).

    Returns
    -------
    dict of str to Operator
        A copy of the table.
    """
    with _lock:
        if prefix is None:
            return dict(_declared)
        return {n: op for n, op in _declared.items() if n.startswith(prefix)}
