"""TelecomTS-mini: synthetic 5G observability windows with the official anomaly catalogue.

Normal windows follow the spec's session generator (our design: the official repository
injects anomalies into real testbed traces and has no normal-traffic generator). Anomalies
follow the official catalogue (Ali-maatouk/TelecomTS, anomaly_timestamps_sim.py `anomaly_dict`
and anomalies.py): every affected KPI gets its own parameter draws, every time-dependent
effect uses the **seconds** elapsed since onset, and every KPI is clipped to the official hard
bounds afterwards (MCS and byte counts rounded). Shapes: windows (n, C, T), C = 12 KPIs, time
last, 10 Hz.
"""

from __future__ import annotations

import numpy as np

from icml26.timeseries.generate import ar1, onoff_markov, sinusoids, zero_inflated_lognormal

HZ = 10.0
KPIS = ("RSRP", "UL_SNR", "DL_MCS", "UL_MCS", "DL_BLER", "UL_BLER", "TX_Bytes", "RX_Bytes",
        "PRB_Util_DL", "PRB_Util_UL", "UL_Buffer", "DL_Packets")
K = {name: i for i, name in enumerate(KPIS)}
UNITS = ("dBm", "dB", "index", "index", "fraction", "fraction", "B/100 ms", "B/100 ms", "%",
         "%", "B", "packets")
# counts get log1p in the RAW representation (spec); dB, %, MCS and BLER stay as they are
LOG_KPIS = ("TX_Bytes", "RX_Bytes", "UL_Buffer", "DL_Packets")
ROUNDED = ("DL_MCS", "UL_MCS", "TX_Bytes", "RX_Bytes")   # anomalies.py rounds MCS and bytes
# official hard bounds (anomalies.py); BLER is a fraction in [0, 1]
BOUNDS = {"RSRP": (-135.0, -40.0), "UL_SNR": (-5.0, 30.0), "DL_MCS": (0.0, 28.0),
          "UL_MCS": (0.0, 28.0), "DL_BLER": (0.0, 1.0), "UL_BLER": (0.0, 1.0),
          "TX_Bytes": (0.0, 1e8), "RX_Bytes": (0.0, 1e8), "PRB_Util_DL": (0.0, 100.0),
          "PRB_Util_UL": (0.0, 100.0), "UL_Buffer": (0.0, 2e5), "DL_Packets": (0.0, 1e4)}
# exp_growth's positive floor eps = |N(0, s)| + s/4 with s = factor x upper bound (anomalies.py)
EXP_FLOOR = {"DL_BLER": 0.001, "UL_BLER": 0.001, "DL_Packets": 0.001, "UL_Buffer": 0.0,
             "PRB_Util_DL": 0.0, "PRB_Util_UL": 0.0}

# class order of the official anomaly_to_index
TYPES = ("Antenna Failure", "Co-Channel Interference (Mild)",
         "Co-Channel Interference (Severe)", "Faulty RF Filters (Temporal)",
         "Doppler Shift (Severe)", "Faulty Handover (Too Frequent)", "Buffer Overflow (Gradual)",
         "Resource Allocation Bugs", "High Congestion (Gradual)",
         "High Congestion (Sudden Spike)")
SHORT = ("antenna", "interf-mild", "interf-severe", "rf-filter", "doppler", "handover",
         "buffer-overflow", "ra-bug", "congestion-grad", "congestion-spike")
MILD, SEVERE = 1, 2

BYTES = ("TX_Bytes", "RX_Bytes")
BLER = ("DL_BLER", "UL_BLER")
PRB = ("PRB_Util_DL", "PRB_Util_UL")


def _e(fn, *ranges):
    return (fn, ranges)


# (KPI, function, parameter ranges) per type, from the official catalogue restricted to our 12
# KPIs (UL_NPRB, PRBs_*_Current and UL_Packets are not generated here). Ranges per second.
CATALOGUE = {
    0: [("RSRP", *_e("c_add", (-20, -10))), ("UL_SNR", *_e("c_add", (-15, -5))),
        ("DL_BLER", *_e("exp", (0.035, 0.05))), ("UL_BLER", *_e("exp", (0.035, 0.045))),
        ("DL_MCS", *_e("c_add", (-15, -5))), ("UL_MCS", *_e("c_add", (-15, -5))),
        ("TX_Bytes", *_e("log_decay", (0.2, 0.3))), ("RX_Bytes", *_e("log_decay", (0.2, 0.3))),
        ("UL_Buffer", *_e("exp", (0.06, 0.075))), ("DL_Packets", *_e("c_mul", (1.3, 2.0)))],
    1: [("RSRP", *_e("c_add", (-8, -3))), ("UL_SNR", *_e("c_add", (-3, -1))),
        *[(k, *_e("c_mul", (1.1, 1.4))) for k in BLER],
        *[(k, *_e("c_mul", (0.85, 0.95))) for k in BYTES],
        *[(k, *_e("c_mul", (1.05, 1.2))) for k in PRB]],
    2: [("RSRP", *_e("c_add", (-15, -8))), ("UL_SNR", *_e("c_add", (-15, -8))),
        *[(k, *_e("c_mul", (1.5, 3.0))) for k in BLER],
        *[(k, *_e("c_mul", (0.2, 0.7))) for k in BYTES],
        *[(k, *_e("c_mul", (1.3, 1.8))) for k in PRB],
        ("DL_Packets", *_e("c_mul", (0.3, 0.6)))],
    3: [("RSRP", *_e("linear", (-0.5, -0.2))), ("UL_SNR", *_e("linear", (-0.35, -0.2))),
        ("DL_BLER", *_e("exp", (0.025, 0.035))), ("UL_BLER", *_e("exp", (0.02, 0.03))),
        *[(k, *_e("log_decay", (0.012, 0.2))) for k in BYTES],
        *[(k, *_e("exp", (0.006, 0.009))) for k in PRB]],
    4: [("RSRP", *_e("sin_add", (3, 8), (2, 3), (-4, -2))),
        ("UL_SNR", *_e("sin_add", (2, 5), (2, 3), (-3, -1))),
        ("DL_MCS", *_e("c_add", (-2, -1))), ("UL_MCS", *_e("c_add", (-2, -1))),
        *[(k, *_e("sin_mul", (0.2, 0.4), (2, 3), (1, 1))) for k in BYTES]],
    5: [("RSRP", *_e("sin_add", (2, 5), (0.1, 0.3), (0, 0))),
        ("UL_SNR", *_e("sin_add", (1, 3), (0.1, 0.3), (0, 0))),
        *[(k, *_e("c_mul", (1.3, 2.5))) for k in BLER],
        *[(k, *_e("c_mul", (0.5, 0.9))) for k in BYTES],
        ("UL_Buffer", *_e("c_mul", (1.5, 3.0))), ("DL_Packets", *_e("c_mul", (1.5, 3.0)))],
    6: [("UL_Buffer", *_e("exp", (0.12, 0.2))), ("TX_Bytes", *_e("log_decay", (0.17, 0.2))),
        ("RX_Bytes", *_e("log_decay", (0.15, 0.18))),
        ("DL_Packets", *_e("linear", (5, 10))),       # official: packets rise (+5..+10 per s)
        *[(k, *_e("exp", (0.03, 0.04))) for k in BLER],
        ("PRB_Util_DL", *_e("logistic", (0.07, 0.1))),
        ("PRB_Util_UL", *_e("logistic", (0.06, 0.08)))],
    7: [*[(k, *_e("sin_mul", (0.3, 1.0), (0.3, 1.0), (1, 1))) for k in PRB],
        *[(k, *_e("c_mul", (1.2, 2.0))) for k in BLER],
        # official: bytes first scaled to 10-40 %, then oscillate
        *[(k, *_e("sin_mul", (0.4, 0.7), (0.3, 1.0), (0.1, 0.4))) for k in BYTES]],
    8: [("UL_Buffer", *_e("exp", (0.05, 0.13))),
        ("PRB_Util_DL", *_e("logistic", (0.04, 0.07))),
        ("PRB_Util_UL", *_e("logistic", (0.03, 0.06))),
        *[(k, *_e("exp", (0.017, 0.025))) for k in BLER],
        ("TX_Bytes", *_e("log_decay", (0.11, 0.14))), ("RX_Bytes", *_e("log_decay", (0.10, 0.12))),
        ("DL_Packets", *_e("exp", (0.08, 0.13)))],
    9: [("UL_Buffer", *_e("c_mul", (2.0, 5.0))),
        *[(k, *_e("c_mul", (1.3, 1.8))) for k in PRB],
        *[(k, *_e("c_mul", (1.5, 2.5))) for k in BLER],
        *[(k, *_e("c_mul", (0.5, 0.8))) for k in BYTES],
        ("DL_Packets", *_e("c_mul", (0.4, 0.6)))],
}
# the KPI to show for each type in the example figure
SHOW = ("RSRP", "UL_SNR", "UL_SNR", "RSRP", "RSRP", "RSRP", "UL_Buffer", "PRB_Util_DL",
        "DL_Packets", "UL_Buffer")

REGIMES = ("idle", "web", "video", "bulk")
TX_MEDIAN = np.array([1e2, 1e4, 2e5, 1e6])   # bytes per 100 ms when on; RX = 4 x TX (spec)


def normal_windows(rng: np.random.Generator, n: int, p: dict) -> np.ndarray:
    """n normal sessions (n, 12, T) in physical units (spec's normal dynamics)."""
    T = int(p["T"])
    x = np.empty((n, len(KPIS), T))
    regime = rng.integers(0, len(REGIMES), n)
    rsrp0 = rng.uniform(-110.0, -75.0, n)
    snr0 = rng.uniform(3.0, 28.0, n)
    x[:, K["RSRP"]] = rsrp0[:, None] + ar1(rng, n, T, 0.9, 1.5)
    snr = snr0[:, None] + ar1(rng, n, T, 0.85, 2.0)
    x[:, K["UL_SNR"]] = snr
    for name, s in (("DL_MCS", snr + 3.0), ("UL_MCS", snr)):   # DL uses SNR + 3 (spec)
        x[:, K[name]] = np.round(np.clip(0.9 * s + rng.normal(0.0, 1.5, (n, T)), 0, 28))
    for name, s in (("DL_BLER", snr + 3.0), ("UL_BLER", snr)):
        # INFERRED ("mean rises when SNR < 8 dB"): the burst median grows by
        # exp(bler_snr_slope x (8 - SNR)) below 8 dB; zero w.p. 0.7 (spec), 0.03 = 3 %
        med = 0.03 * np.exp(float(p["bler_snr_slope"]) * np.maximum(0.0, 8.0 - s))
        x[:, K[name]] = np.clip(zero_inflated_lognormal(rng, (n, T), 0.7, med, 0.8), 0, 1)
    on = onoff_markov(rng, n, T, 0.10, 0.05)              # on -> off 0.10, off -> on 0.05
    sig = float(p["traffic_sigma"])                        # INFERRED log-normal spread
    tx_med = TX_MEDIAN[regime][:, None]
    for name, med in (("TX_Bytes", tx_med), ("RX_Bytes", 4.0 * tx_med)):
        burst = med * np.exp(sig * rng.standard_normal((n, T)))
        x[:, K[name]] = np.round(np.where(on, burst, 0.0))
    # INFERRED: the regime's capacity is its median burst of that direction
    for name, src, cap in (("PRB_Util_DL", "RX_Bytes", 4.0 * tx_med),
                           ("PRB_Util_UL", "TX_Bytes", tx_med)):
        b = x[:, K[src]]
        x[:, K[name]] = np.clip(100.0 * b / (b + cap) + rng.normal(0.0, 3.0, (n, T)), 0, 100)
    x[:, K["UL_Buffer"]] = zero_inflated_lognormal(rng, (n, T), 0.8, 5e3, 1.0)
    x[:, K["DL_Packets"]] = rng.poisson(x[:, K["RX_Bytes"]] / 1200.0)
    return clip(x)


def clip(x: np.ndarray) -> np.ndarray:
    for name, (lo, hi) in BOUNDS.items():
        np.clip(x[:, K[name]], lo, hi, out=x[:, K[name]])
    return x


def onset_times(rng: np.random.Generator, n: int, p: dict):
    """Elapsed seconds since onset (n, T) and the active mask (n, T) of n anomalies, with
    whether each covers the whole window.

    Full windows (fraction ``full_frac``, the spec's 50 %): the onset precedes the window by
    a ~ Exp(mean ``full_elapsed_s``) seconds (official window mix: the elapsed time at a fully
    covered window's start is memoryless with the 24 s mean duration). Partial windows: onset
    at step t0 ~ U{onset_lo..onset_hi} (spec) and a duration of ``min_steps`` / 10 s plus
    Exp(mean ``duration_s``) (official durations, at least the spec's 30 steps), so some end
    inside the window.
    """
    T = int(p["T"])
    steps = np.arange(T)
    full = rng.random(n) < float(p["full_frac"])
    a = rng.exponential(float(p["full_elapsed_s"]), n)
    t0 = rng.integers(int(p["onset_lo"]), int(p["onset_hi"]) + 1, n)
    dur = int(p["min_steps"]) + np.round(HZ * rng.exponential(float(p["duration_s"]), n))
    elapsed = np.where(full[:, None], a[:, None] + steps / HZ, (steps - t0[:, None]) / HZ)
    active = full[:, None] | ((steps >= t0[:, None]) & (steps < (t0 + dur)[:, None]))
    return np.where(active, elapsed, 0.0), active, full


def _smooth(x, m, bandwidth_steps):
    """Gaussian-kernel smoothing of x over the active steps only (exp_growth's level S)."""
    T = x.shape[-1]
    d = np.arange(T)[:, None] - np.arange(T)[None, :]
    ker = np.exp(-0.5 * (d / bandwidth_steps) ** 2)
    num = (x * m) @ ker
    den = m.astype(float) @ ker
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), x)


def transform(rng, fn, x, t, m, pars, name, p):
    """One official function type on x (n, T) at elapsed seconds t, active mask m; pars are
    per-window parameter arrays (n,). Returns the new values (inactive steps unchanged)."""
    n, T = x.shape
    noise = rng.standard_normal((n, T))
    if fn == "c_add":
        (c,) = pars
        y = x + c[:, None] + 0.015 * np.abs(c)[:, None] * noise
    elif fn == "c_mul":
        (c,) = pars
        y = x * c[:, None]
    elif fn == "linear":
        (c,) = pars
        y = x + c[:, None] * t + 1.5 * np.abs(c)[:, None] * noise
    elif fn == "exp":
        (r,) = pars
        level = _smooth(x, m, 2.0 * HZ)                       # 2 s bandwidth
        s = EXP_FLOOR.get(name, 0.005) * BOUNDS[name][1]
        eps = np.abs(s * noise) + s / 4.0
        y = (level + eps) * np.exp(r[:, None] * t) + (x - level)
    elif fn == "logistic":
        (r,) = pars
        diff = BOUNDS[name][1] - x
        shift = -2.0 * np.log((3 + np.sqrt(3)) / (3 - np.sqrt(3))) / r      # = -2.634 / r
        sig = lambda z: 1.0 / (1.0 + np.exp(-z))  # noqa: E731
        gain = sig(r[:, None] * (t + shift[:, None])) - sig(r * shift)[:, None]
        y = x + diff * gain + 0.005 * np.abs(diff) * noise
    elif fn == "log_decay":
        (c,) = pars
        y = x * (1.0 - c[:, None] * np.log1p(t))
    elif fn == "sin_add":
        amp, f, off = pars
        y = (x + off[:, None] + amp[:, None] * np.sin(2 * np.pi * f[:, None] * t)
             + np.abs(amp)[:, None] / 20.0 * noise)
    elif fn == "sin_mul":
        amp, f, off = pars
        y = x * off[:, None] * (1.0 + amp[:, None] * np.sin(2 * np.pi * f[:, None] * t))
    else:  # pragma: no cover
        raise ValueError(fn)
    return np.where(m, y, x)


def inject(rng: np.random.Generator, x: np.ndarray, types: np.ndarray, t: np.ndarray,
           m: np.ndarray, p: dict) -> np.ndarray:
    """Inject anomaly types[i] (>= 0; -1 = normal) into window i of x in place and return x."""
    for k in range(len(TYPES)):
        idx = np.flatnonzero(types == k)
        if not idx.size:
            continue
        for name, fn, ranges in CATALOGUE[k]:
            pars = [rng.uniform(lo, hi, idx.size) for lo, hi in ranges]
            c = K[name]
            x[idx, c] = transform(rng, fn, x[idx, c], t[idx], m[idx], pars, name, p)
    x = clip(x)
    for name in ROUNDED:
        x[:, K[name]] = np.round(x[:, K[name]])
    return x


def dataset(rng: np.random.Generator, n_normal: int, n_per_type: int, p: dict) -> dict:
    """n_normal normal windows then n_per_type windows of each anomaly type.

    Returns x (n, 12, T) physical units, type (-1 normal, 0..9), full (bool; False for normal),
    active (n, T) anomalous steps.
    """
    n = n_normal + n_per_type * len(TYPES)
    x = normal_windows(rng, n, p)
    types = np.concatenate([np.full(n_normal, -1), np.repeat(np.arange(len(TYPES)), n_per_type)])
    t, m, full = onset_times(rng, n, p)
    normal = types < 0
    m[normal], t[normal], full[normal] = False, 0.0, False
    inject(rng, x, types, t, m, p)
    return {"x": x, "type": types, "full": full, "active": m}


def control_windows(rng: np.random.Generator, n: int, T: int) -> np.ndarray:
    """Smooth "climate-like" control (spec): 10 sin(2 pi t / 64) + 3 sin(2 pi t / 16) + AR(1)
    (phi 0.8, sd 1); INFERRED: each window starts at a random phase (offset U{0..63})."""
    start = rng.integers(0, 64, n).astype(float)
    periods = np.broadcast_to([64.0, 16.0], (n, 2))
    amps = np.broadcast_to([10.0, 3.0], (n, 2))
    season = sinusoids(np.arange(T), periods, amps, 2 * np.pi * start[:, None] / periods)
    return season + ar1(rng, n, T, 0.8, 1.0)


# ---------------------------------------------------------------------------------------------
# Long continuous traces (full profile): the official anomaly process on a normal trace whose
# session changes along the way.
def anomaly_intervals(rng: np.random.Generator, length_s: float, gap_s: float, dur_s: float,
                      n_types: int = len(TYPES)) -> list[tuple[float, float, int]]:
    """(onset s, end s, type) of the anomalies of one trace, as the official process draws
    them (anomaly_timestamps_sim.generate_anomalies with lambda_occurrence 60 / h and
    lambda_resolution 150 / h): from the end of the previous anomaly (or the trace start) wait
    Exp(mean ``gap_s``), stop if that onset is past the trace's last timestamp, last
    Exp(mean ``dur_s``), type uniform. The next gap starts at this end, so intervals never
    overlap; the last one may run past the trace end (truncated)."""
    out, now = [], 0.0
    while True:
        onset = now + rng.exponential(gap_s)
        if onset >= length_s:
            return out
        end = onset + rng.exponential(dur_s)
        out.append((onset, end, int(rng.integers(n_types))))
        now = end


def interval_steps(onset: float, end: float, n_steps: int) -> tuple[int, int]:
    """First and last step (inclusive) of an interval on the 10 Hz grid: the official labels
    mark the timestamps with onset <= time <= end. Returns (a, b) with b < a if no step."""
    a = int(np.ceil(onset * HZ - 1e-9))
    b = min(int(np.floor(end * HZ + 1e-9)), n_steps - 1)
    return a, b


def session_trace(rng: np.random.Generator, n_steps: int, session_s: float, p: dict):
    """One normal trace (12, n_steps) in physical units made of consecutive sessions (each its
    own traffic regime and radio baseline, the spec's normal generator) whose lengths are
    Exp(mean ``session_s``) seconds (INFERRED; at least one step). Returns (x, session starts)."""
    starts = [0]
    while starts[-1] < n_steps:
        starts.append(starts[-1] + max(1, int(round(HZ * rng.exponential(session_s)))))
    starts = np.array(starts[:-1])
    lens = np.diff(np.r_[starts, n_steps])
    sess = normal_windows(rng, len(lens), {**p, "T": int(lens.max())})
    x = np.concatenate([sess[i, :, :n] for i, n in enumerate(lens)], axis=1)
    return x, starts


def trace(rng: np.random.Generator, n_steps: int, p: dict) -> dict:
    """A continuous trace of ``n_steps`` at 10 Hz with anomalies located in time.

    Normal sessions change along the trace (``session_trace``); anomalies follow the official
    process (``anomaly_intervals`` with ``loc_gap_s`` and ``loc_dur_s``) and are injected with
    the same catalogue as the windows, every effect a function of the seconds elapsed since
    its onset (step k of an anomaly starting at s seconds has elapsed k / 10 - s). Returns x
    (12, n_steps), type (n_steps,) with -1 for normal steps, and the intervals as arrays
    onset_s, end_s, itype (including any that covers no step).
    """
    x, _ = session_trace(rng, n_steps, float(p["loc_session_s"]), p)
    length_s = (n_steps - 1) / HZ
    iv = anomaly_intervals(rng, length_s, float(p["loc_gap_s"]), float(p["loc_dur_s"]))
    label = np.full(n_steps, -1, dtype=np.int64)
    for onset, end, k in iv:
        a, b = interval_steps(onset, end, n_steps)
        if b < a:
            continue
        t = (np.arange(a, b + 1) / HZ - onset)[None]
        seg = x[None, :, a:b + 1].copy()
        inject(rng, seg, np.array([k]), t, np.ones(t.shape, dtype=bool), p)
        x[:, a:b + 1] = seg[0]
        label[a:b + 1] = k
    arr = np.array(iv, dtype=float).reshape(-1, 3)
    return {"x": x, "type": label, "onset_s": arr[:, 0], "end_s": arr[:, 1],
            "itype": arr[:, 2].astype(np.int64)}
