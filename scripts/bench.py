#!/usr/bin/env python
"""Benchmark: specscope's spectrogram and batched FFT against peers, in one run.

Same float32 data for everyone (2**24 samples, nfft 1024, hop 256, Hann, PSD):
the public ``specscope.compute.spectrogram`` (the function the app's paths share:
its ``stft_power`` kernel runs tiles, exports, pipelines and live blocks),
``scipy.signal.spectrogram``,
``scipy.signal.ShortTimeFFT.spectrogram``, ``torch.stft`` (CPU) and
``librosa.stft`` when installed.  Then a batched 1024-point FFT against
``numpy.fft`` (and ``torch.fft``).  Prints each best-of-N time, the ratio to the
fastest peer, and checks that the numbers agree (rtol 1e-3 on float32).

    python scripts/bench.py [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable

import numpy as np
import scipy.signal
from specscope.compute import call, spectrogram
from specscope.compute.operators import autotune


def best_time(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    out = fn()  # warm-up (plans, caches, autotune)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def agree(a: np.ndarray, b: np.ndarray) -> str:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return f"SHAPE {a.shape} vs {b.shape}"
    scale = float(np.max(np.abs(b))) or 1.0
    err = float(np.max(np.abs(a - b)) / scale)
    return f"max rel err {err:.1e}" + ("" if err < 1e-3 else "  MISMATCH")


def report(title: str, ours: tuple[str, float], peers: list[tuple[str, float]],
           skipped: list[str]) -> None:
    print(f"\n{title}")
    fastest = min((t for _, t in peers), default=float("nan"))
    for name, t in [ours, *peers]:
        ratio = fastest / t if peers else float("nan")
        print(f"  {name:<34} {t * 1e3:10.1f} ms   {ratio:5.2f}x vs fastest peer")
    for s in skipped:
        print(f"  {s:<34}    skipped (not installed)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2**18 samples instead of 2**24")
    args = ap.parse_args(argv)
    n = 1 << (18 if args.quick else 24)
    nfft, hop, fs = 1024, 256, 48000.0
    repeats = 5 if args.quick else 3
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    print(f"{n} float32 samples, nfft {nfft}, hop {hop}, Hann, PSD; best of {repeats}")
    have_torch = importlib.util.find_spec("torch") is not None
    have_librosa = importlib.util.find_spec("librosa") is not None

    # -- spectrogram --------------------------------------------------------------------
    with autotune.profile() as prof:
        t_ours, (_, _, s_ours) = best_time(
            lambda: spectrogram(x, fs, nfft=nfft, hop=hop, window="hann", scaling="psd"),
            repeats)
    chosen = ", ".join(f"{b}×{c}" for r in prof.summary() for b, c in r["backends"].items())
    peers, skipped, checks = [], [], []
    t_sc, (_, _, s_sc) = best_time(lambda: scipy.signal.spectrogram(
        x, fs, window="hann", nperseg=nfft, noverlap=nfft - hop, detrend=False,
        scaling="density", mode="psd"), repeats)
    peers.append(("scipy.signal.spectrogram", t_sc))
    checks.append(("scipy.signal.spectrogram", agree(s_ours, s_sc)))
    sft = scipy.signal.ShortTimeFFT(scipy.signal.get_window("hann", nfft), hop, fs,
                                    fft_mode="onesided2X", scale_to="psd")
    p0 = nfft // 2 // hop  # slice p is centred on p*hop: frame k starts at (k + p0)*hop - nfft/2
    t_sft, s_sft = best_time(lambda: sft.spectrogram(x, p0=p0, p1=p0 + s_ours.shape[-1]),
                             repeats)
    peers.append(("scipy ShortTimeFFT.spectrogram", t_sft))
    checks.append(("ShortTimeFFT.spectrogram", agree(s_ours, s_sft)))
    if have_torch:
        import torch
        xt = torch.from_numpy(x)
        win = torch.hann_window(nfft)
        scale = 1.0 / (fs * float((win ** 2).sum()))

        def torch_psd():
            z = torch.stft(xt, nfft, hop, window=win, center=False, return_complex=True)
            p = z.real ** 2 + z.imag ** 2
            p[1:-1] *= 2
            return (p * scale).numpy()
        t_tc, s_tc = best_time(torch_psd, repeats)
        peers.append(("torch.stft (CPU)", t_tc))
        checks.append(("torch.stft", agree(s_ours, s_tc)))
    else:
        skipped.append("torch.stft")
    if have_librosa:
        import librosa
        w = scipy.signal.get_window("hann", nfft)
        scale = 1.0 / (fs * float((w ** 2).sum()))

        def librosa_psd():
            z = librosa.stft(x, n_fft=nfft, hop_length=hop, window="hann", center=False)
            p = np.abs(z) ** 2
            p[1:-1] *= 2
            return p * scale
        t_lr, s_lr = best_time(librosa_psd, repeats)
        peers.append(("librosa.stft", t_lr))
        checks.append(("librosa.stft", agree(s_ours, s_lr)))
    else:
        skipped.append("librosa.stft")
    report("Spectrogram", (f"specscope spectrogram [{chosen}]", t_ours), peers, skipped)
    for name, text in checks:
        print(f"  agreement with {name:<26} {text}")

    # -- batched FFT --------------------------------------------------------------------
    batch = x.reshape(-1, 1024)
    t_fft, y_ours = best_time(lambda: call("fft", batch), repeats)
    peers, skipped, checks = [], [], []
    t_np, y_np = best_time(lambda: np.fft.fft(batch, axis=-1), repeats)
    peers.append(("numpy.fft.fft", t_np))
    checks.append(("numpy.fft.fft", agree(np.abs(y_ours), np.abs(y_np))))
    if have_torch:
        import torch
        bt = torch.from_numpy(batch)
        t_tf, y_tf = best_time(lambda: torch.fft.fft(bt, dim=-1).numpy(), repeats)
        peers.append(("torch.fft.fft (CPU)", t_tf))
        checks.append(("torch.fft.fft", agree(np.abs(y_ours), np.abs(y_tf))))
    else:
        skipped.append("torch.fft.fft")
    report(f"Batched 1024-point FFT ({batch.shape[0]} rows, complex64 out)",
           ("specscope fft", t_fft), peers, skipped)
    for name, text in checks:
        print(f"  agreement with {name:<26} {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
