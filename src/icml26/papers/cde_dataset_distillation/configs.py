"""Training configurations (update operators) c = (architecture, optimizer, augmentation), their
farthest-point ordering for the coverage law, and the pixel augmentations (numpy only).

The 18 configurations are the product of three architectures, two optimizers and three
augmentations. Their feature space is the one-hot of each factor; the distance between two
configurations is the number of factors in which they differ (half the one-hot Hamming
distance), so distinct configurations are at distance >= 1 and a family of m distinct
configurations has covering number exactly m at radius 0.5.
"""

from __future__ import annotations

import numpy as np

ARCHS = ("linear", "mlp32relu", "mlp64tanh")
OPTS = ("sgd", "adam")
AUGS = ("none", "noise", "translate")
CONFIGS = tuple((a, o, g) for a in ARCHS for o in OPTS for g in AUGS)
C0 = ("mlp32relu", "sgd", "none")       # reference configuration (distilled for in law 1)
C1 = ("mlp32relu", "adam", "none")      # shifted: optimizer
C2 = ("linear", "sgd", "noise")         # shifted: architecture and augmentation
SHIFT = (C0, C1, C2)


def name(c) -> str:
    """File- and column-safe name of a configuration, e.g. ``mlp32relu-sgd-none``."""
    return "-".join(c)


def index(c) -> int:
    return CONFIGS.index(tuple(c))


def hidden_sizes(arch: str) -> list[int]:
    """Layer widths after the input: linear softmax, MLP d-32-10 ReLU, MLP d-64-10 tanh."""
    return {"linear": [10], "mlp32relu": [32, 10], "mlp64tanh": [64, 10]}[arch]


def distance(a, b) -> int:
    """Number of factors (architecture, optimizer, augmentation) in which a and b differ."""
    return int(sum(x != y for x, y in zip(a, b, strict=True)))


def farthest_point_order(start=C0, configs=CONFIGS) -> list[tuple]:
    """Greedy farthest-point sampling from ``start``: each next configuration maximises the
    distance to the nearest one already chosen (ties: the first in ``configs`` order)."""
    order = [tuple(start)]
    rest = [tuple(c) for c in configs if tuple(c) != tuple(start)]
    while rest:
        gaps = [min(distance(c, o) for o in order) for c in rest]
        order.append(rest.pop(int(np.argmax(gaps))))
    return order


def covering_number(family, radius: float = 0.5) -> int:
    """Greedy covering number of ``family`` by balls of ``radius`` centred on its members
    (exact here: with integer distances and radius < 1 a ball holds one configuration)."""
    left, n = [tuple(c) for c in family], 0
    while left:
        centre = left[0]
        left = [c for c in left if distance(c, centre) > radius]
        n += 1
    return n


def shift_table(side: int) -> np.ndarray:
    """(9, side*side) source pixel of each output pixel under the 1-pixel translations
    (dy, dx) in {-1, 0, 1}^2, row-major; the value side*side points at a zero pad pixel.
    Shift 4 is the identity."""
    n = side * side
    out = np.full((9, n), n, dtype=np.int64)
    k = 0
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            for r in range(side):
                for c in range(side):
                    rs, cs = r - dy, c - dx
                    if 0 <= rs < side and 0 <= cs < side:
                        out[k, r * side + c] = rs * side + cs
            k += 1
    return out


def translate(x: np.ndarray, shift: np.ndarray, side: int) -> np.ndarray:
    """Reference (numpy) translation of images x (n, side*side) by shift ids (n,): zero padded."""
    table = shift_table(side)
    pad = np.concatenate([x, np.zeros((len(x), 1), x.dtype)], axis=1)
    return np.take_along_axis(pad, table[shift], axis=1)
