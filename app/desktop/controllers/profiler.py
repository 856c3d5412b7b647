"""The profiler: time per operator and backend of the compute thread's last jobs.

Every job of :class:`~specscope.app.qt.worker.ComputeWorker` runs under
:func:`specscope.compute.operators.profile`; the finished job's snapshot comes
back with its result, and this controller, on the GUI thread, keeps those of the
last :data:`KEPT_JOBS` jobs and shows their sum in a
:class:`~specscope.widgets.profiler.ProfilerPanel`.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from PyQt6.QtCore import QObject
from specscope.compute.operators import Profile
from specscope.widgets.profiler import ProfilerPanel

__all__ = ["KEPT_JOBS", "ProfilerController"]

#: jobs whose operator calls the panel sums
KEPT_JOBS = 50


class ProfilerController(QObject):
    """Collects the profile of each finished job and shows the last ones.

    Parameters
    ----------
    worker : ComputeWorker
        The compute thread; its ``finished`` signal carries each job's profile.
    parent : QObject, optional
    """

    def __init__(self, worker: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.panel = ProfilerPanel()
        self.jobs: deque[Profile] = deque(maxlen=KEPT_JOBS)
        worker.finished.connect(self._job_finished)
        self.panel.clearRequested.connect(self.clear)

    def _job_finished(self, job_id: int, kind: str, result: Any) -> None:
        prof = getattr(result, "profile", None)
        if prof is None or not prof.operators:
            return
        self.jobs.append(prof)
        self.refresh()

    def total(self) -> Profile:
        """The operator calls of the kept jobs, summed."""
        out = Profile()
        for p in self.jobs:
            out.merge(p)
        return out

    def refresh(self) -> None:
        """Show the kept jobs' calls (only while the panel is visible: it costs nothing
        hidden)."""
        self.panel.show_rows(self.total().by_backend(), len(self.jobs))

    def clear(self) -> None:
        """Forget the kept jobs."""
        self.jobs.clear()
        self.panel.show_rows([], 0)
