"""Synthetic bi-temporal hyperspectral scenes with changes (the spec's stand-ins for
Farmland / Hermiston / River), generated per (scene variant, seed).

Linear mixing: a pixel's spectrum is its abundance vector (over the endmembers) times the
endmember spectra. Date 1 abundances are a softmax of Gaussian random fields
(icml26.vision.images.smooth_field). Changes are ellipse blobs (vision.images.ellipse_mask)
where the abundance vector is replaced by a mix with a different dominant endmember. Date 2
adds a global per-band gain (pseudo-change) and sensor noise. Label 1 = changed pixel.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from icml26.vision.images import ellipse_mask, smooth_field

# INFERRED: smoothing (in bands) of the endmembers' random-walk curves.
ENDMEMBER_SMOOTH_BANDS = 2.0


def endmembers(rng: np.random.Generator, n_end: int, bands: int) -> np.ndarray:
    """(n_end, bands) smooth spectra: cumulative sums of N(0, 1) increments, Gaussian-smoothed,
    each rescaled to [0.05, 0.6] (spec)."""
    curves = np.cumsum(rng.standard_normal((n_end, bands)), axis=1)
    curves = ndimage.gaussian_filter1d(curves, ENDMEMBER_SMOOTH_BANDS, axis=1, mode="nearest")
    lo, hi = curves.min(axis=1, keepdims=True), curves.max(axis=1, keepdims=True)
    return 0.05 + 0.55 * (curves - lo) / np.maximum(hi - lo, 1e-12)


def abundances(rng: np.random.Generator, n_end: int, size: int, sigma: float,
               temperature: float) -> np.ndarray:
    """(n_end, size, size) abundance maps: softmax over endmembers of unit-s.d. Gaussian random
    fields (smoothing sigma px) divided by the temperature (spec: sigma 4, temperature 0.5)."""
    logits = smooth_field(rng, (size, size), sigma, n=n_end) / temperature
    logits -= logits.max(axis=0, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=0, keepdims=True)


def change_blobs(rng: np.random.Generator, size: int, n_blobs, radius, aspect_min: float):
    """Ellipse blobs: (mask (size, size) bool, shift (size, size) int in 1..n_end-1 where
    changed, 0 elsewhere; a later blob overrides an earlier one where they overlap).

    The number of blobs is uniform on [n_blobs[0], n_blobs[1]]; the long semi-axis uniform on
    `radius`; INFERRED: the short one is the long one times U(aspect_min, 1), the angle
    U(0, pi); each blob has its own change type (shift of the dominant endmember, 1..4 for five
    endmembers), so both classes are multimodal.
    """
    n = int(rng.integers(n_blobs[0], n_blobs[1] + 1))
    mask = np.zeros((size, size), dtype=bool)
    shift = np.zeros((size, size), dtype=np.int64)
    for _ in range(n):
        centre = rng.uniform(0, size, 2)
        r_long = rng.uniform(radius[0], radius[1])
        r_short = r_long * rng.uniform(aspect_min, 1.0)
        blob = ellipse_mask((size, size), centre, (r_long, r_short), rng.uniform(0, np.pi))
        mask |= blob
        shift[blob] = rng.integers(1, 5)
    return mask, shift


def make_scene(rng: np.random.Generator, p: dict, n_blobs) -> dict:
    """One scene from the params ``p`` (size, bands, n_endmembers, field_sigma, temperature,
    blob_radius, aspect_min, gain_sd, noise_sd). Returns x1, x2 (size*size, bands), y
    (size*size,) 0/1, and the date-1 and date-2 abundances (n_end, size*size).

    A changed pixel's abundance vector is the date-1 vector with the endmember axis rolled by
    its blob's shift (INFERRED reading of "replaced by a different dominant endmember mix":
    the dominant endmember always changes, the spatial texture of the mix is kept)."""
    size, bands, k = int(p["size"]), int(p["bands"]), int(p["n_endmembers"])
    em = endmembers(rng, k, bands)
    a1 = abundances(rng, k, size, float(p["field_sigma"]), float(p["temperature"]))
    mask, shift = change_blobs(rng, size, n_blobs, p["blob_radius"], float(p["aspect_min"]))
    a2 = a1.copy()
    for s in range(1, k):
        where = shift == s
        a2[:, where] = np.roll(a1[:, where], s, axis=0)
    a1f, a2f = a1.reshape(k, -1), a2.reshape(k, -1)
    gain = 1.0 + float(p["gain_sd"]) * rng.standard_normal(bands)
    x1 = a1f.T @ em
    x2 = (a2f.T @ em) * gain + float(p["noise_sd"]) * rng.standard_normal((size * size, bands))
    return {"x1": x1, "x2": x2, "y": mask.ravel().astype(np.int64), "a1": a1f, "a2": a2f,
            "endmembers": em}


def labelled_pixels(rng: np.random.Generator, n_pixels: int, n_labelled: int) -> np.ndarray:
    """Indices of the labelled pixels: uniform without replacement, NOT class-balanced (the
    spec: a balanced labelled set with an imbalanced pool erased the gain in its check)."""
    return np.sort(rng.choice(n_pixels, size=n_labelled, replace=False))
