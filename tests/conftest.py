import os
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("SPECSCOPE_CACHE_DIR", str(Path(__file__).parent / ".cache-unused"))

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "assets" / "examples" / "scene.wav"

# The tests live by room (tests/compute/<room>/, tests/app/<front-end>/, tests/widgets/,
# tests/faults/, tests/house/); the helpers they share (_gui, _faults, _dask_cluster,
# _http_range, hostile_corpus, sound_server, reference/, scipy_swap/) stay here and are
# imported by bare name from every folder.
TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Keep tests away from the user's cache and config dirs (recent files)."""
    monkeypatch.setenv("SPECSCOPE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("SPECSCOPE_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))


@pytest.fixture
def example_path() -> Path:
    return EXAMPLE


# -- the main window (helpers in tests/_gui.py) -----------------------------------------
@pytest.fixture
def make_window(qtbot):
    """Make real main windows (``_gui.make_main_window``'s options); each is closed after
    the test and checked: its compute thread and threads ended, its recording closed, the
    window deleted."""
    from _gui import WindowLife, make_main_window

    made = []

    def make(*args, **kwargs):
        life = WindowLife()
        w = make_main_window(*args, **kwargs)
        made.append((life, w))
        return w

    yield make
    for life, w in reversed(made):
        life.close(w)
    for life, w in reversed(made):
        life.check(w)


@pytest.fixture
def window(request, make_window):
    """A real main window, shown, STFT 1024/256; ``make_window``'s options through
    indirect parametrization (``@pytest.mark.parametrize("window", [{...}], indirect=True)``)."""
    return make_window(**getattr(request, "param", {}))


@pytest.fixture
def opened(window, example_path):
    """The window with the example recording open and its first image drawn."""
    from _gui import open_and_wait

    open_and_wait(window, example_path)
    return window


@pytest.fixture
def stereo_wav(tmp_path) -> tuple[Path, np.ndarray, int]:
    """Two channels: a 1 kHz tone left, a 3 kHz tone right; float32 WAV."""
    fs = 16000
    t = np.arange(fs * 2) / fs
    x = np.stack([0.5 * np.sin(2 * np.pi * 1000 * t), 0.25 * np.sin(2 * np.pi * 3000 * t)], 1)
    x = x.astype(np.float32)
    path = tmp_path / "stereo.wav"
    soundfile.write(str(path), x, fs, subtype="FLOAT")
    return path, x, fs


def pytest_addoption(parser):
    parser.addoption("--fuzz-cases", type=int, default=None,
                     help="mutations tests/faults/test_hostile.py runs (default 500; "
                          "SPECSCOPE_FUZZ_CASES too)")
