"""Stages of vdw-gnn: clouds + fixed filter banks (prepare), readouts/baselines (train), metrics.

A setting is a task: S1 (modulated normals on ellipsoids; train aligned, test aligned and
rotated), S2 (tangent-field denoising on rotated ellipsoids) or wind (full profile: masked
smooth tangent field on a sphere). Data come from a fixed data seed (data id 0) shared by all
methods and seeds (paired); with params.data_per_seed (full) each seed gets its own data id.
Everything geometric (graphs, frames, operators, wavelet coefficients, the property checks)
is computed in prepare in float64; train fits the learnable parts and stores predictions on the
test sets and on a probe cloud under 10 random rigid motions (equivariance error).
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import rng as named_rng

from . import geometry as geo

METHODS = ("vdw-gnn", "scalar-dw", "gcn-xyz", "egnn")
N_PROBES = 10


def _p(cfg, setting):
    p = dict(cfg["params"])
    p.update(cfg["settings"][setting] or {})
    return p


def data_setting(cfg, setting) -> str:
    """The setting whose clouds a setting uses (``data: S1`` shares S1's data: paired runs)."""
    return (cfg["settings"][setting] or {}).get("data", setting)


def data_ids(cfg) -> list[int]:
    return list(cfg["seeds"]) if cfg["params"].get("data_per_seed", False) else [0]


def data_id(cfg, seed: int) -> int:
    return seed if cfg["params"].get("data_per_seed", False) else 0


def splits_of(kind: str) -> tuple[str, ...]:
    return ("train", "val", "test", "test_rot") if kind == "s1" else ("train", "val", "test")


def test_splits(kind: str) -> tuple[str, ...]:
    return ("test", "test_rot") if kind == "s1" else ("test",)


# ------------------------------------------------------------------------------------------
# tasks: clouds -> inputs, targets, metric mask; then the fixed filter banks
# ------------------------------------------------------------------------------------------
def _fiedler(W):
    """First non-trivial eigenvector of the symmetric normalised Laplacian, per cloud."""
    dinv = 1.0 / np.sqrt(W.sum(2))
    L = np.eye(W.shape[1]) - W * dinv[:, :, None] * dinv[:, None, :]
    _, vecs = np.linalg.eigh(L)
    return vecs[..., 1]


def process(kind: str, X, normals, field, observed, p, frame: bool = False) -> dict:
    """One stack of clouds through graph, frames, task inputs/targets and both filter banks.

    field: the given vector field (S2 noisy input / wind clean field), rotated with the cloud;
    observed: wind-task mask of observed nodes. S1 inputs come from the cloud itself.
    """
    J, k, so = int(p["J"]), int(p["k"]), bool(p["second_order"])
    W, M = geo.knn_weights(X, k)
    O, nhat = geo.local_frames(X, W)
    ones = np.ones(X.shape[:2] + (1,))
    metric_mask = np.ones(X.shape[:2])
    if kind == "s1":
        phi = _fiedler(W) ** 2
        mod = 1.0 + 0.9 * (2.0 * phi / phi.max(1, keepdims=True) - 1.0)
        Y = normals * mod[..., None]
        Vin = np.stack([X - X.mean(1, keepdims=True), nhat], axis=3)
        Sin = ones
    elif kind == "s2":
        Y, Vin, Sin = field[0], field[1][..., None], ones
    else:  # wind: predict the masked 20%
        Y = field[0]
        Vin = (field[0] * observed[..., None])[..., None]
        Sin = np.concatenate([ones, observed[..., None]], axis=2)
        metric_mask = 1.0 - observed
    out = {"X": X, "Y": Y, "Vin": Vin, "Sin": Sin, "mask": metric_mask, "adj": M}
    Q = geo.vector_operator(W, geo.transport(O, M))
    out["U_vdw"] = geo.vector_coefficients(Q, Vin, J, so)
    if frame:
        # frame ratio of the vector filter bank on random vectors (any v will do: the bound is
        # a property of the operator; fixed stream so that reruns are identical)
        v = np.random.default_rng(0).standard_normal((len(X), 3 * X.shape[1],
                                                      int(p["frame_vectors"])))
        fr = geo.frame_ratio(Q, v, J)
        out["frame_min"], out["frame_max"] = fr.min(1), fr.max(1)
    P = geo.scalar_operator(W)
    out["U_sdw"] = geo.scalar_coefficients_on_vectors(P, Vin, J, so)
    Sc = geo.wavelet_apply(P, Sin, J)                               # (B, J+2, N, Fs)
    out["S_coef"] = Sc.transpose(0, 2, 1, 3).reshape(len(X), X.shape[1], -1)
    return out


def process_chunked(kind, X, normals, field, observed, p, frame=False, chunk: int = 32) -> dict:
    parts = []
    for s in range(0, len(X), chunk):
        sl = slice(s, s + chunk)
        f = None if field is None else (field[0][sl], field[1][sl])
        o = None if observed is None else observed[sl]
        parts.append(process(kind, X[sl], normals[sl], f, o, p, frame))
    return {key: np.concatenate([q[key] for q in parts]) for key in parts[0]}


def make_task(kind: str, rng, n: int, p, rotate: bool):
    """Clouds of one split: X, analytic normals, and the task's given field / mask."""
    N = int(p["n_points"])
    if kind == "wind":
        X, normals = geo.sample_spheres(rng, n, N)
    else:
        X, normals, _ = geo.sample_ellipsoids(rng, n, N)
    if rotate:
        R = geo.random_rotations(rng, n)
        X, normals = np.einsum("bnk,blk->bnl", X, R), np.einsum("bnk,blk->bnl", normals, R)
    proj = np.eye(3) - normals[..., :, None] * normals[..., None, :]
    field, observed = None, None
    if kind == "s2":
        b = rng.standard_normal((n, 3))
        b /= np.linalg.norm(b, axis=1, keepdims=True)
        clean = np.einsum("bnkl,bl->bnk", proj, b)
        noise = float(p["noise_std"]) * rng.standard_normal(X.shape)
        field = (clean, clean + np.einsum("bnkl,bnl->bnk", proj, noise))
    elif kind == "wind":
        # smooth tangent field: projected linear field + rotational part n x (K x)  (INFERRED)
        A, K = rng.standard_normal((n, 3, 3)), rng.standard_normal((n, 3, 3))
        c = rng.standard_normal((n, 3))
        amb = np.einsum("bkl,bnl->bnk", A, X) + c[:, None, :]
        clean = np.einsum("bnkl,bnl->bnk", proj, amb)
        clean = clean + np.cross(normals, np.einsum("bkl,bnl->bnk", K, X))
        clean /= np.sqrt((clean**2).sum(2).mean(1))[:, None, None]
        observed = (rng.random((n, N)) >= float(p["mask_frac"])).astype(float)
        field = (clean, clean)
    return X, normals, field, observed


def _rigid(X, R, t):
    return np.einsum("nk,lk->nl", X, R) + t


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {}
    for setting in cfg["settings"]:
        if data_setting(cfg, setting) != setting:
            continue
        p = _p(cfg, setting)
        kind = p["kind"]
        for did in data_ids(cfg):
            r = named_rng(cfg["paper"], setting, did, "data")
            pre = f"{setting}/d{did}"
            sizes = {"train": p["n_train"], "val": p["n_val"], "test": p["n_test"]}
            raw = {s: make_task(kind, r, int(sizes[s]), p, rotate=kind != "s1")
                   for s in ("train", "val", "test")}
            if kind == "s1":  # the same test clouds under random SO(3) rotations
                X, nrm, _, _ = raw["test"]
                R = geo.random_rotations(r, len(X))
                raw["test_rot"] = (np.einsum("bnk,blk->bnl", X, R),
                                   np.einsum("bnk,blk->bnl", nrm, R), None, None)
            for split, args in raw.items():
                # frame ratios on the test clouds (100 random v each at default)
                frame = split == "test"
                for key, val in process_chunked(kind, *args, p, frame).items():
                    out[f"{pre}/{split}/{key}"] = val
            # probe: test cloud 0 and 10 random rigid motions of it (equivariance checks)
            Xt, nt, ft, ot = raw["test"]
            X0, n0 = Xt[0], nt[0]
            f0 = None if ft is None else (ft[0][0], ft[1][0])
            o0 = None if ot is None else ot[0]
            R = geo.random_rotations(r, N_PROBES)
            t = r.normal(0.0, 2.0, (N_PROBES, 3))
            Xs = np.stack([X0] + [_rigid(X0, R[i], t[i]) for i in range(N_PROBES)])
            ns = np.stack([n0] + [_rigid(n0, R[i], 0.0) for i in range(N_PROBES)])
            fs = None if f0 is None else tuple(
                np.stack([f] + [_rigid(f, R[i], 0.0) for i in range(N_PROBES)]) for f in f0)
            os_ = None if o0 is None else np.repeat(o0[None], N_PROBES + 1, axis=0)
            probe = process_chunked(kind, Xs, ns, fs, os_, p)
            for key, val in probe.items():
                out[f"{pre}/probe/{key}"] = val
            out[f"{pre}/probe/R"], out[f"{pre}/probe/t"] = R, t
            for name in ("U_vdw", "U_sdw"):
                out[f"{pre}/{name}_equiv_err"] = np.array(equivariance_error(probe[name], R))
            # spectrum of the lazy vector operator of the probe cloud (must lie in [0, 1])
            W, M = geo.knn_weights(Xs[:1], int(p["k"]))
            O, _ = geo.local_frames(Xs[:1], W)
            ev = np.linalg.eigvalsh(geo.vector_operator(W, geo.transport(O, M))[0])
            out[f"{pre}/q_spectrum"] = np.array([ev.min(), ev.max()])
    out["lower_frame_bound"] = np.array(geo.lower_frame_bound(int(cfg["params"]["J"])))
    return out


def equivariance_error(F, R) -> float:
    """mean_k ||F(g_k X) - F(X) R_k^T|| / ||F(X)|| for F (1 + K, N, 3, ...) (vectors on axis 2)."""
    base = F[0]
    errs = []
    for i in range(len(R)):
        target = np.einsum("nk...,lk->nl...", base, R[i])
        errs.append(np.linalg.norm(F[i + 1] - target) / np.linalg.norm(base))
    return float(np.mean(errs))


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
def _split(data, cfg, setting, seed, split):
    pre = f"{data_setting(cfg, setting)}/d{data_id(cfg, seed)}/{split}/"
    return {k[len(pre):]: v for k, v in data.items() if k.startswith(pre)}


def readout_inputs(method, d, stats=None):
    """Invariants (standardised with train statistics) and channel-scaled coefficients."""
    U = d["U_vdw"] if method == "vdw-gnn" else d["U_sdw"]
    Z = geo.invariants(U, d["S_coef"])
    if stats is None:
        stats = {"mu": Z.reshape(-1, Z.shape[-1]).mean(0),
                 "sd": Z.reshape(-1, Z.shape[-1]).std(0) + 1e-8,
                 "scale": np.sqrt((U**2).sum(2).mean(axis=(0, 1))) + 1e-8}
    # dividing channel c by one invariant number keeps the output exactly equivariant
    return {"Z": (Z - stats["mu"]) / stats["sd"], "U": U / stats["scale"]}, stats


def gcn_inputs(d):
    """Node features (coordinates as independent scalars) and D~^-1/2 (A + I) D~^-1/2."""
    B, N = d["X"].shape[:2]
    A = d["adj"].astype(float) + np.eye(N)
    dinv = 1.0 / np.sqrt(A.sum(2))
    H = np.concatenate([d["Vin"].reshape(B, N, -1), d["Sin"]], axis=2)
    return {"H": H, "A": A * dinv[:, :, None] * dinv[:, None, :]}


def egnn_inputs(d):
    """Edge list of the kNN graphs (stacked clouds) and the per-edge constants of EGNN."""
    B, N = d["X"].shape[:2]
    b, i, j = np.nonzero(d["adj"])
    deg = d["adj"].sum(2).reshape(-1, 1).astype(float)
    rel = d["X"][b, i] - d["X"][b, j]
    v = d["Vin"]
    einv = np.concatenate([(rel**2).sum(1, keepdims=True), (v[b, i] * v[b, j]).sum(1)], axis=1)
    return {"rel": rel, "vdst": v[b, j], "einv": einv, "s": d["Sin"].reshape(B * N, -1),
            "src": b * N + i, "dst": b * N + j, "deg": deg}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.rl.optim import Adam
    from icml26.seeding import torch_device

    from . import models

    torch.set_num_threads(1)
    # parameters, inputs and targets on the device; the point clouds, diffusion-wavelet
    # coefficients and metrics are numpy on the CPU (built before, read back after training)
    dev = torch_device(cfg["device"])
    state, curves = {}, []
    for run in runs:
        hp = _p(cfg, run.setting)
        kind = hp["kind"]
        sp = {s: _split(data, cfg, run.setting, run.seed, s)
              for s in splits_of(kind) + ("probe",)}
        gen = torch.Generator().manual_seed(run.rng_seed(cfg["paper"], "init") % 2**63)
        f32 = torch.float32
        if run.method in ("vdw-gnn", "scalar-dw"):
            inputs, stats = readout_inputs(run.method, sp["train"])
            build = {s: readout_inputs(run.method, d, stats)[0] for s, d in sp.items()}
            params = models.readout_init(gen, inputs["Z"].shape[-1], inputs["U"].shape[-1],
                                         int(hp["hidden"]), f32)
            forward = models.readout_forward
        elif run.method == "gcn-xyz":
            build = {s: gcn_inputs(d) for s, d in sp.items()}
            params = models.gcn_init(gen, build["train"]["H"].shape[-1], int(hp["gcn_hidden"]),
                                     f32)
            forward = models.gcn_forward
        elif run.method == "egnn":
            build = {s: egnn_inputs(d) for s, d in sp.items()}
            params = models.egnn_init(gen, build["train"]["s"].shape[-1],
                                      build["train"]["vdst"].shape[-1], int(hp["egnn_hidden"]), f32)
            forward = models.egnn_forward
        else:
            raise ValueError(f"unknown method {run.method!r}")
        # initialised on the CPU generator (the same weights on every device), then moved
        params = {k: v.to(dev) if torch.is_tensor(v) else v for k, v in params.items()}

        def tens(inp, dtype):
            return {k: torch.as_tensor(v, device=dev) if v.dtype.kind in "iu" else
                    torch.as_tensor(v, dtype=dtype, device=dev) for k, v in inp.items()}

        def target(d, dtype):
            y = torch.as_tensor(d["Y"], dtype=dtype, device=dev).reshape(-1, 3)
            return y, torch.as_tensor(d["mask"], dtype=dtype, device=dev).reshape(-1, 1)

        xtr, (ytr, mtr) = tens(build["train"], f32), target(sp["train"], f32)
        xva, (yva, mva) = tens(build["val"], f32), target(sp["val"], f32)
        learn = [v for v in params.values() if torch.is_tensor(v)]
        for v in learn:
            v.requires_grad_(True)
        opt = Adam(learn, lr=float(hp["lr"]))
        wd, every = float(hp["weight_decay"]), int(hp["val_every"])
        epochs = int(hp["epochs"])
        best, best_params = np.inf, None
        for epoch in range(1, epochs + 1):
            err = forward(params, xtr).reshape(-1, 3) - ytr
            loss = (mtr * err**2).sum() / (3 * mtr.sum())       # MSE over (masked) nodes
            grads = torch.autograd.grad(loss, learn)
            opt.step([g + wd * v for g, v in zip(grads, learn, strict=True)])  # L2 as in Adam
            if epoch % every == 0 or epoch == epochs:
                with torch.no_grad():
                    e = forward(params, xva).reshape(-1, 3) - yva
                    val = float((mva * e**2).sum() / (mva * yva**2).sum())
                if val < best:
                    best = val
                    best_params = {k: v.detach().clone() if torch.is_tensor(v) else v
                                   for k, v in params.items()}
                base = {**run.as_dict(), "step": epoch}
                curves += [{**base, "metric": "train_mse", "value": float(loss.detach())},
                           {**base, "metric": "val_relmse", "value": val}]
        # predictions in float64 with the best-validation parameters
        p64 = {k: v.double() if torch.is_tensor(v) else v for k, v in best_params.items()}
        with torch.no_grad():
            for s in test_splits(kind) + ("probe",):
                pred = forward(p64, tens(build[s], torch.float64))
                state[f"{run.key}/pred_{s}"] = pred.reshape(sp[s]["Y"].shape).cpu().numpy()
        if run.method == "vdw-gnn":   # per-cloud frame ratios, for the histogram (Fig. 2)
            for name in ("frame_min", "frame_max"):
                vals = sp["test"][name]
                curves += [{**run.as_dict(), "step": i, "metric": name, "value": float(x)}
                           for i, x in enumerate(vals)]
    return state, curves


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def relmse(pred, y, mask) -> float:
    """sum_i ||y_hat_i - y_i||^2 / sum_i ||y_i||^2 over the (masked) nodes of a test set."""
    return float((mask * ((pred - y) ** 2).sum(-1)).sum() / (mask * (y**2).sum(-1)).sum())


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    rows = []
    for run in runs:
        kind = _p(cfg, run.setting)["kind"]
        pre = f"{data_setting(cfg, run.setting)}/d{data_id(cfg, run.seed)}"
        row = {}
        for s in test_splits(kind):
            d = _split(data, cfg, run.setting, run.seed, s)
            row[f"relmse_{s}"] = relmse(state[f"{run.key}/pred_{s}"], d["Y"], d["mask"])
        row["rot_ratio"] = (row["relmse_test_rot"] / row["relmse_test"] if kind == "s1"
                            else np.nan)
        test = _split(data, cfg, run.setting, run.seed, "test")
        row["noisy_relmse"] = (relmse(test["Vin"][..., 0], test["Y"], test["mask"])
                               if kind != "s1" else np.nan)
        row["equiv_err"] = equivariance_error(state[f"{run.key}/pred_probe"],
                                              data[f"{pre}/probe/R"])
        row["vdw_coef_equiv_err"] = float(data[f"{pre}/U_vdw_equiv_err"])
        row["sdw_coef_equiv_err"] = float(data[f"{pre}/U_sdw_equiv_err"])
        row["frame_min"] = float(data[f"{pre}/test/frame_min"].min())
        row["frame_max"] = float(data[f"{pre}/test/frame_max"].max())
        row["q_eig_min"], row["q_eig_max"] = (float(x) for x in data[f"{pre}/q_spectrum"])
        vals = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                      & (curves["seed"] == run.seed) & (curves["metric"] == "val_relmse")]
        row["val_relmse_best"] = float(vals["value"].min()) if len(vals) else np.nan
        rows.append(row)
    return rows
