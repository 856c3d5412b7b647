"""Drive a notebook explorer and designer from several threads at once, as comm subshells do.

Run as a script (tests/app/notebook/test_notebook_threads.py starts it in a subprocess, so a crash
fails that test instead of killing pytest)::

    python tests/app/notebook/notebook_thread_stress.py WAV [--threads N] [--iterations N] [--unsafe]

Threads other than the main one send canvas events (wheel, drag, hover, resize),
trait changes (frequency axis, colour map, Select), button clicks, designer edge drags
and ``set_view`` calls, in random order; the main thread runs the Qt pump meanwhile.
It prints one JSON line: events sent, calls run on the Qt thread, Qt messages that
name a thread or an inactive painter, and the threads that sent Qt events.
``--unsafe`` runs every call in place on the calling thread (what happened before the
calls were handed to the Qt thread), to show what the test catches.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PyQt6.QtCore import qInstallMessageHandler
from PyQt6.QtWidgets import QApplication
from specscope.app.notebook import pump as notebook_qt
from specscope.app.notebook.explorer import design_filter, explore
from specscope.widgets.frequency_axis import SCALES
from specscope.widgets.spectrogram_view import COLORMAPS

#: Qt messages that mean an object was touched from a thread that does not own it
BAD = ("different thread", "QPainter", "QObject::", "QBasicTimer", "QWidget::repaint",
       "Timers cannot", "QSocketNotifier", "QPixmap")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("wav")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--unsafe", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    w = explore(args.wav)
    d = design_filter(fs=w.recording.sample_rate, target=w,
                      spec={"design": "butter", "btype": "bandpass", "order": 4,
                            "cutoff": [500.0, 3000.0]})
    w.snapshot()
    d.snapshot()
    start_range = w.visible_range
    messages: list[str] = []
    qInstallMessageHandler(lambda mode, ctx, text: messages.append(text or ""))
    if args.unsafe:
        notebook_qt.on_qt_thread = lambda: True  # type: ignore[assignment]

    # which threads send Qt events to the widgets (must be the main thread only)
    senders: set[str] = set()
    send_event = QApplication.sendEvent

    def recording_send(target, event):
        senders.add(threading.current_thread().name)
        return send_event(target, event)

    QApplication.sendEvent = recording_send  # type: ignore[method-assign]

    ran = [0]
    run_queued = notebook_qt.run_queued_calls

    def counting_run() -> int:
        n = run_queued()
        ran[0] += n
        return n

    notebook_qt.run_queued_calls = counting_run  # type: ignore[assignment]
    tools = w.children[0].children
    fit, home = tools[2], tools[3]
    width, height = w.canvas.size
    dw, dh = d.canvas.size
    sent = [0] * args.threads
    errors: list[str] = []
    last_scale: list[str] = []

    def pointer(kind, x, y, button=0, buttons=()):
        return {"event_type": kind, "type": kind, "x": x, "y": y, "button": button,
                "buttons": buttons, "modifiers": ()}

    def drag(canvas, x0, y0, x1, y1, steps=6):
        canvas.handle_event(pointer("pointer_down", x0, y0, 1, (1,)))
        for k in range(1, steps + 1):
            canvas.handle_event(pointer("pointer_move", x0 + (x1 - x0) * k / steps,
                                        y0 + (y1 - y0) * k / steps, 1, (1,)))
        canvas.handle_event(pointer("pointer_up", x1, y1, 1))
        return steps + 2

    def worker(k: int) -> None:
        rnd = random.Random(args.seed * 100 + k)
        try:
            for _ in range(args.iterations):
                action = rnd.randrange(9)
                x, y = rnd.uniform(80, width - 80), rnd.uniform(20, height - 60)
                if action == 0:
                    w.canvas.handle_event({"event_type": "wheel", "type": "wheel", "x": x,
                                           "y": y, "dx": 0.0, "dy": rnd.choice([-100.0, 100.0]),
                                           "buttons": (), "modifiers": ()})
                    sent[k] += 1
                elif action == 1:
                    sent[k] += drag(w.canvas, x, y, x + rnd.uniform(-80, 80), y)
                elif action == 2:
                    scale = rnd.choice(list(SCALES))
                    w.freq_picker.value = scale
                    sent[k] += 1
                elif action == 3:
                    w.colormap_picker.value = rnd.choice(list(COLORMAPS))
                    sent[k] += 1
                elif action == 4:
                    rnd.choice([fit, home]).click()
                    sent[k] += 1
                elif action == 5:
                    dx, dy = rnd.uniform(100, dw - 100), rnd.uniform(60, dh - 120)
                    sent[k] += drag(d.canvas, dx, dy, dx + rnd.uniform(-40, 40), dy)
                elif action == 6:
                    w.canvas.handle_event(pointer("pointer_move", x, y))
                    sent[k] += 1
                elif action == 7:
                    t0 = rnd.uniform(0, w.recording.duration / 2)
                    w.set_view(t0, t0 + rnd.uniform(0.5, 3.0))
                    sent[k] += 1
                else:
                    w.canvas.handle_event({"event_type": "resize", "type": "resize",
                                           "width": rnd.choice([700, 900]),
                                           "height": rnd.choice([400, 460]),
                                           "pixel_ratio": rnd.choice([1.0, 2.0])})
                    sent[k] += 1
        except Exception as exc:  # noqa: BLE001 - reported in the JSON line
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=worker, args=(k,), name=f"subshell-{k}")
               for k in range(args.threads)]
    t_start = time.perf_counter()
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        notebook_qt.process_qt_events()
        w.canvas.frame()
        time.sleep(0.001)
    # the last word from a "subshell": the linear axis and a known span
    closing = threading.Thread(target=lambda: (w.freq_picker.__setattr__("value", "mel"),
                                               w.set_view(1.0, 3.0)), name="subshell-last")
    closing.start()
    closing.join()
    last_scale.append("mel")
    w.wait()
    notebook_qt.process_qt_events()
    w.wait()
    seconds = time.perf_counter() - t_start
    bad = [m for m in messages if any(b in m for b in BAD)]
    print(json.dumps({
        "events_sent": sum(sent) + 2, "calls_run_on_qt_thread": ran[0],
        "qt_thread_warnings": len(bad), "first_warnings": bad[:5], "errors": errors[:5],
        "senders": sorted(senders), "freq_scale": w.freq_scale,
        "view_scale": w.view.freq_scale, "visible_range": list(w.visible_range),
        "start_range": list(start_range), "seconds": round(seconds, 2)}))
    sys.stdout.flush()
    d.close()
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
