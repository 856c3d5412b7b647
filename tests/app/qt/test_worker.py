"""The compute thread: off the GUI thread, newer supersedes older, errors as signals."""

import threading
import time

import pytest
from _gui import TIMEOUT_MS
from specscope.app.qt.worker import ComputeWorker, JobCallbacks, JobError
from specscope.compute.errors import InputError, MissingOption


@pytest.fixture
def worker(qtbot):
    w = ComputeWorker()
    yield w
    w.shutdown()


def test_runs_off_the_gui_thread(qtbot, worker):
    with qtbot.waitSignal(worker.finished, timeout=TIMEOUT_MS) as b:
        worker.submit("k", lambda c: threading.get_ident())
    result = b.args[2]
    assert result.value == result.thread_id != threading.get_ident()


def test_newer_request_supersedes_running_one(qtbot, worker):
    started = threading.Event()

    def slow(control):
        started.set()
        for _ in range(500):
            time.sleep(0.01)
            control.check()
        return "slow"

    cancelled, finished = [], []
    worker.cancelled.connect(lambda i, k: cancelled.append(i))
    worker.finished.connect(lambda i, k, r: finished.append(r.value))
    first = worker.submit("spec", slow)
    assert started.wait(5)
    with qtbot.waitSignal(worker.finished, timeout=TIMEOUT_MS):
        worker.submit("spec", lambda c: "fast")
    qtbot.waitUntil(lambda: first in cancelled, timeout=TIMEOUT_MS)
    assert finished == ["fast"]


def test_pending_request_is_dropped(qtbot, worker):
    gate = threading.Event()
    worker.submit("block", lambda c: gate.wait(5))
    values = []
    worker.finished.connect(lambda i, k, r: values.append(r.value))
    cancelled = []
    worker.cancelled.connect(lambda i, k: cancelled.append(i))
    older = worker.submit("spec", lambda c: "older")
    worker.submit("spec", lambda c: "newer")
    assert cancelled == [older]  # dropped while still pending
    gate.set()
    # every job ends with exactly one signal: once none is left, "older" can come no more
    # (the last job's signal is queued: it may arrive just after the count reaches 0)
    qtbot.waitUntil(lambda: worker.active() == 0 and len(values) >= 2, timeout=TIMEOUT_MS)
    qtbot.wait(50)  # a late "older" would come now
    assert values == [True, "newer"]  # the gate's wait, then the newer job only


def test_errors_come_back_as_the_exception_and_a_line(qtbot, worker, capfd):
    def bad(control):
        raise MissingOption("sample_rate", "raw samples carry no sample rate", path="a.iq")

    with qtbot.waitSignal(worker.failed, timeout=TIMEOUT_MS) as b:
        worker.submit("k", bad)
    error = b.args[2]
    assert isinstance(error, JobError) and not error.is_bug
    assert error.message == "a.iq: raw samples carry no sample rate; give sample_rate="
    assert isinstance(error.exception, MissingOption)
    assert (error.exception.option, error.exception.path) == ("sample_rate", "a.iq")
    assert error.exception.__traceback__ is None  # the job's frames are not kept

    def bug(control):
        raise ZeroDivisionError("division by zero")

    with qtbot.waitSignal(worker.failed, timeout=TIMEOUT_MS) as b:
        worker.submit("k", bug, label="Computing")
    error = b.args[2]
    assert error.message == "Computing failed: ZeroDivisionError: division by zero"
    assert isinstance(error.exception, ZeroDivisionError) and error.is_bug
    err = capfd.readouterr().err  # a bug's traceback goes to stderr
    assert "Traceback" in err and "in bug" in err and "ZeroDivisionError" in err
    with qtbot.waitSignal(worker.finished, timeout=TIMEOUT_MS):  # the thread survived
        worker.submit("k", lambda c: 0)


def test_progress_is_reported_before_the_end(qtbot, worker):
    events = []
    worker.progress.connect(lambda i, k, f: events.append((i, f)))
    worker.finished.connect(lambda i, k, r: events.append((i, "end")))

    def job(control):
        for i in range(5):
            control.progress((i + 1) / 5)
            time.sleep(0.06)

    first = worker.submit("k", job)
    # a second job runs after the first on the same thread: once its end is here, every
    # report the first made is here too
    second = worker.submit("marker", lambda c: None)
    qtbot.waitUntil(lambda: (second, "end") in events, timeout=TIMEOUT_MS)
    mine = [e for i, e in events if i == first]
    assert mine[-1] == "end"  # nothing of the first job after its end
    seen = mine[:-1]
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)


def test_callbacks_of_a_job_run_on_the_gui_thread(qtbot, worker):
    gui = threading.get_ident()
    seen = []
    done = JobCallbacks(done=lambda r: seen.append(("done", r.value, threading.get_ident())))
    failed = JobCallbacks(failed=lambda e: seen.append(("failed", e.message,
                                                        threading.get_ident())))
    with qtbot.waitSignal(worker.finished, timeout=TIMEOUT_MS):
        worker.submit("a", lambda c: 42, callbacks=done)
    with qtbot.waitSignal(worker.failed, timeout=TIMEOUT_MS):
        worker.submit("b", lambda c: (_ for _ in ()).throw(InputError("bad x")), callbacks=failed)
    assert seen == [("done", 42, gui), ("failed", "bad x", gui)]


def test_a_superseded_job_gets_its_cancelled_callback(qtbot, worker):
    gate = threading.Event()
    cancelled = []
    worker.submit("busy", lambda c: gate.wait(5))
    worker.submit("k", lambda c: 1, callbacks=JobCallbacks(cancelled=lambda: cancelled.append(1)))
    worker.submit("k", lambda c: 2)  # supersedes the pending one
    gate.set()
    assert cancelled == [1]


def test_idle_comes_once_after_the_last_job_has_ended(qtbot, worker):
    """``active`` counts jobs whose end the GUI thread has not handled; a job submitted
    from a callback keeps the worker from going idle in between."""
    idle, ends = [], []
    worker.idle.connect(lambda: idle.append(worker.active()))

    def chain(result):
        ends.append(result.value)
        if result.value < 3:
            worker.submit("chain", lambda c, v=result.value + 1: v,
                          callbacks=JobCallbacks(done=chain))

    worker.submit("chain", lambda c: 1, callbacks=JobCallbacks(done=chain))
    worker.submit("slow", lambda c: time.sleep(0.05))
    worker.submit("slow", lambda c: time.sleep(0.05))  # supersedes the pending one
    assert worker.active() == 2
    qtbot.waitUntil(lambda: len(idle) > 0, timeout=TIMEOUT_MS)
    assert ends == [1, 2, 3]
    with qtbot.waitSignal(worker.idle, timeout=TIMEOUT_MS):
        worker.submit("fails", lambda c: 1 / 0)
    assert worker.active() == 0
    # once when the chain and the slow jobs had all ended, nothing was left, and once
    # after the failing job: no idle came in between
    assert idle == [0, 0]
