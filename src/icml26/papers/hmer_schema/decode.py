"""The four inference variants: DIRECT, SIL, MSR and SASR, as explicit algorithms.

Input per expression: its glyph boxes (segmentation is given) and the recogniser's class
probabilities for each glyph. No variant ever sees the true category, classes or label
(officially ``build_messages`` accepts the class name and never uses it): ``Geometry`` is built
from the boxes alone.

Information ladder (official modes in HMER-Bench src/sasr/tools_sasr.py, build_messages):
- DIRECT (INFERRED: the repo has no such mode; the paper's plain baseline): generic reading of
  text lines, bars read as fractions, ambiguous classes take their most frequent role.
- SIL: schema from 1-NN on the layout descriptor against the exemplars, the DIRECT reading
  wrapped in that schema's environment; no constrained parse, no disambiguation (INFERRED: the
  official SIL only primes classification and wraps nothing).
- MSR: schema from generic hand rules (no exemplar matching), the schema grammars (MSR knows
  every label format from the exemplar texts), and only generic disambiguation: officially MSR
  gets no exemplar disambiguation notes.
- SASR: 1-NN schema, the schema grammar (schema-constrained transcription: classes restricted
  to those the slot allows), and the schema-specific disambiguation notes.

Geometry depends only on the boxes, so it is computed once per (expression, seed) and reused
for every recogniser and variant (line clustering, bars, brackets, subscripts, columns, the
matrix grid).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .glyphs import CID, CROSS, ROUND, STROKE
from .layout import CATEGORIES

VARIANTS = ("direct", "sil", "msr", "sasr")
LINE_GAP = 0.6      # spec: a new text line when the y-centre gap > 0.6 x median glyph height
WIDE_BAR = 2.0      # spec: a bar wider than 2 median glyph widths
SUB_OFFSET = 0.3    # spec: a subscript centre >= 0.3 glyph heights below the line's centre
FLAT, TALL = 0.5, 1.5   # INFERRED: flat box h < 0.5 x median h (rule), tall h > 1.5 x median
COLUMN_GAP = 0.5    # INFERRED: VAE columns split where x-centres are > 0.5 median width apart
MAT_K = (2, 3)      # spec: matrix rows / columns chosen by the best silhouette over {2, 3}

DIGIT_IDS = tuple(range(10))
INLINE = DIGIT_IDS + tuple(CID[c] for c in ("plus", "minus", "cross", "equals", "y"))
CHEM_SET = DIGIT_IDS + tuple(CID[c] for c in ("H", "plus", "arrow"))
OPS = tuple(CID[c] for c in ("plus", "minus", "cross"))
LEFT_BRACKETS = (CID["lbrack"], CID["lparen"])
BRACKETS = tuple(CID[c] for c in ("lparen", "rparen", "lbrack", "rbrack", "lbrace"))
H_ID, ARROW, PLUS = CID["H"], CID["arrow"], CID["plus"]
IS_BRACKET = np.isin(np.arange(len(CID)), BRACKETS)
PLAIN = {CID["plus"]: "+", CID["minus"]: "-", CID["equals"]: "=", CID["y"]: "y",
         CID["H"]: "H", CID["bar"]: "-", CID["lparen"]: "(", CID["rparen"]: ")",
         CID["lbrack"]: "[", CID["rbrack"]: "]", CID["lbrace"]: "\\{",
         CID["arrow"]: "\\rightarrow"}


# --------------------------------------------------------------------------------------------
# 1-D clustering (exact): used for text lines, VAE columns and the matrix grid
def gap_clusters(values: np.ndarray, gap: float) -> np.ndarray:
    """Single-linkage clusters of 1-D values: a new cluster where consecutive sorted values are
    more than ``gap`` apart. Cluster ids increase with the value."""
    order = np.argsort(values, kind="stable")
    new = np.r_[False, np.diff(values[order]) > gap]
    ids = np.empty(len(values), dtype=np.int64)
    ids[order] = np.cumsum(new)
    return ids


def kmeans_1d(values: np.ndarray, k: int) -> np.ndarray:
    """Optimal 1-D k-means (k = 2 or 3) by exhaustive search over contiguous splits of the
    sorted values (optimal 1-D clusters are contiguous); labels ordered by value."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    n = len(v)
    c1, c2 = np.r_[0.0, np.cumsum(v)], np.r_[0.0, np.cumsum(v * v)]

    def sse(a, b):   # within-cluster sum of squares of v[a:b]
        return c2[b] - c2[a] - (c1[b] - c1[a]) ** 2 / (b - a)

    best, cut = np.inf, ()
    if k == 2:
        for i in range(1, n):
            s = sse(0, i) + sse(i, n)
            if s < best - 1e-12:
                best, cut = s, (i,)
    else:
        for i in range(1, n - 1):
            for j in range(i + 1, n):
                s = sse(0, i) + sse(i, j) + sse(j, n)
                if s < best - 1e-12:
                    best, cut = s, (i, j)
    lab = np.zeros(n, dtype=np.int64)
    for c in cut:
        lab[c:] += 1
    out = np.empty(n, dtype=np.int64)
    out[order] = lab
    return out


def silhouette_1d(values: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette coefficient (as sklearn.metrics.silhouette_score, Euclidean; a point
    alone in its cluster scores 0)."""
    d = np.abs(values[:, None] - values[None, :])
    ks = np.unique(labels)
    mean_to = np.stack([d[:, labels == k].sum(axis=1) for k in ks], axis=1)
    size = np.array([(labels == k).sum() for k in ks])
    own = np.searchsorted(ks, labels)
    n_own = size[own]
    a = np.where(n_own > 1, mean_to[np.arange(len(values)), own] / np.maximum(n_own - 1, 1), 0)
    other = mean_to / size
    other[np.arange(len(values)), own] = np.inf
    b = other.min(axis=1)
    s = np.where(n_own > 1, (b - a) / np.maximum(np.maximum(a, b), 1e-12), 0.0)
    return float(s.mean())


def best_k_clusters(values: np.ndarray) -> np.ndarray:
    """k-means labels with k in MAT_K chosen by the best silhouette (ties: the smaller k)."""
    best, lab = -np.inf, np.zeros(len(values), dtype=np.int64)
    for k in MAT_K:
        if len(values) <= k:
            continue
        cand = kmeans_1d(values, k)
        s = silhouette_1d(values, cand)
        if s > best + 1e-12:
            best, lab = s, cand
    return lab


# --------------------------------------------------------------------------------------------
class Geometry:
    """Everything a variant reads from the boxes (top, left, h, w) alone."""

    def __init__(self, boxes: np.ndarray):
        b = np.asarray(boxes, dtype=float)
        self.n = len(b)
        self.top, self.left, self.h, self.w = b.T
        self.cy, self.cx = self.top + self.h / 2, self.left + self.w / 2
        self.right = self.left + self.w
        self.mh, self.mw = float(np.median(self.h)), float(np.median(self.w))
        self.flat = self.h < FLAT * self.mh
        self.tall = self.h > TALL * self.mh
        self.wide = self.flat & (self.w > WIDE_BAR * self.mw)
        self.line = gap_clusters(self.cy, LINE_GAP * self.mh)
        self.lines = [self._by_x(np.flatnonzero(self.line == k))
                      for k in range(self.line.max() + 1)]
        flat = np.flatnonzero(self.flat)
        self.bar = int(flat[np.argmax(self.w[flat])]) if len(flat) else -1
        self.small = np.flatnonzero(~self.flat & ~self.tall)

    def _by_x(self, idx):
        return [int(i) for i in idx[np.argsort(self.cx[idx], kind="stable")]]

    def reading_order(self, idx=None):
        idx = np.arange(self.n) if idx is None else np.asarray(idx, dtype=np.int64)
        return self._by_x(idx)

    @cached_property
    def sub_line(self) -> np.ndarray:
        """Subscripts relative to each text line's median centre (the descriptor's reading)."""
        out = np.zeros(self.n, dtype=bool)
        for k in range(self.line.max() + 1):
            m = self.line == k
            out[m] = self.cy[m] - np.median(self.cy[m]) >= SUB_OFFSET * self.mh
        return out

    @cached_property
    def sub_all(self) -> np.ndarray:
        """Subscripts relative to the median centre of the whole (single-line) expression."""
        return self.cy - np.median(self.cy) >= SUB_OFFSET * self.mh

    @cached_property
    def rows(self) -> list[list[int]]:
        """Text lines of the glyphs that are neither rules nor brackets, top to bottom."""
        keep = ~self.flat & ~self.tall
        ids = gap_clusters(self.cy[keep], LINE_GAP * self.mh) if keep.any() else np.zeros(0, int)
        idx = np.flatnonzero(keep)
        return [self._by_x(idx[ids == k]) for k in range(ids.max() + 1 if len(ids) else 0)]

    @cached_property
    def columns(self) -> np.ndarray:
        """Column id (left to right) of every glyph: single linkage of x-centres (VAE)."""
        return gap_clusters(self.cx, COLUMN_GAP * self.mw)

    @cached_property
    def grid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Matrix cells: the non-tall glyphs, and their row / column ids from 1-D k-means with
        k in {2, 3} by the best silhouette (spec; exact 1-D k-means instead of sklearn's
        KMeans, tested against it)."""
        idx = np.flatnonzero(~self.tall)
        if len(idx) == 0:
            return idx, idx, idx
        return idx, best_k_clusters(self.cy[idx]), best_k_clusters(self.cx[idx])

    @cached_property
    def geometric_descriptor(self) -> np.ndarray:
        """The recogniser-independent part of the layout descriptor."""
        rows = self.rows
        bar = self.w[self.bar] / self.mw if self.bar >= 0 else 0.0
        rights = np.array([self.right[r[-1]] for r in rows]) if rows else np.zeros(1)
        align = float(np.std(rights) / self.mw) if len(rights) > 1 else 0.0
        sub = float(np.mean(self.sub_line))
        per_line = float(self.n / (self.line.max() + 1))
        return np.array([self.line.max() + 1, bar, align, sub, per_line])


def descriptor(g: Geometry, cls: np.ndarray) -> np.ndarray:
    """Spec's layout descriptor: number of text lines, max bar width / median glyph width,
    bracket or brace present, right-alignment score, subscript fraction, arrow present, mean
    glyphs per line. The two presence flags come from the recognised classes."""
    n_lines, bar, align, sub, per_line = g.geometric_descriptor
    bracket = float(IS_BRACKET[cls].any())
    arrow = float((cls == ARROW).any())
    return np.array([n_lines, bar, bracket, align, sub, arrow, per_line])


class SchemaMatcher:
    """1-NN on the descriptor against one exemplar per category (spec; the analogue of the
    official in-context image exemplars). Each feature is divided by its spread ``scale`` over
    a fixed reference sample of layouts (INFERRED: a fixed standardisation rule, set before
    any run; see experiment.reference_layouts)."""

    def __init__(self, exemplar_descriptors: np.ndarray, scale: np.ndarray,
                 categories=CATEGORIES):
        self.ref = np.asarray(exemplar_descriptors, dtype=float)
        sd = np.asarray(scale, dtype=float)
        self.scale = np.where(sd > 1e-9, sd, 1.0)
        self.categories = tuple(categories)

    def __call__(self, d: np.ndarray) -> str:
        dist = (((self.ref - d) / self.scale) ** 2).sum(axis=1)
        return self.categories[int(np.argmin(dist))]


def hand_rules(g: Geometry, cls: np.ndarray) -> str:
    """MSR's generic schema rules, no exemplar matching (spec: number of lines, bar present,
    bracket present). INFERRED details: a recognised bracket or brace with tall boxes on both
    sides -> MAT, on one side -> SYS; a recognised arrow -> CHEM (MSR officially knows the
    chemistry format from the exemplar texts); a rule with >= 4 text lines -> VAE, a rule ->
    FRAC; several lines -> SYS; else SSE."""
    if IS_BRACKET[cls].any():
        return "MAT" if int(g.tall.sum()) >= 2 else "SYS"
    if (cls == ARROW).any():
        return "CHEM"
    n_lines = g.line.max() + 1
    if g.bar >= 0:
        return "VAE" if n_lines >= 4 else "FRAC"
    return "SYS" if n_lines >= 2 else "SSE"


# --------------------------------------------------------------------------------------------
# roles
def _digit(k):
    return 0 <= k <= 9


def prior_token(k: int) -> str:
    """DIRECT's role: the most frequent role of the visual class (round -> digit 0, cross ->
    variable x, stroke -> digit 1)."""
    if _digit(k):
        return str(k)
    if k == CROSS:
        return "x"
    return PLAIN[k]


def _neighbour_times(row, pos, cls):
    """Generic context: a cross between two digits is \\times, else the variable x."""
    return (0 < pos < len(row) - 1 and _digit(cls[row[pos - 1]])
            and _digit(cls[row[pos + 1]]))


def resolve_roles(schema: str, mode: str, rows: list[list[int]], cls: np.ndarray,
                  sub: np.ndarray) -> dict:
    """Token of every ambiguous glyph (round, stroke, cross) in ``rows`` (reading order).

    sasr: the schema-specific notes (spec): CHEM round -> O unless the next glyph is an
    element letter or it sits in a subscript or coefficient position, stroke -> 1 unless it
    follows an element letter; VAE cross -> \\times; SYS cross -> x; other schemas cross ->
    \\times between two digits, else x. msr: generic context only (officially no exemplar
    notes): cross -> \\times between two digits, round -> O next to an element letter."""
    out = {}
    for row in rows:
        for pos, i in enumerate(row):
            k = cls[i]
            if k not in (ROUND, STROKE, CROSS):
                continue
            prev = row[pos - 1] if pos > 0 else None
            nxt = row[pos + 1] if pos + 1 < len(row) else None
            if mode == "msr":
                if k == CROSS:
                    out[i] = "\\times" if _neighbour_times(row, pos, cls) else "x"
                elif k == ROUND:
                    near_h = any(j is not None and cls[j] == H_ID for j in (prev, nxt))
                    out[i] = "O" if near_h else "0"
                else:
                    out[i] = "1"
                continue
            if k == ROUND:
                if schema == "CHEM":
                    coefficient = (prev is None or cls[prev] in (PLUS, ARROW)) and \
                        nxt is not None and _digit(cls[nxt]) and not sub[nxt]
                    letter_next = nxt is not None and cls[nxt] == H_ID
                    out[i] = "0" if sub[i] or letter_next or coefficient else "O"
                else:
                    out[i] = "0"
            elif k == STROKE:
                after_letter = prev is not None and not sub[i] and not sub[prev] and (
                    cls[prev] == H_ID or out.get(prev) == "O")
                out[i] = "l" if after_letter else "1"
            else:
                if schema == "VAE":
                    out[i] = "\\times"
                elif schema in ("SYS", "CHEM"):
                    out[i] = "x"
                else:
                    out[i] = "\\times" if _neighbour_times(row, pos, cls) else "x"
    return out


# --------------------------------------------------------------------------------------------
# schema grammars (schema-constrained transcription). Each returns the emitted items (a
# structural token, or a glyph index) and the rows the disambiguation reads.
def _constrained(P, idx, allowed):
    """The class of each glyph in ``idx``: the argmax over the classes its slot allows."""
    if not len(idx):
        return {}
    a = np.asarray(allowed)
    idx = np.asarray(idx, dtype=np.int64)
    best = a[np.argmax(P[np.ix_(idx, a)], axis=1)]
    return dict(zip(idx.tolist(), best.tolist(), strict=True))


def parse_sse(g, P):
    row = g.reading_order()
    return row, [row], _constrained(P, row, INLINE)


def parse_frac(g, P):
    if g.bar < 0:
        return parse_sse(g, P)
    b = g.bar
    lo, hi = g.left[b] - 0.25 * g.mw, g.right[b] + 0.25 * g.mw
    others = [i for i in range(g.n) if i != b]
    inside = [i for i in others if lo <= g.cx[i] <= hi]
    num = g.reading_order([i for i in inside if g.cy[i] < g.cy[b]])
    den = g.reading_order([i for i in inside if g.cy[i] > g.cy[b]])
    rest = [i for i in others if i not in inside]
    before = g.reading_order([i for i in rest if g.cx[i] < g.cx[b]])
    after = g.reading_order([i for i in rest if g.cx[i] >= g.cx[b]])
    items = before + ["\\frac", "{"] + num + ["}", "{"] + den + ["}"] + after
    cls = _constrained(P, num + den, DIGIT_IDS)
    cls.update(_constrained(P, before + after, INLINE))
    return items, [num, den, before + after], cls


def parse_chem(g, P):
    row = g.reading_order()
    cls = _constrained(P, row, CHEM_SET)
    items, open_sub = ["\\ce", "{"], False
    for i in row:
        if g.sub_all[i] and not open_sub:
            items += ["_", "{"]
            open_sub = True
        elif not g.sub_all[i] and open_sub:
            items.append("}")
            open_sub = False
        items.append(i)
    items += ["}"] * open_sub + ["}"]
    return items, [row], cls


def parse_vae(g, P):
    rows = g.rows
    if g.bar >= 0:
        above = [r for r in rows if np.mean(g.cy[r]) < g.cy[g.bar]]
        below = [r for r in rows if np.mean(g.cy[r]) > g.cy[g.bar]]
    else:
        above, below = rows, []
    op = above[1][0] if len(above) > 1 and len(above[1]) > 1 else None
    cls = {op: int(np.asarray(OPS)[np.argmax(P[op, list(OPS)])])} if op is not None else {}
    digits = [i for r in above + below for i in r if i != op]
    cls.update(_constrained(P, digits, DIGIT_IDS))
    col = g.columns
    last = max((col[i] for i in digits), default=0)
    items = ["\\begin{arith}"]
    role_rows = []

    def operand(r):
        r = [i for i in r if i != op]
        if not r:
            return []
        role_rows.append(r)
        return ["\\operand", "[", *str(int(last - col[r[-1]])), "]", "{", *r, "}"]

    for j, r in enumerate(above):
        if j == 1 and op is not None:
            items += ["\\operator", "{", op, "}"]
            role_rows.append([op])
        items += operand(r)
    items.append("\\result")
    for r in below:
        items += operand(r)
    items.append("\\end{arith}")
    return items, role_rows, cls


def parse_sys(g, P):
    items, rows = ["\\begin{cases}"], g.rows
    for j, r in enumerate(rows):
        if j:
            items.append("\\\\")
        items += r
    items.append("\\end{cases}")
    cls = _constrained(P, [i for r in rows for i in r], INLINE)
    return items, rows, cls


def parse_mat(g, P):
    tall = np.flatnonzero(g.tall)
    env = "bmatrix"
    if len(tall):
        left = int(tall[np.argmin(g.cx[tall])])
        kind = int(np.asarray(LEFT_BRACKETS)[np.argmax(P[left, list(LEFT_BRACKETS)])])
        env = "bmatrix" if kind == CID["lbrack"] else "pmatrix"
    idx, r_id, c_id = g.grid
    items, rows = [f"\\begin{{{env}}}"], []
    nr, nc = (int(r_id.max()) + 1, int(c_id.max()) + 1) if len(idx) else (0, 0)
    for r in range(nr):
        if r:
            items.append("\\\\")
        for c in range(nc):
            if c:
                items.append("&")
            cell = g.reading_order(idx[(r_id == r) & (c_id == c)])
            items += cell
            rows.append(cell)
    items.append(f"\\end{{{env}}}")
    return items, rows, _constrained(P, idx, DIGIT_IDS)


PARSERS = {"SSE": parse_sse, "FRAC": parse_frac, "CHEM": parse_chem, "VAE": parse_vae,
           "SYS": parse_sys, "MAT": parse_mat}


# --------------------------------------------------------------------------------------------
def _glyph_tokens(k: int, tok: str | None, schema: str | None) -> list[str]:
    if tok is None:
        tok = prior_token(k)
    if k == ARROW and schema == "CHEM":
        return ["-", ">"]
    return [tok]


def direct_items(g: Geometry) -> list:
    """DIRECT reading: lines top to bottom, left to right, ``\\\\`` between lines; a bar wider
    than 2 median glyph widths with a line above and below becomes \\frac of those lines
    (which are then not read again)."""
    lines = g.lines
    fracs, used = {}, set()
    for k, line in enumerate(lines):
        for i in line:
            if g.wide[i] and 0 < k < len(lines) - 1 and not {k - 1, k, k + 1} & used:
                fracs[i] = (k - 1, k + 1)
                used.update((k - 1, k + 1))
    out = []
    for k, line in enumerate(lines):
        if k in used:
            continue
        if out:
            out.append("\\\\")
        for i in line:
            if i in fracs:
                a, b = fracs[i]
                out += ["\\frac", "{", *lines[a], "}", "{", *lines[b], "}"]
            else:
                out.append(i)
    return out


WRAP = {"CHEM": (["\\ce", "{"], ["}"]), "VAE": (["\\begin{arith}"], ["\\end{arith}"]),
        "SYS": (["\\begin{cases}"], ["\\end{cases}"])}


def decode(variant: str, g: Geometry, P: np.ndarray, schema: str = ""):
    """One expression read by one variant. ``schema`` is the variant's identified schema (SIL
    and SASR: ``SchemaMatcher`` on ``descriptor``; MSR: ``hand_rules``; computed by the caller
    once per expression and recogniser). Returns (tokens, per-glyph emitted token (None: not
    emitted as a symbol), per-glyph class used)."""
    argmax = P.argmax(axis=1)
    glyph_cls = argmax.copy()
    roles: dict = {}
    if variant in ("direct", "sil"):
        items = direct_items(g)
        if variant == "sil":
            if schema == "MAT":
                env = "bmatrix" if ((argmax == CID["lbrack"]) | (argmax == CID["rbrack"])).any() \
                    else "pmatrix"
                pre, post = [f"\\begin{{{env}}}"], [f"\\end{{{env}}}"]
            else:
                pre, post = WRAP.get(schema, ([], []))
            items = pre + items + post
        emit_schema = None
    else:
        items, rows, constrained = PARSERS[schema](g, P)
        for i, k in constrained.items():
            glyph_cls[i] = k
        sub = g.sub_all if schema == "CHEM" else np.zeros(g.n, dtype=bool)
        roles = resolve_roles(schema, variant, rows, glyph_cls, sub)
        if schema == "VAE":   # the format's operator slot: a cross there is \\times
            for a, b in zip(items, items[2:], strict=False):
                if a == "\\operator" and not isinstance(b, str) and glyph_cls[b] == CROSS:
                    roles[b] = "\\times"
        emit_schema = schema
    tokens, emitted = [], [None] * g.n
    for it in items:
        if isinstance(it, str):
            tokens.append(it)
        else:
            k = int(glyph_cls[it])
            out = _glyph_tokens(k, roles.get(it, prior_token(k)), emit_schema)
            emitted[it] = "".join(out)
            tokens += out
    return tokens, emitted, glyph_cls


def identify(variant: str, g: Geometry, argmax: np.ndarray, matcher: SchemaMatcher) -> str:
    """The schema a variant works with ("" for DIRECT)."""
    if variant in ("sil", "sasr"):
        return matcher(descriptor(g, argmax))
    if variant == "msr":
        return hand_rules(g, argmax)
    return ""
