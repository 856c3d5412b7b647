"""The filter designer docked in a window the size of a small screen: what is in force,
the summary and the verdict are on screen, whole, and the window does not grow."""

import itertools

import pytest
from _gui import TIMEOUT_MS, open_and_wait, settle, wait_until
from PyQt6.QtCore import QRect, Qt
from test_gui_stalls import form_field


def rect_in(window, widget) -> QRect:
    return QRect(widget.mapTo(window, widget.rect().topLeft()), widget.size())


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 800)])
def test_verdict_and_summary_are_whole_and_above_the_status_bar(qtbot, make_window,
                                                                example_path, size):
    w = make_window(nfft=4096, hop=1024, size=size)
    open_and_wait(w, example_path)
    d = w.designer
    w.designer_dock.setVisible(True)
    d.set_spec({"design": "butter", "btype": "lowpass", "order": 4, "cutoff": 1000.0,
                "passband": 800.0, "stopband": 3000.0, "rp": 1.0, "rs": 20.0}, emit=False)
    qtbot.waitUntil(lambda: not d.busy() and d.verdict is not None, timeout=TIMEOUT_MS)
    settle(w)
    assert (w.width(), w.height()) == size  # showing the dock did not grow the window
    status = rect_in(w, w.statusBar())
    labels = [lab for lab in (d.info, d.verdict_label, d.note, d.error) if lab.text()]
    assert d.info in labels and d.verdict_label in labels
    for lab in labels:
        r = rect_in(w, lab)
        assert lab.isVisible() and w.rect().contains(r), lab.text()
        assert r.bottom() < status.top(), lab.text()
        # the whole text: the label is as tall as its wrapped text needs
        assert r.height() >= lab.heightForWidth(r.width()), lab.text()
    for a, b in itertools.pairwise(labels):
        assert not rect_in(w, a).intersects(rect_in(w, b))
    assert d.info.text().startswith("In force: order 4 and cutoff 1000 Hz.")
    assert d.verdict_label.text().startswith(("PASS", "FAIL"))
    # the dock stays where it is when the status message changes
    before = rect_in(w, w.designer_dock)
    for text in ("a message " * 40, ""):
        w.show_message(text, 0)
        # the label shows it on three passes of the event loop in a row: the layout
        # requests the new text posted (status bar, then window) have run
        wait_until(lambda t=text: w.message_label.text() == t, what=f"the message {text!r}",
                   passes=3)
        assert rect_in(w, w.designer_dock) == before, text


def test_the_form_says_which_fields_are_in_force():
    from specscope.compute import filters
    from specscope.widgets.filter_designer import in_force
    spec = filters.FilterSpec("butter", btype="lowpass", passband=800.0, stopband=3000.0,
                              rp=1.0, rs=20.0)
    assert in_force(spec) == ("In force: passband/stopband, rp and rs (the minimum order "
                              "meeting them).")
    both = filters.FilterSpec("firwin", btype="lowpass", numtaps=101, cutoff=1000.0,
                              passband=800.0, stopband=3000.0, rs=40.0)
    assert in_force(both).startswith("In force: numtaps 101 and cutoff 1000 Hz.")
    assert in_force(filters.FilterSpec("iirnotch", frequency=50.0, q=30.0)) == ""


def test_a_passband_beyond_nyquist_names_nyquist(qtbot):
    from specscope.widgets.filter_designer import FilterDesigner
    d = FilterDesigner(48000.0)
    qtbot.addWidget(d)
    d.show()
    d.set_spec({"design": "butter", "btype": "lowpass", "passband": 3000.0,
                "stopband": 4000.0, "rp": 1.0, "rs": 40.0}, emit=False)
    qtbot.waitUntil(lambda: not d.busy(), timeout=TIMEOUT_MS)
    field = form_field(d, "passband")
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
    field.selectAll()
    qtbot.keyClicks(field, "30000")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: d.error.text() != "", timeout=TIMEOUT_MS)
    assert "Nyquist frequency 24000 Hz" in d.error.text(), d.error.text()
    assert "passband" in d.error.text()
