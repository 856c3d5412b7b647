"""Deployments: a folder of recordings indexed and read as one timeline (compute.deployment)."""

from __future__ import annotations

import json
import os
import random
import struct
from datetime import UTC, datetime, timedelta
from pathlib import Path

import hostile_corpus
import numpy as np
import pytest
from _deployments import T0, audiomoth, bext, guano, noise, snapshot, stamped, write_wav
from specscope.compute.deployment import (
    Deployment,
    DeploymentError,
    index_deployment,
    open_deployment,
    read_header,
)
from specscope.compute.deployment import index as index_mod
from specscope.compute.errors import InputError, OptionError, SpecscopeError
from specscope.compute.io import open_recording

# -- start times from metadata -------------------------------------------------------------


def test_bext_time_and_its_time_reference(tmp_path):
    p = tmp_path / "a.wav"
    # 12:00:00 plus 0.25 s by the time reference (samples since midnight)
    write_wav(p, noise(100), 8000, [(b"bext", bext(T0, (12 * 3600 * 8000) + 2000))])
    h = read_header(p)
    assert (h.sample_rate, h.n_samples, h.n_channels, h.time_source) == (8000, 100, 1, "bext")
    ix = index_deployment(tmp_path, tz="+02:00", cache=False)
    # bext is local time: 12:00:00.25 at +02:00 is 10:00:00.25 UTC
    assert ix.files[0].start == datetime(2024, 5, 1, 10, 0, 0, 250000, tzinfo=UTC)


def test_guano_timestamp_keeps_its_own_offset_and_sits_after_the_data(tmp_path):
    p = tmp_path / "sm4.wav"
    write_wav(p, noise(100), 8000, after_data=[(b"guan", guano("2024-05-01T14:30:00-05:00"))])
    ix = index_deployment(tmp_path, tz="Europe/Berlin", cache=False)
    assert ix.files[0].time_source == "guano"
    assert ix.files[0].start == datetime(2024, 5, 1, 19, 30, tzinfo=UTC)


def test_audiomoth_comment_with_its_zone(tmp_path):
    comment = ("Recorded at 14:30:05 01/05/2024 (UTC+1) by AudioMoth 24A04F085C5E1F8B at "
               "medium gain while battery was 4.2V and temperature was 18.3C.")
    write_wav(tmp_path / "20240101_000000.WAV", noise(100), 48000, [(b"LIST", audiomoth(comment))])
    ix = index_deployment(tmp_path, cache=False)
    # the comment wins over the name, and its (UTC+1) over tz
    assert ix.files[0].time_source == "audiomoth"
    assert ix.files[0].start == datetime(2024, 5, 1, 13, 30, 5, tzinfo=UTC)


def test_sigmf_core_datetime_of_the_first_capture(tmp_path):
    meta = hostile_corpus._sigmf_meta(captures=[
        {"core:sample_start": 0, "core:datetime": "2024-05-01T12:00:00.500Z"}])
    (tmp_path / "cap.sigmf-meta").write_text(json.dumps(meta))
    (tmp_path / "cap.sigmf-data").write_bytes(np.zeros(400, np.complex64).tobytes())
    ix = index_deployment(tmp_path, cache=False)
    (f,) = ix.files
    assert f.path.name == "cap.sigmf-meta" and f.time_source == "metadata"
    assert f.start == datetime(2024, 5, 1, 12, 0, 0, 500000, tzinfo=UTC)
    assert ix.is_complex and ix.n_samples == 400 and ix.ignored == []


def test_hdf5_start_time_attribute(tmp_path):
    import h5py

    with h5py.File(tmp_path / "chunk_0001.h5", "w") as f:
        ds = f.create_dataset("signal", data=np.zeros(500, np.float32))
        ds.attrs["sample_rate"] = 1000.0
        ds.attrs["start_time"] = "2024-05-01T12:00:00Z"
    ix = index_deployment(tmp_path, cache=False)
    assert ix.files[0].start == datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert ix.n_samples == 500


# -- start times from names ----------------------------------------------------------------


@pytest.mark.parametrize(("name", "tz", "expected", "form"), [
    ("20240501_143000.WAV", "UTC", datetime(2024, 5, 1, 14, 30), "YYYYMMDD_HHMMSS"),
    ("SMM01234_20240501_143000.wav", "+02:00", datetime(2024, 5, 1, 12, 30),
     "YYYYMMDD_HHMMSS"),
    ("band_20240501T143000Z.wav", "+02:00", datetime(2024, 5, 1, 14, 30), "YYYYMMDDTHHMMSSZ"),
    ("5490.240501143000.wav", "UTC", datetime(2024, 5, 1, 14, 30), "ID.YYMMDDHHMMSS"),
    ("site_2024-05-01T14-30-00.wav", "UTC", datetime(2024, 5, 1, 14, 30), "ISO 8601"),
    ("site_2024-05-01_14-30-00+01:00.wav", "UTC", datetime(2024, 5, 1, 13, 30), "ISO 8601"),
])
def test_name_forms(tmp_path, name, tz, expected, form):
    write_wav(tmp_path / name, noise(10), 1000)
    (f,) = index_deployment(tmp_path, tz=tz, cache=False).files
    assert (f.start, f.time_source) == (expected.replace(tzinfo=UTC), f"name {form}")


def test_a_persons_name_pattern(tmp_path):
    write_wav(tmp_path / "hydro3-01.05.24-1430.wav", noise(10), 1000)
    with pytest.raises(DeploymentError) as info:
        index_deployment(tmp_path, cache=False)
    assert "no start time" in str(info.value) and "YYYYMMDD_HHMMSS" in str(info.value)
    (f,) = index_deployment(tmp_path, name_pattern="hydro3-%d.%m.%y-%H%M", cache=False).files
    assert f.start == datetime(2024, 5, 1, 14, 30, tzinfo=UTC)
    assert f.time_source == "name hydro3-%d.%m.%y-%H%M"


def test_bad_zone_and_pattern_are_options_with_their_fields(tmp_path):
    write_wav(tmp_path / "20240501_143000.wav", noise(10), 1000)
    with pytest.raises(OptionError) as info:
        index_deployment(tmp_path, tz="Mars/Olympus")
    assert info.value.option == "tz" and "names no time zone" in str(info.value)
    with pytest.raises(OptionError) as info:
        index_deployment(tmp_path, name_pattern="%Q_%H")
    assert info.value.option == "name_pattern" and "%Q" in str(info.value)


# -- one signal across files, gaps kept ------------------------------------------------------


def test_a_chunked_read_across_boundaries_equals_the_concatenation(tmp_path):
    xs = stamped(tmp_path, [0, 1, 2, 3], n=1000, ch=2)
    whole = np.concatenate(xs)
    with open_recording(tmp_path) as rec:
        assert isinstance(rec, Deployment)
        assert (rec.n_samples, rec.n_channels, rec.sample_rate) == (4000, 2, 1000)
        assert rec.gaps == [] and rec.segments() == [(0, 4000)]
        for chunk in (1, 7, 333, 1000, 4000):
            got = np.concatenate([rec.read(a, a + chunk) for a in range(0, 4000, chunk)])
            np.testing.assert_array_equal(got, whole)
        np.testing.assert_array_equal(rec.read(990, 2010, channels=1), whole[990:2010, 1:])
        assert rec.file_at(999) == (tmp_path / "rec0000.wav", 999)
        assert rec.file_at(1000) == (tmp_path / "rec0001.wav", 0)
        assert rec.time_at(2500) == datetime(2024, 5, 1, 12, 0, 2, 500000, tzinfo=UTC)


def test_gaps_are_listed_never_filled(tmp_path):
    # 1 s files at 0, 1, then 10 (8 s gap) and 11, then 100 (88 s gap)
    xs = stamped(tmp_path, [0, 1, 10, 11, 100])
    with open_recording(tmp_path) as rec:
        assert rec.n_samples == 5000  # no sample stands for a gap
        assert rec.gaps == [(2000, 8.0), (4000, 88.0)]
        assert rec.segments() == [(0, 2000), (2000, 4000), (4000, 5000)]
        np.testing.assert_array_equal(rec.read(0, 5000), np.concatenate(xs))
        assert rec.time_at(2000) == datetime(2024, 5, 1, 12, 0, 10, tzinfo=UTC)
        assert rec.time_at(4999) == datetime(2024, 5, 1, 12, 1, 40, 999000, tzinfo=UTC)
        assert rec.sample_at("2024-05-01T12:00:05Z") == 2000  # in a gap: the sample after it
        assert rec.sample_at(datetime(2024, 5, 1, 12, 0, 10, 500000, tzinfo=UTC)) == 2500
        assert rec.metadata["n_gaps"] == 2 and rec.metadata["gap_s"] == 96.0
        gap = rec.index.gaps[0]
        assert (gap.before, gap.after) == (str(tmp_path / "rec0001.wav"),
                                           str(tmp_path / "rec0002.wav"))


def test_mismatched_rate_and_channels_are_reported_per_file_and_left_out(tmp_path):
    xs = stamped(tmp_path, [0, 1, 2, 3])
    write_wav(tmp_path / "rec0001.wav", noise(2000), 2000, [(b"bext", bext(T0 + timedelta(1 / 86400)))])
    write_wav(tmp_path / "rec0002.wav", noise(1000, 2), 1000,
              [(b"bext", bext(T0 + timedelta(seconds=2)))])
    ix = index_deployment(tmp_path, cache=False)
    assert [(Path(p.path).name, p.kind) for p in ix.problems] == [
        ("rec0001.wav", "mismatch"), ("rec0002.wav", "mismatch")]
    assert "2000 Hz, 1 channel(s) where the deployment has 1000 Hz, 1 channel(s)" in \
        ix.problems[0].message
    assert "1000 Hz, 2 channel(s)" in ix.problems[1].message
    with Deployment(ix) as rec:
        # the left-out files are not resampled in: a gap stands where they were
        assert rec.n_samples == 2000 and rec.gaps == [(1000, 2.0)]
        np.testing.assert_array_equal(rec.read(), np.concatenate([xs[0], xs[3]]))


def test_overlaps_duplicates_and_a_clock_going_back_are_one_line_each(tmp_path):
    stamped(tmp_path, [0, 1, 2, 3])
    # a copy of the second file, an overlapping one, and a clock that went back
    (tmp_path / "rec0001_copy.wav").write_bytes((tmp_path / "rec0001.wav").read_bytes())
    write_wav(tmp_path / "late.wav", noise(1000), 1000,
              after_data=[(b"guan", guano("2024-05-01T12:00:02.5Z"))])
    write_wav(tmp_path / "rec0004.wav", noise(1000), 1000,
              [(b"bext", bext(T0 - timedelta(seconds=60)))])
    ix = index_deployment(tmp_path, cache=False, tolerance_s=0.1)
    kinds = {Path(p.path).name: p.kind for p in ix.problems}
    assert kinds == {"rec0001_copy.wav": "duplicate", "late.wav": "overlap",
                     "rec0004.wav": "clock_back"}, ix.problems
    assert all("\n" not in p.message for p in ix.problems)
    assert [f.path.name for f in ix.used] == ["rec0004.wav", "rec0000.wav", "rec0001.wav",
                                              "rec0002.wav", "rec0003.wav"]


def test_files_without_a_time_are_named_with_the_forms_tried(tmp_path):
    stamped(tmp_path, [0, 1])
    write_wav(tmp_path / "untitled.wav", noise(10), 1000)
    ix = index_deployment(tmp_path, name_pattern="x%Y%m%d", cache=False)
    (p,) = ix.problems
    assert p.kind == "no_time" and Path(p.path).name == "untitled.wav"
    assert "x%Y%m%d, YYYYMMDD_HHMMSS, YYYYMMDDTHHMMSSZ, ID.YYMMDDHHMMSS, ISO 8601" in p.message
    assert len(ix.used) == 2


def test_a_folder_without_recordings_is_one_line(tmp_path):
    (tmp_path / "CONFIG.TXT").write_text("gain: medium\n")
    with pytest.raises(DeploymentError) as info:
        open_recording(tmp_path)
    assert str(info.value) == f"{tmp_path}: no recordings (1 other file(s); recordings end " \
                              "in .wav, .flac, .sigmf-meta, .h5 ...)"
    with pytest.raises(InputError, match="sample_rate does not apply to a folder"):
        open_recording(tmp_path, sample_rate=8000)


def test_glob_and_list_file_sources(tmp_path):
    xs = stamped(tmp_path / "a", [0, 1, 3])
    stamped(tmp_path / "b", [50], prefix="other")
    rec = open_deployment(str(tmp_path / "a" / "rec000[02].wav"))
    assert rec.gaps == [(1000, 2.0)] and rec.n_samples == 2000
    lst = tmp_path / "files.txt"
    lst.write_text("# chosen files\na/rec0001.wav\n\n" + str(tmp_path / "b" / "other0000.wav")
                   + "\n")
    with open_deployment(lst) as rec:
        assert [f.path.name for f in rec.files] == ["rec0001.wav", "other0000.wav"]
        np.testing.assert_array_equal(rec.read(0, 1000), xs[1])


# -- the header cache ------------------------------------------------------------------------


def test_the_cache_reads_each_header_once_and_only_new_files_after(tmp_path, monkeypatch):
    stamped(tmp_path / "d", [0, 1, 2, 3, 4])
    calls = []
    real = index_mod.read_header
    monkeypatch.setattr(index_mod, "read_header", lambda p: calls.append(p) or real(p))
    first = index_deployment(tmp_path / "d")
    assert len(calls) == 5 and first.headers_read == 5
    calls.clear()
    again = index_deployment(tmp_path / "d")
    assert calls == [] and again.headers_read == 0
    assert again.summary()["files"] == first.summary()["files"]
    stamped(tmp_path / "d", [5, 6, 7], prefix="new")
    third = index_deployment(tmp_path / "d")
    assert sorted(p.name for p in calls) == ["new0000.wav", "new0001.wav", "new0002.wav"]
    assert len(third.used) == 8
    # a changed file is read again (its size and mtime key it)
    calls.clear()
    write_wav(tmp_path / "d" / "rec0002.wav", noise(500), 1000,
              [(b"bext", bext(T0 + timedelta(seconds=2)))])
    os.utime(tmp_path / "d" / "rec0002.wav", ns=(1, 1))
    assert index_deployment(tmp_path / "d").headers_read == 1
    assert [p.name for p in calls] == ["rec0002.wav"]
    assert not (tmp_path / "d").joinpath(".specscope").exists()


def test_nothing_is_written_into_the_folder(tmp_path):
    d = tmp_path / "site"
    stamped(d, [0, 1, 5])
    (d / "notes.txt").write_text("x")
    before = snapshot(d)
    from specscope.app.cli import main

    with open_recording(d) as rec:
        rec.read()
    assert main(["index", str(d), "--json"]) == 0
    assert main(["info", str(d)]) == 0
    assert snapshot(d) == before


def test_a_file_changed_after_indexing_is_one_line(tmp_path):
    stamped(tmp_path, [0, 1, 2])
    with open_recording(tmp_path) as rec:
        write_wav(tmp_path / "rec0002.wav", noise(10), 1000)
        os.utime(tmp_path / "rec0002.wav", ns=(5, 5))
        with pytest.raises(SpecscopeError) as info:
            rec.read(1500, 2500)
        assert "rec0002.wav: changed since the deployment was indexed" in str(info.value)
        np.testing.assert_array_equal(rec.read(0, 10).shape, (10, 1))


# -- hostile headers -------------------------------------------------------------------------


def _hostile_wavs(d: Path, seed: int = 40) -> list[Path]:
    """Damaged copies of a bext-stamped WAV: the corpus's field patches and random ones."""
    good = d / "seed.wav"
    # a day after the good files: damaged copies overlap each other, not them
    write_wav(good, noise(400), 1000, [(b"bext", bext(T0 + timedelta(days=1)))],
              after_data=[(b"guan", guano("2024-05-02T12:00:00Z"))])
    data = good.read_bytes()
    good.unlink()
    out = []
    patches = {"channels0": (22, "<H", 0), "rate0": (24, "<I", 0), "align0": (32, "<H", 0),
               "align_odd": (32, "<H", 3), "fmt_size_huge": (16, "<I", 0x7FFFFFFF),
               "bext_size_huge": (36, "<I", 0xFFFFFFF0), "riff_size_0": (4, "<I", 0)}
    for name, (off, fmt, value) in patches.items():
        body = bytearray(data)
        body[off:off + struct.calcsize(fmt)] = struct.pack(fmt, value)
        out.append(d / f"{name}_20240501_130000.wav")
        out[-1].write_bytes(bytes(body))
    for k, cut in enumerate((0, 4, 12, 20, 40, 300)):
        out.append(d / f"cut{k}_20240501_140000.wav")
        out[-1].write_bytes(data[:cut])
    r = random.Random(seed)
    for k in range(120):
        out.append(d / f"mut{k:03d}_20240501_15{k // 60:02d}{k % 60:02d}.wav")
        out[-1].write_bytes(hostile_corpus.mutate(data, "rec", r))
    return out


def test_hostile_headers_are_one_line_each_and_the_rest_opens(tmp_path):
    d = tmp_path / "site"
    xs = stamped(d, [0, 1, 2])
    hostile = _hostile_wavs(d)
    before = snapshot(d)
    ix = index_deployment(d, cache=False, tolerance_s=0.01)
    for p in ix.problems:
        assert p.message and "\n" not in p.message and len(p.message) < 1000, p
        assert p.message.startswith(p.path), p
    named = {Path(p.path).name for p in ix.problems}
    # (a frame size of 0 or 3 bytes is left to the reader, which copes: those open)
    for name in ("channels0", "rate0", "cut0", "cut1", "cut2", "cut3"):
        assert any(n.startswith(name + "_") for n in named), name
    # the good files are there, in order, with their samples
    good = [f for f in ix.used if f.path.name.startswith("rec")]
    assert [f.path.name for f in good] == ["rec0000.wav", "rec0001.wav", "rec0002.wav"]
    with Deployment(ix) as rec:
        np.testing.assert_array_equal(rec.read(0, 3000), np.concatenate(xs))
        # every used file, hostile ones included, reads or fails with one line
        for f in ix.used:
            a = rec.index.file_offsets()[ix.used.index(f)]
            try:
                rec.read(a, a + 1)
            except SpecscopeError as exc:
                assert "\n" not in str(exc) and str(f.path) in str(exc), exc
    assert snapshot(d) == before
    assert len(hostile) == 133


# -- the command line ------------------------------------------------------------------------


def test_cli_index_json(tmp_path, capsys):
    from specscope.app.cli import main

    d = tmp_path / "site"
    stamped(d, [0, 1, 10])
    write_wav(d / "rec0003.wav", noise(100), 2000, [(b"bext", bext(T0 + timedelta(seconds=11)))])
    assert main(["index", str(d), "--json", "--tz", "UTC"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert (s["n_files"], s["n_used"], s["start"], s["end"]) == (
        4, 3, "2024-05-01T12:00:00Z", "2024-05-01T12:00:11Z")
    assert s["span_s"] == 11.0 and s["recorded_s"] == 3.0 and s["gap_s"] == 8.0
    assert s["gaps"] == [{"sample": 2000, "length_s": 8.0, "start": "2024-05-01T12:00:02Z",
                          "before": str(d / "rec0001.wav"), "after": str(d / "rec0002.wav")}]
    assert [m["kind"] for m in s["mismatches"]] == ["mismatch"] and s["overlaps"] == []
    assert main(["index", str(d)]) == 0
    text = capsys.readouterr().out
    assert "gaps        1 (0:00:08 in all)" in text and "mismatch  " + str(d / "rec0003.wav") in text
    assert main(["info", str(d), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["format"], info["n_samples"], info["start_time"]) == (
        "deployment", 3000, "2024-05-01T12:00:00Z")


def test_cli_index_bad_input_is_one_line_naming_the_flag(tmp_path, capsys):
    from specscope.app.cli import main

    stamped(tmp_path, [0])
    assert main(["index", str(tmp_path), "--tz", "Nowhere/Land"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["specscope: error: --tz Nowhere/Land: names no time zone (UTC, an offset "
                   "such as +02:00 or a name such as Europe/Berlin was expected)"]
    assert main(["index", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"specscope: error: {tmp_path / 'missing'}: no such folder"]


def test_zones_named_by_offset_and_by_name():
    from specscope.compute.deployment import parse_zone

    assert parse_zone("UTC") is UTC
    assert parse_zone("+05:30").utcoffset(None) == timedelta(hours=5, minutes=30)
    assert parse_zone("UTC-5").utcoffset(None) == timedelta(hours=-5)
    assert parse_zone("Europe/Berlin").utcoffset(datetime(2024, 7, 1)) == timedelta(hours=2)


def test_indexing_reports_progress_and_stops_when_cancelled(tmp_path, monkeypatch):
    from specscope.compute.errors import Cancelled

    stamped(tmp_path / "d", list(range(70)))
    seen: list[float] = []
    index_deployment(tmp_path / "d", cache=False, progress=seen.append)
    assert seen == sorted(seen) and seen[0] == 0.0 and len(seen) == 3  # every 32 files
    calls = []
    real = index_mod.read_header
    monkeypatch.setattr(index_mod, "read_header", lambda p: calls.append(p) or real(p))
    asks = iter([False, False, True])
    with pytest.raises(Cancelled):
        index_deployment(tmp_path / "d", cancelled=lambda: next(asks))
    assert len(calls) == 64  # stopped at the third look, after two blocks of files
    calls.clear()
    again = index_deployment(tmp_path / "d")  # what was read before the cancel is kept
    assert len(calls) == 70 - 64 and len(again.used) == 70
