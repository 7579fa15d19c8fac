"""A mediator = featuriser + intent predictor + decision policy (the spec's stand-in for an LLM).

- Featuriser: hashed character 1-4-grams with word-boundary markers (scikit-learn's
  ``char_wb`` analyser pads each word with spaces) plus word unigrams, 2^13 dimensions,
  L2-normalised rows.
- Intent predictor: one multinomial logistic regression for the action and one per slot type
  (its values plus "none"); the predicted intent is the action plus the action's required
  slots, each the most probable non-"none" value of its slot type (INFERRED).
- Confidence c = the minimum predicted probability of the action and its required slots.
- Decision policy (t_exec, t_conf, t_clar): execute if c >= t_exec, confirm if
  t_conf <= c < t_exec, clarify if t_clar <= c < t_conf, decline otherwise.
"""

from __future__ import annotations

import numpy as np

from .world import ACTION_SLOTS, ACTIONS, N_VALUES, SLOT_TYPES

EXECUTE, CONFIRM, CLARIFY, DECLINE = 0, 1, 2, 3
DECISIONS = ("execute", "confirm", "clarify", "decline")
BURDEN = np.array([0.0, 0.5, 1.0, 1.0])       # the spec's cognitive burden per decision
# required[a, j]: action a needs slot type j
REQUIRED = np.array([[t in ACTION_SLOTS[a] for t in SLOT_TYPES] for a in ACTIONS])


_GOLD = np.uint64(0x9E3779B97F4A7C15)   # Fibonacci hashing multiplier
_WORD_TAG = np.uint64(0x5BD1E9955BD1E995)


def _padded_words(texts):
    """Flat buffer of every word padded with one space each side (word-boundary markers),
    with the utterance, padded-word index and position of each character."""
    buf = np.frombuffer("\n".join(texts).encode("ascii"), dtype=np.uint8)
    word = (buf != ord(" ")) & (buf != ord("\n"))
    edges = np.diff(np.concatenate([[0], word.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    row = np.cumsum(buf == ord("\n"))[starts] if starts.size else np.zeros(0, np.int64)
    plen = ends - starts + 2
    off = np.concatenate([[0], np.cumsum(plen)])
    out = np.full(int(off[-1]), ord(" "), dtype=np.uint8)
    wid = np.repeat(np.arange(starts.size), plen)
    pos = np.arange(out.size) - off[wid]
    inner = (pos >= 1) & (pos <= plen[wid] - 2)
    out[inner] = buf[starts[wid[inner]] + pos[inner] - 1]
    return out, row, wid, pos, plen


def ngram_codes(texts):
    """(utterance index, 64-bit code) of every char 1-4-gram of every space-padded word (the
    n-grams of scikit-learn's ``char_wb`` analyser) and of every word unigram."""
    buf, row, wid, pos, plen = _padded_words(texts)
    rows, codes = [], []
    b = buf.astype(np.uint64)
    for n in range(1, 5):
        ok = pos + n <= plen[wid]
        idx = np.flatnonzero(ok)
        code = np.full(idx.size, np.uint64(n) << np.uint64(40))
        for k in range(n):
            code |= b[idx + k] << np.uint64(8 * k)
        rows.append(row[wid[idx]])
        codes.append(code)
    # word unigrams: a polynomial hash of the padded word, tagged apart from the n-grams
    powers = np.uint64(131) ** pos.astype(np.uint64)
    if buf.size:
        h = np.add.reduceat(b * powers, np.concatenate([[0], np.cumsum(plen)[:-1]]))
    else:
        h = np.zeros(0, np.uint64)
    rows.append(row)
    codes.append(h ^ _WORD_TAG)
    return np.concatenate(rows), np.concatenate(codes)


def featurise(texts, n_bits: int = 13):
    """Hashed char 1-4-grams (word-boundary padded) + word unigrams in 2^n_bits dimensions,
    counts, L2-normalised rows (an empty utterance is a zero row). CSR matrix."""
    import scipy.sparse as sp

    n, dim = len(texts), 1 << n_bits
    rows, codes = ngram_codes(texts)
    cols = ((codes * _GOLD) >> np.uint64(64 - n_bits)).astype(np.int64)
    keys, counts = np.unique(rows * dim + cols, return_counts=True)
    r, c = keys // dim, keys % dim
    val = counts.astype(np.float64)
    norm = np.sqrt(np.bincount(r, weights=val * val, minlength=n))
    val /= norm[r]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=n))])
    return sp.csr_matrix((val, c, indptr), shape=(n, dim))


HEAD_SIZES = (len(ACTIONS),) + tuple(N_VALUES[t] + 1 for t in SLOT_TYPES)


def _softmax_blocks(z):
    out, o = np.empty_like(z), 0
    for k in HEAD_SIZES:
        b = z[:, o:o + k]
        e = np.exp(b - b.max(axis=1, keepdims=True))
        out[:, o:o + k] = e / e.sum(axis=1, keepdims=True)
        o += k
    return out


def _targets(action, slots):
    """Class index of every head in the concatenated output (action, then each slot type
    with class 0 = none)."""
    offs = np.concatenate([[0], np.cumsum(HEAD_SIZES)[:-1]])
    y = np.column_stack([action] + [slots[:, j] + 1 for j in range(len(SLOT_TYPES))])
    return y + offs


class IntentPredictor:
    """Multinomial logistic regressions for the action and for each slot type (values plus
    "none"), trained jointly: the loss is the sum of the six heads' mean cross-entropies plus
    l2/2 ||W||^2, minimised with mini-batch Adam (icml26.npoptim) for a fixed number of steps
    (INFERRED optimiser; scikit-learn's solvers cost ~50 CPU-s per model here)."""

    def __init__(self, l2=1e-5, lr=0.1, steps=200, batch=512, log_every=25, seed=0):
        self.l2, self.lr, self.steps, self.batch = l2, lr, steps, batch
        self.log_every, self.seed = log_every, seed

    def loss(self, x, action, slots):
        """Sum over heads of the mean cross-entropy plus the L2 term (for tests and logs)."""
        p = _softmax_blocks(self._logits(x))
        y = _targets(action, slots)
        ce = -np.log(np.take_along_axis(p, y, axis=1)).sum(axis=1).mean()
        return float(ce + 0.5 * self.l2 * ((self.W_ ** 2).sum()))

    def _logits(self, x):
        return np.asarray(x @ self.W_) + self.b_

    def fit(self, x, action, slots):
        """``steps`` Adam steps on mini-batches drawn by passes over shuffled rows (the same
        number of steps for every predictor, whatever its training-set size); the mean
        mini-batch loss of each block of ``log_every`` steps is kept in ``loss_curve_``.

        Lazy Adam (INFERRED, for the CPU budget): a step updates, and decays the moments of,
        only the weight rows of the features present in its mini-batch (as TensorFlow's
        LazyAdam); the L2 term acts on those rows too. The bias is updated every step. With
        every feature present in every batch this is plain Adam with coupled L2 (tested).
        """
        import scipy.sparse as sp

        rng = np.random.default_rng(self.seed)
        n, d = x.shape
        K = int(sum(HEAD_SIZES))
        f = np.float32          # training precision (the budget); prediction in float64
        x = sp.csr_matrix(x, dtype=f)
        W, b = np.zeros((d, K), f), np.zeros(K, f)
        mW, vW, mb, vb = np.zeros((d, K), f), np.zeros((d, K), f), np.zeros(K, f), np.zeros(K, f)
        b1, b2, eps = 0.9, 0.999, 1e-8
        y = _targets(action, slots)
        self.loss_curve_, block = [], []
        order, pos = rng.permutation(n), 0
        mark, remap = np.zeros(d, bool), np.zeros(d, np.int64)
        for t in range(1, self.steps + 1):
            if pos >= n:
                order, pos = rng.permutation(n), 0
            idx = order[pos:pos + self.batch]
            pos += self.batch
            xb = x[idx]
            mark[:] = False
            mark[xb.indices] = True
            cols = np.flatnonzero(mark)              # the features present in the batch
            remap[cols] = np.arange(cols.size)
            xc = sp.csr_matrix((xb.data, remap[xb.indices], xb.indptr),
                               shape=(len(idx), cols.size))
            Wc = W[cols]
            p = _softmax_blocks(xc @ Wc + b)
            yb = y[idx]
            rows = np.arange(len(idx))[:, None]
            block.append(-np.log(p[rows, yb]).sum(axis=1).mean())
            g = p
            g[rows, yb] -= 1.0
            g /= len(idx)
            gW = xc.T.tocsr() @ g
            gW += f(self.l2) * Wc
            gb = g.sum(axis=0)
            step = f(self.lr / (1.0 - b1 ** t))
            c2 = f(np.sqrt(1.0 - b2 ** t))
            m = mW[cols]
            m *= f(b1)
            m += f(1.0 - b1) * gW
            v = vW[cols]
            v *= f(b2)
            gW *= gW
            v += f(1.0 - b2) * gW
            mW[cols], vW[cols] = m, v
            v = np.sqrt(v)
            v /= c2
            v += f(eps)
            m *= step
            m /= v
            Wc -= m
            W[cols] = Wc
            mb[:] = b1 * mb + (1.0 - b1) * gb
            vb[:] = b2 * vb + (1.0 - b2) * gb * gb
            b -= step * mb / (np.sqrt(vb) / c2 + f(eps))
            if len(block) == self.log_every:
                self.loss_curve_.append(float(np.mean(block)))
                block = []
        if block:
            self.loss_curve_.append(float(np.mean(block)))
        W, b = W.astype(np.float64), b.astype(np.float64)
        self.W_, self.b_ = W, b
        return self

    def proba(self, x):
        p, out, o = _softmax_blocks(self._logits(x)), [], 0
        for k in HEAD_SIZES:
            out.append(p[:, o:o + k])
            o += k
        return out

    def predict(self, x):
        """(action (n,), slot values (n, 5) with -1 where the action needs none,
        confidence (n,))."""
        probs = self.proba(x)
        pa = probs[0]
        action = pa.argmax(axis=1)
        conf = pa[np.arange(len(action)), action]
        slots = np.full((len(action), len(SLOT_TYPES)), -1, dtype=np.int64)
        for j in range(len(SLOT_TYPES)):
            ps = probs[1 + j][:, 1:]                 # values only: the action requires one
            v = ps.argmax(axis=1)
            need = REQUIRED[action, j]
            slots[need, j] = v[need]
            conf = np.where(need, np.minimum(conf, ps[np.arange(len(v)), v]), conf)
        return action, slots, conf


def decide(conf, t_exec, t_conf, t_clar):
    """The threshold policy: execute / confirm / clarify / decline (0..3)."""
    conf = np.asarray(conf)
    return np.where(conf >= t_exec, EXECUTE,
                    np.where(conf >= t_conf, CONFIRM,
                             np.where(conf >= t_clar, CLARIFY, DECLINE))).astype(np.int8)


def turn_metrics(decision, action_ok, intent_ok) -> dict:
    """The spec's per-turn averages: task accuracy, intent preservation (IP), cognitive burden
    (CB), hallucinated mediation (HM) and the normalised decision entropy."""
    acts = decision <= CONFIRM
    freq = np.bincount(decision, minlength=4) / max(len(decision), 1)
    nz = freq[freq > 0]
    return {"acc": float(action_ok.mean()),
            "ip": float((acts & intent_ok).mean()),
            "cb": float(BURDEN[decision].mean()),
            "hm": float((acts & ~intent_ok).mean()),
            "entropy": float(-(nz * np.log(nz)).sum() / np.log(4))}
