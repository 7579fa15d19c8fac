"""Synthetic VQA scenes for the tiny vision-language model (numpy only).

A scene is a 32x32x3 image cut into 64 patches of 4x4 pixels (visual tokens, row-major). The
background is one of 4 grey-ish colours plus pixel noise (sd 0.05), so background patches are
near duplicates. 1-3 objects (shape square / cross / ring, colour red / green / blue / yellow,
distinct (colour, shape) pairs) of 8x8 px sit patch-aligned at non-overlapping positions; each
covers 2x2 patches. An object never straddles the image's midlines (top-left patch coordinate
in {0, 1, 2, 4, 5, 6}; INFERRED, so that the WHERE answer, the quadrant, is unambiguous).

Questions are templated over a 20-word vocabulary, padded to 6 tokens, then [ANS] (7 text
tokens). Types: EXIST "is there a {c} {s} ?" (yes / no; 'no' probes are adversarial POPE-style:
the asked colour is present on another shape or the asked shape in another colour), COLOUR
"what colour is the {s} ?" (a shape present once), COUNT "how many {s} ?" (0-3, balanced),
WHERE "where is the {c} {s} ?" (4 quadrants).
"""

from __future__ import annotations

import numpy as np

COLOURS = ("red", "green", "blue", "yellow")
SHAPES = ("square", "cross", "ring")
RGB = np.array([[1.0, 0.1, 0.1], [0.1, 0.9, 0.1], [0.1, 0.2, 1.0], [1.0, 0.9, 0.1]])
BACKGROUNDS = np.array([[0.45, 0.45, 0.45], [0.3, 0.3, 0.35], [0.6, 0.55, 0.5],
                        [0.4, 0.5, 0.55]])
VOCAB = ("[PAD]", "[ANS]", "is", "there", "a", "what", "colour", "the", "how", "many", "where",
         "?", "red", "green", "blue", "yellow", "square", "cross", "ring", "of")
W = {w: i for i, w in enumerate(VOCAB)}
ANSWERS = ("yes", "no", "red", "green", "blue", "yellow", "0", "1", "2", "3",
           "top-left", "top-right", "bottom-left", "bottom-right")
A = {a: i for i, a in enumerate(ANSWERS)}
TYPES = ("exist", "colour", "count", "where")
IMG, PATCH, GRID = 32, 4, 8
N_VIS, N_TEXT = GRID * GRID, 7          # 64 visual tokens; 6 question tokens + [ANS]
POSITIONS = (0, 1, 2, 4, 5, 6)          # top-left patch coordinate of an object


def _mask(shape: str) -> np.ndarray:
    m = np.zeros((8, 8), bool)
    if shape == "square":
        m[:] = True
    elif shape == "cross":
        m[3:5, :] = True
        m[:, 3:5] = True
    else:  # ring: 2-px border, hollow centre
        m[:] = True
        m[2:6, 2:6] = False
    return m


MASKS = {s: _mask(s) for s in SHAPES}


def _place(rng, n: int):
    """n non-overlapping top-left patch coordinates (row, col) from POSITIONS."""
    while True:
        pos = [(int(rng.choice(POSITIONS)), int(rng.choice(POSITIONS))) for _ in range(n)]
        if all(abs(a[0] - b[0]) >= 2 or abs(a[1] - b[1]) >= 2
               for i, a in enumerate(pos) for b in pos[i + 1:]):
            return pos


def _distinct_pairs(rng, n: int, fixed=()):
    """n distinct (colour, shape) index pairs, starting with ``fixed``."""
    pairs = list(fixed)
    while len(pairs) < n:
        p = (int(rng.integers(4)), int(rng.integers(3)))
        if p not in pairs:
            pairs.append(p)
    return pairs


def quadrant(pos) -> str:
    r, c = pos
    return ("top" if r < 4 else "bottom") + "-" + ("left" if c < 4 else "right")


def _question(qtype, rng):
    """(objects [(colour, shape)], question words, answer) of one sample of a type."""
    n = int(rng.integers(1, 4))
    if qtype == "exist":
        objs = _distinct_pairs(rng, n)
        if rng.random() < 0.5:
            c, s = objs[int(rng.integers(n))]
            return objs, ["is", "there", "a", COLOURS[c], SHAPES[s], "?"], "yes"
        # adversarial absent probe: shares the colour or the shape of a present object
        cands = [(c, s) for c in range(4) for s in range(3) if (c, s) not in objs
                 and any(c == o[0] or s == o[1] for o in objs)]
        c, s = cands[int(rng.integers(len(cands)))]
        return objs, ["is", "there", "a", COLOURS[c], SHAPES[s], "?"], "no"
    if qtype == "colour":
        s = int(rng.integers(3))
        c = int(rng.integers(4))
        objs = [(c, s)]
        while len(objs) < n:  # the asked shape appears once
            p = (int(rng.integers(4)), int((s + 1 + rng.integers(2)) % 3))
            if p not in objs:
                objs.append(p)
        return objs, ["what", "colour", "is", "the", SHAPES[s], "?"], COLOURS[c]
    if qtype == "count":
        k = int(rng.integers(4))
        s = int(rng.integers(3))
        n = max(n, k)
        cols = rng.permutation(4)[:k]
        objs = [(int(c), s) for c in cols]
        while len(objs) < n:
            p = (int(rng.integers(4)), int((s + 1 + rng.integers(2)) % 3))
            if p not in objs:
                objs.append(p)
        return objs, ["how", "many", SHAPES[s], "?"], str(k)
    objs = _distinct_pairs(rng, n)
    i = int(rng.integers(n))
    return objs, ["where", "is", "the", COLOURS[objs[i][0]], SHAPES[objs[i][1]], "?"], i


def generate(rng: np.random.Generator, n: int, types=TYPES) -> dict[str, np.ndarray]:
    """n samples, types balanced (round-robin, shuffled) and EXIST balanced over yes / no.

    Returns patches (n, 64, 48) float32, text (n, 7) int64, answer (n,), qtype (n,),
    objmask (n, 64) bool (visual tokens covered by an object) and boxes (n, 3, 3) int
    (row, col, present) of each object's top-left patch.
    """
    qtypes = np.resize(np.arange(len(types)), n)
    rng.shuffle(qtypes)
    img = np.empty((n, IMG, IMG, 3), np.float32)
    text = np.zeros((n, N_TEXT), np.int64)
    answer = np.zeros(n, np.int64)
    objmask = np.zeros((n, GRID, GRID), bool)
    boxes = np.zeros((n, 3, 3), np.int64)
    for i in range(n):
        objs, words, ans = _question(types[qtypes[i]], rng)
        pos = _place(rng, len(objs))
        if types[qtypes[i]] == "where":
            ans = quadrant(pos[ans])
        bg = BACKGROUNDS[int(rng.integers(4))]
        im = bg + 0.05 * rng.standard_normal((IMG, IMG, 3))
        for j, ((c, s), (r, col)) in enumerate(zip(objs, pos, strict=True)):
            block = im[4 * r: 4 * r + 8, 4 * col: 4 * col + 8]
            block[MASKS[SHAPES[s]]] = RGB[c]
            objmask[i, r: r + 2, col: col + 2] = True
            boxes[i, j] = (r, col, 1)
        img[i] = im
        text[i, : len(words)] = [W[w] for w in words]
        text[i, -1] = W["[ANS]"]
        answer[i] = A[ans]
    patches = (img.reshape(n, GRID, PATCH, GRID, PATCH, 3).transpose(0, 1, 3, 2, 4, 5)
               .reshape(n, N_VIS, PATCH * PATCH * 3))
    return {"patches": patches, "text": text, "answer": answer, "qtype": qtypes,
            "objmask": objmask.reshape(n, N_VIS), "boxes": boxes}
