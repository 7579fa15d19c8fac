"""Stages of rollout-scheduling: prompt splits (prepare), SFT + RL with every rollout-selection
rule side by side (train), per-run metrics (evaluate).

A setting is a verifier noise level q. Per seed, prepare fixes the prompt split (train /
held-out) and the SFT subset; the policy's initial weights, its SFT warm start, the prompts of
every RL step and the sampling and verifier uniforms come from streams named by (setting,
seed) only, so every method of a seed starts from the same policy and sees the same random
numbers (common random numbers; methods differ by their selection rule alone). The random-k
choice and the CBS value models use streams of their own run.

All runs of a job train as one stacked batch (one Python loop over RL steps).
"""

from __future__ import annotations

import numpy as np

from icml26.lm.grpo import ArithmeticTask
from icml26.seeding import derive_seed
from icml26.seeding import rng as named_rng

METHODS = ("grpo", "grpo-random-k", "dynamic-filter", "replay-heuristic", "cbs-intra",
           "cbs-c128", "cbs-c512")
CBS_CAPACITY = {"cbs-intra": 0, "cbs-c128": 128, "cbs-c512": 512}


def _p(cfg, setting):
    p = dict(cfg["params"])
    p.update(cfg["settings"][setting] or {})
    return p


def task_of(params) -> ArithmeticTask:
    return ArithmeticTask(int(params["n_operands"]), int(params["answer_digits"]))


def prepare(cfg: dict, rng: np.random.Generator) -> dict:
    """Per seed: a permutation of the prompts (first n_train_prompts train, the rest held out)
    and the SFT subset (the first n_sft training prompts)."""
    p = cfg["params"]
    task = task_of(p)
    n = len(task.prompts())
    n_train, n_sft = int(p["n_train_prompts"]), int(p["n_sft"])
    if not n_sft <= n_train < n:
        raise ValueError(f"need n_sft <= n_train_prompts < {n} prompts")
    out = {"prompts": task.prompts()}
    for seed in cfg["seeds"]:
        perm = named_rng(cfg["paper"], "split", seed).permutation(n)
        out[f"{seed}/train"] = perm[:n_train]
        out[f"{seed}/held"] = perm[n_train:]
        out[f"{seed}/sft"] = perm[:n_sft]
    return out


def rollouts_to_target(steps, acc, target: float, per_step: int):
    """Fresh rollouts generated when the accuracy curve (evaluated after ``steps`` RL steps)
    first reaches ``target``; censored (at the last evaluation's count) when it never does."""
    steps, acc = np.asarray(steps), np.asarray(acc, float)
    hit = np.flatnonzero(acc >= target)
    if len(hit):
        return float(steps[hit[0]] * per_step), False
    return float(steps[-1] * per_step), True


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.lm.grpo import clipped_pg_logit_grad, clipped_pg_loss, group_advantages
    from icml26.rl.optim import Adam
    from icml26.seeding import torch_device

    from . import cbs, policy

    torch.set_num_threads(1)
    dev = torch_device(cfg["device"])
    settings = sorted({r.setting for r in runs})
    hp0 = cfg["params"]
    for s in settings:  # shapes must agree across the stacked runs
        if any(_p(cfg, s)[k] != hp0[k] for k in hp0):
            raise ValueError("settings may only change q")
    task = task_of(hp0)
    T, V = task.n_tokens, task.vocab
    prompts = data["prompts"]
    R = len(runs)
    S, P, G = int(hp0["steps"]), int(hp0["prompts_per_step"]), int(hp0["group_size"])
    F_, Pp = P * G, int(hp0["probe_prompts"])
    eta, clip = float(hp0["lr"]), float(hp0["clip"])
    temp = float(hp0["temperature"])  # rollouts are drawn from and scored under softmax(z / temp)
    q = torch.tensor([float(_p(cfg, r.setting)["q"]) for r in runs])
    paper = cfg["paper"]

    # --- the same SFT warm start for every method of a (setting-independent) seed -----------
    seeds = sorted({r.seed for r in runs})
    sft_params = policy.init([derive_seed(paper, "init", s) for s in seeds], task.n_operands,
                             V, T, int(hp0["embed"]), int(hp0["hidden"]), dev,
                             code=str(hp0["operand_code"]))
    sft_opt = Adam(list(sft_params.values()), lr=float(hp0["sft_lr"]))
    sft_idx = np.stack([data[f"{s}/sft"] for s in seeds])
    stop = hp0["sft_stop_pass"]
    sft_taken = policy.sft(sft_params, sft_opt, task, prompts, sft_idx, int(hp0["sft_steps"]),
                           dev, stop_pass=None if stop is None else float(stop))
    row_np = np.array([seeds.index(r.seed) for r in runs])
    row = torch.as_tensor(row_np, device=dev)
    params = {k: v.detach()[row].clone().requires_grad_(True) for k, v in sft_params.items()}
    opt = Adam(list(params.values()), lr=eta)

    train_idx = np.stack([data[f"{r.seed}/train"] for r in runs])
    held_idx = np.stack([data[f"{r.seed}/held"] for r in runs])
    # the warm-start premise (not a claim): per training prompt, the probability that a rollout
    # (at the sampling temperature) is correct, before any RL step
    pass_sft = policy.correct_prob(params, task, prompts, train_idx, temp, dev)
    roll_rng = [named_rng(paper, "rollouts", r.setting, r.seed) for r in runs]
    sel_rng = [np.random.default_rng(r.rng_seed(paper, "select")) for r in runs]
    methods = [r.method for r in runs]

    def mask_of(names):
        return torch.tensor([m in names for m in methods], device=dev)

    is_cbs = np.array([m in CBS_CAPACITY for m in methods])
    cap = np.array([CBS_CAPACITY.get(m, int(hp0["replay_capacity"]) if m == "replay-heuristic"
                                     else 0) for m in methods], np.int64)
    cmax = int(cap.max())
    buf = {"a": torch.zeros(R, cmax, dtype=torch.long, device=dev),
           "b": torch.zeros(R, cmax, dtype=torch.long, device=dev),
           "tok": torch.zeros(R, cmax, T, dtype=torch.long, device=dev),
           "reward": torch.zeros(R, cmax, device=dev), "adv": torch.zeros(R, cmax, device=dev),
           "logp_old": torch.zeros(R, cmax, device=dev), "born": torch.zeros(R, cmax, device=dev),
           "fp": torch.zeros(R, cmax, device=dev), "gmean": torch.zeros(R, cmax, device=dev),
           "same": torch.zeros(R, cmax, device=dev), "recency": torch.zeros(R, cmax, device=dev)}
    buf_ptr, buf_size = np.zeros(R, np.int64), np.zeros(R, np.int64)
    cbs_rows = np.flatnonzero(is_cbs)
    ens = None
    if len(cbs_rows):
        ens = cbs.ValueEnsemble([runs[i].rng_seed(paper, "value") % 2**31 for i in cbs_rows],
                                [np.random.default_rng(runs[i].rng_seed(paper, "bootstrap"))
                                 for i in cbs_rows],
                                int(hp0["value_members"]), int(hp0["value_hidden"]),
                                int(hp0["value_window"]), float(hp0["value_lr"]), dev)
    cbs_t = torch.as_tensor(cbs_rows, device=dev)
    k_sel, max_buf = int(hp0["k_select"]), int(hp0["max_from_buffer"])
    half = S // 2

    # per-step logs (numpy, on the CPU)
    logs = {k: np.zeros((R, S)) for k in ("fresh_pos", "fresh_fp", "used_pos", "used_fp",
                                          "used_n", "used_buffer", "gain_fp_sum", "gain_fp_n",
                                          "gain_tp_sum", "gain_tp_n")}
    pairs = {i: ([], []) for i in cbs_rows}   # predicted / observed gains, second half
    curves, evals = [], []

    def evaluate_now(step):
        acc_tr = policy.accuracy(params, task, prompts, train_idx, T, V, dev)
        acc_he = policy.accuracy(params, task, prompts, held_idx, T, V, dev)
        for i, r in enumerate(runs):
            for metric, v in (("train_acc", acc_tr[i]), ("held_acc", acc_he[i]),
                              ("fresh_rollouts", step * F_)):
                curves.append({**r.as_dict(), "step": step, "metric": metric,
                               "value": float(v)})
        evals.append(step)

    def tensor(x, dtype=torch.long):
        return torch.as_tensor(x, dtype=dtype).to(dev)

    def rollouts(pidx, uni_tok, uni_ver):
        """Sample G answers per prompt, verify (noisy), group advantages, and the no-grad pass
        at the current policy: tokens, rewards, truth, advantages, logp, h, log-probs."""
        pr = prompts[pidx]                                     # R, P, 2
        a = tensor(np.repeat(pr[..., 0], G, axis=1))
        b = tensor(np.repeat(pr[..., 1], G, axis=1))
        tok = policy.sample(params, a, b, tensor(uni_tok, torch.float32), T, V, temp)
        ans = task.decode(tok.cpu().numpy())
        correct = ans == (a + b).cpu().numpy()
        reward = np.where(correct | (uni_ver < q.numpy()[:, None]), 1.0, 0.0)
        rew = tensor(reward, torch.float32)
        adv = group_advantages(rew.view(R, P, G), eps=float(hp0["adv_eps"])).view(R, F_)
        with torch.no_grad():
            h, lp, logp = policy.token_pass(params, a, b, tok, T, V, temp)
        return dict(a=a, b=b, tok=tok, ans=tensor(ans), correct=correct, reward=rew, adv=adv,
                    h=h, lp=lp, logp=logp)

    def pg_direction(ro):
        """u: the gradient of each sample's clipped term w.r.t. its logits at ratio 1."""
        return clipped_pg_logit_grad(ro["lp"].exp(), ro["tok"],
                                     ro["adv"][..., None].expand(-1, -1, T), clip=clip)

    def with_bias(h):
        return torch.cat([h, torch.ones_like(h[..., :1])], -1)

    evaluate_now(0)
    for step in range(S):
        draws = [g.permutation(train_idx.shape[1])[:2 * P] for g in roll_rng]
        uni = [g.random((2, F_, T + 1)) for g in roll_rng]
        pidx = np.stack([train_idx[i, d[:P]] for i, d in enumerate(draws)])
        probe_idx = np.stack([train_idx[i, d[P:P + Pp]] for i, d in enumerate(draws)])
        fr = rollouts(pidx, np.stack([u[0, :, :T] for u in uni]),
                      np.stack([u[0, :, T] for u in uni]))
        # the probe batch (the gain's reference gradient): other training prompts, same verifier
        Gp = Pp * G
        pb = rollouts(probe_idx, np.stack([u[1, :Gp, :T] for u in uni]),
                      np.stack([u[1, :Gp, T] for u in uni]))
        g_probe = torch.einsum("rntv,rnth->rvh", pg_direction(pb), with_bias(pb["h"])) / Gp

        fp = torch.as_tensor(~fr["correct"] & (fr["reward"].cpu().numpy() > 0),
                             dtype=torch.float32).to(dev)
        grp_mean = fr["reward"].view(R, P, G).mean(-1).repeat_interleave(G, 1)
        same = cbs.same_answer_fraction(fr["ans"].view(R, P, G)).view(R, F_)
        u_fresh = pg_direction(fr)
        gain_fresh = eta * torch.einsum("rntv,rvh,rnth->rn", u_fresh, g_probe, with_bias(fr["h"]))

        # ---------------------------------------------------------------- selection ----------
        valid = torch.as_tensor(np.arange(cmax)[None, :] < buf_size[:, None], device=dev)
        sel = torch.zeros(R, F_ + cmax, dtype=torch.bool, device=dev)
        sel[:, :F_] |= mask_of({"grpo", "dynamic-filter", "replay-heuristic"})[:, None]
        dyn = mask_of({"dynamic-filter"})
        if dyn.any():
            informative = (fr["reward"].view(R, P, G).amax(-1)
                           > fr["reward"].view(R, P, G).amin(-1)).repeat_interleave(G, 1)
            sel[:, :F_] &= ~dyn[:, None] | informative
        for i, m in enumerate(methods):
            if m == "grpo-random-k":
                sel[i, torch.as_tensor(sel_rng[i].choice(F_, k_sel, replace=False))] = True
        rep = mask_of({"replay-heuristic"})
        if rep.any() and cmax:
            recent = cbs.most_recent_positive(buf["recency"], buf["adv"], valid,
                                              int(hp0["replay_k"]))
            sel[:, F_:] |= rep[:, None] & recent
        if ens is not None:
            x_fresh = cbs.features(fr["reward"], fr["adv"], fr["logp"], fr["logp"],
                                   torch.zeros_like(fr["adv"]), grp_mean, same, True,
                                   float(hp0["age_scale"]))[cbs_t]
            buf_gain = torch.zeros(R, cmax, device=dev)
            if cmax:
                sub = {k: v[cbs_t] for k, v in buf.items()}
                sp = {k: v.detach()[cbs_t] for k, v in params.items()}
                with torch.no_grad():
                    hb, lpb, logpb = policy.token_pass(sp, sub["a"], sub["b"], sub["tok"], T, V,
                                                          temp)
                ratio = (logpb - sub["logp_old"]).exp()
                ub = clipped_pg_logit_grad(lpb.exp(), sub["tok"],
                                           sub["adv"][..., None].expand(-1, -1, T),
                                           ratio[..., None].expand(-1, -1, T), clip=clip)
                buf_gain[cbs_t] = eta * torch.einsum("rntv,rvh,rnth->rn", ub, g_probe[cbs_t],
                                                     with_bias(hb))
                x_buf = cbs.features(sub["reward"], sub["adv"], logpb, sub["logp_old"],
                                     step - sub["born"], sub["gmean"], sub["same"], False,
                                     float(hp0["age_scale"]))
                x_all = torch.cat([x_fresh, x_buf], 1)
            else:
                x_all = x_fresh
            mu, sd = ens.predict(x_all)
            score = mu + cbs.ucb_beta(float(hp0["beta0"]), step, float(hp0["beta_decay"])) * sd
            b_score = score[:, F_:].masked_fill(~valid[cbs_t], float("-inf"))
            # runs with a smaller capacity than the job's largest see only their own slots
            chosen = cbs.top_k_with_buffer_cap(score[:, :F_], b_score, k_sel, max_buf)
            sel[cbs_t] = chosen
            # bandit feedback: the selected arms' observed first-order gains
            gain_all = torch.cat([gain_fresh[cbs_t], buf_gain[cbs_t]], 1)
            ens.add(x_all, gain_all / eta, chosen)
            if step >= half:
                for j, i in enumerate(cbs_rows):
                    c = chosen[j]
                    pairs[i][0].append(mu[j][c].cpu().numpy())
                    pairs[i][1].append((gain_all[j][c] / eta).cpu().numpy())
            ens.fit(int(hp0["value_steps"]), int(hp0["value_batch"]))

        # ------------------------------------------------------------------- update ----------
        cand = {"a": torch.cat([fr["a"], buf["a"]], 1), "b": torch.cat([fr["b"], buf["b"]], 1),
                "tok": torch.cat([fr["tok"], buf["tok"]], 1),
                "adv": torch.cat([fr["adv"], buf["adv"]], 1),
                "logp_old": torch.cat([fr["logp"], buf["logp_old"]], 1),
                "reward": torch.cat([fr["reward"], buf["reward"]], 1),
                "fp": torch.cat([fp, buf["fp"]], 1)}
        kmax = int(sel.sum(1).max())
        order = torch.argsort(sel.to(torch.int8), dim=1, descending=True, stable=True)[:, :kmax]
        w = sel.gather(1, order).to(torch.float32)
        g = {k: (v.gather(1, order) if v.dim() == 2 else
                 v.gather(1, order[..., None].expand(-1, -1, v.shape[-1])))
             for k, v in cand.items()}
        _, _, logp = policy.token_pass(params, g["a"], g["b"], g["tok"], T, V, temp)
        loss = clipped_pg_loss(logp, g["logp_old"], g["adv"], clip=clip, weights=w).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()

        # ------------------------------------------------------------------- logs ------------
        pos_used = (w * (g["reward"] > 0)).sum(1)
        logs["fresh_pos"][:, step] = fr["reward"].sum(1).cpu().numpy()
        logs["fresh_fp"][:, step] = fp.sum(1).cpu().numpy()
        logs["used_pos"][:, step] = pos_used.cpu().numpy()
        logs["used_fp"][:, step] = (w * g["fp"]).sum(1).cpu().numpy()
        logs["used_n"][:, step] = w.sum(1).cpu().numpy()
        logs["used_buffer"][:, step] = sel[:, F_:].sum(1).cpu().numpy()
        tp = fr["reward"] * torch.as_tensor(fr["correct"], dtype=torch.float32).to(dev)
        logs["gain_fp_sum"][:, step] = (gain_fresh * fp).sum(1).cpu().numpy() / eta
        logs["gain_fp_n"][:, step] = fp.sum(1).cpu().numpy()
        logs["gain_tp_sum"][:, step] = (gain_fresh * tp).sum(1).cpu().numpy() / eta
        logs["gain_tp_n"][:, step] = tp.sum(1).cpu().numpy()

        # ------------------------------------------- buffer: fresh rollouts with A != 0 -------
        if cmax:
            new = {"a": fr["a"], "b": fr["b"], "tok": fr["tok"], "reward": fr["reward"],
                   "adv": fr["adv"], "logp_old": fr["logp"],
                   "born": torch.full_like(fr["adv"], float(step)), "fp": fp, "gmean": grp_mean,
                   "same": same,
                   "recency": step * F_ + torch.arange(F_, device=dev).expand(R, F_).float()}
            cbs.ring_insert(buf, buf_ptr, buf_size, cap, fr["adv"] != 0, new)

        if (step + 1) % int(hp0["eval_every"]) == 0 or step + 1 == S:
            evaluate_now(step + 1)
        if S >= 8 and (step + 1) % (S // 4) == 0:
            print(f"  RL step {step + 1}/{S}: loss {float(loss.detach()) / R:.4f}", flush=True)

    state = {}
    for i, r in enumerate(runs):
        state[f"{r.key}/sft_pass"] = pass_sft[i]
        state[f"{r.key}/sft_steps_taken"] = np.array([float(sft_taken[row_np[i]])])
        for k, v in logs.items():
            state[f"{r.key}/{k}"] = v[i]
        for k, v in params.items():
            state[f"{r.key}/policy/{k}"] = v.detach()[i].cpu().numpy()
        if i in pairs:
            pm, po = pairs[i]
            state[f"{r.key}/pred_gain"] = np.concatenate(pm) if pm else np.zeros(0)
            state[f"{r.key}/obs_gain"] = np.concatenate(po) if po else np.zeros(0)
    return state, curves


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    from icml26.stats import spearman

    p = cfg["params"]
    S, F_ = int(p["steps"]), int(p["prompts_per_step"]) * int(p["group_size"])
    last = slice(max(S - int(p["fp_window"]), 0), S)
    half = slice(S // 2, S)
    nf = int(p["final_evals"])
    lo, hi = (float(x) for x in p["premise_band"])

    def curve(run, metric):
        c = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                   & (curves["seed"] == run.seed) & (curves["metric"] == metric)]
        c = c.sort_values("step")
        return c["step"].to_numpy(), c["value"].to_numpy(float)

    finals = {}
    for r in runs:
        _, acc = curve(r, "train_acc")
        finals[(r.method, r.setting, r.seed)] = float(np.mean(acc[-nf:]))
    out = []
    for r in runs:
        k = r.key
        steps, acc = curve(r, "train_acc")
        _, held = curve(r, "held_acc")

        def rate(num, den, sl, k=k):
            d = state[f"{k}/{den}"][sl].sum()
            return float(state[f"{k}/{num}"][sl].sum() / d) if d > 0 else float("nan")

        m = {"final_train_acc": float(np.mean(acc[-nf:])),
             "final_held_acc": float(np.mean(held[-nf:])),
             "sft_train_acc": float(acc[0]), "sft_held_acc": float(held[0]),
             "sft_steps_taken": float(state[f"{k}/sft_steps_taken"][0]),
             "sft_pass_mean": float(state[f"{k}/sft_pass"].mean()),
             "sft_spread_frac": float(np.mean((state[f"{k}/sft_pass"] >= lo)
                                              & (state[f"{k}/sft_pass"] <= hi))),
             "fresh_rollouts": float(S * F_),
             "probe_rollouts": float(S * int(p["probe_prompts"]) * int(p["group_size"])),
             "fresh_fp_rate": rate("fresh_fp", "fresh_pos", last),
             "used_fp_rate": rate("used_fp", "used_pos", last),
             "used_per_step": float(state[f"{k}/used_n"].mean()),
             "buffer_share": rate("used_buffer", "used_n", slice(0, S)),
             "gain_fp_mean": rate("gain_fp_sum", "gain_fp_n", half),
             "gain_tp_mean": rate("gain_tp_sum", "gain_tp_n", half)}
        m["fp_ratio"] = (m["used_fp_rate"] / m["fresh_fp_rate"]
                         if m["fresh_fp_rate"] > 0 else float("nan"))
        if f"{k}/pred_gain" in state:
            m["gain_spearman"] = spearman(state[f"{k}/pred_gain"], state[f"{k}/obs_gain"])
            og = state[f"{k}/obs_gain"]
            # signal to noise of the arm rewards the value model learns from
            m["obs_gain_mean_over_sd"] = (float(og.mean() / og.std()) if len(og) and og.std() > 0
                                          else float("nan"))
        ref = finals.get(("grpo", r.setting, r.seed))
        if ref is not None:
            n, cens = rollouts_to_target(steps, acc, float(p["target_frac"]) * ref, F_)
            m["rollouts_to_target"] = n
            m["target_censored"] = float(cens)
        out.append(m)
    # efficiency ratio to GRPO of the same seed and setting
    by = {(r.method, r.setting, r.seed): m for r, m in zip(runs, out, strict=True)}
    for r, m in zip(runs, out, strict=True):
        g = by.get(("grpo", r.setting, r.seed))
        if g is not None and g.get("rollouts_to_target", 0) > 0:
            m["rollouts_ratio_vs_grpo"] = m["rollouts_to_target"] / g["rollouts_to_target"]
        elif g is not None:
            m["rollouts_ratio_vs_grpo"] = float("nan")
    return out
