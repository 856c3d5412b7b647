"""An edit step in the view's processing and in playback: the tile engine's blocks and the
player's stream, each starting where it starts, show and play the edited signal."""

from __future__ import annotations

import numpy as np
import pytest
from specscope.compute.edit import Box, RegionEdit, apply_edit
from specscope.compute.io import ArrayRecording
from specscope.compute.pipeline import Pipeline
from specscope.compute.playback.renderer import render
from specscope.compute.view import TileEngine

FS = 16000


@pytest.fixture
def tone():
    t = np.arange(8 * FS) / FS
    return ArrayRecording((0.5 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32), FS)


def _pipe(op: str = "attenuate") -> Pipeline:
    edit = RegionEdit(Box(3.0, 5.0, 800, 1200), op, db=40, nfft=512)
    return Pipeline.from_steps([{"op": "edit", "params": edit.to_dict()}])


def test_the_view_shows_the_edit_where_it_is(tone):
    eng = TileEngine(tone, nfft=512, hop=128, pipeline=_pipe().block_function(FS))
    r = eng.render(0.0, 8.0, 80)
    row = int(np.argmin(np.abs(r.frequencies - 1000)))
    t = (r.column_edges[:-1] + r.column_edges[1:]) / 2
    db = 10 * np.log10(r.image[row] + 1e-30)
    inside, outside = db[(t > 3.3) & (t < 4.7)], db[(t < 2.5) | (t > 5.5)]
    assert abs(outside.mean() - inside.mean() - 40) < 1.0
    # the samples a block gives equal the edit of the whole recording
    want = apply_edit(tone.read(0, tone.n_samples)[:, 0], FS,
                      RegionEdit(Box(3.0, 5.0, 800, 1200), "attenuate", db=40, nfft=512))
    got = eng.read_processed(int(3.9 * FS), int(4.4 * FS))
    assert np.array_equal(got, want[int(3.9 * FS):int(4.4 * FS)])


@pytest.mark.parametrize("start", [0.0, 3.5, 4.9])
def test_playback_from_anywhere_plays_the_edit(tone, start):
    y = render(tone, start, start + 0.6, pipeline=_pipe())
    x = render(tone, start, start + 0.6)
    mid = slice(len(y) // 4, 3 * len(y) // 4)
    drop = 20 * np.log10(np.std(y[mid]) / np.std(x[mid]))
    assert (abs(drop + 40) < 1.0) if 3.2 < start < 4.7 else abs(drop) < 0.01, drop


def test_isolate_in_the_view_keeps_only_the_region(tone):
    eng = TileEngine(tone, nfft=512, hop=128, pipeline=_pipe("isolate").block_function(FS))
    got = eng.read_processed(0, 2 * FS)
    assert not got.any()
