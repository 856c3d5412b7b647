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

# -- markers by suite --------------------------------------------------------------------
#: Folders (ending in "/") and modules under tests/ marked as a whole: ``slow`` (left out of
#: the quick loop, ``./scripts/test -m "not slow"``) and ``real`` (drives a real external
#: component: a sound server, a Dask scheduler, a browser, Xvfb, a tmpfs, a process tree
#: killed or stressed).  A module of quick tests with a few slow ones marks those itself
#: (``@pytest.mark.slow``), or here as ``module::test``; every room keeps its unit tests
#: in the quick loop.
SUITES: dict[str, tuple[str, ...]] = {
    # the app, the notebook and the site driven from outside
    "browser/": ("slow", "real"),
    "journeys/": ("slow", "real"),
    "docs/test_site.py": ("slow",),
    "docs/test_site_browser.py": ("slow", "real"),
    # fault campaigns: hostile files, full and read-only disks, kills
    "faults/test_campaign.py": ("slow", "real"),
    "faults/test_hostile.py": ("slow",),
    "faults/test_malformed.py": ("slow",),
    "faults/test_nothing_lost.py": ("slow", "real"),
    "faults/test_crash_safety.py": ("slow", "real"),
    "faults/test_full_disk_messages.py": ("slow", "real"),
    "faults/test_inputs_refused.py": ("slow",),
    "faults/test_special_files_read.py": ("slow",),
    "compute/test_hdf5_full_disk.py": ("slow",),
    "compute/live/test_live_faults.py": ("slow", "real"),
    "compute/live/test_live_kill.py": ("slow", "real"),
    "compute/deployment/test_deployment_resume.py": ("slow", "real"),
    # a real sound server, real Dask clusters, PyPAM in its own venv, a bare venv
    "compute/playback/test_sound_server.py": ("slow", "real"),
    "compute/batch/test_dask_cluster.py": ("slow", "real"),
    "compute/deployment/test_deployment_dask.py": ("slow", "real"),
    "compute/levels/test_levels_dask.py": ("slow", "real"),
    "compute/edit/test_edit_dask.py": ("slow", "real"),
    "compute/levels/test_levels_pypam.py": ("slow", "real"),
    "compute/levels/test_pypam_reference.py": ("slow", "real"),
    "house/test_gpu_check_bare.py": ("slow", "real"),
    "app/notebook/test_notebook_threads.py": ("slow", "real"),
    # long runs: scipy's own suite, processes and clusters against whole runs, races,
    # URLs through a local server, plugins that hang, the command line end to end
    "compute/ops/test_scipy_suite.py": ("slow",),
    "compute/detect/test_detect_parts.py": ("slow",),
    "compute/deployment/test_deployment_batch.py": ("slow",),
    "compute/output/test_paired_outputs.py": ("slow",),
    "compute/io/test_urls.py": ("slow",),
    "compute/operators/test_long_ops.py": ("slow",),
    "app/cli/test_cli.py": ("slow",),
    "app/cli/test_detect_cli.py": ("slow",),
    "app/notebook/test_notebook_pump.py": ("slow",),
    # the desktop's workflows through the real widgets (test_gui.py, the fixtures, the
    # live window, the status bar, menus, docks and missing libraries stay quick)
    "app/desktop/test_first_hour_exports.py": ("slow",),
    "app/desktop/test_first_hour_readouts.py": ("slow",),
    "app/desktop/test_gui_annotations.py": ("slow",),
    "app/desktop/test_gui_calibration.py": ("slow",),
    "app/desktop/test_gui_chain.py": ("slow",),
    "app/desktop/test_gui_channels.py": ("slow",),
    "app/desktop/test_gui_deployment.py": ("slow",),
    "app/desktop/test_gui_deployment_review.py": ("slow",),
    "app/desktop/test_gui_deployment_times.py": ("slow",),
    "app/desktop/test_gui_detect.py": ("slow",),
    "app/desktop/test_gui_export_choices.py": ("slow",),
    "app/desktop/test_gui_exports.py": ("slow",),
    "app/desktop/test_gui_filters.py": ("slow",),
    "app/desktop/test_gui_levels.py": ("slow",),
    "app/desktop/test_gui_levels_panel.py": ("slow",),
    "app/desktop/test_gui_playback.py": ("slow",),
    "app/desktop/test_gui_processing.py": ("slow",),
    "app/desktop/test_gui_region_edits.py": ("slow",),
    "app/desktop/test_gui_progress.py": ("slow",),
    "app/desktop/test_gui_pyramid.py": ("slow",),
    "app/desktop/test_gui_representations.py": ("slow",),
    "app/desktop/test_gui_review_paint.py": ("slow",),
    "app/desktop/test_gui_stalls.py": ("slow",),
    "app/desktop/test_gui_undo.py": ("slow",),
    "app/desktop/test_gui_unsaved_state.py": ("slow",),
    "app/desktop/test_transport_band.py": ("slow",),
    "app/desktop/test_unsaved_annotations.py": ("slow",),
    # fresh interpreters timed at start-up
    "app/cli/test_cli_startup.py": ("slow",),
    # references computed at length (the rooms keep their other references and
    # chunked = whole checks in the loop)
    "compute/tracks/test_pyin.py::test_equals_librosa_on_speech": ("slow",),
    "compute/tracks/test_spectral_shape.py::test_a_channel_of_a_recording_equals_that_channel_alone":
        ("slow",),
}


def _suite_markers(item) -> set[str]:
    try:
        rel = Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return set()
    test = f"{rel}::{getattr(item, 'originalname', item.name)}"
    return {m for where, marks in SUITES.items()
            if where in (rel, test) or (where.endswith("/") and rel.startswith(where))
            for m in marks}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the suites of :data:`SUITES` (before ``-m`` selects)."""
    for item in items:
        for name in sorted(_suite_markers(item)):
            item.add_marker(getattr(pytest.mark, name))


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
