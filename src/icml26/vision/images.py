"""Synthetic image pieces (numpy + scipy.ndimage). Images are float arrays indexed [y, x]
(row, column); a stack of images has its leading axes first. Randomness comes from an explicit
Generator."""
from __future__ import annotations

import numpy as np
from scipy import ndimage


def smooth_field(rng: np.random.Generator, shape, sigma: float, n: int | None = None) -> np.ndarray:
    """White noise filtered by a Gaussian of `sigma` px (periodic borders), rescaled to zero mean
    and unit s.d. per field; `n` fields stacked first when given."""
    lead = () if n is None else (n,)
    noise = rng.standard_normal(lead + tuple(shape))
    axes_sigma = (0,) * len(lead) + (sigma,) * len(shape)
    f = ndimage.gaussian_filter(noise, axes_sigma, mode="wrap")
    axes = tuple(range(len(lead), f.ndim))
    f = f - f.mean(axis=axes, keepdims=True)
    return f / f.std(axis=axes, keepdims=True)


def gaussian_spots(shape, centres, sigmas, amplitudes) -> np.ndarray:
    """sum_i a_i exp(-|p - c_i|^2 / (2 s_i^2)) on the pixel grid p = (y, x) of `shape`.
    centres (n, 2) in (y, x) pixel units; sigmas and amplitudes broadcast to (n,)."""
    centres = np.asarray(centres, dtype=float).reshape(-1, 2)
    n = len(centres)
    sig = np.broadcast_to(np.asarray(sigmas, dtype=float), (n,))
    amp = np.broadcast_to(np.asarray(amplitudes, dtype=float), (n,))
    yy = np.arange(shape[0], dtype=float)[None, :, None]
    xx = np.arange(shape[1], dtype=float)[None, None, :]
    d2 = (yy - centres[:, 0, None, None]) ** 2 + (xx - centres[:, 1, None, None]) ** 2
    return np.sum(amp[:, None, None] * np.exp(-d2 / (2 * sig[:, None, None] ** 2)), axis=0)


def ellipse_mask(shape, centre, radii, angle: float = 0.0) -> np.ndarray:
    """Boolean mask of the ellipse with centre (y, x), semi-axes (ry, rx), rotated by `angle`
    radians."""
    yy, xx = np.mgrid[: shape[0], : shape[1]].astype(float)
    dy, dx = yy - centre[0], xx - centre[1]
    c, s = np.cos(angle), np.sin(angle)
    u, v = c * dy + s * dx, -s * dy + c * dx
    return (u / radii[0]) ** 2 + (v / radii[1]) ** 2 <= 1.0


def segment_distance(shape, p0, p1) -> np.ndarray:
    """Distance of every pixel centre to the segment p0-p1 (points in (y, x))."""
    yy, xx = np.mgrid[: shape[0], : shape[1]].astype(float)
    p = np.stack([yy, xx], axis=-1)
    a, b = np.asarray(p0, dtype=float), np.asarray(p1, dtype=float)
    ab = b - a
    t = np.clip(((p - a) @ ab) / max(float(ab @ ab), 1e-12), 0.0, 1.0)
    return np.linalg.norm(p - (a + t[..., None] * ab), axis=-1)


def draw_stroke(img: np.ndarray, p0, p1, width: float, value: float = 1.0) -> np.ndarray:
    """Anti-aliased straight stroke: each pixel takes max(img, value * coverage) with coverage
    clip(width / 2 + 0.5 - distance, 0, 1). Returns a new array."""
    cover = np.clip(width / 2 + 0.5 - segment_distance(img.shape, p0, p1), 0.0, 1.0)
    return np.maximum(img, value * cover)


def paste(canvas: np.ndarray, patch: np.ndarray, top: int, left: int,
          mode: str = "add") -> np.ndarray:
    """Put `patch` with its top-left corner at (top, left), cropped where it leaves the canvas;
    mode "add" sums, "max" keeps the brighter pixel. Returns a new array."""
    out = canvas.copy()
    h, w = patch.shape
    y0, x0 = max(top, 0), max(left, 0)
    y1, x1 = min(top + h, canvas.shape[0]), min(left + w, canvas.shape[1])
    if y0 >= y1 or x0 >= x1:
        return out
    piece = patch[y0 - top: y1 - top, x0 - left: x1 - left]
    region = out[y0:y1, x0:x1]
    out[y0:y1, x0:x1] = region + piece if mode == "add" else np.maximum(region, piece)
    return out


def shift(img: np.ndarray, dy: float, dx: float, order: int = 1,
          mode: str = "reflect") -> np.ndarray:
    """Translate by (dy, dx) px with spline interpolation of `order` (1: bilinear, sub-pixel)."""
    return ndimage.shift(img, (dy, dx), order=order, mode=mode)


def zoom_centre_crop(img: np.ndarray, factor: float, order: int = 1) -> np.ndarray:
    """Zoom in by `factor` >= 1 about the image centre, keeping the size (the centre crop of the
    enlarged image, sampled exactly: out(p) = img(c + (p - c) / factor))."""
    if factor < 1:
        raise ValueError(f"zoom factor must be >= 1, got {factor}")
    centre = (np.array(img.shape, dtype=float) - 1) / 2
    return ndimage.affine_transform(img, np.full(2, 1.0 / factor), offset=centre * (1 - 1 / factor),
                                    order=order, mode="nearest")


def affine_jitter(img: np.ndarray, angle: float, scale: float, dy: float, dx: float,
                  order: int = 1) -> np.ndarray:
    """Rotate by `angle` rad and scale by `scale` about the image centre, then translate by
    (dy, dx) px; pixels from outside are 0."""
    c, s = np.cos(angle), np.sin(angle)
    forward = scale * np.array([[c, -s], [s, c]])
    inverse = np.linalg.inv(forward)
    centre = (np.array(img.shape, dtype=float) - 1) / 2
    offset = centre - inverse @ (centre + np.array([dy, dx]))
    return ndimage.affine_transform(img, inverse, offset=offset, order=order, mode="constant")


def box_sdf(points: np.ndarray, centre, half_extents, radius: float = 0.0) -> np.ndarray:
    """Signed distance from points (..., 2) to an axis-aligned box with rounded corners
    (negative inside): the box shrunk by `radius`, minus `radius`."""
    q = np.abs(np.asarray(points, dtype=float) - np.asarray(centre, dtype=float))
    q = q - (np.asarray(half_extents, dtype=float) - radius)
    outside = np.linalg.norm(np.maximum(q, 0.0), axis=-1)
    inside = np.minimum(np.max(q, axis=-1), 0.0)
    return outside + inside - radius
