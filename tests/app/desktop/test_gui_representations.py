"""Every shipped representation renders at the view's width, says what it shows, and the
GUI thread only draws while one is computed.

The image operators behind the alternative views are checked against their references
(the direct CQT sum, pywt.cwt) at a view's hop, where only the columns shown are
computed; the window switches through View › Representation as a person does.
"""

import time

import numpy as np
import pytest
import pywt
import scipy.signal
import soundfile
from _gui import TIMEOUT_MS, StallMeter, assert_no_stall, open_designer, settle
from specscope.compute.operators import call
from specscope.compute.ops import sums_at

TITLES = {"cqt.spectrogram": "Constant-Q", "mel.spectrogram": "Mel spectrogram", "mel.mfcc": "MFCC",
          "scalogram.morlet": "Morlet scalogram", "multitaper.spectrogram":
          "Multitaper spectrogram", "reassigned.spectrogram": "Reassigned spectrogram"}


def test_sums_at_equals_a_convolution_sampled_at_the_hop():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(5000)
    kernels = [(-40, rng.standard_normal(81) + 1j * rng.standard_normal(81)),
               (-7, rng.standard_normal(15)), (3, rng.standard_normal(200))]
    out = sums_at(x, kernels, 37, 140, np)
    for i, (first, k) in enumerate(kernels):
        padded = np.concatenate([np.zeros(400), x, np.zeros(6000)])
        want = [np.sum(padded[400 + first + m * 37:][:k.size] * k) for m in range(140)]
        np.testing.assert_allclose(out[i], want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("hop", [300, 1500])
def test_cqt_at_a_views_hop_is_the_direct_sum(hop):
    fs, rng = 8000.0, np.random.default_rng(1)
    x = rng.standard_normal(30000)
    f, c = call("cqt", x, fs=fs, fmin=40.0, n_bins=30, bins_per_octave=12, hop=hop)
    q = 1 / (2 ** (1 / 12) - 1)
    for k in (0, 11, 29):  # the longest kernel, one in the middle, the shortest
        nk = int(np.ceil(q * fs / f[k]))
        kern = scipy.signal.get_window("hann", nk, fftbins=False) \
            * np.exp(2j * np.pi * f[k] * np.arange(nk) / fs) / nk
        padded = np.concatenate([np.zeros(nk), x, np.zeros(nk)])
        want = [np.sum(padded[nk + m * hop - nk // 2:][:nk] * np.conj(kern))
                for m in range(c.shape[-1])]
        np.testing.assert_allclose(c[k], want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("wavelet", ["cmor1.5-1.0", "morl"])
def test_morlet_at_a_views_hop_is_pywt(wavelet):
    fs, rng = 8000.0, np.random.default_rng(2)
    x = rng.standard_normal(20000)
    f, _, p = call("scalogram.morlet", x, fs=fs, fmin=30.0, n_freqs=24, wavelet=wavelet,
                   hop=500)
    scales = pywt.central_frequency(wavelet) * fs / f
    coef, _ = pywt.cwt(x, scales, wavelet, sampling_period=1 / fs, method="conv")
    ref = np.abs(coef[:, ::500]) ** 2
    assert p.shape == ref.shape
    np.testing.assert_allclose(p, ref, rtol=1e-6, atol=1e-9 * ref.max())


@pytest.fixture
def long_window(make_window, tmp_path):
    fs = 48000
    t = np.arange(20 * fs) / fs
    x = 0.3 * np.sin(2 * np.pi * (200 + 400 * t) * t) \
        + 0.05 * np.random.default_rng(0).standard_normal(t.size)
    path = tmp_path / "sweep20.wav"
    soundfile.write(str(path), x.astype(np.float32), fs, subtype="FLOAT")
    w = open_designer(make_window, path)
    w.resize(1600, 1000)
    settle(w)
    return w


def menu_action(w, title):
    for act in w.representation_menu.actions():
        if act.text().replace("&", "") == title:
            return act
    raise LookupError(f"{title!r} not in {[a.text() for a in w.representation_menu.actions()]}")


def test_every_representation_renders_and_says_what_it_shows(qtbot, long_window):
    w = long_window
    qtbot.waitUntil(lambda: len(w.representation_menu.actions()) > 1, timeout=TIMEOUT_MS)
    texts = [a.text().replace("&", "") for a in w.representation_menu.actions()]
    assert all("." not in t for t in texts), texts  # names, not operator ids
    assert set(TITLES.values()) <= set(texts)
    width = w.view.plot_size_px()[0]
    shown, figures = "Spectrogram (STFT)", []
    for op, title in TITLES.items():
        captions = []
        w.view.caption.setText("")  # so that the first caption of the switch is seen
        with StallMeter() as meter:
            start = time.perf_counter()
            menu_action(w, title).trigger()
            qtbot.waitUntil(lambda: w.view.caption.text() != "", timeout=TIMEOUT_MS)
            captions.append(w.view.caption.text())
            qtbot.waitUntil(lambda op=op, title=title: w.views.shown_representation == op
                            and w.view.caption.text() == title, timeout=TIMEOUT_MS * 2)
            seconds = time.perf_counter() - start
            settle(w)
        figures.append(f"{title}: {seconds:.2f} s, stall {meter.worst * 1000:.0f} ms")
        img = w.views.last_image
        assert img.db.shape[1] <= width and img.db.shape[1] >= width // 2
        assert np.isfinite(img.db).mean() > 0.99
        if shown == "Spectrogram (STFT)":
            assert captions[0] == f"Computing {title}…" or captions[0].startswith("Showing")
        else:
            assert captions[0] == f"Showing {shown} · computing {title}…", captions
        assert_no_stall(w, meter, f"switching to {title} ({seconds:.2f} s)")
        shown = title
    print("; ".join(figures))
    menu_action(w, "Spectrogram (STFT)").trigger()
    qtbot.waitUntil(lambda: w.views.shown_representation == "stft"
                    and w.view.caption.isHidden(), timeout=TIMEOUT_MS)
