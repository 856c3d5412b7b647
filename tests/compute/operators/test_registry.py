"""The operator registry: declaration, validation, calling, listing."""

from __future__ import annotations

import json

import numpy as np
import pytest
from specscope import compute
from specscope.compute import operators
from specscope.compute.errors import InputError
from specscope.compute.operators import Param, RegistrationError, declared, namespace, operator


@pytest.fixture
def scratch():
    """Names registered by a test are removed afterwards."""
    names: list[str] = []
    yield names
    for n in names:
        operators.unregister(n)


def test_documented_example_declares_and_runs(scratch) -> None:
    @operator("test.gain", family="basic", summary="Multiply by a constant",
              params=[Param("factor", float, 1.0, min=0.0, help="linear gain")])
    def gain(x, *, factor, xp):
        return x * factor
    scratch.append("test.gain")
    x = np.arange(5.0)
    np.testing.assert_array_equal(compute.call("test.gain", x, factor=2.5), x * 2.5)
    np.testing.assert_array_equal(gain(x, factor=3.0), x * 3.0)  # the decorated object
    assert gain.backends == ["numpy", "cupy"]  # xp-generic: runs on every backend


def test_exports() -> None:
    for name in ("operator", "Param", "call", "available_backends"):
        assert name in compute.__all__ and hasattr(compute, name)


def test_at_least_200_operators_with_schema() -> None:
    items = operators.describe()
    assert len(items) >= 200
    json.dumps(items)  # JSON-able
    for item in items:
        assert item["summary"] and item["family"] and item["reference"], item["name"]
        assert "numpy" in item["backends"] and "cupy" in item["backends"], item["name"]
        for p in item["params"]:
            assert set(p) >= {"name", "type", "default", "min", "max", "choices", "unit",
                              "help"}


def test_validation_messages_name_parameter_and_range() -> None:
    x = np.ones(8)
    with pytest.raises(InputError) as info:
        compute.call("gain", x, factor=-1.0)
    assert str(info.value) == "gain: factor=-1.0 must be a number >= 0.0"
    with pytest.raises(InputError, match=r"quantize: bits=40 must be an integer in \[1, 32\]"):
        compute.call("quantize", x, bits=40)
    with pytest.raises(InputError, match=r"mode='bogus' must be one of psd, spectrum"):
        compute.call("spectrogram", x, mode="bogus")
    with pytest.raises(InputError, match=r"unknown parameter 'facter'; did you mean 'factor'"):
        compute.call("gain", x, facter=2.0)
    with pytest.raises(InputError, match=r"parameter 'sos' is required"):
        compute.call("sosfilt", x)
    with pytest.raises(InputError, match=r"nperseg=2.5 must be an integer"):
        compute.call("stft", x, nperseg=2.5)
    with pytest.raises(InputError, match=r"flag=1 must be True or False"):
        Param("flag", bool, False).validate(1, "op")
    with pytest.raises(InputError, match=r"fs=-1 must be a positive sample rate"):
        compute.call("gain", x, fs=-1)
    with pytest.raises(InputError, match=r"not registered; did you mean"):
        compute.call("gian", x)
    # every message is one line
    with pytest.raises(InputError) as info:
        compute.call("butter", N=4, Wn=1.5)  # scipy's own multi-part message, one line
    # an operator that keeps scipy's word keeps scipy's message first and names itself after
    assert "\n" not in str(info.value) and str(info.value).startswith("Digital filter")
    assert str(info.value).endswith(" (butter)")
    with pytest.raises(InputError) as info:
        compute.call("cqt", x, fmin=-1.0)  # other operators name themselves first
    assert str(info.value).startswith("cqt: ")


def test_param_coercion() -> None:
    assert Param("n", int, 1).validate(4.0) == 4 and isinstance(Param("n", int, 1).validate(
        np.int64(3)), int)
    assert Param("f", float, 1.0).validate(2) == 2.0
    assert Param("n", int, None).validate(None) is None
    with pytest.raises(InputError):
        Param("n", int, 1).validate(None)
    with pytest.raises(InputError):
        Param("n", int, 1).validate(True)  # bool is not an int here
    arr = Param("a", "array", None, min=0.0).validate([1, 2])
    assert isinstance(arr, np.ndarray)
    with pytest.raises(InputError, match=r"a=\[1, -2\] must be an array of numbers"):
        Param("a", "array", None, min=0.0).validate([1, -2], "")
    assert Param("w", "window", "hann").validate(("kaiser", 8.0)) == ("kaiser", 8.0)
    assert Param("v", (str, bool), "x", choices=("x", False)).validate(False) is False


def test_bad_declarations_are_rejected(scratch) -> None:
    with pytest.raises(RegistrationError, match="already registered"):
        operator("gain", family="basic", summary="again")(lambda x, *, xp: x)
    with pytest.raises(RegistrationError, match="lower-case"):
        operator("Bad Name", family="basic", summary="s")
    with pytest.raises(RegistrationError, match="reserved"):
        operator("test.reserved", family="basic", summary="s", params=[Param("fs", float, 1.0)])
    with pytest.raises(RegistrationError, match="type"):
        Param("x1", list, None)
    with pytest.raises(RegistrationError, match="declared twice"):
        operator("test.twice", family="basic", summary="s",
                 params=[Param("a", int, 1), Param("a", int, 2)])

    @operator("test.plugin_op", family="plugins", summary="namespaced")
    def op(x):
        return x + 1
    scratch.append("test.plugin_op")
    with pytest.raises(RegistrationError):
        operator("test.plugin_op", family="plugins", summary="again")(lambda x: x)


def test_backend_implementation_and_variants(scratch) -> None:
    seen = []

    @operator("test.variants", family="basic", summary="two numpy variants",
              params=[Param("k", int, 1)])
    def base(x, *, k):
        seen.append("default")
        return x * k

    @base.implementation("numpy", "fast")
    def fast(x, *, k, xp):
        seen.append("fast")
        return x * k
    scratch.append("test.variants")
    assert [i.variant for i in base.candidates(["numpy"])] == ["default", "fast"]
    assert base.to_dict()["implementations"]["cupy"] == [{"variant": "default",
                                                          "native": False}]
    x = np.ones(4)
    base(x, backend="numpy:fast", k=2)
    base(x, backend="numpy", k=2)
    assert seen == ["fast", "default"]
    with pytest.raises(InputError, match="variant='nope' must be one of default, fast"):
        base(x, backend="numpy:nope")
    with pytest.raises(InputError, match="backend='metal' must be one of"):
        base(x, backend="metal")


def test_fs_and_xp_are_passed_when_asked(scratch) -> None:
    got = {}

    @operator("test.fs", family="basic", summary="records fs and xp")
    def rec(x, *, fs, xp):
        got["fs"], got["xp"] = fs, xp
        return x
    scratch.append("test.fs")
    rec(np.ones(2))
    assert got["fs"] == 1.0 and got["xp"] is np
    rec(np.ones(2), fs=48000)
    assert got["fs"] == 48000.0


def test_no_input_operators_refuse_input() -> None:
    import scipy.signal as ss
    np.testing.assert_allclose(compute.call("hann", M=8), ss.windows.hann(8), rtol=1e-15)
    with pytest.raises(InputError, match="takes no input array"):
        compute.call("hann", np.ones(3), M=8)
    with pytest.raises(InputError, match="an input array is required"):
        compute.call("gain")


def test_nan_policy_reject_is_checked_before_running() -> None:
    x = np.array([1.0, np.nan, 2.0, 0.0, 3.0])
    with pytest.raises(InputError, match="NaN"):
        compute.call("find_peaks", x)
    assert np.isnan(compute.call("gain", x, factor=2.0)[1])


def test_history_and_streamable_metadata() -> None:
    op = operators.get("stft")
    assert op.history_for(op.validate({"nperseg": 256, "hop": 64})) == 192
    assert operators.get("sosfilt").streamable and operators.get("sosfilt").history == 0
    assert operators.get("fft").history is None  # needs the whole signal


def test_sosfilt_streams_with_carried_state() -> None:
    import scipy.signal as ss
    sos = ss.butter(4, 0.1, output="sos")
    x = np.random.default_rng(1).standard_normal(1000)
    zi = np.zeros((sos.shape[0], 2))
    parts = []
    for chunk in np.array_split(x, 7):
        y, zi = compute.call("sosfilt", chunk, sos=sos, zi=zi)
        parts.append(y)
    np.testing.assert_allclose(np.concatenate(parts), ss.sosfilt(sos, x), rtol=1e-12,
                               atol=1e-12)


def test_list_and_families() -> None:
    fams = operators.families()
    assert {"fft", "windows", "timefreq", "filter_design", "filtering", "analysis", "wavelets",
            "generators", "features", "basic"} <= set(fams)
    names = [o.name for o in operators.list_operators("windows")]
    assert "dpss" in names and "kaiser" in names and names == sorted(names)


def test_cli_ops_json_lists_every_operator(capsys) -> None:
    from specscope.app.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["ops", "--json"])
    assert args.func(args) == 0
    items = json.loads(capsys.readouterr().out)
    assert len(items) == len(operators.list_operators()) >= 200
    args = parser.parse_args(["ops", "--family", "nope"])
    with pytest.raises(InputError, match="--family='nope' must be one of"):
        args.func(args)
    args = parser.parse_args(["backends"])
    assert args.func(args) == 0
    assert "numpy" in capsys.readouterr().out


def test_namespace_prefixes_declarations_and_declared_reads_the_table(scratch) -> None:
    with namespace("test"):
        @operator("inner", family="basic", summary="declared under a namespace")
        def inner(x):
            return x + 1

        with namespace(None):
            @operator("test_top", family="basic", summary="declared at the top level")
            def top(x):
                return x
    scratch += ["test.inner", "test_top"]
    assert (inner.name, top.name) == ("test.inner", "test_top")
    assert set(declared("test.")) == {"test.inner"}
    assert declared()["test_top"] is top and operators.get("test.inner") is inner
    @operator("test.outside", family="basic", summary="after the block: no prefix")
    def outside(x):
        return x
    scratch.append("test.outside")
    assert outside.name == "test.outside"


def test_function_is_the_declared_function_for_composition() -> None:
    rfft = operators.get("rfft")
    x = np.random.default_rng(3).standard_normal(64)
    np.testing.assert_allclose(rfft.function(x, n=None, axis=-1, norm="backward", xp=np),
                               np.fft.rfft(x), rtol=1e-12)
    assert operators.get("gain").function.__name__ == "gain"


def test_public_ops_helpers_frame_and_take_magnitudes() -> None:
    from specscope.compute.ops import frame_magnitudes, frames

    x = np.arange(10.0)
    np.testing.assert_array_equal(frames(x, 4, 3, np), [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
    dtype, mag = frame_magnitudes(x, 4, 3, "boxcar", np, "test")
    assert dtype == np.float64
    np.testing.assert_allclose(mag, np.abs(np.fft.rfft(frames(x, 4, 3, np), axis=-1)))
    with pytest.raises(InputError, match="test: nfft=16 is larger than the signal"):
        frame_magnitudes(x, 16, 3, "hann", np, "test")


def test_describe_operator_adds_plugin_and_output_kind() -> None:
    d = operators.describe_operator("fft")
    assert (d["name"], d["plugin"], d["output"]) == ("fft", None, "array")
    d = operators.describe_operator("mel.spectrogram")
    assert (d["plugin"], d["output"]) == ("mel", "image")
