"""Glyphs: the visual classes, their 8x8 images, and the recognisers' training set.

Digits are real handwriting (scikit-learn's load_digits, 8x8, 16 grey levels); every other
class is drawn as 1-2 px strokes (icml26.vision.images.draw_stroke) with random affine jitter
(rotation +-15 degrees, scale 0.85-1.15, shift +-1 px) and grey level 10-16. Role ambiguity is
visually irreducible by construction: the letter O is drawn from the digit-0 pool, the letter l
from the digit-1 pool, and the variable x and the times sign share the one "cross" generator.

A glyph's box (h, w) need not be 8x8: fraction bars are wide and flat, brackets and braces are
tall, arrows are wide. The recogniser sees every glyph as its box's canvas crop stretched to
8x8 (``normalise``), the same route for training and test glyphs.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from icml26.vision.images import affine_jitter, draw_stroke, segment_distance

G = 8  # glyph cell (px)
SUB_BOX = 6  # subscript box (px)
DIGITS = tuple(str(d) for d in range(10))
SYMBOLS = ("plus", "minus", "cross", "equals", "bar", "lparen", "rparen", "lbrack", "rbrack",
           "lbrace", "H", "arrow", "y")
CLASSES = DIGITS + SYMBOLS          # the recogniser's visual classes
CID = {c: i for i, c in enumerate(CLASSES)}
ROUND, STROKE, CROSS = CID["0"], CID["1"], CID["cross"]
AMBIGUOUS = (ROUND, STROKE, CROSS)  # visual classes with two roles each

# Strokes of the synthetic classes in unit coordinates (y, x) of their box.
STROKES = {
    "plus": [((0.5, 0.15), (0.5, 0.85)), ((0.15, 0.5), (0.85, 0.5))],
    "minus": [((0.5, 0.2), (0.5, 0.8))],
    "cross": [((0.2, 0.2), (0.8, 0.8)), ((0.2, 0.8), (0.8, 0.2))],
    "equals": [((0.33, 0.15), (0.33, 0.85)), ((0.67, 0.15), (0.67, 0.85))],
    "bar": [((0.5, 0.0), (0.5, 1.0))],
    "lparen": [((0.02, 0.85), (0.25, 0.3)), ((0.25, 0.3), (0.75, 0.3)),
               ((0.75, 0.3), (0.98, 0.85))],
    "rparen": [((0.02, 0.15), (0.25, 0.7)), ((0.25, 0.7), (0.75, 0.7)),
               ((0.75, 0.7), (0.98, 0.15))],
    "lbrack": [((0.02, 0.25), (0.98, 0.25)), ((0.02, 0.25), (0.02, 0.9)),
               ((0.98, 0.25), (0.98, 0.9))],
    "rbrack": [((0.02, 0.75), (0.98, 0.75)), ((0.02, 0.75), (0.02, 0.1)),
               ((0.98, 0.75), (0.98, 0.1))],
    "lbrace": [((0.02, 0.9), (0.08, 0.5)), ((0.08, 0.5), (0.45, 0.5)), ((0.45, 0.5), (0.5, 0.1)),
               ((0.5, 0.1), (0.55, 0.5)), ((0.55, 0.5), (0.92, 0.5)), ((0.92, 0.5), (0.98, 0.9))],
    "H": [((0.1, 0.2), (0.9, 0.2)), ((0.1, 0.8), (0.9, 0.8)), ((0.5, 0.2), (0.5, 0.8))],
    "arrow": [((0.5, 0.05), (0.5, 0.95)), ((0.5, 0.95), (0.22, 0.65)),
              ((0.5, 0.95), (0.78, 0.65))],
    "y": [((0.12, 0.2), (0.55, 0.5)), ((0.12, 0.82), (0.95, 0.3))],
}
# Box shapes (h, w) of the stretched classes at layout time; training boxes are drawn from the
# same ranges (every other class lives in an 8x8 cell).
STRETCHED = {"bar": ((3, 3), (10, 30)), "lparen": ((18, 36), (5, 5)),
             "rparen": ((18, 36), (5, 5)), "lbrack": ((18, 36), (5, 5)),
             "rbrack": ((18, 36), (5, 5)), "lbrace": ((18, 30), (5, 5)),
             "arrow": ((8, 8), (12, 16))}


def resample(patch: np.ndarray, h: int, w: int) -> np.ndarray:
    """Bilinear resampling of a patch to (h, w) (corner-aligned)."""
    ph, pw = patch.shape
    if (ph, pw) == (h, w):
        return patch.astype(float)
    yy, xx = np.meshgrid(np.linspace(0, ph - 1, h), np.linspace(0, pw - 1, w), indexing="ij")
    return ndimage.map_coordinates(patch.astype(float), [yy, xx], order=1, mode="nearest")


def normalise(patch: np.ndarray) -> np.ndarray:
    """A box's crop stretched to the 8x8 recogniser input (bilinear); 8x8 crops unchanged."""
    return resample(patch, G, G)


def jitter_params(rng) -> tuple[float, float, float, float]:
    """The spec's glyph jitter: rotation +-15 deg, scale 0.85-1.15, shift +-1 px."""
    return (np.deg2rad(rng.uniform(-15, 15)), rng.uniform(0.85, 1.15), rng.uniform(-1, 1),
            rng.uniform(-1, 1))


_DIST: dict = {}


def _distance_8x8(name: str) -> np.ndarray:
    """Distance of every pixel of the 8x8 cell to the nearest stroke of a class (cached)."""
    if name not in _DIST:
        _DIST[name] = np.min([segment_distance((G, G), np.multiply(p0, G - 1),
                                               np.multiply(p1, G - 1))
                              for p0, p1 in STROKES[name]], axis=0)
    return _DIST[name]


def draw_symbol(name: str, h: int, w: int, rng) -> np.ndarray:
    """One synthetic glyph drawn into an (h, w) box, values 0..16.

    8x8 glyphs are drawn upright and jittered with icml26.vision's affine_jitter; stretched
    boxes (bars, brackets, braces, arrows) jitter the stroke end points in unit coordinates
    (rotation and scale about the box centre), so a long thin box keeps its stroke."""
    width = rng.uniform(1.0, 2.0)
    grey = rng.uniform(10, 16)
    angle, scale, dy, dx = jitter_params(rng)
    img = np.zeros((h, w))
    if (h, w) == (G, G):
        # draw_stroke of every stroke at once: max_s clip(width/2 + 0.5 - d_s, 0, 1) is
        # clip(width/2 + 0.5 - min_s d_s, 0, 1) (tested against stroke-by-stroke draw_stroke)
        img = grey * np.clip(width / 2 + 0.5 - _distance_8x8(name), 0.0, 1.0)
        return np.clip(affine_jitter(img, angle, scale, dy, dx), 0, 16)
    c, s = np.cos(angle), np.sin(angle)
    rot = scale * np.array([[c, -s], [s, c]])
    size = np.array([h - 1, w - 1], dtype=float)
    for p0, p1 in STROKES[name]:
        q0 = (rot @ (np.asarray(p0) - 0.5) + 0.5) * size + (dy, dx)
        q1 = (rot @ (np.asarray(p1) - 0.5) + 0.5) * size + (dy, dx)
        img = draw_stroke(img, q0, q1, width, grey)
    return img


def digit_image(pool_images: np.ndarray, rng, h: int = G, w: int = G) -> np.ndarray:
    """A random image of one digit pool with the layout's scale jitter (+-10%, affine_jitter),
    resampled to an (h, w) box (subscripts are written smaller: a 6x6 box)."""
    img = pool_images[rng.integers(len(pool_images))]
    s = rng.uniform(0.9, 1.1)
    return resample(np.clip(affine_jitter(img.astype(float), 0.0, s, 0.0, 0.0), 0, 16), h, w)


def box_shape(name: str, rng) -> tuple[int, int]:
    if name in STRETCHED:
        (h0, h1), (w0, w1) = STRETCHED[name]
        return int(rng.integers(h0, h1 + 1)), int(rng.integers(w0, w1 + 1))
    return G, G


def training_set(digit_images, digit_labels, n_per_symbol: int, rng):
    """Isolated glyphs for the recognisers: every digit of the training pool twice, written in
    a full 8x8 box and in a 6x6 subscript box (with the layout's scale jitter), and
    ``n_per_symbol`` fresh glyphs of every synthetic class, each normalised to 8x8 as a test
    crop is. Returns (X (n, 64) in [0, 1], y class ids)."""
    xs, ys = [], []
    for img, lab in zip(digit_images, digit_labels, strict=True):
        for size in (G, SUB_BOX):   # every digit in a full and in a subscript-sized box
            xs.append(normalise(digit_image(img[None], rng, size, size)))
            ys.append(CID[str(int(lab))])
    for name in SYMBOLS:
        for _ in range(n_per_symbol):
            h, w = box_shape(name, rng)
            xs.append(normalise(draw_symbol(name, h, w, rng)))
            ys.append(CID[name])
    X = np.stack(xs).reshape(len(xs), -1) / 16.0
    return X, np.asarray(ys, dtype=np.int64)
