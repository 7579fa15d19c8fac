"""Machine-checked claims: one verdict per claim, from all seeds, with thresholds from the spec.

Three ways to check, chosen per claim by what the spec states:
- ``check_mean``: per-seed values; the 95% interval of their mean (or of a paired difference)
  must lie on the claimed side ("reproduced"), lie wholly on the other side
  ("not_reproduced"), or straddle the threshold ("inconclusive", also with < 2 seeds).
- ``check_value``: one number computed from all seeds together (a fitted slope, a mean the
  spec compares directly); the comparison holds or it does not.
- ``check_every``: per-seed values that must satisfy the comparison in every seed.
``combine`` joins the parts of a claim that must all hold ("in every setting").
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field

import numpy as np

from .stats import mean_ci

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not_reproduced"
INCONCLUSIVE = "inconclusive"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE)
CATEGORIES = ("result", "sanity")

_OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}


@dataclass
class Check:
    """The verdict of one comparison, with what was measured."""

    verdict: str
    measured: float
    lo: float = math.nan
    hi: float = math.nan
    n: int = 1


def _holds(value: float, op: str, threshold: float) -> bool:
    if op not in _OPS:
        raise ValueError(f"comparison {op!r} is not allowed; allowed: {', '.join(_OPS)}")
    return bool(_OPS[op](value, threshold))


def check_value(value: float, op: str, threshold: float) -> Check:
    """A single number against a threshold; NaN is inconclusive."""
    value = float(value)
    if not np.isfinite(value):
        return Check(INCONCLUSIVE, value)
    return Check(REPRODUCED if _holds(value, op, threshold) else NOT_REPRODUCED, value)


def check_mean(values, op: str, threshold: float) -> Check:
    """Per-seed values: the 95% interval of their mean against the threshold."""
    iv = mean_ci(values)
    if iv.n < 2:
        return Check(INCONCLUSIVE, iv.mean, n=iv.n)
    lower_ok, upper_ok = _holds(iv.lo, op, threshold), _holds(iv.hi, op, threshold)
    if lower_ok and upper_ok:
        verdict = REPRODUCED
    elif not lower_ok and not upper_ok:
        verdict = NOT_REPRODUCED
    else:
        verdict = INCONCLUSIVE
    return Check(verdict, iv.mean, iv.lo, iv.hi, iv.n)


def check_every(values, op: str, threshold: float) -> Check:
    """Per-seed values that must all satisfy the comparison."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0 or not np.all(np.isfinite(x)):
        return Check(INCONCLUSIVE, math.nan, n=int(x.size))
    ok = all(_holds(v, op, threshold) for v in x)
    worst = float(x.max() if op in ("<=", "<") else x.min())
    return Check(REPRODUCED if ok else NOT_REPRODUCED, worst, n=int(x.size))


def combine(verdicts) -> str:
    """All parts reproduced -> reproduced; any part not reproduced -> not reproduced."""
    verdicts = list(verdicts)
    if not verdicts:
        return INCONCLUSIVE
    if any(v == NOT_REPRODUCED for v in verdicts):
        return NOT_REPRODUCED
    if all(v == REPRODUCED for v in verdicts):
        return REPRODUCED
    return INCONCLUSIVE


@dataclass
class Claim:
    """One claim of a paper with its verdict; ``parts`` maps a label to its Check."""

    id: str
    statement: str
    comparison: str
    threshold: object
    parts: dict = field(default_factory=dict)
    category: str = "result"
    n_seeds: int = 0
    note: str = ""
    timing: bool = False  # measured CPU time enters the verdict: not byte-reproducible

    def add(self, label: str, check: Check) -> Check:
        self.parts[label] = check
        return check

    @property
    def verdict(self) -> str:
        return combine(c.verdict for c in self.parts.values())

    def to_dict(self) -> dict:
        if self.category not in CATEGORIES:
            raise ValueError(f"claim {self.id}: category {self.category!r} not in {CATEGORIES}")
        measured = {k: _num(c.measured) for k, c in self.parts.items()}
        if len(measured) == 1 and "value" in measured:
            measured = measured["value"]
        out = {
            "id": self.id,
            "statement": self.statement,
            "category": self.category,
            "measured": measured,
            "comparison": self.comparison,
            "threshold": self.threshold,
            "verdict": self.verdict,
            "n_seeds": int(self.n_seeds),
        }
        intervals = {
            k: [_num(c.lo), _num(c.hi)] for k, c in self.parts.items() if np.isfinite(c.lo)
        }
        if intervals:
            out["intervals"] = intervals
        if self.note:
            out["note"] = self.note
        if self.timing:
            out["timing"] = True
        return out


def _num(x: float):
    """JSON-safe rounded number (None for NaN) so that files are stable across platforms."""
    x = float(x)
    if not np.isfinite(x):
        return None
    return float(f"{x:.6g}")
