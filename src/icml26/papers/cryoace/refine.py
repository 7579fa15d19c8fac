"""Training-free baselines and metrics (numpy): real-space refinement, the Voxel-CNN's
soft-argmax read-out, and the static and dynamics metrics."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from .data import BOND


def bilinear(img, X) -> np.ndarray:
    """img (n, H, W) sampled bilinearly at X (n, ..., 2) in (y, x) pixels; zero outside."""
    n, H, W = img.shape
    pts = X.reshape(n, -1, 2)
    y0, x0 = np.floor(pts[..., 0]), np.floor(pts[..., 1])
    fy, fx = pts[..., 0] - y0, pts[..., 1] - x0
    b = np.arange(n)[:, None]
    out = np.zeros(pts.shape[:2])
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            yi, xi = (y0 + dy).astype(int), (x0 + dx).astype(int)
            inside = (yi >= 0) & (yi < H) & (xi >= 0) & (xi < W)
            v = img[b, np.clip(yi, 0, H - 1), np.clip(xi, 0, W - 1)]
            out += np.where(inside, wy * wx * v, 0.0)
    return out.reshape(X.shape[:-1])


def bond_gradient(X, bond: float = BOND) -> np.ndarray:
    """Gradient of sum_i (|x_{i+1} - x_i| - bond)^2 with respect to X (n, L, 2)."""
    d = X[:, 1:] - X[:, :-1]
    r = np.linalg.norm(d, axis=-1, keepdims=True)
    g = 2 * (r - bond) * d / np.maximum(r, 1e-9)
    out = np.zeros_like(X)
    out[:, 1:] += g
    out[:, :-1] -= g
    return out


def real_space_refine(M, X0, steps: int = 60, step: float = 0.3, smooth: float = 1.0,
                      restraint: float = 0.5) -> np.ndarray:
    """Gradient ascent of sum_i M_s(x_i) - restraint * sum_i (|x_{i+1} - x_i| - 3.8)^2, M_s the
    map smoothed by a Gaussian of `smooth` px. Each atom moves by step * gradient, clipped to
    `step` Angstrom per iteration (INFERRED reading of "step 0.3 A"). The map gradient is the
    central-difference gradient of M_s read bilinearly. Stands in for Phenix real-space
    refinement."""
    Ms = ndimage.gaussian_filter(np.asarray(M, dtype=float), (0, smooth, smooth))
    gy, gx = np.gradient(Ms, axis=(1, 2))
    X = np.array(X0, dtype=float)
    for _ in range(int(steps)):
        g = np.stack([bilinear(gy, X), bilinear(gx, X)], axis=-1) - restraint * bond_gradient(X)
        move = step * g
        norm = np.linalg.norm(move, axis=-1, keepdims=True)
        X = X + move * np.minimum(1.0, step / np.maximum(norm, 1e-12))
    return X


def soft_argmax(logits, X, radius: float = 4.0, repeats: int = 2) -> np.ndarray:
    """Voxel-CNN read-out: each atom moves to the softmax(logit)-weighted mean of the pixels
    within `radius` of its current position, `repeats` times (re-centring). logits (n, H, W),
    X (n, L, 2). The softmax over the disk's logits is INFERRED (temperature 1). Only the
    pixels of a (2r+3)^2 window around the atom are read (the disk lies inside it)."""
    n, H, W = logits.shape
    w = int(np.ceil(radius)) + 1
    off = np.stack(np.meshgrid(np.arange(-w, w + 1), np.arange(-w, w + 1), indexing="ij"),
                   axis=-1).reshape(-1, 2)                                    # (P, 2)
    lg = np.asarray(logits, dtype=float)
    b = np.arange(n)[:, None, None]
    X = np.array(X, dtype=float)
    for _ in range(int(repeats)):
        pix = np.rint(X)[:, :, None, :].astype(int) + off                     # (n, L, P, 2)
        d2 = ((pix - X[:, :, None, :]) ** 2).sum(-1)
        inside = ((d2 <= radius**2) & (pix[..., 0] >= 0) & (pix[..., 0] < H)
                  & (pix[..., 1] >= 0) & (pix[..., 1] < W))
        z = lg[b, np.clip(pix[..., 0], 0, H - 1), np.clip(pix[..., 1], 0, W - 1)]
        z = np.where(inside, z, -np.inf)
        zmax = z.max(-1, keepdims=True)
        empty = ~np.isfinite(zmax)                  # no pixel in the disk: stay put
        wt = np.where(inside, np.exp(z - np.where(empty, 0.0, zmax)), 0.0)
        new = (wt[..., None] * pix).sum(-2) / np.maximum(wt.sum(-1)[..., None], 1e-300)
        X = np.where(empty, X, new)
    return X


# ------------------------------------------------------------------------------------------
# metrics
# ------------------------------------------------------------------------------------------
def rmsd(P, T, axis=(-1, -2)) -> np.ndarray:
    """Calpha RMSD with known correspondence, no superposition (the map's frame)."""
    return np.sqrt(((np.asarray(P) - np.asarray(T)) ** 2).sum(-1).mean(-1))


def recall(P, T, cutoff: float = 1.0) -> float:
    """Fraction of atoms within `cutoff` Angstrom of the truth."""
    return float((np.linalg.norm(np.asarray(P) - T, axis=-1) <= cutoff).mean())


def bond_validity(P, lo: float = 3.5, hi: float = 4.1) -> float:
    """Fraction of consecutive pairs with distance in [lo, hi]."""
    d = np.linalg.norm(np.diff(np.asarray(P), axis=-2), axis=-1)
    return float(((d >= lo) & (d <= hi)).mean())


def dynamics(samples, XA, XB, n_flex: int, resolved: float = 1.5) -> dict:
    """Heterogeneous-map metrics of S samples per map: samples (n, S, L, 2), states (n, L, 2).

    coverage RMSD = 1/2 sum_{c in A, B} min_j RMSD_flex(sample_j, state_c), averaged over maps;
    both-states-resolved rate = fraction of maps where both states have a sample within
    `resolved` flex-RMSD; rigid RMSD = mean over samples and maps of the RMSD of the atoms
    before the flexible segment (identical in both states)."""
    flex = slice(-n_flex, None)
    ra = rmsd(samples[:, :, flex], XA[:, None, flex])                 # (n, S)
    rb = rmsd(samples[:, :, flex], XB[:, None, flex])
    cov = 0.5 * (ra.min(1) + rb.min(1))
    both = (ra.min(1) <= resolved) & (rb.min(1) <= resolved)
    rigid = rmsd(samples[:, :, :-n_flex], XA[:, None, :-n_flex])
    return {"coverage_rmsd": float(cov.mean()), "both_resolved": float(both.mean()),
            "rigid_rmsd": float(rigid.mean())}


# ------------------------------------------------------------------------------------------
# analytic compute per map (multiply and add each count as one FLOP)
# ------------------------------------------------------------------------------------------
BILINEAR_FLOPS = 11    # 4 corner weights from 2 fractions (3) + 4 products + 3 sums + 1
N_SAMPLES = 21         # 17 read-out points + 4 finite-difference points


def _dense(n_in: int, n_out: int) -> int:
    return 2 * n_in * n_out + n_out


def flops_sampling(p, K: int) -> float:
    """The atom-centric feature read-out alone: L atoms x 21 bilinear samples x K passes, plus
    the gradient (4) and neighbour vectors (8) per atom and pass."""
    return float(int(p["n_atoms"]) * K * (N_SAMPLES * BILINEAR_FLOPS + 4 + 8))


def flops_atom_centric(p, K: int) -> float:
    """Whole CryoACE-mini per map for K recycles: read-out, encoder 23-64-64, index embedding
    8-64, conv rounds over the chain (kernel x 64 -> 64, residual), heads 64 -> 3, coordinate
    update."""
    h, k = int(p["hidden"]), int(p["conv_kernel"])
    per_atom = (_dense(23, h) + _dense(h, h) + _dense(8, h) + h
                + int(p["conv_rounds"]) * (_dense(k * h, h) + h) + _dense(h, 3) + 2)
    return flops_sampling(p, K) + float(int(p["n_atoms"]) * K * per_atom)


def flops_voxel(p) -> float:
    """Voxel-CNN forward over all grid^2 pixels (3x3 convs, channels c, layers n, 1 -> c -> ..
    -> 1) plus the soft-argmax read-out (disk of voxel_radius, repeats times, ~6 per pixel)."""
    G, c, n = int(p["grid"]), int(p["voxel_channels"]), int(p["voxel_layers"])
    chans = [1] + [c] * (n - 1) + [1]
    conv = sum(_dense(9 * a, b) for a, b in zip(chans[:-1], chans[1:], strict=True)) * G * G
    disk = np.pi * float(p["voxel_radius"]) ** 2
    return float(conv + int(p["voxel_repeats"]) * int(p["n_atoms"]) * disk * 6)
