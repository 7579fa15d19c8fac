"""Synthetic infrared sequences with designed failure regimes (numpy + scipy.ndimage).

One sequence is T frames of S x S pixels; the target, when present, is in the last frame F_T.
The background (two smooth fields, large clutter blobs, STATIC point-like clutter spots) is
drawn on a padded canvas and translated by a per-sequence camera velocity (sub-pixel, bilinear
``vision.images.shift``); the target moves relative to the background. Two regimes are drawn
independently per sequence: ``drift`` (fast camera motion, hard for background modelling) and
``slow`` (a target that barely moves relative to the scene, hard for the motion stream).
Everything here follows the spec's "Data" section; details it leaves open are marked INFERRED.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from icml26.vision.images import gaussian_spots, shift, smooth_field

MAX_SPOTS = 4


def _direction(rng):
    a = rng.uniform(0.0, 2.0 * np.pi)
    return np.array([np.sin(a), np.cos(a)])


def local_std(img, centre, half: int = 4) -> float:
    """s.d. of the (2 half + 1)^2 window of ``img`` around the rounded ``centre`` (clipped at the
    borders): the 'local 9 x 9 background' of the SCR definition."""
    y, x = (int(round(float(c))) for c in centre)
    win = img[max(y - half, 0): y + half + 1, max(x - half, 0): x + half + 1]
    return float(win.std())


def canvas_pad(p) -> int:
    """Border that keeps every shifted frame inside the canvas (largest camera displacement over
    T frames plus the sub-pixel phase, plus a pixel)."""
    return int(np.ceil(p["drift_speed"][1] * (p["n_frames"] - 1) + 1.0)) + 2


def translate(scene, disp, pad: int, S: int) -> np.ndarray:
    """Frames (T, S, S): the scene translated by each displacement (bilinear,
    ``vision.images.shift`` order 1) and cropped to the frame. Only a window m px wider than
    the frame is shifted (m > the largest displacement, so the crop never sees the window's
    border): the same pixels as shifting the whole canvas, at a fraction of the cost."""
    m = min(int(np.ceil(np.abs(disp).max())) + 2, pad)
    win = scene[pad - m: pad + S + m, pad - m: pad + S + m]
    return np.stack([shift(win, *d, order=1)[m:m + S, m:m + S] for d in disp])


def psf_frames(S: int, centres, sigma: float) -> np.ndarray:
    """Unit-amplitude Gaussian PSF at each centre (T, 2) on the S x S grid: (T, S, S) (the
    formula of ``vision.images.gaussian_spots``, one frame per centre)."""
    ax = np.arange(S, dtype=float)
    gy = np.exp(-((ax[None, :] - centres[:, 0, None]) ** 2) / (2 * sigma**2))
    gx = np.exp(-((ax[None, :] - centres[:, 1, None]) ** 2) / (2 * sigma**2))
    return gy[:, :, None] * gx[:, None, :]


def make_sequences(rng: np.random.Generator, n: int, p) -> dict[str, np.ndarray]:
    """``n`` sequences and their labels; see the module docstring and the spec."""
    S, T = int(p["frame_size"]), int(p["n_frames"])
    pad = canvas_pad(p)
    C = S + 2 * pad
    frames = np.zeros((n, T, S, S), dtype=np.float32)
    out = {"mask": np.zeros((n, S, S), dtype=bool), "present": np.zeros(n, dtype=bool),
           "centre": np.full((n, 2), np.nan), "sigma_t": np.full(n, np.nan),
           "scr": np.full(n, np.nan), "drift": np.zeros(n, dtype=bool),
           "slow": np.zeros(n, dtype=bool), "spots": np.full((n, MAX_SPOTS, 2), np.nan)}
    # two Gaussian-filtered white-noise fields (sigma 3 and 8 px, amplitudes 1.0 and 0.5)
    fields = (p["field_amps"][0] * smooth_field(rng, (C, C), p["field_sigmas"][0], n=n)
              + p["field_amps"][1] * smooth_field(rng, (C, C), p["field_sigmas"][1], n=n))
    for i in range(n):
        clutter = fields[i].copy()
        # 2-4 large clutter blobs anywhere on the canvas
        k = rng.integers(p["n_blobs"][0], p["n_blobs"][1] + 1)
        clutter += gaussian_spots((C, C), rng.uniform(0, C, (k, 2)),
                                  rng.uniform(*p["blob_sigma"], k), rng.uniform(*p["blob_amp"], k))
        # camera motion: drift regime |v| ~ U(0.8, 1.5) px/frame, else U(0, 0.2)
        drift = bool(rng.random() < 0.5)
        speed = rng.uniform(*(p["drift_speed"] if drift else p["still_speed"]))
        v_bg = speed * _direction(rng)
        # displacement of the scene in frame t (t = 0..T-1); a random sub-pixel phase so that
        # every frame, the last included, is interpolated alike (INFERRED)
        phase = rng.uniform(0.0, 1.0, 2)
        disp = phase[None, :] + v_bg[None, :] * np.arange(T)[:, None]
        # 2-4 STATIC point-like clutter spots (fixed in the scene, so they move with the camera),
        # placed inside the last frame; amplitude like a target's: SCR x local clutter s.d.
        k = rng.integers(p["n_spots"][0], p["n_spots"][1] + 1)
        pos_T = rng.uniform(2.0, S - 3.0, (k, 2))
        pos_c = pos_T + pad - disp[-1]
        amps = [rng.uniform(*p["scr"]) * local_std(clutter, q) for q in pos_c]
        scene = clutter + gaussian_spots((C, C), pos_c, rng.uniform(*p["spot_sigma"], k), amps)
        out["spots"][i, :k] = pos_T
        bg = translate(scene, disp, pad, S)
        out["drift"][i] = drift
        # target in 85% of sequences; its regime (slow / fast relative motion) drawn anyway
        slow = bool(rng.random() < 0.5)
        out["slow"][i] = slow
        seq = bg
        if rng.random() < p["target_prob"]:
            sigma = rng.uniform(*p["target_sigma"])
            scr = rng.uniform(*p["scr"])
            v_rel = rng.uniform(*(p["slow_speed"] if slow else p["fast_speed"])) * _direction(rng)
            m = float(p["target_margin"])
            c_T = rng.uniform(m, S - 1 - m, 2)
            # SCR = amplitude / s.d. of the local 9 x 9 clutter around the target in F_T
            # (fields + blobs, before spots and noise: INFERRED reading of "background")
            amp = scr * local_std(clutter, c_T + pad - disp[-1])
            v_img = v_bg + v_rel
            centres = c_T[None, :] - v_img[None, :] * (T - 1 - np.arange(T))[:, None]
            psf = psf_frames(S, centres, sigma)
            seq = bg + amp * psf
            # ground truth: pixels where the target PSF >= 0.5 peak (peak = the brightest pixel)
            last = psf[-1]
            out["mask"][i] = last >= 0.5 * last.max()
            out["present"][i] = True
            out["centre"][i], out["sigma_t"][i], out["scr"][i] = c_T, sigma, scr
        seq = seq + rng.normal(0.0, p["noise_sd"], seq.shape)    # sensor noise per frame
        lo, hi = seq.min(), seq.max()
        frames[i] = (seq - lo) / (hi - lo)                         # min-max per sequence
    out["frames"] = frames
    # background-MSE mask: pixels outside the 5 x 5-dilated target mask
    k = int(p["bg_dilation"])
    out["bgmask"] = ~ndimage.binary_dilation(out["mask"], structure=np.ones((1, k, k), bool))
    return out
