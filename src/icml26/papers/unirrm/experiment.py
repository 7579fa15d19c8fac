"""Stages of unirrm: the MixReward stand-in (prepare), the judges (train), the metrics (evaluate).

prepare builds one world and data set per seed (its own random stream, named by the seed, so
a seed's data do not depend on which other seeds run). train fits the runs of one method
stacked over seeds in one loop and stores the scores of every test set; evaluate turns scores
into accuracies with numpy.

Training (every method 'epochs' passes over the same items, batch_size items per step, each
step a pairwise and a listwise minibatch in proportion to their counts):
- scalar-rm: Bradley-Terry loss on pairs + softmax cross-entropy of the labelled best of 4,
  weights 1 : 1, warm-up + cosine learning rate over all epochs;
- unirrm / static-rm / unirrm-norubric (official two stages): SFT on the teacher traces
  (rubric loss + per-criterion loss, weights 0.5 : 0.5) for sft_epochs with warm-up + cosine,
  then GRPO on the verdict for the remaining epochs: group of group_size verdicts sampled
  from softmax(F / temperature), reward 0.8 * (+-1 correct) + 0.15 * format + 0.05 * rubric
  quality / 5, group-normalised advantages, low-variance KL (k3) to the SFT judge.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import rng as named_rng

from . import world as W

METHODS = ("unirrm", "static-rm", "scalar-rm", "unirrm-norubric")
GENERATIVE = ("unirrm", "static-rm", "unirrm-norubric")


def _p(cfg) -> dict:
    p = dict(cfg["params"])
    for s in (cfg.get("settings") or {}).values():
        p.update(s or {})
    return p


def languages(p):
    """(high-resource, low-resource) language indices: the last n_low_resource are low."""
    L = p["n_languages"]
    return list(range(L - p["n_low_resource"])), list(range(L - p["n_low_resource"], L))


def _per_language_counts(p, n):
    high, low = languages(p)
    return [n if lang in high else max(1, int(round(p["low_resource_frac"] * n)))
            for lang in range(p["n_languages"])]


def _train_block(rng, p, world, n_per_lang, k):
    parts = []
    for lang, n in enumerate(_per_language_counts(p, n_per_lang)):
        ins, lev, sat, Q, label, resp, tgt = W.build_train_split(rng, n, k, p, world)
        parts.append({"ins": W.render(W.instruction_concepts(ins, p), lang, world, p, True),
                      "resp": W.render(resp, lang, world, p, False), "label": label,
                      "lang": np.full(n, lang, np.int8), "n_cons": ins["n_cons"],
                      "agree": (label == np.argmax(Q, -1)).astype(np.int8),
                      "tie": (np.sort(Q, -1)[:, -1] - np.sort(Q, -1)[:, -2] < 1e-9
                              ).astype(np.int8),
                      **tgt})
    return {key: np.concatenate([q[key] for q in parts]) for key in parts[0]}


def check_params(p) -> None:
    """Relations between params that the schema cannot state: one line naming the key."""
    from icml26.errors import ConfigError

    if p["sft_epochs"] > p["epochs"]:
        raise ConfigError(f"unirrm: params.sft_epochs={p['sft_epochs']} exceeds params.epochs="
                          f"{p['epochs']}; allowed: 0 <= sft_epochs <= epochs")
    if p["diff_min"] > p["diff_max"]:
        raise ConfigError(f"unirrm: params.diff_min={p['diff_min']} exceeds params.diff_max="
                          f"{p['diff_max']}")
    if p["n_low_resource"] >= p["n_languages"]:
        raise ConfigError(f"unirrm: params.n_low_resource={p['n_low_resource']} must be below "
                          f"params.n_languages={p['n_languages']}")
    for key in ("hidden", "emb_dim"):
        if p[key] % p["heads"]:
            raise ConfigError(f"unirrm: params.heads={p['heads']} must divide params.{key}="
                              f"{p[key]}")


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    p = _p(cfg)
    check_params(p)
    out = {}
    for seed in cfg["seeds"]:
        g = named_rng(cfg["paper"], "world", seed)
        world = W.make_world(g, p)
        pre = f"s{seed}"
        out[f"{pre}/w_dom"] = world["w_dom"]
        out[f"{pre}/train_pairs"] = world["train_pairs"]
        for name, n, k in (("tr2", p["n_pair_train"], 2), ("tr4", p["n_list_train"], 4)):
            for key, val in _train_block(g, p, world, n, k).items():
                out[f"{pre}/{name}/{key}"] = val
        # validation: training distribution (seen pairs), tie-free pairs, every language
        L = p["n_languages"]
        nv = p["n_val"]
        ins, lev, sat, Q, resp, red_v = W.build_eval_split(
            g, nv * L, 2, p, world, W.train_cons_counts(g, nv * L, p), world["train_pairs"],
            g)
        lang = np.repeat(np.arange(L), nv)
        conc = W.instruction_concepts(ins, p)
        out[f"{pre}/va/ins"] = np.concatenate(
            [W.render(conc[lang == la], la, world, p, True) for la in range(L)])
        out[f"{pre}/va/resp"] = np.concatenate(
            [W.render(resp[lang == la], la, world, p, False) for la in range(L)])
        out[f"{pre}/va/better"] = np.argmax(Q, -1).astype(np.int8)
        # the annotator's (noisy) labels: what a real held-out preference set would give
        out[f"{pre}/va/label"] = W.gumbel_labels(g, Q, p["label_noise"])
        # test: n_test items of 4 candidates (0/1/2-unseen-pair constraints in thirds), each
        # rendered in every language; the pair is candidates (0, 1)
        nt = p["n_test"]
        ins, lev, sat, Q, resp, red_t = W.build_eval_split(
            g, nt, 4, p, world, W.test_cons_counts(nt), world["test_pairs"], g)
        conc = W.instruction_concepts(ins, p)
        out[f"{pre}/te/ins"] = np.stack([W.render(conc, la, world, p, True) for la in range(L)])
        out[f"{pre}/te/resp"] = np.stack([W.render(resp, la, world, p, False)
                                          for la in range(L)])
        out[f"{pre}/te/Q"] = Q
        out[f"{pre}/te/req"] = ins["req"]
        out[f"{pre}/te/n_cons"] = ins["n_cons"]
        out[f"{pre}/te/oracle_F"] = W.mean_judge(world["w_dom"], ins, lev, sat, p)
        out[f"{pre}/card/redrawn"] = np.array([red_v, red_t])
        # what a model could exploit without the rubric: on the test pairs, 'more satisfied
        # states' (ignores which were requested) and 'higher sum of generic levels'
        better = np.argmax(Q[:, :2], -1)
        n_sat = sat[:, :2].sum(-1)
        lev_sum = lev[:, :2].sum(-1)
        out[f"{pre}/card/heuristics"] = np.array([
            float((np.argmax(n_sat, -1) == better).mean()),
            float((np.argmax(lev_sum, -1) == better).mean())])
    return out


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
def _stack(data, seeds, key):
    return np.stack([data[f"s{s}/{key}"] for s in seeds])


def _grpo_loss(torch, F, ref_logp, label, pi_c, req_t, u_draw, hp):
    """GRPO on the verdict: group_size verdicts per item sampled from softmax(F / T) (inverse
    CDF on uniforms drawn per run), reward 0.8 acc(+-1) + 0.15 format + 0.05 quality / 5,
    group-normalised advantage, low-variance KL (k3) to the SFT judge's policy."""
    logp = torch.log_softmax(F / hp["temperature"], -1)          # (R, B, K)
    cdf = logp.detach().exp().cumsum(-1)
    act = (u_draw[..., None] > cdf[:, :, None, :]).sum(-1).clamp_max(F.shape[-1] - 1)
    lp = torch.gather(logp, 2, act)                               # (R, B, group)
    acc = torch.where(act == label[..., None], 1.0, -1.0)
    # a structured judge always emits analysis, rubric and evaluation: format reward = 1
    fmt = 0.1 + 0.3 + 0.6
    if pi_c is not None:   # rubric quality 1 + 4 F1 (our stand-in for the official LLM judge)
        pred = (pi_c.detach() > 0.5).to(F.dtype)
        tp = (pred * req_t).sum(-1)
        denom = pred.sum(-1) + req_t.sum(-1)
        f1 = torch.where(denom > 0, 2 * tp / denom.clamp_min(1e-9), torch.ones_like(tp))
        quality = 1.0 + 4.0 * f1
    else:
        quality = torch.full(acc.shape[:2], 1.0, dtype=F.dtype, device=F.device)
    r = (hp["reward_acc"] * acc + hp["reward_format"] * fmt
         + hp["reward_rubric"] * quality[..., None] / 5.0)
    adv = (r - r.mean(-1, keepdim=True)) / (r.std(-1, keepdim=True) + 1e-6)
    ref = torch.gather(ref_logp, 2, act)
    kl = torch.exp(ref - lp) - (ref - lp) - 1.0
    return (-(adv * lp) + hp["kl_coef"] * kl).mean(dim=(1, 2)).sum()


def _sft_loss(torch, out, method, tgt, hp):
    """Rubric loss (MSE to w/4, BCE to requested) + per-criterion loss (MSE to (lev-3)/2, BCE
    to satisfied), weights rubric_weight : criterion_weight, summed over runs."""
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    crit = (((out["s_gen"] - tgt["crit_gen"]) ** 2).mean(dim=(1, 2, 3))
            + bce(out["s_con"], tgt["crit_sat"], reduction="none").mean(dim=(1, 2, 3)))
    loss = hp["criterion_weight"] * crit
    if method == "unirrm":
        pi_gen, pi_c = out["pi_gen"], out["pi_c"]
        rub = (((pi_gen - tgt["rubric_gen"]) ** 2).mean(dim=(1, 2))
               + bce(torch.logit(pi_c.clamp(1e-6, 1 - 1e-6)), tgt["rubric_req"],
                     reduction="none").mean(dim=(1, 2)))
        loss = loss + hp["rubric_weight"] * rub
    elif method == "static-rm":   # the static rubric is fitted to the teacher's generic weights
        loss = loss + hp["rubric_weight"] * ((out["pi_gen"] - tgt["rubric_gen"]) ** 2
                                             ).mean(dim=(1, 2))
    return loss.sum()


def _pref_loss(torch, F, label, hp, pairwise: bool):
    """Bradley-Terry on pairs (-log sigmoid(F_chosen - F_rejected) = 2-way softmax CE) and the
    softmax cross-entropy of the labelled best of 4, summed over runs."""
    ce = -torch.gather(torch.log_softmax(F, -1), 2, label[..., None])[..., 0]
    w = hp["pairwise_weight"] if pairwise else hp["listwise_weight"]
    return w * ce.mean(1).sum()


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.lm.optim import AdamW, warmup_cosine
    from icml26.seeding import torch_device

    from . import models

    torch.set_num_threads(1)
    dev = torch_device(cfg["device"])
    hp = _p(cfg)
    check_params(hp)
    state, curves = {}, []
    vocab = W.vocab_size(hp)
    for method in dict.fromkeys(r.method for r in runs):
        mruns = [r for r in runs if r.method == method]
        seeds = [r.seed for r in mruns]
        R = len(mruns)
        gens = [torch.Generator().manual_seed(r.rng_seed(cfg["paper"], "init") % 2**63)
                for r in mruns]
        params = {k: v.to(dev).requires_grad_(True)
                  for k, v in models.init(method, gens, hp, vocab).items()}
        learn = list(params.values())

        def T(x, dtype=None):
            t = torch.as_tensor(np.ascontiguousarray(x))
            return (t.to(dtype) if dtype is not None else t.long()).to(dev)

        f32 = torch.float32
        tr = {}
        for name in ("tr2", "tr4"):
            tr[name] = {k: _stack(data, seeds, f"{name}/{k}") for k in
                        ("ins", "resp", "label", "rubric_gen", "rubric_req", "crit_gen",
                         "crit_sat")}
            tr[name] = {k: T(v) if k in ("ins", "resp", "label") else T(v, f32)
                        for k, v in tr[name].items()}
        va = {k: T(_stack(data, seeds, f"va/{k}")) for k in ("ins", "resp", "better", "label")}
        n2, n4 = tr["tr2"]["label"].shape[1], tr["tr4"]["label"].shape[1]
        steps_per_epoch = int(np.ceil((n2 + n4) / hp["batch_size"]))
        b2 = int(np.ceil(n2 / steps_per_epoch))
        b4 = int(np.ceil(n4 / steps_per_epoch))
        epochs = hp["epochs"]
        generative = method in GENERATIVE
        sft_epochs = hp["sft_epochs"] if generative else epochs
        order = [np.random.default_rng(r.rng_seed(cfg["paper"], "batches")) for r in mruns]
        draws = [np.random.default_rng(r.rng_seed(cfg["paper"], "grpo")) for r in mruns]
        opt = AdamW(learn, lr=hp["lr"], betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                    decay=[False] * len(learn))
        total_sft = sft_epochs * steps_per_epoch
        warm = int(round(hp["warmup_frac"] * total_sft))
        ref = None
        step = 0
        # checkpoint rule (fixed before any run, every method alike): keep each run's weights
        # of the epoch with the best validation agreement with the annotator's labels
        best = {k: v.detach().clone() for k, v in params.items()}
        best_acc = torch.full((R,), -1.0, dtype=torch.float64, device=dev)
        best_epoch = torch.zeros(R, dtype=torch.float64, device=dev)
        rr = torch.arange(R, device=dev)[:, None]
        for epoch in range(1, epochs + 1):
            rl = generative and epoch > sft_epochs
            if rl and ref is None:   # the SFT judge: reference policy; fresh optimiser
                # the reference is frozen: its log-policy of every training item, once
                ref = {}
                with torch.no_grad():
                    for name in ("tr2", "tr4"):
                        n_items = tr[name]["label"].shape[1]
                        ref[name] = torch.cat([torch.log_softmax(models.forward(
                            params, method, hp, tr[name]["ins"][:, a:a + 1024],
                            tr[name]["resp"][:, a:a + 1024])["F"] / hp["temperature"], -1)
                            for a in range(0, n_items, 1024)], 1)
                opt = AdamW(learn, lr=hp["lr"] * hp["grpo_lr_ratio"], betas=(0.9, 0.999),
                            eps=1e-8, weight_decay=0.0, decay=[False] * len(learn))
            perm2 = T(np.stack([o.permutation(n2) for o in order]))
            perm4 = T(np.stack([o.permutation(n4) for o in order]))
            losses = []
            for s in range(steps_per_epoch):
                loss = 0.0
                for name, perm, b, k in (("tr2", perm2, b2, 2), ("tr4", perm4, b4, 4)):
                    idx = perm[:, s * b:(s + 1) * b]
                    if idx.shape[1] == 0:
                        continue
                    batch = {key: v[rr, idx] for key, v in tr[name].items()}
                    out = models.forward(params, method, hp, batch["ins"], batch["resp"])
                    if not generative:
                        loss = loss + _pref_loss(torch, out["F"], batch["label"], hp, k == 2)
                    elif not rl:
                        loss = loss + _sft_loss(torch, out, method, batch, hp)
                    else:
                        ref_logp = ref[name][rr, idx]
                        u_draw = T(np.stack([d.random((idx.shape[1], hp["group_size"]))
                                             for d in draws]), f32)
                        loss = loss + _grpo_loss(torch, out["F"], ref_logp, batch["label"],
                                                 out.get("pi_c"), batch["rubric_req"], u_draw,
                                                 hp)
                # (unirrm-norubric's rubric heads get no gradient in SFT: zero, no update)
                grads = torch.autograd.grad(loss, learn, allow_unused=True)
                for v, g in zip(learn, grads, strict=True):
                    v.grad = torch.zeros_like(v) if g is None else g
                scale = 1.0 if rl else warmup_cosine(step, total_sft, warm, 0.0)
                opt.step(scale)
                step += 1
                losses.append(float(loss.detach()) / R)
            with torch.no_grad():
                F = models.forward(params, method, hp, va["ins"], va["resp"])["F"]
                dec = decide_t(F)
                acc = (dec == va["better"]).double().mean(1)
                agree = (dec == va["label"]).double().mean(1)
                better = agree > best_acc
                for k, v in params.items():
                    best[k][better] = v.detach()[better]
                best_acc = torch.where(better, agree, best_acc)
                best_epoch = torch.where(better, float(epoch), best_epoch)
            for r, run in enumerate(mruns):
                base = {**run.as_dict(), "step": epoch}
                curves += [{**base, "metric": "train_loss", "value": float(np.mean(losses))},
                           {**base, "metric": "val_pair_acc", "value": float(acc[r])},
                           {**base, "metric": "val_label_agree", "value": float(agree[r])},
                           {**base, "metric": "stage", "value": 1.0 if rl else 0.0}]
        for r, run in enumerate(mruns):
            curves.append({**run.as_dict(), "step": epochs, "metric": "selected_epoch",
                           "value": float(best_epoch[r])})
        state.update(_test_scores(torch, models, best, method, hp, data, mruns, T))
    return state, curves


def _test_scores(torch, models, params, method, hp, data, mruns, T) -> dict:
    """Scores of each run on every language's test set: the pair (0, 1), the 4-set, and each
    of the pair's responses alone (set size 1: pointwise, unseen in training)."""
    seeds = [r.seed for r in mruns]
    ins = _stack(data, seeds, "te/ins")       # (R, L, n, 4)
    resp = _stack(data, seeds, "te/resp")     # (R, L, n, 4, 16)
    R, L, n = ins.shape[:3]
    out = {f"{r.key}/{k}": [] for r in mruns for k in ("pair", "list", "point", "pi_c")}
    chunk = 1000
    with torch.no_grad():
        for la in range(L):
            for a in range(0, n, chunk):
                i = T(ins[:, la, a:a + chunk])
                rs = T(resp[:, la, a:a + chunk])
                pair = models.forward(params, method, hp, i, rs[:, :, :2])["F"]
                full = models.forward(params, method, hp, i, rs)
                point = torch.cat([models.forward(params, method, hp, i, rs[:, :, j:j + 1])["F"]
                                   for j in (0, 1)], -1)
                pic = full.get("pi_c")
                for r, run in enumerate(mruns):
                    out[f"{run.key}/pair"].append(pair[r].double().cpu().numpy())
                    out[f"{run.key}/list"].append(full["F"][r].double().cpu().numpy())
                    out[f"{run.key}/point"].append(point[r].double().cpu().numpy())
                    out[f"{run.key}/pi_c"].append(
                        pic[r].double().cpu().numpy() if pic is not None
                        else np.full((pair.shape[1], W.S), np.nan))
    return {k: np.concatenate(v).reshape((L, n) + np.concatenate(v).shape[1:])
            for k, v in out.items()}


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def decide_t(F):
    """torch version of decide: the first index of the maximum."""
    return (F == F.max(-1, keepdim=True).values).long().argmax(-1)


def decide(F) -> np.ndarray:
    """Index of the preferred candidate; a tie goes to the first-listed one (official
    _pick_winner_from_pointwise keeps the first strict maximum)."""
    return np.argmax(F, -1)


def rubric_f1(pi_c, req) -> float:
    """Micro F1 of the predicted requested constraints (pi_c > 0.5) over all test items."""
    pred = pi_c > 0.5
    tp = (pred & (req > 0)).sum()
    denom = pred.sum() + (req > 0).sum()
    return float(2 * tp / denom) if denom else float("nan")


def run_metrics(p, te, sc) -> dict:
    """Metrics of one run from its test scores sc (pair, list, point, pi_c) and the test set."""
    Q, n_cons = te["Q"], te["n_cons"]
    high, low = languages(p)
    better = np.argmax(Q[:, :2], -1)
    best = np.argmax(Q, -1)
    pair_dec = decide(sc["pair"])                           # (L, n)
    pair_ok = pair_dec == better[None]
    point_ok = decide(sc["point"]) == better[None]
    list_ok = decide(sc["list"]) == best[None]
    row = {}
    for la in range(pair_ok.shape[0]):
        row[f"pair_acc_L{la}"] = float(pair_ok[la].mean())
    row["pair_acc"] = float(pair_ok.mean())
    row["list_acc"] = float(list_ok.mean())
    row["point_acc"] = float(point_ok.mean())
    row["pair_acc_low"] = float(pair_ok[low].mean())
    row["pair_acc_high"] = float(pair_ok[high].mean())
    row["pair_acc_c0"] = float(pair_ok[:, n_cons == 0].mean())
    row["pair_acc_c1plus"] = float(pair_ok[:, n_cons >= 1].mean())
    row["pair_acc_c1"] = float(pair_ok[:, n_cons == 1].mean())
    row["pair_acc_c2_unseen"] = float(pair_ok[:, n_cons == 2].mean())
    row["consistency"] = float((pair_dec == pair_dec[:1]).all(0).mean())
    row["rubric_f1"] = (rubric_f1(sc["pi_c"], np.broadcast_to(te["req"], sc["pi_c"].shape))
                        if np.isfinite(sc["pi_c"]).all() else float("nan"))
    finite = all(np.isfinite(sc[k]).all() for k in ("pair", "list", "point"))
    if not finite:   # a diverged judge is a failed run: every accuracy becomes NaN
        row = {k: (float("nan") if k != "rubric_f1" else v) for k, v in row.items()}
    return row


def data_card_row(p, data, seed) -> dict:
    """Per-seed numbers of the data card (sizes, category counts, what is built in)."""
    pre = f"s{seed}"
    row = {}
    for name in ("tr2", "tr4"):
        lang = data[f"{pre}/{name}/lang"]
        nc = data[f"{pre}/{name}/n_cons"]
        row[f"card_{name}_n"] = float(len(lang))
        for la in range(p["n_languages"]):
            row[f"card_{name}_L{la}"] = float((lang == la).sum())
        for c in range(3):
            row[f"card_{name}_c{c}"] = float((nc == c).sum())
        row[f"card_{name}_label_agree"] = float(data[f"{pre}/{name}/agree"].mean())
        row[f"card_{name}_tie"] = float(data[f"{pre}/{name}/tie"].mean())
    row["card_val_n"] = float(len(data[f"{pre}/va/better"]))
    nc = data[f"{pre}/te/n_cons"]
    row["card_test_n"] = float(len(nc))
    for c in range(3):
        row[f"card_test_c{c}"] = float((nc == c).sum())
    red = data[f"{pre}/card/redrawn"]
    row["card_val_redrawn"], row["card_test_redrawn"] = float(red[0]), float(red[1])
    Q = data[f"{pre}/te/Q"]
    orc = data[f"{pre}/te/oracle_F"]
    row["oracle_mean_pair_acc"] = float((decide(orc[:, :2]) == np.argmax(Q[:, :2], -1)).mean())
    row["oracle_mean_list_acc"] = float((decide(orc) == np.argmax(Q, -1)).mean())
    heur = data[f"{pre}/card/heuristics"]
    row["heur_sat_count_pair_acc"], row["heur_level_sum_pair_acc"] = (float(h) for h in heur)
    return row


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    p = _p(cfg)
    rows = []
    for run in runs:
        pre = f"s{run.seed}"
        te = {k: data[f"{pre}/te/{k}"] for k in ("Q", "n_cons", "req")}
        sc = {k: state[f"{run.key}/{k}"] for k in ("pair", "list", "point", "pi_c")}
        row = run_metrics(p, te, sc)
        own = curves[(curves["method"] == run.method) & (curves["seed"] == run.seed)]
        val = own[own["metric"] == "val_pair_acc"].sort_values("step")["value"].to_numpy()
        stage = own[own["metric"] == "stage"].sort_values("step")["value"].to_numpy()
        row["val_pair_acc_final"] = float(val[-1]) if len(val) else float("nan")
        sft = val[stage == 0]
        row["val_pair_acc_sft"] = float(sft[-1]) if len(sft) else float("nan")
        sel = own.loc[own["metric"] == "selected_epoch", "value"].to_numpy()
        row["selected_epoch"] = float(sel[0]) if len(sel) else float("nan")
        n_sft = p["sft_epochs"] if run.method in GENERATIVE else p["epochs"]
        row["selected_in_grpo"] = (float(row["selected_epoch"] > n_sft)
                                   if run.method in GENERATIVE else float("nan"))
        if len(val) and np.isfinite(row["selected_epoch"]):
            row["val_pair_acc_selected"] = float(val[int(row["selected_epoch"]) - 1])
        else:
            row["val_pair_acc_selected"] = float("nan")
        row.update(data_card_row(p, data, run.seed))
        rows.append(row)
    return rows
