"""The evaluated systems (stand-ins for the paper's 13 audio / multimodal LLMs).

Each fits on a training split and answers a test split's items with one string per item
(``predict``). A split is the dict of arrays that bench.build_split returns.

- TEXT-ONLY: multinomial logistic regression on the bag of words of question + options
  (the "LLM without audio" control).
- AUDIO-CLS: MLP (64-32) on clip descriptors, trained on the joint (body site, condition,
  rate category) label of the physiological clips; answers T1, T2 and T4 through the label map
  (T4 step three: the lookup of its own condition and rate answers); T3, T5: the text prior.
- CASCADE: energy-segmented syllables decoded to the nearest vowel template (cosine on the
  harmonic profile), syllable pairs mapped to words, then a rule-based reasoner that sees only
  the last ``window`` words; physiological questions go to AUDIO-CLS.
- E2E-MLP: MLP (128-64) on [clip descriptors || mean frame features of the two halves ||
  one-hot question type || multi-hot option words || multi-hot question content words],
  cross-entropy over the answer space; no transcription.
- ORACLE: the generator's ground truth.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import audio as A
from .bench import ANSWERS, CONDITIONS, NEXT_STEPS, RATES, next_step

ANSWER_INDEX = {a: i for i, a in enumerate(ANSWERS)}
QTYPES = ("T1", "T2", "T3", "T4-0", "T4-1", "T4-2", "T5")
UNK = "<unk>"


def qtype(split) -> np.ndarray:
    t = split["item_type"].astype(str)
    turn = split["item_turn"]
    return np.where(t == "T4", np.char.add("T4-", turn.astype(str)), t)


def tokens(split) -> list[list[str]]:
    """The words of each item's question and options (what a text-only reader sees)."""
    out = []
    for q, opts in zip(split["item_question"], split["item_options"], strict=True):
        out.append(str(q).split() + [str(o) for o in opts if str(o)])
    return out


def choose(scores: np.ndarray, split) -> np.ndarray:
    """Answer per item: the option with the highest score (open-ended T5: any answer)."""
    out = []
    for s, opts in zip(scores, split["item_options"], strict=True):
        opts = [str(o) for o in opts if str(o)]
        if not opts:
            out.append(ANSWERS[int(np.argmax(s))])
        else:
            out.append(opts[int(np.argmax([s[ANSWER_INDEX[o]] for o in opts]))])
    return np.asarray(out)


def _scores(proba: np.ndarray, classes) -> np.ndarray:
    """Class probabilities placed on the ANSWERS axis (answers never seen in training: 0)."""
    out = np.zeros((proba.shape[0], len(ANSWERS)))
    for j, c in enumerate(classes):
        out[:, ANSWER_INDEX[str(c)]] = proba[:, j]
    return out


# --- TEXT-ONLY --------------------------------------------------------------------------------
class TextOnly:
    def __init__(self, C: float = 1.0, max_iter: int = 1000):
        self.C = C
        self.max_iter = max_iter

    def _bow(self, split):
        toks = tokens(split)
        x = np.zeros((len(toks), len(self.vocab_)))
        for i, ws in enumerate(toks):
            for w in ws:
                j = self.vocab_.get(w)
                if j is not None:
                    x[i, j] += 1.0
        return x

    def fit(self, split):
        from sklearn.linear_model import LogisticRegression

        self.vocab_ = {w: i for i, w in enumerate(sorted({w for ws in tokens(split)
                                                          for w in ws}))}
        self.model_ = LogisticRegression(C=self.C, max_iter=self.max_iter)
        self.model_.fit(self._bow(split), split["item_answer"].astype(str))
        return self

    def scores(self, split) -> np.ndarray:
        return _scores(self.model_.predict_proba(self._bow(split)), self.model_.classes_)

    def predict(self, split) -> np.ndarray:
        return choose(self.scores(split), split)


# --- MLPs with early stopping and the grid-edge rule on their epoch cap ------------------------
def fit_mlp(x, y, hidden, params, seed):
    """sklearn MLPClassifier with early stopping on a 10% validation hold-out. Grid-edge rule
    on the epoch cap: if the best validation epoch is the cap's last epoch, refit with the cap
    doubled, at most ``max_extensions`` times. Returns (model, fit info)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    cap = int(params["max_iter"])
    for ext in range(int(params["max_extensions"]) + 1):
        model = MLPClassifier(hidden_layer_sizes=tuple(hidden), alpha=float(params["alpha"]),
                              learning_rate_init=float(params["lr"]),
                              batch_size=int(params["batch_size"]), max_iter=cap,
                              early_stopping=True,
                              validation_fraction=float(params["val_fraction"]),
                              n_iter_no_change=int(params["patience"]), random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x, y)
        best = int(np.argmax(model.validation_scores_)) + 1
        new_cap = extended_cap(best, cap, ext, int(params["max_extensions"]))
        if new_cap == cap:
            break
        cap = new_cap
    return model, {"best_epoch": best, "epochs_run": int(model.n_iter_), "epoch_cap": cap,
                   "val_acc": float(np.max(model.validation_scores_))}


def extended_cap(best_epoch: int, cap: int, extensions_done: int, max_extensions: int) -> int:
    """Grid-edge rule on an epoch cap: a best epoch on the cap's last epoch doubles the cap
    (at most ``max_extensions`` times); otherwise the cap stays."""
    if best_epoch >= cap and extensions_done < max_extensions:
        return 2 * cap
    return cap


class _Standard:
    def fit(self, x):
        self.mu_, self.sd_ = x.mean(0), x.std(0) + 1e-6
        return self

    def __call__(self, x):
        return (x - self.mu_) / self.sd_


# --- AUDIO-CLS ----------------------------------------------------------------------------------
def physio_clips(split) -> np.ndarray:
    return np.flatnonzero(np.isin(split["clip_site"].astype(str), ("heart", "lung")))


class AudioCls:
    def __init__(self, params: dict, seed: int):
        self.params = params
        self.seed = seed

    def fit(self, split):
        idx = physio_clips(split)
        x = split["clip_desc"][idx].astype(float)
        self.std_ = _Standard().fit(x)
        y = np.char.add(np.char.add(split["clip_site"][idx].astype(str), "|"),
                        np.char.add(np.char.add(split["clip_cond"][idx].astype(str), "|"),
                                    split["clip_rate"][idx].astype(str)))
        self.model_, self.fit_ = fit_mlp(self.std_(x), y, self.params["audio_hidden"],
                                         self.params, self.seed)
        self.classes_ = [str(c).split("|") for c in self.model_.classes_]
        return self

    def clip_scores(self, split) -> dict[int, np.ndarray]:
        """Per physiological clip: answer scores (ANSWERS axis) marginalised from the joint
        label, for the clip's own body site (the question names it)."""
        idx = physio_clips(split)
        proba = self.model_.predict_proba(self.std_(split["clip_desc"][idx].astype(float)))
        out = {}
        for row, c in zip(proba, idx, strict=True):
            site = str(split["clip_site"][c])
            s = np.zeros(len(ANSWERS))
            for p, (cs, cond, rate) in zip(row, self.classes_, strict=True):
                if cs == site:
                    s[ANSWER_INDEX[cond]] += p
                    s[ANSWER_INDEX[rate]] += p
            out[int(c)] = s
        return out

    def predict(self, split, fallback: np.ndarray) -> np.ndarray:
        """T1, T2, T4 through the label map (T4 step three: the lookup of this model's own
        condition and rate answers for the clip); T3, T5: ``fallback`` (the text prior)."""
        scores = self.clip_scores(split)
        pred = np.array(fallback, dtype=object)
        types = split["item_type"].astype(str)
        phys = np.flatnonzero(np.isin(types, ("T1", "T2", "T4")))
        s = np.stack([scores[int(split["item_clip"][i])] for i in phys])
        sub = {k: v[phys] for k, v in split.items() if k.startswith("item_")}
        pred[phys] = choose(s, sub)
        # T4 step three from this model's own step one and two answers on the same clip
        for i in np.flatnonzero((types == "T4") & (split["item_turn"] == 2)):
            chain = split["item_chain"][i]
            same = np.flatnonzero((split["item_chain"] == chain) & (types == "T4"))
            by_turn = {int(split["item_turn"][j]): j for j in same}
            site = str(split["item_site"][i])
            c = CONDITIONS[site].index(pred[by_turn[0]])
            r = RATES[site].index(pred[by_turn[1]])
            pred[i] = next_step(c, r)
        return pred.astype(str)


# --- CASCADE ------------------------------------------------------------------------------------
_TEMPLATES = A.VOWELS / np.linalg.norm(A.VOWELS, axis=1, keepdims=True)
_WORD_OF = {pair: w for w, pair in A.LEXICON.items()}


def decode_vowels(prof: np.ndarray) -> np.ndarray:
    """Nearest vowel template by cosine on the harmonics present (NaN: above Nyquist)."""
    ok = ~np.isnan(prof)
    out = np.zeros(len(prof), dtype=int)
    for i, (p, m) in enumerate(zip(prof, ok, strict=True)):
        t = _TEMPLATES[:, m]
        cos = (t @ p[m]) / (np.linalg.norm(t, axis=1) * np.linalg.norm(p[m]) + 1e-12)
        out[i] = int(np.argmax(cos))
    return out


def transcripts(split) -> dict[int, list[str]]:
    """Per speech clip: its words. A word group of exactly two syllables is looked up by its
    vowel pair; any other group, or a pair that is no word, is <unk>."""
    vowels = decode_vowels(split["syl_prof"].astype(float))
    out: dict[int, list[str]] = {}
    clips, words = split["syl_clip"], split["syl_word"]
    start = 0
    n = len(clips)
    while start < n:
        c = int(clips[start])
        end = start
        while end < n and clips[end] == c:
            end += 1
        groups: dict[int, list[int]] = {}
        for j in range(start, end):
            groups.setdefault(int(words[j]), []).append(int(vowels[j]))
        out[c] = [_WORD_OF.get(tuple(g), UNK) if len(g) == 2 else UNK
                  for _, g in sorted(groups.items())]
        start = end
    return out


def reason_t3(words: list[str], symptom: str, options: list[str], window: int) -> str | None:
    """The medication said first after the last mention of ``symptom`` among the last
    ``window`` words; None when the window has no such pair among the options."""
    seen = words[-window:]
    if symptom not in seen:
        return None
    k = len(seen) - 1 - seen[::-1].index(symptom)
    for w in seen[k + 1:]:
        if w in A.MEDICATIONS:
            return w if w in options else None
    return None


def reason_t5(words: list[str], window: int) -> str | None:
    """Every symptom word heard (in order, once each), space-joined; None when none."""
    found = list(dict.fromkeys(w for w in words[-window:] if w in A.SYMPTOMS))
    return " ".join(found) if found else None


class Cascade:
    def __init__(self, window: int):
        self.window = window

    def predict(self, split, physio_pred: np.ndarray, fallback: np.ndarray) -> np.ndarray:
        """T1, T2, T4: ``physio_pred`` (AUDIO-CLS); T3, T5: the reasoner on the transcript,
        ``fallback`` (the text prior) where it finds nothing."""
        words = transcripts(split)
        types = split["item_type"].astype(str)
        pred = np.array(physio_pred, dtype=object)
        for i in np.flatnonzero(np.isin(types, ("T3", "T5"))):
            w = words.get(int(split["item_clip"][i]), [])
            if types[i] == "T3":
                symptom = str(split["item_question"][i]).split()[-1]
                opts = [str(o) for o in split["item_options"][i] if str(o)]
                ans = reason_t3(w, symptom, opts, self.window)
            else:
                ans = reason_t5(w, self.window)
            pred[i] = fallback[i] if ans is None else ans
        return pred.astype(str)


# --- E2E-MLP ------------------------------------------------------------------------------------
def e2e_inputs(split) -> np.ndarray:
    """[clip descriptors || two half means || one-hot question type || multi-hot options over
    the answer space || multi-hot question words over the 24-word vocabulary]."""
    clip = split["item_clip"]
    qt = qtype(split)
    onehot = (qt[:, None] == np.asarray(QTYPES)[None, :]).astype(float)
    opts = np.zeros((len(clip), len(ANSWERS)))
    qw = np.zeros((len(clip), len(A.WORDS)))
    word_index = {w: i for i, w in enumerate(A.WORDS)}
    for i, (q, os_) in enumerate(zip(split["item_question"], split["item_options"],
                                     strict=True)):
        for o in os_:
            if str(o):
                opts[i, ANSWER_INDEX[str(o)]] = 1.0
        for w in str(q).split():
            if w in word_index:
                qw[i, word_index[w]] = 1.0
    return np.concatenate([split["clip_desc"][clip].astype(float),
                           split["clip_halves"][clip].astype(float), onehot, opts, qw], axis=1)


class E2EMLP:
    """The audio part of the input is standardised; the text part is kept as 0/1."""

    def __init__(self, params: dict, seed: int):
        self.params = params
        self.seed = seed

    def fit(self, split):
        x = e2e_inputs(split)
        self.n_audio_ = split["clip_desc"].shape[1] + split["clip_halves"].shape[1]
        self.std_ = _Standard().fit(x[:, :self.n_audio_])
        self.model_, self.fit_ = fit_mlp(self._x(x), split["item_answer"].astype(str),
                                         self.params["e2e_hidden"], self.params, self.seed)
        return self

    def _x(self, x):
        return np.concatenate([self.std_(x[:, :self.n_audio_]), x[:, self.n_audio_:]], axis=1)

    def predict(self, split) -> np.ndarray:
        proba = self.model_.predict_proba(self._x(e2e_inputs(split)))
        return choose(_scores(proba, self.model_.classes_), split)


def oracle(split) -> np.ndarray:
    return split["item_answer"].astype(str)


__all__ = ["TextOnly", "AudioCls", "Cascade", "E2EMLP", "oracle", "NEXT_STEPS"]
