"""Synthetic textures and their label-preserving shifts (numpy + scipy; no torch).

A class owns two small prototypes (smoothed noise rescaled to [-0.5, 0.5]), a placement density
and a mixing ratio (the probability of using prototype 1). An image is a 0.5 background plus
copies of the class's prototypes at uniform random positions, with random amplitude and a
random 90-degree rotation, plus pixel noise, clipped to [0, 1]. The shifted test sets apply
one transformation each (illumination, blur, scale, compression) to the clean test images, so
every shifted image has a clean twin.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from icml26.vision.images import paste, smooth_field, zoom_centre_crop

SHIFTS = ("illumination", "blur", "scale", "compression")
REFERENCE_AREA = 32 * 32  # the spec's densities are copies per 32x32 image


def class_definitions(rng: np.random.Generator, p: dict) -> dict:
    """Prototypes (C, 2, P, P), densities (C,) and mixing ratios (C,) of the C classes.

    Densities and mixing ratios cycle through the product {n} x {rho}, so every combination
    is used equally often and classes that share one differ by their prototypes (INFERRED:
    the spec says each class owns one of each value, not how they are assigned)."""
    C, P = int(p["n_classes"]), int(p["proto_size"])
    f = smooth_field(rng, (P, P), float(p["proto_sigma"]), n=2 * C)
    lo = f.min(axis=(1, 2), keepdims=True)
    hi = f.max(axis=(1, 2), keepdims=True)
    protos = ((f - lo) / (hi - lo) - 0.5).reshape(C, 2, P, P)
    combos = [(n, r) for n in p["densities"] for r in p["mix_ratios"]]
    area = int(p["image_size"]) ** 2 / REFERENCE_AREA
    dens = np.array([int(round(combos[c % len(combos)][0] * area)) for c in range(C)])
    mix = np.array([combos[c % len(combos)][1] for c in range(C)], dtype=float)
    return {"protos": protos, "density": dens, "mix": mix}


def texture_images(rng: np.random.Generator, classes: dict, labels: np.ndarray,
                   p: dict) -> np.ndarray:
    """One image per label: (n, S, S) float32 in [0, 1]."""
    S, P = int(p["image_size"]), int(p["proto_size"])
    a_lo, a_hi = p["amp_range"]
    out = np.empty((len(labels), S, S), dtype=np.float32)
    for i, c in enumerate(labels):
        n = int(classes["density"][c])
        use_first = rng.random(n) < classes["mix"][c]     # rho_c: prob. of prototype 1
        amp = rng.uniform(a_lo, a_hi, n)
        rot = rng.integers(0, 4, n)
        # top-left corners anywhere the copy still touches the image (cropped at the border),
        # so the texture is stationary up to the edges (INFERRED)
        pos = rng.integers(-(P - 1), S, size=(n, 2))
        img = np.full((S, S), 0.5)
        for j in range(n):
            proto = classes["protos"][c, 0 if use_first[j] else 1]
            img = paste(img, amp[j] * np.rot90(proto, int(rot[j])), int(pos[j, 0]),
                        int(pos[j, 1]))
        img += rng.normal(0.0, float(p["pixel_noise"]), (S, S))
        out[i] = np.clip(img, 0.0, 1.0)
    return out


def balanced_labels(n_per_class: int, n_classes: int) -> np.ndarray:
    return np.repeat(np.arange(n_classes), n_per_class)


def apply_shift(rng: np.random.Generator, images: np.ndarray, name: str, p: dict) -> np.ndarray:
    """A label-preserving shift of a stack of images (n, S, S); float32 in [0, 1]."""
    x = images.astype(float)
    n = len(x)
    if name == "illumination":
        # gain from one of two ranges (darker or brighter, equally likely) and an offset;
        # clipped back to [0, 1] (INFERRED)
        low = rng.random(n) < 0.5
        g = np.where(low, rng.uniform(*p["illum_gain_low"], n),
                     rng.uniform(*p["illum_gain_high"], n))
        o = rng.uniform(-p["illum_offset"], p["illum_offset"], n)
        y = np.clip(g[:, None, None] * x + o[:, None, None], 0.0, 1.0)
    elif name == "blur":
        y = ndimage.gaussian_filter(x, (0.0, p["blur_sigma"], p["blur_sigma"]), mode="reflect")
    elif name == "scale":
        y = np.stack([zoom_centre_crop(im, float(p["zoom"])) for im in x])
    elif name == "compression":
        # quantise to L grey levels, then additive noise; clipped to [0, 1] (INFERRED)
        L = int(p["quant_levels"])
        y = np.round(x * (L - 1)) / (L - 1)
        y = np.clip(y + rng.normal(0.0, float(p["quant_noise"]), x.shape), 0.0, 1.0)
    else:
        raise ValueError(f"unknown shift {name!r}; known: {', '.join(SHIFTS)}")
    return y.astype(np.float32)


def make_seed_data(class_rng_classes: dict, rng: np.random.Generator, p: dict) -> dict:
    """Train / val / clean test images of one seed and the shifted test sets."""
    C = int(p["n_classes"])
    out = {}
    for split, key in (("train", "n_train_per_class"), ("val", "n_val_per_class"),
                       ("test", "n_test_per_class")):
        y = balanced_labels(int(p[key]), C)
        out[f"{split}/x"] = texture_images(rng, class_rng_classes, y, p)
        out[f"{split}/y"] = y.astype(np.int64)
    for name in p["shifts"]:
        out[f"test_{name}/x"] = apply_shift(rng, out["test/x"], name, p)
        out[f"test_{name}/y"] = out["test/y"]
    return out
