"""Stages of telescope-perplexity: text per seed (prepare), language models + machine text +
detector scores (train), AUROC / TPR / cost (evaluate).

A run is (detector, setting, seed). A setting fixes the scorer (``generator``: white-box, S = G;
``reference``: black-box, a separately trained S), the human-text domain, how G samples the
machine text (``official``: the authors' T = 1.0 without nucleus; ``spec``: the spec's T = 0.9,
nucleus 0.95, a labelled variant) and, at full scale, an attack on the machine text.
Everything a seed needs (topic split, vocabulary, G, S with its checkpoints, P, the machine
text) derives from (paper, seed) only, so all detectors and
settings of a seed score the very same texts with the very same models (paired comparison),
and a train job that holds any subset of the runs of a seed rebuilds identical models:
results do not depend on sharding (default: one train job per seed). The scores come from one
shared forward pass per model and text set; for the cost claim each detector is also run end
to end (its own forward passes + statistic) under ``time.process_time`` on the first
``time_texts`` human and machine texts, and must reproduce the shared scores there.

The official measurement behind "the signature emerges early in pre-training" (the authors'
ablations/training/train_pythia_checkpoints.py) is run next to claim 4: checkpoints of the
*generator* G sample continuations (T = 0.7, nucleus 0.9, as there), and the fully trained
reference S scores their log TPPL (curves ``gen_ckpt_*`` of the black-box Telescope runs).
"""

from __future__ import annotations

import time

import numpy as np

from icml26.lm.corpus import load_text, provenance
from icml26.seeding import derive_seed
from icml26.seeding import rng as named_rng

from . import data as D
from .metrics import auroc, tpr_at_fpr

ROLES = {"generator": "G", "reference": "S", "performer": "P"}


def setting_of(cfg: dict, name: str) -> dict:
    s = cfg["settings"][name] or {}
    return {"scorer": s.get("scorer", "reference"), "domain": s.get("domain", "pydoc"),
            "attack": s.get("attack", "none"), "sampling": s.get("sampling", "official")}


def domains(cfg: dict) -> list[str]:
    """Domains of the LM training corpus: the params' list, plus every setting's domain."""
    out = list(cfg["params"].get("corpus_domains", ["pydoc"]))
    for name in cfg["settings"]:
        d = setting_of(cfg, name)["domain"]
        if d not in out:
            out.append(d)
    return out


def hist_edges(p: dict) -> np.ndarray:
    lo, hi, n = p["hist_edges"]
    return np.linspace(float(lo), float(hi), int(n) + 1)


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per seed: LM-training ids, unigram counts, vocabulary, held-out validation ids and the
    human passages of every domain (a seeded subset of ``n_texts``, or all if fewer)."""
    p, paper = cfg["params"], cfg["paper"]
    doms = domains(cfg)
    out: dict[str, np.ndarray] = {"python": np.array(provenance("")["python"])}
    for d in doms:  # provenance of the exact source text (Python version + SHA-256)
        src = "pydoc_topics" if d == "pydoc" else "stdlib_docstrings"
        prov = provenance(load_text(src))
        out[f"provenance/{d}/sha256"] = np.array(prov["sha256"])
        out[f"provenance/{d}/chars"] = np.array(int(prov["chars"]))
    for seed in cfg["seeds"]:
        train_ids, tok, human, held, _ = D.seed_corpus(
            doms, lambda d, s=seed: named_rng(paper, "split", s, d), int(p["vocab_size"]),
            float(p["holdout_frac"]), int(p["window"]), int(p["max_unk"]))
        k = f"s{seed}"
        out[f"{k}/train_ids"] = train_ids.astype(np.int32)
        out[f"{k}/unigram"] = np.bincount(train_ids, minlength=tok.vocab_size).astype(np.int64)
        out[f"{k}/vocab"] = np.array(tok.words)
        val = tok.encode(held[doms[0]])[: int(p["val_tokens"])]
        out[f"{k}/val_ids"] = val.astype(np.int32)
        for d, pas in human.items():
            n = int(p["n_texts"])
            r = named_rng(paper, "texts", seed, d)
            pick = np.sort(r.choice(len(pas), size=n, replace=False)) if len(pas) > n else \
                np.arange(len(pas))
            out[f"{k}/{d}/human"] = pas[pick].astype(np.int32)
            out[f"{k}/{d}/n_available"] = np.array(len(pas))
    return out


# ---------------------------------------------------------------------------------------------
def _arch(p: dict, role: str) -> dict:
    return p[{"G": "generator", "S": "scorer", "P": "performer"}[role]]


def _train_models(cfg, data, seed, needed, device=None, gen_ckpts=False):
    """G, and S (with checkpoints) / P if needed, for one seed: (models, {role: {fraction:
    state_dict}}, val curves), the models on ``device`` (None: the CPU). S keeps the
    checkpoints of ``ckpt_fracs``; G those of ``gen_ckpt.fracs`` if ``gen_ckpts`` (copies of
    the weights only: G's training is the same either way)."""
    from . import lms

    p, paper = cfg["params"], cfg["paper"]
    k = f"s{seed}"
    vocab = len(data[f"{k}/vocab"])
    ids, val = data[f"{k}/train_ids"].astype(np.int64), data[f"{k}/val_ids"].astype(np.int64)
    models, ckpts, curves = {}, {}, {}
    for role in ("G", "S", "P"):
        if role not in needed:
            continue
        arch = _arch(p, role)
        model = lms.build(vocab, arch, derive_seed(paper, "init", role, seed), device)
        fracs = {"S": p["ckpt_fracs"], "G": p["gen_ckpt"]["fracs"] if gen_ckpts else ()}.get(
            role, ())
        curve, saved = lms.fit(model, ids, arch, derive_seed(paper, "fit", role, seed),
                               val_ids=val, n_val=int(p["n_val"]), ckpt_fracs=fracs)
        models[role], curves[role] = model, curve
        if saved:
            ckpts[role] = saved
    return models, ckpts, curves


def _machine(cfg, data, seed, dom, gen_model, sampling="official"):
    """(human, machine) ids of a domain: machine = human prompt + G's continuation, sampled
    with the named ``params.sampling`` entry. Every sampling uses the same random stream (paired:
    only the temperature and nucleus differ)."""
    from . import lms

    p = cfg["params"]
    sp = p["sampling"][sampling]
    human = data[f"s{seed}/{dom}/human"].astype(np.int64)
    n_new = int(p["window"]) - int(p["prompt"])
    machine = lms.generate(gen_model, human[:, : int(p["prompt"])], n_new,
                           derive_seed(cfg["paper"], "generate", seed, dom),
                           float(sp["temperature"]), float(sp["top_p"]))
    return human, machine


def _gen_checkpoints(cfg, data, seed, dom, g_ckpts, models) -> list[tuple]:
    """The authors' emergence measurement (ablations/training/train_pythia_checkpoints.py): each
    checkpoint of the generator G continues the prompts of the first ``gen_ckpt.texts`` human
    passages (T and nucleus of ``gen_ckpt``), and the fully trained reference S scores the
    continuations' log TPPL. Rows (G step, fraction, mean log TPPL of the samples, mean log
    TPPL of the same passages' human continuations, AUROC of Telescope between the two,
    immediate-repeat rate of the samples)."""
    import copy

    import torch

    from . import detectors as det
    from . import lms

    p, paper = cfg["params"], cfg["paper"]
    gc, start = p["gen_ckpt"], int(p["prompt"])
    human = data[f"s{seed}/{dom}/human"].astype(np.int64)[: int(gc["texts"])]
    scorer = models["S"]
    dev = next(scorer.parameters()).device

    def tppl(ids):
        t = torch.as_tensor(ids, device=dev)
        return np.concatenate(_batched({"scorer": scorer}, ("scorer",), t, int(p["score_batch"]),
                                       lambda lps, c: det.log_tppl(lps["scorer"], c, start)
                                       .double().cpu().numpy()))

    h = tppl(human)
    model = copy.deepcopy(models["G"])
    steps = int(p["generator"]["steps"])
    rows = []
    for frac in sorted(g_ckpts):
        model.load_state_dict(g_ckpts[frac])
        model.eval()
        machine = lms.generate(model, human[:, :start], int(p["window"]) - start,
                               derive_seed(paper, "gen_ckpt", seed, dom, frac),
                               float(gc["temperature"]), float(gc["top_p"]))
        m = tppl(machine)
        rows.append((max(1, int(round(frac * steps))), frac, float(m.mean()), float(h.mean()),
                     auroc(h, m), D.repetition_rate(machine[:, start - 1:])))
    return rows


def _attack(cfg, data, seed, dom, attack, machine) -> np.ndarray:
    """Apply a setting's attack to the continuation of the machine text (same for every
    detector of the seed: its stream is (paper, seed, domain, attack))."""
    if attack == "none":
        return machine
    p = cfg["params"]
    start = int(p["prompt"])
    r = named_rng(cfg["paper"], "attack", seed, dom, attack)
    cont = machine[:, start:]
    if attack == "substitute":
        cont = D.substitute(cont, float(p["sub_frac"]), data[f"s{seed}/unigram"], r)
    elif attack == "shuffle":
        vocab = list(data[f"s{seed}/vocab"])
        ends = [vocab.index(t) for t in D.CLAUSE_ENDS if t in vocab]
        cont = D.shuffle_clauses(cont, ends, r)
    else:
        raise ValueError(f"telescope-perplexity: unknown attack {attack!r}; "
                         "allowed: none, substitute, shuffle")
    return np.concatenate([machine[:, :start], cont], axis=1)


def _aversion(log_tau: np.ndarray, tokens: np.ndarray, unigram: np.ndarray) -> float:
    """A = mean_i tau_i / mean_i u(s_i) over the scored human tokens."""
    u = unigram / unigram.sum()
    return float(np.exp(log_tau).mean() / u[tokens].mean())


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    """Per seed of the shard: train the models its runs need, sample the machine text, score
    every text with every detector of the shard (one shared forward pass per model and text
    set), time every detector end to end on a subset, and run the checkpoint analysis."""
    import torch

    from icml26.seeding import torch_device

    from . import detectors as det

    torch.set_num_threads(1)
    # models, token ids and scores on the device; text attacks, histograms and AUROC are
    # numpy. On a GPU, cpu_s (time.process_time) is host CPU time, not GPU time.
    dev = torch_device(cfg["device"])
    p = cfg["params"]
    start, batch = int(p["prompt"]), int(p["score_batch"])
    n_time, repeats = int(p["time_texts"]), int(p["time_repeats"])
    edges = hist_edges(p)
    state, curves = {}, []
    for seed in sorted({r.seed for r in runs}):
        seed_runs = [r for r in runs if r.seed == seed]
        sets = {r.setting: setting_of(cfg, r.setting) for r in seed_runs}
        needed = {"G"}
        if any(s["scorer"] == "reference" for s in sets.values()):
            needed.add("S")
        if any(det.DETECTORS[r.method].roles != ("scorer",) for r in seed_runs):
            needed.add("P")
        # the official emergence measurement needs G's checkpoints and the final S
        gen_doms = list(dict.fromkeys(
            s["domain"] for name, s in sets.items() if s["scorer"] == "reference"
            and s["attack"] == "none" and any(r.method == "Telescope" and r.setting == name
                                              for r in seed_runs)))
        c0 = time.process_time()
        models, ckpts, val_curves = _train_models(cfg, data, seed, needed, dev,
                                                  gen_ckpts=bool(gen_doms))
        c1 = time.process_time()
        unigram = data[f"s{seed}/unigram"]
        vocab = list(data[f"s{seed}/vocab"])
        marks = {"pipe": vocab.index("|") if "|" in vocab else -1, "unk": len(vocab) - 1}
        gen_rows = {d: _gen_checkpoints(cfg, data, seed, d, ckpts["G"], models)
                    for d in gen_doms}
        c2 = time.process_time()
        cpu_setting: dict[str, float] = {}

        def val_windows(seed):  # the validation ids in S's context (checkpoint losses)
            from icml26.lm.train import eval_windows

            return eval_windows(data[f"s{seed}/val_ids"].astype(np.int64),
                                int(p["scorer"]["context"])).to(dev)

        texts = {(s["domain"], s["sampling"]): _machine(cfg, data, seed, s["domain"],
                                                        models["G"], s["sampling"])
                 for s in sets.values()}
        c3 = time.process_time()
        analysis = {}
        shared: dict = {}  # statistics of one (model, text set) pass, reused across settings
        for run in seed_runs:
            s = sets[run.setting]
            roles = {"scorer": models["G" if s["scorer"] == "generator" else "S"],
                     "performer": models.get("P")}
            t_run = time.process_time()
            if run.setting not in analysis:  # shared by every detector of the setting
                human, machine = texts[(s["domain"], s["sampling"])]
                machine = _attack(cfg, data, seed, s["domain"], s["attack"], machine)
                methods = [r.method for r in seed_runs if r.setting == run.setting]
                analysis[run.setting] = _analyse(cfg, s, roles, ckpts.get("S", {}), models,
                                                 human, machine, unigram, edges, methods,
                                                 val_windows(seed), marks, shared,
                                                 (s["domain"], s["sampling"], s["attack"]))
            an = analysis[run.setting]
            h_raw, m_raw = an["raw"][run.method]
            # timed: the detector end to end (its own forward passes of every model it needs
            # and its statistic) on the first n_time human and n_time machine texts; the
            # minimum over repeats is the least-disturbed measurement (timeit's convention)
            h_ids = torch.as_tensor(an["human"][:n_time], device=dev)
            m_ids = torch.as_tensor(an["machine"][:n_time], device=dev)
            cpu = np.inf
            for _ in range(repeats):
                t0 = time.process_time()
                th, passes = det.score(run.method, roles, h_ids, start, batch)
                tm, _ = det.score(run.method, roles, m_ids, start, batch)
                cpu = min(cpu, time.process_time() - t0)
            # the timed run computes exactly the scores used for detection
            if not (np.allclose(th, h_raw[:n_time], rtol=1e-4, atol=1e-5)
                    and np.allclose(tm, m_raw[:n_time], rtol=1e-4, atol=1e-5)):
                raise RuntimeError(f"{run.key}: timed scores differ from the shared pass")
            key = run.key
            sign = det.DETECTORS[run.method].sign
            state.update({
                f"{key}/human": sign * h_raw, f"{key}/machine": sign * m_raw,
                f"{key}/cpu_s": np.array(cpu), f"{key}/timed_texts": np.array(len(th) + len(tm)),
                f"{key}/passes": np.array(passes),
                f"{key}/models": np.array(len(det.DETECTORS[run.method].roles)),
            })
            state.update({f"{key}/{name}": v for name, v in an["diag"].items()})
            cpu_setting[run.setting] = cpu_setting.get(run.setting, 0.0) + \
                time.process_time() - t_run
            if run.method == "Telescope":  # Fig. 2: histograms of log tau_i
                for name in ("human", "machine"):
                    curves += [_row(run, b, f"log_tau_hist_{name}", c)
                               for b, c in enumerate(an[f"hist_{name}"])]
            for role, curve in val_curves.items():
                curves += [_row(run, st, f"val_loss_{role}", v) for st, v in curve]
            if run.method == "Telescope" and s["scorer"] == "reference" \
                    and s["attack"] == "none":
                for step, frac, m_tppl, h_tppl, auc, rr in gen_rows[s["domain"]]:
                    curves += [_row(run, step, "gen_ckpt_frac", frac),
                               _row(run, step, "gen_ckpt_log_tppl", m_tppl),
                               _row(run, step, "gen_ckpt_log_tppl_human", h_tppl),
                               _row(run, step, "gen_ckpt_auroc", auc),
                               _row(run, step, "gen_ckpt_rep", rr)]
            for step, frac, a_idx, loss, stats in an["ckpt"]:
                if run.method in stats:
                    h, m = stats[run.method]
                    curves += [_row(run, step, "ckpt_A", a_idx),
                               _row(run, step, "ckpt_auroc", auroc(h, m)),
                               _row(run, step, "ckpt_frac", frac),
                               _row(run, step, "ckpt_val_loss", loss)]
        # where a seed's CPU goes (job log only: budget decisions)
        print(f"  seed {seed}: CPU-s models {c1 - c0:.1f}, G-checkpoint measurement "
              f"{c2 - c1:.1f}, machine text {c3 - c2:.1f}, scoring + timing per setting "
              + ", ".join(f"{k} {v:.1f}" for k, v in cpu_setting.items()), flush=True)
    return state, curves


def _row(run, step, metric, value) -> dict:
    return {**run.as_dict(), "step": int(step), "metric": metric, "value": float(value)}


def _batched(models: dict, roles, ids, batch: int, fn) -> list:
    """``fn(lps, chunk)`` over chunks of ``batch`` texts, one forward pass per model role."""
    from . import detectors as det

    out = []
    for i in range(0, len(ids), batch):
        chunk = ids[i : i + batch]
        out.append(fn({r: det.log_probs(models[r], chunk) for r in roles}, chunk))
    return out


def _analyse(cfg, s, roles, ckpts, models, human, machine, unigram, edges, methods,
             val_windows=None, marks=None, shared=None, text_key=None) -> dict:
    """Everything of one setting that one shared pass per model and text set gives: the raw
    statistic of each of ``methods`` on every text, the scorer diagnostics (log PPL,
    log TPPL, aversion A, log tau histograms, repetition rates) and, for a reference scorer,
    the scorer's checkpoints (Fig. 1 / claim 4): A on human text, the validation loss on
    ``val_windows`` (NaN without them) and the oriented scores of the ``ckpt_detectors``
    (single-model detectors: one forward pass of the checkpoint). ``marks`` names token ids
    ({"pipe": id of "|", "unk": id of <unk>}) whose immediate repeats are counted apart.

    ``shared`` (a dict kept per seed) with ``text_key`` (what fixes the machine text: domain,
    sampling, attack) reuses the statistics of a (models, text set) pass that an earlier
    setting of the seed already made (the human text under G in white-box and
    white-box-spec-sampling): the same chunks through the same model, so the same numbers.
    With ``shared``, a scorer checkpoint whose weights equal the final scorer's (fraction 1.0)
    also reuses the final scorer's pass. Without it, every pass is made (the old path)."""
    import copy

    import torch

    from . import detectors as det

    p = cfg["params"]
    start, batch = int(p["prompt"]), int(p["score_batch"])
    need = ("scorer", "performer") if any(
        det.DETECTORS[m].roles != ("scorer",) for m in methods) else ("scorer",)

    def stats(lps, chunk):
        out = {m: det.DETECTORS[m].stat(lps, chunk, start).double().cpu().numpy()
               for m in methods}
        out["_log_tau"] = det.telescope_logp(lps["scorer"], chunk, start).double().cpu().numpy()
        out["_log_ppl"] = det.log_ppl(lps["scorer"], chunk, start).double().cpu().numpy()
        return out

    def cat(parts):
        return {k: np.concatenate([q[k] for q in parts]) for k in parts[0]}

    from icml26.lm.train import device_of, eval_loss

    dev = device_of(roles["scorer"])  # the models' device (config ``device``)
    h_ids, m_ids = torch.as_tensor(human, device=dev), torch.as_tensor(machine, device=dev)
    reuse, shared = shared is not None, {} if shared is None else shared
    keys = {"_log_tau", "_log_ppl", *methods}

    def pass_stats(ids, text):
        # one entry per (models, text set); a later setting needing a subset of its statistics
        # takes them (text None: not shareable)
        key = None if text is None else (id(roles["scorer"]), text)
        have = shared.get(key)
        if have is None or not keys <= have.keys():
            have = cat(_batched(roles, need, ids, batch, stats))
            if key is not None:
                shared[key] = have
        return {k: have[k] for k in keys}

    # human text: the same for every setting of a domain; the performer of a seed is one
    sh = pass_stats(h_ids, None if text_key is None else ("human", text_key[0]))
    sm = pass_stats(m_ids, None if text_key is None else ("machine", *text_key))
    tau_h, tau_m = sh["_log_tau"], sm["_log_tau"]
    diag = {
        "log_ppl_human": sh["_log_ppl"], "log_ppl_machine": sm["_log_ppl"],
        "log_tppl_human": -tau_h.mean(1), "log_tppl_machine": -tau_m.mean(1),
        "A": np.array(_aversion(tau_h, human[:, start:], unigram)),
        # immediate repeats among the continuation tokens (first one vs the prompt's last)
        "rep_human": np.array(D.repetition_rate(human[:, start - 1:])),
        "rep_machine": np.array(D.repetition_rate(machine[:, start - 1:])),
    }
    # how much of the repetition is grid-table pipes ("| |") or "<unk> <unk>" (diagnostic)
    for name, tok in (marks or {}).items():
        for who, ids in (("human", human), ("machine", machine)):
            diag[f"rep_{name}_{who}"] = np.array(D.repetition_rate(ids[:, start - 1:], tok))
    hist = {name: np.histogram(np.clip(t, edges[0], edges[-1] - 1e-9), edges)[0]
            for name, t in (("human", tau_h), ("machine", tau_m))}
    ckpt_rows = []
    if s["scorer"] == "reference" and ckpts:
        steps = int(p["scorer"]["steps"])
        model = copy.deepcopy(models["S"])
        names = [m for m in p["ckpt_detectors"] if det.DETECTORS[m].roles == ("scorer",)]

        def ck(lps, chunk):
            out = {n: det.DETECTORS[n].stat(lps, chunk, start).double().cpu().numpy()
                   for n in names}
            out["_log_tau"] = (det.telescope_logp(lps["scorer"], chunk, start).double()
                               .cpu().numpy())
            return out

        final = models["S"].state_dict()
        for frac in sorted(ckpts):
            model.load_state_dict(ckpts[frac])
            model.eval()
            if reuse and roles["scorer"] is models["S"] and set(names) <= set(methods) and all(
                    torch.equal(v, final[k]) for k, v in ckpts[frac].items()):
                # the final checkpoint is the scorer itself: its pass is already made
                ch = {k: sh[k] for k in (*names, "_log_tau")}
                cm = {k: sm[k] for k in (*names, "_log_tau")}
            else:
                ch = cat(_batched({"scorer": model}, ("scorer",), h_ids, batch, ck))
                cm = cat(_batched({"scorer": model}, ("scorer",), m_ids, batch, ck))
            oriented = {n: (det.DETECTORS[n].sign * ch[n], det.DETECTORS[n].sign * cm[n])
                        for n in names}
            step = max(1, int(round(frac * steps)))
            loss = eval_loss(model, val_windows) if val_windows is not None else float("nan")
            ckpt_rows.append((step, frac, _aversion(ch["_log_tau"], human[:, start:], unigram),
                              loss, oriented))
    return {"raw": {m: (sh[m], sm[m]) for m in methods}, "diag": diag, "human": human,
            "machine": machine, "hist_human": hist["human"], "hist_machine": hist["machine"],
            "ckpt": ckpt_rows}


# ---------------------------------------------------------------------------------------------
def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    """AUROC, TPR at 5% FPR, scoring cost and diagnostics of every run."""
    out = []
    for run in runs:
        k = run.key
        h, m = state[f"{k}/human"], state[f"{k}/machine"]
        row = {
            "auroc": auroc(h, m),
            "tpr_at_5fpr": tpr_at_fpr(h, m, 0.05),
            "cpu_s_per_100": float(state[f"{k}/cpu_s"]) * 100.0 / float(state[f"{k}/timed_texts"]),
            "cpu_s": float(state[f"{k}/cpu_s"]),
            "forward_passes": float(state[f"{k}/passes"]),
            "models": float(state[f"{k}/models"]),
            "n_human": float(len(h)),
            "n_machine": float(len(m)),
            "aversion_A": float(state[f"{k}/A"]),
            "rep_human": float(state[f"{k}/rep_human"]),
            "rep_machine": float(state[f"{k}/rep_machine"]),
            **{f"rep_{n}_{w}": float(state[f"{k}/rep_{n}_{w}"]) for n in ("pipe", "unk")
               for w in ("human", "machine") if f"{k}/rep_{n}_{w}" in state},
            "log_ppl_human": float(state[f"{k}/log_ppl_human"].mean()),
            "log_ppl_machine": float(state[f"{k}/log_ppl_machine"].mean()),
            "log_tppl_human": float(state[f"{k}/log_tppl_human"].mean()),
            "log_tppl_machine": float(state[f"{k}/log_tppl_machine"].mean()),
        }
        uni = data[f"s{run.seed}/unigram"]
        ids = data[f"s{run.seed}/train_ids"]
        row["corpus_rep_rate"] = D.repetition_rate(ids)
        vocab = list(data[f"s{run.seed}/vocab"])
        row["corpus_rep_pipe"] = D.repetition_rate(ids, vocab.index("|")) if "|" in vocab else 0.0
        row["corpus_rep_unk"] = D.repetition_rate(ids, len(vocab) - 1)
        row["unigram_rep_rate"] = D.unigram_repetition_rate(uni)
        # the validation loss of a unigram model: the plateau claim 4's scorer must leave
        row["unigram_xent"] = D.unigram_cross_entropy(uni, data[f"s{run.seed}/val_ids"])
        out.append(row)
    return out
