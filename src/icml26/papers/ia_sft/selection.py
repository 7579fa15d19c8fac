"""Self-training rounds with the pseudo-label selection rules of the spec.

Per round (the spec's step 4): fit the head on the labelled pixels L plus the currently
accepted pseudo-labels (weight pseudo_weight), predict every unlabelled pixel, confidence
c = max(p, 1 - p); the accepted set is then rebuilt from this prediction (INFERRED: accepted
pseudo-labels are refreshed every round rather than accumulated):

- conf (FixMatch-style hard threshold tau): every pixel with c >= tau, predicted label.
- high-confidence set HC: c >= tau_high; low-confidence candidates: band_low <= c < tau_high
  (INFERRED band). The other rules accept HC plus some candidates:
  - ia (IA-SFT): refit the head on L + HC, compute each candidate's influence I(z) on the
    mean labelled loss with its predicted label, accept I(z) < 0, at most the ia_cap fraction
    of the candidates with the most negative I (INFERRED cap);
  - random (Random-low): as many candidates as IA-SFT accepted in that round, uniformly;
  - oracle: as many candidates whose pseudo-label is actually correct, uniformly among those.
The final head (step 5) is fitted on L + the last accepted set. ``rounds = 0`` (or rule None)
is the supervised-only head.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .head import LogisticHead, MLPTrunk, sigmoid


@dataclass
class Round:
    """What one round accepted (indices into the unlabelled pool) and why."""

    idx: np.ndarray          # accepted unlabelled positions
    label: np.ndarray        # their pseudo-labels
    low: np.ndarray          # True where the pixel came from the low-confidence band
    abs_logit: np.ndarray    # |logit| under the round's head (distance to the boundary)
    n_hc: int
    n_cand: int
    cand_idx: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    cand_label: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    influence: np.ndarray = field(default_factory=lambda: np.zeros(0))


class HeadFactory:
    """Fits the change head of one feature framework: RFF kernel logistic regression (the spec)
    or, in the full profile, a one-hidden-layer MLP whose last layer is refitted exactly."""

    def __init__(self, z, rff, p, kind="rff", seed_of=None):
        self.z, self.p, self.kind, self.seed_of = z, p, kind, seed_of
        self.phi = rff.transform(z) if kind == "rff" else None

    def fit(self, idx, y, w, tag=()):
        """Returns (LogisticHead fitted on the rows idx, the feature map of every pixel)."""
        phi = self.phi
        if self.kind == "mlp":
            trunk = MLPTrunk(self.p["mlp_hidden"], self.p["mlp_steps"], self.p["mlp_lr"],
                             self.p["alpha"])
            trunk.fit(self.z[idx], y.astype(float), w, np.random.default_rng(self.seed_of(tag)))
            phi = trunk.transform(self.z)
        head = LogisticHead(self.p["alpha"]).fit(phi[idx], y, w)
        return head, phi


def _weights(n_lab, n_pseudo, pseudo_weight):
    return np.concatenate([np.ones(n_lab), np.full(n_pseudo, float(pseudo_weight))])


def self_train(fac: HeadFactory, y_true, lab, unl, p, rule, *, tau=None, counts=None,
               rng=None, tag=()):
    """Run the rounds of one selection rule; returns (list of Round, final training set
    (idx into all pixels, labels, weights))."""
    y_lab = y_true[lab]
    acc_idx, acc_y = np.zeros(0, np.int64), np.zeros(0, np.int64)
    rounds: list[Round] = []
    n_rounds = 0 if rule is None else int(p["rounds"])
    for r in range(n_rounds):
        head, phi = fac.fit(np.concatenate([lab, unl[acc_idx]]), np.concatenate([y_lab, acc_y]),
                            _weights(len(lab), len(acc_idx), p["pseudo_weight"]),
                            (*tag, r, "round"))
        logit = head.decision(phi[unl])
        prob = sigmoid(logit)
        yhat = (logit > 0).astype(np.int64)
        conf = np.maximum(prob, 1 - prob)
        hc = conf >= p["tau_high"]
        cand_idx = np.zeros(0, np.int64)
        infl = np.zeros(0)
        if rule == "conf":
            sel = conf >= tau
            low = sel & ~hc
            n_cand = int(low.sum())
        else:
            cand = (conf >= p["band_low"]) & ~hc
            cand_idx = np.flatnonzero(cand)
            n_cand = len(cand_idx)
            if rule == "ia":
                # refit on L + HC so that grad L_lab is not just the regulariser (spec)
                h2, phi2 = fac.fit(np.concatenate([lab, unl[hc]]),
                                   np.concatenate([y_lab, yhat[hc]]),
                                   _weights(len(lab), int(hc.sum()), p["pseudo_weight"]),
                                   (*tag, r, "influence"))
                infl = h2.influence(phi2[lab], y_lab, phi2[unl[cand_idx]], yhat[cand_idx])
                order = np.argsort(infl, kind="stable")
                order = order[infl[order] < 0][: int(np.floor(p["ia_cap"] * n_cand))]
                pick = cand_idx[order]
            elif rule == "random":
                k = min(int(counts[r]), n_cand)
                pick = rng.choice(cand_idx, size=k, replace=False)
            elif rule == "oracle":
                right = cand_idx[yhat[cand_idx] == y_true[unl[cand_idx]]]
                k = min(int(counts[r]), len(right))
                pick = rng.choice(right, size=k, replace=False)
            else:
                raise ValueError(f"unknown selection rule {rule!r}")
            low = np.zeros(len(unl), dtype=bool)
            low[pick] = True
            sel = hc | low
        acc_idx = np.flatnonzero(sel)
        acc_y = yhat[acc_idx]
        rounds.append(Round(acc_idx, acc_y, low[acc_idx], np.abs(logit[acc_idx]),
                            int(hc.sum()), n_cand, cand_idx, yhat[cand_idx], infl))
    train_set = (np.concatenate([lab, unl[acc_idx]]), np.concatenate([y_lab, acc_y]),
                 _weights(len(lab), len(acc_idx), p["pseudo_weight"]))
    return rounds, train_set
