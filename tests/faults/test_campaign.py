"""The hostile-input and fault campaign (``tests/faults/campaign.py``), one kind per test.

Each test runs one generator of the campaign (seeded and sized by
``SPECSCOPE_CAMPAIGN_SEED`` and ``SPECSCOPE_CAMPAIGN_SCALE``) and asserts zeros
in every bad column: no crash, no traceback, no hang, no data lost and no other
broken promise (an error line too long to read, a failed write that does not
name its cause, a temporary file left).  A failure lists each failing command
line with the last line it wrote to stderr.  ``SPECSCOPE_CAMPAIGN_REPORT``
names a JSON file the rows are added to.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import campaign
import campaign_faults
import pytest

#: kinds with a defect still open, and the defect: the test runs and reports them
OPEN: dict[str, str] = {}  # kinds with a known defect, marked xfail with its story


@pytest.mark.parametrize("kind", [pytest.param(k, marks=pytest.mark.xfail(
    reason=OPEN[k], strict=False)) if k in OPEN else k for k in campaign.KINDS])
def test_campaign_kind_has_zeros_in_every_bad_column(kind, tmp_path):
    try:
        outcomes = campaign.run_kind(kind, tmp_path)
    except campaign.Skip as exc:
        pytest.skip(str(exc))
    row = campaign.table(outcomes)
    print(f"\ncampaign {kind}: " + " ".join(f"{c}={row[c]}" for c in campaign.COLUMNS))
    target = os.environ.get("SPECSCOPE_CAMPAIGN_REPORT")
    if target:
        path = Path(target)
        old = json.loads(path.read_text()) if path.is_file() else {}
        old[kind] = row
        path.write_text(json.dumps(old, indent=1))
    assert row["runs"] > 0
    assert row["ok"] + sum(1 for o in outcomes if o.columns()) == row["runs"]
    bad = {c: row[c] for c in campaign.BAD if row[c]}
    problems = campaign.failures(outcomes)
    assert not bad, (f"campaign {kind}: {bad} of {row['runs']} runs\n"
                     + "\n".join(problems[:60])
                     + (f"\n... and {len(problems) - 60} more" if len(problems) > 60 else ""))


def test_the_judges_see_damage(tmp_path):
    """The checks the kinds rely on tell a damaged or torn output from a complete one."""
    import h5py
    import numpy as np
    import soundfile

    # exit status and stderr
    def outcome(**res) -> campaign.Outcome:
        base = {"hung": False, "stderr": "", "lost": [], "maxrss": 0, "memory": 1 << 30}
        return campaign.Outcome("x", "x", ["info"], {**base, **res})

    assert outcome(code=0).columns() == []
    assert outcome(code=2, stderr="specscope: error: f.wav: bad\n").columns() == []
    assert outcome(code=2, stderr="usage: specscope\n  [-h]\nspecscope: error: x\n"
                   ).columns() == []
    assert outcome(signal=7).columns() == ["crashes"]
    assert outcome(code=135).columns() == ["crashes"]
    assert outcome(code=96, stderr="Traceback (most recent call last):\nValueError\n"
                   ).columns() == ["tracebacks"]
    assert outcome(code=2, stderr="line: 50 Hz\nspecscope: error: x\n").columns() == [
        "tracebacks"]
    assert outcome(hung=True, signal=9).columns() == ["hangs"]
    assert outcome(code=0, lost=["in.wav"]).columns() == ["data lost"]
    assert outcome(code=2, stderr="specscope: error: " + "9" * 5000 + "\n").columns() == [
        "other"]
    # HDF5: complete, then cut
    ref = tmp_path / "ref.h5"
    with h5py.File(ref, "w") as f:
        f["signal"] = np.arange(100_000, dtype=np.float32)
    out = tmp_path / "o.h5"
    out.write_bytes(ref.read_bytes())
    assert campaign.h5_problem(out, ref, ("signal",)) is None
    out.write_bytes(ref.read_bytes()[:200_000])
    assert "does not read" in campaign.h5_problem(out, ref, ("signal",))
    # WAV: complete, then another run's
    wav = tmp_path / "o.wav"
    soundfile.write(wav, np.zeros(800, np.float32), 8000)
    other = tmp_path / "p.wav"
    soundfile.write(other, np.zeros(400, np.float32), 8000)
    assert campaign.wav_problem(wav, wav) is None
    assert "not a complete run's" in campaign.wav_problem(other, wav)
    # SigMF: the meta of one run with the data of another is a torn pair
    pairs = []
    for k, n in enumerate((100, 200)):
        body = np.arange(n, dtype="<f4").tobytes()
        meta = tmp_path / f"r{k}.sigmf-meta"
        meta.with_suffix(".sigmf-data").write_bytes(body)
        meta.write_text(json.dumps({"global": {
            "core:sha512": hashlib.sha512(body).hexdigest(), "specscope:data_bytes": len(body)},
            "captures": [], "annotations": []}))
        pairs.append(meta)
    assert campaign.sigmf_problem(pairs[0], pairs) is None
    torn = tmp_path / "t.sigmf-meta"
    torn.write_bytes(pairs[0].read_bytes())
    torn.with_suffix(".sigmf-data").write_bytes(pairs[1].with_suffix(".sigmf-data").read_bytes())
    assert "torn pair" in campaign.sigmf_problem(torn, pairs)
    # a destination: absent, old, complete, or else damaged
    w = campaign_faults.Writer("w", "o.wav", lambda i, d: [], lambda d, refs: campaign.wav_problem(
        d, refs[0] if refs else None))
    folder = tmp_path / "f"
    folder.mkdir()
    assert campaign_faults.dest_problem(w, folder, None, [wav]) is None
    assert campaign_faults.dest_problem(w, folder, {"o.wav": b"old"}, [wav]) == "the old output is gone"
    (folder / "o.wav").write_bytes(b"old")
    assert campaign_faults.dest_problem(w, folder, {"o.wav": b"old"}, [wav]) is None
    (folder / "o.wav").write_bytes(wav.read_bytes()[:100])
    assert "not a complete run's" in campaign_faults.dest_problem(w, folder, {"o.wav": b"old"}, [wav])
