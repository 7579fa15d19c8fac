"""Stages of multihal: the benchmark of each seed (prepare: its data card), one language model
per (model size, seed) answering every test row under every condition (train), the per-run
metrics (evaluate).

A run is (method, setting, seed): the method is the answering condition (vanilla QA, KG-RAG
with curated paths, KG-RAG with the unfiltered mined pool, the spec's random-path variant, the
tail-copy oracle), the setting is the model size. All methods of a (size, seed) read the same
trained model and the same benchmark (paired comparison); the benchmark derives from
(paper, seed) only and the model from (paper, size, seed), so results do not depend on how the
runs are sharded (up to float rounding of the stacked kernels). Everything is computed in
``train`` (torch imported lazily there) and stored as state arrays; ``evaluate`` is numpy.
"""

from __future__ import annotations

import math

import numpy as np

from icml26.seeding import derive_seed, torch_device

from . import benchmark as B
from .scoring import expected_and_greedy, question_scores

METHOD_ROWS = {"vanilla": "vanilla", "kg-rag": "curated", "kg-rag-unfiltered": "unfiltered",
               "kg-rag-spec-random": "spec-random", "oracle": "curated"}
SCORES = ("semsim", "entail", "consist")
MODEL_METRICS = ("fact_recall", "train_loss_final", "n_params")


def bench(cfg: dict, seed: int) -> B.Benchmark:
    """The benchmark of a seed: a function of (paper, seed) and the params only."""
    return B.build(cfg["params"], derive_seed(cfg["paper"], "benchmark", int(seed)))


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each seed's data card (counts), so that data.npz records what was built."""
    out = {}
    for seed in cfg["seeds"]:
        card = B.data_card(bench(cfg, seed))
        out[f"card/{seed}/names"] = np.array(list(card))
        out[f"card/{seed}/values"] = np.array(list(card.values()), dtype=float)
    return out


def summarise_rows(b: B.Benchmark, rows: list, expected: dict, greedy: dict,
                   qmass: np.ndarray | None = None) -> dict:
    """Means over rows: overall (T = 1 expectation and greedy), per language, and the
    entailment breakdowns (seen / unseen persons, hop count, seen persons by hop count,
    question type and type x language, gold answer a training target or not). ``qmass``:
    per row the probability of answering with the question's own entity."""
    qs = [b.questions[r["q"]] for r in rows]
    lang = np.array([q["lang"] for q in qs], dtype=int)
    seen = np.array([q["seen"] for q in qs], dtype=bool)
    hops = np.array([q["hops"] for q in qs], dtype=int)
    chain = np.array([q["chain"] for q in qs], dtype=int)
    counts = B.target_counts(b)
    freq = np.array([counts.get(b.tok(q["gold"]), 0) for q in qs], dtype=int)

    def mean(v, sel=None):
        v = v if sel is None else v[sel]
        return float(v.mean()) if len(v) else math.nan

    out = {"n_rows": float(len(rows))}
    for s in SCORES:
        out[s] = mean(expected[s])
        out[f"{s}_greedy"] = mean(greedy[s])
        for l in range(b.n_languages):
            out[f"{s}_L{l}"] = mean(expected[s], lang == l)
    e = expected["entail"]
    out["entail_seen"] = mean(e, seen)
    out["entail_unseen"] = mean(e, ~seen)
    for h in range(1, int(b.params["kg"]["max_hops"]) + 1):
        out[f"entail_{h}hop"] = mean(e, hops == h)
        out[f"entail_seen_{h}hop"] = mean(e, seen & (hops == h))
    # second round: the per-type breakdown (1-hop vs 2-hop gap of KG-RAG) and its mechanism
    for c in range(len(b.chains)):
        out[f"type{c}_entail"] = mean(e, chain == c)
        out[f"type{c}_entail_seen"] = mean(e, (chain == c) & seen)
        out[f"type{c}_entail_unseen"] = mean(e, (chain == c) & ~seen)
        for l in range(b.n_languages):
            out[f"type{c}_entail_L{l}"] = mean(e, (chain == c) & (lang == l))
        if qmass is not None:
            out[f"type{c}_qmass"] = mean(qmass, chain == c)
            out[f"type{c}_qmass_seen"] = mean(qmass, (chain == c) & seen)
    # by how often the gold answer is a training target (the copy mechanism's coverage)
    for k, (_, lo, hi) in enumerate(B.FREQ_BINS):
        sel = (freq >= lo) & (freq <= hi)
        out[f"goldfreq{k}_share"] = mean(sel.astype(float))
        out[f"goldfreq{k}_entail"] = mean(e, sel)
        for h in range(1, int(b.params["kg"]["max_hops"]) + 1):
            out[f"goldfreq{k}_entail_{h}hop"] = mean(e, sel & (hops == h))
            out[f"goldfreq{k}_share_{h}hop"] = mean(sel[hops == h].astype(float))
    return out


def answer_all(cfg, b: B.Benchmark, probs_fn) -> dict[str, dict]:
    """Metrics of every method on one benchmark; ``probs_fn(prompts) -> (n, V)``."""
    ev = cfg["params"]["eval"]
    qscores = question_scores(b, float(ev["neighbour_weight"]), int(ev["consistency_hops"]))
    by_cond = {c: [r for r in b.rows if r["cond"] == c] for c in B.CONDITIONS}
    probs = {}
    for c, rows in by_cond.items():
        probs[c] = probs_fn([B.row_prompt(b, r) for r in rows])
    out = {}
    for method in cfg["methods"]:
        rows = by_cond[METHOD_ROWS[method]]
        if method == "oracle":  # copies the path's tail entity
            p = np.zeros((len(rows), b.vocab_size))
            p[np.arange(len(rows)), [b.tok(r["path"][-1]) for r in rows]] = 1.0
        else:
            p = probs[METHOD_ROWS[method]]
        qi = np.array([r["q"] for r in rows], dtype=int)
        expected, greedy = {}, {}
        for s in SCORES:
            expected[s], greedy[s] = expected_and_greedy(p, qscores[s][qi]) if len(rows) else (
                np.zeros(0), np.zeros(0))
        qmass = p[np.arange(len(rows)), [b.tok(b.questions[i]["person"]) for i in qi]] \
            if len(rows) else np.zeros(0)
        out[method] = summarise_rows(b, rows, expected, greedy, qmass)
    return out


def fact_recall(b: B.Benchmark, probs_fn) -> float:
    """Greedy accuracy of completing every fact sentence of the training text (e1 rel -> e2):
    the spec's premise that seen persons' facts are stored parametrically."""
    prompts, targets = B.fact_probes(b)
    if not len(targets):
        return math.nan
    p = probs_fn([list(x) for x in prompts])
    return float((p.argmax(axis=1) == targets).mean())


def _train_size(cfg, data, setting: str, seeds: list[int]):
    """Train one model per seed of a size (stacked), then answer every row."""
    from . import lm as LM

    p = cfg["params"]["lm"]
    dev = torch_device(cfg["device"])
    benches = [bench(cfg, s) for s in seeds]
    arrays = [B.train_arrays(b, int(p["context"])) for b in benches]
    vocab = {b.vocab_size for b in benches}
    if len(vocab) != 1:  # the vocabulary size depends on the params only
        raise RuntimeError(f"vocabulary sizes differ across seeds: {sorted(vocab)}")
    config = LM.gpt_config(vocab.pop(), p, cfg["settings"][setting])
    stack = LM.StackedGPT(config, [derive_seed(cfg["paper"], "init", setting, s) for s in seeds],
                          dev)
    curves = LM.train(stack, [a for a, _ in arrays], [m for _, m in arrays],
                      [derive_seed(cfg["paper"], "batches", setting, s) for s in seeds], p, dev)
    n_params = float(sum(v[0].numel() for v in stack.params.values()))
    results = []
    for r, b in enumerate(benches):
        def probs_fn(prompts, r=r):
            return LM.next_token_probs(stack, r, prompts, dev)

        per_method = answer_all(cfg, b, probs_fn)
        model = {"fact_recall": fact_recall(b, probs_fn),
                 "train_loss_final": curves[r][-1][1] if curves[r] else math.nan,
                 "n_params": n_params}
        results.append((per_method, model, curves[r]))
    return results


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    """One stacked training per model size over the seeds of the shard; every method of a
    (size, seed) reads that model."""
    by_size: dict[str, list[int]] = {}
    for run in runs:
        by_size.setdefault(run.setting, [])
        if run.seed not in by_size[run.setting]:
            by_size[run.setting].append(run.seed)
    results = {}
    for setting, seeds in by_size.items():
        for seed, res in zip(seeds, _train_size(cfg, data, setting, seeds), strict=True):
            results[(setting, seed)] = res
    state, rows = {}, []
    for run in runs:
        per_method, model, curve = results[(run.setting, run.seed)]
        for k, v in {**per_method[run.method], **model}.items():
            state[f"{run.key}/{k}"] = np.array(float(v))
        rows += [{**run.as_dict(), "step": int(s), "metric": "train_loss", "value": float(v)}
                 for s, v in curve]
    return state, rows


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    out = []
    for run in runs:
        prefix = run.key + "/"
        out.append({k[len(prefix):]: float(v) for k, v in state.items()
                    if k.startswith(prefix)})
    return out
