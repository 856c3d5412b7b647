"""The noise floor's percentile and median by a sort equal numpy's, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from specscope.compute.detect.core import odd_median, sorted_percentile


@pytest.mark.parametrize("percentile", [0.0, 5.0, 10.0, 20.0, 25.0, 37.5, 50.0, 62.5, 90.0, 100.0])
@pytest.mark.parametrize("n", [1, 2, 3, 7, 24, 94])
def test_sorted_percentile_equals_numpy(percentile, n):
    rng = np.random.default_rng(n * 1000 + int(percentile * 10))
    # exponential power per bin, as a noise floor sees it, with ties (quantised values)
    x = rng.exponential(size=(5, n, 33))
    x[1] = np.round(x[1], 1)
    for axis in (0, 1, 2):
        got = sorted_percentile(x, percentile, axis=axis)
        want = np.percentile(x, percentile, axis=axis)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want), (axis, np.max(np.abs(got - want)))
    # a strided view, as the floor takes every stride-th frame
    got = sorted_percentile(x[:, ::3], percentile, axis=1)
    assert np.array_equal(got, np.percentile(x[:, ::3], percentile, axis=1))


@pytest.mark.parametrize("n", [1, 3, 11, 21])
def test_odd_median_equals_numpy(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=(40, 17, n))
    win = np.lib.stride_tricks.sliding_window_view(rng.normal(size=(60, 9)), n, axis=0)
    assert np.array_equal(odd_median(x, axis=-1), np.median(x, axis=-1))
    assert np.array_equal(odd_median(win, axis=-1), np.median(win, axis=-1))


def test_odd_median_refuses_an_even_count():
    with pytest.raises(ValueError, match="odd count"):
        odd_median(np.zeros((3, 4)), axis=-1)
