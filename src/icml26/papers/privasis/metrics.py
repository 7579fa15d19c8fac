"""Applying tags and scoring a sanitized record (numpy only).

Leak types follow the official evaluate.py (``evaluate_sanitization_effectiveness``), checked
in order for every drop and abstract target, one reason per target:
- direct: the target's value appears verbatim (as a contiguous token sequence) in the output;
- inference: a deterministic attacker's guess from the output equals the value (the official
  attacker is an LLM): the name read from a surviving email "first . last @ domain", the city
  looked up from a surviving street (each street lies in one city);
- proximity: the attacker's guess from the output is as close as from the original (the
  official judge is an LLM): a fragment of the value survives in place at a mention of the
  subject (a first or last name alone, the day or month of a DOB next to its year, ...).
Retention: the spec's share of keep entity spans (the subject's non-target attributes, all
third-party and public entities) reproduced exactly; and the official explicit keep
attributes (every mention kept). Full success (official ``evaluate_batch``): every target
leak-free and every explicit keep attribute retained; the spec's variant asks retention >= 0.9
instead of the explicit keep attributes.
"""

from __future__ import annotations

import numpy as np

from .generator import (
    A_ABSTRACT,
    A_KEEP,
    A_REMOVE,
    AT,
    CAT,
    COARSE,
    DOT,
    IS,
    KEEP,
    OWNER_SUBJECT,
    REMOVE,
    STREET_CITY,
    linked_removals,
)


def apply_tags(tokens, tags) -> tuple[np.ndarray, np.ndarray]:
    """Output tokens and, per input position, the output index of the token kept unchanged
    there (-1: removed or abstracted). Remove deletes the token (official: no placeholder);
    abstract writes its coarse form from the fixed lexicon (deleted when it has none)."""
    tokens = np.asarray(tokens, dtype=np.int64)
    tags = np.asarray(tags)
    out_tok = np.where(tags == KEEP, tokens, np.where(tags == REMOVE, -1, COARSE[tokens]))
    kept = out_tok >= 0
    pos = np.cumsum(kept) - 1
    same = kept & (tags == KEEP)
    return out_tok[kept], np.where(same, pos, -1)


def contains(haystack, needle) -> bool:
    """Does the token sequence ``needle`` appear contiguously in ``haystack``?"""
    h, n = np.asarray(haystack), np.asarray(needle)
    if len(n) == 0 or len(h) < len(n):
        return False
    hits = np.nonzero(h == n[0])[0]
    return any(np.array_equal(h[i:i + len(n)], n) for i in hits if i + len(n) <= len(h))


def attacker_guess(out, category: str):
    """The inference attacker's guesses of a category's value from the output tokens."""
    out = np.asarray(out)
    guesses = []
    if category == "name":   # read the name off any surviving email pattern
        for p in np.nonzero(out == AT)[0]:
            if p >= 3 and out[p - 2] == DOT and IS["first"][out[p - 3]] and \
                    IS["last"][out[p - 1]]:
                guesses.append((int(out[p - 3]), int(out[p - 1])))
    elif category == "city":  # the gazetteer maps a surviving street to its city
        guesses += [(int(STREET_CITY[t]),) for t in out if IS["street"][t]]
    return guesses


def score_record(tokens, tags, act, values, spans) -> dict:
    """Leaks, retention and success of one record.

    tokens, tags: the record's input tokens and the method's tags; act: (14,) actions;
    values: (14, 5) canonical values (-1 padded); spans: rows (start, length, owner, category)
    relative to the record's first token.
    """
    out, pos = apply_tags(tokens, tags)
    tags = np.asarray(tags)
    linked = linked_removals(act)
    reasons = {}
    for c in np.nonzero((act == A_REMOVE) | (act == A_ABSTRACT))[0]:
        val = values[c][values[c] >= 0]
        cat = _name(c)
        if contains(out, val):
            reasons[cat] = "direct"
            continue
        if tuple(int(x) for x in val) in attacker_guess(out, cat):
            reasons[cat] = "inference"
            continue
        # proximity: a finer-than-requested fragment survives at a mention of the subject
        fine = False
        for start, n, owner, sc in spans:
            if owner != OWNER_SUBJECT or sc != c:
                continue
            seg = tokens[start:start + n]
            kept = pos[start:start + n] >= 0
            if act[c] == A_ABSTRACT:   # the coarse form itself (the year of a DOB) is allowed
                kept &= COARSE[np.asarray(seg)] != np.asarray(seg)
            fine |= bool(kept.any())
        if fine:
            reasons[cat] = "proximity"
    # retention: keep entity spans (gold keeps them whole)
    keep_ok, keep_n, tp_ok, tp_n = 0, 0, 0, 0
    explicit = {int(c): True for c in np.nonzero(act == A_KEEP)[0]}
    for start, n, owner, sc in spans:
        whole = bool((tags[start:start + n] == KEEP).all())
        if owner == OWNER_SUBJECT:
            if act[sc] in (A_REMOVE, A_ABSTRACT) or sc in linked:
                continue
            if sc in explicit:
                explicit[sc] &= whole
        else:
            tp_ok, tp_n = tp_ok + whole, tp_n + 1
        keep_ok, keep_n = keep_ok + whole, keep_n + 1
    retention = keep_ok / keep_n if keep_n else np.nan
    leaks = set(reasons.values())
    no_leak = not leaks
    return {"direct": "direct" in leaks, "inference": "inference" in leaks,
            "proximity": "proximity" in leaks, "retention": retention,
            "retention_third": tp_ok / tp_n if tp_n else np.nan,
            "keep_attrs": len(explicit), "keep_ok": all(explicit.values()),
            "success": no_leak and all(explicit.values()),
            "success_spec": no_leak and bool(retention >= 0.9), "n_targets": int(
                ((act == A_REMOVE) | (act == A_ABSTRACT)).sum()), "reasons": reasons}


def _name(c) -> str:
    return next(k for k, v in CAT.items() if v == int(c))


def score_split(split: dict, tags) -> list[dict]:
    """score_record for every record of a split, given flat tags over the split's tokens."""
    rows = []
    spans = split["spans"]
    by_rec = np.searchsorted(spans[:, 0], np.arange(len(split["rec_off"])))
    for r in range(len(split["rec_off"]) - 1):
        a, b = int(split["rec_off"][r]), int(split["rec_off"][r + 1])
        sp = spans[by_rec[r]:by_rec[r + 1]]
        rel = [(int(s) - a, int(n), int(o), int(c)) for _, s, n, o, c in sp]
        rows.append(score_record(split["tok"][a:b], tags[a:b], split["act"][r],
                                 split["values"][r], rel))
    return rows
