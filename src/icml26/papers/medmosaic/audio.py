"""Procedural medical audio at 2 kHz (float32): heart and lung sounds, tone speech.

Everything here is the spec's inferred miniature (spec 39, "Audio synthesis"); numbers the
spec does not give are marked INFERRED. One function per sound type; each takes an explicit
numpy Generator and the latent variables it renders, so the item builder (bench.py) decides
the labels and this module only draws nuisance variation (phases, noise, jitter).
"""

from __future__ import annotations

import numpy as np

SR = 2000                    # samples per second
NYQUIST = SR / 2
F32 = np.float32

# --- physiological sounds -------------------------------------------------------------------
HEART_S = 4.0
LUNG_S = 6.0
HEART_CONDITIONS = ("normal", "murmur", "irregular", "gallop")
LUNG_CONDITIONS = ("normal", "wheeze", "crackles", "stridor")
HR_RANGE = (45.0, 140.0)     # bpm
RR_RANGE = (10.0, 32.0)      # breaths per minute
HR_EDGES = (60.0, 100.0)     # categories <60, 60-100, >100
RR_EDGES = (12.0, 20.0)      # categories <12, 12-20, >20
HEART_RATES = ("hr-low", "hr-normal", "hr-high")
LUNG_RATES = ("rr-low", "rr-normal", "rr-high")
HEART_SNR_DB = (0.0, 15.0)
EXTRA_AMP = (0.15, 0.6)      # murmur / gallop (and INFERRED: lung adventitious) vs S1 / breath
INSPIRATION = 0.4            # INFERRED: share of the breath cycle spent breathing in


def rate_category(rate: float, site: str) -> str:
    lo, hi = HR_EDGES if site == "heart" else RR_EDGES
    names = HEART_RATES if site == "heart" else LUNG_RATES
    return names[0] if rate < lo else names[2] if rate > hi else names[1]


def rate_in_category(rng: np.random.Generator, category: int, site: str) -> float:
    """A rate drawn uniformly inside one category's slice of the spec's range (the item builder
    draws the category first where answer priors must be balanced; INFERRED)."""
    lo, hi = HR_RANGE if site == "heart" else RR_RANGE
    edges = HR_EDGES if site == "heart" else RR_EDGES
    bounds = (lo, edges[0], edges[1], hi)
    return float(rng.uniform(bounds[category], bounds[category + 1]))


def _band_noise(rng, n, f_lo, f_hi):
    """White Gaussian noise band-limited to [f_lo, f_hi] Hz by zeroing FFT bins; unit RMS."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / SR)
    spec[(f < f_lo) | (f > f_hi)] = 0
    x = np.fft.irfft(spec, n)
    return x / (np.sqrt(np.mean(x ** 2)) + 1e-12)


def _burst(freq, dur=0.04, decay=30.0):
    """A damped sine burst (S1, S2: 60 Hz; gallop: 30 Hz), 40 ms, decay 30/s."""
    t = np.arange(int(round(dur * SR))) / SR
    return np.sin(2 * np.pi * freq * t) * np.exp(-decay * t)


S1 = _burst(60.0)
GALLOP = _burst(30.0)
S1_RMS = float(np.sqrt(np.mean(S1 ** 2)))


def _add(x, start, wave):
    """Add ``wave`` into ``x`` at sample ``start`` (clipped at the clip's end)."""
    if start >= len(x):
        return
    k = min(len(wave), len(x) - start)
    x[start:start + k] += wave[:k]


def heart(rng: np.random.Generator, condition: str, hr: float,
          snr_db: tuple[float, float] = HEART_SNR_DB) -> np.ndarray:
    """4 s phonocardiogram: S1 at each beat onset, S2 at 0.3 of the beat interval; murmur
    (150-300 Hz noise between S1 and S2), irregular (interval jitter sd 25%) or gallop (30 Hz
    burst at 0.55 of the interval), at amplitude U(0.15, 0.6) of S1; white background noise at
    SNR U(0, 15) dB over the clip (``snr_db``: the full profile's SNR sweep)."""
    n = int(HEART_S * SR)
    x = np.zeros(n)
    interval = 60.0 / hr
    amp = rng.uniform(*EXTRA_AMP)
    murmur = _band_noise(rng, n, 150, 300) * amp * S1_RMS if condition == "murmur" else None
    t = rng.uniform(0, interval)               # random phase of the first beat
    while t < HEART_S:
        beat = interval
        if condition == "irregular":           # sd 25% jitter; INFERRED floor at 40%
            beat = interval * max(0.4, 1.0 + 0.25 * rng.standard_normal())
        s1 = int(t * SR)
        s2 = int((t + 0.3 * beat) * SR)
        _add(x, s1, S1)
        _add(x, s2, S1)
        if condition == "gallop":
            _add(x, int((t + 0.55 * beat) * SR), amp * GALLOP)
        if murmur is not None:
            a, b = s1 + len(S1), min(s2, n)
            if b > a:
                x[a:b] += murmur[a:b]
        t += beat
    snr = rng.uniform(*snr_db)
    p_sig = np.mean(x ** 2)
    x += rng.standard_normal(n) * np.sqrt(p_sig / 10 ** (snr / 10))
    return x.astype(F32)


def lung(rng: np.random.Generator, condition: str, rr: float) -> np.ndarray:
    """6 s lung sound: 100-600 Hz noise under a breathing envelope at RR breaths/min; wheeze
    (400 Hz tone, expiration), crackles (5 ms clicks, Poisson 8/s, inspiration) or stridor
    (800 Hz tone, inspiration). INFERRED: inspiration is the first 40% of each cycle (envelope
    peak 1), expiration the rest (peak 0.7); tone RMS and click peaks scale with U(0.15, 0.6)
    of the breath noise's RMS (clicks x3, being transients); no added background noise."""
    n = int(LUNG_S * SR)
    t = np.arange(n) / SR
    phase = (t * rr / 60.0 + rng.uniform()) % 1.0
    insp = phase < INSPIRATION
    env = np.where(insp, np.sin(np.pi * phase / INSPIRATION),
                   0.7 * np.sin(np.pi * (phase - INSPIRATION) / (1 - INSPIRATION)))
    x = _band_noise(rng, n, 100, 600) * env
    amp = rng.uniform(*EXTRA_AMP)
    if condition == "wheeze":
        x += amp * np.sqrt(2) * np.sin(2 * np.pi * 400 * t + rng.uniform(0, 2 * np.pi)) \
            * np.where(insp, 0.0, env / 0.7)
    elif condition == "stridor":
        x += amp * np.sqrt(2) * np.sin(2 * np.pi * 800 * t + rng.uniform(0, 2 * np.pi)) \
            * np.where(insp, env, 0.0)
    elif condition == "crackles":
        k = np.arange(10)
        click = 3 * amp * np.sin(2 * np.pi * k / 10) * np.hanning(12)[1:-1]
        for start in np.flatnonzero(insp & (rng.random(n) < 8.0 / SR)):
            _add(x, int(start), click)
    return x.astype(F32)


# --- tone speech ------------------------------------------------------------------------------
SYMPTOMS = ("cough", "fever", "nausea", "dizzy", "rash", "pain")
MEDICATIONS = ("aspirin", "insulin", "penicillin", "ibuprofen", "metformin", "warfarin")
SITES = ("chest", "head", "back", "throat", "stomach", "knee")
NUMBERS = ("one", "two", "three", "five", "seven", "ten")
WORDS = SYMPTOMS + MEDICATIONS + SITES + NUMBERS            # the 24-word vocabulary
FILLER = SITES + NUMBERS                                    # words that carry no fact
# INFERRED: 8 "vowel" profiles (amplitudes of harmonics 1-6), built to stay distinct on the
# first 4 harmonics, the only ones below Nyquist for the highest voices.
VOWELS = np.array([
    [1.0, 0.1, 0.1, 0.1, 0.6, 0.1],
    [0.1, 1.0, 0.1, 0.1, 0.1, 0.6],
    [0.1, 0.1, 1.0, 0.1, 0.6, 0.6],
    [0.1, 0.1, 0.1, 1.0, 0.1, 0.1],
    [1.0, 1.0, 0.1, 0.1, 0.1, 0.1],
    [0.1, 0.1, 1.0, 1.0, 0.1, 0.6],
    [1.0, 0.1, 1.0, 0.1, 0.1, 0.1],
    [0.1, 1.0, 0.1, 1.0, 0.6, 0.1],
])
N_HARMONICS = VOWELS.shape[1]
# Each word's fixed syllable pair: the 24 ordered pairs (a, b), a != b, taken in a fixed
# shuffled order (INFERRED: no word repeats a vowel, so a stutter is never a word).
_PAIRS = [(a, b) for a in range(8) for b in range(8) if a != b]
_ORDER = np.random.default_rng(39).permutation(len(_PAIRS))[:len(WORDS)]
LEXICON = {w: _PAIRS[i] for w, i in zip(WORDS, _ORDER, strict=True)}
SYLLABLE_S = 0.150
SYL_GAP_S = 0.025            # INFERRED silences: inside a word, between words, between turns
WORD_GAP_S = 0.100
TURN_GAP_S = 0.250
EDGE_S = 0.100               # leading and trailing silence
RAMP = 20                    # 10 ms raised-cosine on- and offset of each syllable
DOCTOR_F0 = (100.0, 130.0)
PATIENT_F0 = (180.0, 230.0)
VOICE_F0 = (100.0, 230.0)    # INFERRED: single-speaker VOICE clips span both ranges
ARTIFACTS = ("none", "hoarse", "tremor", "stutter", "dropout")

_ENVELOPE = np.ones(int(SYLLABLE_S * SR))
_ENVELOPE[:RAMP] = 0.5 - 0.5 * np.cos(np.pi * np.arange(RAMP) / RAMP)
_ENVELOPE[-RAMP:] = _ENVELOPE[:RAMP][::-1]


def syllables(f0: float, phases: np.ndarray) -> np.ndarray:
    """The 8 vowels' 150 ms harmonic tones (8, 300) of one speaker: harmonic k of f0 with the
    vowel's amplitude; harmonics at or above 0.95 x Nyquist are left out (band-limited
    synthesis, no aliasing at 2 kHz)."""
    t = np.arange(len(_ENVELOPE)) / SR
    k = np.arange(1, N_HARMONICS + 1)
    keep = k * f0 < 0.95 * NYQUIST
    tones = np.sin(2 * np.pi * f0 * k[keep, None] * t[None] + phases[keep, None])
    return (VOWELS[:, keep] @ tones) * _ENVELOPE


def speech(rng: np.random.Generator, turns: list[list[str]], f0s: list[float],
           artifact: str = "none", target: tuple[int, int] | None = None):
    """Render turns of words (one speaker F0 per turn) as tone speech.

    ``artifact`` (VOICE clips) applies to the whole clip (hoarse: white noise at SNR 5 dB;
    tremor: 5 Hz AM, depth 0.6) or to the ``target`` word (turn, word) (stutter: its first
    syllable said twice; dropout: 100 ms zeroed inside it; INFERRED: placed on the word that
    carries the answer). Returns (signal, word spans [(turn, word, start, end) in samples]).
    """
    phases = rng.uniform(0, 2 * np.pi, (len(turns), N_HARMONICS))
    cache: dict = {}
    pieces: list[tuple[int, np.ndarray]] = []
    spans = []
    pos = int(EDGE_S * SR)
    syl_n, syl_gap, word_gap = len(_ENVELOPE), int(SYL_GAP_S * SR), int(WORD_GAP_S * SR)
    for ti, (words, f0) in enumerate(zip(turns, f0s, strict=True)):
        if ti:
            pos += int(TURN_GAP_S * SR) - word_gap
        for wi, word in enumerate(words):
            vowels = list(LEXICON[word])
            if artifact == "stutter" and target == (ti, wi):
                vowels = [vowels[0]] + vowels
            start = pos
            for si, v in enumerate(vowels):
                if si:
                    pos += syl_gap
                if f0 not in cache:           # one set of tones per speaker
                    cache[f0] = syllables(f0, phases[ti])
                pieces.append((pos, cache[f0][v]))
                pos += syl_n
            spans.append((ti, wi, start, pos))
            pos += word_gap
    n = pos - word_gap + int(EDGE_S * SR)
    x = np.zeros(n)
    for start, wave in pieces:
        x[start:start + len(wave)] += wave
    if artifact == "tremor":
        x *= 1.0 + 0.6 * np.sin(2 * np.pi * 5.0 * np.arange(n) / SR + rng.uniform(0, 2 * np.pi))
    elif artifact == "dropout":
        (_, _, a, b), = [s for s in spans if (s[0], s[1]) == target]
        gap = int(0.1 * SR)
        g0 = int(rng.integers(a, max(a + 1, b - gap)))
        x[g0:g0 + gap] = 0.0
    elif artifact == "hoarse":
        p_sig = np.mean(x ** 2)
        x += rng.standard_normal(n) * np.sqrt(p_sig / 10 ** (5.0 / 10))
    return x.astype(F32), spans
