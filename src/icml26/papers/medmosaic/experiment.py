"""Stages of medmosaic: prepare (render and featurise the benchmark), train (fit the systems and
answer the test items), evaluate (score the answers; the data card of each split).

A run is (system, setting, benchmark seed). Per (setting, seed) the test split and the
training split come from two different derived seeds (disjoint generators); every system of a
seed is trained on the same training split and answers the same test items. The CASCADE reuses
the seed's AUDIO-CLS and TEXT-ONLY fits, as the spec's fallbacks say.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import bench
from . import models as M
from .audio import SR
from .scoring import score

SPLITS = ("test", "train")


def P(cfg):
    return cfg["params"]


def _snr(cfg, setting):
    return tuple((cfg["settings"][setting] or {}).get("heart_snr_db", [0.0, 15.0]))


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Every (setting, seed, split): clips, items and features, from a seed derived from
    (paper, "benchmark", setting, seed, split) only (independent of sharding)."""
    from icml26.grid import runs

    out = {}
    sizes = {"test": int(P(cfg)["n_test_per_type"]), "train": int(P(cfg)["n_train_per_type"])}
    for setting, seed in sorted({(r.setting, r.seed) for r in runs(cfg)}):
        for split in SPLITS:
            g = np.random.default_rng(derive_seed(cfg["paper"], "benchmark", setting, seed,
                                                  split))
            arrays = bench.build_split(g, sizes[split], _snr(cfg, setting))
            for k, v in arrays.items():
                out[f"{setting}/{seed}/{split}/{k}"] = v
    return out


def split_of(data, setting, seed, split) -> dict[str, np.ndarray]:
    prefix = f"{setting}/{seed}/{split}/"
    return {k[len(prefix):]: v for k, v in data.items() if k.startswith(prefix)}


def _mlp_params(cfg):
    p = P(cfg)
    return {k: p[k] for k in ("max_iter", "max_extensions", "alpha", "lr", "batch_size",
                              "val_fraction", "patience", "audio_hidden", "e2e_hidden")}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    """Fit the systems a (setting, seed) needs once, then store each run's answers to the
    test items (``<run>/pred``; the spec's per-item predictions) and its fit record."""
    p = P(cfg)
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    groups: dict[tuple, list] = {}
    for r in runs:
        groups.setdefault((r.setting, r.seed), []).append(r)
    for (setting, seed), group in groups.items():
        methods = {r.method for r in group}
        tr, te = split_of(data, setting, seed, "train"), split_of(data, setting, seed, "test")
        preds, fits = {}, {}
        if methods & {"text-only", "audio-cls", "cascade"}:
            preds["text-only"] = M.TextOnly(C=float(p["logreg_C"])).fit(tr).predict(te)
        if methods & {"audio-cls", "cascade"}:
            ac = M.AudioCls(_mlp_params(cfg), derive_seed(cfg["paper"], "audio-cls", setting,
                                                          seed) % 2 ** 31).fit(tr)
            preds["audio-cls"] = ac.predict(te, preds["text-only"])
            fits["audio-cls"] = fits["cascade"] = ac.fit_
        if "cascade" in methods:
            preds["cascade"] = M.Cascade(int(p["window"])).predict(te, preds["audio-cls"],
                                                                     preds["text-only"])
        if "e2e-mlp" in methods:
            e2 = M.E2EMLP(_mlp_params(cfg), derive_seed(cfg["paper"], "e2e-mlp", setting,
                                                        seed) % 2 ** 31).fit(tr)
            preds["e2e-mlp"] = e2.predict(te)
            fits["e2e-mlp"] = e2.fit_
        if "oracle" in methods:
            preds["oracle"] = M.oracle(te)
        for r in group:
            state[f"{r.key}/pred"] = np.asarray(preds[r.method]).astype(str)
            fit = fits.get(r.method)
            for k in ("best_epoch", "epochs_run", "epoch_cap", "val_acc"):
                state[f"{r.key}/fit_{k}"] = np.asarray(np.nan if fit is None else fit[k])
            if fit is not None:
                curves.append({**r.as_dict(), "step": fit["epochs_run"],
                               "metric": "val_acc", "value": fit["val_acc"]})
    return state, curves


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    out = []
    cards: dict[tuple, dict] = {}
    for r in runs:
        te = split_of(data, r.setting, r.seed, "test")
        if (r.setting, r.seed) not in cards:
            cards[(r.setting, r.seed)] = data_card(cfg, data, r.setting, r.seed)
        row = score(te, state[f"{r.key}/pred"])
        for k in ("best_epoch", "epochs_run", "epoch_cap", "val_acc"):
            row[k] = float(state[f"{r.key}/fit_{k}"])
        row.update(cards[(r.setting, r.seed)])
        out.append(row)
    return out


def data_card(cfg, data, setting, seed) -> dict[str, float]:
    """Sizes per split, items per answer class in the test split, and the measured premises
    (answer balance, LONG targets outside the reasoner's window, ASR word accuracy)."""
    row = {}
    for split in SPLITS:
        s = split_of(data, setting, seed, split)
        types = s["item_type"].astype(str)
        row[f"card_{split}_items"] = float(len(types))
        row[f"card_{split}_clips"] = float(len(s["clip_site"]))
        row[f"card_{split}_audio_min"] = float(s["n_samples"]) / SR / 60
        for t in bench.TYPES:
            row[f"card_{split}_{t}"] = float(np.sum(types == t))
    te = split_of(data, setting, seed, "test")
    types, ans = te["item_type"].astype(str), te["item_answer"].astype(str)
    site = te["item_site"].astype(str)
    for t in bench.TYPES:
        for a in sorted(set(ans[types == t])):
            row[f"card_count_{t}_{a}"] = float(np.sum((types == t) & (ans == a)))
    # balance: the largest answer share within each (type, question form) minus 1/k
    for t, k in (("T1", 4), ("T2", 3), ("T3", 6), ("T5", 6)):
        shares = [np.mean(ans[(types == t) & (site == s)] == a)
                  for s in set(site[types == t])
                  for a in set(ans[(types == t) & (site == s)])]
        row[f"card_max_share_excess_{t}"] = float(np.max(shares) - 1.0 / k)
    long_ = (types == "T3") & (te["item_context"].astype(str) == "long")
    row["card_long_target_outside_window"] = float(
        np.mean(te["item_target_from_end"][long_] > int(P(cfg)["window"])))
    row["card_asr_word_acc"] = asr_word_accuracy(te)
    return row


def asr_word_accuracy(split) -> float:
    """Share of T5 clips without artifact whose transcript holds the symptom word exactly
    once and no other symptom (a check of the cascade's front end on clean speech)."""
    words = M.transcripts(split)
    types, art = split["item_type"].astype(str), split["item_artifact"].astype(str)
    idx = np.flatnonzero((types == "T5") & (art == "none"))
    if not len(idx):
        return float("nan")
    ok = [M.reason_t5(words.get(int(split["item_clip"][i]), []), 10 ** 6)
          == str(split["item_answer"][i]) for i in idx]
    return float(np.mean(ok))
