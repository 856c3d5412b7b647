"""The designer's rules live in the core (compute/filters/defaults.py, preview.py): the
widgets, the notebook and the CLI present them and follow when they change."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as ss
from specscope.compute import filters
from specscope.compute.errors import InputError
from specscope.compute.filters import defaults
from specscope.compute.filters.spec import DESIGNS, FIR_DESIGNS, IIR_DESIGNS

FS = 48000.0


def _combo_keys(combo) -> list[str]:
    return [combo.itemData(i) for i in range(combo.count())]


def test_methods_are_the_designs_in_order():
    assert tuple(defaults.METHODS) == tuple(DESIGNS)
    assert all(label and label.strip() == label for label in defaults.METHODS.values())
    assert len(set(defaults.METHODS.values())) == len(DESIGNS)


def test_the_widgets_combo_lists_exactly_the_cores_designs(qtbot):
    from specscope.widgets.filter_designer import FilterDesigner

    w = FilterDesigner(FS)
    qtbot.addWidget(w)
    keys = _combo_keys(w.method)
    assert keys == list(DESIGNS)
    assert [k for k in keys if k in IIR_DESIGNS] == list(IIR_DESIGNS)
    assert [w.method.itemText(i) for i in range(w.method.count())] == \
        list(defaults.METHODS.values())
    # every IIR design's label says IIR, and no other's does
    iir_labelled = [k for k in keys if defaults.METHODS[k].startswith("IIR")]
    assert iir_labelled == list(IIR_DESIGNS)
    assert w.spec == defaults.DEFAULT_SPEC


def test_the_notebook_offers_the_same_methods():
    pytest.importorskip("jupyter_rfb")
    from specscope.app.notebook.designer import DesignerWidget

    d = DesignerWidget(FS)
    try:
        assert [key for _, key in d.method_picker.options] == _combo_keys(d.designer.method)
        assert d.spec == defaults.DEFAULT_SPEC
    finally:
        d.close()


def _switch(form, method: str):
    seen = []
    form.edited.connect(seen.append)
    form.method.setCurrentIndex(form.method.findData(method))
    assert seen, f"switching to {method} gave no filter"
    return seen[-1]


def test_the_widget_follows_the_cores_defaults(qtbot, monkeypatch):
    """Change detection: patched core defaults come out of the widget's conversions."""
    from specscope.widgets.filter_designer import FilterForm

    notch = filters.FilterSpec("iirnotch", frequency=1000.0, q=10.0)
    form = FilterForm(notch, FS)
    qtbot.addWidget(form)
    assert _switch(form, "ellip").order == defaults.DEFAULT_ORDER == 4
    monkeypatch.setattr(defaults, "DEFAULT_ORDER", 7)
    monkeypatch.setattr(defaults, "DEFAULT_RP_DB", 0.5)
    monkeypatch.setattr(defaults, "DEFAULT_RS_DB", 66.0)
    monkeypatch.setattr(defaults, "DEFAULT_NUMTAPS", 57)
    monkeypatch.setattr(defaults, "DEFAULT_Q", 12.5)
    monkeypatch.setattr(defaults, "MAINS_HZ", 60.0)
    form.set_spec(notch)
    e = _switch(form, "ellip")
    assert (e.order, e.rp, e.rs) == (7, 0.5, 66.0)
    assert _switch(form, "firwin").numtaps == 57
    assert _switch(form, "remez").numtaps == 57
    form.set_spec(filters.FilterSpec("firwin2", numtaps=11, freq=(0, 100, 200, FS / 2),
                                     gain=(1, 1, 0, 0)))
    n = _switch(form, "iirnotch")   # nothing to centre on: mains
    assert (n.frequency, n.q) == (60.0, 12.5)


def test_conversions_carry_what_they_can_and_design_as_scipy():
    spec = defaults.DEFAULT_SPEC
    # a notch on the geometric centre of the band, 948.7 Hz (4 digits)
    notch = defaults.convert(spec, "iirnotch", FS)
    assert notch.frequency == pytest.approx(float(f"{np.sqrt(300 * 3000):.4g}"))
    assert notch.q == defaults.DEFAULT_Q
    b, a = ss.iirnotch(notch.frequency, notch.q, fs=FS)
    d = filters.design(notch, FS)
    _, h = ss.freqz(b, a, worN=512, fs=FS)
    _, h2 = ss.sosfreqz(d.sos, worN=512, fs=FS)
    np.testing.assert_allclose(np.abs(h2), np.abs(h), atol=1e-9)
    # a comb's teeth must divide fs: 948.7 Hz does not at 44.1 kHz, mains does
    comb = defaults.convert(spec, "iircomb", 44100.0)
    assert comb.frequency == defaults.MAINS_HZ
    comb2 = defaults.convert(filters.FilterSpec("iirnotch", frequency=441.0, q=5.0), "iircomb",
                             44100.0)
    assert (comb2.frequency, comb2.q) == (441.0, 5.0)
    # cheby1 keeps the band and order and takes the default ripple
    c1 = defaults.convert(spec, "cheby1", FS)
    assert (c1.btype, c1.order, c1.cutoff, c1.rp) == ("bandpass", 4, (300.0, 3000.0), 1.0)
    sos = ss.cheby1(4, 1.0, [300.0, 3000.0], "bandpass", fs=FS, output="sos")
    np.testing.assert_allclose(filters.design(c1, FS).sos, sos, rtol=1e-9, atol=1e-12)
    for method in DESIGNS:  # every method is reachable from the first filter
        assert defaults.convert(spec, method, FS).design == method
    with pytest.raises(filters.FilterSpecError) as info:
        defaults.convert(spec, "chebyshev", FS)
    assert info.value.field == "design"


def test_form_values_round_trip_and_edges_past_nyquist():
    for method in DESIGNS:
        spec = defaults.convert(defaults.DEFAULT_SPEC, method, FS)
        values = defaults.form_values(spec)
        assert all(not isinstance(v, tuple) for v in values.values())
        assert defaults.spec_from_form(method, {**values, "design": method}) == spec
    assert defaults.beyond_nyquist({"cutoff": [300.0, 30000.0]}, FS) == (
        "cutoff=[300.0, 30000.0] Hz must be below the Nyquist frequency 24000 Hz "
        "(sample rate 48000 Hz)")
    assert defaults.beyond_nyquist({"cutoff": [300.0, 3000.0]}, FS) == ""
    assert defaults.size_field("butter") == "order" and defaults.size_field("remez") == "numtaps"
    assert all(defaults.size_field(d) == "numtaps" for d in FIR_DESIGNS)
    assert defaults.size_field("iirnotch") is None


@pytest.mark.parametrize("kind,fs", [("bandpass", 48000.0), ("lowpass", 8000.0),
                                     ("highpass", 1000.0), ("bandstop", 48000.0),
                                     ("notch", 48000.0), ("notch", 80.0)])
def test_starters_design_below_nyquist_as_scipy(kind, fs):
    spec = defaults.starter(kind, fs)
    d = filters.design(spec, fs)
    if kind == "notch":
        assert spec.frequency == min(defaults.MAINS_HZ, 0.45 * fs)
        b, a = ss.iirnotch(spec.frequency, defaults.DEFAULT_Q, fs=fs)
        _, h = ss.freqz(b, a, worN=256, fs=fs)
    else:
        assert spec.order == defaults.DEFAULT_ORDER and spec.btype == kind
        assert np.max(spec.cutoff) < fs / 2
        sos = ss.butter(defaults.DEFAULT_ORDER, spec.cutoff, kind, fs=fs, output="sos")
        _, h = ss.sosfreqz(sos, worN=256, fs=fs)
    _, h2 = ss.sosfreqz(d.sos, worN=256, fs=fs)
    np.testing.assert_allclose(np.abs(h2), np.abs(h), atol=1e-9)
    with pytest.raises(InputError, match="kind=.comb."):
        defaults.starter("comb", fs)


def test_the_chain_widget_offers_the_cores_starters():
    from specscope.widgets.filter_chain import KINDS

    assert KINDS == defaults.STARTER_KINDS


def test_compute_shown_is_the_cores_and_matches_scipy():
    from specscope.widgets import filter_designer

    assert filter_designer.compute_shown is filters.compute_shown
    shown = filters.compute_shown(defaults.DEFAULT_SPEC, FS)
    sos = ss.butter(4, [300.0, 3000.0], "bandpass", fs=FS, output="sos")
    _, h = ss.sosfreqz(sos, worN=shown.analysis.f, fs=FS)
    np.testing.assert_allclose(shown.analysis.magnitude, np.abs(h), atol=1e-9)
    assert shown.impulse[0].size <= filters.preview.MAX_DRAWN
    # every harmonic of 10 Hz to Nyquist: more than the cap, capped with a note
    many = filters.FilterSpec("notches", frequency=10.0, q=30.0)
    capped = filters.compute_shown(many, FS)
    assert capped.spec.harmonics == filters.MAX_NOTCH_HARMONICS
    assert "2399 harmonics lie below Nyquist" in capped.note


def test_the_cli_suggests_and_uses_the_cores_defaults(monkeypatch, capsys):
    from specscope.app.cli import build_parser, main

    args = build_parser("filter").parse_args(["filter", "notch", "x.wav", "--near", "50"])
    assert args.q == defaults.DEFAULT_Q
    assert main(["filter", "design", "--design", "cheby1", "--order", "4", "--cutoff", "100",
                 "--fs", "8000"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("; e.g. --rp 1") and err.count("\n") == 0
    monkeypatch.setattr(defaults, "FIELD_DEFAULTS", {**defaults.FIELD_DEFAULTS, "rp": 0.25})
    assert main(["filter", "design", "--design", "cheby1", "--order", "4", "--cutoff", "100",
                 "--fs", "8000"]) == 2
    assert capsys.readouterr().err.strip().endswith("; e.g. --rp 0.25")
