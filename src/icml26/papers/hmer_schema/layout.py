"""Expression generator: six structured categories laid out on a 96x64 canvas.

Each expression is a list of glyphs (visual class, true token, box) plus its label in the
official HMER-Bench conventions (BNU-ERC-ITEA/HMER-Bench, tools_sasr.py SIL_EXAMPLES):
``\\frac{a}{b}``, ``\\ce{2H_{2}+O_{2}->2H_{2}O}``, ``\\begin{arith}\\operand[0]{..}
\\operator{..}\\operand[0]{..}\\result\\operand[0]{..}\\end{arith}``, ``\\begin{cases}..\\\\..
\\end{cases}`` and ``b/pmatrix`` chosen by the bracket glyph. Artifacts (a stray stroke through
one non-answer glyph, or a smudge) are absent from the label, as officially.

Categories are ordered by the number of 2-D relations (INFERRED, the spec's project choice; the
official code has no ordering and no FRAC category): SSE < FRAC < CHEM < VAE < SYS < MAT.
Segmentation is given: the boxes are the paste positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.vision.images import draw_stroke, gaussian_spots, paste

from .glyphs import CID, SUB_BOX, G, digit_image, draw_symbol, normalise

CATEGORIES = ("SSE", "FRAC", "CHEM", "VAE", "SYS", "MAT")
COMPLEXITY = {c: i + 1 for i, c in enumerate(CATEGORIES)}   # INFERRED rank (spec)
OFFICIAL_CODE = {"SSE": "SSE", "FRAC": "-", "CHEM": "CHEM", "VAE": "VAE", "SYS": "SOE",
                 "MAT": "MAD"}
H_CANVAS, W_CANVAS = 64, 96
PITCH = 9.0          # horizontal glyph pitch (px) before fitting to the canvas
SUB_DY, SUB_PITCH = 6.0, 6.5   # a subscript box's top below its line's top; its advance
CHAR_CLASS = {"+": "plus", "-": "minus", "*": "cross", "=": "equals", "x": "cross",
              "y": "y", "H": "H", "O": "0"}
CHAR_TOKEN = {"*": "\\times", "x": "x", "y": "y", "O": "O"}


@dataclass
class Expression:
    category: str
    cls: np.ndarray        # (n,) true visual class ids
    tok: list              # true token of each glyph (None: a structural glyph)
    boxes: np.ndarray      # (n, 4) top, left, h, w (px)
    sub: np.ndarray        # (n,) subscript glyph (generator's truth; parsers re-detect)
    crops: np.ndarray      # (n, 64) normalised recogniser inputs in [0, 1]
    label: str
    artifact: str          # "", "strike" or "smudge"


class _Layout:
    """Glyph specs in canvas coordinates before jitter: class, token, y, x, h, w."""

    def __init__(self):
        self.items: list[dict] = []

    def glyph(self, cls, tok, y, x, h=G, w=G, sub=False, answer=False):
        self.items.append({"cls": cls, "tok": tok, "y": float(y), "x": float(x), "h": int(h),
                           "w": int(w), "sub": sub, "answer": answer})

    def text(self, s, y, x, pitch=PITCH, answer=False):
        """A run of characters on one baseline; returns the x after it."""
        for ch in s:
            cls = ch if ch.isdigit() else CHAR_CLASS[ch]
            self.glyph(cls, CHAR_TOKEN.get(ch, ch), y, x, answer=answer)
            x += pitch
        return x


def _num(rng, lo_digits, hi_digits):
    d = int(rng.integers(lo_digits, hi_digits + 1))
    return str(int(rng.integers(10 ** (d - 1) if d > 1 else 0, 10 ** d)))


def _latex(s: str) -> str:
    return s.replace("*", "\\times ")


def gen_sse(rng, L):
    while True:
        if rng.random() < 0.5:   # arithmetic "34+7=41" (as written, here correct)
            op = "+-*"[int(rng.integers(3))]
            a, b = int(_num(rng, 1, 3)), int(_num(rng, 1, 2))
            if op == "-" and a < b:
                a, b = b, a
            c = a + b if op == "+" else a - b if op == "-" else a * b
            s = f"{a}{op}{b}="
            ans = str(c)
        else:                    # linear "2x+3=9" (as written)
            coef = "" if rng.random() < 0.3 else str(int(rng.integers(2, 10)))
            s = f"{coef}x{'+-'[int(rng.integers(2))]}{_num(rng, 1, 2)}="
            ans = _num(rng, 1, 2)
        if 5 <= len(s) + len(ans) <= 11:
            break
    x = L.text(s, 28, 2)
    L.text(ans, 28, x, answer=True)
    return _latex(s + ans)


def gen_frac(rng, L):
    a, b = _num(rng, 1, 3), _num(rng, 1, 3)
    if b == "0":
        b = str(int(rng.integers(1, 10)))
    width = max(len(a), len(b)) * PITCH + 4
    x0 = 4.0
    L.text(a, 10, x0 + (width - len(a) * PITCH) / 2)
    L.glyph("bar", None, 21, x0, h=3, w=int(round(width)))
    L.text(b, 27, x0 + (width - len(b) * PITCH) / 2)
    label = f"\\frac{{{a}}}{{{b}}}"
    if rng.random() < 0.5:
        c = _num(rng, 1, 3)
        x = L.text("=", 18, x0 + width + 3)
        L.text(c, 18, x, answer=True)
        label += f"={c}"
    return label


SPECIES = ("H2", "O2", "H2O", "H2O2", "O3")


def gen_chem(rng, L):
    n_left = int(rng.integers(1, 3))
    n_right = 1 if n_left == 2 else int(rng.integers(1, 3))
    sides = [[(("", "2", "3")[int(rng.integers(3))], SPECIES[int(rng.integers(len(SPECIES)))])
              for _ in range(n)] for n in (n_left, n_right)]
    x, y, parts = 2.0, 28.0, []
    for k, side in enumerate(sides):
        if k == 1:
            L.glyph("arrow", "->", y, x + 1, w=14)
            x += 17
            parts.append("->")
        for j, (coef, sp) in enumerate(side):
            if j:
                L.glyph("plus", "+", y, x)
                x += PITCH
                parts.append("+")
            text = coef
            x = L.text(coef, y, x, answer=k == 1)
            for ch in sp:
                if ch.isdigit():
                    L.glyph(ch, ch, y + SUB_DY, x - 1, h=SUB_BOX, w=SUB_BOX, sub=True,
                            answer=k == 1)
                    x += SUB_PITCH
                    text += f"_{{{ch}}}"
                else:
                    x = L.text(ch, y, x, answer=k == 1)
                    text += ch
            parts.append(text)
    return "\\ce{" + "".join(parts) + "}"


def gen_vae(rng, L):
    if rng.random() < 0.5:
        op, a, b = "+", int(_num(rng, 2, 3)), int(_num(rng, 1, 3))
        c = a + b
    else:   # one-digit multiplier: no partial-product rows (official convention, L14)
        op, a, b = "*", int(_num(rng, 2, 3)), int(rng.integers(2, 10))
        c = a * b
    a, b, c = str(a), str(b), str(c)
    right = 70.0
    ncol = max(len(a), len(b), len(c)) + 1
    L.text(a, 6, right - len(a) * PITCH)
    L.glyph("cross" if op == "*" else "plus", "\\times" if op == "*" else "+", 18,
            right - ncol * PITCH)
    L.text(b, 18, right - len(b) * PITCH)
    L.glyph("bar", None, 29, right - ncol * PITCH, h=3, w=int(ncol * PITCH))
    L.text(c, 34, right - len(c) * PITCH, answer=True)
    opt = "\\times" if op == "*" else "+"
    return (f"\\begin{{arith}}\\operand[0]{{{a}}}\\operator{{{opt}}}\\operand[0]{{{b}}}"
            f"\\result\\operand[0]{{{c}}}\\end{{arith}}")


def gen_sys(rng, L):
    rows = []
    for _ in range(2):
        ca = "" if rng.random() < 0.3 else str(int(rng.integers(2, 10)))
        cb = "" if rng.random() < 0.3 else str(int(rng.integers(2, 10)))
        rows.append((f"{ca}x{'+-'[int(rng.integers(2))]}{cb}y=", _num(rng, 1, 2)))
    L.glyph("lbrace", None, 12, 2, h=28, w=5)
    for i, (lhs, rhs) in enumerate(rows):
        x = L.text(lhs, 14 + 16 * i, 11)
        L.text(rhs, 14 + 16 * i, x, answer=True)
    return ("\\begin{cases}" + "\\\\".join(lhs + rhs for lhs, rhs in rows)
            + "\\end{cases}")


def gen_mat(rng, L):
    n = int(rng.integers(2, 4))
    kind = "b" if rng.random() < 0.5 else "p"
    entries = [[_num(rng, 1, 2) for _ in range(n)] for _ in range(n)]
    top, pitch_r, pitch_c = 6.0, 14.0, 26.0
    height = n * pitch_r + 2
    left, right = ("lbrack", "rbrack") if kind == "b" else ("lparen", "rparen")
    L.glyph(left, None, top - 2, 2, h=int(height), w=5)
    for i, row in enumerate(entries):
        for j, e in enumerate(row):
            cx = 10 + j * pitch_c + 9
            L.text(e, top + i * pitch_r, cx - len(e) * PITCH / 2)
    L.glyph(right, None, top - 2, 10 + n * pitch_c - 2, h=int(height), w=5)
    body = "\\\\".join("&".join(r) for r in entries)
    return f"\\begin{{{kind}matrix}}{body}\\end{{{kind}matrix}}"


GENERATORS = {"SSE": gen_sse, "FRAC": gen_frac, "CHEM": gen_chem, "VAE": gen_vae,
              "SYS": gen_sys, "MAT": gen_mat}


def render(category: str, rng, digit_pools: dict, artifact_prob: float,
           jitter_px: float = 1.5, keep_canvas: bool = False):
    """One expression of ``category``: layout, +-jitter_px position jitter (rounded to whole
    pixels), the canvas (icml26.vision paste / draw_stroke / gaussian_spots) and each box's
    normalised crop. With ``keep_canvas`` also returns the canvas."""
    L = _Layout()
    label = GENERATORS[category](rng, L)
    items = L.items
    xs = np.array([it["x"] for it in items])
    xe = np.array([it["x"] + it["w"] for it in items])
    span = xe.max() - xs.min()
    fit = min(1.0, (W_CANVAS - 6) / span)      # long lines are squeezed to the canvas
    canvas = np.zeros((H_CANVAS, W_CANVAS))
    boxes, cls, tok, sub, answer = [], [], [], [], []
    for it in items:
        jy, jx = rng.uniform(-jitter_px, jitter_px, 2)
        top = int(np.clip(np.rint(it["y"] + jy), 0, H_CANVAS - it["h"]))
        left = int(np.clip(np.rint(2 + (it["x"] - xs.min()) * fit + jx), 0,
                           W_CANVAS - it["w"]))
        name = it["cls"]
        if name.isdigit():
            img = digit_image(digit_pools[int(name)], rng, it["h"], it["w"])
        else:
            img = draw_symbol(name, it["h"], it["w"], rng)
        canvas = paste(canvas, img, top, left, mode="max")
        boxes.append((top, left, it["h"], it["w"]))
        cls.append(CID[name])
        tok.append(it["tok"])
        sub.append(it["sub"])
        answer.append(it["answer"])
    boxes = np.array(boxes, dtype=float)
    artifact = ""
    if rng.random() < artifact_prob:
        small = [i for i, (b, a) in enumerate(zip(boxes, answer, strict=True))
                 if b[2] == G and b[3] == G and not a]
        if rng.random() < 0.5 and small:
            # a stray stroke through one non-answer glyph (absent from the label)
            t, lft = boxes[small[int(rng.integers(len(small)))], :2]
            y0, y1 = t + rng.uniform(1, 7, 2)
            canvas = draw_stroke(canvas, (y0, lft - 1), (y1, lft + G), rng.uniform(1.0, 1.6),
                                 rng.uniform(10, 16))
            artifact = "strike"
        else:   # a smudge: a Gaussian blob near one glyph
            t, lft, h, w = boxes[int(rng.integers(len(boxes)))]
            c = (t + h / 2 + rng.uniform(-4, 4), lft + w / 2 + rng.uniform(-4, 4))
            canvas = canvas + gaussian_spots(canvas.shape, [c], rng.uniform(2.0, 3.5),
                                             rng.uniform(5, 10))
            artifact = "smudge"
    canvas = np.clip(canvas, 0, 16)
    crops = np.stack([normalise(canvas[int(t):int(t + h), int(lft):int(lft + w)])
                      for t, lft, h, w in boxes]).reshape(len(boxes), -1) / 16.0
    ex = Expression(category, np.array(cls), tok, boxes, np.array(sub), crops, label, artifact)
    return (ex, canvas) if keep_canvas else ex


def digit_pools(images: np.ndarray, labels: np.ndarray) -> dict:
    return {d: images[labels == d] for d in range(10)}
