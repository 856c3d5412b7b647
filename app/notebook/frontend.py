"""The frame canvas's browser side: jupyter_rfb's front-end and a "kernel busy" overlay.

The kernel draws every frame, so while it runs a cell (its main thread, the Qt
thread, is busy) input from the browser waits and nothing on the page changes.
The browser cannot ask a busy kernel, so it judges for itself: an input the
canvas forwarded (a wheel notch, a button press or release, a drag, a key) that
no new frame has followed for :data:`WAIT_MS` shows an overlay over the frame
saying that the kernel is busy and the input is kept; the next frame hides it.
The input is not lost: the kernel handles it in order once the cell ends (see
:mod:`.pump`) and the frame catches up.

jupyter_rfb's own module (an anywidget ESM) is wrapped, not copied: its default
export becomes a local function whose ``initialize`` and ``render`` this module's
export calls before adding the overlay to each view.
"""

from __future__ import annotations

import jupyter_rfb.widget

__all__ = ["BUSY_TEXT", "CSS", "ESM", "WAIT_MS"]

#: milliseconds an input may stay unanswered by a frame before the overlay shows
WAIT_MS = 600
#: the overlay's text
BUSY_TEXT = "Kernel busy \u2014 your input is kept and applied when the kernel is idle"

_EXPORT = "export default () =>"

_OVERLAY = """
const SPECSCOPE_WAIT_MS = %(wait)d
const SPECSCOPE_BUSY_TEXT = %(text)r

// the overlay of one view: shown while an input it forwarded waits for a frame
function specscopeBusyOverlay (ctx) {
  const wrapper = ctx.el.querySelector('.renderview-wrapper')
  const img = wrapper && wrapper.querySelector('img')
  if (!img) { return () => {} }
  const overlay = document.createElement('div')
  overlay.className = 'specscope-busy'
  overlay.textContent = SPECSCOPE_BUSY_TEXT
  wrapper.appendChild(overlay)
  let waitingSince = 0 // performance.now() of the oldest input no frame answered; 0: none
  const input = (ev) => {
    // jupyter_rfb prevents the default of what it forwards (a wheel before a click
    // scrolls the page and is not forwarded: nothing to wait for)
    if (ev.defaultPrevented && !waitingSince) { waitingSince = performance.now() }
  }
  const drag = (ev) => { if (ev.buttons) { input(ev) } }
  const listeners = [['wheel', input], ['pointerdown', input], ['pointerup', input],
    ['pointermove', drag]]
  for (const [type, fn] of listeners) { img.addEventListener(type, fn) }
  const frame = (msg) => {
    if (msg && msg.type === 'framebufferdata') {
      waitingSince = 0
      overlay.classList.remove('is-shown')
    }
  }
  ctx.model.on('msg:custom', frame)
  const timer = window.setInterval(() => {
    if (waitingSince && performance.now() - waitingSince > SPECSCOPE_WAIT_MS) {
      overlay.classList.add('is-shown')
    }
  }, 100)
  return () => {
    window.clearInterval(timer)
    ctx.model.off('msg:custom', frame)
    for (const [type, fn] of listeners) { img.removeEventListener(type, fn) }
    overlay.remove()
  }
}

export default () => {
  const rfb = specscopeRfbWidget()
  return {
    initialize (ctx) { return rfb.initialize(ctx) },
    render (ctx) {
      const closeView = rfb.render(ctx)
      const closeOverlay = specscopeBusyOverlay(ctx)
      return () => { closeOverlay(); if (closeView) { closeView() } }
    }
  }
}
"""

_CSS = """
.specscope-busy {
  display: none; position: absolute; left: 0; right: 0; top: 0; padding: 6px 10px;
  background: rgba(30, 30, 30, 0.78); color: #fff; font: 13px sans-serif;
  pointer-events: none; z-index: 10;
}
.specscope-busy.is-shown { display: block; }
"""


def _esm(rfb_js: str) -> str:
    if rfb_js.count(_EXPORT) != 1:
        raise ImportError("jupyter_rfb's front-end has no single 'export default () =>': "
                          "this jupyter_rfb is not one the notebook widgets know")
    wrapped = rfb_js.replace(_EXPORT, "const specscopeRfbWidget = () =>")
    return wrapped + _OVERLAY % {"wait": WAIT_MS, "text": BUSY_TEXT}


#: the canvas's ESM: jupyter_rfb's, its views with the busy overlay
ESM = _esm(jupyter_rfb.widget.JS)
#: the canvas's CSS: jupyter_rfb's and the overlay's
CSS = jupyter_rfb.widget.CSS + _CSS
