"""Hostile input for every reader, generated at test time, and the driver that runs it.

:func:`build_corpus` writes malformed files of every format specscope reads
(audio through libsndfile, raw samples, ``.npy``/``.npz``, MATLAB, HDF5, SigMF,
Raven/Audacity/CSV tables, pipeline and filter-spec JSON), each with the
command lines that read it.  :func:`mutations` derives damaged copies of valid
seed files with a seeded random generator.

Run as a script (``python tests/hostile_corpus.py < jobs.json``) this file is the
driver: it imports specscope once, then forks one child per case under an
address-space limit, runs ``specscope.app.cli.main(argv)`` there with stdout and
stderr sent to files, kills it after a timeout, and prints one JSON result per
case: exit status or signal, seconds, peak memory, stderr, and whether the
inputs of the case are byte for byte what they were.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import struct
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FS = 8000


@dataclass
class Case:
    """One hostile input: the files it reads and the command lines that read them."""

    name: str
    argvs: list[list[str]]
    inputs: list[str] = field(default_factory=list)


# -- valid material ------------------------------------------------------------------------

def _tone(n: int = 4000, channels: int = 1) -> np.ndarray:
    t = np.arange(n) / FS
    x = 0.3 * np.sin(2 * np.pi * 440 * t)
    return np.stack([x] * channels, axis=1).astype(np.float32) if channels > 1 else \
        x.astype(np.float32)


def _audio_bytes(fmt: str, subtype: str | None = None, x: np.ndarray | None = None) -> bytes:
    import soundfile

    buf = io.BytesIO()
    soundfile.write(buf, _tone() if x is None else x, FS, format=fmt, subtype=subtype)
    return buf.getvalue()


def _mat_bytes(variables: dict, compress: bool = True) -> bytes:
    import scipy.io

    buf = io.BytesIO()
    scipy.io.savemat(buf, variables, do_compression=compress)
    return buf.getvalue()


def _h5_bytes(d: Path, name: str, build) -> Path:
    import h5py

    p = d / name
    with h5py.File(p, "w") as f:
        build(f)
    return p


def _sigmf_meta(glob: dict | None = None, captures=None, annotations=None) -> dict:
    g = {"core:datatype": "cf32_le", "core:sample_rate": 1e6, "core:version": "1.0.0"}
    g.update(glob or {})
    g = {k: v for k, v in g.items() if v is not None}
    return {"global": g, "captures": [{"core:sample_start": 0}] if captures is None
            else captures, "annotations": annotations or []}


RAVEN_HEAD = ("Selection\tView\tChannel\tBegin Time (s)\tEnd Time (s)\tLow Freq (Hz)\t"
              "High Freq (Hz)\n")


def _iq(n: int = 4000) -> bytes:
    r = np.random.default_rng(3)
    return (r.standard_normal(n) + 1j * r.standard_normal(n)).astype("<c8").tobytes()


def _pipeline(steps) -> dict:
    return {"specscope": "pipeline/1", "steps": steps}


# -- the corpus ---------------------------------------------------------------------------

class _Builder:
    def __init__(self, d: Path) -> None:
        self.d = d
        self.out = d / "out"
        self.out.mkdir(exist_ok=True)
        self.cases: list[Case] = []
        self.good_wav = d / "good.wav"
        self.good_wav.write_bytes(_audio_bytes("WAV", "PCM_16"))

    def _o(self, name: str, suffix: str) -> str:
        return str(self.out / f"{name}{suffix}")

    def recording(self, name: str, data: bytes | None, opts: tuple[str, ...] = (),
                  export: bool = False, extra: tuple[str, ...] = ()) -> None:
        """A file read as a recording: info, spectrogram and (some) export."""
        p = self.d / name
        if data is not None:
            p.write_bytes(data)
        argvs = [["info", str(p), *opts],
                 ["spectrogram", str(p), *opts, "-o", self._o(name, ".h5"), "--nfft", "256",
                  "--hop", "128", "-q"]]
        if export:
            argvs.append(["export", str(p), *opts, "-o", self._o(name, ".x.h5"), "-q"])
        self.cases.append(Case(name, argvs, [str(p), *extra]))

    def table(self, name: str, text: str | bytes, fmt: str | None = None) -> None:
        p = self.d / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        argv = ["annotations", "list", str(p), "--recording", str(self.good_wav)]
        if fmt:
            argv += ["--from", fmt]
        self.cases.append(Case(name, [argv, ["annotations", "list", str(p), "--json",
                                             *(["--from", fmt] if fmt else [])]], [str(p)]))

    def pipeline(self, name: str, doc: dict | str | bytes) -> None:
        p = self.d / name
        data = doc if isinstance(doc, bytes) else (
            doc if isinstance(doc, str) else json.dumps(doc)).encode("utf-8")
        p.write_bytes(data)
        self.cases.append(Case(name, [
            ["run", str(p), str(self.good_wav), "-o", str(self.out / f"{name}.run"), "-q"],
            ["export", str(self.good_wav), "--pipeline", str(p), "-o",
             self._o(name, ".x.h5"), "-q"]], [str(p), str(self.good_wav)]))

    def spec(self, name: str, doc: dict | str | bytes) -> None:
        p = self.d / name
        data = doc if isinstance(doc, bytes) else (
            doc if isinstance(doc, str) else json.dumps(doc)).encode("utf-8")
        p.write_bytes(data)
        self.cases.append(Case(name, [
            ["filter", "design", "--spec", str(p), "--fs", "8000"],
            ["filter", "apply", str(p), str(self.good_wav), "-o", self._o(name, ".h5"), "-q"]],
            [str(p), str(self.good_wav)]))

    def argv(self, name: str, argv: list[str]) -> None:
        """A bad parameter on the command line, on a good file."""
        self.cases.append(Case(name, [argv], [str(self.good_wav)]))


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def build_corpus(d: Path, seed: int = 21) -> list[Case]:
    """Malformed files of every format in ``d``, each with the commands that read it."""
    r = random.Random(seed)
    b = _Builder(d)
    rec, table, pipe, spec = b.recording, b.table, b.pipeline, b.spec

    # WAV: truncations and header fields
    wav = _audio_bytes("WAV", "PCM_16")
    for k, cut in enumerate((0, 4, 11, 12, 20, 36, 40, 44, 45, 1001)):
        rec(f"trunc{k}.wav", wav[:cut])
    fields = {"channels0": (22, "<H", 0), "channels_huge": (22, "<H", 65535),
              "rate0": (24, "<I", 0), "rate_huge": (24, "<I", 0xFFFFFFFF),
              "bytes_rate0": (28, "<I", 0), "align0": (32, "<H", 0),
              "align_huge": (32, "<H", 65535), "bits0": (34, "<H", 0),
              "bits_odd": (34, "<H", 13), "format_bad": (20, "<H", 0x1234),
              "format_float24": (20, "<H", 3), "riff_size_huge": (4, "<I", 0xFFFFFFFF),
              "fmt_size_huge": (16, "<I", 0x7FFFFFFF), "data_size_huge": (40, "<I", 0xFFFFFFF0),
              "data_size_odd": (40, "<I", 7)}
    for name, (off, fmt, value) in fields.items():
        body = bytearray(wav)
        body[off:off + struct.calcsize(fmt)] = struct.pack(fmt, value)
        rec(f"{name}.wav", bytes(body), export=name.startswith("data"))
    rec("rf64_lie.wav", b"RF64" + wav[4:])
    rec("noise.wav", r.randbytes(4000))
    rec("riff_only.wav", b"RIFF" + struct.pack("<I", 4) + b"WAVE")
    # FLAC: STREAMINFO fields (total samples at byte 21.5, rate 18..20.5)
    flac = _audio_bytes("FLAC", "PCM_16")

    def flac_patch(name: str, patches: dict[int, int]) -> None:
        body = bytearray(flac)
        for at, v in patches.items():
            body[at] = v
        rec(name, bytes(body), export=True)

    flac_patch("count_all_ones.flac", {21: flac[21] | 0x0F, 22: 255, 23: 255, 24: 255, 25: 255})
    flac_patch("count_zero.flac", {21: flac[21] & 0xF0, 22: 0, 23: 0, 24: 0, 25: 0})
    flac_patch("count_short.flac", {22: 0, 23: 0, 24: 0, 25: 100})
    flac_patch("rate_zero.flac", {18: 0, 19: 0, 20: flac[20] & 0x0F})
    flac_patch("blocksize_zero.flac", {8: 0, 9: 0, 10: 0, 11: 0})
    flac_patch("channels_max.flac", {20: flac[20] | 0x0E})
    for k, cut in enumerate((4, 8, 20, 42, 60, len(flac) // 2)):
        rec(f"trunc{k}.flac", flac[:cut])
    # AIFF: the 80-bit rate
    aiff = _audio_bytes("AIFF", "PCM_16")
    comm = aiff.find(b"COMM") + 8
    for name, ext in {"rate_nan": b"\x7f\xff\xc0" + bytes(7), "rate_inf": b"\x7f\xff\x80" + bytes(7),
                      "rate_zero": bytes(10), "rate_negative": b"\xc0\x0e\xbb\x80" + bytes(6),
                      "rate_tiny": b"\x00\x01\x80" + bytes(7),
                      "rate_huge": b"\x43\xfe\x80" + bytes(7)}.items():
        body = bytearray(aiff)
        body[comm + 8:comm + 18] = ext
        rec(f"{name}.aiff", bytes(body))
    body = bytearray(aiff)
    body[comm + 2:comm + 6] = struct.pack(">I", 0xFFFFFFFF)
    rec("frames_huge.aiff", bytes(body), export=True)
    rec("trunc.aiff", aiff[:60])
    # OGG
    try:
        ogg = _audio_bytes("OGG", "VORBIS")
    except Exception:  # noqa: BLE001 - a libsndfile without Vorbis
        ogg = b"OggS" + bytes(60)
    for k, cut in enumerate((4, 30, 200, len(ogg) // 2)):
        rec(f"trunc{k}.ogg", ogg[:cut])
    body = bytearray(ogg)
    for k in range(len(body) - 8, max(len(body) - 200, 0), -7):
        body[k] ^= 0xFF
    rec("tail_flipped.ogg", bytes(body))
    # raw samples and their options
    iq = _iq()
    rec("odd.cf32", iq[:8 * 100 + 5], ("--sample-rate", "1e6"))
    rec("empty.cf32", b"", ("--sample-rate", "1e6"))
    for name, opts in {"rate_nan": ("--sample-rate", "nan"), "rate_neg": ("--sample-rate", "-1"),
                       "rate_big": ("--sample-rate", "1" + "0" * 400),
                       "rate_text": ("--sample-rate", "x" * 100000),
                       "offset_past": ("--sample-rate", "1e6", "--offset", "99999999"),
                       "offset_neg": ("--sample-rate", "1e6", "--offset", "-8"),
                       "channels_huge": ("--sample-rate", "1e6", "--raw-channels", "1000000000"),
                       "channels_zero": ("--sample-rate", "1e6", "--raw-channels", "0"),
                       "dtype_bad": ("--sample-rate", "1e6", "--dtype", "cq99"),
                       "center_inf": ("--sample-rate", "1e6", "--center-freq", "inf")}.items():
        rec(f"{name}.cf32", iq, opts)
    # .npy / .npz
    good = io.BytesIO()
    np.save(good, np.arange(4000, dtype=np.float32))
    npy = good.getvalue()
    rate = ("--sample-rate", "8000")
    rec("trunc_header.npy", npy[:20], rate)
    rec("trunc_data.npy", npy[:400], rate)
    rec("shape_huge.npy", npy.replace(b"(4000,)", b"(4000000000000,)"), rate)
    rec("shape_negative.npy", npy.replace(b"(4000,)", b"(-4000,)"), rate)
    rec("descr_object.npy", npy.replace(b"'<f4'", b"'|O' "), rate)
    rec("descr_bad.npy", npy.replace(b"'<f4'", b"'<q9'"), rate)
    rec("header_len_huge.npy", npy[:8] + b"\xff\xff" + npy[10:], rate)
    rec("header_code.npy", npy.replace(b"'fortran_order': False",
                                       b"'fortran_order': __import__('os')"), rate)
    obj = io.BytesIO()
    np.save(obj, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    rec("pickle.npy", obj.getvalue(), rate)
    three = io.BytesIO()
    np.save(three, np.zeros((2, 3, 4), np.float32))
    rec("three_d.npy", three.getvalue(), rate)
    z = io.BytesIO()
    np.savez(z, a=np.arange(10))
    rec("archive.npz", z.getvalue(), rate)
    rec("archive_trunc.npz", z.getvalue()[:50], rate)
    # MATLAB
    mat = _mat_bytes({"x": _tone().astype(np.float64)[:, None], "fs": float(FS)})
    rec("trunc.mat", mat[:200])
    rec("header_only.mat", mat[:128])
    body = bytearray(mat)
    body[140:150] = bytes(10)
    rec("zeroed_tag.mat", bytes(body))
    plain = _mat_bytes({"x": _tone().astype(np.float64)[:, None], "fs": float(FS)}, False)
    body = bytearray(plain)
    dims = plain.find(struct.pack("<ii", 4000, 1))
    body[dims:dims + 8] = struct.pack("<ii", 400000000, 1000)
    rec("dims_lie.mat", bytes(body))
    body[dims:dims + 8] = struct.pack("<ii", -5, 1)
    rec("dims_negative.mat", bytes(body))
    rec("zeros_bomb.mat", _zeros_bomb(1_200_000_000))  # 1.2 GB of zeros in ~1.2 MB
    rec("v4_garbage.mat", r.randbytes(300))
    # HDF5
    import h5py

    def h5(name: str, build, opts: tuple[str, ...] = ()) -> None:
        _h5_bytes(d, name, build)
        rec(name, None, opts)

    sig = np.random.default_rng(4).standard_normal(8000)

    def attr(value):
        def build(f):
            f.create_dataset("x", data=sig).attrs["sample_rate"] = value
        return build

    for name, value in {"rate_negative": -48000.0, "rate_nan": np.nan, "rate_inf": np.inf,
                        "rate_zero": 0, "rate_text": "fast", "rate_long": "9" * 100000,
                        "rate_array": np.arange(5.0)}.items():
        h5(f"{name}.h5", attr(value))
    h5("three_d.h5", lambda f: f.create_dataset("x", data=np.zeros((4, 4, 4))))
    h5("empty_ds.h5", lambda f: f.create_dataset("x", shape=(0,), dtype="f4").attrs.update(
        sample_rate=8000.0))
    h5("strings.h5", lambda f: f.create_dataset("x", data=np.array([b"ab"] * 100)).attrs
       .update(sample_rate=8000.0))
    h5("never_written.h5", lambda f: f.create_dataset(
        "x", shape=(10**12,), dtype="f4", chunks=(1 << 16,)).attrs.update(sample_rate=8000.0))
    h5("compound.h5", lambda f: f.create_dataset(
        "x", data=np.zeros(100, dtype=[("a", "f4"), ("b", "i4")])).attrs.update(
        sample_rate=8000.0))
    h5("no_datasets.h5", lambda f: f.create_group("g"))
    good_h5 = d / "src.h5"
    with h5py.File(good_h5, "w") as f:
        f.create_dataset("x", data=sig).attrs["sample_rate"] = 8000.0
    raw_h5 = good_h5.read_bytes()
    for k, cut in enumerate((8, 100, 1000, len(raw_h5) - 100)):
        rec(f"trunc{k}.h5", raw_h5[:cut])
    rec("mat73_garbage.mat", raw_h5[:600])
    # SigMF
    def sigmf(name: str, meta: dict | str | bytes, data: bytes | None = iq) -> None:
        m = d / f"{name}.sigmf-meta"
        m.write_bytes(meta if isinstance(meta, bytes) else (
            meta if isinstance(meta, str) else json.dumps(meta)).encode("utf-8"))
        if data is not None:
            (d / f"{name}.sigmf-data").write_bytes(data)
        rec(f"{name}.sigmf-meta", None, extra=(str(d / f"{name}.sigmf-data"),) if data
            is not None else ())

    ok = json.dumps(_sigmf_meta())
    sigmf("rate_huge_int", ok.replace("1000000.0", "1" + "0" * 400))
    sigmf("rate_5000_digits", ok.replace("1000000.0", "7" * 5000))
    sigmf("rate_exp", ok.replace("1000000.0", "1e400"))
    sigmf("rate_nan", ok.replace("1000000.0", "NaN"))
    sigmf("rate_negative", _sigmf_meta({"core:sample_rate": -1}))
    sigmf("rate_string", _sigmf_meta({"core:sample_rate": "1e6"}))
    sigmf("rate_zero", _sigmf_meta({"core:sample_rate": 0}))
    sigmf("deep", '{"global": ' + _deep(200_000) + "}")
    sigmf("deep_annotations", ok[:-1] + ', "x": ' + _deep(5000) + "}")
    sigmf("not_utf8", b'{"global": {"core:datatype": "cf32_le\xff\xfe"}}')
    sigmf("array_top", "[1, 2, 3]")
    sigmf("global_list", '{"global": []}')
    sigmf("empty_meta", "")
    sigmf("datatype_bad", _sigmf_meta({"core:datatype": "cf999_le"}))
    sigmf("datatype_number", _sigmf_meta({"core:datatype": 5}))
    sigmf("channels_huge", _sigmf_meta({"core:num_channels": 10**9}))
    sigmf("channels_zero", _sigmf_meta({"core:num_channels": 0}))
    sigmf("dataset_escape", _sigmf_meta({"core:dataset": "../../etc/passwd"}))
    sigmf("metadata_only", _sigmf_meta({"core:metadata_only": True}))
    sigmf("header_bytes_huge", _sigmf_meta(captures=[{"core:sample_start": 0,
                                                      "core:header_bytes": 10**15}]))
    sigmf("capture_negative", _sigmf_meta(captures=[{"core:sample_start": -10}]))
    sigmf("annotation_huge", _sigmf_meta(annotations=[{"core:sample_start": 10**30,
                                                        "core:sample_count": 10**30}]))
    sigmf("annotation_label_10mb", _sigmf_meta(annotations=[{"core:sample_start": 0,
                                                             "core:sample_count": 10,
                                                             "core:label": "x" * 10_000_000}]))
    sigmf("no_data", _sigmf_meta(), data=None)
    m = d / "data_folder.sigmf-meta"
    m.write_text(ok)
    (d / "data_folder.sigmf-data").mkdir()
    rec("data_folder.sigmf-meta", None)
    # file system oddities
    (d / "loop_a.wav").symlink_to(d / "loop_b.wav")
    (d / "loop_b.wav").symlink_to(d / "loop_a.wav")
    rec("loop_a.wav", None)
    (d / "dangling.wav").symlink_to(d / "nowhere.wav")
    rec("dangling.wav", None)
    (d / "folder.wav").mkdir()
    rec("folder.wav", None)
    os.mkfifo(d / "fifo.wav")
    rec("fifo.wav", None)
    # annotation tables
    good_row = "1\tSpectrogram 1\t1\t0.1\t0.2\t100\t200\n"
    table("cell_10mb.txt", RAVEN_HEAD + "1\tSpectrogram 1\t" + "9" * 10_000_000 +
          "\t0.1\t0.2\t100\t200\n", "raven")
    table("raven_nan.txt", RAVEN_HEAD + "1\tSpectrogram 1\t1\tnan\t0.2\t100\t200\n", "raven")
    table("raven_inf.txt", RAVEN_HEAD + "1\tSpectrogram 1\t1\t0.1\tinf\t100\t200\n", "raven")
    table("raven_no_columns.txt", "Selection\tView\n1\tSpectrogram 1\n", "raven")
    table("raven_huge_number.txt", RAVEN_HEAD + "1\tS\t1\t" + "1" * 5000 + "\t2\t1\t2\n",
          "raven")
    table("raven_many_rows.txt", RAVEN_HEAD + good_row * 20000, "raven")
    table("raven_binary.txt", r.randbytes(5000), "raven")
    table("raven_cp1252.txt", RAVEN_HEAD.encode() + b"1\tS\t1\t0.1\t0.2\t100\t200\t\xe9\xff\n",
          "raven")
    table("raven_short_row.txt", RAVEN_HEAD + "1\tS\n", "raven")
    table("raven_channel_huge.txt", RAVEN_HEAD + "1\tS\t" + "9" * 400 + "\t0.1\t0.2\t1\t2\n",
          "raven")
    table("aud_bad.txt", "0.1\tabc\tlabel\n", "audacity")
    table("aud_nan.txt", "nan\t0.2\tlabel\n", "audacity")
    table("aud_negative.txt", "-1\t0.2\tlabel\n", "audacity")
    table("aud_long_label.txt", "0.1\t0.2\t" + "L" * 5_000_000 + "\n", "audacity")
    table("aud_freq_garbage.txt", "0.1\t0.2\tlabel\n\\\tx\ty\n", "audacity")
    table("aud_huge.txt", "0\t1e400\tlabel\n", "audacity")
    csv_head = "start,end,low,high,label,channel\n"
    table("csv_bad.csv", csv_head + "a,b,c,d,e,f\n", "csv")
    table("csv_nan.csv", csv_head + "nan,1,,,x,0\n", "csv")
    table("csv_quote.csv", csv_head + '0,1,,,"unclosed\n', "csv")
    table("csv_channel.csv", csv_head + "0,1,,,x," + "9" * 5000 + "\n", "csv")
    table("csv_cells.csv", csv_head + "0,1,,,x,0," + ",".join(["1"] * 100000) + "\n", "csv")
    table("csv_nul.csv", csv_head.encode() + b"0,1,\x00,,x,0\n", "csv")
    # pipelines
    spectro = {"op": "spectrogram", "params": {"nfft": 256}}
    pipe("deep.json", '{"specscope": "pipeline/1", "steps": ' + _deep(200_000) + "}")
    pipe("deep_params.json", json.dumps(_pipeline([{"op": "gain", "params": {}}]))
         .replace("{}", '{"factor": ' + _deep(150) + "}"))
    pipe("big_int.json", json.dumps(_pipeline([{"op": "gain", "params": {"factor": 1}}]))
         .replace('"factor": 1', '"factor": ' + "1" * 5000))
    pipe("exp.json", json.dumps(_pipeline([{"op": "gain", "params": {"factor": 1}}]))
         .replace('"factor": 1', '"factor": 1e400'))
    pipe("nan.json", '{"specscope": "pipeline/1", "steps": [{"op": "gain", '
                     '"params": {"factor": NaN}}]}')
    pipe("not_utf8.json", b'{"specscope": "pipeline/1", "steps": [], "name": "\xff\xfe"}')
    pipe("nfft_huge.json", _pipeline([{"op": "spectrogram", "params": {"nfft": 1 << 30}}]))
    pipe("nfft_huge_float.json", _pipeline([{"op": "spectrogram", "params": {"nfft": 1e300}}]))
    pipe("hop_zero.json", _pipeline([{"op": "spectrogram", "params": {"nfft": 256, "hop": 0}}]))
    pipe("hop_huge.json", _pipeline([{"op": "spectrogram", "params": {"nfft": 256,
                                                                       "hop": 1 << 50}}]))
    pipe("window_nan.json", _pipeline([{"op": "spectrogram", "params": {
        "nfft": 256, "window": "kaiser,-1e308"}}]))
    pipe("unknown_op.json", _pipeline([{"op": "x" * 100000}]))
    pipe("steps_dict.json", {"specscope": "pipeline/1", "steps": {"a": 1}})
    pipe("params_list.json", _pipeline([{"op": "gain", "params": [1, 2]}]))
    pipe("filter_order.json", _pipeline([{"op": "filter", "params": {
        "design": "butter", "order": 10**9, "cutoff": 100, "btype": "lowpass"}}]))
    pipe("firwin_taps.json", _pipeline([{"op": "filter", "params": {
        "design": "firwin", "numtaps": 10**9, "cutoff": 100}}]))
    pipe("lfilter_huge.json", _pipeline([{"op": "lfilter", "params": {"b": [1] * 10, "a": [0]}}]))
    pipe("resample_huge.json", _pipeline([{"op": "resample_poly", "params": {
        "up": 10**9, "down": 1}}]))
    pipe("plugin_op.json", _pipeline([{"op": "evil.run", "params": {}}]))
    pipe("empty.json", b"")
    pipe("binary.json", r.randbytes(3000))
    pipe("huge_string.json", _pipeline([spectro]) | {"description": "d" * 900_000})
    pipe("too_big.json", _pipeline([spectro]) | {"description": "d" * 3_000_000})
    # filter specs
    spec("deep.json", '{"design": "butter", "x": ' + _deep(200_000) + "}")
    spec("not_utf8.json", b'{"design": "butter\xff"}')
    spec("order_huge.json", {"design": "butter", "order": 10**6, "cutoff": 100})
    spec("cutoff_nyquist.json", {"design": "butter", "order": 4, "cutoff": 4000})
    spec("cutoff_negative.json", {"design": "butter", "order": 4, "cutoff": -1})
    spec("numtaps_huge.json", {"design": "firwin", "numtaps": 10**9, "cutoff": 100})
    spec("numtaps_float.json", {"design": "firwin", "numtaps": 1e300, "cutoff": 100})
    spec("big_int.json", '{"design": "butter", "order": ' + "4" * 5000 + ', "cutoff": 100}')
    spec("exp.json", '{"design": "butter", "order": 4, "cutoff": 1e400}')
    spec("design_unknown.json", {"design": "z" * 100000})
    spec("list_top.json", "[1, 2]")
    spec("notches_many.json", {"design": "notches", "freqs": list(range(1, 5000)), "q": 30})
    spec("remez_bands.json", {"design": "remez", "numtaps": 101,
                              "bands": [0, 1e308, 2e308, 4000], "desired": [1, 0]})
    spec("empty.json", b"")
    # bad parameters on the command line
    g = str(b.good_wav)
    o = str(b.out / "param.h5")
    for name, extra in {"nfft_bomb": ["--nfft", "1073741824"], "nfft_negative": ["--nfft", "-5"],
                        "nfft_digits": ["--nfft", "9" * 5000], "nfft_float": ["--nfft", "1e300"],
                        "hop_bomb": ["--hop", str(1 << 62)], "hop_zero": ["--hop", "0"],
                        "kaiser_neg": ["--window", "kaiser,-1e308"],
                        "kaiser_nan": ["--window", "kaiser,nan"],
                        "gaussian_zero": ["--window", "gaussian,0"],
                        "window_long": ["--window", "w" * 1_000_000],
                        "channel_huge": ["--channel", "99999999999999999999"],
                        "rate_option_nan": ["--sample-rate", "nan"]}.items():
        b.argv(f"arg_{name}", ["spectrogram", g, "-o", o, *extra])
    for name, extra in {"start_nan": ["--start", "nan"], "stop_huge": ["--stop", "1e400"],
                        "channels_text": ["--channels", "a,b"],
                        "chunk_zero": ["--chunk-samples", "0"],
                        "chunk_huge": ["--chunk-samples", str(1 << 60)]}.items():
        b.argv(f"arg_{name}", ["export", g, "-o", str(b.out / "param.wav"), *extra])
    return b.cases


def _zeros_bomb(n_bytes: int) -> bytes:
    """A MAT v5 file holding one compressed double column of ``n_bytes`` zeros (and fs)."""
    n = n_bytes // 8
    e = "<"

    def element(mtype: int, payload: bytes) -> bytes:
        pad = (-len(payload)) % 8
        return struct.pack(e + "II", mtype, len(payload)) + payload + bytes(pad)

    head = element(6, struct.pack(e + "II", 6, 0)) + element(5, struct.pack(e + "ii", n, 1)) \
        + element(1, b"x")
    data_tag = struct.pack(e + "II", 9, n * 8)
    body_len = len(head) + 8 + n * 8
    c = zlib.compressobj(1)
    parts = [c.compress(struct.pack(e + "II", 14, body_len) + head + data_tag)]
    zeros = bytes(1 << 22)
    left = n * 8
    while left:
        k = min(left, len(zeros))
        parts.append(c.compress(zeros[:k]))
        left -= k
    parts.append(c.flush())
    comp = b"".join(parts)
    header = b"MATLAB 5.0 MAT-file, hostile corpus".ljust(116) + bytes(8) + \
        struct.pack(e + "H", 0x0100) + b"IM"
    fs = element(14, element(6, struct.pack(e + "II", 6, 0)) + element(5, struct.pack(
        e + "ii", 1, 1)) + element(1, b"fs") + element(9, struct.pack(e + "d", FS)))
    return header + struct.pack(e + "II", 15, len(comp)) + comp + fs


# -- mutations ------------------------------------------------------------------------------

def seeds(d: Path) -> list[tuple[Path, list[str], str]]:
    """Valid files of every format: (path, options, kind)."""
    import h5py
    import scipy.io

    d.mkdir(parents=True, exist_ok=True)
    out: list[tuple[Path, list[str], str]] = []

    def put(name: str, data: bytes, opts=(), kind="rec") -> None:
        (d / name).write_bytes(data)
        out.append((d / name, list(opts), kind))

    put("s.wav", _audio_bytes("WAV", "PCM_16", _tone(3000, 2)))
    put("s.flac", _audio_bytes("FLAC", "PCM_16"))
    put("s.aiff", _audio_bytes("AIFF", "PCM_16"))
    import soundfile

    if "OGG" in soundfile.available_formats():
        put("s.ogg", _audio_bytes("OGG", "VORBIS"))
    put("s.cf32", _iq(2000), ("--sample-rate", "1e6"))
    buf = io.BytesIO()
    np.save(buf, _tone(3000))
    put("s.npy", buf.getvalue(), ("--sample-rate", "8000"))
    put("s.mat", _mat_bytes({"x": _tone(3000).astype(np.float64)[:, None], "fs": 8000.0}))
    put("s_plain.mat", _mat_bytes({"x": _tone(3000)[:, None], "fs": 8000.0}, False))
    with h5py.File(d / "s.h5", "w") as f:
        f.create_dataset("x", data=_tone(3000)).attrs["sample_rate"] = 8000.0
    out.append((d / "s.h5", [], "rec"))
    scipy.io.savemat(d / "s73.mat", {"x": _tone(100)})  # v5: a second variant
    put("s.sigmf-meta", json.dumps(_sigmf_meta(annotations=[
        {"core:sample_start": 10, "core:sample_count": 100, "core:label": "a",
         "core:freq_lower_edge": -1000, "core:freq_upper_edge": 1000}])).encode(), kind="sigmf")
    (d / "s.sigmf-data").write_bytes(_iq(2000))
    put("s_raven.txt", (RAVEN_HEAD + "1\tSpectrogram 1\t1\t0.1\t0.2\t100\t200\n"
                        "2\tSpectrogram 1\t1\t0.3\t0.35\t300\t900\n").encode(), kind="raven")
    put("s_aud.txt", b"0.1\t0.2\tbird\n\\\t100\t200\n0.3\t0.4\tfrog\n", kind="audacity")
    put("s_ann.csv", b"start,end,low,high,label,channel\n0.1,0.2,100,200,a,0\n"
        b"0.3,0.5,,,b,0\n", kind="csv")
    put("s_pipe.json", json.dumps(_pipeline([
        {"op": "filter", "params": {"design": "butter", "order": 4, "cutoff": 1000,
                                    "btype": "lowpass"}},
        {"op": "spectrogram", "params": {"nfft": 256, "hop": 128, "window": "kaiser,8"}}]),
        indent=1).encode(), kind="pipeline")
    put("s_spec.json", json.dumps({"design": "butter", "order": 4, "cutoff": [300, 3000],
                                   "btype": "bandpass"}).encode(), kind="spec")
    return out


_TEXT_KINDS = ("sigmf", "raven", "audacity", "csv", "pipeline", "spec")
_EVIL_TOKENS = ["NaN", "-1", "0", "1e400", "1" + "0" * 400, "9" * 5000, "[" * 300,
                "{" * 300, '"', "\\", "\x00", "\xff", "-0", "1e-400", "4294967296",
                "18446744073709551616", "true", "null", "[]", "{}", "\t", "\n" * 3, ","]


def mutate(data: bytes, kind: str, r: random.Random) -> bytes:
    """One damaged copy of ``data``: flips, cuts, splices; tokens for text formats."""
    b = bytearray(data)
    for _ in range(r.choice((1, 1, 2, 3, 5))):
        op = r.random()
        if not b:
            b = bytearray(r.randbytes(r.randint(1, 64)))
            continue
        i = r.randrange(len(b))
        if kind in _TEXT_KINDS and op < 0.45:
            tok = r.choice(_EVIL_TOKENS).encode("utf-8", "surrogateescape") \
                if r.random() < 0.9 else bytes([r.randrange(256)])
            # replace a number or a word when there is one at i
            j = i
            while j < len(b) and chr(b[j]).isalnum():
                j += 1
            b[i:j] = tok
        elif op < 0.55:
            b[i] ^= 1 << r.randrange(8)
        elif op < 0.65:
            b[i] = r.choice((0x00, 0xFF, 0x7F, 0x80))
        elif op < 0.72:
            k = min(len(b) - i, 4)
            b[i:i + k] = r.choice((b"\xff\xff\xff\xff", b"\x00\x00\x00\x00",
                                   b"\x7f\xff\xff\xff", b"\x00\x00\x00\x80"))[:k]
        elif op < 0.80:
            del b[r.randrange(len(b)):]
        elif op < 0.88:
            b[i:i] = r.randbytes(r.randint(1, 32))
        elif op < 0.94:
            j = r.randrange(len(b))
            b[i:i] = b[j:j + r.randint(1, 200)]
        else:
            del b[i:i + r.randint(1, 64)]
    return bytes(b)


def mutations(d: Path, n: int, seed: int = 2121) -> list[Case]:
    """``n`` damaged copies of the seed files, each with the commands that read it."""
    base = seeds(d / "seeds")
    good = d / "seeds" / "s.wav"
    r = random.Random(seed)
    out_dir = d / "mut_out"
    out_dir.mkdir(exist_ok=True)
    cases = []
    for k in range(n):
        path, opts, kind = base[k % len(base)]
        sub = d / "mut" / f"{k:05d}"
        sub.mkdir(parents=True)
        target = sub / path.name
        target.write_bytes(mutate(path.read_bytes(), kind, r))
        inputs = [str(target)]
        o = str(out_dir / f"{k:05d}.h5")
        if kind == "sigmf":
            data = (d / "seeds" / "s.sigmf-data").read_bytes()
            if r.random() < 0.3:
                data = mutate(data, "rec", r)
            (sub / "s.sigmf-data").write_bytes(data)
            inputs.append(str(sub / "s.sigmf-data"))
        if kind in ("rec", "sigmf"):
            argvs = [["info", str(target), *opts]]
            if k % 3 == 0:
                argvs.append(["spectrogram", str(target), *opts, "-o", o, "--nfft", "128",
                              "--hop", "64", "-q"])
        elif kind in ("raven", "audacity", "csv"):
            argvs = [["annotations", "list", str(target), "--recording", str(good),
                      "--from", kind]]
        elif kind == "pipeline":
            argvs = [["export", str(good), "--pipeline", str(target), "-o", o, "-q"]]
            inputs.append(str(good))
        else:
            argvs = [["filter", "design", "--spec", str(target), "--fs", "8000"]]
        cases.append(Case(f"mut{k:05d}.{kind}.{path.name}", argvs, inputs))
    return cases


# -- the driver ----------------------------------------------------------------------------

def _digest(paths: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for p in paths:
        try:
            st = os.lstat(p)
            if os.path.islink(p) or not os.path.isfile(p):
                out[p] = f"special {st.st_mode:o}"
                continue
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                    h.update(block)
            out[p] = h.hexdigest()
        except OSError:
            out[p] = None
    return out


def drive(jobs: list[dict]) -> list[dict]:
    """Run every job in a forked child under limits; see the module documentation."""
    import resource
    import signal
    import time
    import traceback

    os.environ.setdefault("SPECSCOPE_PLUGINS", "")
    sys.argv = [sys.argv[0]]
    import h5py  # noqa: F401 - imported once, before the forks
    import scipy.io
    import scipy.signal  # noqa: F401
    import soundfile  # noqa: F401
    from specscope.app import cli
    from specscope.compute import batch, ops  # noqa: F401

    cli.build_parser()  # every module the parser imports, once, before the forks

    results = []
    for job in jobs:
        before = _digest(job["inputs"])
        for log in (job["out"], job["err"]):  # there even when the child dies at once
            os.close(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC))
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:
            out = os.open(job["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            err = os.open(job["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(out, 1)
            os.dup2(err, 2)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            code = 97
            try:
                limit = int(job["memory"])
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
                code = cli.main(job["argv"])
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:  # noqa: BLE001 - what the campaign counts
                traceback.print_exc()
                code = 96
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code if isinstance(code, int) else 98)
        status, usage, hung = None, None, False
        while True:
            done, st, ru = os.wait4(pid, os.WNOHANG)
            if done:
                status, usage = st, ru
                break
            if time.monotonic() - t0 > job["timeout"]:
                os.kill(pid, signal.SIGKILL)
                _, status, usage = os.wait4(pid, 0)
                hung = True
                break
            time.sleep(0.003)
        seconds = time.monotonic() - t0
        with open(job["err"], "rb") as fh:
            err = fh.read(20000).decode("utf-8", "replace")
        err_size = os.path.getsize(job["err"])
        after = _digest(job["inputs"])
        res = {"hung": hung, "seconds": round(seconds, 3),
               "maxrss": usage.ru_maxrss * 1024 if usage else 0,
               "stderr": err, "stderr_bytes": err_size,
               "lost": [p for p in before if before[p] != after[p]]}
        if os.WIFSIGNALED(status):
            res["signal"] = os.WTERMSIG(status)
        else:
            res["code"] = os.WEXITSTATUS(status)
        results.append(res)
    return results


if __name__ == "__main__":
    print(json.dumps(drive(json.loads(sys.stdin.read()))))
