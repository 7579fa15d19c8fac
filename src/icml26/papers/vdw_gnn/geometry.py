"""Point clouds, graphs, local frames, transport and (vector) diffusion wavelets (numpy, float64).

Everything is batched over clouds: a stack of B clouds X has shape (B, N, 3). The default
construction follows the official code (dj408/vdw-gnn, data_processing/process_pyg_data.py):
union-symmetrised kNN graph (k = 5, unweighted) -> local PCA frames O_i (full 3x3, Gaussian
kernel weights with one dataset-wide eps) -> column-sign matching of O_j to O_i and transport
blocks T_ij = O_i diag(s_ij) O_j^T (full rank, orthogonal) -> vector operator
Q = (I + D^-1 S)/2, S_ij = a_ij T_ij (row-normalised lazy walk) -> powers Q^t V for the listed
scales t_0 = 0 < t_1 < ... < t_K -> wavelets Psi_k = Q^(t_(k-1)) - Q^(t_k), low-pass Q^(t_K).
The scalar analogue P = (I + D^-1 A)/2 acts on each coordinate separately (P kron I_3).
The spec's reading (Gaussian weights, 3x2 tangent frames with the polar alignment, symmetric
normalisation D^-1/2 S D^-1/2, dyadic scales) is kept as options: it is the labelled variant.
"""

from __future__ import annotations

import numpy as np


# ------------------------------------------------------------------------------------------
# data: ellipsoids (the spec's sampler) and the sphere of the wind-like task
# ------------------------------------------------------------------------------------------
def sample_ellipsoids(rng: np.random.Generator, n_clouds: int, n_points: int):
    """Centred ellipsoid clouds (B, N, 3), analytic outward unit normals (B, N, 3), semi-axes.

    Gaussian directions u on the unit sphere are mapped to (a u1, b u2, c u3); the area element
    of that map is sqrt((b c u1)^2 + (a c u2)^2 + (a b u3)^2), so accepting with probability
    proportional to it (rejection sampling) gives points uniform in surface area.
    """
    axes = np.stack([rng.normal(3.0, 0.5, n_clouds), rng.normal(1.0, 0.2, n_clouds),
                     rng.normal(1.0, 0.2, n_clouds)], axis=1)
    axes = np.clip(axes, 0.5, None)
    X = np.empty((n_clouds, n_points, 3))
    normals = np.empty_like(X)
    for b in range(n_clouds):
        a = axes[b]
        area = np.array([a[1] * a[2], a[0] * a[2], a[0] * a[1]])
        kept: list[np.ndarray] = []
        count = 0
        while count < n_points:
            u = rng.standard_normal((4 * n_points, 3))
            u /= np.linalg.norm(u, axis=1, keepdims=True)
            g = np.sqrt(((area * u) ** 2).sum(1))
            acc = u[rng.random(len(u)) < g / area.max()]
            kept.append(acc)
            count += len(acc)
        u = np.concatenate(kept)[:n_points]
        p = u * a
        n = p / a**2
        X[b] = p - p.mean(0)
        normals[b] = n / np.linalg.norm(n, axis=1, keepdims=True)
    return X, normals, axes


def sample_spheres(rng: np.random.Generator, n_clouds: int, n_points: int):
    """Unit-sphere clouds (uniform) and their normals (the wind-like task of the full profile)."""
    u = rng.standard_normal((n_clouds, n_points, 3))
    u /= np.linalg.norm(u, axis=2, keepdims=True)
    return u - u.mean(1, keepdims=True), u


def random_rotations(rng: np.random.Generator, n: int) -> np.ndarray:
    """n Haar-random rotations in SO(3) (QR of Gaussian matrices, sign-fixed, det +1)."""
    q, r = np.linalg.qr(rng.standard_normal((n, 3, 3)))
    q = q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]
    det = np.linalg.det(q)
    q[:, :, 0] *= det[:, None]
    return q


# ------------------------------------------------------------------------------------------
# graph and local geometry
# ------------------------------------------------------------------------------------------
def knn_graph(X: np.ndarray, k: int):
    """Union-symmetrised kNN graph (knn_graph + to_undirected in the official code).

    Returns the boolean adjacency M (B, N, N), squared distances d2 (B, N, N) and the indices
    of each node's k nearest neighbours (B, N, k).
    """
    B, N, _ = X.shape
    d2 = ((X[:, :, None, :] - X[:, None, :, :]) ** 2).sum(-1)
    masked = d2 + np.diag(np.full(N, np.inf))
    idx = np.argsort(masked, axis=2, kind="stable")[:, :, :k]
    M = np.zeros((B, N, N), dtype=bool)
    np.put_along_axis(M, idx, True, axis=2)
    return M | M.transpose(0, 2, 1), d2, idx


def median_knn_d2(d2: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Per-cloud median squared kNN distance (B,): the spec's per-cloud Gaussian eps."""
    return np.median(np.take_along_axis(d2, idx, axis=2).reshape(len(d2), -1), axis=1)


def mean_edge_length(M: np.ndarray, d2: np.ndarray) -> np.ndarray:
    """Per-cloud mean Euclidean edge length (B,) (average_neighbor_distance, official)."""
    return (np.sqrt(d2) * M).sum(axis=(1, 2)) / M.sum(axis=(1, 2))


def graph_weights(M: np.ndarray, d2: np.ndarray, idx: np.ndarray, kind: str) -> np.ndarray:
    """Edge weights W (B, N, N): ``unweighted`` (official: the adjacency itself) or
    ``gaussian`` exp(-d^2/eps), eps the per-cloud median squared kNN distance (the spec's)."""
    if kind == "unweighted":
        return M.astype(float)
    if kind == "gaussian":
        eps = median_knn_d2(d2, idx)
        return np.where(M, np.exp(-d2 / eps[:, None, None]), 0.0)
    raise ValueError(f"graph_weights {kind!r} is not allowed; allowed: unweighted, gaussian")


def local_frames(X: np.ndarray, M: np.ndarray, d2: np.ndarray, eps: np.ndarray, full: bool):
    """Local PCA on each node's graph neighbours: frames O and oriented normals nhat (B, N, 3).

    The left singular vectors of the stack sqrt(K_ij)(x_j - x_i), K_ij = exp(-|x_j - x_i|^2 /
    eps) (get_C_i_dict, official), are the eigenvectors of C_i = sum_j K_ij (x_j - x_i)(x_j -
    x_i)^T, so a batched eigh gives them, in descending order. ``full``: O_i is all three (3x3,
    get_l_singular_vecs(C_i, d = 3)); otherwise the top two (3x2, the spec's tangent frame).
    The third is the normal, oriented so that <nhat_i, x_i - mean> > 0 (an input channel).
    """
    K = np.where(M, np.exp(-d2 / np.asarray(eps, float).reshape(-1, 1, 1)), 0.0)
    diff = X[:, None, :, :] - X[:, :, None, :]               # (B, i, j, 3): x_j - x_i
    C = np.einsum("bij,bijk,bijl->bikl", K, diff, diff)
    _, vecs = np.linalg.eigh(C)                               # ascending eigenvalues
    O = vecs[..., [2, 1, 0]] if full else vecs[..., [2, 1]]
    nhat = vecs[..., 0]
    side = np.sign(((X - X.mean(1, keepdims=True)) * nhat).sum(-1, keepdims=True))
    return O, nhat * np.where(side == 0, 1.0, side)


def polar2(G: np.ndarray) -> np.ndarray:
    """Closest orthogonal matrix U V^T (SVD G = U S V^T) of a stack of 2x2 matrices, closed form.

    For G = [[a, b], [c, d]] the polar factor is (G + cof G)/|.| (a rotation) when det G > 0
    and (G - cof G)/|.| (a reflection) when det G < 0, cof G = [[d, -c], [-b, a]]. Tested
    against np.linalg.svd; about 50x cheaper than a batched SVD of 2x2 matrices.
    """
    a, b, c, d = G[..., 0, 0], G[..., 0, 1], G[..., 1, 0], G[..., 1, 1]
    pos = (a * d - b * c) >= 0
    s = np.where(pos, 1.0, -1.0)
    p, q = a + s * d, b - s * c           # G + s cof G = [[p, q], [-s q, s p]]
    r = np.sqrt(p**2 + q**2)
    r = np.where(r > 0, r, 1.0)
    p, q = p / r, q / r
    out = np.empty(G.shape)
    out[..., 0, 0], out[..., 0, 1], out[..., 1, 0], out[..., 1, 1] = p, q, -s * q, s * p
    return out


def _edges(O: np.ndarray, M: np.ndarray | None):
    B, N = O.shape[:2]
    return np.nonzero(np.ones((B, N, N), bool) if M is None else M)


def transport_tangent(O: np.ndarray, M: np.ndarray | None = None) -> np.ndarray:
    """The spec's rank-2 blocks T_ij = O_i polar(O_i^T O_j) O_j^T for 3x2 frames O (B, N, 3, 2):
    (B, N, N, 3, 3) on the edges of M (all pairs if None). They drop the normal component."""
    B, N = O.shape[:2]
    b, i, j = _edges(O, M)
    Oi, Oj = O[b, i], O[b, j]                                   # (E, 3, 2)
    Rij = polar2(np.einsum("ekp,ekq->epq", Oi, Oj))
    T = np.zeros((B, N, N, 3, 3))
    T[b, i, j] = np.einsum("ekp,epq,elq->ekl", Oi, Rij, Oj, optimize=True)
    return T


def transport_full(O: np.ndarray, M: np.ndarray | None = None) -> np.ndarray:
    """Official blocks for full 3x3 frames: T_ij = O_i diag(s) O_j^T, s_c = +1 where
    <O_i[:, c], O_j[:, c]> >= 0 else -1 (match_B_col_directions_to_A, then O_i O_j_aligned^T).

    Each block is orthogonal (full rank, the normal component is kept); s is symmetric in
    (i, j), so T_ji = T_ij^T; a sign flip of any frame column cancels, so the block does not
    depend on eigh's sign choices and rotates as R T_ij R^T with the cloud.
    """
    B, N = O.shape[:2]
    b, i, j = _edges(O, M)
    Oi, Oj = O[b, i], O[b, j]                                   # (E, 3, 3)
    s = np.where(np.einsum("ekc,ekc->ec", Oi, Oj) >= 0.0, 1.0, -1.0)
    T = np.zeros((B, N, N, 3, 3))
    T[b, i, j] = np.einsum("ekc,ec,elc->ekl", Oi, s, Oj, optimize=True)
    return T


def _degree_scaling(W: np.ndarray, norm: str):
    """(left, right) per-node factors of the normalised adjacency: D^-1 (row) or D^-1/2 both."""
    d = W.sum(2)
    if norm == "row":
        return 1.0 / d, np.ones_like(d)
    if norm == "sym":
        return 1.0 / np.sqrt(d), 1.0 / np.sqrt(d)
    raise ValueError(f"operator {norm!r} is not allowed; allowed: row, sym")


def vector_operator(W: np.ndarray, T: np.ndarray, norm: str = "row") -> np.ndarray:
    """Lazy vector operator Q = (I + A)/2, S_ij = w_ij T_ij: (B, 3N, 3N).

    ``row``: A = D^-1 S (official: Q_ij = p_ij O_ij with p_ij from P, diagonal I_3/2);
    ``sym``: A = D^-1/2 S D^-1/2 (symmetric, spectrum in [0, 1]; the frame check's operator).
    """
    B, N = W.shape[:2]
    left, right = _degree_scaling(W, norm)
    blocks = (W * left[:, :, None] * right[:, None, :])[..., None, None] * T
    A = blocks.transpose(0, 1, 3, 2, 4).reshape(B, 3 * N, 3 * N)
    return 0.5 * (np.eye(3 * N) + A)


def scalar_operator(W: np.ndarray, norm: str = "row") -> np.ndarray:
    """Lazy scalar operator P = (I + D^-1 W)/2 (``row``, get_P(row_normalize=True)) or
    (I + D^-1/2 W D^-1/2)/2 (``sym``): (B, N, N)."""
    left, right = _degree_scaling(W, norm)
    return 0.5 * (np.eye(W.shape[1]) + W * left[:, :, None] * right[:, None, :])


# ------------------------------------------------------------------------------------------
# diffusion wavelets at listed scales
# ------------------------------------------------------------------------------------------
def dyadic_scales(J: int) -> list[int]:
    """[0, 1, 2, 4, ..., 2^J]: the dyadic filter bank (Psi_0 = I - Q, ..., low-pass Q^(2^J))."""
    return [0] + [2**j for j in range(J + 1)]


def check_scales(scales) -> list[int]:
    """Scales must start at 0 and increase strictly (raises ValueError otherwise)."""
    s = [int(t) for t in scales]
    if len(s) < 2 or s[0] != 0 or any(b <= a for a, b in zip(s[:-1], s[1:], strict=True)):
        raise ValueError(f"diffusion scales {list(scales)} must start at 0 and increase "
                         "strictly (e.g. [0, 1, 2, 4, 6, 9, 16])")
    return s


def dyadic_powers(Q: np.ndarray, J: int) -> list[np.ndarray]:
    """[I, Q, Q^2, Q^4, ..., Q^(2^J)] by repeated squaring (batched matmul; used by tests)."""
    out = [np.broadcast_to(np.eye(Q.shape[-1]), Q.shape), Q]
    for _ in range(J):
        out.append(out[-1] @ out[-1])
    return out


def scales_apply(Q: np.ndarray, V: np.ndarray, scales) -> list[np.ndarray]:
    """[Q^t V for t in scales] for columns V (B, M, F), by repeated products Q (Q^(t-1) V)
    (batch_scatter's shared powers in the official code; max(scales) thin products)."""
    keep = set(check_scales(scales))
    out, cur = [V], V
    for t in range(1, max(keep) + 1):
        cur = Q @ cur
        if t in keep:
            out.append(cur)
    return out


def wavelet_bands(QV: list[np.ndarray]) -> np.ndarray:
    """Filter bank from [Q^(t_0) V, ..., Q^(t_K) V] -> (B, K+1, M, F): the K wavelets
    Q^(t_(k-1)) V - Q^(t_k) V, then the low-pass Q^(t_K) V."""
    return np.stack([QV[j] - QV[j + 1] for j in range(len(QV) - 1)] + [QV[-1]], axis=1)


def wavelet_apply(Q: np.ndarray, V: np.ndarray, scales) -> np.ndarray:
    """Vector or scalar diffusion wavelets of the columns V (B, M, F) -> (B, K+1, M, F)."""
    return wavelet_bands(scales_apply(Q, V, scales))


def frame_ratio(Q: np.ndarray, V: np.ndarray, scales) -> np.ndarray:
    """(sum_k ||Psi_k v||^2 + ||Phi v||^2) / ||v||^2 for each column v of V (B, M, F) -> (B, F)."""
    U = wavelet_apply(Q, V, scales)
    return (U**2).sum(axis=(1, 2)) / (V**2).sum(axis=1)


def frame_polynomial(lam: np.ndarray, scales) -> np.ndarray:
    """g(lambda) = sum_k (lambda^(t_(k-1)) - lambda^(t_k))^2 + lambda^(2 t_K): the frame ratio
    of an eigenvector of a symmetric Q with eigenvalue lambda."""
    s = check_scales(scales)
    lam = np.asarray(lam, float)
    g = lam ** (2 * s[-1])
    for a, b in zip(s[:-1], s[1:], strict=True):
        g = g + (lam**a - lam**b) ** 2
    return g


def lower_frame_bound(scales, grid: int = 200001) -> float:
    """min over lambda in [0, 1] of the frame polynomial (spectrum of a symmetric lazy Q)."""
    return float(frame_polynomial(np.linspace(0.0, 1.0, grid), scales).min())


def frame_extremes(Q_sym: np.ndarray, scales) -> tuple[np.ndarray, np.ndarray]:
    """Exact min and max frame ratio over all vectors, per cloud, for a symmetric Q (B, M, M):
    every filter is a polynomial in Q, so sum_k Psi_k^T Psi_k + Phi^T Phi = g(Q), whose
    eigenvalues are g(lambda_i)."""
    g = frame_polynomial(np.linalg.eigvalsh(Q_sym), scales)
    return g.min(1), g.max(1)


# ------------------------------------------------------------------------------------------
# one layer of coefficients (fixed filter bank) and per-node invariants
# ------------------------------------------------------------------------------------------
def gate(u: np.ndarray, kind: str) -> np.ndarray:
    """First-order gate before the second order, on vectors u (..., 3, F) (norm over axis -2):
    ``softplus`` u softplus(|u|) (official norm_only + softplus) or ``sigmoid`` u sigmoid(|u|)."""
    r = np.linalg.norm(u, axis=-2, keepdims=True)
    if kind == "softplus":
        return u * np.logaddexp(0.0, r)
    if kind == "sigmoid":
        return u / (1.0 + np.exp(-r))
    raise ValueError(f"second_order_gate {kind!r} is not allowed; allowed: softplus, sigmoid")


def vector_coefficients(Q, V: np.ndarray, scales, second_order: bool, zero_order: bool = True,
                        gate_kind: str = "softplus") -> np.ndarray:
    """VDW coefficients of vector channels V (B, N, 3, F) with the vector operator Q.

    Returns U (B, N, 3, C): the input itself if ``zero_order`` (vector_multiorder_scatter's
    0th order), first order (k, f) for the K+1 filters, then, if asked, second order
    Psi_k' (gate(U_(k,f))) for wavelets k < k' (the low-pass is not scattered again).
    """
    B, N, _, F = V.shape
    U1 = wavelet_apply(Q, V.reshape(B, 3 * N, F), scales)       # (B, K+1, 3N, F)
    out = [V.reshape(B, 3 * N, F)] if zero_order else []
    out.append(U1.transpose(0, 2, 1, 3).reshape(B, 3 * N, -1))
    if second_order:
        nb = U1.shape[1] - 1                                        # wavelets Psi_0..Psi_(K-1)
        for j in range(nb):
            gated = gate(U1[:, j].reshape(B, N, 3, F), gate_kind)
            U2 = wavelet_apply(Q, gated.reshape(B, 3 * N, F), scales)
            out.append(U2[:, j + 1:nb].transpose(0, 2, 1, 3).reshape(B, 3 * N, -1))
    return np.concatenate(out, axis=2).reshape(B, N, 3, -1)


def scalar_coefficients_on_vectors(P, V: np.ndarray, scales, second_order: bool,
                                   zero_order: bool = True,
                                   gate_kind: str = "softplus") -> np.ndarray:
    """Scalar-DW coefficients: the scalar wavelets applied to each coordinate (P kron I_3)."""
    B, N, _, F = V.shape
    U1 = wavelet_apply(P, V.reshape(B, N, 3 * F), scales)          # (B, K+1, N, 3F)
    U1 = U1.reshape(B, -1, N, 3, F)
    out = [V] if zero_order else []
    out.append(U1.transpose(0, 2, 3, 1, 4).reshape(B, N, 3, -1))
    if second_order:
        nb = U1.shape[1] - 1
        for j in range(nb):
            gated = gate(U1[:, j], gate_kind)
            U2 = wavelet_apply(P, gated.reshape(B, N, 3 * F), scales).reshape(B, -1, N, 3, F)
            out.append(U2[:, j + 1:nb].transpose(0, 2, 3, 1, 4).reshape(B, N, 3, -1))
    return np.concatenate(out, axis=3)


def scalar_coefficients(P, S: np.ndarray, scales, zero_order: bool = True) -> np.ndarray:
    """Scalar channels S (B, N, Fs) and their scalar wavelets -> (B, N, Fs (1 + K+1))."""
    Sc = wavelet_apply(P, S, scales).transpose(0, 2, 1, 3).reshape(len(S), S.shape[1], -1)
    return np.concatenate([S, Sc], axis=2) if zero_order else Sc


def invariants(U: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Per-node invariants: norms ||U_c(i)||, inner products <U_c(i), U_c'(i)> (c < c'), and the
    scalar-channel coefficients S (B, N, Cs). Rotation-invariant by construction."""
    C = U.shape[-1]
    gram = np.einsum("bnkc,bnkd->bncd", U, U)
    iu = np.triu_indices(C, 1)
    norms = np.sqrt(np.maximum(np.diagonal(gram, axis1=2, axis2=3), 0.0))
    return np.concatenate([norms, gram[:, :, iu[0], iu[1]], S], axis=2)
