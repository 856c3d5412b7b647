"""The live session: a source streamed through a pipeline on a processing thread.

The pieces, from the microphone to the screen::

    Source (its own thread or the audio callback)
        --put--> BlockRing (bounded; never blocks a real-time source, counts drops)
        --get--> LiveSession processing thread: the Pipeline's stages with carried
                 state (the same stage objects as Pipeline.run), per-block latency
        --append--> History (frames or samples; memory budget, spills to disk)
                 and optionally LiveRecorder (HDF5, SWMR, flushed per chunk)
    GUI thread (a timer): session.frames_since(n) / session.view(width) -- reads only.
        --put--> taps (session.tap()): the processed signal, before any spectrogram,
                 for a monitor (bounded rings; a full one drops blocks)

Nothing here calls back into the GUI: a GUI polls.  Every read method of
:class:`LiveSession` is safe from any thread.

A session runs on NumPy from start to stop: filter state is not
interchangeable between scipy and cupyx, so a stream never changes backend.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Self

import numpy as np

from ..errors import InputError, RecordingError
from ..files import recording_files, refuse_overwriting_inputs
from .history import DEFAULT_DISK_BYTES, DEFAULT_HISTORY_BYTES, History
from .processor import BlockProcessor
from .recorder import LiveRecorder
from .ring import DEFAULT_RING_BLOCKS, BlockRing, ring_blocks_for
from .source_registry import open_source
from .sources import FileSource, Source
from .stats import LatencyStats, LiveStats

__all__ = ["LiveSession"]


class LiveSession:
    """A source streamed through a pipeline on a processing thread, with history.

    Parameters
    ----------
    source : Source or str
        A source, or a spec for :func:`open_source`.
    pipeline : Pipeline, optional
        The processing; without one the output is the input signal.
    record : path, optional
        Record the input samples (and spectrogram frames) to this HDF5 file
        (see :class:`LiveRecorder`).
    history_bytes, disk_bytes, spill_dir
        The history's budgets (see :class:`History`).
    history_dtype
        float32 (default, the display path) or float64 (exact pipeline output).
    ring_blocks : int, optional
        Capacity of the ring between source and processing (default: 2 s of
        signal, at least 64 blocks; see :func:`~.ring.ring_blocks_for`).

    Notes
    -----
    Thread model: the source delivers on its thread, the session processes on
    its own; every public method may be called from any thread (the GUI calls
    ``frames_since`` / ``view`` from a timer).  Nothing calls back into the
    caller.
    """

    def __init__(self, source: Source | str, pipeline: Any = None, *,
                 record: str | os.PathLike[str] | None = None,
                 history_bytes: int = DEFAULT_HISTORY_BYTES,
                 disk_bytes: int = DEFAULT_DISK_BYTES,
                 spill_dir: str | os.PathLike[str] | None = None,
                 history_dtype: Any = np.float32,
                 ring_blocks: int | None = None,
                 record_flush_seconds: float = 0.5) -> None:
        self.source = open_source(source) if isinstance(source, str) else source
        src = self.source
        self.pipeline = pipeline
        self.bound = None
        if pipeline is not None:
            self.bound = pipeline.bind(src.sample_rate, src.is_complex)
            if not self.bound.streams:
                bad = next(s for s in self.bound.stages if not s.streams)
                raise bad.step.error("needs the whole signal at once, so it cannot run live")
        self._proc = BlockProcessor(self.bound, src.n_channels) if self.bound else None
        #: "spectrogram" (frames) or "signal" (samples)
        self.kind = self.bound.kind if self.bound is not None else "signal"
        self.sample_rate = src.sample_rate
        self.n_channels = src.n_channels
        stft = self.bound.stft if self.bound is not None else None
        #: STFT parameters of the frames, or None
        self.stft = stft
        #: bin frequencies in Hz (spectrogram), else None
        self.frequencies = (self.bound.frequencies(src.center_frequency)
                            if stft is not None else None)
        if stft is not None:
            item_shape: tuple[int, ...] = (src.n_channels, int(self.frequencies.size))
            dtype = np.dtype(history_dtype)
        else:
            out_complex = src.is_complex or (self.bound is not None and self.bound.complex_output)
            item_shape = (src.n_channels,)
            dtype = np.result_type(np.dtype(history_dtype),
                                   np.complex64 if out_complex else np.float32)
        self.history = History(item_shape, dtype, memory_bytes=history_bytes,
                               disk_bytes=disk_bytes, spill_dir=spill_dir)
        self.ring = BlockRing(ring_blocks if ring_blocks is not None
                              else ring_blocks_for(src.sample_rate, src.block))
        self.latency = LatencyStats()
        self.delay = LatencyStats()
        self.blocks_processed = 0
        self.samples_processed = 0
        self.error: BaseException | None = None
        self._record_path = record
        self._record_flush = record_flush_seconds
        self.recorder: LiveRecorder | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._done = threading.Event()
        self._paused_at: int | None = None
        self._view_lock = threading.Lock()
        self._t_start: float | None = None
        self._t_end: float | None = None
        self._taps: tuple[BlockRing, ...] = ()  # replaced whole: read without a lock

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> LiveSession:
        """Open the recording (if any), start processing, then the source."""
        if self._thread is not None:
            raise InputError("a live session can be started once")
        if self._record_path is not None:
            # never record over what is played, nor over any file read (a pipeline)
            played = (recording_files(self.source.recording)
                      if isinstance(self.source, FileSource) else [])
            refuse_overwriting_inputs([self._record_path], played)
            attrs: dict[str, Any] = {"source": self.source.name,
                                     "block": int(self.source.block)}
            if self.pipeline is not None:
                attrs["pipeline"] = self.pipeline.to_json(None)
            if self.stft is not None:
                attrs.update(nfft=int(self.stft.nfft), hop=int(self.stft.hop),
                             scaling=self.stft.scaling)
            self.recorder = LiveRecorder(self._record_path, sample_rate=self.sample_rate,
                                         n_channels=self.n_channels,
                                         is_complex=self.source.is_complex,
                                         frequencies=self.frequencies, attrs=attrs,
                                         flush_seconds=self._record_flush)
        self._t_start = time.perf_counter()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="specscope-live-process")
        self._thread.start()
        try:
            self.source.start(self.ring)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 10.0) -> LiveStats:
        """Stop the source, process what is queued, finalise the recording; return stats."""
        self.source.stop()
        self.ring.close()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():  # processing stuck: give up on the queue
                self._stop.set()
                self._thread.join(timeout)
        self._finish_recording()
        return self.stats()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the source ended and everything is processed; False on timeout."""
        return self._done.wait(timeout)

    def close(self) -> None:
        """:meth:`stop`, then free the history (and its spill folder)."""
        self.stop()
        self.history.close()

    def __enter__(self) -> Self:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        """True from :meth:`start` until the stream is processed to its end or stopped."""
        return self._thread is not None and not self._done.is_set()

    def _finish_recording(self) -> None:
        rec, self.recorder = self.recorder, None
        if rec is not None:
            try:
                rec.close(blocks_dropped=self.ring.dropped_blocks)
            except RecordingError as exc:
                if self.error is None:
                    self.error = exc

    def _run(self) -> None:
        try:
            proc, hist, lat, ring = self._proc, self.history, self.latency, self.ring
            while not self._stop.is_set():
                item = ring.get(0.1)
                if item is None:
                    if ring.closed and len(ring) == 0:
                        break
                    continue
                t0 = time.perf_counter()
                block, puts = self._take_backlog(item)
                out = proc.push(block, False) if proc is not None else block
                if out.shape[0]:
                    hist.append(out)
                taps = self._taps
                if taps:
                    sig = block if proc is None else proc.signal.T
                    sig = np.array(sig, copy=True)  # a stage may reuse its buffers
                    for tap in taps:
                        tap.put(sig)
                t1 = time.perf_counter()
                share = (t1 - t0) / len(puts)  # the processing time of each block taken
                for t_put in puts:
                    lat.add(share)
                    self.delay.add(t1 - t_put)
                self.blocks_processed += len(puts)
                self.samples_processed += block.shape[0]
                if self.recorder is not None:
                    frames = np.array(out, copy=True) if self.stft is not None else None
                    self.recorder.append(block, frames)
            if proc is not None and self.bound.lookahead and not self._stop.is_set():
                # the source ended: let centred (zero-phase) steps emit their tail
                empty = np.zeros((0, self.n_channels), np.result_type(
                    np.float32, np.complex64 if self.source.is_complex else np.float32))
                out = proc.push(empty, True)
                if out.shape[0]:
                    hist.append(out)
                    if self.recorder is not None:
                        self.recorder.append(empty, out if self.stft is not None else None)
        except BaseException as exc:  # noqa: BLE001 -- surfaced by stats(), raise_error()
            self.error = exc
            self.source.stop()
        finally:
            self._t_end = time.perf_counter()
            for tap in self._taps:  # monitors hear the end of the stream
                tap.close()
            self._done.set()

    #: the most blocks processed in one go when the ring holds a backlog
    MAX_BACKLOG_BLOCKS = 64
    #: ... and the most samples
    MAX_BACKLOG_SAMPLES = 1 << 16

    def _take_backlog(self, item: tuple[np.ndarray, float]) -> tuple[np.ndarray, list[float]]:
        """``item``'s block and, after a stall, the blocks waiting behind it, joined.

        When the processing thread was held up (the machine busy, a garbage
        collection in another thread), the blocks that piled up in the ring are
        processed in one call: the output is the same (every stage carries its
        state across blocks of any size) and the backlog drains several times
        faster than block by block, so the ring does not fill.
        """
        block, t_put = item
        ring = self.ring
        if len(ring) == 0:
            return block, [t_put]
        blocks, puts, n = [block], [t_put], block.shape[0]
        while (len(ring) and len(blocks) < self.MAX_BACKLOG_BLOCKS
               and n < self.MAX_BACKLOG_SAMPLES):
            nxt = ring.get(0)
            if nxt is None:
                break
            blocks.append(nxt[0])
            puts.append(nxt[1])
            n += nxt[0].shape[0]
        return (np.concatenate(blocks) if len(blocks) > 1 else block), puts

    def raise_error(self) -> None:
        """Re-raise an error the processing thread met (it stops the session)."""
        if self.error is not None:
            raise self.error

    # -- taps: the processed signal for a monitor ----------------------------------------
    def tap(self, capacity: int = DEFAULT_RING_BLOCKS) -> BlockRing:
        """A ring receiving every processed block from now on, for a monitor.

        Each item is ``(samples, put time)`` with samples shaped (n, channels):
        the pipeline's time-domain output (the signal before its spectrogram;
        the input itself without a pipeline).  A full ring drops blocks, never
        the session.  The ring is closed when the stream ends or at :meth:`untap`.
        """
        ring = BlockRing(capacity)
        if self._done.is_set():
            ring.close()
        self._taps = (*self._taps, ring)
        return ring

    def untap(self, ring: BlockRing) -> None:
        """Stop feeding ``ring`` and close it."""
        self._taps = tuple(t for t in self._taps if t is not ring)
        ring.close()

    # -- view: pause, scroll, read -----------------------------------------------------------
    @property
    def frame_count(self) -> int:
        """Items (frames or samples) produced so far."""
        return self.history.end

    @property
    def history_range(self) -> tuple[int, int]:
        """``(first, end)`` indices still held (in memory or spilled)."""
        return self.history.start, self.history.end

    @property
    def paused(self) -> bool:
        """True while the view is frozen (paused or scrolled back)."""
        return self._paused_at is not None

    def pause(self) -> None:
        """Freeze the view at the current end; capture and processing go on."""
        with self._view_lock:
            if self._paused_at is None:
                self._paused_at = self.history.end

    def resume(self) -> None:
        """Follow the live end again."""
        with self._view_lock:
            self._paused_at = None

    def scroll(self, items: int) -> int:
        """Move the frozen view by ``items`` (negative: back in time); pauses; new view end."""
        with self._view_lock:
            end = self.history.end if self._paused_at is None else self._paused_at
            first, last = self.history.start, self.history.end
            self._paused_at = int(min(max(end + int(items), first), last))
            return self._paused_at

    def scroll_to(self, end: int) -> int:
        """Freeze the view so that it ends at item ``end`` (clamped); the new view end."""
        with self._view_lock:
            self._paused_at = int(min(max(int(end), self.history.start), self.history.end))
            return self._paused_at

    @property
    def view_end(self) -> int:
        """End of what the view shows: the live end, or where it was paused/scrolled."""
        p = self._paused_at
        return self.history.end if p is None else max(p, self.history.start)

    def read(self, start: int, stop: int, channel: int | None = None) -> tuple[int, np.ndarray]:
        """Items ``start:stop`` still held: ``(first, array)``.

        Frames are shaped (n, channels, frequencies), or with ``channel``
        (n, frequencies), C-contiguous; samples (n, channels) or (n,).
        """
        first, data = self.history.read(start, stop)
        if channel is not None:
            if not 0 <= channel < self.n_channels:
                raise InputError(f"channel={channel} must be in [0, {self.n_channels - 1}]")
            data = np.ascontiguousarray(data[:, channel])
        return first, data

    def frames_since(self, n: int, channel: int | None = None,
                     limit: int | None = None) -> tuple[int, np.ndarray]:
        """What the view gained since item ``n``: ``(first, array)``, up to :attr:`view_end`.

        The GUI keeps ``n = first + len(array)`` for its next call.  ``first``
        is larger than ``n`` when older items were forgotten or when
        ``limit`` (the most items wanted, e.g. the waterfall's height) cut
        the start.  While paused nothing new arrives.
        """
        end = self.view_end
        start = max(int(n), self.history.start)
        if limit is not None and end - start > limit:
            start = end - int(limit)
        return self.read(start, max(start, end), channel)

    def view(self, width: int, channel: int | None = None) -> tuple[int, np.ndarray]:
        """The last ``width`` items up to :attr:`view_end` (fewer at the start)."""
        end = self.view_end
        return self.read(max(0, end - int(width)), end, channel)

    def item_time(self, index: int | np.ndarray) -> Any:
        """Seconds since the stream started of item(s) ``index``: frame centres or samples.

        Dropped blocks are not counted, so after drops these times run early.
        """
        idx = np.asarray(index, dtype=np.float64)
        if self.stft is None:
            return idx / self.sample_rate
        return (idx * self.stft.hop + self.stft.nfft / 2) / self.sample_rate

    # -- statistics ---------------------------------------------------------------------------
    def stats(self) -> LiveStats:
        """A snapshot of the counters (cheap; call it from a GUI timer)."""
        lat = self.latency
        end = self._t_end if self._t_end is not None else time.perf_counter()
        elapsed = 0.0 if self._t_start is None else end - self._t_start
        err = self.error
        if err is None and self.history.spill_error:
            err = RecordingError(self.history.spill_error)
        if err is None and self.recorder is not None and self.recorder.error:
            err = RecordingError(self.recorder.error)
        return LiveStats(
            blocks_processed=self.blocks_processed,
            blocks_dropped=self.ring.dropped_blocks + self.source.overflows,
            samples_processed=self.samples_processed,
            samples_dropped=self.ring.dropped_samples,
            source_overflows=self.source.overflows,
            latency_ms_median=lat.percentile(50) * 1e3,
            latency_ms_p99=lat.percentile(99) * 1e3,
            latency_ms_max=lat.max * 1e3,
            latency_ms_mean=(lat.total / lat.count * 1e3) if lat.count else 0.0,
            delay_ms_p99=self.delay.percentile(99) * 1e3,
            block=int(self.source.block),
            block_ms=self.source.block / self.sample_rate * 1e3,
            sample_rate=self.sample_rate,
            channels=self.n_channels,
            frames=self.history.end,
            history_first=self.history.start,
            history_memory_bytes=self.history.memory_in_use,
            history_disk_bytes=self.history.disk_in_use,
            ring_high_water=self.ring.high_water,
            elapsed_s=elapsed,
            running=self.running,
            error=None if err is None else (str(err) or type(err).__name__),
        )
