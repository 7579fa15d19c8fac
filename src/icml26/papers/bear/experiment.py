"""Stages of bear: Mini-BEAR items per seed, the zoo of tiny scorers and their variants (train),
per-skill scores, the hierarchical diagnosis, flip rates and tool-call accounting (evaluate).

A setting is a zoo model (image-encoder width w, training items n_train); a method is a
variant of it: ``plain`` (the "MLLM": image encoder + scorer), ``agent`` (Mini-BEAR-Agent,
official mode: visual + spatial tools for every skill but task planning), ``agent-all`` (the
same with tools for every skill: an ablation that keeps claim 3 a real test), ``oracle``
(perfect perception: the ground-truth object list replaces the image encoder) and ``prior``
(question and options only). One train job runs every run: the items of a seed are generated
once (from the seed alone, so every method and zoo model of a seed sees the same items) and
all seeds of a (setting, method) train together, stacked.

Every answer, tool call and token goes through ``icml26.agents.run_batch`` with a turn budget
(``max_turns``, official 10); the verifier is the world's answer key, the per-item score the
official one (hit-in-mask for pointing, IoU with the mask for boxes).
"""

from __future__ import annotations

import numpy as np

from icml26.agents.worlds import scenes as W
from icml26.errors import ConfigError
from icml26.seeding import derive_seed

from . import features as fx

METHODS = ("plain", "agent", "agent-all", "oracle", "prior")
REASONING = ("T1", "T2", "S1", "S2", "K1", "K2", "L1", "L2")
CATS = ("P", "B", "T", "S", "K", "L")
KIND = {"plain": "plain", "agent": "agent", "agent-all": "agent", "oracle": "oracle",
        "prior": "prior"}
TOOL_MODE = {"agent": "official", "agent-all": "all"}


def check_params(p: dict) -> None:
    if p["n_objects"][0] > p["n_objects"][1] or p["sizes"][0] > p["sizes"][1]:
        raise ConfigError("bear: params n_objects and sizes must be [low, high] with low <= high")
    if p["n_objects"][1] > fx.N_SLOTS:
        raise ConfigError(f"bear: params n_objects allows at most {fx.N_SLOTS} objects")


def prepare(cfg: dict, rng: np.random.Generator) -> dict:
    """Items are generated in train from each seed's own stream; here only the skill table."""
    check_params(cfg["params"])
    return {"skills": np.array(W.SKILLS), "seeds": np.array(sorted(cfg["seeds"]), np.int64)}


# ------------------------------------------------------------------------------------------
# items of one seed
# ------------------------------------------------------------------------------------------
def make_items(cfg: dict, seed: int, n_train: int) -> dict:
    """Training pool (uniform over skills), validation, test (n_test per skill), 1-px shifted
    test copies, and the test items' perception sub-questions (with their parent index)."""
    p = cfg["params"]
    gen = W.Generator(np.random.default_rng(derive_seed(cfg["paper"], "data", seed)),
                      height=p["size"], width=p["size"], frames=p["frames"],
                      n_objects=tuple(p["n_objects"]), sizes=tuple(p["sizes"]),
                      speeds=tuple(p["speeds"]), noise_sd=p["noise_sd"])
    # training and validation items carry no sub-questions (only the test diagnosis uses them)
    train = gen.mixed(W.SKILLS, n_train, subs=False)
    val = gen.mixed(W.SKILLS, p["n_val"], subs=False)
    test = gen.items(W.SKILLS, p["n_test_per_skill"])
    shift_rng = np.random.default_rng(derive_seed(cfg["paper"], "shift", seed))
    dirs = ((1, 0), (-1, 0), (0, 1), (0, -1))
    shifted = [W.translate(it, *dirs[int(k)]) for it, k in
               zip(test, shift_rng.integers(4, size=len(test)), strict=True)]
    subs, parent = [], []
    for i, it in enumerate(test):
        subs += it.subs
        parent += [i] * len(it.subs)
    return {"train": train, "val": val, "test": test, "shifted": shifted, "subs": subs,
            "parent": np.array(parent, np.int64)}


def images(items) -> np.ndarray:
    """(N, 3F, H, W) float32: frames stacked on channels."""
    out = np.stack([it.frames() for it in items])           # (N, F, H, W, 3)
    return np.ascontiguousarray(out.transpose(0, 1, 4, 2, 3).reshape(
        len(items), -1, out.shape[2], out.shape[3]))


def tool_arrays(world, items, mode: str) -> np.ndarray:
    """Tool features of training items as the agent sees them (zeros where no tool is called:
    task planning in the official mode)."""
    H, F = items[0].scene.height, items[0].scene.frames
    out = np.zeros((len(items), fx.N_SLOTS, fx.slot_dim(F, True)), np.float32)
    for i, it in enumerate(items):
        if mode == "official" and it.skill[0] == "K":
            continue
        st = world.start(it)
        world.execute(st, W.Call("visual"))
        world.execute(st, W.Call("spatial"))
        out[i] = fx.tool_slots(st["records"], st["facts"], F, H)
    return out


def option_scores(items) -> np.ndarray:
    """(N, 4) official score of each option (hit / IoU for P, B; 1 for the key elsewhere)."""
    return np.array([[W.ScenesWorld.score(it, k) for k in range(4)] for it in items],
                    np.float32)


# ------------------------------------------------------------------------------------------
# training (torch)
# ------------------------------------------------------------------------------------------
def _take(torch, arrs: dict, idx, sidx) -> dict:
    """Rows ``idx`` (S_models, B) of per-seed arrays (S_seeds, N, ...); ``sidx`` (S_models,)
    gives each stacked model's seed."""
    rows = sidx[:, None]
    return {k: v[rows, idx] for k, v in arrs.items()}


def fit(cfg, kind, params, tr: dict, va: dict, orders, runs, dev, curves, encoder=None,
        sidx=None, groups=None):
    """Adam (lr, batch of the config) on the stacked models, until the validation loss stops
    improving: every model keeps its parameters of its lowest validation loss; a group (a zoo
    model x variant: the seeds that used to train together) stops when none of its seeds has
    improved for ``patience`` epochs, or at the ``epochs`` cap. The same rule for every variant
    and zoo model (validation data only). Several groups of the same shape train as one
    stacked computation (``sidx``: each model's seed row in ``tr``/``va``; ``groups``: its
    group); a stopped group is dropped from the stack (parameters and Adam state), so stacking
    changes no result and costs no extra epochs. Also records each model's per-skill validation
    accuracy at its best epoch."""
    import torch

    from icml26.rl.optim import Adam

    from . import models

    hp = cfg["params"]
    S = len(runs)
    N = tr["key"].shape[1]
    sidx = torch.arange(S, device=dev) if sidx is None else torch.as_tensor(sidx, device=dev)
    groups = np.zeros(S, np.int64) if groups is None else np.asarray(groups)
    B = int(hp["batch_size"])
    best = {k: v.detach().clone() for k, v in params.items()}
    best_loss = torch.full((S,), float("inf"), device=dev)
    best_epoch = np.zeros(S, np.int64)
    since = {g: 0 for g in np.unique(groups)}
    live = np.arange(S)                    # models still training (a stopped group is dropped)
    params = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    learn = list(params.values())
    opt = Adam(learn, lr=hp["lr"])
    vkey = va["key"][sidx]
    for epoch in range(1, int(hp["epochs"]) + 1):
        lsidx = sidx[torch.as_tensor(live, device=dev)]
        perm = torch.as_tensor(np.stack([orders[i].permutation(N) for i in live]), device=dev)
        tot = torch.zeros(len(live), device=dev)
        for s in range(0, N, B):
            batch = _take(torch, tr, perm[:, s:s + B], lsidx)
            logits = models.score(params, kind, batch, encoder, hp["size"])
            loss = models.loss_fn(logits, batch["key"])
            opt.step(torch.autograd.grad(loss, learn))
            with torch.no_grad():
                tot += torch.nn.functional.cross_entropy(
                    logits.transpose(1, 2), batch["key"], reduction="none").sum(1)
        logits = predict(params, kind, va, encoder, hp["size"], logits=True, sidx=lsidx)
        lkey = vkey[torch.as_tensor(live, device=dev)]
        with torch.no_grad():
            vloss = torch.nn.functional.cross_entropy(
                logits.transpose(1, 2), lkey, reduction="none").mean(1)
            acc = (logits.argmax(-1) == lkey).float().mean(1)
            better = vloss < best_loss[live] - 1e-4
            bet = better.cpu().numpy()
            best_loss[live[bet]] = vloss[better]
            for k, v in params.items():
                best[k][live[bet]] = v.detach()[better]
        best_epoch[live[bet]] = epoch
        for j, i in enumerate(live):
            run = runs[i]
            curves += [{**run.as_dict(), "step": epoch, "metric": "train_loss",
                        "value": float(tot[j]) / N},
                       {**run.as_dict(), "step": epoch, "metric": "val_loss",
                        "value": float(vloss[j])},
                       {**run.as_dict(), "step": epoch, "metric": "val_acc",
                        "value": float(acc[j])}]
        keep = np.ones(len(live), bool)
        for g in np.unique(groups[live]):
            mem = groups[live] == g
            since[g] = 0 if bool(bet[mem].any()) else since[g] + 1
            if since[g] >= int(hp["patience"]):
                keep[mem] = False
        if not keep.any():
            break
        if not keep.all():                 # drop the stopped groups' rows (Adam state too)
            kt = torch.as_tensor(keep, device=dev)
            params = {k: v.detach()[kt].requires_grad_(True) for k, v in params.items()}
            learn, old = list(params.values()), opt
            opt = Adam(learn, lr=hp["lr"])
            opt.m = [m[kt] for m in old.m]
            opt.v = [v[kt] for v in old.v]
            opt.t = old.t
            live = live[keep]
    vpred = predict(best, kind, va, encoder, hp["size"], sidx=sidx).cpu().numpy()
    vok = vpred == vkey.cpu().numpy()
    vsk = va["q_skill"][sidx].cpu().numpy()
    for i, run in enumerate(runs):
        curves.append({**run.as_dict(), "step": 0, "metric": "best_epoch",
                       "value": float(best_epoch[i])})
        for j, sk in enumerate(W.SKILLS):
            sel = vsk[i] == j
            curves.append({**run.as_dict(), "step": 0, "metric": f"val_acc_{sk}",
                           "value": float(vok[i][sel].mean()) if sel.any() else np.nan})
    for v in learn:
        v.requires_grad_(False)
    return best


def predict(params, kind, arrs: dict, encoder=None, size: int = 24, chunk: int = 400,
            logits: bool = False, img_src=None, sidx=None):
    """Argmax (or logits) over options, in chunks; ``sidx``: each stacked model's seed row of
    ``arrs`` (default: one model per row). ``img_src`` with ``arrs["parent"]``: the image (or,
    for a dict, the frozen encoder's maps) of each row is its parent item's (perception
    sub-questions)."""
    import torch

    from . import models

    N = arrs["key"].shape[1]
    S = next(iter(params.values())).shape[0]
    sidx = torch.arange(S) if sidx is None else sidx
    out = []
    with torch.no_grad():
        for s in range(0, N, chunk):
            part = {k: v[sidx, s:s + chunk] for k, v in arrs.items() if k != "parent"}
            if img_src is not None:
                par = arrs["parent"][sidx, s:s + chunk]
                rows = sidx[:, None]
                if isinstance(img_src, dict):
                    part.update({k: v[rows, par] for k, v in img_src.items()})
                else:
                    part["img"] = img_src[rows, par]
            z = models.score(params, kind, part, encoder, size)
            out.append(z if logits else z.argmax(-1))
    return torch.cat(out, 1)


def encoder_maps(encoder, img, chunk: int = 400, emb_only: bool = False) -> dict:
    """The frozen encoder's conv1 integral image, conv2 map and embedding of every item, once
    (S, N, ...); ``emb_only``: the embedding alone (what the agent reads)."""
    import torch

    from . import models

    outs = []
    with torch.no_grad():
        for s in range(0, img.shape[1], chunk):
            m1, m2, emb = models.cnn_maps(encoder, img[:, s:s + chunk])
            if emb_only:
                outs.append((emb,))
                continue
            outs.append((models.integral(m1), m2, emb))
    if emb_only:
        return {"emb": torch.cat([o[0] for o in outs], 1)}
    return {k: torch.cat([o[i] for o in outs], 1) for i, k in enumerate(("ii", "m2", "emb"))}


def _gens(torch, cfg, runs, stream):
    return [torch.Generator().manual_seed(r.rng_seed(cfg["paper"], stream) % 2**63) for r in runs]


def _orders(cfg, runs):
    return [np.random.default_rng(r.rng_seed(cfg["paper"], "batches")) for r in runs]


def agent_policy(items, mode: str, answer):
    """The Mini-BEAR-Agent controller (INFERRED: one round of tools, then answer): visual, then
    spatial, then answer; planning items get no tools in the official mode (PlanningPrompt
    carries no tool descriptions). ``answer(ids, states)`` scores the ready episodes in one
    forward pass and returns their option indices."""
    def policy(states, trajs, live):
        calls, ready = [None] * len(live), []
        for j, (st, i) in enumerate(zip(states, live, strict=True)):
            tools = mode == "all" or (mode == "official" and items[i].skill[0] != "K")
            if tools and st["records"] is None:
                calls[j] = W.Call("visual")
            elif tools and st["facts"] is None:
                calls[j] = W.Call("spatial")
            else:
                ready.append(j)
        if ready:
            ks = answer([live[j] for j in ready], [states[j] for j in ready])
            for j, k in zip(ready, ks, strict=True):
                calls[j] = W.Call("answer", (int(k),))
        return calls
    return policy


def seed_arrays(world, d: dict, H: int, F: int) -> dict:
    """Render every item of a seed ONCE: the images of every split, and on the same frames the
    visual and spatial tools (memoised in the world's cache, so the agent loop's calls at test
    time and the oracle reuse them), the tools' object lists of the train/val items (all-tools
    mode; the official mode zeroes task planning) and the ground-truth object lists."""
    out = {}
    for split in ("train", "val", "test", "shifted"):
        its = d[split]
        img = np.empty((len(its), 3 * F, H, H), np.float32)
        tools = np.zeros((len(its), fx.N_SLOTS, fx.slot_dim(F, True)), np.float32)
        run_tools = split != "shifted"
        for i, it in enumerate(its):
            fr = it.frames()
            img[i] = fr.transpose(0, 3, 1, 2).reshape(3 * F, H, H)
            if run_tools:
                world.cache[("visual", it.uid, it.shift)] = W.detect(fr)
                if split in ("train", "val"):
                    st = world.start(it)
                    world.execute(st, W.Call("visual"))
                    world.execute(st, W.Call("spatial"))
                    tools[i] = fx.tool_slots(st["records"], st["facts"], F, H)
        out[split] = {"img": img,
                      "slots": np.stack([fx.object_list(it) for it in its])}
        if split in ("train", "val"):
            out[split]["tool_agent-all"] = tools
            off = tools.copy()
            off[np.array([it.skill[0] == "K" for it in its])] = 0.0
            out[split]["tool_agent"] = off
    return out


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    """One pass over every run. Shared work is done once: items, images, tools and object lists
    per seed; the frozen encoder's maps per (zoo model, seed, item); the models of the same
    shape (every seed of a variant; agent with agent-all; oracle and prior over zoo models with
    the same training size) train as one stacked computation; every variant is scored on the
    test, shifted and sub-question items in one pass."""
    import time

    import torch

    from icml26.agents import Budget, oracle_rate, run_batch
    from icml26.seeding import torch_device

    from . import models

    clock = {"t": time.process_time()}
    timing = {}

    def lap(name):
        now = time.process_time()
        timing[name] = timing.get(name, 0.0) + now - clock["t"]
        clock["t"] = now

    dev = torch_device(cfg["device"])
    torch.set_num_threads(1)
    hp = cfg["params"]
    check_params(hp)
    H, F = int(hp["size"]), int(hp["frames"])
    state, curves = {}, []
    settings = sorted({r.setting for r in runs})
    seeds = sorted({r.seed for r in runs})
    n_max = max(int(cfg["settings"][z]["n_train"]) for z in settings)
    S = len(seeds)
    by = {(z, m): sorted([r for r in runs if r.setting == z and r.method == m],
                         key=lambda r: r.seed) for z in settings for m in METHODS}
    for (z, m), rs in by.items():
        if rs and [r.seed for r in rs] != seeds:
            raise ValueError(f"bear: method {m} of {z} runs seeds {[r.seed for r in rs]}; "
                             f"every method of a zoo model runs the same seeds {seeds}")

    # items, images, tools and object lists: once per seed ----------------------------------
    per_seed = [make_items(cfg, s, n_max) for s in seeds]
    lap("items")
    # seeds differ in their number of sub-questions: pad to the longest (rows marked invalid)
    n_sub = [len(d["subs"]) for d in per_seed]
    for d, n in zip(per_seed, n_sub, strict=True):
        pad = max(n_sub) - n
        d["subs"] = d["subs"] + d["subs"][:1] * pad
        d["parent"] = np.concatenate([d["parent"], np.zeros(pad, np.int64)])
    worlds = [W.ScenesWorld(cache=True) for _ in seeds]
    shared = [seed_arrays(w, d, H, F) for w, d in zip(worlds, per_seed, strict=True)]
    lap("render+tools")
    arr = {}
    for split in ("train", "val", "test", "shifted", "subs"):
        cols = [fx.item_arrays(d[split]) for d in per_seed]
        arr[split] = {k: np.stack([c[k] for c in cols]) for k in cols[0]}
        if split != "subs":
            for k in shared[0][split]:
                arr[split][k] = np.stack([sh[split][k] for sh in shared])
    del shared
    parent = np.stack([d["parent"] for d in per_seed])
    opt_score = np.stack([option_scores(d["test"]) for d in per_seed])
    skill = arr["test"]["q_skill"]
    orate = [oracle_rate(w, d["test"], max_steps=int(hp["max_turns"]),
                         budgets=[Budget(calls=int(hp["max_turns"])) for _ in d["test"]])
             for w, d in zip(worlds, per_seed, strict=True)]
    T = {sp: models.as_tensors(a, dev) for sp, a in arr.items()}
    sub_parent = torch.as_tensor(parent, device=dev)
    rows = torch.arange(S, device=dev)[:, None]
    T["subs"]["parent"] = sub_parent
    T["subs"]["slots"] = T["test"]["slots"][rows, sub_parent]
    QKEYS = ("key", "q_skill", "q_obj", "q_aux", "o_geo", "o_isgeo", "o_isobj", "o_tok")
    lap("arrays+oracle")

    def subset(sp, n=None, extra=()):
        return {k: T[sp][k][:, :n] for k in QKEYS + tuple(extra)}

    def stacked(init_kind, rs_groups, **kw):
        """Initial parameters of the stacked models of several (zoo model, variant) groups,
        each model from its own run's stream: identical to training each group alone."""
        gens, sidx, groups, runs_ = [], [], [], []
        for g, rs in enumerate(rs_groups):
            gens += _gens(torch, cfg, rs, "init")
            sidx += list(range(len(rs)))
            groups += [g] * len(rs)
            runs_ += rs
        p = models.init(gens, init_kind, **kw)
        return {k: v.to(dev) for k, v in p.items()}, np.array(sidx), np.array(groups), runs_

    preds = {z: {} for z in settings}          # (zoo model) -> method -> split -> (S, N)
    agents, maps = {}, {}
    # the zoo models ("MLLMs") and their frozen maps --------------------------------------------
    for z in settings:
        zcfg = cfg["settings"][z]
        n_tr = int(zcfg["n_train"])
        base = by[(z, "plain")] or by[(z, "agent")] or by[(z, "agent-all")]
        if not base:
            continue
        p, _, _, _ = stacked("plain", [base], width=int(zcfg["width"]), frames=F, size=H)
        enc = fit(cfg, "plain", p, subset("train", n_tr, ("img",)),
                  subset("val", None, ("img",)), _orders(cfg, base), by[(z, "plain")] or [],
                  dev, curves) if by[(z, "plain")] else None
        if enc is None:                      # agents without a plain run: train it unrecorded
            enc = fit(cfg, "plain", p, subset("train", n_tr, ("img",)),
                      subset("val", None, ("img",)), _orders(cfg, base), base, dev, [])
        lap(f"fit plain {z}")
        # the frozen encoder's maps of every item, once (plain test/subs and both agents)
        maps[z] = {sp: encoder_maps(enc, T[sp]["img"][:, :n_tr] if sp == "train"
                                    else T[sp]["img"], emb_only=sp != "test")
                   for sp in ("train", "val", "test")}
        shifted = encoder_maps(enc, T["shifted"]["img"])
        preds[z]["plain"] = {
            "test": predict(enc, "plain", {**subset("test"), **maps[z]["test"]}, None, H),
            "shifted": predict(enc, "plain", {**subset("shifted"), **shifted}, None, H),
            "subs": predict(enc, "plain", subset("subs", None, ("parent",)), None, H,
                            img_src=maps[z]["test"])}
        del shifted
        lap("encoder maps + plain predictions")
    # oracle perception and question prior: neither reads the zoo model's image encoder, so
    # zoo models of the same training size share one trained model per seed (the first zoo
    # model's runs train it; the others get its predictions and a copy of its curves) ------
    for m in ("oracle", "prior"):
        ex = ("slots",) if m == "oracle" else ()
        sizes = sorted({int(cfg["settings"][z]["n_train"]) for z in settings if by[(z, m)]})
        for n_tr in sizes:
            zs = [z for z in settings if by[(z, m)] and int(cfg["settings"][z]["n_train"]) == n_tr]
            rs = by[(zs[0], m)]
            p, _, _, _ = stacked(m, [rs], frames=F, slot_dim=fx.slot_dim(F, False))
            own = []
            p = fit(cfg, m, p, subset("train", n_tr, ex), subset("val", None, ex),
                    _orders(cfg, rs), rs, dev, own)
            out = {sp: predict(p, m, subset(sp, None, ex), None, H)
                   for sp in ("test", "shifted", "subs")}
            for z in zs:
                preds[z][m] = out
                curves += [{**r, "setting": z} for r in own]
            lap(f"fit+predict {m}")
    # Mini-BEAR-Agent: frozen encoder maps + tool outputs; agent and agent-all stacked --------
    for z in settings:
        am = [m for m in ("agent", "agent-all") if by[(z, m)]]
        if not am:
            continue
        zcfg = cfg["settings"][z]
        n_tr = int(zcfg["n_train"])
        rgroups = [by[(z, m)] for m in am]
        p, sidx, groups, rs = stacked("agent", rgroups, width=int(zcfg["width"]), frames=F,
                                      slot_dim=fx.slot_dim(F, True))
        # per-seed rows of both tool modes: row g * S + seed
        # the agent reads the frozen encoder's embedding only (spec: [image embedding;
        # tool-output embedding])
        tr = {**subset("train", n_tr), "emb": maps[z]["train"]["emb"]}
        va = {**subset("val"), "emb": maps[z]["val"]["emb"]}
        tr = {k: torch.cat([v] * len(am)) for k, v in tr.items()}
        va = {k: torch.cat([v] * len(am)) for k, v in va.items()}
        tr["slots"] = torch.cat([T["train"][f"tool_{m}"][:, :n_tr] for m in am])
        va["slots"] = torch.cat([T["val"][f"tool_{m}"] for m in am])
        orders = sum((_orders(cfg, r) for r in rgroups), [])
        p = fit(cfg, "agent", p, tr, va, orders, rs, dev, curves,
                sidx=groups * S + sidx, groups=groups)
        for g, m in enumerate(am):
            agents[(z, m)] = {k: v[groups == g] for k, v in p.items()}
        del tr, va
        lap("fit agents")
    # every answer through the shared agent loop (turn budget, verifier) ----------------------
    for z in settings:
        for m in METHODS:
            for si, run in enumerate(by[(z, m)]):
                items = per_seed[si]["test"]
                if (z, m) in agents:
                    answer = _agent_answer(torch, agents[(z, m)], maps[z]["test"], si,
                                           items, T["test"], hp, dev)
                    mode = TOOL_MODE[m]
                else:
                    fixed = preds[z][m]["test"][si].cpu().numpy()
                    def answer(ids, sts, f=fixed):
                        return [f[i] for i in ids]
                    mode = "none"
                trajs = run_batch(worlds[si], items, agent_policy(items, mode, answer),
                                  max_steps=int(hp["max_turns"]),
                                  budgets=[Budget(calls=int(hp["max_turns"])) for _ in items],
                                  task_ids=[it.uid for it in items])
                k = run.key
                state[f"{k}/answer"] = np.array([-1 if t.answer is None else t.answer
                                                 for t in trajs], np.int64)
                state[f"{k}/success"] = np.array([t.success for t in trajs], np.int8)
                state[f"{k}/calls"] = np.array([t.n_calls for t in trajs], np.int64)
                state[f"{k}/tool_calls"] = np.array(
                    [sum(a != "answer" for a in t.actions()) for t in trajs], np.int64)
                state[f"{k}/tokens"] = np.array([t.tokens for t in trajs], np.int64)
                state[f"{k}/flops"] = np.array([t.flops for t in trajs], np.float64)
                state[f"{k}/stop_final"] = np.array([t.stop == "final" for t in trajs], np.int8)
                state[f"{k}/skill"] = skill[si]
                state[f"{k}/key"] = arr["test"]["key"][si]
                state[f"{k}/opt_score"] = opt_score[si]
                state[f"{k}/oracle_rate"] = np.array([orate[si]])
                if m in preds[z]:
                    state[f"{k}/pred_shifted"] = preds[z][m]["shifted"][si].cpu().numpy()
                    state[f"{k}/sub_ok"] = (preds[z][m]["subs"][si].cpu().numpy()
                                            == arr["subs"]["key"][si]).astype(np.int8)[:n_sub[si]]
                    state[f"{k}/sub_parent"] = parent[si][:n_sub[si]]
    lap("agent loop")
    print("bear train CPU-s by phase: " + ", ".join(f"{k} {v:.1f}" for k, v in timing.items()),
          flush=True)
    return state, curves


def _agent_answer(torch, params, tmaps, si, items, Ttest, hp, dev):
    """Answer function of one seed's agent: the tools' object list from the episode states
    (zeros when no tool was called), the frozen image encoder's maps (computed once), one
    forward pass for the ready episodes."""
    from . import models

    one = {k: v[si:si + 1] for k, v in params.items()}
    H, F = hp["size"], hp["frames"]

    def answer(ids, states):
        feats = np.zeros((1, len(ids), fx.N_SLOTS, fx.slot_dim(F, True)), np.float32)
        for j, st in enumerate(states):
            if st["facts"] is not None:
                feats[0, j] = fx.tool_slots(st["records"], st["facts"], F, H)
        idx = torch.as_tensor(ids, device=dev)
        batch = {k: Ttest[k][si:si + 1, idx] for k in
                 ("q_skill", "q_obj", "q_aux", "o_geo", "o_isgeo", "o_isobj", "o_tok")}
        batch["emb"] = tmaps["emb"][si:si + 1, idx]
        batch["slots"] = torch.as_tensor(feats, device=dev)
        out = []
        with torch.no_grad():
            for s in range(0, len(ids), 400):
                part = {k: v[:, s:s + 400] for k, v in batch.items()}
                out.append(models.score(one, "agent", part, None, H)[0].argmax(-1).cpu().numpy())
        return np.concatenate(out) if out else np.zeros(0, np.int64)
    return answer


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def skill_table(skill_ids, answer, key, opt_score):
    """Per-skill accuracy (key) and official score (hit / IoU / exact; no answer = 0)."""
    ok = (answer == key) & (answer >= 0)
    sc = np.where(answer >= 0, opt_score[np.arange(len(answer)), np.clip(answer, 0, 3)], 0.0)
    acc = {s: float(ok[skill_ids == i].mean()) for i, s in enumerate(W.SKILLS)}
    score = {s: float(sc[skill_ids == i].mean()) for i, s in enumerate(W.SKILLS)}
    return acc, score


def conditional(skill_ids, correct, sub_ok, parent):
    """acc(reasoning | all perception sub-questions right) and acc(... | some wrong)."""
    n = len(skill_ids)
    all_ok = np.ones(n, bool)
    has = np.zeros(n, bool)
    np.logical_and.at(all_ok, parent, sub_ok.astype(bool))
    has[parent] = True
    reason = np.isin(skill_ids, [W.SKILLS.index(s) for s in REASONING]) & has
    right, wrong = reason & all_ok, reason & ~all_ok
    return (float(correct[right].mean()) if right.any() else np.nan,
            float(correct[wrong].mean()) if wrong.any() else np.nan,
            float(right.sum() / max(reason.sum(), 1)))


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    rows = []
    for run in runs:
        k = run.key
        sk, ans, key = state[f"{k}/skill"], state[f"{k}/answer"], state[f"{k}/key"]
        acc, score = skill_table(sk, ans, key, state[f"{k}/opt_score"])
        row = {f"acc_{s}": acc[s] for s in W.SKILLS}
        row.update({f"score_{s}": score[s] for s in W.SKILLS})
        for c in CATS:
            mem = [s for s in W.SKILLS if s[0] == c]
            row[f"score_{c}"] = float(np.mean([score[s] for s in mem]))
            row[f"acc_{c}"] = float(np.mean([acc[s] for s in mem]))
            sel = np.isin(sk, [W.SKILLS.index(s) for s in mem])
            row[f"tool_calls_{c}"] = float(state[f"{k}/tool_calls"][sel].mean())
        row["overall"] = float(np.mean([score[s] for s in W.SKILLS]))       # macro, 12 skills
        row["overall_acc"] = float(np.mean([acc[s] for s in W.SKILLS]))
        row["reasoning_acc"] = float(np.mean([acc[s] for s in REASONING]))
        row["perception_score"] = float(np.mean([score[s] for s in W.PERCEPTION_SKILLS]))
        row["success_rate"] = float(state[f"{k}/success"].mean())
        row["tool_calls"] = float(state[f"{k}/tool_calls"].mean())
        row["calls"] = float(state[f"{k}/calls"].mean())
        row["tokens"] = float(state[f"{k}/tokens"].mean())
        row["flops"] = float(state[f"{k}/flops"].mean())
        row["unanswered"] = float((ans < 0).mean())
        row["oracle_rate"] = float(state[f"{k}/oracle_rate"][0])
        chance = state[f"{k}/opt_score"].mean(1)
        row["chance_overall"] = float(np.mean([chance[sk == i].mean()
                                               for i in range(len(W.SKILLS))]))
        if f"{k}/sub_ok" in state:
            correct = (ans == key).astype(float)
            r, w, frac = conditional(sk, correct, state[f"{k}/sub_ok"], state[f"{k}/sub_parent"])
            row["acc_given_perception_right"], row["acc_given_perception_wrong"] = r, w
            row["frac_perception_right"] = frac
            row["sub_acc"] = float(state[f"{k}/sub_ok"].mean())
            flip = state[f"{k}/pred_shifted"] != ans
            for c in CATS:
                sel = np.isin(sk, [W.SKILLS.index(s) for s in W.SKILLS if s[0] == c])
                row[f"flip_{c}"] = float(flip[sel].mean())
            tl = np.isin(sk, [W.SKILLS.index(s) for s in W.SKILLS if s[0] in "TL"])
            row["flip_TL"] = float(flip[tl].mean())
            row["flip_S"] = row["flip_S"]
        else:
            for c in ("acc_given_perception_right", "acc_given_perception_wrong",
                      "frac_perception_right", "sub_acc", "flip_TL") + \
                    tuple(f"flip_{c}" for c in CATS):
                row[c] = np.nan
        own = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                     & (curves["seed"] == run.seed) & (curves["metric"] == "val_acc")]
        row["val_acc_last"] = float(own.sort_values("step")["value"].iloc[-1]) if len(own) \
            else np.nan
        rows.append(row)
    return rows
