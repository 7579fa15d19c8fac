"""Features shared by all models, and the cascade's acoustic front end.

- Frame features: 50 ms frames (100 samples), |rfft| pooled into 16 log-spaced bands,
  log(1 + x).
- Clip descriptors: mean and std per band, the envelope modulation spectrum (FFT of the frame
  energy, 0-4 Hz, 8 bins) and the dominant inter-onset interval.
- Speech front end (CASCADE only): syllables segmented by energy, grouped into words by the
  length of the silences between them, and each syllable's harmonic amplitude profile.
"""

from __future__ import annotations

import numpy as np

from .audio import N_HARMONICS, NYQUIST, SR

FRAME = 100                  # 50 ms
N_BANDS = 16
MOD_BINS = 8
DESC_DIM = 2 * N_BANDS + MOD_BINS + 1


def _band_edges(n_bins: int = FRAME // 2 + 1, n_bands: int = N_BANDS) -> np.ndarray:
    """Log-spaced band edges over the rfft bins 1..50 (DC left out), at least one bin each."""
    raw = np.geomspace(1, n_bins, n_bands + 1)
    edges = [1]
    for i, e in enumerate(raw[1:], start=1):
        edges.append(max(int(round(e)), edges[-1] + 1))
        edges[-1] = min(edges[-1], n_bins - (n_bands - i))
    edges[-1] = n_bins
    return np.array(edges)


EDGES = _band_edges()
POOL = np.zeros((FRAME // 2 + 1, N_BANDS))
for _b in range(N_BANDS):
    POOL[EDGES[_b]:EDGES[_b + 1], _b] = 1.0 / (EDGES[_b + 1] - EDGES[_b])
# INFERRED: the 8 modulation bins are log-spaced from 0.125 to 4 Hz, so that breathing
# (0.17-0.53 Hz) and heart (0.75-2.3 Hz) rates fall into different bins.
MOD_EDGES = np.geomspace(0.125, 4.0, MOD_BINS + 1)
FRAME_RATE = SR / FRAME


def frame_features(x: np.ndarray) -> np.ndarray:
    """(n_frames, 16) log band magnitudes of non-overlapping 50 ms frames."""
    n = len(x) // FRAME
    mag = np.abs(np.fft.rfft(np.asarray(x[:n * FRAME], float).reshape(n, FRAME), axis=1))
    return np.log1p(mag @ POOL)


def modulation_spectrum(energy: np.ndarray, rate: float = FRAME_RATE) -> np.ndarray:
    """Mean |FFT| of the mean-removed frame energy in 8 log bins over 0.125-4 Hz, scaled by
    the mean energy (level invariant), then log(1 + x)."""
    e = energy - energy.mean()
    n = max(512, len(e))
    spec = np.abs(np.fft.rfft(e, n)) / (len(e) * (energy.mean() + 1e-12))
    return np.log1p(spec @ _mod_pool(n, rate))


_MOD_POOL: dict = {}


def _mod_pool(n, rate):
    """(n//2+1, 8) averaging matrix of the modulation bins for an FFT of length n."""
    if (n, rate) not in _MOD_POOL:
        f = np.fft.rfftfreq(n, 1 / rate)
        m = np.stack([(f >= a) & (f < b) for a, b in
                      zip(MOD_EDGES[:-1], MOD_EDGES[1:], strict=True)], axis=1).astype(float)
        _MOD_POOL[(n, rate)] = m / m.sum(axis=0)
    return _MOD_POOL[(n, rate)]


def dominant_ioi(x: np.ndarray, lo_s: float = 0.3, hi_s: float = 4.0) -> float:
    """Dominant inter-onset interval (s): the lag of the largest autocorrelation of the 10 ms
    energy envelope (unbiased, mean removed) between 0.3 s and min(4 s, 2/3 of the clip).
    INFERRED: the spec names the descriptor, not how it is found."""
    hop = SR // 100
    n = len(x) // hop
    env = np.sqrt(np.mean(np.asarray(x[:n * hop], float).reshape(n, hop) ** 2, axis=1))
    env = env - env.mean()
    spec = np.fft.rfft(env, 2 * n)
    ac = np.fft.irfft(spec * np.conj(spec))[:n] / (n - np.arange(n))
    a, b = int(lo_s * 100), min(int(hi_s * 100), int(2 * n / 3))
    return (a + int(np.argmax(ac[a:b]))) / 100.0


def describe(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Clip descriptors (41,) and the mean frame features of the clip's two halves (32,)."""
    fr = frame_features(x)
    energy = np.exp(fr).mean(axis=1)
    desc = np.concatenate([fr.mean(0), fr.std(0), modulation_spectrum(energy),
                           [np.log(dominant_ioi(x))]])
    h = len(fr) // 2
    halves = np.concatenate([fr[:h].mean(0), fr[h:].mean(0)])
    return desc.astype(np.float32), halves.astype(np.float32)


# --- speech front end (CASCADE) ---------------------------------------------------------------
HOP = SR // 100              # 10 ms energy frames
MIN_SYLLABLE = 4             # voiced runs shorter than 40 ms are dropped as clicks
WORD_BREAK = 5               # a silence of >= 50 ms separates words (INFERRED; words: 100 ms)
F0_GRID = np.arange(90.0, 251.0, 1.0)
NFFT = 1024
OCTAVE_TOL = 0.9   # INFERRED: octave guard (an even-heavy vowel scores 0.85 at 2 x F0)


def segment(x: np.ndarray) -> list[list[tuple[int, int]]]:
    """Syllables found by energy, grouped into words: [[(start, end) samples, ...], ...].

    A 10 ms frame is voiced when its log energy is above the midpoint between the clip's 10th
    and 90th percentile log energies (a noise floor and a speech level)."""
    n = len(x) // HOP
    e = np.log(np.mean(np.asarray(x[:n * HOP], float).reshape(n, HOP) ** 2, axis=1) + 1e-10)
    lo, hi = np.percentile(e, [10, 90])
    voiced = e > lo + 0.5 * (hi - lo)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], voiced.astype(int), [0]])))
    runs = [(a, b) for a, b in zip(edges[::2], edges[1::2], strict=True)
            if b - a >= MIN_SYLLABLE]
    words: list[list[tuple[int, int]]] = []
    prev_end = None
    for a, b in runs:
        if prev_end is None or a - prev_end >= WORD_BREAK:
            words.append([])
        words[-1].append((a * HOP, b * HOP))
        prev_end = b
    return words


_HARM_FREQ = F0_GRID[:, None] * np.arange(1, N_HARMONICS + 1)[None, :]   # (n_f0, 6)
_HARM_OK = _HARM_FREQ < 0.95 * NYQUIST
_HARM_BIN = np.minimum(np.round(_HARM_FREQ / (SR / NFFT)).astype(int), NFFT // 2)
# harmonic-sum matrix: score(f0) = sum of the peak magnitudes at its harmonics below Nyquist
_COMB = np.zeros((NFFT // 2 + 1, len(F0_GRID)))
for _j in range(len(F0_GRID)):
    np.add.at(_COMB[:, _j], _HARM_BIN[_j][_HARM_OK[_j]], 1.0)
_HANN: dict = {}


def _hann(n):
    if n not in _HANN:
        _HANN[n] = np.hanning(n)
    return _HANN[n]


def harmonic_profiles(x: np.ndarray, spans: list[tuple[int, int]]) -> tuple[np.ndarray,
                                                                            np.ndarray]:
    """Per syllable span: F0 by harmonic sum over 90-250 Hz, then the magnitudes at harmonics
    1-6 of that F0 (NaN at or above 0.95 x Nyquist), unit-normalised. Returns (f0s, (n, 6))."""
    if not spans:
        return np.zeros(0), np.zeros((0, N_HARMONICS))
    segs = np.zeros((len(spans), NFFT))
    for i, (a, b) in enumerate(spans):
        seg = np.asarray(x[a:b], float)[:NFFT]
        segs[i, :len(seg)] = seg * _hann(len(seg))
    mag = np.abs(np.fft.rfft(segs, NFFT, axis=1))
    # a harmonic's peak: the largest of its nearest bin and the two beside it
    mag[:, 1:-1] = np.maximum(np.maximum(mag[:, :-2], mag[:, 1:-1]), mag[:, 2:])
    score = mag @ _COMB                                          # (n, n_f0)
    # octave check: among the score's local maxima, the highest F0 within OCTAVE_TOL of the
    # best score (a subharmonic collects noise bins between the true harmonics)
    pad = np.pad(score, ((0, 0), (1, 1)), constant_values=-np.inf)
    local = (score >= pad[:, :-2]) & (score >= pad[:, 2:])
    good = local & (score >= OCTAVE_TOL * score.max(axis=1, keepdims=True))
    best = score.shape[1] - 1 - np.argmax(good[:, ::-1], axis=1)
    f0 = F0_GRID[best]
    ok = _HARM_OK[best]
    peak = np.take_along_axis(mag, _HARM_BIN[best], axis=1)      # (n, 6)
    prof = np.where(ok, peak, np.nan)
    prof = prof / (np.sqrt(np.nansum(prof ** 2, axis=1, keepdims=True)) + 1e-12)
    return f0, prof
