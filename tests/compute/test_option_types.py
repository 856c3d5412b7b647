"""Option types: the command line's choice lists come from compute/types.py, and compute
accepts exactly each option type's choices (a bad value is a typed error naming the option)."""

from __future__ import annotations

import argparse
import ast
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from specscope.app.cli import build_parser
from specscope.compute import backend, spectral
from specscope.compute import types as option_types
from specscope.compute.annotations import FORMATS as ANNOTATION_FORMATS
from specscope.compute.annotations import write_annotations
from specscope.compute.batch import TABLE_FORMATS, run_batch, run_detect
from specscope.compute.batch.fetch import check_write_on
from specscope.compute.edit import Box, RegionEdit, region_from_dict
from specscope.compute.errors import InputError, RegistrationError
from specscope.compute.extensions.discovery import _folder_plugins
from specscope.compute.filters import DESIGNS, FilterSpec, design, export_coefficients
from specscope.compute.filters.defaults import convert, size_field, starter
from specscope.compute.io import ArrayRecording
from specscope.compute.levels.bands import make_bands
from specscope.compute.levels.calibration import Calibration
from specscope.compute.levels.spectra import SpectrumParams
from specscope.compute.live.generator import GeneratorSource
from specscope.compute.operators import call, registry
from specscope.compute.operators.autotune import tune_operators
from specscope.compute.pipeline import Pipeline
from specscope.compute.playback import PlaybackOptions
from specscope.compute.playback.renderer import channel_layout
from specscope.compute.tracks import TRACKS, compute_track
from specscope.compute.types import choices
from specscope.compute.view.scales import check_freq_scale
from specscope.compute.view.tiles import TileEngine

ROOT = Path(__file__).resolve().parents[2]
ALIASES: dict[str, Any] = {n: getattr(option_types, n) for n in option_types.__all__
                           if n != "choices"}
#: CLI options with ``choices`` that are no option type, and why (none today)
NOT_OPTION_TYPES: dict[tuple[str, str], str] = {}
BAD = "bogus"


# -- the command line ---------------------------------------------------------------------

def _choice_actions(parser: argparse.ArgumentParser, command: str = ""
                    ) -> Iterator[tuple[str, str, tuple[Any, ...]]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _choice_actions(sub, f"{command} {name}".strip())
        elif action.choices is not None:
            option = action.option_strings[-1] if action.option_strings else action.dest
            yield command, option, tuple(action.choices)


def test_every_cli_choice_list_is_an_option_type() -> None:
    known = {choices(alias): name for name, alias in ALIASES.items()}
    found = list(_choice_actions(build_parser()))
    seen = {(c, o): known.get(ch) for c, o, ch in found}
    # the walk reaches the options of subcommands and of their actions
    assert seen[("run", "--write-on")] == "WriteOn"
    assert seen[("spectrogram", "--scaling")] == "Scaling"
    assert seen[("annotations convert", "--to")] == "TableFormat"
    assert seen[("filter design", "--design")] == "FilterDesign"
    stray = [(c, o, ch) for c, o, ch in found
             if ch not in known and (c, o) not in NOT_OPTION_TYPES]
    assert not stray, f"CLI choices not from compute/types.py: {stray}"
    assert len(found) >= 14


def _literal_strings(node: ast.AST) -> tuple[str, ...] | None:
    if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) >= 2 and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return tuple(e.value for e in node.elts)
    return None


def _sources(*folders: str) -> Iterator[Path]:
    for folder in folders:
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_cli_choices_are_never_written_out() -> None:
    written = []
    for path in _sources("app/cli"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "choices" \
                    and _literal_strings(node.value) is not None:
                written.append(f"{path.relative_to(ROOT)}:{node.value.lineno}")
    assert not written, f"choices= written out instead of choices(Alias): {written}"


def test_no_option_type_is_spelt_out_again() -> None:
    sets = {frozenset(choices(a)): n for n, a in ALIASES.items()}
    again = []
    for path in _sources("compute", "app/cli"):
        if path == ROOT / "compute" / "types.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            values = _literal_strings(node)
            if values is not None and frozenset(values) in sets:
                again.append(f"{path.relative_to(ROOT)}:{node.lineno} "
                             f"{sets[frozenset(values)]}")
    assert not again, f"string tuples that repeat an option type: {again}"


# -- compute accepts each choice, and names the option when it gets another --------------

def _registered(name: str, **kw: Any) -> registry.Operator:
    op = registry.operator(name, family="test", summary="probe", takes_input=False,
                           **kw)(lambda: 0)
    return op


def _nan_policy(v: str) -> None:
    try:
        _registered("option_types_probe_nan", nan_policy=v)
    finally:
        if registry.find("option_types_probe_nan") is not None:
            registry.unregister("option_types_probe_nan")


def _implementation(v: str) -> None:
    op = _registered("option_types_probe_backend")
    try:
        op.implementation(v, "probe")(lambda: 1)
        assert "probe" in op.implementations[v]
    finally:
        registry.unregister("option_types_probe_backend")


def _preference(v: str) -> None:
    before = backend.preference()
    try:
        if v == "cupy" and "cupy" not in backend.available_backends():
            with pytest.raises(InputError) as no_device:
                backend.check_backend("cupy")
            with pytest.raises(InputError) as asked:
                backend.set_preference(v)
            assert str(asked.value) == str(no_device.value)  # known, just not here
            return
        backend.set_preference(v)
        assert backend.preference() == v
    finally:
        backend.set_preference(before)


def _no_inputs(run: Callable[[], Any]) -> None:
    """A run with no inputs gets past its option checks to 'no inputs'."""
    with pytest.raises(InputError) as e:
        run()
    if str(e.value) != "no inputs given":
        raise e.value


def _signal_pipeline() -> Pipeline:
    return Pipeline.from_steps([{"op": "abs"}])


def _detect_pipeline() -> Pipeline:
    return Pipeline.from_steps([{"op": "detect.energy",
                                 "params": {"band_low_hz": 30.0, "band_high_hz": 90.0}}])


def _output_kind(v: str, tmp_path: Path) -> None:
    folder = tmp_path / f"plugins_{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    (folder / "probe.py").write_text(f'SPECSCOPE_PLUGIN = {{"outputs": {{"op": "{v}"}}}}\n')
    (plugin,) = _folder_plugins(folder, "path", "probe_")
    if plugin.outputs.get("op") != v:
        raise InputError(" ".join(plugin.warnings))


def _design(v: str) -> FilterSpec:
    spec = convert(starter("lowpass", _FS), v, _FS)
    assert spec.design == v
    return spec


_FS = 48000.0
_REC2 = ArrayRecording(np.zeros((16, 2)), _FS)
_ENGINE: dict[str, TileEngine] = {}


def _tiles(v: str) -> Any:
    eng = _ENGINE.setdefault("e", TileEngine(ArrayRecording(np.zeros(8192), 8000.0),
                                             nfft=256, hop=64, disk_cache=None))
    return eng.render(0.0, 0.5, 8, reduce=v, cached_only=True)


#: alias -> (a compute call that takes the value, the option it names, whether the
#: error lists the choices); tmp_path is passed to the calls that write
CASES: dict[str, tuple[Callable[..., Any], str, bool]] = {
    "Scaling": (lambda v: spectral.StftParams(scaling=v), "scaling", True),
    "SpecMode": (lambda v: call("spectrogram", np.zeros(1024), fs=_FS, mode=v), "mode", True),
    "Layout": (lambda v: spectral.stft_kernel(np.zeros(2048), spectral.StftParams(), _FS,
                                              layout=v), "layout", True),
    "FreqScale": (lambda v: check_freq_scale(v), "freq_scale", True),
    "Reduction": (_tiles, "reduce", True),
    "Statistic": (lambda v: SpectrumParams(statistic=v), "statistic", True),
    "BandKind": (lambda v: make_bands(v, _FS, 48000), "bands", True),
    "CalibrationKind": (lambda v: Calibration(kind=v), "kind", True),
    "Backend": (_implementation, "backend", True),
    "BackendPreference": (_preference, "compute backend", True),
    "NanPolicy": (_nan_policy, "nan_policy", True),
    "TuneDtype": (lambda v: tune_operators([], sizes=[16], dtypes=[v]), "dtype", True),
    "OutputKind": (_output_kind, "outputs['op']", True),
    "Executor": (lambda v: _no_inputs(lambda: run_batch(_signal_pipeline(), [], "unused",
                                                        executor=v)), "executor", True),
    "WriteOn": (lambda v: check_write_on(v), "write_on", True),
    "TableFormat": (lambda v, tmp_path: write_annotations(
        tmp_path / f"t_{v}.txt", [], format=v, sample_rate=_FS), "format", True),
    "TemplateScale": (lambda v: Pipeline.from_steps([{"op": "detect.template", "params": {
        "template_start_s": 0.0, "template_stop_s": 0.5, "scale": v}}]), "scale", True),
    "IirDesign": (_design, "design", True),
    "NotchDesign": (_design, "design", True),
    "FirDesign": (_design, "design", True),
    "FilterDesign": (_design, "design", True),
    "Btype": (lambda v: FilterSpec("butter", btype=v, order=2, cutoff=(
        100.0, 200.0) if v.startswith("band") else 100.0), "btype", True),
    "BesselNorm": (lambda v: FilterSpec("bessel", norm=v, order=2, cutoff=100.0), "norm",
                   True),
    "CombKind": (lambda v: FilterSpec("iircomb", kind=v, frequency=100.0, q=10.0), "kind",
                 True),
    "CoefficientFormat": (lambda v: export_coefficients(
        design(starter("lowpass", _FS), _FS), v), "format", True),
    "Demod": (lambda v: PlaybackOptions(demod=v), "demod", True),
    "Deemphasis": (lambda v: PlaybackOptions(deemphasis=v), "deemphasis", True),
    "ChannelMix": (lambda v: channel_layout(_REC2, v), "channel", True),
    "GeneratorKind": (lambda v: GeneratorSource(v), "generator", True),
    "ChirpMethod": (lambda v: GeneratorSource("chirp", method=v), "method", True),
    "NoiseColor": (lambda v: GeneratorSource("noise", color=v), "color", True),
    "TrackKind": (lambda v: compute_track(v, np.ones(4096), sr=_FS), "kind", True),
    "EditOperation": (lambda v: RegionEdit(Box(0.0, 1.0, 100.0, 200.0), v, steps=(
        {"op": "gain", "params": {"db": 0}},) if v == "filter" else ()), "operation", True),
    "RemoveFill": (lambda v: RegionEdit(Box(0.0, 1.0, 100.0, 200.0), "remove", fill=v),
                   "fill", True),
    "RegionShape": (lambda v: region_from_dict({
        "shape": v, "t0": 0.0, "t1": 1.0, "f0": 100.0, "f1": 200.0, "radius_s": 0.1,
        "radius_hz": 10.0, "points": [[0.0, 100.0], [1.0, 100.0], [1.0, 200.0]]}), "shape",
        True),
}


def test_every_option_type_has_a_compute_check() -> None:
    assert sorted(CASES) == sorted(ALIASES)


def _run(name: str, value: str, tmp_path: Path) -> Any:
    fn = CASES[name][0]
    return fn(value, tmp_path) if fn.__code__.co_argcount == 2 else fn(value)


def _names(err: BaseException, option: str) -> bool:
    fields = (getattr(err, "option", None), getattr(err, "field", None))
    return option in fields or f"{option}=" in str(err) or f"{option} " in str(err)


@pytest.mark.parametrize("name", sorted(CASES))
def test_compute_takes_each_choice_and_names_the_option_for_another(
        name: str, tmp_path: Path) -> None:
    for value in choices(ALIASES[name]):
        _run(name, value, tmp_path)
    _, option, lists = CASES[name]
    with pytest.raises((InputError, RegistrationError)) as e:
        _run(name, BAD, tmp_path)
    assert _names(e.value, option), str(e.value)
    if lists:  # the message offers exactly the option type's choices
        text = str(e.value)
        assert all(c in text for c in choices(ALIASES[name])), text


# -- the tables keyed by an option type ---------------------------------------------------

def test_tables_keyed_by_an_option_type_have_its_keys() -> None:
    assert tuple(DESIGNS) == choices(option_types.FilterDesign)
    assert tuple(ANNOTATION_FORMATS) == choices(option_types.TableFormat)
    assert tuple(TRACKS) == choices(option_types.TrackKind)
    assert sorted(TABLE_FORMATS) == sorted(choices(option_types.TableFormat))
    assert set(GeneratorSource.OPTIONS) | {"white", "pink"} == set(
        choices(option_types.GeneratorKind))


def test_design_families_are_sized_as_their_type_says() -> None:
    assert choices(option_types.FilterDesign) == (choices(option_types.IirDesign)
                                                  + choices(option_types.NotchDesign)
                                                  + choices(option_types.FirDesign))
    assert {size_field(d) for d in choices(option_types.IirDesign)} == {"order"}
    assert {size_field(d) for d in choices(option_types.FirDesign)} == {"numtaps"}
    assert {size_field(d) for d in choices(option_types.NotchDesign)} == {None}


def test_detect_runs_take_every_table_format() -> None:
    for value in choices(option_types.TableFormat):
        _no_inputs(lambda v=value: run_detect(_detect_pipeline(), [], "unused", format=v))
    with pytest.raises(InputError, match="^format='bogus' must be one of"):
        run_detect(_detect_pipeline(), [], "unused", format=BAD)
