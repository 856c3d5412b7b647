"""Every reader on files generated here: values, metadata, pieces == whole, bad input."""

from __future__ import annotations

import hashlib
import itertools
import json
import resource
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.io
import soundfile
from specscope.compute import InputError, RecordingError, open_recording
from specscope.compute.errors import MissingOption
from specscope.compute.io import list_datasets, parse_sample_type
from specscope.compute.io.raw import FileArray

RNG = np.random.default_rng(1234)


def assert_pieces_equal_whole(rec, bounds=(0, 1, 7, 100, 333)):
    whole = rec.read()
    assert whole.shape == (rec.n_samples, rec.n_channels)
    assert whole.dtype == (np.complex64 if rec.is_complex else np.float32)
    edges = sorted({b for b in bounds if b < rec.n_samples} | {rec.n_samples})
    pieces = [rec.read(a, b) for a, b in itertools.pairwise(edges)]
    np.testing.assert_array_equal(np.concatenate(pieces), whole)
    if rec.n_channels > 1:
        np.testing.assert_array_equal(rec.read(3, 9, channels=1), whole[3:9, 1:2])
    json.dumps(rec.info())  # info is JSON-ready
    return whole


def one_line(exc: BaseException) -> str:
    msg = str(exc)
    assert msg and "\n" not in msg
    return msg


# -- raw ---------------------------------------------------------------------------------

def encode(name: str, n: int, channels: int = 1) -> tuple[bytes, np.ndarray]:
    """Random samples of raw type ``name``: (file bytes, expected float values)."""
    st, _ = parse_sample_type(name)
    comp = st.component
    width = channels * st.components
    if comp.kind == "f":
        vals = RNG.standard_normal((n, width)).astype(comp.newbyteorder("="))
        expected = vals.astype(np.float32)
    else:
        info = np.iinfo(comp.newbyteorder("="))
        vals = RNG.integers(info.min, info.max, (n, width), endpoint=True,
                            dtype=comp.newbyteorder("="))
        expected = ((vals.astype(np.float64) - st.offset) / st.scale).astype(np.float32)
    data = vals.astype(comp).tobytes()
    if st.is_complex:
        expected = expected.view(np.complex64)
    return data, expected


RAW_TYPES = ["cf32", "cf64", "ci32", "ci16", "ci8", "cu8", "cu16", "rf32", "rf64", "ri32",
             "ri16", "ri8", "ru8", "ru16"]


@pytest.mark.parametrize("order", ["le", "be"])
@pytest.mark.parametrize("name", RAW_TYPES)
def test_raw_types_and_byte_orders(tmp_path, name, order):
    dtype = f"{name}_{order}"
    data, expected = encode(dtype, 500, channels=2)
    path = tmp_path / "capture.iq"
    path.write_bytes(data)
    with open_recording(path, dtype=dtype, sample_rate=2.4e6, center_frequency=100e6,
                        n_channels=2) as rec:
        assert rec.is_complex == name.startswith("c")
        assert (rec.n_samples, rec.n_channels, rec.sample_rate) == (500, 2, 2.4e6)
        assert rec.center_frequency == 100e6
        whole = assert_pieces_equal_whole(rec)
    np.testing.assert_allclose(whole, expected, rtol=1e-6, atol=1e-7)


def test_raw_extension_names_the_type(tmp_path):
    data, expected = encode("ci16_le", 64)
    for ext in (".cs16", ".ci16", ".sc16"):
        p = tmp_path / f"x{ext}"
        p.write_bytes(data)
        with open_recording(p, sample_rate="2.4M") as rec:
            assert rec.sample_rate == 2.4e6 and rec.is_complex
            assert rec.metadata["dtype"] == "ci16_le"
            np.testing.assert_array_equal(rec.read(), expected)
    data, expected = encode("cu8", 64)
    (tmp_path / "rtl.cu8").write_bytes(data)
    with open_recording(tmp_path / "rtl.cu8", sample_rate=1e6) as rec:
        np.testing.assert_array_equal(rec.read(), expected)
    data, expected = encode("cf32_le", 64)
    for ext in (".cf32", ".fc32", ".cfile"):
        (tmp_path / f"y{ext}").write_bytes(data)
        with open_recording(tmp_path / f"y{ext}", sample_rate=1e6) as rec:
            np.testing.assert_array_equal(rec.read(), expected)


@pytest.mark.parametrize("alias,canonical", [
    ("fc32", "cf32_le"), ("cs16", "ci16_le"), ("sc16_be", "ci16_be"), ("cs8", "ci8"),
    ("complex64", "cf32_le"), ("int16", "ri16_le"), (">i2", "ri16_be"), ("<c8", "cf32_le"),
    ("CF32-BE", "cf32_be"), ("uint8", "ru8"),
])
def test_dtype_aliases(alias, canonical):
    assert parse_sample_type(alias)[0].name == canonical


def test_raw_offset_and_string_options(tmp_path):
    data, expected = encode("cf32_le", 100)
    p = tmp_path / "with_header.bin"
    p.write_bytes(b"H" * 40 + data)
    with open_recording(p, dtype="cf32", sample_rate="48k", offset="40",
                        center_frequency="433.92M") as rec:
        assert rec.sample_rate == 48000 and rec.center_frequency == pytest.approx(433.92e6)
        np.testing.assert_array_equal(assert_pieces_equal_whole(rec), expected)
        assert rec.format == "raw cf32_le"


def test_raw_format_option_for_unknown_extension(tmp_path):
    data, expected = encode("ri16_le", 10)
    p = tmp_path / "samples.xyz"
    p.write_bytes(data)
    with pytest.raises(RecordingError, match="format='raw'"):
        open_recording(p)
    with open_recording(p, format="raw", dtype="ri16", sample_rate=8000) as rec:
        np.testing.assert_array_equal(rec.read(), expected)


def test_raw_bad_input(tmp_path):
    p = tmp_path / "capture.iq"
    p.write_bytes(bytes(40))
    with pytest.raises(MissingOption, match=r"does not say how samples are stored; give "
                                           r"dtype= \(e.g. cf32, ") as e:
        open_recording(p, sample_rate=1e6)
    assert "capture.iq" in one_line(e.value)
    assert (e.value.option, e.value.path) == ("dtype", str(p))
    with pytest.raises(MissingOption, match=r"carry no sample rate; give sample_rate=") as e:
        open_recording(p, dtype="cf32")
    assert e.value.option == "sample_rate" and "--" not in str(e.value)
    with pytest.raises(InputError, match=r"dtype='cf33' is not a sample type.*ci16"):
        open_recording(p, dtype="cf33", sample_rate=1)
    with pytest.raises(InputError, match=r"sample_rate=-5.* must be > 0"):
        open_recording(p, dtype="cf32", sample_rate=-5)
    with pytest.raises(InputError, match=r"sample_rate='fast' is not a number"):
        open_recording(p, dtype="cf32", sample_rate="fast")
    with pytest.raises(InputError, match=r"offset=100 is past the end"):
        open_recording(p, dtype="cf32", sample_rate=1, offset=100)
    with pytest.raises(InputError, match=r"offset=-1 must be >= 0"):
        open_recording(p, dtype="cf32", sample_rate=1, offset=-1)
    # the sample rate is never guessed from the file name
    named = tmp_path / "capture_2400000Hz_100MHz.cs16"
    named.write_bytes(bytes(40))
    with pytest.raises(MissingOption, match="give sample_rate="):
        open_recording(named)


def test_raw_truncated_and_empty(tmp_path):
    p = tmp_path / "cut.cs16"
    p.write_bytes(bytes(4 * 10 + 3))
    with pytest.raises(RecordingError, match=r"43 bytes of samples is not a multiple of 4 "
                                             r"bytes \(ci16_le") as e:
        open_recording(p, sample_rate=1e6)
    one_line(e.value)
    empty = tmp_path / "empty.cf32"
    empty.write_bytes(b"")
    with pytest.raises(RecordingError, match="holds no samples"):
        open_recording(empty, sample_rate=1e6)
    one = tmp_path / "one.cf32"
    one.write_bytes(np.array([1 + 2j], np.complex64).tobytes())
    with open_recording(one, sample_rate=1e6) as rec:
        assert rec.n_samples == 1 and rec.read()[0, 0] == 1 + 2j


def rss_mib() -> float:
    """Resident memory now (Linux), else the peak so far."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_raw_large_file_is_read_by_offset(tmp_path):
    p = tmp_path / "huge.cf32"
    size = 200 * 1024 * 1024
    with open(p, "wb") as fh:
        fh.truncate(size)  # sparse: no disk used
    before = rss_mib()
    with open_recording(p, sample_rate=10e6) as rec:
        assert rec.n_samples == size // 8
        assert isinstance(rec._map.segments[0].array, FileArray)  # no map: no SIGBUS
        x = rec.read(rec.n_samples - 4096, rec.n_samples)
        y = rec.read(rec.n_samples // 2, rec.n_samples // 2 + 4096)
        grown = rss_mib() - before
    assert x.shape == y.shape == (4096, 1) and not x.any()
    # memory, not time, says the file was not read whole
    assert grown < 50  # reading all of it would take 200+ MiB


def test_options_that_do_not_apply(tmp_path, stereo_wav):
    wav, _, _ = stereo_wav
    with pytest.raises(InputError, match=r"sample_rate does not apply to WAV files") as e:
        open_recording(wav, sample_rate=8000)
    one_line(e.value)
    with pytest.raises(InputError, match=r"dtype does not apply to WAV files"):
        open_recording(wav, dtype="cf32")
    with open_recording(wav, sample_rate=None, dtype=None) as rec:  # None = not given
        assert rec.n_channels == 2
    npy = tmp_path / "a.npy"
    np.save(npy, np.zeros(10, np.float32))
    with pytest.raises(InputError, match=r"dtype does not apply to NPY files"):
        open_recording(npy, sample_rate=1, dtype="cf32")
    with pytest.raises(InputError, match=r"format='nope' is unknown"):
        open_recording(npy, format="nope")


# -- SigMF -------------------------------------------------------------------------------

def write_sigmf(folder: Path, data: bytes, glob: dict, captures=None, annotations=None,
                name: str = "rec") -> Path:
    (folder / f"{name}.sigmf-data").write_bytes(data)
    meta = {"global": {"core:version": "1.0.0", **glob},
            "captures": [{"core:sample_start": 0}] if captures is None else captures,
            "annotations": annotations or []}
    path = folder / f"{name}.sigmf-meta"
    path.write_text(json.dumps(meta))
    return path


def test_sigmf_metadata_captures_annotations(tmp_path):
    data, expected = encode("ci16_le", 1000, channels=2)
    meta = write_sigmf(
        tmp_path, data,
        {"core:datatype": "ci16_le", "core:sample_rate": 1e6, "core:num_channels": 2},
        captures=[{"core:sample_start": 0, "core:frequency": 915e6,
                   "core:datetime": "2024-05-01T12:00:00.000Z"},
                  {"core:sample_start": 600, "core:frequency": 916e6}],
        annotations=[{"core:sample_start": 100, "core:sample_count": 50,
                      "core:freq_lower_edge": 914.9e6, "core:freq_upper_edge": 915.1e6,
                      "core:label": "burst", "core:comment": "strong"},
                     {"core:sample_start": 900, "core:sample_count": 500}])
    for path in (meta, meta.with_suffix(".sigmf-data")):
        with open_recording(path) as rec:
            assert (rec.n_samples, rec.n_channels, rec.sample_rate) == (1000, 2, 1e6)
            assert rec.is_complex and rec.center_frequency == 915e6
            assert rec.start_time == "2024-05-01T12:00:00.000Z"
            assert rec.path.name == "rec.sigmf-data"
            a = rec.annotations[0]
            assert (a.start_s, a.stop_s, a.freq_low_hz, a.freq_high_hz, a.label,
                    a.comment) == (100e-6, 150e-6, 914.9e6, 915.1e6, "burst", "strong")
            assert rec.annotations[1].stop_s == 1000e-6  # cut at the end
            assert any("past the end" in w for w in rec.warnings)
            assert any("centre frequency changes" in w for w in rec.warnings)
            np.testing.assert_array_equal(assert_pieces_equal_whole(rec), expected)
            info = rec.info()
            assert info["start_time"] and info["annotations"][0]["label"] == "burst"


def test_sigmf_big_endian_header_and_trailing_bytes(tmp_path):
    a, ea = encode("cf32_be", 300)
    b, eb = encode("cf32_be", 200)
    data = b"H" * 16 + a + b"h" * 8 + b + b"T" * 12
    meta = write_sigmf(tmp_path, data,
                       {"core:datatype": "cf32_be", "core:sample_rate": 48000,
                        "core:trailing_bytes": 12},
                       captures=[{"core:sample_start": 0, "core:header_bytes": 16},
                                 {"core:sample_start": 300, "core:header_bytes": 8}])
    with open_recording(meta) as rec:
        assert rec.n_samples == 500 and rec.dtype == np.complex64
        whole = assert_pieces_equal_whole(rec, bounds=(0, 299, 301, 450))
    np.testing.assert_array_equal(whole, np.concatenate([ea, eb]))


def test_sigmf_real_and_unsigned(tmp_path):
    data, expected = encode("ru8", 50)
    meta = write_sigmf(tmp_path, data, {"core:datatype": "ru8", "core:sample_rate": 8000})
    with open_recording(meta) as rec:
        assert not rec.is_complex and rec.center_frequency is None and rec.start_time is None
        np.testing.assert_array_equal(rec.read(), expected)


def test_sigmf_sample_rate_missing_or_overridden(tmp_path):
    meta = write_sigmf(tmp_path, bytes(80), {"core:datatype": "cf32_le"})
    with pytest.raises(MissingOption, match=r"core:sample_rate is missing; give sample_rate=") \
            as e:
        open_recording(meta)
    assert e.value.option == "sample_rate"
    with open_recording(meta, sample_rate=2e6, center_frequency=1e9) as rec:
        assert rec.sample_rate == 2e6 and rec.center_frequency == 1e9
        assert rec.metadata["sample_rate_source"] == "option"


@pytest.mark.parametrize("glob,captures,match", [
    ({"core:sample_rate": 1}, None, r"core:datatype is missing"),
    ({"core:datatype": "cf33_le", "core:sample_rate": 1}, None,
     r"core:datatype='cf33_le' is not a sample type"),
    ({"core:datatype": "cf32_le", "core:sample_rate": -1}, None,
     r"core:sample_rate=-1 must be a number > 0"),
    ({"core:datatype": "cf32_le", "core:sample_rate": 1, "core:num_channels": 0}, None,
     r"core:num_channels=0"),
    ({"core:datatype": "cf32_le", "core:sample_rate": 1},
     [{"core:sample_start": 5}, {"core:sample_start": 2}], r"captures are not sorted"),
    ({"core:datatype": "cf32_le", "core:sample_rate": 1},
     [{"core:sample_start": -3}], r"core:sample_start=-3"),
    ({"core:datatype": "ci16_le", "core:sample_rate": 1}, None, r"not a multiple of 4"),
    ({"core:datatype": "cf32_le", "core:sample_rate": 1, "core:metadata_only": True}, None,
     r"metadata only"),
])
def test_sigmf_invalid_metadata(tmp_path, glob, captures, match):
    meta = write_sigmf(tmp_path, bytes(8 * 10 + 2 * ("ci16" in str(glob))), glob, captures)
    with pytest.raises(RecordingError, match=match) as e:
        open_recording(meta)
    assert "rec.sigmf" in one_line(e.value)


def test_sigmf_broken_files(tmp_path):
    meta = tmp_path / "bad.sigmf-meta"
    (tmp_path / "bad.sigmf-data").write_bytes(bytes(8))
    meta.write_text('{"global": {"core:datatype": "cf32_le",, }')
    with pytest.raises(RecordingError, match=r"bad.sigmf-meta: .*invalid JSON at line 1") as e:
        open_recording(meta)
    one_line(e.value)
    meta.write_text("[1, 2]")
    with pytest.raises(RecordingError, match=r"top level must be a JSON object"):
        open_recording(meta)
    meta.write_text('{"captures": []}')
    with pytest.raises(RecordingError, match=r"no \"global\" object"):
        open_recording(meta)
    lone = write_sigmf(tmp_path, bytes(8), {"core:datatype": "cf32_le",
                                            "core:sample_rate": 1}, name="lone")
    (tmp_path / "lone.sigmf-data").unlink()
    with pytest.raises(RecordingError, match=r"data file lone.sigmf-data is missing"):
        open_recording(lone)
    (tmp_path / "orphan.sigmf-data").write_bytes(bytes(8))
    with pytest.raises(RecordingError, match=r"metadata file orphan.sigmf-meta is missing"):
        open_recording(tmp_path / "orphan.sigmf-data")


def test_sigmf_checksum_checked_on_request(tmp_path):
    data, _ = encode("cf32_le", 64)
    good = hashlib.sha512(data).hexdigest()
    meta = write_sigmf(tmp_path, data, {"core:datatype": "cf32_le", "core:sample_rate": 1,
                                        "core:sha512": good})
    with open_recording(meta) as rec:
        assert rec.verify_checksum() is True
    meta = write_sigmf(tmp_path, data, {"core:datatype": "cf32_le", "core:sample_rate": 1,
                                        "core:sha512": "0" * 128}, name="wrong")
    # opening does not read the whole file; verifying does
    with open_recording(meta) as rec, pytest.raises(RecordingError, match="SHA-512 does not"):
        rec.verify_checksum()


def test_sigmf_datatype_without_byte_order_warns(tmp_path):
    data, expected = encode("ci16_le", 20)
    meta = write_sigmf(tmp_path, data, {"core:datatype": "ci16", "core:sample_rate": 1})
    with open_recording(meta) as rec:
        assert any("byte order" in w for w in rec.warnings)
        np.testing.assert_array_equal(rec.read(), expected)


# -- HDF5 --------------------------------------------------------------------------------

def test_hdf5_single_dataset_opens_without_naming_it(tmp_path):
    x = (RNG.standard_normal(1000) + 1j * RNG.standard_normal(1000)).astype(np.complex64)
    p = tmp_path / "iq.h5"
    with h5py.File(p, "w") as f:
        ds = f.create_dataset("capture/iq", data=x, chunks=(128,))
        ds.attrs["sample_rate"] = 2e6
        ds.attrs["units"] = "V"
        f["capture"].attrs["center_frequency"] = 433.9e6
        f.attrs["start_time"] = "2024-01-02T03:04:05Z"
    with open_recording(p) as rec:
        assert rec.is_complex and rec.sample_rate == 2e6 and rec.center_frequency == 433.9e6
        assert rec.units == "V" and rec.start_time == "2024-01-02T03:04:05Z"
        assert rec.metadata["dataset"] == "/capture/iq"
        np.testing.assert_array_equal(assert_pieces_equal_whole(rec)[:, 0], x)


def make_multi(p: Path) -> None:
    with h5py.File(p, "w") as f:
        f.attrs["fs"] = 1000.0
        f.create_dataset("a", data=np.arange(100, dtype=np.float64))
        g = f.create_group("grp")
        g.create_dataset("b", data=np.arange(200, dtype=np.int16).reshape(100, 2))
        g.create_dataset("chfirst", data=np.arange(4000, dtype=np.float32).reshape(4, 1000))
        f.create_dataset("text", data="hello")


def test_hdf5_several_datasets(tmp_path):
    p = tmp_path / "multi.h5"
    make_multi(p)
    with pytest.raises(MissingOption, match=r"holds 3 datasets; pick one with dataset= or "
                                           r"multi.h5:NAME, one of: /a \(100 float64\).*"
                                           r"/grp/b \(100x2 int16\)") as e:
        open_recording(p)
    assert (e.value.option, e.value.choices) == ("dataset", ("/a", "/grp/b", "/grp/chfirst"))
    assert e.value.labels[0] == "/a (100 float64)"
    with open_recording(f"{p}:/grp/b") as rec:
        assert (rec.n_samples, rec.n_channels, rec.sample_rate) == (100, 2, 1000.0)
        whole = assert_pieces_equal_whole(rec)
        np.testing.assert_array_equal(whole, np.arange(200).reshape(100, 2))  # not scaled
    with open_recording(p, dataset="grp/chfirst") as rec:  # wider than tall: channels first
        assert (rec.n_samples, rec.n_channels) == (1000, 4)
        np.testing.assert_array_equal(assert_pieces_equal_whole(rec),
                                      np.arange(4000).reshape(4, 1000).T)
    with open_recording(p, dataset="/a", sample_rate=5) as rec:
        assert rec.sample_rate == 5 and rec.metadata["sample_rate_source"] == "option"
    with pytest.raises(InputError, match=r"no dataset '/nope'; datasets: /a"):
        open_recording(p, dataset="/nope")
    with pytest.raises(InputError, match=r"'/grp' is a group"):
        open_recording(p, dataset="/grp")
    with pytest.raises(RecordingError, match=r"/text holds .* not numbers"):
        open_recording(p, dataset="/text")
    with pytest.raises(InputError, match=r"names dataset '/a' and dataset='/grp/b'"):
        open_recording(f"{p}:/a", dataset="/grp/b")
    infos = {i.path: i for i in list_datasets(p)}
    assert infos["/a"].plausible and infos["/a"].sample_rate == 1000.0
    assert not infos["/text"].plausible and infos["/grp/b"].shape == (100, 2)


def test_hdf5_sample_rate_required_or_from_time_scale(tmp_path):
    p = tmp_path / "norate.hdf5"
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=np.ones(50, np.float32))
    with pytest.raises(MissingOption, match=r"no sample rate attribute.*give sample_rate=") \
            as e:
        open_recording(p)
    assert e.value.option == "sample_rate"
    with open_recording(p, sample_rate=100) as rec:
        assert rec.sample_rate == 100 and rec.units == "a.u."
    p2 = tmp_path / "scaled.h5"
    with h5py.File(p2, "w") as f:
        sig = f.create_dataset("signal", data=np.ones((64, 2), np.float32))
        t = f.create_dataset("time", data=np.arange(64) / 250.0)
        t.make_scale("time")
        sig.dims[0].attach_scale(t)
    with open_recording(p2) as rec:  # the time scale is not a candidate; it gives fs
        assert rec.sample_rate == pytest.approx(250.0) and rec.n_channels == 2


def test_hdf5_signal_that_states_its_rate_wins(tmp_path):
    p = tmp_path / "export_like.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("signal", data=np.ones((100, 2), np.float32)).attrs["sample_rate"] = 8e3
        f.create_dataset("filters/b", data=np.ones(31))
        f.create_dataset("provenance/coefficients", data=np.ones(5))
    with open_recording(p) as rec:
        assert rec.metadata["dataset"] == "/signal" and rec.sample_rate == 8e3


def test_hdf5_spectrogram_export_is_not_a_signal(tmp_path, stereo_wav):
    from specscope.compute import StftParams, export_spectrogram

    wav, _, _ = stereo_wav
    out = tmp_path / "spec.h5"
    with open_recording(wav) as rec:
        export_spectrogram(rec, out, StftParams(nfft=256, hop=128))
    with pytest.raises(RecordingError, match="spectrogram export; it holds no signal"):
        open_recording(out)


def test_hdf5_compound_complex(tmp_path):
    x = (RNG.standard_normal(64) + 1j * RNG.standard_normal(64))
    dt = np.dtype([("real", ">f8"), ("imag", ">f8")])
    arr = np.empty(64, dt)
    arr["real"], arr["imag"] = x.real, x.imag
    p = tmp_path / "compound.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("iq", data=arr).attrs["samplerate"] = 10.0
    with open_recording(p) as rec:
        assert rec.is_complex and rec.sample_rate == 10.0
        np.testing.assert_allclose(assert_pieces_equal_whole(rec)[:, 0], x, rtol=1e-6)


def test_hdf5_external_link_is_not_followed(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    with h5py.File(outside / "secret.h5", "w") as f:
        f.create_dataset("data", data=np.ones(10)).attrs["fs"] = 1.0
    p = tmp_path / "links.h5"
    with h5py.File(p, "w") as f:
        f["ext"] = h5py.ExternalLink(str(outside / "secret.h5"), "/data")
    with pytest.raises(RecordingError, match=r"no 1-D or 2-D numeric signal.*not followed"):
        open_recording(p)
    with pytest.raises(RecordingError, match=r"/ext is an external link .* not followed"):
        open_recording(p, dataset="/ext")


def test_hdf5_truncated_and_not_hdf5(tmp_path):
    p = tmp_path / "good.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=np.ones(20000)).attrs["fs"] = 1.0
    cut = tmp_path / "cut.h5"
    cut.write_bytes(p.read_bytes()[:3000])
    with pytest.raises(RecordingError, match=r"cut.h5: ") as e:
        rec = open_recording(cut)
        rec.read()
    one_line(e.value)
    junk = tmp_path / "junk.h5"
    junk.write_bytes(b"not hdf5 at all" * 10)
    with pytest.raises(RecordingError, match=r"junk.h5: not a readable HDF5 file"):
        open_recording(junk)


def test_hdf5_missing_filter_plugin(tmp_path, monkeypatch):
    p = tmp_path / "gz.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=np.ones(100), compression="gzip").attrs["fs"] = 1.0
    monkeypatch.setattr(h5py.h5z, "filter_avail", lambda code: code != h5py.h5z.FILTER_DEFLATE)
    with pytest.raises(RecordingError, match=r"HDF5 filter 1 .*plugin is not installed"):
        open_recording(p)


# -- NumPy and MATLAB --------------------------------------------------------------------

def test_npy_read_by_offset(tmp_path):
    x = (RNG.standard_normal((300, 2)) + 1j * RNG.standard_normal((300, 2))).astype(">c8")
    p = tmp_path / "iq.npy"
    np.save(p, x)
    with open_recording(p, sample_rate=1e3, center_frequency=5e3) as rec:
        assert isinstance(rec._arr, FileArray)
        assert rec.is_complex and (rec.n_samples, rec.n_channels) == (300, 2)
        assert rec.center_frequency == 5e3
        np.testing.assert_array_equal(assert_pieces_equal_whole(rec), x.astype(np.complex64))
    with pytest.raises(MissingOption, match=r"iq.npy: .npy files carry no sample rate; "
                                           r"give sample_rate="):
        open_recording(p)


def test_npy_bad_input(tmp_path):
    p = tmp_path / "obj.npy"
    np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(RecordingError, match="Python objects"):
        open_recording(p, sample_rate=1)
    p = tmp_path / "cube.npy"
    np.save(p, np.zeros((2, 3, 4)))
    with pytest.raises(RecordingError, match=r"3-D"):
        open_recording(p, sample_rate=1)
    good = tmp_path / "good.npy"
    np.save(good, np.zeros(1000))
    cut = tmp_path / "cut.npy"
    cut.write_bytes(good.read_bytes()[:500])
    with pytest.raises(RecordingError, match=r"cut.npy: not a readable .npy file") as e:
        open_recording(cut, sample_rate=1)
    one_line(e.value)


def test_mat_v5(tmp_path):
    x = RNG.standard_normal((500, 2))
    z = (RNG.standard_normal(300) + 1j * RNG.standard_normal(300)).astype(np.complex64)
    p = tmp_path / "rec.mat"
    scipy.io.savemat(p, {"x": x, "fs": 8000.0, "label": "hi"})
    with open_recording(p) as rec:
        assert rec.format == "MAT v5" and rec.sample_rate == 8000
        np.testing.assert_allclose(assert_pieces_equal_whole(rec), x, rtol=1e-6)
    p2 = tmp_path / "two.mat"
    scipy.io.savemat(p2, {"x": x, "z": z})
    with pytest.raises(MissingOption, match=r"holds 2 signals; pick one with variable= or "
                                           r"two.mat:NAME, one of: x \(500x2 double\)") as e:
        open_recording(p2, sample_rate=1)
    assert (e.value.option, sorted(e.value.choices)) == ("variable", ["x", "z"])
    with pytest.raises(MissingOption, match=r"no sample rate variable.*give sample_rate="):
        open_recording(p2, variable="x")
    with open_recording(f"{p2}:z", sample_rate=1e6) as rec:  # saved as 1x300 row
        assert rec.is_complex and (rec.n_samples, rec.n_channels) == (300, 1)
        np.testing.assert_array_equal(assert_pieces_equal_whole(rec)[:, 0], z)
    with pytest.raises(InputError, match=r"no variable 'q'"):
        open_recording(p2, dataset="q", sample_rate=1)
    junk = tmp_path / "junk.mat"
    junk.write_bytes(b"MATLAB 5.0 MAT-file" + bytes(20))
    with pytest.raises(RecordingError, match=r"junk.mat: ") as e:
        open_recording(junk, sample_rate=1)
    one_line(e.value)


def test_mat_v5_damaged_sizes_give_a_message_not_a_crash(tmp_path):
    # scipy's compiled reader can crash on tags that disagree with the dimensions
    p = tmp_path / "damaged.mat"
    scipy.io.savemat(p, {"x": np.ones(100)}, do_compression=False)
    raw = bytearray(p.read_bytes())
    assert int.from_bytes(raw[176:180], "little") == 9  # miDOUBLE tag of x's data
    raw[180:184] = (8 * 1000).to_bytes(4, "little")
    p.write_bytes(bytes(raw))
    with pytest.raises(RecordingError, match=r"damaged.mat: damaged MATLAB file") as e:
        open_recording(p, sample_rate=1)
    one_line(e.value)
    p.write_bytes(bytes(raw[:150]))
    with pytest.raises(RecordingError, match=r"damaged.mat: "):
        open_recording(p, sample_rate=1)


def write_mat73(p: Path, variables: dict[str, np.ndarray]) -> None:
    """A MATLAB v7.3 file as MATLAB writes it: HDF5 with a 512-byte header, transposed."""
    with h5py.File(p, "w", userblock_size=512) as f:
        for name, value in variables.items():
            v = np.atleast_2d(value).T  # MATLAB is column-major
            if np.iscomplexobj(v):
                arr = np.empty(v.shape, [("real", "<f8"), ("imag", "<f8")])
                arr["real"], arr["imag"] = v.real, v.imag
                v = arr
            ds = f.create_dataset(name, data=v)
            ds.attrs["MATLAB_class"] = np.bytes_("double")
        refs = f.create_group("#refs#")
        refs.create_dataset("a", data=np.zeros(5))
    with open(p, "r+b") as fh:
        fh.write(b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 2024")


def test_mat_v73(tmp_path):
    z = RNG.standard_normal(400) + 1j * RNG.standard_normal(400)
    x = RNG.standard_normal((400, 3))
    p = tmp_path / "big.mat"
    write_mat73(p, {"z": z, "Fs": np.array(2.5e6)})
    with open_recording(p) as rec:
        assert rec.format == "MAT v7.3" and rec.sample_rate == 2.5e6 and rec.is_complex
        np.testing.assert_allclose(assert_pieces_equal_whole(rec)[:, 0], z, rtol=1e-6)
    p2 = tmp_path / "two73.mat"
    write_mat73(p2, {"z": z, "x": x})
    with pytest.raises(MissingOption, match=r"pick one with variable=") as e:
        open_recording(p2, sample_rate=1)
    assert (e.value.option, sorted(e.value.choices)) == ("variable", ["/x", "/z"])
    for choice in e.value.choices:  # each choice opens as it is given
        with open_recording(p2, variable=choice, sample_rate=1) as rec:
            assert rec.n_channels == (3 if choice == "/x" else 1)
    with open_recording(p2, variable="x", sample_rate=1) as rec:
        assert (rec.n_samples, rec.n_channels) == (400, 3)
        np.testing.assert_allclose(rec.read(), x, rtol=1e-6)


# -- audio through soundfile ------------------------------------------------------------

AUDIO_CASES = [
    # (file name, soundfile format, subtype, tolerance)
    ("u8.wav", "WAV", "PCM_U8", 1 / 127),
    ("s16.wav", "WAV", "PCM_16", 1 / 32767),
    ("s24.wav", "WAV", "PCM_24", 2 ** -22),
    ("s32.wav", "WAV", "PCM_32", 2 ** -23),
    ("float.wav", "WAV", "FLOAT", 0.0),
    ("double.wav", "WAV", "DOUBLE", 1e-7),
    ("extensible.wav", "WAVEX", "PCM_24", 2 ** -22),
    ("rf64.wav", "RF64", "PCM_16", 1 / 32767),
    ("big.w64", "W64", "FLOAT", 0.0),
    ("s16.flac", "FLAC", "PCM_16", 1 / 32767),
    ("s24.flac", "FLAC", "PCM_24", 2 ** -22),
    ("s16.aiff", "AIFF", "PCM_16", 1 / 32767),
    ("float.aiff", "AIFF", "FLOAT", 0.0),
]


@pytest.mark.parametrize("name,fmt,subtype,tol", AUDIO_CASES)
def test_audio_formats_read_back(tmp_path, name, fmt, subtype, tol):
    fs = 22050
    x = (0.8 * RNG.uniform(-1, 1, (4000, 2))).astype(np.float32)
    p = tmp_path / name
    soundfile.write(str(p), x, fs, format=fmt, subtype=subtype)
    with open_recording(p) as rec:
        assert rec.format == fmt and rec.metadata["subtype"] == subtype
        assert (rec.n_samples, rec.n_channels, rec.sample_rate) == (4000, 2, fs)
        whole = assert_pieces_equal_whole(rec)
    np.testing.assert_allclose(whole, x, rtol=0, atol=tol * 1.01 + 1e-9)


def test_audio_ogg_vorbis(tmp_path):
    fs = 22050
    t = np.arange(fs) / fs
    x = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    p = tmp_path / "tone.ogg"
    soundfile.write(str(p), x, fs, format="OGG", subtype="VORBIS")
    with open_recording(p) as rec:
        assert rec.format == "OGG" and rec.sample_rate == fs
        y = assert_pieces_equal_whole(rec)[:, 0]
    n = min(len(x), len(y))
    err = y[:n] - x[:n]
    snr_db = 10 * np.log10(np.sum(x[:n] ** 2) / np.sum(err ** 2))
    assert snr_db > 20  # lossy, but the same signal


def test_audio_truncated_or_corrupt_header(tmp_path):
    good = tmp_path / "good.wav"
    soundfile.write(str(good), np.zeros(1000, np.float32), 8000, subtype="PCM_16")
    raw = good.read_bytes()
    cut = tmp_path / "cut.wav"
    cut.write_bytes(raw[:20])
    with pytest.raises(RecordingError, match=r"cut.wav: not a readable audio file") as e:
        open_recording(cut)
    one_line(e.value)
    bad = tmp_path / "badfmt.wav"
    bad.write_bytes(raw[:12] + b"junk" + raw[16:])
    with pytest.raises(RecordingError, match=r"badfmt.wav: ") as e:
        open_recording(bad)
    one_line(e.value)
