"""Rule-based generic PII scrubber (stand-in for off-the-shelf PII tools, instruction-agnostic).

It redacts every token that matches standard PII lexicons or patterns, whoever's data it is
and whatever the instruction asks: names (a names list), emails (``x . y @ domain``), phone,
account and case numbers (runs of two or more number groups), and dates (a month with its day
and year; any year token). It never abstracts and is blind to diagnoses, medications,
ethnicity, workplaces, job titles, salaries, cities and street addresses (no gazetteer, as in
the spec's list of patterns).
"""

from __future__ import annotations

import numpy as np

from .generator import AT, DOT, IS, KEEP, REMOVE


def scrub(tokens) -> np.ndarray:
    """Per-token tags (keep / remove) of one token sequence."""
    t = np.asarray(tokens, dtype=np.int64)
    n = len(t)
    red = IS["name"][t].copy()
    # emails: first . last @ domain
    for p in np.nonzero(t == AT)[0]:
        lo = max(p - 3, 0)
        if p >= 2 and t[p - 2] == DOT:
            red[lo:p + 2] = True
        red[p] = True
        if p + 1 < n and IS["domain"][t[p + 1]]:
            red[p + 1] = True
    # number groups: a run of >= 2 numbers is a phone / account / case number
    num = IS["number"][t]
    i = 0
    while i < n:
        if num[i]:
            j = i
            while j < n and num[j]:
                j += 1
            if j - i >= 2:
                red[i:j] = True
            i = j
        else:
            i += 1
    # dates: a month with the number before it; every year
    for p in np.nonzero(IS["month"][t])[0]:
        red[p] = True
        if p >= 1 and num[p - 1]:
            red[p - 1] = True
    red |= IS["year"][t]
    return np.where(red, REMOVE, KEEP).astype(np.int8)


def scrub_split(split: dict) -> np.ndarray:
    """Tags over a split's flat tokens, record by record (patterns never cross records)."""
    out = np.zeros(len(split["tok"]), dtype=np.int8)
    off = split["rec_off"]
    for r in range(len(off) - 1):
        out[off[r]:off[r + 1]] = scrub(split["tok"][off[r]:off[r + 1]])
    return out
