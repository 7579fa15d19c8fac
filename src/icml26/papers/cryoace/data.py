"""The 2-D "toy cryo-EM" world (numpy): Calpha-like chains, local-resolution profiles, density
maps, and two-state heterogeneous maps. All of it is INFERRED (the spec's adaptation to 2-D).

Coordinates are (y, x) in pixels of 1 Angstrom, pixel centres at 0 .. G-1; a stack of chains is
(n, L, 2). Every random draw comes from the Generator passed in.
"""

from __future__ import annotations

import numpy as np

from icml26.vision.images import gaussian_spots

BOND = 3.8          # consecutive Calpha distance (Angstrom), exact
CLASH = 4.0         # non-adjacent atoms (|i - j| >= 2) must be at least this far apart
BOX = 40.0          # atoms stay inside the central BOX x BOX square of the map


def min_nonadjacent_distance(X) -> np.ndarray:
    """Per chain, the smallest distance between atoms i, j with |i - j| >= 2."""
    X = np.asarray(X, dtype=float)
    L = X.shape[-2]
    d = np.linalg.norm(X[..., :, None, :] - X[..., None, :, :], axis=-1)
    far = np.abs(np.arange(L)[:, None] - np.arange(L)[None, :]) >= 2
    return np.where(far, d, np.inf).min(axis=(-1, -2))


def inside_box(X, grid: int, box: float = BOX) -> np.ndarray:
    """Per chain: every atom inside the central box x box square of a grid x grid map."""
    c = (grid - 1) / 2.0
    return (np.abs(np.asarray(X) - c) <= box / 2).all(axis=(-1, -2))


def valid(X, grid: int, box: float = BOX) -> np.ndarray:
    return (min_nonadjacent_distance(X) >= CLASH) & inside_box(X, grid, box)


def _candidates(rng, n: int, L: int, grid: int, max_turn_deg: float) -> np.ndarray:
    """n random chains: bonds of exactly BOND, turning angles U(-max, max) between successive
    bonds, a random overall rotation, centroid at the map centre."""
    turn = np.deg2rad(rng.uniform(-max_turn_deg, max_turn_deg, (n, L - 2)))
    start = rng.uniform(0.0, 2 * np.pi, (n, 1))
    heading = np.concatenate([start, start + np.cumsum(turn, axis=1)], axis=1)     # (n, L-1)
    steps = BOND * np.stack([np.sin(heading), np.cos(heading)], axis=-1)
    X = np.concatenate([np.zeros((n, 1, 2)), np.cumsum(steps, axis=1)], axis=1)
    return X - X.mean(axis=1, keepdims=True) + (grid - 1) / 2.0


def chains(rng, n: int, L: int, grid: int, max_turn_deg: float = 100.0,
           box: float = BOX) -> np.ndarray:
    """n valid chains (rejection sampling: clash-free and inside the central box)."""
    out, have = [], 0
    while have < n:
        c = _candidates(rng, max(2 * (n - have), 16), L, grid, max_turn_deg)
        c = c[valid(c, grid, box)]
        out.append(c)
        have += len(c)
    return np.concatenate(out)[:n]


def resolution_profiles(rng, n: int, L: int, lo: float = 2.5, span: float = 3.5) -> np.ndarray:
    """R_i = lo + span * u_i, u a smooth curve along the chain: the sum of 3 random sinusoids
    over i, min-max scaled to [0, 1]. Amplitudes U(0.5, 1), frequencies U(0.3, 2) cycles per
    chain, phases U(0, 2 pi) (INFERRED: the spec does not give them)."""
    i = np.arange(L) / L
    amp = rng.uniform(0.5, 1.0, (n, 3, 1))
    freq = rng.uniform(0.3, 2.0, (n, 3, 1))
    phase = rng.uniform(0.0, 2 * np.pi, (n, 3, 1))
    u = (amp * np.sin(2 * np.pi * freq * i + phase)).sum(axis=1)
    u = (u - u.min(1, keepdims=True)) / (np.ptp(u, axis=1, keepdims=True) + 1e-12)
    return lo + span * u


def clean_density(X, R, grid: int, width: float = 0.35) -> np.ndarray:
    """M(x) = sum_i exp(-|x - x_i|^2 / (2 (width R_i)^2)) on the grid x grid pixel grid."""
    return np.stack([gaussian_spots((grid, grid), x, width * r, 1.0) for x, r in zip(X, R,
                                                                                    strict=True)])


def finish(M, rng, noise: float = 0.08) -> np.ndarray:
    """White noise N(0, (noise max M)^2) per pixel, then each map standardised."""
    M = M + noise * M.max(axis=(1, 2), keepdims=True) * rng.standard_normal(M.shape)
    M = M - M.mean(axis=(1, 2), keepdims=True)
    return M / M.std(axis=(1, 2), keepdims=True)


def static_maps(rng, n: int, p: dict) -> dict:
    """n static (single-conformation) maps with their chains and resolution profiles."""
    L, G = int(p["n_atoms"]), int(p["grid"])
    X = chains(rng, n, L, G, p["max_turn_deg"], p["box"])
    R = resolution_profiles(rng, n, L, p["res_min"], p["res_max"] - p["res_min"])
    M = finish(clean_density(X, R, G, p["sigma_per_res"]), rng, p["noise"])
    return {"X": X, "R": R, "M": M.astype(np.float32)}


def rotate_about(X, hinge: int, theta) -> np.ndarray:
    """Atoms hinge+1 .. L-1 rotated rigidly by theta (radians, per chain) about atom hinge."""
    X = np.array(X, dtype=float)
    c, s = np.cos(theta)[:, None], np.sin(theta)[:, None]
    piv = X[:, hinge:hinge + 1]
    d = X[:, hinge + 1:] - piv
    X[:, hinge + 1:] = piv + np.stack([c * d[..., 0] - s * d[..., 1],
                                       s * d[..., 0] + c * d[..., 1]], axis=-1)
    return X


def heterogeneous_maps(rng, n: int, p: dict) -> dict:
    """Two-state maps: a static parent chain whose last n_flex atoms are rotated rigidly about
    the atom before them by +theta (state A) and -theta (state B), theta ~ U(30, 45) degrees;
    both states clash-free and inside the box. M = (M_A + M_B) / 2 with R_i = flex_res on the
    flexible atoms (heterogeneity blurs them) and the generated profile elsewhere."""
    L, G, F = int(p["n_atoms"]), int(p["grid"]), int(p["n_flex"])
    hinge = L - F - 1
    parents, A, B, th = [], [], [], []
    have = 0
    while have < n:
        m = max(2 * (n - have), 16)
        X = chains(rng, m, L, G, p["max_turn_deg"], p["box"])
        theta = np.deg2rad(rng.uniform(p["theta_min_deg"], p["theta_max_deg"], m))
        XA, XB = rotate_about(X, hinge, theta), rotate_about(X, hinge, -theta)
        ok = valid(XA, G, p["box"]) & valid(XB, G, p["box"])
        parents.append(X[ok])
        A.append(XA[ok])
        B.append(XB[ok])
        th.append(theta[ok])
        have += int(ok.sum())
    X, XA, XB, theta = (np.concatenate(v)[:n] for v in (parents, A, B, th))
    R = resolution_profiles(rng, n, L, p["res_min"], p["res_max"] - p["res_min"])
    R[:, hinge + 1:] = p["flex_res"]
    w = p["sigma_per_res"]
    M = finish(0.5 * (clean_density(XA, R, G, w) + clean_density(XB, R, G, w)), rng, p["noise"])
    return {"X": X, "XA": XA, "XB": XB, "theta": theta, "R": R, "M": M.astype(np.float32)}


def coarse_start(rng, X, sigma: float) -> np.ndarray:
    """The coarse placement every method starts from: X + N(0, sigma^2) per coordinate (a
    stand-in for an upstream tracer's output)."""
    return X + sigma * rng.standard_normal(X.shape)
