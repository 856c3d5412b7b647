"""Keywords only a call from Python can give (``stft_power``'s ``out=`` buffer, ``freqz``'s
``plot`` callable) stay out of the operators' schema: generated forms, listings and
pipeline steps do not show or take them; calls from Python still do."""

import numpy as np
import pytest
import scipy.signal
from PyQt6.QtWidgets import QLabel
from specscope.compute import operators
from specscope.compute.errors import InputError
from specscope.compute.pipeline import Pipeline
from specscope.widgets.param_form import ParamForm


@pytest.mark.parametrize(("op", "hidden"), [("stft_power", "out"), ("freqz", "plot")])
def test_the_generated_form_has_no_python_only_field(qtbot, op, hidden):
    schema = operators.describe_operator(op)["params"]
    names = [p["name"] for p in schema]
    assert hidden not in names
    assert len(names) == len(operators.get(op).params) - 1  # the others all stay
    form = ParamForm(schema)
    qtbot.addWidget(form)
    labels = [w.text().rstrip(" *") for w in form.findChildren(QLabel)]
    assert hidden not in labels and set(names) <= set(labels)
    assert hidden not in form.values()


def test_out_still_takes_a_buffer_from_python_and_a_pipeline_step_refuses_it():
    fs = 8000.0
    x = np.random.default_rng(1).standard_normal(4096)
    want = operators.call("stft_power", x, fs=fs, nfft=256, hop=128)
    buf = np.empty_like(want)
    got = operators.call("stft_power", x, fs=fs, nfft=256, hop=128, out=buf)
    assert got is buf
    np.testing.assert_allclose(buf, want, rtol=0, atol=0)
    # against scipy, as the operator's reference says
    _, _, sxx = scipy.signal.spectrogram(x, fs, window="hann", nperseg=256, noverlap=128,
                                        detrend=False, scaling="density", mode="psd")
    np.testing.assert_allclose(buf, sxx.T, rtol=1e-9, atol=1e-15)
    with pytest.raises(InputError, match="'out' is given only in a call from Python"):
        Pipeline.from_steps([{"op": "stft_power", "params": {"nfft": 256, "out": None}}])
