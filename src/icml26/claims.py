"""Machine-checked claims: one verdict per claim, from all seeds, with thresholds from the spec.

Every check returns a ``Check`` and decides three ways: "reproduced" when the evidence lies
wholly on the claimed side, "not_reproduced" when it lies wholly on the other side,
"inconclusive" when it straddles the threshold or is too thin to decide. Pick the check by
what the spec states:

- ``check_mean``: per-seed values (or per-seed paired differences); the 95% t-interval of
  their mean against the threshold.
- ``check_pooled``: one statistic pooled over seeds or instances (a fitted slope, a Spearman
  correlation, a ratio of pooled means); its 95% bootstrap interval, resampling the units the
  statistic pools, against the threshold.
- ``check_every``: per-seed values that must satisfy the comparison in every seed; at least
  ``MIN_SEEDS`` seeds, else inconclusive.
- ``check_fraction``: "in k of n seeds" written as a fraction (4 of 5 -> 0.8), so the claim
  means the same at every scale; at least ``MIN_SEEDS`` seeds.
- ``check_value``: a number with no sampling variability (an exactness error, a parameter
  count, a count of forward passes). Never for a statistic over seeds or instances.
``combine`` joins the parts of a claim that must all hold ("in every setting").

Failed runs and censored values (DESIGN.md, claims):
- A non-finite per-seed value is a failed run of that method. It is counted, named in the
  claim's note, and can never help a claim pass: ``check_mean`` and ``check_pooled`` lower a
  "reproduced" to "inconclusive" when any run failed; ``check_every`` and ``check_fraction``
  count a failed seed as one where the comparison does not hold.
- A censored value (a target never reached inside the grid) enters at its bound, marked with
  ``censored``: +1 where the true value is at least the recorded one (censored above), -1
  where it is at most the recorded one. A verdict the unknown true values could overturn
  becomes "inconclusive"; a verdict they can only strengthen stands.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field

import numpy as np

from .stats import bootstrap_ci, mean_ci

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not_reproduced"
INCONCLUSIVE = "inconclusive"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE)
CATEGORIES = ("result", "sanity")
MIN_SEEDS = 3  # fewest seeds for check_every / check_fraction / a bootstrap to decide

_OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}


@dataclass
class Check:
    """The verdict of one comparison, with what was measured."""

    verdict: str
    measured: float
    lo: float = math.nan
    hi: float = math.nan
    n: int = 1
    failed: tuple = ()  # labels (seeds) of failed runs: non-finite values
    censored: tuple = ()  # labels of censored values, entered at their bound
    why: str = ""  # why the verdict is weaker than the numbers alone say (for the note)


def _holds(value: float, op: str, threshold: float) -> bool:
    if op not in _OPS:
        raise ValueError(f"comparison {op!r} is not allowed; allowed: {', '.join(_OPS)}")
    return bool(_OPS[op](value, threshold))


def _three_way(lo: float, hi: float, op: str, threshold: float) -> str:
    lower_ok, upper_ok = _holds(lo, op, threshold), _holds(hi, op, threshold)
    if lower_ok and upper_ok:
        return REPRODUCED
    if not lower_ok and not upper_ok:
        return NOT_REPRODUCED
    return INCONCLUSIVE


def _labels(values, n: int) -> list:
    """Seed labels of ``values``: its index when it is a pandas Series, else positions."""
    index = getattr(values, "index", None)
    if index is not None and not callable(index) and len(index) == n:
        return [str(v) for v in index]
    return [f"#{i}" for i in range(n)]


def _flat(values) -> np.ndarray:
    return np.asarray(values, dtype=float).ravel()


def _censor_signs(censored, n: int) -> np.ndarray:
    if censored is None:
        return np.zeros(n, dtype=int)
    c = np.asarray(censored).ravel()
    if c.dtype == bool:
        raise ValueError("censored needs signs: +1 (true value >= recorded), -1 (<=), 0 (exact)")
    c = c.astype(int)
    if c.size != n or not np.isin(c, (-1, 0, 1)).all():
        raise ValueError(f"censored must be {n} values in {{-1, 0, +1}}")
    return c


def _overturnable(verdict: str, op: str, signs: np.ndarray) -> bool:
    """Could the unknown true values of censored entries overturn ``verdict``?

    A value censored above (+1) can only be larger: that can overturn "reproduced" of a
    "<"/"<=" claim and "not_reproduced" of a ">"/">=" claim; censored below (-1) the reverse.
    """
    if verdict == INCONCLUSIVE or not signs.any():
        return False
    larger_hurts = op in ("<", "<=")  # larger values move a "<" claim away from holding
    if verdict == REPRODUCED:
        return bool((signs == (1 if larger_hurts else -1)).any())
    return bool((signs == (-1 if larger_hurts else 1)).any())


def check_value(value: float, op: str, threshold: float) -> Check:
    """A number with no sampling variability against a threshold; NaN is inconclusive.

    For a statistic computed from seeds or instances use ``check_pooled``.
    """
    value = float(value)
    if not np.isfinite(value):
        return Check(INCONCLUSIVE, value, why="the value is not finite")
    return Check(REPRODUCED if _holds(value, op, threshold) else NOT_REPRODUCED, value)


def check_mean(values, op: str, threshold: float, censored=None) -> Check:
    """Per-seed values: the 95% t-interval of their mean against the threshold."""
    x = _flat(values)
    labels = _labels(values, x.size)
    signs = _censor_signs(censored, x.size)
    failed = tuple(lab for lab, v in zip(labels, x, strict=True) if not np.isfinite(v))
    cens = tuple(lab for lab, s, v in zip(labels, signs, x, strict=True) if s and np.isfinite(v))
    iv = mean_ci(x)
    if iv.n < 2:
        return Check(INCONCLUSIVE, iv.mean, n=iv.n, failed=failed, censored=cens,
                     why="fewer than 2 finite seeds")
    verdict, why = _three_way(iv.lo, iv.hi, op, threshold), ""
    if failed and verdict == REPRODUCED:
        verdict, why = INCONCLUSIVE, "failed runs cannot support the claim"
    if _overturnable(verdict, op, signs[np.isfinite(x)]):
        verdict, why = INCONCLUSIVE, "censored values could overturn it"
    return Check(verdict, iv.mean, iv.lo, iv.hi, iv.n, failed, cens, why)


def check_pooled(stat, n_units: int, op: str, threshold: float, censored=False,
                 censor_sign: int = 0) -> Check:
    """A statistic pooled over ``n_units`` units, with its 95% bootstrap interval.

    ``stat(idx)`` computes the statistic from the units at indices ``idx`` (resampled with
    replacement; ``np.arange(n_units)`` for the point estimate). Fewer than ``MIN_SEEDS``
    units, a non-finite point estimate, or too many non-finite resamples: inconclusive.
    ``censored=True`` says the statistic rests on censored values whose true values move it
    in direction ``censor_sign`` (+1 larger, -1 smaller); a verdict they could overturn
    becomes inconclusive.
    """
    n_units = int(n_units)
    if n_units < MIN_SEEDS:
        point = float(stat(np.arange(n_units))) if n_units else math.nan
        return Check(INCONCLUSIVE, point, n=n_units,
                     why=f"fewer than {MIN_SEEDS} units to resample")
    iv = bootstrap_ci(stat, n_units)
    if not np.isfinite(iv.mean):
        return Check(INCONCLUSIVE, iv.mean, n=n_units, why="the pooled statistic is not finite")
    if not np.isfinite(iv.lo):
        return Check(INCONCLUSIVE, iv.mean, n=n_units,
                     why="the statistic is not finite on too many resamples")
    verdict, why = _three_way(iv.lo, iv.hi, op, threshold), ""
    if censored and _overturnable(verdict, op, np.array([censor_sign])):
        verdict, why = INCONCLUSIVE, "censored values could overturn it"
    return Check(verdict, iv.mean, iv.lo, iv.hi, n_units, why=why)


def check_every(values, op: str, threshold: float) -> Check:
    """Per-seed values that must all satisfy the comparison (a failed seed does not)."""
    x = _flat(values)
    labels = _labels(values, x.size)
    failed = tuple(lab for lab, v in zip(labels, x, strict=True) if not np.isfinite(v))
    finite = x[np.isfinite(x)]
    worst = (float(finite.max() if op in ("<=", "<") else finite.min())
             if finite.size else math.nan)
    if failed:
        return Check(NOT_REPRODUCED, worst, n=int(x.size), failed=failed,
                     why="a failed seed does not satisfy the comparison")
    if x.size < MIN_SEEDS:
        return Check(INCONCLUSIVE, worst, n=int(x.size),
                     why=f"'every seed' needs at least {MIN_SEEDS} seeds")
    ok = all(_holds(v, op, threshold) for v in x)
    return Check(REPRODUCED if ok else NOT_REPRODUCED, worst, n=int(x.size))


def check_fraction(values, op: str, threshold: float, at_least: float) -> Check:
    """The fraction of seeds whose value satisfies the comparison must be >= ``at_least``.

    "In 4 of 5 seeds" is ``at_least=0.8``; a failed seed counts as one where it does not
    hold. ``measured`` is the fraction.
    """
    x = _flat(values)
    labels = _labels(values, x.size)
    failed = tuple(lab for lab, v in zip(labels, x, strict=True) if not np.isfinite(v))
    if x.size < MIN_SEEDS:
        frac = float(np.mean([np.isfinite(v) and _holds(v, op, threshold) for v in x])) \
            if x.size else math.nan
        return Check(INCONCLUSIVE, frac, n=int(x.size), failed=failed,
                     why=f"a fraction of seeds needs at least {MIN_SEEDS} seeds")
    frac = float(np.mean([bool(np.isfinite(v) and _holds(v, op, threshold)) for v in x]))
    return Check(REPRODUCED if frac >= at_least - 1e-12 else NOT_REPRODUCED, frac,
                 n=int(x.size), failed=failed)


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

    def gaps(self) -> str:
        """What the verdict had to work around, written from the checks: failed runs,
        censored values, and why a part is weaker than its numbers (empty when none)."""
        out = []
        for label, c in self.parts.items():
            where = "" if label == "value" else f" in {label!r}"
            if c.failed:
                out.append(f"Failed runs (NaN/inf){where}: seeds {', '.join(c.failed)}; "
                           "counted as failures, they cannot support the claim.")
            if c.censored:
                out.append(f"Censored values{where} (seeds {', '.join(c.censored)}) entered at "
                           "their bound.")
            if c.why and not c.failed:
                out.append(f"{c.verdict.replace('_', ' ').capitalize()}{where}: {c.why}.")
        return " ".join(out)

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
        note, gaps = self.note.strip(), self.gaps()
        if note and gaps:
            note = (note if note[-1] in ".!?)" else note + ".") + " " + gaps
        else:
            note = note or gaps
        if note:
            out["note"] = note
        if self.timing:
            out["timing"] = True
        return out


def _num(x: float):
    """JSON-safe rounded number (None for NaN) so that files are stable across platforms."""
    x = float(x)
    if not np.isfinite(x):
        return None
    return float(f"{x:.6g}")
