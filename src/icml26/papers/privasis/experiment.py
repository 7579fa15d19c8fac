"""Stages of privasis: the benchmark per seed (prepare), sanitizers (train), scores (evaluate).

prepare builds, per seed, the training corpus (records, instructions, the decomposition
pipeline's gold tags and the one-pass corpus's tags, paragraph chunks), a validation set and
the vanilla and hard test sets. train fits each method's tagger on its corpus variant and
stores its tags on the test records (whole records, no chunking at test time); the rule
scrubber needs no training. evaluate scores the stored tags (numpy only: no torch import).
"""

from __future__ import annotations

import math
import time

import numpy as np

from icml26.seeding import rng as named_rng

from . import generator as gen

METHODS = ("proposed", "one-pass", "small-data", "rule-based", "attr-tagger")
SPLITS = ("train", "val", "vanilla", "hard")
TESTS = ("vanilla", "hard")
FIELDS = ("tok", "gold", "rec_off", "n_sent", "doc", "act", "values", "spans", "chunks")


def check_params(p) -> None:
    """What the schema cannot say."""
    from icml26.errors import ConfigError

    for key in ("sent_range", "hard_sent_range"):
        lo, hi = p[key]
        if lo > hi:
            raise ConfigError(f"privasis params.{key}: {p[key]} has min > max")
    if p["kernel"] % 2 == 0:
        raise ConfigError(f"privasis params.kernel: {p['kernel']} must be odd (same padding)")
    if p["arch"] == "transformer" and p["d_model"] % 4:
        raise ConfigError("privasis params.d_model: must be a multiple of 4 (4 heads)")
    if int(math.ceil(p["small_frac"] * p["n_train"])) < 1:
        raise ConfigError("privasis params.small_frac: the small-data corpus would be empty")


def _split_spec(p, split):
    n = {"train": p["n_train"], "val": p["n_val"], "vanilla": p["n_test"],
         "hard": p["n_hard"]}[split]
    hard = split == "hard"
    return (int(n), tuple(p["hard_sent_range"] if hard else p["sent_range"]),
            float(p["hard_distractor_weight"] if hard else 0.0))


def build_seed(p, paper: str, seed: int) -> dict:
    """All splits of one seed, as flat arrays keyed ``<split>/<field>``."""
    out = {}
    for split in SPLITS:
        n, rng_sent, dw = _split_spec(p, split)
        one_pass = (float(p["onepass_slope"]), float(p["onepass_cap"])) \
            if split == "train" else None
        sp = gen.build_split(named_rng(paper, "data", seed, split), n, rng_sent, dw,
                             float(p["keep_prob"]), int(p["max_chunk_tokens"]), one_pass)
        out.update({f"{split}/{k}": v for k, v in sp.items()})
    return out


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    p = cfg["params"]
    check_params(p)
    out = {}
    for seed in cfg["seeds"]:
        out.update({f"s{seed}/{k}": v for k, v in build_seed(p, cfg["paper"], seed).items()})
    return out


def split_of(data, seed, split) -> dict:
    pre = f"s{seed}/{split}/"
    return {k[len(pre):]: v for k, v in data.items() if k.startswith(pre)}


def small_chunks(split, frac: float) -> np.ndarray:
    """Chunks of the first ceil(frac x records) training records (a fixed rule)."""
    n_rec = int(math.ceil(frac * (len(split["rec_off"]) - 1)))
    return np.nonzero(split["chunks"][:, 0] < n_rec)[0]


def data_card_rows(p, data, seed) -> dict:
    """Numbers of the data card of one seed (curve rows of the proposed run)."""
    rows = {}
    for split in SPLITS:
        sp = split_of(data, seed, split)
        rows[f"{split}/records"] = len(sp["rec_off"]) - 1
        rows[f"{split}/tokens"] = len(sp["tok"])
        rows[f"{split}/mean_sentences"] = float(np.mean(sp["n_sent"]))
        if split == "train":
            rows["train/chunks"] = len(sp["chunks"])
            rows["train/small_data_records"] = int(math.ceil(p["small_frac"] * p["n_train"]))
            occ, miss = sp["onepass_counts"]
            rows["train/onepass_missed_share"] = miss / max(occ, 1)
            lk = 0
            for r in range(len(sp["rec_off"]) - 1):
                lk += len(gen.linked_removals(sp["act"][r]))
            rows["train/records_with_linked_removal"] = lk
        spans = sp["spans"]
        subj = spans[spans[:, 3] == gen.OWNER_SUBJECT]
        for c, name in enumerate(gen.CATEGORIES):
            rows[f"{split}/mentions/{name}"] = int((subj[:, 4] == c).sum())
            rows[f"{split}/remove/{name}"] = int((sp["act"][:, c] == gen.A_REMOVE).sum())
            rows[f"{split}/abstract/{name}"] = int((sp["act"][:, c] == gen.A_ABSTRACT).sum())
            rows[f"{split}/keep/{name}"] = int((sp["act"][:, c] == gen.A_KEEP).sum())
        rows[f"{split}/third_party_spans"] = int((spans[:, 3] == gen.OWNER_THIRD).sum())
        rows[f"{split}/public_spans"] = int((spans[:, 3] == gen.OWNER_PUBLIC).sum())
    return rows


def train(cfg: dict, data, runs) -> tuple[dict, list]:
    import torch

    from icml26.seeding import torch_device

    from . import metrics as met
    from . import rules
    from . import tagger as tg

    torch.set_num_threads(1)
    device = torch_device(cfg["device"])
    p = cfg["params"]
    state, curves = {}, []
    for run in runs:
        row = {"method": run.method, "setting": run.setting, "seed": run.seed}
        tr = split_of(data, run.seed, "train")
        tests = {t: split_of(data, run.seed, t) for t in TESTS + ("val",)}
        start = time.process_time()
        if run.method == "rule-based":
            preds = {t: rules.scrub_split(sp) for t, sp in tests.items()}
        else:
            allc = np.arange(len(tr["chunks"]))
            labels, chunk_idx, attribute = tr["gold"], allc, False
            if run.method == "one-pass":
                labels = tr["onepass"]
            elif run.method == "small-data":
                chunk_idx = small_chunks(tr, p["small_frac"])
            elif run.method == "attr-tagger":
                labels, attribute = tg.attribute_targets(tr), True
            model, losses, _ = tg.train_tagger(tr, labels, chunk_idx, p,
                                               run.rng_seed(cfg["paper"], "model"), device,
                                               n_steps=p["steps"], attribute=attribute)
            if not np.isfinite(losses).all():
                preds = None
            else:
                preds = {}
                for t, sp in tests.items():
                    out = tg.predict(model, sp, device, attribute=attribute)
                    preds[t] = (tg.attribute_to_tags(sp, out) if attribute
                                else out.astype(np.int8))
            every = int(p["curve_every"])
            for k in range(0, len(losses), every):
                curves.append({**row, "step": k + every, "metric": "train_loss",
                               "value": float(np.mean(losses[k:k + every]))})
            if run.method == "proposed":
                curves.append({**row, "step": 0, "metric": "n_params",
                               "value": float(tg.n_params(model))})
                # scale curve: the same model and steps on the first fraction of the records
                for frac in p["curve_fracs"]:
                    idx = small_chunks(tr, frac)
                    m2, _, _ = tg.train_tagger(tr, tr["gold"], idx, p,
                                               run.rng_seed(cfg["paper"], f"curve{frac}"),
                                               device, n_steps=p["steps"])
                    sc = met.score_split(tests["vanilla"], tg.predict(m2, tests["vanilla"],
                                                                      device))
                    curves.append({**row, "step": int(math.ceil(frac * p["n_train"])),
                                   "metric": "scale_success_vanilla",
                                   "value": float(np.mean([r["success"] for r in sc]))})
        if run.method == "proposed":
            for key, v in data_card_rows(p, data, run.seed).items():
                curves.append({**row, "step": 0, "metric": f"card/{key}", "value": float(v)})
        curves.append({**row, "step": 0, "metric": "cpu_s_train",
                       "value": time.process_time() - start})
        for t in TESTS + ("val",):
            n = len(tests[t]["tok"])
            state[f"{run.key}/{t}"] = (preds[t] if preds is not None
                                       else np.full(n, -1, dtype=np.int8))
    return state, curves


def _tercile_edges(n_sent) -> tuple[float, float]:
    return tuple(float(x) for x in np.quantile(n_sent, [1 / 3, 2 / 3]))


def evaluate(cfg: dict, data, runs, state, curves) -> list[dict]:
    from . import metrics as met

    p = cfg["params"]
    out = []
    for run in runs:
        row = {}
        for t in TESTS + ("val",):
            sp = split_of(data, run.seed, t)
            tags = state[f"{run.key}/{t}"]
            if (tags < 0).any():   # a failed (diverged) run: every metric NaN
                for k in ("success", "success_spec", "direct", "inference", "proximity",
                          "retention", "retention_third", "keep_retention"):
                    row[f"{k}_{t}"] = math.nan
                continue
            sc = met.score_split(sp, tags)
            f = {k: np.array([r[k] for r in sc], dtype=float) for k in
                 ("success", "success_spec", "direct", "inference", "proximity", "retention",
                  "retention_third", "keep_ok", "keep_attrs")}
            for k in ("success", "success_spec", "direct", "inference", "proximity",
                      "retention", "retention_third"):
                row[f"{k}_{t}"] = float(np.nanmean(f[k]))
            has = f["keep_attrs"] > 0
            row[f"keep_retention_{t}"] = float(f["keep_ok"][has].mean()) if has.any() \
                else math.nan
            if t == "vanilla":
                lo, hi = _tercile_edges(sp["n_sent"])
                terc = np.where(sp["n_sent"] <= lo, 1, np.where(sp["n_sent"] <= hi, 2, 3))
                for k in (1, 2, 3):
                    sel = terc == k
                    row[f"n_t{k}"] = float(sel.sum())
                    row[f"direct_t{k}"] = float(f["direct"][sel].mean()) if sel.any() \
                        else math.nan
                    row[f"success_t{k}"] = float(f["success"][sel].mean()) if sel.any() \
                        else math.nan
        row["n_train_records"] = float(
            math.ceil(p["small_frac"] * p["n_train"]) if run.method == "small-data"
            else p["n_train"] if run.method != "rule-based" else 0)
        out.append(row)
    return out
