"""Region edits from a notebook: the explorer's selection edited, the view darkened where
the edit acts and nowhere else, the edit kept in its pipeline."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jupyter_rfb")

from specscope.app.notebook.explorer import explore
from specscope.compute.annotations import Annotation
from specscope.compute.edit import RegionEdit
from specscope.compute.errors import InputError


def _band(w, img: np.ndarray, t0: float, t1: float, f0: float, f1: float) -> float:
    x0, y1 = w.to_pixel(t0, f1)
    x1, y0 = w.to_pixel(t1, f0)
    return float(img[int(y1) + 2:int(y0) - 2, int(x0) + 2:int(x1) - 2, :3].mean())


@pytest.fixture
def explorer(example_path):
    w = explore(example_path)
    yield w
    w.close()


def test_the_selection_attenuated_darkens_it_and_nothing_else(explorer):
    w = explorer
    w.set_view(2.0, 8.0, 0.0, 8000.0)
    before = w.snapshot()
    w.selection = Annotation(4.0, 6.0, freq_low_hz=1000.0, freq_high_hz=4000.0)
    w.wait()
    with_box = w.snapshot()
    w.edit("attenuate", db=40, feather_ms=0, feather_hz=0)
    after = w.snapshot()
    (step,) = [s for s in w.pipeline.to_dict()["steps"] if s["op"] == "edit"]
    edit = RegionEdit.from_dict(step["params"])
    assert edit.region.bounds() == (4.0, 6.0, 1000.0, 4000.0) and edit.db == 40
    inside = _band(w, after, 4.3, 5.7, 1300, 3700), _band(w, with_box, 4.3, 5.7, 1300, 3700)
    assert inside[0] < 0.6 * inside[1]
    outside = _band(w, after, 2.2, 3.6, 1300, 3700), _band(w, before, 2.2, 3.6, 1300, 3700)
    assert abs(outside[0] - outside[1]) < 0.02 * outside[1] + 1


def test_an_edit_needs_a_region_or_a_selection(explorer):
    with pytest.raises(InputError, match="select a box first"):
        explorer.edit("remove")
    with pytest.raises(InputError, match="lie outside the recording"):
        explorer.edit("remove", {"shape": "box", "t0": 1e6, "t1": 2e6, "f0": 10, "f1": 20})
    assert all(s["op"] != "edit" for s in explorer.pipeline.to_dict()["steps"])
