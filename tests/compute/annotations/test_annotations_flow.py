"""Annotations flow from recordings into every export, detector results and pipeline runs.

The source is a two-channel SigMF recording (1000 Hz, 4000 samples) with four
annotations: a band on all channels, one on channel 1, a zero-length event on
channel 0 and a time-only one at the end.  Each export must carry those inside
its range and channels, cut to the range and shifted to its first sample,
readable with plain h5py and with ``read_annotations``.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest
from specscope.compute import extensions, operators
from specscope.compute.annotations import (
    TABLE_FORMAT,
    Annotation,
    clip_annotations,
    read_annotations,
    write_annotations,
)
from specscope.compute.batch import process_file, rerun, run_batch
from specscope.compute.errors import InputError, RecordingError
from specscope.compute.filters import FilterSpec
from specscope.compute.io import open_recording
from specscope.compute.output import (
    export_range,
    export_recording,
    export_spectrogram,
    filter_recording,
    label_path,
    write_display_image,
)
from specscope.compute.pipeline import Pipeline
from specscope.compute.spectral import StftParams
from specscope.compute.view import DisplayImage

FS = 1000.0
N = 4000
A = Annotation(0.5, 1.5, 100.0, 200.0, label="a", comment="first", generator="person")
B = Annotation(1.8, 2.6, label="b", generator="", channel=1)
C = Annotation(3.0, 3.0, label="c", generator="onsets.detect", channel=0)
D = Annotation(3.5, 4.0, label="d", comment="to the end")
SOURCE = (A, B, C, D)
FIR = {"op": "filter", "params": {"design": "firwin", "numtaps": 31, "cutoff": 200.0,
                                  "btype": "lowpass"}}


@pytest.fixture
def sigmf_rec(tmp_path) -> Path:
    x = (np.random.default_rng(3).standard_normal((N, 2)) * 0.1).astype("<f4")
    (tmp_path / "src.sigmf-data").write_bytes(x.tobytes())
    meta = tmp_path / "src.sigmf-meta"
    meta.write_text(json.dumps({
        "global": {"core:datatype": "rf32_le", "core:sample_rate": FS,
                   "core:num_channels": 2, "core:version": "1.0.0"},
        "captures": [{"core:sample_start": 0}], "annotations": []}))
    write_annotations(meta, SOURCE)
    return meta


def expect(path: Path, offset: float, rows: list[tuple[Annotation, float, float, int | None]]
           ) -> None:
    """``path``'s table holds ``rows`` (source annotation, start, stop, output channel)."""
    with h5py.File(path, "r") as f:
        g = f["annotations"]
        assert g.attrs["format"] == TABLE_FORMAT
        assert g.attrs["time_offset"] == pytest.approx(offset, abs=1e-12)
        for name in ("start_s", "stop_s", "freq_low_hz", "freq_high_hz", "label", "comment",
                     "uuid", "generator", "channel"):
            assert g[name].shape == (len(rows),) and g[name].dims[0].label == "annotation"
        np.testing.assert_allclose(g["start_s"][...], [r[1] for r in rows], atol=1e-12)
        np.testing.assert_allclose(g["stop_s"][...], [r[2] for r in rows], atol=1e-12)
        lows = [math.nan if r[0].freq_low_hz is None else r[0].freq_low_hz for r in rows]
        np.testing.assert_array_equal(g["freq_low_hz"][...], lows)
        assert g["channel"][...].tolist() == [-1 if r[3] is None else r[3] for r in rows]
        assert g["label"].asstr()[...].tolist() == [r[0].label for r in rows]
        assert g["uuid"].asstr()[...].tolist() == [r[0].uuid for r in rows]
        assert g["generator"].asstr()[...].tolist() == [r[0].generator for r in rows]
    back = read_annotations(path)
    assert len(back) == len(rows)
    for got, (src, start, stop, channel) in zip(back, rows, strict=True):
        assert got == src.replace(start_s=got.start_s, stop_s=got.stop_s, channel=channel)
        assert (got.start_s, got.stop_s) == pytest.approx((start, stop), abs=1e-12)


# -- recordings -------------------------------------------------------------------------------


def test_sigmf_recording_gives_the_annotations_of_its_meta(sigmf_rec):
    with open_recording(sigmf_rec) as rec:
        assert all(isinstance(a, Annotation) for a in rec.annotations)
        assert rec.annotations == read_annotations(sigmf_rec)
        assert rec.annotations == list(SOURCE)
        assert rec.info()["annotations"][1] == B.to_dict()


def test_sigmf_reader_mends_segments_with_warnings(tmp_path):
    (tmp_path / "w.sigmf-data").write_bytes(np.zeros(100, "<f4").tobytes())
    (tmp_path / "w.sigmf-meta").write_text(json.dumps({
        "global": {"core:datatype": "rf32_le", "core:sample_rate": 100.0,
                   "core:version": "1.0.0"},
        "captures": [{"core:sample_start": 0}],
        "annotations": [{"core:sample_start": 500, "core:sample_count": 1},
                        {"core:sample_start": 90, "core:sample_count": 50, "core:label": "cut"},
                        {"core:sample_start": 10, "core:freq_lower_edge": 30.0,
                         "core:freq_upper_edge": 20.0, "core:label": "swapped"},
                        {"core:sample_start": 5, "core:sample_count": 1, "core:label": 7}]}))
    with open_recording(tmp_path / "w.sigmf-meta") as rec:
        cut, swapped = rec.annotations
        assert (cut.label, cut.start_s, cut.stop_s) == ("cut", 0.9, 1.0)
        assert (swapped.start_s, swapped.stop_s) == (0.1, 1.0)  # no count: to the end
        assert (swapped.freq_low_hz, swapped.freq_high_hz) == (20.0, 30.0)
        text = "\n".join(rec.warnings)
        for words in ("starts at sample 500, past the end", "runs past the end; cut",
                      "swapped", "core:label=7 must be a string"):
            assert words in text


def test_clip_annotations_cuts_shifts_and_maps_channels():
    got = clip_annotations(SOURCE, 1.0, 3.2, channels=[1])
    assert [(a.label, a.start_s, a.stop_s, a.channel) for a in got] == [
        ("a", 0.0, 0.5, None), ("b", pytest.approx(0.8), pytest.approx(1.6), 0)]
    assert got[0].uuid == A.uuid and got[0].comment == "first"
    # a zero-length annotation counts when it lies in [start, stop)
    assert [a.label for a in clip_annotations(SOURCE, 3.0, 3.5)] == ["c"]
    assert [a.label for a in clip_annotations(SOURCE, 2.6, 3.0)] == []


# -- HDF5 exports ------------------------------------------------------------------------------


def test_range_export_signal_carries_the_range(sigmf_rec, tmp_path):
    out = export_range(sigmf_rec, tmp_path / "r.h5", start=1000, stop=3200, channels=[1])
    expect(out, 1.0, [(A, 0.0, 0.5, None), (B, 0.8, 1.6, 0)])
    out = export_range(sigmf_rec, tmp_path / "all.h5", pipeline=Pipeline.from_steps([FIR]),
                       start=1000, stop=3200)
    expect(out, 1.0, [(A, 0.0, 0.5, None), (B, 0.8, 1.6, 1), (C, 2.0, 2.0, 0)])
    # the output opens as a recording whose sample 0 is the table's time 0
    with h5py.File(out, "r") as f:
        assert f["time"][0] == pytest.approx(f["annotations"].attrs["time_offset"])


def test_range_export_spectrogram_starts_at_its_first_frame(sigmf_rec, tmp_path):
    stft = {"op": "spectrogram", "params": {"nfft": 256, "hop": 128}}
    out = export_range(sigmf_rec, tmp_path / "s.h5", pipeline=Pipeline.from_steps([stft]),
                       start=1000, stop=3200, channels=[0])
    with h5py.File(out, "r") as f:
        assert f.attrs["range_first"] == 1024
    # frames 8..23 cover samples 1024..3200
    expect(out, 1.024, [(A, 0.0, 0.476, None), (C, 1.976, 1.976, 0)])


def test_spectrogram_export_carries_its_channel(sigmf_rec, tmp_path):
    with open_recording(sigmf_rec) as rec:
        out = export_spectrogram(rec, tmp_path / "spec.h5", StftParams(256, 128), channel=1)
    # 30 frames of 256 every 128 cover 0..3968
    expect(out, 0.0, [(A, 0.5, 1.5, None), (B, 1.8, 2.6, 0), (D, 3.5, 3.968, None)])


def test_export_recording_and_filtered_export(sigmf_rec, tmp_path):
    with open_recording(sigmf_rec) as rec:
        out = export_recording(Pipeline.from_steps([FIR]), rec, tmp_path / "p.h5", channel=0)
    expect(out, 0.0, [(A, 0.5, 1.5, None), (C, 3.0, 3.0, 0), (D, 3.5, 4.0, None)])
    spec = FilterSpec(design="butter", order=2, cutoff=100.0, btype="lowpass")
    out = filter_recording(spec, sigmf_rec, tmp_path / "f.h5")
    expect(out, 0.0, [(A, 0.5, 1.5, None), (B, 1.8, 2.6, 1), (C, 3.0, 3.0, 0),
                      (D, 3.5, 4.0, None)])


def test_display_image_starts_at_its_first_column(sigmf_rec, tmp_path):
    image = DisplayImage(np.zeros((5, 11), np.float32), np.linspace(0.9, 3.1, 12),
                         np.linspace(0.0, 500.0, 6), 0, 1.0, "mean", False)
    with open_recording(sigmf_rec) as rec:
        out = write_display_image(image, tmp_path / "view.h5", rec, StftParams(256, 128),
                                  channel=1)
    expect(out, 0.9, [(A, 0.0, 0.6, None), (B, 0.9, 1.7, 0)])


def test_unannotated_recording_gives_an_empty_table(tmp_path):
    import soundfile

    soundfile.write(str(tmp_path / "x.wav"), np.zeros(2000, np.float32), 1000)
    out = export_range(tmp_path / "x.wav", tmp_path / "x.h5")
    expect(out, 0.0, [])
    assert read_annotations(out) == []


def test_table_reads_in_xarray(sigmf_rec, tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    out = export_range(sigmf_rec, tmp_path / "x.h5")
    with xr.open_dataset(out, engine="h5netcdf", group="annotations") as ds:
        assert ds["start_s"].dims == ("annotation",)
        assert list(ds["label"].values) == ["a", "b", "c", "d"]
        np.testing.assert_allclose(ds["stop_s"].values, [1.5, 2.6, 3.0, 4.0])


def test_hdf5_format_writes_into_an_existing_file(sigmf_rec, tmp_path):
    out = export_range(sigmf_rec, tmp_path / "e.h5", start=1000, stop=3200)
    with h5py.File(out, "r") as f:
        signal = f["signal"][...]
    mine = [Annotation(0.25, 0.5, label="new", channel=1)]
    write_annotations(out, mine)
    assert read_annotations(out) == mine
    with h5py.File(out, "r") as f:
        np.testing.assert_array_equal(f["signal"][...], signal)
        assert f["annotations"].attrs["time_offset"] == 1.0
    fresh = write_annotations(tmp_path / "only.h5", mine)
    assert read_annotations(fresh) == mine
    (tmp_path / "text.h5").write_text("not hdf5")
    with pytest.raises(RecordingError, match="not an HDF5 file"):
        read_annotations(tmp_path / "text.h5")
    with h5py.File(tmp_path / "bad.h5", "w") as f:
        g = f.create_group("annotations")
        g["start_s"], g["stop_s"] = [1.0, 2.0], [0.5, 3.0]
    with pytest.raises(InputError, match="row 0"):
        read_annotations(tmp_path / "bad.h5")


# -- SigMF and audio range exports --------------------------------------------------------------


def test_sigmf_range_export_meta_holds_them_and_validates(sigmf_rec, tmp_path):
    sigmf = pytest.importorskip("sigmf")
    out = export_range(sigmf_rec, tmp_path / "cut.sigmf-meta", start=1000, stop=3200)
    doc = json.loads(out.read_text())
    segs = doc["annotations"]
    assert [(s["core:sample_start"], s["core:sample_count"], s.get("core:label"))
            for s in segs] == [(0, 500, "a"), (800, 800, "b"), (2000, 0, "c")]
    assert segs[1]["specscope:channel"] == 1 and segs[2]["core:generator"] == "onsets.detect"
    assert segs[0]["core:freq_lower_edge"] == 100.0 and segs[0]["core:uuid"] == A.uuid
    assert any(e["name"] == "specscope" for e in doc["global"]["core:extensions"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every namespace used is declared
        sigmf.validate.validate(doc)
    with open_recording(out) as rec:
        assert rec.annotations == read_annotations(out)
        assert [(a.label, a.uuid) for a in rec.annotations] == [
            ("a", A.uuid), ("b", B.uuid), ("c", C.uuid)]


def test_audio_range_export_writes_an_audacity_label_file(sigmf_rec, tmp_path):
    out = export_range(sigmf_rec, tmp_path / "cut.wav", start=1000, stop=3200)
    labels = label_path(out)
    assert labels == tmp_path / "cut.labels.txt"
    got = read_annotations(labels)
    assert [(a.label, a.start_s, a.stop_s, a.freq_low_hz) for a in got] == [
        ("a", 0.0, 0.5, 100.0), ("b", 0.8, 1.6, None), ("c", 2.0, 2.0, None)]
    # a range without annotations empties the file of an earlier export
    export_range(sigmf_rec, tmp_path / "cut.wav", start=0, stop=400)
    assert read_annotations(labels) == []
    import soundfile

    soundfile.write(str(tmp_path / "plain.wav"), np.zeros(100, np.float32), 1000)
    export_range(tmp_path / "plain.wav", tmp_path / "plain_out.flac")
    assert not label_path(tmp_path / "plain_out.flac").exists()


# -- detectors and pipeline runs ----------------------------------------------------------------


def test_onsets_plugin_events_become_annotations(tmp_path):
    fs = 8000.0
    x = 0.01 * np.random.default_rng(5).standard_normal(16000)
    clicks = [3000, 9001, 12345]
    x[clicks] += 1.0
    ev = operators.call("onsets.detect", x, fs=fs)
    notes = extensions.events_to_annotations(ev, fs=fs, generator="onsets.detect", channel=0)
    assert all(isinstance(a, Annotation) for a in notes)
    assert [a.start_s for a in notes] == [c / fs for c in clicks]
    assert all(a.stop_s == a.start_s and a.generator == "onsets.detect" and a.channel == 0
               and a.label == "onset" and a.comment.startswith("strength=") for a in notes)
    assert notes[1].extra["sample"] == 9001 and notes[1].extra["strength"] == 1.0
    # the same run gives the same annotations (uuids included)
    assert extensions.events_to_annotations(ev, fs=fs, generator="onsets.detect",
                                            channel=0) == notes
    # they travel through every format that carries generators
    write_annotations(tmp_path / "onsets.h5", notes)
    assert read_annotations(tmp_path / "onsets.h5") == notes
    write_annotations(tmp_path / "onsets.sigmf-meta", notes, sample_rate=fs)
    assert read_annotations(tmp_path / "onsets.sigmf-meta") == notes
    with pytest.raises(InputError, match="fs="):
        extensions.events_to_annotations(ev, fs=0.0)


@pytest.mark.parametrize("task_samples", [0, 1000])
def test_batch_run_outputs_carry_the_input_annotations(sigmf_rec, tmp_path, task_samples):
    summary = run_batch(Pipeline.from_steps([FIR]), [sigmf_rec], tmp_path / "out",
                        task_samples=task_samples)
    assert summary.ok
    out = Path(summary.results[0].output)
    expect(out, 0.0, [(A, 0.5, 1.5, None), (B, 1.8, 2.6, 1), (C, 3.0, 3.0, 0),
                      (D, 3.5, 4.0, None)])
    assert rerun(out, verify=True).identical


def test_process_file_with_a_range_and_channel(sigmf_rec, tmp_path):
    out = tmp_path / "one.h5"
    process_file(Pipeline.from_steps([FIR]).to_dict(), sigmf_rec, out, start=2000, channels=[1])
    expect(out, 2.0, [(B, 0.0, 0.6, 0), (D, 1.5, 2.0, None)])


# -- the command line ---------------------------------------------------------------------------


def test_cli_lists_and_converts_the_table_of_an_export(sigmf_rec, tmp_path, capsys):
    from specscope.app.cli import main

    out = export_range(sigmf_rec, tmp_path / "e.h5", start=1000, stop=3200)
    assert main(["annotations", "list", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "hdf5"
    assert [a["label"] for a in doc["annotations"]] == ["a", "b", "c"]
    assert main(["annotations", "convert", str(out), str(tmp_path / "e.csv"), "-q"]) == 0
    assert read_annotations(tmp_path / "e.csv") == read_annotations(out)
    # an HDF5 recording without a table lists what its reader found
    with h5py.File(tmp_path / "plain.h5", "w") as f:
        f.create_dataset("x", data=np.zeros(100, np.float32)).attrs["sample_rate"] = 100.0
    capsys.readouterr()
    assert main(["annotations", "list", str(tmp_path / "plain.h5")]) == 0
    assert "0 annotations (recording" in capsys.readouterr().out


def test_signal_export_reopens_with_its_annotations(sigmf_rec, tmp_path):
    out = export_range(sigmf_rec, tmp_path / "r.h5", start=1000, stop=3200, channels=[1])
    with open_recording(out) as rec:
        assert rec.annotations == read_annotations(out)
        assert [(a.label, a.channel) for a in rec.annotations] == [("a", None), ("b", 0)]
    # a table that does not read is a warning; the samples still open
    with h5py.File(out, "r+") as f:
        del f["annotations/stop_s"]
    with open_recording(out) as rec:
        assert rec.annotations == [] and "annotations not read" in rec.warnings[-1]
