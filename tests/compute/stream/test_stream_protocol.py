"""The one streaming protocol (compute/stream): stages, chains, spawning, history, buffering.

Chains of the core's filters pushed in random chunkings give what scipy.signal
gives for the whole signal; spawned stages are independent; the history each
stage declares is what it does; and no other stateful-stream interface is left
in compute/ or plugins/.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.signal as ss
from specscope.compute.errors import Cancelled, InputError
from specscope.compute.filters import stream_filter
from specscope.compute.filters.apply import CombFilter, FftFirFilter, FirFilter, SosFilter
from specscope.compute.pipeline import Pipeline
from specscope.compute.playback.stages import Decimator, Resampler, Shaper
from specscope.compute.stream import Chain, Map, PerChannel, Rebuffer, Stage, Trim, run

ROOT = Path(__file__).resolve().parents[3]
FS = 8000.0
TOL = 1e-12


def _signal(n: int, channels: int | None = None, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shape = (n,) if channels is None else (channels, n)
    return rng.standard_normal(shape)


def _chunked(stage: Stage, x: np.ndarray, seed: int) -> np.ndarray:
    """``x`` pushed in random chunks (empty ones included), joined along time."""
    rng = np.random.default_rng(seed)
    n = x.shape[-1]
    cuts = np.sort(rng.integers(0, n + 1, size=rng.integers(1, 12)))
    edges = [0, *cuts.tolist(), n]
    parts = [stage.push(x[..., a:b], b == n) for a, b in itertools.pairwise(edges)]
    return np.concatenate(parts, axis=-1)


SOS = ss.butter(4, [300.0, 1200.0], "bandpass", fs=FS, output="sos")
FIR_SHORT = ss.firwin(31, 900.0, fs=FS)
FIR_LONG = ss.firwin(301, 1500.0, fs=FS)
COMB_B, COMB_A = ss.iircomb(50.0, 30.0, fs=FS)


def _filters() -> list[Stage]:
    return [stream_filter("sos", {"sos": SOS}, 100), stream_filter("fir", {"b": FIR_SHORT}),
            stream_filter("fir", {"b": FIR_LONG}),
            stream_filter("comb", {"b": COMB_B, "a": COMB_A}, 50)]


def _reference(x: np.ndarray) -> np.ndarray:
    y = ss.sosfilt(SOS, x, axis=-1)
    y = ss.lfilter(FIR_SHORT, [1.0], y, axis=-1)
    y = ss.lfilter(FIR_LONG, [1.0], y, axis=-1)
    return ss.lfilter(COMB_B, COMB_A, y, axis=-1)


def test_the_core_filters_are_stages_of_the_forms_they_apply():
    kinds = [type(f) for f in _filters()]
    assert kinds == [SosFilter, FirFilter, FftFirFilter, CombFilter]
    assert all(isinstance(f, Stage) for f in _filters())


@pytest.mark.parametrize("seed", range(6))
def test_a_chain_in_random_chunks_equals_scipy_over_the_whole_signal(seed):
    x = _signal(6000, seed=seed)
    want = _reference(x)
    chain = Chain(_filters())
    got = _chunked(chain.spawn(), x, seed)
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL)
    # one whole push of a fresh chain gives the same numbers
    np.testing.assert_allclose(chain.whole(x), want, rtol=0, atol=TOL)


@pytest.mark.parametrize("seed", range(4))
def test_a_chain_for_channels_in_random_chunks_equals_scipy_per_row(seed):
    x = _signal(5000, channels=3, seed=seed)
    rows = Chain(_filters()).for_channels(3)
    got = _chunked(rows, x, seed + 100)
    np.testing.assert_allclose(got, _reference(x), rtol=0, atol=TOL)


def test_each_filter_alone_in_random_chunks_matches_its_scipy_reference():
    x = _signal(4000, seed=7)
    refs = [ss.sosfilt(SOS, x), ss.lfilter(FIR_SHORT, [1.0], x),
            ss.lfilter(FIR_LONG, [1.0], x), ss.lfilter(COMB_B, COMB_A, x)]
    for f, want in zip(_filters(), refs, strict=True):
        for seed in range(3):
            np.testing.assert_allclose(_chunked(f.spawn(), x, seed), want, rtol=0, atol=TOL,
                                       err_msg=type(f).__name__)


@pytest.mark.parametrize("index", range(4))
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_an_empty_chunk_in_mid_stream_changes_nothing(index, dtype):
    """A live session ends with an empty final block; a complex one reached scipy's
    wrapper, which refuses an empty row."""
    x = (_signal(1500, channels=2) + (1j * _signal(1500, channels=2, seed=1)
                                       if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
    f = _filters()[index]
    rows = f.for_channels(2)
    parts = [rows.push(x[:, :600], False), rows.push(x[:, 600:600], False),
             rows.push(x[:, 600:], False), rows.push(x[:, :0], True)]
    assert parts[1].shape == (2, 0) and parts[3].shape == (2, 0)
    np.testing.assert_allclose(np.concatenate(parts, axis=1), f.whole(x), rtol=0,
                               atol=1e-5 if dtype == np.float32 else TOL)


# -- spawning -------------------------------------------------------------------------------


@pytest.mark.parametrize("index", range(4))
def test_spawn_gives_a_fresh_independent_stage(index):
    x = _signal(3000, seed=3)
    template = _filters()[index]
    a = template.spawn()
    first = a.push(x[:1000], False)
    b = a.spawn()  # from a stage in mid-stream: still at rest
    np.testing.assert_array_equal(b.push(x, True), template.whole(x))
    # pushing b did not disturb a's carried state (FFT blocks: the same to rounding)
    rest = a.push(x[1000:], True)
    np.testing.assert_allclose(np.concatenate([first, rest]), template.whole(x), rtol=0,
                               atol=0 if template.exact_split else TOL)


@pytest.mark.parametrize("index", range(4))
def test_for_channels_keeps_one_independent_state_per_row(index):
    x = _signal(2500, channels=3, seed=4)
    x[1] *= 1000.0  # a loud channel must not leak into the others
    rows = _filters()[index].for_channels(3)
    got = np.concatenate([rows.push(x[:, :700], False), rows.push(x[:, 700:], True)], axis=1)
    for c in range(3):
        alone = _filters()[index].spawn()
        want = np.concatenate([alone.push(x[c, :700], False), alone.push(x[c, 700:], True)])
        np.testing.assert_array_equal(got[c], want)


class _Counter(Stage):
    """A stage that numbers the samples it has seen (carried state, 1-D)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.seen = 0

    def push(self, x, final):
        y = x + np.arange(self.seen, self.seen + x.shape[-1])
        self.seen += x.shape[-1]
        return y


def test_per_channel_spawns_one_stage_per_row_by_default():
    rows = _Counter().for_channels(2)
    assert isinstance(rows, PerChannel) and len(rows.rows) == 2
    rows.push(np.zeros((2, 5)), False)
    y = rows.push(np.zeros((2, 3)), True)
    np.testing.assert_array_equal(y, [[5, 6, 7], [5, 6, 7]])
    assert rows.spawn().rows[0].seen == 0 and rows.rows[0].seen == 8
    assert rows.for_channels(0).push(np.zeros((0, 4)), True).shape == (0, 0)


# -- declared history -----------------------------------------------------------------------


def test_lookback_of_filters_and_chains_is_their_declared_history():
    sos, short, long_, comb = _filters()
    assert (sos.lookback, short.lookback, long_.lookback, comb.lookback) == (100, 30, 300, 50)
    assert Chain(_filters()).lookback == 480
    assert Chain(_filters()).latency == 0 and Chain(_filters()).exact_split is False
    assert Chain([short]).exact_split is True
    assert Chain([]).lookback == 0 and Chain([]).push(np.ones(3), True).tolist() == [1, 1, 1]


def test_a_fir_output_depends_on_exactly_lookback_samples_before_it():
    f = stream_filter("fir", {"b": FIR_SHORT})
    x = np.zeros(200)
    x[50] = 1.0
    y = f.whole(x)
    # the impulse reaches outputs 50 .. 50 + lookback and no further
    assert np.flatnonzero(y).min() == 50 and np.flatnonzero(y).max() == 50 + f.lookback


def _emitted(stage: Stage, x: np.ndarray, step: int) -> list[tuple[int, int]]:
    """(inputs pushed, outputs out so far) after each non-final push."""
    out, seen = 0, []
    for a in range(0, x.shape[-1], step):
        out += stage.push(x[..., a:a + step], False).shape[-1]
        seen.append((min(a + step, x.shape[-1]), out))
    return seen


def test_centred_stage_holds_back_exactly_its_latency():
    bound = Pipeline.from_steps([{"op": "filter", "params": {
        "design": "firwin", "numtaps": 41, "cutoff": 900.0, "zero_phase": True}}]).bind(FS)
    chain = bound.chain()
    assert chain.latency == chain.lookahead == chain.lookback == bound.lookahead > 0
    x = _signal(3000, seed=5)
    for n, out in _emitted(chain, x, 250):
        assert out == max(0, n - chain.latency)
    assert chain.push(x[:0], True).shape[0] == chain.latency  # the rest on final


@pytest.mark.parametrize("chunk", [7, 50, 1000])
def test_zero_phase_filters_stream_in_short_chunks_and_end_on_a_short_one(chunk):
    """filtfilt refuses fewer samples than its padding: the stage keeps enough of them."""
    x = _signal(3003, seed=11)
    for design in ({"design": "firwin", "numtaps": 41, "cutoff": 900.0},
                   {"design": "butter", "order": 2, "cutoff": 900.0}):
        bound = Pipeline.from_steps([{"op": "filter", "params": {
            **design, "zero_phase": True}}]).bind(FS)
        stage = bound.stages[0]
        chain = bound.chain()
        got = np.concatenate([chain.push(x[a:a + chunk], a + chunk >= x.size)
                              for a in range(0, x.size, chunk)])
        if stage.exact_split:
            np.testing.assert_array_equal(got, stage.whole(x))
        else:  # cold starts a settling length early: the filter's settling tolerance
            np.testing.assert_allclose(got, stage.whole(x), rtol=0, atol=1e-6)


def test_rate_changers_hold_back_at_most_their_latency():
    x = _signal(20000, seed=6)
    dec = Decimator(48000.0, 3000.0, 5000.0, 4)
    for n, out in _emitted(dec, x, 1111):
        assert out == -(-max(0, n - dec.latency) // 4)
    res = Resampler(44100.0, 160, 147)
    for n, out in _emitted(res, x, 1234):
        assert out == max(0, -(-(n - res.latency) * 160 // 147))
    shaper = Shaper(0.0, 10**6, 0, 48000.0)
    for n, out in _emitted(shaper, 0.1 * x, 700):
        assert 0 <= n - out <= shaper.latency


def test_spectrogram_stage_emits_each_frame_once_its_samples_are_in():
    bound = Pipeline.from_steps([{"op": "spectrogram", "params": {"nfft": 256, "hop": 100}}]
                                ).bind(FS)
    spec = bound.spectrogram.spawn()
    assert spec.latency == 255
    x = _signal(5000, seed=8)
    total = 0  # frames, the second last axis
    for a in range(0, 5000, 333):
        total += spec.push(x[a:a + 333], False).shape[-2]
        n = min(a + 333, 5000)
        assert total == max(0, (n - 256) // 100 + 1)


# -- buffering and the loop -----------------------------------------------------------------


def test_trim_skips_takes_and_pads_along_the_last_axis():
    t = Trim(skip=3, take=5)
    x = np.arange(20.0).reshape(2, 10)
    assert t.push(x[:, :2], False).shape == (2, 0)
    np.testing.assert_array_equal(t.push(x[:, 2:6], False), x[:, 3:6])
    np.testing.assert_array_equal(t.push(x[:, 6:], True), x[:, 6:8])
    assert t.done
    p = Trim(take=6, pad=True)
    np.testing.assert_array_equal(p.push(np.ones(4), True), [1, 1, 1, 1, 0, 0])
    with pytest.raises(InputError, match="take"):
        Trim(pad=True)


def test_rebuffer_gives_fixed_blocks_in_order():
    rb = Rebuffer(4)
    x = np.arange(23)
    got = []
    for a, b in [(0, 3), (3, 3), (3, 12), (12, 23)]:
        got += list(rb.push(x[a:b]))
    got += list(rb.flush())
    assert [g.size for g in got] == [4, 4, 4, 4, 4, 3]
    np.testing.assert_array_equal(np.concatenate(got), x)
    with pytest.raises(InputError, match="block=0"):
        Rebuffer(0)


def test_run_reads_in_chunks_reports_progress_and_stops():
    x = _signal(10000, seed=9)
    want = ss.sosfilt(SOS, x)
    fractions: list[float] = []
    reads: list[tuple[int, int]] = []

    def read(a, b):
        reads.append((a, b))
        return x[a:b]

    f = stream_filter("sos", {"sos": SOS}, 100)
    got = np.concatenate(list(run(f, read, 0, 10000, chunk=3000, progress=fractions.append)))
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL)
    assert reads == [(0, 3000), (3000, 6000), (6000, 9000), (9000, 10000)]
    assert fractions[-1] == 1.0 and fractions == sorted(fractions)
    # a stage made from the first chunk (its channel count), a stream cut short
    trim = Trim(take=4500)
    parts = list(run(lambda first: Chain([f.spawn(), trim]), lambda a, b: x[a:b], 0, 10000,
                     chunk=2000, until=lambda: trim.done))
    assert len(parts) == 3
    np.testing.assert_allclose(np.concatenate(parts), want[:4500], rtol=0, atol=TOL)
    # an empty range is one final push
    assert [p.size for p in run(Map(np.negative), lambda a, b: x[a:b], 5, 5, chunk=10)] == [0]
    with pytest.raises(Cancelled):
        list(run(f, lambda a, b: x[a:b], 0, 10000, chunk=100, cancelled=lambda: True))
    with pytest.raises(InputError, match="chunk_samples=0"):
        list(run(f, lambda a, b: x[a:b], 0, 10, chunk=0))


# -- one protocol ---------------------------------------------------------------------------


_STATE_NAMES = {"state", "st"}
_OLD_NAMES = re.compile(r"\b(new_state|new_rows_state|push_rows)\b")


def _params(node: ast.AST) -> list[str]:
    a = node.args  # type: ignore[attr-defined]
    return [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]


def _violations(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    bad = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            is_fn = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if is_fn:
                names = _params(child)
                where = f"{path.relative_to(root)}:{child.lineno}"
                if "final" in names and _STATE_NAMES & set(names[:names.index("final")]):
                    bad.append(f"{where}: a stream function taking a state ({names})")
                if isinstance(child, ast.Lambda) and "final" in names:
                    bad.append(f"{where}: a (x, final) lambda")
                if in_function and not isinstance(child, ast.Lambda) and "final" in names:
                    bad.append(f"{where}: a (x, final) closure {child.name}")
            visit(child, in_function or is_fn)

    visit(tree, False)
    return bad


def test_compute_and_plugins_have_one_stream_protocol():
    """No ``f(state, x, final)`` / ``push(st, x, final)`` functions, ``(x, final)`` closures,
    or the old state-factory names: every stateful stream is a stream.Stage."""
    bad = []
    for folder in ("compute", "plugins"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            bad += _violations(path)
    for folder in ("compute", "plugins", "scripts", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == Path(__file__).name:
                continue
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _OLD_NAMES.search(line):
                    bad.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_the_protocol_check_finds_each_old_form(tmp_path):
    samples = {
        "a.py": "def f(state, x, final):\n    return x\n",
        "b.py": "class S:\n    def push(self, st, x, final):\n        return x\n",
        "c.py": "def piece():\n    return lambda x, final: x\n",
        "d.py": "def piece():\n    def push(x, final):\n        return x\n    return push\n",
    }
    for name, text in samples.items():
        p = tmp_path / name
        p.write_text(text)
        assert _violations(p, tmp_path), name
    ok = tmp_path / "ok.py"
    ok.write_text("class S:\n    def push(self, x, final):\n        return x\n")
    assert _violations(ok, tmp_path) == []
