"""Claims 1-4 of the spec, thresholds exactly as written, plus the oracle sanity check.

Statistics (fixed before looking at results): every claim compares methods on the same model
and benchmark per seed, so each part is ``check_mean`` of the per-seed paired difference (95%
t-interval over seeds). Scores are the expectation under sampling at T = 1 (the official
code's decoding); the greedy values are in the notes.
1. per (model size, language) cell: KG-RAG (curated) - vanilla >= 0.10 (semantic similarity),
   >= 0.15 (entailment), >= 0.10 (consistency); 3 x languages x sizes parts.
2. per size: (KG-RAG - vanilla entailment on unseen-person questions) - (the same on
   seen-person questions) >= 0.2.
3. per size: curated KG-RAG entailment - unfiltered KG-RAG entailment >= 0.15 (rows of every
   language pooled: "averaged over languages"). The unfiltered pool is MultiHal's mined pool
   (notes from the official code); the spec's random-path reading is reported in the note.
4. per size: vanilla entailment on 2-hop minus 1-hop questions about seen persons < 0.
Sanity: the tail-copy oracle scores entailment 1 on every curated row (every seed, size).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.claims import Claim, check_every, check_mean

THRESHOLDS = {"semsim": 0.10, "entail": 0.15, "consist": 0.10}
NAMES = {"semsim": "semantic similarity", "entail": "entailment", "consist": "consistency"}


def per_seed(metrics: pd.DataFrame, setting: str, method: str, metric: str) -> pd.Series:
    rows = metrics[(metrics["setting"] == setting) & (metrics["method"] == method)]
    if metric not in rows:
        return pd.Series(dtype=float)
    return rows.set_index("seed")[metric].sort_index().astype(float)


def paired(metrics, setting, a, b, metric_a, metric_b=None) -> pd.Series:
    """Per-seed a[metric_a] - b[metric_b] over the seeds both ran, indexed by seed."""
    x = per_seed(metrics, setting, a, metric_a)
    y = per_seed(metrics, setting, b, metric_b or metric_a)
    seeds = x.index.intersection(y.index)
    return x[seeds] - y[seeds]


def languages(metrics: pd.DataFrame) -> list[int]:
    return sorted(int(c.split("_L")[1]) for c in metrics.columns if c.startswith("entail_L"))


def _m(series: pd.Series) -> str:
    return f"{series.mean():.3f}" if len(series) else "n/a"


def type_index(cfg: dict, name: str) -> int | None:
    """Index of the question type ``name`` (e.g. "spouse_of") in the config, or None."""
    names = [".".join(t) for t in cfg["params"]["kg"]["question_types"]]
    return names.index(name) if name in names else None


def hop_gap_note(cfg: dict, metrics: pd.DataFrame, sizes: list[str]) -> str:
    """Why curated KG-RAG is worse on 1-hop than on 2-hop questions (second round): computed
    from the per-type and gold-answer-coverage metrics."""
    if "goldfreq0_entail" not in metrics:
        return ""
    from .benchmark import FREQ_BINS

    sp = type_index(cfg, "spouse_of")
    parts = []
    for s in sizes:
        def m(method, col, s=s):
            return _m(per_seed(metrics, s, method, col).dropna())
        bins = ", ".join(
            f"{name}: share of 1-hop / 2-hop rows {m('kg-rag', f'goldfreq{k}_share_1hop')} / "
            f"{m('kg-rag', f'goldfreq{k}_share_2hop')}, entailment "
            f"{m('kg-rag', f'goldfreq{k}_entail_1hop')} / {m('kg-rag', f'goldfreq{k}_entail_2hop')}"
            for k, (name, _, _) in enumerate(FREQ_BINS))
        txt = (f"{s}: KG-RAG entailment 1-hop {m('kg-rag', 'entail_1hop')} vs 2-hop "
               f"{m('kg-rag', 'entail_2hop')}; by how often the gold answer is a training "
               f"target, in times ({bins})")
        if sp is not None:
            txt += (f"; spouse_of KG-RAG unseen {m('kg-rag', f'type{sp}_entail_unseen')}, seen "
                    f"{m('kg-rag', f'type{sp}_entail_seen')} (vanilla seen "
                    f"{m('vanilla', f'type{sp}_entail_seen')}), probability of answering with "
                    f"the question's own person on seen spouse_of rows: KG-RAG "
                    f"{m('kg-rag', f'type{sp}_qmass_seen')}, vanilla "
                    f"{m('vanilla', f'type{sp}_qmass_seen')}")
        parts.append(txt)
    return ("1-hop vs 2-hop gap of KG-RAG (second round; not a code bug, see FIDELITY): "
            "names are single tokens with tied embeddings, so a model copies the path's tail "
            "well only if that token was often a training target; 2-hop answers (countries, "
            "head-office cities) are frequent targets, 1-hop answers include rare ones "
            "(organisations, persons) and never-trained ones (an unseen person's spouse is "
            "another unseen person); seen persons' spouse_of paths name a person whose stored "
            "spouse is the question entity. " + "; ".join(parts))


def check(cfg: dict, metrics: pd.DataFrame, curves: pd.DataFrame) -> list[Claim]:
    out = []
    n_seeds = int(metrics["seed"].nunique()) if len(metrics) else 0
    sizes = list(cfg["settings"])
    langs = languages(metrics)

    # 1 ------------------------------------------------------------------------------------
    c = Claim("1-kg-rag-beats-vanilla",
              "in every (language, model size) cell, the mean over seeds of curated KG-RAG minus "
              "vanilla QA is >= 0.10 for semantic similarity, >= 0.15 for entailment and "
              ">= 0.10 for consistency", ">=", THRESHOLDS, n_seeds=n_seeds)
    notes = []
    for s in sizes:
        for l in langs:
            for metric, thr in THRESHOLDS.items():
                c.add(f"{metric} {s} L{l}",
                      check_mean(paired(metrics, s, "kg-rag", "vanilla", f"{metric}_L{l}"),
                                 ">=", thr))
        greedy = ", ".join(
            f"{NAMES[m]} {_m(paired(metrics, s, 'kg-rag', 'vanilla', m + '_greedy'))}"
            for m in THRESHOLDS)
        notes.append(f"{s}: greedy-decoding deltas (all languages) {greedy}")
    c.note = "; ".join(notes) + ". " + hop_gap_note(cfg, metrics, sizes)
    out.append(c)

    # 2 ------------------------------------------------------------------------------------
    c = Claim("2-gain-where-knowledge-missing",
              "the entailment gain of KG-RAG over vanilla on unseen-person questions exceeds "
              "the gain on seen-person questions by >= 0.2 (both model sizes)", ">=", 0.2,
              n_seeds=n_seeds)
    notes = []
    for s in sizes:
        unseen = paired(metrics, s, "kg-rag", "vanilla", "entail_unseen")
        seen = paired(metrics, s, "kg-rag", "vanilla", "entail_seen")
        idx = unseen.index.intersection(seen.index)
        c.add(s, check_mean(unseen[idx] - seen[idx], ">=", 0.2))
        notes.append(f"{s}: gain unseen {_m(unseen)}, gain seen {_m(seen)}; vanilla entailment "
                     f"seen {_m(per_seed(metrics, s, 'vanilla', 'entail_seen'))}, unseen "
                     f"{_m(per_seed(metrics, s, 'vanilla', 'entail_unseen'))}; fact recall of "
                     f"the training text {_m(per_seed(metrics, s, 'vanilla', 'fact_recall'))}")
    c.note = "; ".join(notes)
    out.append(c)

    # 3 ------------------------------------------------------------------------------------
    c = Claim("3-path-quality",
              "curated KG-RAG entailment >= unfiltered KG-RAG entailment + 0.15 (averaged over "
              "languages, both model sizes); unfiltered = MultiHal's mined pool (every "
              "question-to-answer path of the shortest hop count)", ">=", 0.15,
              n_seeds=n_seeds)
    notes = []
    for s in sizes:
        c.add(s, check_mean(paired(metrics, s, "kg-rag", "kg-rag-unfiltered", "entail"),
                            ">=", 0.15))
        share = (1.0 - per_seed(metrics, s, "kg-rag", "n_rows")
                 / per_seed(metrics, s, "kg-rag-unfiltered", "n_rows"))
        notes.append(f"{s}: curated - spec's random path (the spec's reading of 'unfiltered', "
                     f"not the paper's pool) "
                     f"{_m(paired(metrics, s, 'kg-rag', 'kg-rag-spec-random', 'entail'))}; "
                     f"share of mined rows the judge prunes {_m(share)}")
    c.note = ("Every mined path ends at the answer (MultiHal's SPARQL pins the last object), so "
              "the unfiltered pool differs from the curated one only by coincidental paths. "
              + "; ".join(notes))
    out.append(c)

    # 4 ------------------------------------------------------------------------------------
    c = Claim("4-multihop-harder-without-kg",
              "vanilla entailment on 2-hop questions about seen persons is lower than on 1-hop "
              "questions about seen persons (both model sizes, mean over seeds)", "<", 0.0,
              n_seeds=n_seeds)
    notes = []
    for s in sizes:
        c.add(s, check_mean(paired(metrics, s, "vanilla", "vanilla", "entail_seen_2hop",
                                   "entail_seen_1hop"), "<", 0.0))
        notes.append(f"{s}: 1-hop {_m(per_seed(metrics, s, 'vanilla', 'entail_seen_1hop'))}, "
                     f"2-hop {_m(per_seed(metrics, s, 'vanilla', 'entail_seen_2hop'))}")
    c.note = "; ".join(notes)
    out.append(c)

    # sanity -------------------------------------------------------------------------------
    c = Claim("sanity-oracle",
              "the tail-copy oracle reaches entailment 1 on every curated row (curated paths "
              "are useful), every model size and seed", ">=", 1.0, category="sanity",
              n_seeds=n_seeds)
    oracle = metrics[metrics["method"] == "oracle"]
    if len(oracle):
        values = pd.Series(oracle["entail"].to_numpy(float),
                           index=[f"{s}/{d}" for s, d in zip(oracle["setting"], oracle["seed"],
                                                               strict=True)])
        c.add("value", check_every(values, ">=", 1.0 - 1e-12))
    else:
        c.add("value", check_every(pd.Series([np.nan]), ">=", 1.0))
    out.append(c)
    return out
