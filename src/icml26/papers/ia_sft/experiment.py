"""Stages of ia-sft: prepare (scenes + autoencoder pretraining), train (self-training with
each selection rule), evaluate (test accuracy, kappa, change F1 and pseudo-label quality).

Runs are (method, setting = scene variant, seed). prepare builds each (setting, seed) scene
from streams named by its variant and seed only, pretrains the spectral autoencoder on all
pixels of both dates (one model per scene, shared by every method), and stores the codes,
the raw-spectra PCA features, the change map and the labelled pixels. Every method of a scene
sees the same labelled pixels, the same random Fourier features and the same unlabelled pool
(paired comparisons). Random-low and Oracle take IA-SFT's per-round count, so a shard that
holds them but not IA-SFT recomputes IA-SFT's selection (deterministic, no random stream).
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed
from icml26.vision.metrics import cohen_kappa, f1_binary

from . import features as ft
from . import scene as sc
from .head import AFCDHead
from .selection import HeadFactory, self_train

# method -> (feature framework, selection rule, threshold key, final decoder)
METHOD_SPECS = {
    "supervised": ("ae", None, None, "local"),
    "conf-high": ("ae", "conf", "tau_high", "local"),
    "conf-0.7": ("ae", "conf", "tau_low", "local"),
    "random-low": ("ae", "random", None, "local"),
    "ia-sft": ("ae", "ia", None, "local"),
    "oracle": ("ae", "oracle", None, "local"),
    "ia-sft-rawfeat": ("raw", "ia", None, "local"),
    "conf-high-rawfeat": ("raw", "conf", "tau_high", "local"),
    "ia-sft-afcd": ("ae", "ia", None, "afcd"),
}


def P(cfg):
    return cfg["params"]


def setting_params(cfg, setting):
    s = cfg["settings"][setting]
    return (int(s["variant"]), list(s["n_blobs"]), s.get("decoder", "local"),
            int(s.get("n_labelled", P(cfg)["n_labelled"])))


def _scenes(cfg, runs=None):
    from icml26.grid import runs as grid_runs

    return sorted({(r.setting, r.seed) for r in (runs or grid_runs(cfg))})


def _rng(*parts):
    return np.random.default_rng(derive_seed(*parts))


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    p = P(cfg)
    paper = cfg["paper"]
    out: dict[str, np.ndarray] = {}
    for setting, seed in _scenes(cfg):
        variant, n_blobs, _, n_lab = setting_params(cfg, setting)
        s = sc.make_scene(_rng(paper, "scene", variant, seed), p, n_blobs)
        lab = sc.labelled_pixels(_rng(paper, "labels", variant, seed, n_lab), len(s["y"]), n_lab)
        # the "foundation model": pretrained on all pixels of both dates, no labels
        x = np.concatenate([s["x1"], s["x2"]])
        mu, sd = x.mean(0), x.std(0)
        ae = ft.SpectralAutoencoder(p["ae_hidden"], p["ae_code"], p["ae_steps"], p["ae_lr"],
                                    p["ae_batch"])
        ae.fit((x - mu) / sd, _rng(paper, "autoencoder", variant, seed))
        pre = f"{setting}/{seed}/"
        out[pre + "y"] = s["y"].astype(np.int8)
        out[pre + "lab"] = lab.astype(np.int64)
        out[pre + "e1"] = ae.encode((s["x1"] - mu) / sd).astype(np.float32)
        out[pre + "e2"] = ae.encode((s["x2"] - mu) / sd).astype(np.float32)
        out[pre + "raw"] = ft.raw_change_features(s["x1"], s["x2"], p["raw_pca"]).astype(np.float32)
        out[pre + "ae_loss"] = ae.loss_
        out[pre + "ae_mse_all"] = np.array(ae.mse((x - mu) / sd))
    return out


class Scene:
    """One (setting, seed): features, heads and the cached selections shared by methods."""

    def __init__(self, cfg, data, setting, seed):
        self.cfg, self.p, self.setting, self.seed = cfg, P(cfg), setting, seed
        pre = f"{setting}/{seed}/"
        self.y = data[pre + "y"].astype(np.int64)
        self.lab = data[pre + "lab"].astype(np.int64)
        self.unl = np.setdiff1d(np.arange(len(self.y)), self.lab)
        self.size = int(self.p["size"])
        self._data, self._pre = data, pre
        self._z, self._fac, self._rff, self._sel = {}, {}, {}, {}

    def seed_of(self, *parts):
        return derive_seed(self.cfg["paper"], *parts, self.setting, self.seed)

    def z(self, fw):
        if fw not in self._z:
            d, pre = self._data, self._pre
            if fw == "ae":
                z = ft.ae_change_features(d[pre + "e1"].astype(float), d[pre + "e2"].astype(float),
                                          self.size, int(self.p["neighbourhood"]))
            elif fw == "raw":
                z = d[pre + "raw"].astype(float)
            else:   # AFCD's global branch: mean of the autoencoder features over a window
                z = ft.window_mean(self.z("ae"), self.size, int(self.p["afcd_window"]))
            self._z[fw] = z
        return self._z[fw]

    def rff(self, fw):
        """The framework's RBF random features (bandwidth: median pairwise distance)."""
        if fw not in self._rff:
            z = self.z(fw)
            bw = ft.median_distance(z, np.random.default_rng(self.seed_of("bandwidth", fw)),
                                    self.p["bandwidth_pixels"])
            self._rff[fw] = ft.RandomFourierFeatures(self.p["n_rff"], bw).fit(
                z.shape[1], np.random.default_rng(self.seed_of("rff", fw)))
        return self._rff[fw]

    def factory(self, fw):
        if fw not in self._fac:
            self._fac[fw] = HeadFactory(self.z(fw), self.rff(fw), self.p, self.p["head"],
                                        lambda tag, fw=fw: self.seed_of("mlp", fw, *tag))
        return self._fac[fw]

    def selection(self, fw, rule, tau_key=None, run=None):
        """(rounds, final training set); deterministic rules cached per framework."""
        key = (fw, rule, tau_key)
        if key in self._sel:
            return self._sel[key]
        fac = self.factory(fw)
        if rule in ("random", "oracle"):
            ia_rounds, _ = self.selection(fw, "ia")
            counts = [int(r.low.sum()) for r in ia_rounds]
            rng = np.random.default_rng(run.rng_seed(self.cfg["paper"], "pick"))
            return self_train(fac, self.y, self.lab, self.unl, self.p, rule, counts=counts,
                              rng=rng, tag=(rule,))
        tau = None if tau_key is None else self.p[tau_key]
        out = self_train(fac, self.y, self.lab, self.unl, self.p, rule, tau=tau,
                         tag=(rule, str(tau_key)))
        self._sel[key] = out
        return out

    def final_decision(self, fw, train_set, decoder):
        idx, yv, wv = train_set
        if decoder == "afcd":
            phi_l = self.rff(fw).transform(self.z(fw))
            phi_g = self.rff("global").transform(self.z("global"))
            head = AFCDHead(self.p["alpha"]).fit(phi_l[idx], phi_g[idx], yv, wv)
            return head.decision(phi_l[self.unl], phi_g[self.unl]), head.gate_
        head, phi = self.factory(fw).fit(idx, yv, wv, ("final",))
        return head.decision(phi[self.unl]), np.nan


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    scenes: dict = {}
    for run in runs:
        key = (run.setting, run.seed)
        if key not in scenes:
            scenes = {key: Scene(cfg, data, *key)}   # one scene in memory at a time
        s = scenes[key]
        fw, rule, tau_key, decoder = METHOD_SPECS[run.method]
        decoder = "afcd" if setting_params(cfg, run.setting)[2] == "afcd" else decoder
        rounds, train_set = s.selection(fw, rule, tau_key, run)
        decision, gate = s.final_decision(fw, train_set, decoder)
        k = run.key
        state[f"{k}/pred"] = (decision > 0).astype(np.int8)
        state[f"{k}/gate"] = np.array(gate)
        state[f"{k}/n_rounds"] = np.array(len(rounds))
        for r, rd in enumerate(rounds):
            correct = rd.label == s.y[s.unl[rd.idx]]
            for name, arr in (("idx", s.unl[rd.idx]), ("label", rd.label), ("low", rd.low),
                              ("abs_logit", rd.abs_logit), ("cand_idx", s.unl[rd.cand_idx]),
                              ("cand_label", rd.cand_label), ("influence", rd.influence)):
                state[f"{k}/r{r}/{name}"] = arr
            state[f"{k}/r{r}/counts"] = np.array([rd.n_hc, rd.n_cand])
            row = {"method": run.method, "setting": run.setting, "seed": run.seed, "step": r + 1}
            curves += [{**row, "metric": "n_accepted", "value": float(len(rd.idx))},
                       {**row, "metric": "n_low", "value": float(rd.low.sum())},
                       {**row, "metric": "prec_all", "value": float(correct.mean())
                        if len(correct) else np.nan},
                       {**row, "metric": "prec_low", "value": float(correct[rd.low].mean())
                        if rd.low.any() else np.nan}]
    return state, curves


def _prec(correct, mask=None):
    c = correct if mask is None else correct[mask]
    return float(c.mean()) if len(c) else np.nan


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    rows = []
    for run in runs:
        pre, k = f"{run.setting}/{run.seed}/", run.key
        y = data[pre + "y"].astype(np.int64)
        lab = data[pre + "lab"]
        unl = np.setdiff1d(np.arange(len(y)), lab)
        pred = state[f"{k}/pred"].astype(np.int64)
        truth = y[unl]
        row = {"oa": float(np.mean(pred == truth)), "kappa": cohen_kappa(pred, truth),
               "f1": f1_binary(pred, truth), "frac_changed": float(y.mean()),
               "n_lab_changed": float(y[lab].sum()), "n_labelled": float(len(lab)),
               "ae_mse": float(data[pre + "ae_mse_all"]), "gate": float(state[f"{k}/gate"])}
        n_rounds = int(state[f"{k}/n_rounds"])
        if n_rounds:
            r = n_rounds - 1   # the set the final head is trained on
            idx, lbl = state[f"{k}/r{r}/idx"], state[f"{k}/r{r}/label"]
            low = state[f"{k}/r{r}/low"].astype(bool)
            absl = state[f"{k}/r{r}/abs_logit"]
            correct = lbl == y[idx]
            n_hc, n_cand = state[f"{k}/r{r}/counts"]
            row.update({"n_accepted": float(len(idx)), "n_hc": float(n_hc),
                        "n_low": float(low.sum()), "n_candidates": float(n_cand),
                        "acc_frac_changed": float(lbl.mean()) if len(lbl) else np.nan,
                        "low_frac_changed": float(lbl[low].mean()) if low.any() else np.nan,
                        "pool_frac_changed": float(truth.mean()),
                        "prec_all": _prec(correct), "prec_hc": _prec(correct, ~low),
                        "prec_low": _prec(correct, low),
                        "div_all": float(absl.mean()) if len(absl) else np.nan,
                        "div_low": float(absl[low].mean()) if low.any() else np.nan})
            infl = state[f"{k}/r{r}/influence"]
            if len(infl):
                cidx, clab = state[f"{k}/r{r}/cand_idx"], state[f"{k}/r{r}/cand_label"]
                ok = clab == y[cidx]
                row.update({"prec_candidates": _prec(ok),
                            "infl_mean_correct": float(infl[ok].mean()) if ok.any() else np.nan,
                            "infl_mean_wrong": float(infl[~ok].mean()) if (~ok).any() else np.nan,
                            "frac_wrong_positive": float(np.mean(infl[~ok] > 0))
                            if (~ok).any() else np.nan,
                            "frac_negative": float(np.mean(infl < 0))})
        rows.append(row)
    return rows
