"""The view controller: typed render requests for the spectrogram view, and their results.

Each view job is an immutable request with an id, run on the compute thread; a newer one
of the same kind supersedes an older one.

See docs/explanation/rooms/app.md.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from PyQt6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer, pyqtSignal
from specscope.app.qt.shell import Shell
from specscope.app.qt.worker import JobCallbacks, JobError, JobResult, TaskControl
from specscope.compute.errors import InputError, SpecscopeError
from specscope.compute.extensions import view_title
from specscope.compute.paths import cache_dir
from specscope.compute.pipeline import Pipeline
from specscope.compute.view import (
    DisplayImage,
    StackedEngine,
    TileEngine,
    auto_levels,
    build_ahead,
    difference_levels,
    plan_ahead,
    plugin_view,
    render_progressive,
)

__all__ = ["AHEAD_KIND", "AHEAD_VIEWS", "ENVELOPE_POINTS", "OVERVIEW_COLUMNS", "PLUGIN_VIEW_MAX_SAMPLES",
           "WAVEFORM_MAX_SAMPLES", "DetailRequest", "DetailResult", "EnvelopeRequest",
           "OverviewRequest", "PluginViewRequest", "PyramidRequest", "ViewController", "Waveform",
           "same_view"]

#: columns of the whole-recording background image
OVERVIEW_COLUMNS = 2048
#: the waveform row appears when the visible span holds at most this many samples
WAVEFORM_MAX_SAMPLES = 48_000
#: a plugin view (scalogram, CQT, ...) is computed for spans of at most this many samples
#: (it is computed in chunks, with progress and Cancel, at the view's width)
PLUGIN_VIEW_MAX_SAMPLES = 1 << 23
#: points of the overview's waveform envelope
ENVELOPE_POINTS = 4000
#: delay that gathers quick successive setting changes into one recomputation
RECOMPUTE_DELAY_MS = 150

_ids = itertools.count(1)


def _engine_key(s: Any) -> tuple:
    """The settings an engine is made for (other settings only re-render)."""
    return (s.stft, s.channel, s.processing, json.dumps(s.chain_steps))


def _next_id() -> int:
    return next(_ids)


@dataclass(frozen=True)
class ViewRequest:
    """A render request: an id, the engine it renders and the axis it is drawn on.

    Parameters
    ----------
    engine : TileEngine or StackedEngine
        The engine the image is rendered from.
    freq_scale : {"linear", "log", "mel"}, optional
        The frequency axis the image is drawn on.
    n_rows, id : int, optional
        Rows of a log or mel image (a linear one has the FFT's bins); the request's number.
    """

    #: the worker kind: a newer request of the same kind supersedes an older one
    KIND: ClassVar[str] = ""
    LABEL: ClassVar[str] = ""

    engine: Any = field(repr=False, compare=False)
    freq_scale: str = "linear"
    n_rows: int = 256
    id: int = field(default_factory=_next_id)


@dataclass(frozen=True)
class OverviewRequest(ViewRequest):
    """The whole recording at ``columns`` columns: the background of the view.

    Parameters
    ----------
    engine, freq_scale, n_rows, id
        As in :class:`ViewRequest`.
    columns : int, optional
        Columns of the image across the whole recording.
    reduce : {"mean", "max"}, optional
        How the frames of a column combine: their mean power or their peak (peak hold).
    """

    KIND: ClassVar[str] = "overview"
    LABEL: ClassVar[str] = "Computing overview"

    columns: int = OVERVIEW_COLUMNS
    reduce: str = "mean"


@dataclass(frozen=True)
class DetailRequest(ViewRequest):
    """The span ``t0 .. t1`` s at ``width`` columns (and its samples when zoomed in).

    Parameters
    ----------
    engine, freq_scale, n_rows, id
        As in :class:`ViewRequest`.
    t0, t1, width, reduce : float, float, int, str, optional
        The span (s), its columns (the plot's width), frames per column: ``"mean"`` or ``"max"``.
    representation, compare : str, optional
        ``"stft"`` or a plugin's image operator; ``"after"``, ``"before"`` or ``"difference"``.
    source, subtract : TileEngine or StackedEngine or None, optional
        The engine whose image is shown (a preview, or the one without the designer's
        filter), and the one subtracted in dB (``"difference"``).
    """

    KIND: ClassVar[str] = "detail"
    LABEL: ClassVar[str] = "Computing view"

    t0: float = 0.0
    t1: float = 0.0
    width: int = 1
    reduce: str = "mean"
    representation: str = "stft"
    compare: str = "after"
    source: Any = field(default=None, repr=False, compare=False)
    subtract: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class PluginViewRequest(DetailRequest):
    """A plugin's image operator over the span ``t0 .. t1`` s (``representation``).

    Parameters
    ----------
    engine, freq_scale, n_rows, id, t0, t1, width, reduce, representation, compare, source, subtract
        As in :class:`DetailRequest`; ``representation`` names the plugin's operator.
    params : str, optional
        The operator's parameters, as JSON.
    """

    #: the operator's parameters, as JSON
    params: str = "{}"


@dataclass(frozen=True)
class PyramidRequest(ViewRequest):
    """Tiles the views after ``t0 .. t1`` s at ``width`` columns are likely to need.

    Zoom-outs and pans are built in idle time; any view request cancels it.

    Parameters
    ----------
    engine, freq_scale, n_rows, id
        As in :class:`ViewRequest`.
    t0, t1 : float, optional
        The span now shown (s).
    width : int, optional
        Its columns (the plot's width in pixels).
    """

    KIND: ClassVar[str] = "pyramid"
    LABEL: ClassVar[str] = "Preparing zoom-outs"

    t0: float = 0.0
    t1: float = 0.0
    width: int = 1


#: the event that starts the rendering ahead once the pending paint is done
_AFTER_PAINT = QEvent.Type(QEvent.registerEventType())
#: the worker kind of views rendered before they are shown (:meth:`ViewController.prepare_views`)
AHEAD_KIND = "view-ahead"
#: views rendered ahead that are kept
AHEAD_VIEWS = 4
#: kinds of job the app runs on its own in idle time: no progress bar, no Cancel button
BACKGROUND_KINDS = frozenset({PyramidRequest.KIND, AHEAD_KIND})


def same_view(a: DetailRequest, b: DetailRequest) -> bool:
    """Whether ``a`` and ``b`` render the same image (spans equal to a millionth of them).

    Parameters
    ----------
    a, b : DetailRequest

    Returns
    -------
    bool
    """
    tol = 1e-6 * max(a.t1 - a.t0, 1e-12)
    return (type(a) is type(b) and a.engine is b.engine and a.source is b.source
            and a.subtract is b.subtract and a.compare == b.compare
            and a.representation == b.representation and a.freq_scale == b.freq_scale
            and (a.n_rows == b.n_rows or a.freq_scale == "linear")  # linear: the FFT bins
            and a.width == b.width and a.reduce == b.reduce
            and abs(a.t0 - b.t0) <= tol and abs(a.t1 - b.t1) <= tol)


@dataclass
class _Ahead:
    """A view rendered ahead: its request, its result once done, and the request of the
    view on screen that waits for it (a jump there came before it was done)."""

    request: DetailRequest
    result: JobResult | None = None
    wanted: DetailRequest | None = None
    #: the number of the job rendering it (None: waiting for the next job)
    job: int | None = None


@dataclass(frozen=True)
class EnvelopeRequest(ViewRequest):
    """The min/max envelope of the whole recording for the overview strip.

    Parameters
    ----------
    engine, freq_scale, n_rows, id
        As in :class:`ViewRequest`.
    points : int, optional
        Points of the envelope across the whole recording.
    """

    KIND: ClassVar[str] = "envelope"
    LABEL: ClassVar[str] = "Reading waveform"

    points: int = ENVELOPE_POINTS


@dataclass(frozen=True)
class Waveform:
    """Samples of the visible span, for the waveform row.

    Parameters
    ----------
    t0 : float
        Time of the first sample (s).
    fs : float
        Sample rate (Hz).
    samples : numpy.ndarray
        The samples of the span.
    """

    t0: float
    fs: float
    samples: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class DetailResult:
    """What a detail job returns: the image, and the samples when zoomed in.

    Parameters
    ----------
    image, waveform : DisplayImage, Waveform or None
        The image (dB); the samples when the span holds at most :data:`WAVEFORM_MAX_SAMPLES`.
    levels : tuple or None, optional
        Levels fitted on the compute thread, ``("level" or "difference", (low, high))`` dB.
    """

    image: DisplayImage
    waveform: Waveform | None = None
    levels: tuple[str, tuple[float, float]] | None = None


class ViewController(QObject):
    """Engines and render requests of the spectrogram view of a :class:`Shell`.

    Parameters
    ----------
    shell : Shell
        The window: document, settings, worker, view and messages.
    parent : QObject or None, optional
        The Qt parent.

    Signals
    -------
    imageShown()
        A computed overview and detail are both on screen.
    levelsFitted(float, float)
        The dB range was fitted to the image.
    """

    imageShown = pyqtSignal()
    levelsFitted = pyqtSignal(float, float)

    def __init__(self, shell: Shell, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.view = shell.view
        self.engine: TileEngine | StackedEngine | None = None
        #: the engine of the "before" view and the difference: without the designer's
        #: filters while they are applied, else without the region edits
        self.base_engine: TileEngine | StackedEngine | None = None
        #: the engine of a filter being dragged: only the visible span is re-filtered
        self.preview_engine: TileEngine | StackedEngine | None = None
        self.last_image: DisplayImage | None = None
        self.last_request: DetailRequest | None = None
        #: the representation of the image on screen ("" before the first)
        self.shown_representation = ""
        #: why the view shows the recording without its processing ("" when it does not)
        self.view_note = ""
        #: why the document's settings cannot be shown (the core's exception), or None
        self.error: InputError | None = None
        self.levels_set = False
        self._engine_key: tuple | None = None
        self._overview_ready = False
        self._viewport: tuple[float, float, int] | None = None
        self._aheads: list[_Ahead] = []  # views rendered ahead, the latest asked for last
        self._ahead_job = 0  # the number of the last job rendering ahead
        self._ahead_running = False
        self._ahead_posted = False  # a start of the rendering ahead waits for the paint
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RECOMPUTE_DELAY_MS)
        self._timer.timeout.connect(self.request_spectrogram)
        self._handlers: dict[type, Callable[[Any, JobResult], None]] = {
            OverviewRequest: self._overview_done,
            DetailRequest: self._detail_done,
            PluginViewRequest: self._detail_done,
            EnvelopeRequest: self._envelope_done,
            PyramidRequest: lambda request, result: None,
        }

    # -- engines ------------------------------------------------------------------
    def engine_for(self, steps: list[dict]) -> TileEngine | StackedEngine:
        """A tile engine applying ``steps`` (cheap: nothing is computed yet)."""
        doc = self.shell.document
        assert doc is not None
        rec, s = doc.recording, doc.settings
        block_fn = None
        if steps:
            try:
                block_fn = Pipeline.from_steps(steps).block_function(rec.sample_rate,
                                                                     rec.is_complex)
            except SpecscopeError as exc:
                self.view_note = (f"the view shows the recording without processing ({exc}); "
                                  "the export applies it")
                self.shell.show_message(self.view_note, 15000)
        channels = range(rec.n_channels) if s.channel < 0 else [s.channel]
        engines = [TileEngine(rec, nfft=s.stft.nfft, hop=s.stft.hop, window=s.stft.window,
                              scaling=s.stft.scaling, channel=c, pipeline=block_fn,
                              disk_cache=cache_dir("tiles")) for c in channels]
        return StackedEngine(engines) if s.channel < 0 else engines[0]

    def _make_engines(self) -> bool:
        """The engines of the document's settings: with all processing, and for
        before/difference without the designer's filters (else without the region edits)."""
        s = self.shell.document.settings
        self.view_note = ""
        self.error = None
        try:
            self.engine = self.engine_for(s.steps)
            self.base_engine = self.engine_for(s.before_steps) if s.compares else self.engine
        except InputError as exc:
            self.engine = None
            self.error = exc
            self.shell.show_error(str(exc), dialog=False)
            return False
        return True

    def preview(self, steps: list[dict] | None) -> None:
        """Show the visible span through ``steps`` (a filter being dragged); None ends it.

        Raises
        ------
        SpecscopeError
            When the steps cannot be applied (the preview is left as it was).
        """
        if steps is None:
            self.preview_engine = None
            return
        self.preview_engine = self.engine_for(steps)
        self.request_detail()

    # -- requests -----------------------------------------------------------------
    def schedule(self) -> None:
        """Recompute shortly (quick successive changes give one recomputation)."""
        self._timer.start()

    def recompute_pending(self) -> bool:
        """Whether a scheduled recomputation has not started yet."""
        return self._timer.isActive()

    def up_to_date(self) -> bool:
        """Whether the engines are those of the current settings and nothing is scheduled."""
        doc = self.shell.document
        return (doc is not None and self.engine is not None and not self._timer.isActive()
                and self._engine_key == _engine_key(doc.settings))

    def document_opened(self) -> bool:
        """Start over for a newly opened document; False when it cannot be shown."""
        self.engine = self.preview_engine = None
        self._engine_key = None
        self.levels_set = False
        self.last_image = None
        self.shown_representation = ""
        self.view.set_caption("")
        self.view.clear_image()
        self.view.overview.clear_envelope()
        self.request_spectrogram()
        if self.engine is None:
            return False
        self.set_extent()
        self.view.reset_view()
        self.view.overview.set_region(0.0, self.engine.duration)
        self._submit(EnvelopeRequest(self.engine), self._envelope_job)
        return True

    def request_spectrogram(self) -> None:
        """(Re)compute the background of the whole recording, then the visible detail."""
        doc = self.shell.document
        if doc is None:
            return
        s = doc.settings
        key = _engine_key(s)
        if self.engine is None or self._engine_key != key:
            was_stacked = isinstance(self.engine, StackedEngine)
            if not self._make_engines():
                return
            self._engine_key = key
            if isinstance(self.engine, StackedEngine) != was_stacked:
                t0, t1, _, _ = self.view.visible_range()
                self.set_extent()
                self.view.reset_view()
                if t1 > t0 and self.view.image_data is not None:
                    self.view.set_time_range(t0, t1)
        if self.shell.settings.representation != "stft":  # a plugin view: the visible span
            self.view.clear_background()
            self._overview_ready = True
            self.request_detail()
            return
        engine = self.engine
        self._overview_ready = False
        self.last_image = None  # imageShown waits for the new detail too
        request = OverviewRequest(engine, self.shell.settings.freq_scale, self.n_rows(),
                                  columns=min(OVERVIEW_COLUMNS, max(1, engine.n_frames)),
                                  reduce=s.reduce)
        self._submit(request, self._overview_job)
        self.request_detail()

    def set_viewport(self, t0: float, t1: float, width: int) -> None:
        """The view shows ``t0 .. t1`` s on ``width`` pixels: render that."""
        self.view.overview.set_region(t0, t1)
        self._viewport = (t0, t1, width)
        self.request_detail()

    def request_detail(self) -> None:
        """Render the visible span (or the plugin view of it)."""
        if self.engine is None or self._viewport is None or self.shell.document is None:
            return
        s = self.shell.settings
        t0, t1, w = self._viewport
        t0, t1 = max(t0, 0.0), min(t1, self.engine.duration)
        if not t1 > t0:
            return
        common = {"freq_scale": s.freq_scale, "n_rows": self.n_rows(), "t0": t0, "t1": t1,
                  "width": w, "reduce": self.shell.document.settings.reduce}
        if s.representation != "stft":
            fs = self.engine.fs
            if (t1 - t0) * fs > PLUGIN_VIEW_MAX_SAMPLES:
                self.view.set_caption(f"{view_title(s.representation)}: zoom in to at most "
                                      f"{PLUGIN_VIEW_MAX_SAMPLES / fs:.0f} s to compute it")
                self.shell.show_message(f"{view_title(s.representation)}: zoom in to at most "
                                        f"{PLUGIN_VIEW_MAX_SAMPLES / fs:.0f} s to compute "
                                        "this view", 8000)
                return
            request = PluginViewRequest(self.engine, representation=s.representation,
                                        params=s.view_params, **common)
            self.last_request = request
            self._announce(s.representation)
            self._submit(request, self._plugin_job,
                         label=f"Computing {view_title(s.representation)}")
            return
        request = self._detail_request(common)
        self.last_request = request
        if self.shown_representation not in ("", "stft"):
            self._announce("stft")
        if not self._take_ahead(request):
            self._submit(request, self._detail_job)

    def _detail_request(self, common: dict) -> DetailRequest:
        s = self.shell.settings
        compare = s.compare if s.compares else "after"
        source, subtract = self.preview_engine or self.engine, None
        if compare == "before":
            source = self.base_engine
        elif compare == "difference":
            subtract = self.base_engine
        return DetailRequest(self.engine, compare=compare, source=source, subtract=subtract,
                             **common)

    # -- views rendered ahead -------------------------------------------------------
    def prepare_views(self, spans: list[tuple[float, float]]) -> bool:
        """Render the spans ``(t0, t1)`` s at the view's width ahead, in idle time, in order
        (review's next detections); False when none can be prepared (a plugin view, no engine).
        The last :data:`AHEAD_VIEWS` views asked for are kept (docs/explanation/rooms/app.md)."""
        if (self.engine is None or self.shell.document is None
                or self.shell.settings.representation != "stft"):
            return False
        s = self.shell.settings
        common = {"freq_scale": s.freq_scale, "n_rows": self.n_rows(),
                  "width": self.view.plot_size_px()[0],
                  "reduce": self.shell.document.settings.reduce}
        valid = False
        for t0, t1 in spans:
            t0, t1 = max(t0, 0.0), min(t1, self.engine.duration)
            if not t1 > t0:
                continue
            valid = True
            request = self._detail_request({**common, "t0": t0, "t1": t1})
            ahead = self._ahead_for(request)
            if ahead is None:
                ahead = _Ahead(request)
            else:
                self._aheads.remove(ahead)
            self._aheads.append(ahead)  # the latest asked for last
        self._aheads = self._aheads[-AHEAD_VIEWS:]
        if not self._ahead_posted:
            # posted below the repaint's priority: delivered once the window has painted
            self._ahead_posted = True
            QCoreApplication.postEvent(self, QEvent(_AFTER_PAINT),
                                       Qt.EventPriority.LowEventPriority.value - 1)
        return valid

    def event(self, event: QEvent) -> bool:
        if event.type() == _AFTER_PAINT:
            self._ahead_posted = False
            self._render_ahead()
            return True
        return super().event(event)

    def prepare_view(self, t0: float, t1: float) -> bool:
        """:meth:`prepare_views` of one span."""
        return self.prepare_views([(t0, t1)])

    def _render_ahead(self) -> None:
        """Start the job rendering the views asked for ahead that no job has taken."""
        if self._ahead_running:
            return  # the next one starts when it ends
        todo = [a for a in self._aheads if a.result is None and a.job is None]
        if not todo:
            return
        job = self._ahead_job = self._ahead_job + 1
        for ahead in todo:
            ahead.job = job
        requests = [ahead.request for ahead in todo]

        def render(control: TaskControl) -> None:
            for k, request in enumerate(requests):
                t = time.perf_counter()
                result = self._render_detail(request, control, None)
                control.partial((k, result, time.perf_counter() - t))

        self._ahead_running = True
        self.shell.worker.submit(
            AHEAD_KIND, render, label="Preparing the next views",
            callbacks=JobCallbacks(done=lambda result: self._ahead_ended(job),
                                   partial=lambda value: self._ahead_rendered(todo, value),
                                   failed=lambda error: self._ahead_ended(job),
                                   cancelled=lambda: self._ahead_ended(job)))

    def _ahead_for(self, request: DetailRequest) -> _Ahead | None:
        return next((a for a in self._aheads if same_view(a.request, request)), None)

    def _take_ahead(self, request: DetailRequest) -> bool:
        """Serve ``request`` from a view rendered ahead when it is one."""
        ahead = self._ahead_for(request)
        if ahead is None:
            if self._ahead_pending():
                self.shell.worker.cancel(AHEAD_KIND)  # it would only delay this one
            return False
        # an older view's image must not come after this one; the building ahead stops
        self.shell.worker.cancel(DetailRequest.KIND)
        self.shell.worker.cancel(PyramidRequest.KIND)
        if ahead.result is None:
            ahead.wanted = request  # shown when its job hands it over
            self._render_ahead()  # (its job starts now if it was waiting for a paint)
        else:
            self._dispatch(request, ahead.result)
        return True

    def _ahead_pending(self) -> bool:
        """Whether a view asked for ahead is still to be rendered."""
        return any(a.result is None for a in self._aheads)

    def _ahead_rendered(self, todo: list[_Ahead], value: tuple) -> None:
        k, detail, seconds = value
        ahead = todo[k]
        ahead.result = JobResult(detail, 0, "specscope-compute", seconds)
        wanted, ahead.wanted = ahead.wanted, None
        if wanted is not None and wanted is self.last_request:
            self._dispatch(wanted, ahead.result)

    def _ahead_ended(self, job: int) -> None:
        """A job rendering ahead ended: the views it did not finish (cancelled, failed) are
        dropped, one a request waits for rendered the usual way; the next job starts."""
        self._ahead_running = False
        lost = [a for a in self._aheads if a.result is None and a.job == job]
        self._aheads = [a for a in self._aheads if a not in lost]
        for ahead in lost:
            if ahead.wanted is not None and ahead.wanted is self.last_request:
                self._submit(ahead.wanted, self._detail_job)
        self._render_ahead()

    def _announce(self, coming: str) -> None:
        """The caption while ``coming`` is computed: what the image shows until then."""
        shown = self.shown_representation
        if not shown:
            text = f"Computing {view_title(coming)}…"
        elif shown == coming:
            text = f"{view_title(shown)} · updating…"
        else:
            text = f"Showing {view_title(shown)} · computing {view_title(coming)}…"
        self.view.set_caption(text)

    def _submit(self, request: ViewRequest, job: Callable[[ViewRequest, TaskControl], Any],
                label: str = "") -> int:
        if request.KIND != PyramidRequest.KIND:
            # what the user asked for comes first: the building ahead stops within a block
            self.shell.worker.cancel(PyramidRequest.KIND)
        label = label or request.LABEL
        return self.shell.worker.submit(
            request.KIND, lambda control: job(request, control), label=label,
            callbacks=JobCallbacks(done=lambda result: self._dispatch(request, result),
                                   partial=lambda value: self._partial(request, value),
                                   failed=lambda error: self._failed(request, label, error)))

    # -- jobs (compute thread) --------------------------------------------------------
    @staticmethod
    def _overview_job(r: OverviewRequest, control: TaskControl) -> DisplayImage:
        return render_progressive(r.engine, 0.0, r.engine.duration, r.columns, r.reduce,
                                  freq_scale=r.freq_scale, n_rows=r.n_rows,
                                  partial=control.partial, progress=control.progress,
                                  cancelled=control.cancelled)

    @staticmethod
    def _detail_job(r: DetailRequest, control: TaskControl) -> DetailResult:
        return ViewController._render_detail(r, control, control.partial)

    @staticmethod
    def _render_detail(r: DetailRequest, control: TaskControl,
                       partial: Callable[[DisplayImage], None] | None) -> DetailResult:
        engine, shown, other = r.engine, r.source, r.subtract
        preview = shown is not engine and r.compare == "after"
        kw = {"freq_scale": r.freq_scale, "n_rows": r.n_rows, "cancelled": control.cancelled}
        img = render_progressive(shown, r.t0, r.t1, r.width, r.reduce,
                                 partial=None if (preview or other is not None) else partial,
                                 progress=control.progress, **kw)
        if other is not None:  # after minus before, in dB
            before = render_progressive(other, r.t0, r.t1, r.width, r.reduce, **kw)
            img = dataclasses.replace(img, db=img.db - before.db)
        s0, s1 = int(r.t0 * engine.fs), int(np.ceil(r.t1 * engine.fs)) + 1
        wave = None
        if s1 - s0 <= WAVEFORM_MAX_SAMPLES:  # zoomed in to samples
            wave = Waveform(s0 / engine.fs, engine.fs,
                            engine.recording.read(s0, s1, engine.channel)[:, 0])
        levels = ("difference", difference_levels(img.db)) if other is not None else None
        return DetailResult(img, wave, levels)

    @staticmethod
    def _pyramid_job(r: PyramidRequest, control: TaskControl) -> int:
        engines = getattr(r.engine, "engines", [r.engine])  # stacked: every channel's
        done = 0
        for n, engine in enumerate(engines):
            plan = plan_ahead(engine, r.t0, r.t1, r.width)
            done += build_ahead(engine, plan, cancelled=control.cancelled,
                                progress=lambda f, n=n: control.progress(
                                    (n + f) / len(engines)))
        control.check()  # stopped by a view request: the job ends as cancelled
        return done

    def prepare_ahead(self, request: DetailRequest) -> bool:
        """After ``request``'s image is shown: build the tiles of its likely next views
        (zoom-outs, pans) on the compute thread; False when none are missing."""
        engine = request.engine
        engines = getattr(engine, "engines", [engine])
        if not any(plan_ahead(e, request.t0, request.t1, request.width) for e in engines):
            return False
        self._submit(PyramidRequest(engine, request.freq_scale, request.n_rows, t0=request.t0,
                                    t1=request.t1, width=request.width), self._pyramid_job)
        return True

    @staticmethod
    def _plugin_job(r: PluginViewRequest, control: TaskControl) -> DetailResult:
        # the span through the processing, in chunks, at most one column per pixel
        engine, fs = r.engine, r.engine.fs
        img = plugin_view(r.representation, engine.read_processed, engine.recording.n_samples,
                          fs, int(r.t0 * fs), int(np.ceil(r.t1 * fs)), json.loads(r.params),
                          columns=r.width, freq_scale=r.freq_scale, n_rows=r.n_rows,
                          progress=control.progress, cancelled=control.cancelled)
        # a plugin view has no background to fit the levels to: fitted here, off the GUI
        return DetailResult(img, levels=("level", auto_levels(img.db)))

    @staticmethod
    def _envelope_job(r: EnvelopeRequest, control: TaskControl) -> tuple:
        return r.engine.envelope(r.points, cancelled=control.cancelled,
                                 progress=control.progress)

    # -- results (GUI thread) ---------------------------------------------------------
    def is_current(self, request: ViewRequest) -> bool:
        """Whether a result of ``request`` still fits the view on screen."""
        s = self.shell.settings
        rep = request.representation if isinstance(request, DetailRequest) else "stft"
        return (self.engine is not None and request.engine is self.engine
                and request.freq_scale == s.freq_scale and rep == s.representation)

    def _dispatch(self, request: ViewRequest, result: JobResult) -> None:
        self._handlers[type(request)](request, result)

    def _failed(self, request: ViewRequest, label: str, error: JobError) -> None:
        """A view job failed: one line naming it and the problem on the status line (the
        image on screen stays; the announcement of the coming one goes)."""
        text = (str(error.message).strip().splitlines() or [""])[0]
        text = text or type(error.exception).__name__
        # a bug's and an out-of-memory message name the job already; bad input's does not
        named = error.is_bug or isinstance(error.exception, MemoryError)
        self.shell.show_error(text if named else f"{label}: {text}", dialog=False)
        if request is self.last_request:
            shown = self.shown_representation
            self.view.set_caption("" if shown in ("", "stft") else view_title(shown))

    def _partial(self, request: ViewRequest, value: Any) -> None:
        if isinstance(request, OverviewRequest):
            self._show_overview(value)
        elif isinstance(request, DetailRequest) and self.is_current(request):
            self.view.set_image(value.db, value.column_edges, value.frequency_edges)

    def _overview_done(self, request: OverviewRequest, result: JobResult) -> None:
        self._show_overview(result.value)
        self._overview_ready = True
        self._maybe_image_shown()

    def _detail_done(self, request: DetailRequest, result: JobResult) -> None:
        if not self.is_current(request):
            return  # for an engine or axis that has been replaced
        img, wave = result.value.image, result.value.waveform
        self.view.set_image(img.db, img.column_edges, img.frequency_edges)
        self.last_image = img
        self.shown_representation = request.representation
        self.view.set_caption("" if request.representation == "stft"
                              else view_title(request.representation))
        differs = self.shell.settings.shows_difference
        if differs:
            self.view.clear_background()  # another quantity: dB of after over before
        # before and after share their levels; the difference keeps its own symmetric ones
        quantity = "difference" if differs else "level"
        kept = self.view.set_quantity(quantity)
        if not self.levels_set or not kept:
            fitted = result.value.levels
            if fitted is not None and fitted[0] == quantity:  # fitted on the compute thread
                self.view.set_levels(*fitted[1])
                self.levelsFitted.emit(*fitted[1])
            else:
                self.auto_levels()
            self.levels_set = True
        if wave is None:
            self.view.set_waveform(0.0, 1.0, None)
        else:
            self.view.set_waveform(wave.t0, wave.fs, wave.samples)
        agg = (f", {img.frames_per_column:.1f} frames/column ({img.reduce}, "
               f"level {img.level})" if img.frames_per_column > 1.0 else "")
        missing = self.view.missing_note()
        self.shell.show_message(f"{missing + '. ' if missing else ''}{img.db.shape[1]} columns "
                                f"× {img.db.shape[0]} bins in {result.seconds * 1000:.0f} ms"
                                f"{agg}", 15000 if missing else 5000, error=bool(missing))
        self._maybe_image_shown()
        if (type(request) is DetailRequest and request.source is self.engine
                and request is self.last_request):
            # the shown engine's next views, in idle time; unless a view is being rendered
            # ahead (review's next detection): that is where the person goes next, and a
            # pyramid block still running when the key comes would hold it back
            if not self._ahead_pending():
                self.prepare_ahead(request)

    def _envelope_done(self, request: EnvelopeRequest, result: JobResult) -> None:
        self.view.overview.set_envelope(*result.value)
        missing = self.view.missing_note()
        if missing:
            self.shell.show_message(missing, 30000, error=True)

    def _show_overview(self, img: DisplayImage) -> None:
        if self.shell.settings.shows_difference:
            return  # the difference view has no whole-recording background
        self.view.set_background(img.db, img.column_edges, img.frequency_edges)
        if not self.levels_set and not img.preview:
            self.auto_levels()
            self.levels_set = True

    def _maybe_image_shown(self) -> None:
        if self._overview_ready and self.last_image is not None:
            self.imageShown.emit()

    # -- display ------------------------------------------------------------------
    def auto_levels(self) -> None:
        """Fit the dB range to the image."""
        lo, hi = self.view.auto_levels()
        self.levelsFitted.emit(lo, hi)

    def n_rows(self) -> int:
        """Rows of a log or mel image: the plot's height in pixels."""
        return min(1024, max(64, self.view.plot_size_px()[1]))

    def set_extent(self) -> None:
        """The view's axes from the engine: duration, frequency range, stacked bands."""
        e = self.engine
        if e is None:
            return
        if isinstance(e, StackedEngine):
            self.view.set_stack(e.n_channels, e.f0, e.band, e.span, e.split)
        else:
            self.view.set_stack(0, 0.0, 0.0, 0.0, None)
        df = e.fs / e.params.nfft
        f_edges = e.freq_axis()[1]
        f0, f1 = float(f_edges[0]), float(f_edges[-1])
        scale = self.shell.settings.freq_scale
        if scale == "log":
            f0 = df / 2
        elif scale == "mel":
            f0 = 0.0
        self.view.set_extent(0.0, e.duration, f0, f1,
                             min_dt=4 * e.params.hop / e.fs, min_df=4 * df)

    def rescale(self, t0: float, t1: float) -> None:
        """The frequency axis changed: new extent, the time span ``t0 .. t1``, re-rendered."""
        if self.engine is None:
            return
        self.set_extent()
        self.view.reset_view()
        if t1 > t0:
            self.view.set_time_range(t0, t1)
        self.request_spectrogram()
