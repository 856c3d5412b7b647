"""Plugins: discovery, lazy loading, namespacing, isolation, CLI, shipped plugins' references."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import pywt
import scipy.fft
import scipy.signal
from specscope.compute import extensions, operators
from specscope.compute.errors import InputError
from specscope.compute.extensions import PluginError

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "guide" / "plugins.md"
PY = sys.executable

GOOD = '''
"""Doubles its input."""
from specscope.compute.operators import Param, operator

SPECSCOPE_PLUGIN = {"version": "2.1", "outputs": {"double": "same"}}


@operator("double", family="basic", summary="Twice the input",
          params=[Param("factor", float, 2.0, min=0.0)], reference="x * factor")
def double(x, *, factor, xp):
    return x * factor


@operator("fft", family="fft", summary="Not the built-in fft", reference="x + 1")
def fft(x, *, xp):
    return x + 1
'''


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def pdir(tmp_path, monkeypatch):
    """A plugin folder in SPECSCOPE_PLUGINS, an empty user folder, a clean plugin state."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.setenv("SPECSCOPE_PLUGINS", str(folder))
    monkeypatch.setenv("SPECSCOPE_DATA_DIR", str(tmp_path / "data"))
    extensions.reset()
    yield folder
    extensions.reset()


def env_with(folder: Path, tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(SPECSCOPE_PLUGINS=str(folder), SPECSCOPE_DATA_DIR=str(tmp_path / "data"),
               SPECSCOPE_NO_AUTOTUNE="1")
    return env


# -- discovery, lazy import, namespacing ----------------------------------------------


def test_folder_plugin_is_listed_without_import_and_loads_on_first_use(pdir) -> None:
    write(pdir, "good.py", GOOD)
    p = extensions.get_plugin("good")
    assert (p.source, p.status, p.version) == ("path", "available", "2.1")
    assert p.operators == ["good.double", "good.fft"]
    assert p.summary == "Doubles its input."
    assert "specscope_plugin_good" not in sys.modules  # listing did not import it
    assert extensions.output_kind("good.double") == "same"

    op = operators.get("good.double")  # the registry hook loads the plugin
    assert "specscope_plugin_good" in sys.modules and p.status == "loaded"
    np.testing.assert_array_equal(op(np.arange(3.0), factor=3.0), [0.0, 3.0, 6.0])
    # namespaced: the plugin's "fft" did not touch the built-in
    assert operators.get("good.fft")(np.zeros(2)).tolist() == [1.0, 1.0]
    np.testing.assert_allclose(operators.call("fft", np.ones(4)), [4, 0, 0, 0])
    assert "good.double" in {o.name for o in operators.list_operators()}
    with pytest.raises(InputError, match=r"operator='good\.nope' is not registered"):
        operators.get("good.nope")


@pytest.mark.slow
def test_specscope_ops_and_plugins_list_show_a_folder_plugin(pdir, tmp_path) -> None:
    write(pdir, "good.py", GOOD)
    env = env_with(pdir, tmp_path)
    out = subprocess.run([str(Path(PY).parent / "specscope"), "ops"], env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert re.search(r"good\.double\s+Twice the input", out.stdout)
    assert re.search(r"mel\.spectrogram\s+Mel spectrogram", out.stdout)
    other = tmp_path / "more"
    write(other, "extra.py", GOOD.replace("double", "triple"))
    out = subprocess.run([PY, "-m", "specscope.app", "--plugins", str(other),
                          "plugins", "list", "--json"], env=env, capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    listed = {p["name"]: p for p in json.loads(out.stdout)["plugins"]}
    assert listed["good"]["operators"] == ["good.double", "good.fft"]
    assert (listed["good"]["source"], listed["good"]["status"]) == ("path", "available")
    assert listed["extra"]["operators"] == ["extra.triple", "extra.fft"]
    assert listed["mel"]["source"] == "shipped"
    out = subprocess.run([PY, "-m", "specscope.app", "--plugins",
                          str(tmp_path / "nowhere"), "plugins", "list"], env=env, capture_output=True,
                         text=True, timeout=60, check=False)
    assert out.returncode == 2
    assert out.stderr.strip() == (f"specscope: error: --plugins {tmp_path / 'nowhere'}: no "
                                  "such folder (a folder of plugin modules or packages was "
                                  "expected)")


def test_name_clash_between_plugins_is_reported_not_shadowed(pdir, tmp_path) -> None:
    write(pdir, "good.py", GOOD)
    second = tmp_path / "second"
    write(second / "good", "__init__.py", GOOD.replace("x * factor\n", "x * 0\n"))
    write(second / "good", "plugin.toml", 'version = "9.0"\noperators = ["double"]\n')
    extensions.add_search_path(second)
    items = [p for p in extensions.list_plugins() if p.name == "good"]
    assert [(p.path, p.status) for p in items] == [
        (str(pdir / "good.py"), "available"), (str(second / "good"), "clash")]
    assert items[1].version == "9.0"
    assert items[1].error == (
        f"plugin 'good' (path, {second / 'good'}) clashes with the path plugin of the same "
        f"name ({pdir / 'good.py'}); it is not loaded - rename one of them (the name is the "
        "namespace of their operators)")
    np.testing.assert_array_equal(operators.call("good.double", np.ones(2)), [2.0, 2.0])


def test_duplicate_operator_in_a_plugin_fails_it_and_rolls_back(pdir) -> None:
    write(pdir, "twice.py", GOOD + GOOD.split('"""Doubles its input."""')[1]
          .replace("SPECSCOPE_PLUGIN", "_X"))
    with pytest.raises(PluginError) as info:
        operators.get("twice.double")
    assert str(info.value) == (
        f"plugin 'twice' ({pdir / 'twice.py'}) failed to import: RegistrationError: operator "
        "'twice.double' is already registered; plugins register under their own namespace, "
        "'plugin.op'")
    # the operators registered before the failure were removed again
    assert not operators.declared("twice.")


# -- isolation ------------------------------------------------------------------------

BROKEN = {
    "badimport.py": '''
        from specscope.compute.operators import operator

        @operator("first", family="basic", summary="registered before the failure",
                  reference="x")
        def first(x):
            return x

        import no_such_module_xyz  # noqa
    ''',
    "raiser.py": '''
        from specscope.compute.operators import operator

        @operator("boom", family="basic", summary="raises", reference="-")
        def boom(x):
            raise RuntimeError("boom")
    ''',
    "garbage.py": '''
        import numpy as np
        from specscope.compute.operators import operator
        SPECSCOPE_PLUGIN = {"outputs": {"shape": "same", "image": "image"}}

        @operator("text", family="basic", summary="returns a string", reference="-")
        def text(x):
            return "not an array"

        @operator("objects", family="basic", summary="object array", reference="-")
        def objects(x):
            return np.array([None, 1], dtype=object)

        @operator("shape", family="basic", summary="wrong shape", reference="-")
        def shape(x):
            return x[:-1]

        @operator("image", family="basic", summary="complex image", reference="-")
        def image(x):
            return np.arange(3.0), np.arange(2.0), np.ones((3, 2), complex)
    ''',
    "syntax.py": "def broken(:\n    pass\n",
}


def test_broken_plugins_are_reported_precisely_and_others_keep_working(pdir) -> None:
    write(pdir, "good.py", GOOD)
    for name, text in BROKEN.items():
        write(pdir, name, text)
    x = np.arange(4.0)

    with pytest.raises(PluginError) as info:
        operators.get("badimport.first")
    assert str(info.value) == (f"plugin 'badimport' ({pdir / 'badimport.py'}) failed to "
                               "import: ModuleNotFoundError: No module named "
                               "'no_such_module_xyz'")
    assert info.value.plugin == "badimport" and "no_such_module_xyz" in info.value.traceback
    assert "badimport.first" not in operators.declared()  # partial import rolled back
    with pytest.raises(PluginError, match="failed to import"):  # and it stays failed
        operators.get("badimport.first")

    with pytest.raises(PluginError) as info:
        operators.call("raiser.boom", x)
    assert str(info.value) == "plugin 'raiser', operator 'raiser.boom' failed: RuntimeError: boom"
    assert info.value.operator == "raiser.boom"
    assert 'raise RuntimeError("boom")' in info.value.traceback
    raiser = extensions.get_plugin("raiser")
    assert [e.message for e in raiser.call_errors] == [str(info.value)]

    expected = {
        "text": "returned a str (arrays or numbers were expected) (declared output: 'array')",
        "objects": "returned an array of dtype object (numbers were expected) (declared "
                   "output: 'array')",
        "shape": "returned shape (3,) for input shape (4,) (the same was expected) (declared "
                 "output: 'same')",
        "image": "returned complex values (complex128; real power or magnitude was expected) "
                 "(declared output: 'image')",
    }
    for op, tail in expected.items():
        with pytest.raises(PluginError) as info:
            operators.call(f"garbage.{op}", x, backend="numpy")
        assert str(info.value) == f"plugin 'garbage', operator 'garbage.{op}' {tail}"

    syntax = extensions.get_plugin("syntax")
    assert syntax.status == "failed"
    assert syntax.error.startswith("plugin 'syntax': cannot read its metadata (syntax.py, "
                                   "line 1): SyntaxError:")

    # everything else still works, and the listing records what failed
    np.testing.assert_array_equal(operators.call("good.double", x), 2 * x)
    names = {o.name for o in operators.list_operators()}
    assert {"good.double", "raiser.boom", "mel.spectrogram"} <= names
    assert not any(n.startswith(("badimport.", "syntax.")) for n in names)
    status = {p.name: p.status for p in extensions.list_plugins()}
    assert status["badimport"] == status["syntax"] == "failed"
    assert status["good"] == status["raiser"] == status["garbage"] == "loaded"


def test_plugins_check_reports_each_operator(pdir, capsys) -> None:
    from specscope.app.cli import main

    write(pdir, "good.py", GOOD)
    write(pdir, "raiser.py", BROKEN["raiser.py"])
    assert main(["plugins", "check", "good"]) == 0
    out = capsys.readouterr().out
    assert "good: OK (loaded)" in out
    assert re.search(r"good\.double\s+ok\s+\(4 runs\)", out)
    assert main(["plugins", "check", "--json"]) == 1
    report = {r["plugin"]: r for r in json.loads(capsys.readouterr().out)["plugins"]}
    assert report["good"]["ok"] and not report["raiser"]["ok"]
    probs = report["raiser"]["operators"][0]["problems"]
    assert probs[0] == ("tone on numpy: plugin 'raiser', operator 'raiser.boom' failed: "
                        "RuntimeError: boom")
    assert len(probs) == 4  # tone, chirp, click, noise
    for shipped in ("mel", "cqt", "scalogram", "reassigned", "multitaper", "features", "onsets"):
        assert report[shipped]["ok"], report[shipped]
    assert main(["plugins", "check", "nope"]) == 2
    assert "plugin 'nope' is not installed" in capsys.readouterr().err


# -- the documented example, as an installed distribution ------------------------------


def doc_example() -> tuple[str, str]:
    text = DOC.read_text()
    m = re.search(r"<!-- example: (\S+) -->\n```python\n(.*?)```", text, re.DOTALL)
    assert m, "docs/guide/plugins.md lost its example block"
    return m.group(1), m.group(2)


def test_documented_example_installs_through_an_entry_point(pdir, tmp_path,
                                                           monkeypatch) -> None:
    relpath, code = doc_example()
    site = tmp_path / "site"
    write(site, relpath, code)
    dist = site / "specscope_tonegate-1.0.0.dist-info"
    write(dist, "METADATA", "Metadata-Version: 2.1\nName: specscope-tonegate\n"
                            "Version: 1.0.0\n")
    entry = re.search(r'\[project\.entry-points\."specscope\.plugins"\]\n(.*?)\n',
                      DOC.read_text()).group(1)
    write(dist, "entry_points.txt", f"[specscope.plugins]\n{entry.replace(chr(34), '')}\n")
    monkeypatch.syspath_prepend(str(site))
    p = extensions.get_plugin("tonegate")
    assert (p.source, p.version, p.module) == ("entry point", "1.0.0", "specscope_tonegate")
    assert p.operators == ["tonegate.gate"] and p.status == "available"
    assert "specscope_tonegate" not in sys.modules
    x = np.array([0.05, 0.5, -0.5, 0.05])
    np.testing.assert_array_equal(operators.call("tonegate.gate", x, level=0.1, smooth=1),
                                  [0.0, 0.5, -0.5, 0.0])
    form = operators.describe_operator("tonegate.gate")
    assert form["plugin"] == "tonegate" and form["output"] == "same"
    assert form["params"][1] == {"name": "smooth", "type": "int", "default": 32,
                                 "required": False, "min": 1, "max": None, "choices": None,
                                 "unit": "samples", "help": "envelope length"}
    # the same file works dropped into a plugin folder
    sys.modules.pop("specscope_tonegate", None)
    write(pdir, "gate2.py", code)
    np.testing.assert_array_equal(operators.call("gate2.gate", x, level=0.1, smooth=1),
                                  [0.0, 0.5, -0.5, 0.0])


# -- shipped plugins against references ------------------------------------------------

FS = 8000.0


def tone(f: float, n: int = 8192, fs: float = FS) -> np.ndarray:
    return np.sin(2 * np.pi * f * np.arange(n) / fs)


def stft_power(x, nfft, hop, window="hann"):
    win = scipy.signal.get_window(window, nfft)
    frames = np.stack([x[k:k + nfft] for k in range(0, len(x) - nfft + 1, hop)])
    return np.abs(np.fft.rfft(frames * win, axis=-1)) ** 2  # (n_frames, bins)


def test_mel_spectrogram_and_mfcc_match_textbook_htk_formulas() -> None:
    """HTK mel scale, unnormalised triangles written out here; rtol 1e-10."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(4000)
    nfft, hop, n_mels = 256, 100, 20
    f, t, s = operators.call("mel.spectrogram", x, fs=FS, nfft=nfft, hop=hop, n_mels=n_mels,
                            fmin=50.0, htk=True, norm="none", backend="numpy")

    def mel(hz):
        return 2595.0 * math.log10(1 + hz / 700.0)

    def hz(m):
        return 700.0 * (10 ** (m / 2595.0) - 1)

    edges = [hz(mel(50.0) + i * (mel(FS / 2) - mel(50.0)) / (n_mels + 1))
             for i in range(n_mels + 2)]
    bins = np.fft.rfftfreq(nfft, 1 / FS)
    w = np.zeros((n_mels, bins.size))
    for b in range(n_mels):
        lo, c, hi = edges[b:b + 3]
        for j, fj in enumerate(bins):
            if lo <= fj <= c:
                w[b, j] = (fj - lo) / (c - lo)
            elif c < fj <= hi:
                w[b, j] = (hi - fj) / (hi - c)
    ref = w @ stft_power(x, nfft, hop).T
    np.testing.assert_allclose(s, ref, rtol=1e-10, atol=1e-12 * ref.max())
    np.testing.assert_allclose(f, edges[1:-1], rtol=1e-12)
    np.testing.assert_allclose(t, (np.arange(ref.shape[1]) * hop + nfft / 2) / FS)

    _, _, c = operators.call("mel.mfcc", x, fs=FS, nfft=nfft, hop=hop, n_mels=n_mels,
                            fmin=50.0, htk=True, norm="none", n_mfcc=13, top_db=30.0)
    db = 10 * np.log10(np.maximum(ref, 1e-10))
    db = np.maximum(db, db.max() - 30.0)
    ref_c = scipy.fft.dct(db, type=2, norm="ortho", axis=0)[:13]
    np.testing.assert_allclose(c, ref_c, rtol=1e-9, atol=1e-9)


def test_cqt_spectrogram_matches_the_direct_sum_and_peaks_at_a_tone() -> None:
    """Direct sum of the CQT definition for every bin of three frames; rtol 1e-9."""
    x = tone(440.0, 4096) + 0.1 * np.random.default_rng(2).standard_normal(4096)
    fmin, bpo, n_bins, hop = 110.0, 12, 36, 512
    f, t, s = operators.call("cqt.spectrogram", x, fs=FS, fmin=fmin, n_bins=n_bins,
                            bins_per_octave=bpo, hop=hop, backend="numpy")
    q = 1 / (2 ** (1 / bpo) - 1)
    for k in range(n_bins):
        fk = fmin * 2 ** (k / bpo)
        assert f[k] == pytest.approx(fk, rel=1e-12)
        nk = math.ceil(q * FS / fk)
        kern = scipy.signal.get_window("hann", nk, fftbins=False)
        kern = kern * np.exp(2j * np.pi * fk * np.arange(nk) / FS) / nk
        for m in (2, 4, 6):
            start = m * hop - nk // 2
            seg = np.array([x[i] if 0 <= i < x.size else 0.0
                            for i in range(start, start + nk)])
            ref = abs(np.sum(seg * np.conj(kern))) ** 2
            assert s[k, m] == pytest.approx(ref, rel=1e-9, abs=1e-12)
    assert f[np.argmax(s[:, 4])] == pytest.approx(440.0, rel=1e-9)
    np.testing.assert_allclose(t, np.arange(s.shape[1]) * hop / FS)


def test_scalogram_matches_pywt_and_peaks_at_a_tone() -> None:
    """|pywt.cwt|**2 at scales central_frequency * fs / f; rtol 1e-10."""
    x = tone(1000.0, 4000)
    f, t, s = operators.call("scalogram.morlet", x, fs=FS, fmin=100.0, fmax=3000.0,
                            n_freqs=40, hop=8)
    freqs = np.geomspace(100.0, 3000.0, 40)
    coef, _ = pywt.cwt(x, pywt.central_frequency("cmor1.5-1.0") * FS / freqs, "cmor1.5-1.0",
                       sampling_period=1 / FS, method="fft")
    np.testing.assert_allclose(s, np.abs(coef[:, ::8]) ** 2, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(f, freqs)
    assert t[1] == 8 / FS and s.shape == (40, 500)
    step = math.log(3000 / 100) / 39
    peak = f[np.argmax(s[:, 250])]
    assert abs(math.log(peak / 1000.0)) <= step  # within one row of the tone


def test_reassigned_spectrogram_concentrates_a_tone_between_bins() -> None:
    """A tone at bin 32.3: >= 90 % of the reassigned power lands in bin 32, while the
    plain spectrogram's best row holds < 75 %; no power is created."""
    nfft, hop = 256, 64
    x = tone(32.3 * FS / nfft, 8192)
    f, t, s = operators.call("reassigned.spectrogram", x, fs=FS, nfft=nfft, hop=hop)
    plain = stft_power(x, nfft, hop).T
    assert s.shape == plain.shape
    interior = slice(2, -2)
    share = s[32, interior].sum() / s[:, interior].sum()
    plain_share = plain[32, interior].sum() / plain[:, interior].sum()
    assert share >= 0.90 and plain_share < 0.75, (share, plain_share)
    assert s.sum() <= plain.sum() * (1 + 1e-12)
    assert s.sum() >= 0.99 * plain.sum()
    np.testing.assert_allclose(f, np.fft.rfftfreq(nfft, 1 / FS))
    np.testing.assert_allclose(t, (np.arange(plain.shape[1]) * hop + (nfft - 1) / 2) / FS)


def test_multitaper_spectrogram_matches_the_dpss_formula() -> None:
    """mean_k |rfft(frame*dpss_k)|**2 / (fs sum dpss_0**2), one-sided; rtol 1e-10."""
    x = np.random.default_rng(3).standard_normal(3000)
    nper, hop, nw = 128, 50, 2.5
    f, t, s = operators.call("multitaper.spectrogram", x, fs=FS, nperseg=nper, hop=hop, NW=nw)
    tapers = scipy.signal.windows.dpss(nper, nw, 4)
    cols = []
    for k in range(0, x.size - nper + 1, hop):
        p = np.mean(np.abs(np.fft.rfft(x[k:k + nper] * tapers, axis=-1)) ** 2, axis=0)
        p /= FS * np.sum(tapers[0] ** 2)
        p[1:-1] *= 2
        cols.append(p)
    np.testing.assert_allclose(s, np.array(cols).T, rtol=1e-10)
    np.testing.assert_allclose(f, np.fft.rfftfreq(nper, 1 / FS))
    assert t[0] == pytest.approx(nper / 2 / FS)


def test_spectral_features_match_formulas_and_a_tone() -> None:
    """Per-frame formulas written out here (rtol 1e-9); a tone's centroid is its frequency."""
    x = np.random.default_rng(4).standard_normal(2048)
    nfft, hop = 256, 128
    out = operators.call("features.spectral", x, fs=FS, nfft=nfft, hop=hop)
    m = np.sqrt(stft_power(x, nfft, hop))
    fr = np.fft.rfftfreq(nfft, 1 / FS)
    c = (m * fr).sum(1) / m.sum(1)
    np.testing.assert_allclose(out["centroid"], c, rtol=1e-9)
    np.testing.assert_allclose(out["bandwidth"],
                               np.sqrt((m * (fr - c[:, None]) ** 2).sum(1) / m.sum(1)), rtol=1e-9)
    pw = np.maximum(m ** 2, 1e-10)
    np.testing.assert_allclose(out["flatness"], np.exp(np.log(pw).mean(1)) / pw.mean(1),
                               rtol=1e-9)
    cs = np.cumsum(m, 1)
    np.testing.assert_array_equal(out["rolloff"],
                                  fr[np.argmax(cs >= 0.85 * cs[:, -1:], axis=1)])
    flux = np.sqrt((np.maximum(np.diff(m, axis=0), 0) ** 2).sum(1))
    np.testing.assert_allclose(out["flux"], np.r_[0.0, flux], rtol=1e-9, atol=1e-12)
    assert out["times"].shape == c.shape
    t = operators.call("features.spectral", tone(1000.0, 4096), fs=FS, nfft=512, hop=256)
    np.testing.assert_allclose(t["centroid"], 1000.0, rtol=0.01)
    assert np.all(t["flatness"] < 1e-3)


def test_onset_detector_finds_clicks_to_the_sample_and_writes_annotations() -> None:
    x = 0.01 * np.random.default_rng(5).standard_normal(16000)
    clicks = [3000, 9001, 12345]
    x[clicks] += 1.0
    ev = operators.call("onsets.detect", x, fs=FS)
    assert ev["sample"].tolist() == clicks
    np.testing.assert_allclose(ev["times"], np.array(clicks) / FS)
    assert ev["strength"].max() == 1.0 and ev["strength"].min() >= 0.3
    notes = extensions.events_to_annotations(ev, label="click", fs=FS,
                                             generator="onsets.detect")
    assert (notes[1].start_s, notes[1].stop_s, notes[1].freq_low_hz, notes[1].label,
            notes[1].comment, notes[1].generator) == (9001 / FS, 9001 / FS, None, "click",
                                                      "strength=1", "onsets.detect")
    # a tone starting at sample 5000 in near-silence: one onset within a hop
    y = np.where(np.arange(16000) >= 5000, tone(440.0, 16000), 0.0)
    ev = operators.call("onsets.detect", y + 1e-4 * np.random.default_rng(6).standard_normal(
        16000), fs=FS)
    assert len(ev["sample"]) == 1 and abs(int(ev["sample"][0]) - 5000) <= 64
    # a steady tone has no onset
    assert operators.call("onsets.detect", tone(440.0, 16000), fs=FS)["sample"].size == 0


def test_views_lists_image_operators_without_importing() -> None:
    assert set(extensions.views()) >= {"mel.spectrogram", "mel.mfcc", "cqt.spectrogram",
                                    "scalogram.morlet", "reassigned.spectrogram",
                                    "multitaper.spectrogram"}
    assert extensions.output_kind("features.spectral") == "series"
    assert extensions.output_kind("onsets.detect") == "events"
    assert extensions.output_kind("fft") == "array"


@pytest.mark.slow
def test_folder_plugin_runs_in_a_pipeline_from_the_cli(pdir, tmp_path) -> None:
    import h5py
    import soundfile

    write(pdir, "good.py", GOOD)
    fs = 8000
    x = (0.1 * np.sin(2 * np.pi * 440 * np.arange(fs) / fs)).astype(np.float32)
    wav = tmp_path / "in.wav"
    soundfile.write(str(wav), x, fs, subtype="FLOAT")
    pipe = tmp_path / "p.json"
    pipe.write_text(json.dumps({"specscope": "pipeline/1", "steps": [
        {"op": "good.double", "params": {"factor": 3.0}}]}))
    env = dict(os.environ, SPECSCOPE_PLUGINS=str(pdir))
    out = subprocess.run([PY, "-m", "specscope.app", "run", str(pipe), str(wav), "-o",
                          str(tmp_path / "out")], env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    with h5py.File(tmp_path / "out" / "in.h5", "r") as h:
        np.testing.assert_allclose(h["signal"][:, 0], 3.0 * x, rtol=1e-6)
    # without the plugin folder the pipeline is refused before reading, naming the plugin
    env.pop("SPECSCOPE_PLUGINS")
    out = subprocess.run([PY, "-m", "specscope.app", "run", str(pipe), str(wav), "-o",
                          str(tmp_path / "out2")], env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 2
    assert "plugin 'good'" in out.stderr and "Traceback" not in out.stderr
