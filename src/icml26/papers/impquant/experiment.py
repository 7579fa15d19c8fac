"""Stages of impquant: train the FP tiny VLM per seed, then PTQ + evaluation of every run.

One train job holds every run (``shard_by: []``): torch is imported once. Per seed: the
training, calibration and test sets come from their own streams of (paper, seed), shared by
every method and setting (paired comparisons); the FP model is trained once and frozen; its
vision tower and connector stay FP, so the LM inputs of the calibration and test sets are
computed once. Every (method, setting) of the seed then quantises the 12 LM Linear layers
sequentially and is evaluated on the same test set. ``evaluate`` reads the stored numbers.
"""

from __future__ import annotations

import time

import numpy as np

from icml26.seeding import derive_seed, torch_device

from . import scenes

TYPES = scenes.TYPES
MASKS = ("obj", "bg", "text")
N_HEATMAP = 3   # calibration images of the first seed kept for the weight heat map


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Nothing heavy: the data are generated per seed inside train (8000 images per seed do
    not belong in data.npz). Stores the vocabulary and answer names."""
    return {"vocab": np.array(scenes.VOCAB), "answers": np.array(scenes.ANSWERS)}


def _data(cfg, seed, split, n):
    return scenes.generate(np.random.default_rng(derive_seed(cfg["paper"], "data", seed,
                                                             split)), n)


def _setting(cfg, setting):
    s = cfg["settings"][setting] or {}
    return int(s["w_bits"]), s.get("a_bits"), s.get("group_size")


def n_calib(cfg, setting) -> int:
    return int((cfg["settings"][setting] or {}).get("n_calib", cfg["params"]["n_calib"]))


def pixels(patches):
    """Centred pixel values (x - 0.5) * 2 (input normalisation of the patch embedding)."""
    return (patches - 0.5) * 2.0


def train_fp(cfg, seed, train, dev, val=None):
    """The FP model of a seed: AdamW, linear warm-up + cosine over the step cap (epochs over a
    fixed set). Every ``val_every`` steps the model is scored on ``val`` (the seed's own
    validation stream, read by no claim); training stops at the first check whose validation
    accuracy reaches ``stop_acc`` (the spec's target FP accuracy), else at the cap.

    Returns (model, curve rows (metric, step, value), info {steps, val_acc, val_loss})."""
    import torch

    from icml26.lm.optim import AdamW, clip_grad_norm, warmup_cosine

    from .model import TinyVLM

    p = cfg["params"]
    torch.manual_seed(derive_seed(cfg["paper"], "init", seed) % 2**63)
    model = TinyVLM(d=p["d_model"], heads=p["heads"], ffn=p["ffn"], n_lm=p["lm_blocks"],
                    outliers=tuple(p["outlier_channels"]),
                    outlier_gain=p["outlier_gain"], pos_std=float(p["pos_std"])).to(dev)
    opt = AdamW(model.parameters(), p["lr"], betas=tuple(p["betas"]),
                weight_decay=p["weight_decay"])
    x = torch.as_tensor(pixels(train["patches"]))
    t, y = torch.as_tensor(train["text"]), torch.as_tensor(train["answer"])
    n, b = len(y), int(p["batch"])
    per_epoch = n // b
    steps = per_epoch * int(p["epochs"])
    gen = torch.Generator().manual_seed(derive_seed(cfg["paper"], "batches", seed) % 2**63)
    curve, block, order = [], [], None
    info = {"steps": steps, "val_acc": np.nan, "val_loss": np.nan}
    if val is not None:
        xv = torch.as_tensor(pixels(val["patches"])).to(dev)
        tv, yv = torch.as_tensor(val["text"]).to(dev), torch.as_tensor(val["answer"]).to(dev)
    model.train()
    for step in range(steps):
        if step % per_epoch == 0:
            order = torch.randperm(n, generator=gen)
        idx = order[(step % per_epoch) * b: (step % per_epoch + 1) * b]
        loss = torch.nn.functional.cross_entropy(
            model(x[idx].to(dev), t[idx].to(dev)), y[idx].to(dev))
        opt.zero_grad()
        loss.backward()
        clip_grad_norm(opt.params, float(p["clip"]))
        opt.step(warmup_cosine(step, steps, int(p["warmup"]), float(p["final_frac"])))
        block.append(loss.item())
        if len(block) == int(p["loss_every"]) or step == steps - 1:
            curve.append(("fp_train_loss", step + 1, float(np.mean(block))))
            block = []
        if val is not None and ((step + 1) % int(p["val_every"]) == 0 or step == steps - 1):
            model.eval()
            with torch.no_grad():
                logits = torch.cat([model(xv[i: i + 500], tv[i: i + 500])
                                    for i in range(0, len(yv), 500)])
            model.train()
            info = {"steps": step + 1,
                    "val_loss": float(torch.nn.functional.cross_entropy(logits, yv)),
                    "val_acc": float((logits.argmax(-1) == yv).float().mean())}
            curve.append(("fp_val_loss", step + 1, info["val_loss"]))
            curve.append(("fp_val_acc", step + 1, info["val_acc"]))
            if info["val_acc"] >= float(p["stop_acc"]):
                break
    model.eval()
    for prm in model.parameters():
        prm.requires_grad_(False)
    return model, curve, info


def answer_metrics(pred: np.ndarray, d: dict) -> dict[str, float]:
    """Accuracy overall and per type; POPE-style false-yes rate on absent EXIST probes; EXIST
    F1 with 'yes' as the positive class."""
    y, qt = d["answer"], d["qtype"]
    out = {"acc": float(np.mean(pred == y))}
    for k, name in enumerate(TYPES):
        out[f"acc_{name}"] = float(np.mean(pred[qt == k] == y[qt == k]))
    ex = qt == TYPES.index("exist")
    yes, no = scenes.A["yes"], scenes.A["no"]
    absent = ex & (y == no)
    out["false_yes"] = float(np.mean(pred[absent] == yes)) if absent.any() else np.nan
    tp = float(np.sum(ex & (y == yes) & (pred == yes)))
    fp = float(np.sum(ex & (y != yes) & (pred == yes)))
    fn = float(np.sum(ex & (y == yes) & (pred != yes)))
    out["exist_f1"] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn > 0 else np.nan
    return out


def _predict(model, h, batch=500):
    import torch

    with torch.no_grad():
        return np.concatenate([model.logits_from(h[i: i + batch]).argmax(-1).cpu().numpy()
                               for i in range(0, len(h), batch)])


def _method_weights(method, w_imp, w_vis, w_text, w_mod):
    return {"rtn": None, "gptq": None, "impq-noimp": None, "modality-w": w_mod,
            "impquant": w_imp, "impq-visonly": w_vis, "impq-textonly": w_text}[method]


def _calibration(cfg, model, seed, nc, dev, heatmap):
    """Calibration set of a seed (its first ``nc`` samples), its LM inputs, the token weights
    of every method and the token masks; appends heat-map rows to the list ``heatmap``."""
    import torch

    from . import ptq

    p = cfg["params"]
    cal = _data(cfg, seed, "calib", nc)
    with torch.no_grad():
        h_cal = model.lm_input(torch.as_tensor(pixels(cal["patches"])).to(dev),
                               torch.as_tensor(cal["text"]).to(dev))
    n_vis = scenes.N_VIS
    kw = {"k_similar": int(p["k_similar"]), "floor": float(p["vis_floor"]),
          "clip": tuple(p["weight_clip"])}
    w_imp = ptq.importance_weights(model, h_cal, n_vis, **kw).cpu()
    w_vis = ptq.importance_weights(model, h_cal, n_vis, parts="vis", **kw).cpu()
    w_text = ptq.importance_weights(model, h_cal, n_vis, parts="text", **kw).cpu()
    w_mod, lam_vis, lam_text = ptq.modality_weights(
        model, h_cal, torch.as_tensor(cal["answer"]).to(dev), n_vis)
    w_mod = w_mod.cpu()
    obj = torch.zeros(w_imp.shape, dtype=torch.bool)
    obj[:, :n_vis] = torch.as_tensor(cal["objmask"])
    vis = torch.zeros_like(obj)
    vis[:, :n_vis] = True
    masks = {"obj": obj.reshape(-1), "bg": (vis & ~obj).reshape(-1),
             "text": (~vis).reshape(-1)}
    wstats = {"imp_w_obj": float(w_imp[obj].mean()),
              "imp_w_bg": float(w_imp[vis & ~obj].mean()),
              "imp_w_text": float(w_imp[~vis].mean()), "mod_lambda_vis": lam_vis,
              "mod_lambda_text": lam_text}
    # the contextual redundancy r behind the visual weights (explains the C5 diagnostic):
    # mean cosine similarity to the k most similar other visual tokens, as ptq.importance_weights
    with torch.no_grad():
        v = h_cal[:, :n_vis].cpu()
        v = v / v.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        cos = v @ v.transpose(-1, -2) - 2.0 * torch.eye(n_vis)
        r = cos.topk(int(p["k_similar"]), dim=-1).values.mean(-1)
    om = torch.as_tensor(cal["objmask"])
    wstats |= {"red_obj": float(r[om].mean()), "red_bg": float(r[~om].mean()),
               "bg_at_floor": float(((1.0 - r[~om]) <= float(p["vis_floor"])).float().mean())}
    for j in range(w_imp.shape[1] - n_vis):
        wstats[f"imp_w_textpos{j}"] = float(w_imp[:, n_vis + j].mean())
    if heatmap is not None:  # curve rows (step: token or pixel) read by the heat-map figure
        k = min(N_HEATMAP, nc)
        img = (cal["patches"][:k].reshape(k, 8, 8, 4, 4, 3).transpose(0, 1, 3, 2, 4, 5)
               .reshape(k, 32 * 32, 3))
        for i in range(k):
            heatmap.extend(("heatmap_w", i, j, float(w_imp[i, j])) for j in range(n_vis))
            heatmap.extend(("heatmap_obj", i, j, float(cal["objmask"][i, j]))
                           for j in range(n_vis))
            for ch in range(3):
                heatmap.extend((f"heatmap_rgb{ch}", i, j, float(img[i, j, ch]))
                               for j in range(32 * 32))
    return cal, h_cal, w_imp, w_vis, w_text, w_mod, masks, wstats


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from . import ptq

    dev = torch_device(cfg["device"])
    p = cfg["params"]
    state: dict[str, np.ndarray] = {}
    rows: list[dict] = []
    heatmap: list[tuple] = []
    for si, seed in enumerate(sorted({r.seed for r in runs})):
        t0 = time.process_time()
        tr = _data(cfg, seed, "train", int(p["n_train"]))
        model, curve, info = train_fp(cfg, seed, tr, dev,
                                      _data(cfg, seed, "val", int(p["n_val"])))
        del tr
        te = _data(cfg, seed, "test", int(p["n_test"]))
        with torch.no_grad():
            h_te = model.lm_input(torch.as_tensor(pixels(te["patches"])).to(dev),
                                  torch.as_tensor(te["text"]).to(dev))
        fp = answer_metrics(_predict(model, h_te), te) | {
            "steps": float(info["steps"]), "val_acc": info["val_acc"],
            "val_loss": info["val_loss"]}
        fp_cpu = time.process_time() - t0
        cals = {}
        for run in [r for r in runs if r.seed == seed]:
            nc = n_calib(cfg, run.setting)
            if nc not in cals:
                cals[nc] = _calibration(cfg, model, seed, nc, dev,
                                        heatmap if si == 0 and not cals else None)
            _, h_cal, w_imp, w_vis, w_text, w_mod, masks, wstats = cals[nc]
            obj, vis = masks["obj"].reshape(w_imp.shape), ~masks["text"].reshape(w_imp.shape)
            t1 = time.process_time()
            w_bits, a_bits, group = _setting(cfg, run.setting)
            tw = _method_weights(run.method, w_imp, w_vis, w_text, w_mod)
            qmodel, diag = ptq.quantize_lm(
                model, h_cal, method=run.method, w_bits=w_bits, a_bits=a_bits,
                token_weights=None if tw is None else tw.to(dev), masks=masks,
                eval_weights=w_imp.to(dev), damp=float(p["damp"]), group_size=group,
                outlier_aware=run.method.startswith("impq"),
                outlier_frac=float(p["outlier_frac"]), outlier_min=int(p["outlier_min"]),
                act_percentile=float(p["act_percentile"]))
            res = answer_metrics(_predict(qmodel, h_te), te)
            row = {f"fp_{k}": v for k, v in fp.items()} | res
            row["degradation"] = fp["acc"] - res["acc"]
            for k in ("err_uniform", "err_impweighted") + tuple(f"err_{m}" for m in MASKS):
                row[k] = float(np.mean([d[k] for d in diag]))
            row["err_obj_over_bg"] = row["err_obj"] / row["err_bg"]
            if tw is not None:
                row["w_obj"], row["w_bg"] = float(tw[obj].mean()), float(tw[vis & ~obj].mean())
            else:
                row["w_obj"] = row["w_bg"] = 1.0
            row |= wstats
            row["cpu_s_fp_train"] = fp_cpu
            row["cpu_s_ptq_eval"] = time.process_time() - t1
            names = sorted(row)
            state[f"{run.key}/names"] = np.array(names)
            state[f"{run.key}/values"] = np.array([row[k] for k in names], float)
            state[f"{run.key}/layer_err_obj"] = np.array([d["err_obj"] for d in diag])
            state[f"{run.key}/layer_err_bg"] = np.array([d["err_bg"] for d in diag])
            for metric, step, v in curve:
                rows.append({**run.as_dict(), "step": step, "metric": metric, "value": v})
        print(f"seed {seed}: FP acc {fp['acc']:.3f}, {time.process_time() - t0:.1f} CPU-s",
              flush=True)
    first = next((r for r in runs if r.method == "impquant"), runs[0]) if runs else None
    for metric, i, j, v in heatmap:
        rows.append({**first.as_dict(), "step": j, "metric": f"{metric}_{i}", "value": v})
    return state, rows


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    out = []
    for run in runs:
        names = [str(x) for x in state[f"{run.key}/names"]]
        out.append(dict(zip(names, (float(v) for v in state[f"{run.key}/values"]),
                            strict=True)))
    return out
