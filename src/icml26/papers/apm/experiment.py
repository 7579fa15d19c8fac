"""Stages of the apm paper.

Runs are (mediator, setting, seed) with mediators M1..M5 and one setting. Per seed, one intent
world (languages, lexicons, templates), its training utterances and its test set are built from
derive_seed(paper, ..., seed) only, so every mediator of a seed sees the same data (paired).

- prepare: the severity grid and noise classes (the worlds are cheap and rebuilt per seed).
- train: per seed, builds the world and data, featurises, fits the three intent predictors the
  grid needs (clean M1; generic-augmented M2, shared by M4 and M5; accessibility-augmented M3),
  and runs every mediator (predictor + its decision policy) over every test condition. The
  state keeps per turn: the condition cell, the decision, the predicted action and slots and
  the correctness flags (the spec's evaluate output). The curves are the sensitivity curves
  (every metric per noise class and severity, averaged over languages), the training loss per
  epoch and the data-card counts.
- evaluate: the per-run metrics at the claims' severity (0.3) from the per-turn state.

Training all predictors of a seed inside one job (shard_by: []) shares the featurised test set
(the spec's "featurising ~54k noisy test utterances, shared").
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import mediator as med
from . import noise, world

# The spec's five mediators: (intent predictor, thresholds (t_exec, t_conf, t_clar)).
MEDIATORS = {
    "M1": ("clean", (0.7, 0.4, 0.15)),
    "M2": ("generic", (0.7, 0.4, 0.15)),
    "M3": ("access", (0.7, 0.4, 0.15)),
    "M4": ("generic", (0.3, 0.15, 0.0)),
    "M5": ("generic", (0.9, 0.7, 0.3)),
}
CLAIM_SEVERITY = 0.3
AXES = ("acc", "ip", "cb", "hm", "entropy")


def P(cfg):
    return cfg["params"]


def severities(cfg) -> np.ndarray:
    s = np.array(sorted(set(float(v) for v in P(cfg)["severities"])))
    if s[0] != 0.0:
        raise ValueError("apm: the severity grid must start at 0 (the clean condition)")
    return s


def sev_step(s: float) -> int:
    """Severity as the curves' integer step (percent)."""
    return int(round(100 * s))


def rng_of(cfg, *parts):
    return np.random.default_rng(derive_seed(cfg["paper"], *parts))


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"severities": severities(cfg), "classes": np.array(noise.CLASSES)}


# data ---------------------------------------------------------------------------------------
class LangData:
    """One language of one seed: lexicon, nearest words, rendered clean utterances."""

    def __init__(self, lang, action, slots, template):
        self.lang = lang
        self.vocab = lang.lexicon()
        self.index = {w: i for i, w in enumerate(self.vocab)}
        func = lang.function_words()
        self.action, self.slots, self.template = action, slots, template
        ids, utt, isf = [], [], []
        for k in range(len(action)):
            words, _ = world.render(lang, action[k], slots[k], template[k])
            ids += [self.index[w] for w in words]
            utt += [k] * len(words)
            isf += [w in func for w in words]
        self.ids, self.utt = np.array(ids, dtype=np.int64), np.array(utt, dtype=np.int64)
        self.is_func = np.array(isf, dtype=bool)
        self.n = len(action)
        self._nearest = None

    @property
    def nearest(self):
        if self._nearest is None:
            self._nearest = world.nearest_words(self.vocab)
        return self._nearest

    def texts(self, cls=None, s=0.0, rng=None, rows=None):
        """Texts of (a subset of) the utterances, clean or under one noise class."""
        ids, utt, isf, n = self.ids, self.utt, self.is_func, self.n
        if rows is not None:
            keep = np.isin(utt, rows)
            remap = np.full(self.n, -1)
            remap[rows] = np.arange(len(rows))
            ids, utt, isf, n = ids[keep], remap[utt[keep]], isf[keep], len(rows)
            order = np.argsort(utt, kind="stable")
            ids, utt, isf = ids[order], utt[order], isf[order]
        if cls is None:
            return noise.join(self.vocab, ids, utt, n)
        return noise.apply(cls, self.vocab, ids, utt, isf, s, self.nearest, rng, n)


def build_seed(cfg, seed):
    """The world of a seed and its training and test data, per language."""
    p = P(cfg)
    langs = world.make_world(rng_of(cfg, "world", seed), int(p["n_languages"]))
    train, test = [], []
    for li, lang in enumerate(langs):
        a, s, t = world.sample_intents(rng_of(cfg, "train-intents", seed, li),
                                       int(p["n_train"]), cover=True)
        train.append(LangData(lang, a, s, t))
        a, s, t = world.sample_intents(rng_of(cfg, "test-intents", seed, li), int(p["n_test"]))
        test.append(LangData(lang, a, s, t))
    return langs, train, test


def training_set(cfg, seed, kind, train):
    """Texts and labels of one predictor's training set: clean utterances, plus n_aug noisy
    copies per utterance for the augmented predictors (generic: s ~ U[0, generic_max];
    access: one of the four accessibility classes uniformly, s ~ U[0, access_max])."""
    p = P(cfg)
    texts, acts, slots = [], [], []
    for li, d in enumerate(train):
        texts += d.texts()
        acts.append(d.action)
        slots.append(d.slots)
        if kind == "clean":
            continue
        r = rng_of(cfg, "augment", kind, seed, li)
        for _ in range(int(p["n_aug"])):
            if kind == "generic":
                s = r.uniform(0.0, float(p["generic_aug_max"]), d.n)
                texts += d.texts("generic", s, r)
            else:
                s = r.uniform(0.0, float(p["access_aug_max"]), d.n)
                cls = r.integers(0, len(noise.ACCESS), d.n)
                out = [""] * d.n
                for c, name in enumerate(noise.ACCESS):
                    rows = np.flatnonzero(cls == c)
                    if rows.size:
                        for k, txt in zip(rows, d.texts(name, s[rows], r, rows), strict=True):
                            out[k] = txt
                texts += out
            acts.append(d.action)
            slots.append(d.slots)
    return texts, np.concatenate(acts), np.concatenate(slots)


def test_conditions(cfg):
    """(class index, severity index) of every test condition: the clean one (class -1,
    severity 0) once, then every class at every severity > 0."""
    sev = severities(cfg)
    conds = [(-1, 0)]
    conds += [(c, k) for c in range(len(noise.CLASSES)) for k in range(1, len(sev))]
    return conds


def test_set(cfg, seed, test):
    """Texts of every test condition of a seed, with per-turn language, condition index and
    gold intent; and the fraction of noisy words that are lexicon words per (class, severity)."""
    sev = severities(cfg)
    texts, lang_of, cond_of, gold_a, gold_s = [], [], [], [], []
    real = {}
    for li, d in enumerate(test):
        for ci, (c, k) in enumerate(test_conditions(cfg)):
            if c < 0:
                tx = d.texts()
            else:
                r = rng_of(cfg, "test-noise", seed, li, noise.CLASSES[c], sev_step(sev[k]))
                tx = d.texts(noise.CLASSES[c], float(sev[k]), r)
                words = [w for t in tx for w in t.split()]
                hits = sum(w in d.index for w in words)
                prev = real.get((c, k), (0, 0))
                real[(c, k)] = (prev[0] + hits, prev[1] + len(words))
            texts += tx
            lang_of.append(np.full(d.n, li))
            cond_of.append(np.full(d.n, ci))
            gold_a.append(d.action)
            gold_s.append(d.slots)
    return (texts, np.concatenate(lang_of), np.concatenate(cond_of), np.concatenate(gold_a),
            np.concatenate(gold_s), real)


# train --------------------------------------------------------------------------------------
def cell_rows(cfg, lang_of, cond_of):
    """Per (class, severity): turn masks per language (the clean condition serves severity 0
    of every class)."""
    sev = severities(cfg)
    conds = test_conditions(cfg)
    n_lang = int(lang_of.max()) + 1
    out = {}
    for c in range(len(noise.CLASSES)):
        for k in range(len(sev)):
            ci = 0 if k == 0 else conds.index((c, k))
            out[(c, k)] = [(cond_of == ci) & (lang_of == li) for li in range(n_lang)]
    return out


def cell_metrics(decision, action_ok, intent_ok, masks):
    """The spec's metrics per language cell, averaged over languages."""
    per = [med.turn_metrics(decision[m], action_ok[m], intent_ok[m]) for m in masks]
    return {ax: float(np.mean([r[ax] for r in per])) for ax in AXES}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    p = P(cfg)
    sev = severities(cfg)
    state, curves = {}, []
    for seed in sorted({r.seed for r in runs}):
        mine = [r for r in runs if r.seed == seed]
        langs, train_d, test_d = build_seed(cfg, seed)
        texts, lang_of, cond_of, gold_a, gold_s, real = test_set(cfg, seed, test_d)
        x_test = med.featurise(texts, int(p["n_bits"]))
        preds, losses = {}, {}
        for kind in dict.fromkeys(MEDIATORS[r.method][0] for r in mine):
            tx, ya, ys = training_set(cfg, seed, kind, train_d)
            model = med.IntentPredictor(l2=float(p["l2"]), lr=float(p["lr"]),
                                        steps=int(p["steps"]), batch=int(p["batch"]),
                                        log_every=int(p["log_every"]),
                                        seed=derive_seed(cfg["paper"], "fit", kind, seed))
            model.fit(med.featurise(tx, int(p["n_bits"])), ya, ys)
            preds[kind] = model.predict(x_test)
            losses[kind] = (model.loss_curve_, len(tx))
        masks = cell_rows(cfg, lang_of, cond_of)
        card = data_card(cfg, train_d, test_d, real, {k: v[1] for k, v in losses.items()},
                         len(texts))
        for run in mine:
            kind, thr = MEDIATORS[run.method]
            act, slots, conf = preds[kind]
            action_ok = act == gold_a
            intent_ok = action_ok & (slots == gold_s).all(axis=1)
            decision = med.decide(conf, *thr)
            k = run.key
            state[f"{k}/decision"] = decision
            state[f"{k}/action_ok"] = action_ok
            state[f"{k}/intent_ok"] = intent_ok
            state[f"{k}/pred_action"] = act.astype(np.int8)
            state[f"{k}/pred_slots"] = slots.astype(np.int8)
            state[f"{k}/confidence"] = conf.astype(np.float32)
            state[f"{k}/lang"] = lang_of.astype(np.int8)
            state[f"{k}/cond"] = cond_of.astype(np.int16)
            for (c, si), m in masks.items():
                row = cell_metrics(decision, action_ok, intent_ok, m)
                for ax in AXES:
                    curves.append({**run.as_dict(), "step": sev_step(sev[si]),
                                   "metric": f"{ax}/{noise.CLASSES[c]}", "value": row[ax]})
            for e, v in enumerate(losses[kind][0]):
                curves.append({**run.as_dict(), "step": min((e + 1) * int(p["log_every"]),
                                                            int(p["steps"])),
                               "metric": "train_loss",
                               "value": float(v)})
            for name, v in card.items():
                curves.append({**run.as_dict(), "step": 0, "metric": f"card/{name}",
                               "value": float(v)})
    return state, curves


def data_card(cfg, train_d, test_d, real, n_rows, n_test_texts) -> dict:
    """Counts of one seed's benchmark (the report's data card)."""
    out = {"languages": len(train_d), "train_clean_per_language": train_d[0].n,
           "test_intents_per_language": test_d[0].n, "test_conditions": len(test_conditions(cfg)),
           "test_utterances": n_test_texts}
    for kind, n in n_rows.items():
        out[f"train_rows/{kind}"] = n
    for a, name in enumerate(world.ACTIONS):
        out[f"train_action/{name}"] = int(sum((d.action == a).sum() for d in train_d))
        out[f"test_action/{name}"] = int(sum((d.action == a).sum() for d in test_d))
    for j, t in enumerate(world.SLOT_TYPES):
        seen = set()
        for d in train_d:
            seen |= set(d.slots[:, j][d.slots[:, j] >= 0].tolist())
        out[f"values_seen_in_train/{t}"] = len(seen)
    for li, d in enumerate(train_d):
        out[f"lexicon_size/L{li + 1}"] = len(d.vocab)
        out[f"templates_seen_in_train/L{li + 1}"] = len(
            {(int(a), int(k)) for a, k in zip(d.action, d.template, strict=True)})
    for (c, k), (hits, n) in real.items():
        if abs(severities(cfg)[k] - CLAIM_SEVERITY) < 1e-9:
            out[f"real_word_rate/{noise.CLASSES[c]}"] = hits / max(n, 1)
    return out


# evaluate ------------------------------------------------------------------------------------
def claim_index(cfg) -> int:
    sev = severities(cfg)
    hit = np.flatnonzero(np.isclose(sev, CLAIM_SEVERITY))
    if not hit.size:
        raise ValueError(f"apm: the severity grid {sev.tolist()} lacks the claims' "
                         f"{CLAIM_SEVERITY}")
    return int(hit[0])


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Metrics at s = 0.3 per noise class (averaged over languages), their means over the four
    accessibility classes, the overestimation gap, the HM spread and the mean decision
    entropy over every (class, severity) cell."""
    k3 = claim_index(cfg)
    conds = test_conditions(cfg)
    out = []
    for run in runs:
        k = run.key
        dec, aok, iok = state[f"{k}/decision"], state[f"{k}/action_ok"], state[f"{k}/intent_ok"]
        lang, cond = state[f"{k}/lang"].astype(int), state[f"{k}/cond"].astype(int)
        n_lang = int(lang.max()) + 1
        row = {}
        for c, name in enumerate(noise.CLASSES):
            ci = conds.index((c, k3))
            per = [med.turn_metrics(dec[m], aok[m], iok[m])
                   for m in ((cond == ci) & (lang == li) for li in range(n_lang))]
            for ax in ("acc", "ip", "cb", "hm"):
                row[f"{ax}_{name}"] = float(np.mean([r[ax] for r in per]))
            asks = [float(np.mean(dec[(cond == ci) & (lang == li)] >= med.CLARIFY))
                    for li in range(n_lang)]
            row[f"ask_{name}"] = float(np.mean(asks))
        for ax in ("acc", "ip", "cb", "hm"):
            row[f"{ax}_access"] = float(np.mean([row[f"{ax}_{c}"] for c in noise.ACCESS]))
        row["gap_access"] = row["acc_access"] - row["ip_access"]
        clean = cond == 0
        row["ip_clean"] = float(np.mean([med.turn_metrics(dec[clean & (lang == li)],
                                                          aok[clean & (lang == li)],
                                                          iok[clean & (lang == li)])["ip"]
                                         for li in range(n_lang)]))
        cur = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                     & (curves["seed"] == run.seed)]
        ent = cur[cur["metric"].str.startswith("entropy/")]["value"].to_numpy(dtype=float)
        row["entropy_mean"] = float(ent.mean()) if ent.size else float("nan")
        out.append(row)
    return out


def hm_ratio(hm) -> float:
    """max/min of HM across classes; +inf when the smallest is 0 and the largest is not
    (a real ratio above any threshold), NaN when every HM is 0 (no spread to measure)."""
    hm = np.asarray(hm, dtype=float)
    lo, hi = hm.min(), hm.max()
    if lo > 0:
        return float(hi / lo)
    return float("inf") if hi > 0 else float("nan")
