"""View › Profiler: time per operator and backend of the compute thread's jobs."""

import pytest
from _gui import TIMEOUT_MS
from PyQt6.QtCore import Qt
from specscope.app.desktop.actions import menu_actions, plain


def test_profiler_from_the_menu_lists_the_stft_kernel(qtbot, window, example_path):
    found = {f"{path} › {plain(act.text())}": act for act, path in menu_actions(window.menuBar())}
    action = found["View › Profiler"]
    assert not window.profiler_dock.isVisible()
    action.trigger()
    assert window.profiler_dock.isVisible()
    with qtbot.waitSignal(window.imageShown, timeout=TIMEOUT_MS):
        window.open_path(example_path)
    panel = window.profiler.panel

    def kernel_row():
        return next((r for r in panel.rows() if r["operator"] == "stft_power"), None)

    qtbot.waitUntil(lambda: kernel_row() is not None, timeout=TIMEOUT_MS)
    row = kernel_row()
    assert row["calls"] > 0 and row["backend"] in ("numpy", "cupy")
    assert row["seconds"] > 0 and row["mean_seconds"] == pytest.approx(
        row["seconds"] / row["calls"], rel=1e-2, abs=1e-6)
    # sortable: by calls, largest first
    panel.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
    calls = [r["calls"] for r in panel.rows()]
    assert calls == sorted(calls, reverse=True)
    panel.clearRequested.emit()
    assert panel.rows() == []
