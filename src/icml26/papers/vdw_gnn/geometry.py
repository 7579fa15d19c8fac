"""Point clouds, graphs, local frames, transport and (vector) diffusion wavelets (numpy, float64).

Everything is batched over clouds: a stack of B clouds X has shape (B, N, 3). The steps follow
vector diffusion maps (Singer & Wu 2012) as the spec lays them out:
kNN graph with Gaussian weights -> local PCA tangent frames O_i (3x2) -> alignment O_ij (closest
2x2 orthogonal matrix to O_i^T O_j) -> transport blocks T_ij = O_i O_ij O_j^T -> symmetric
vector operator A = D^-1/2 S D^-1/2, lazy Q = (I + A)/2 -> dyadic powers (applied to the signals) ->
wavelets Psi_0 = I - Q, Psi_j = Q^(2^(j-1)) - Q^(2^j), Phi = Q^(2^J).
The scalar analogue P = (I + D^-1/2 W D^-1/2)/2 acts on each coordinate separately (P kron I_3).
"""

from __future__ import annotations

import numpy as np


# ------------------------------------------------------------------------------------------
# data: ellipsoids (the official synthetic experiments) and the sphere of the wind-like task
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
def knn_weights(X: np.ndarray, k: int):
    """Symmetrised kNN graph with Gaussian weights; eps = median squared kNN distance per cloud.

    Returns W (B, N, N) (zero diagonal) and the boolean adjacency M.
    """
    B, N, _ = X.shape
    d2 = ((X[:, :, None, :] - X[:, None, :, :]) ** 2).sum(-1)
    masked = d2 + np.diag(np.full(N, np.inf))
    idx = np.argsort(masked, axis=2, kind="stable")[:, :, :k]
    M = np.zeros((B, N, N), dtype=bool)
    np.put_along_axis(M, idx, True, axis=2)
    M = M | M.transpose(0, 2, 1)
    eps = np.median(np.take_along_axis(d2, idx, axis=2).reshape(B, -1), axis=1)
    W = np.where(M, np.exp(-d2 / eps[:, None, None]), 0.0)
    return W, M


def local_frames(X: np.ndarray, W: np.ndarray):
    """Local PCA: tangent frames O (B, N, 3, 2) and oriented normals nhat (B, N, 3).

    The left singular vectors of the stack sqrt(w_ij)(x_j - x_i) are the eigenvectors of
    C_i = sum_j w_ij (x_j - x_i)(x_j - x_i)^T (3x3), so a batched eigh gives them. O_i holds the
    top-2 (intrinsic dimension 2); the third is the normal, oriented so <nhat_i, x_i - mean> > 0.
    """
    diff = X[:, None, :, :] - X[:, :, None, :]               # (B, i, j, 3): x_j - x_i
    C = np.einsum("bij,bijk,bijl->bikl", W, diff, diff)
    _, vecs = np.linalg.eigh(C)                               # ascending eigenvalues
    O = vecs[..., [2, 1]]
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


def transport(O: np.ndarray, M: np.ndarray | None = None) -> np.ndarray:
    """T_ij = O_i O_ij O_j^T: (B, N, N, 3, 3), computed on the edges of M (all pairs if None)."""
    B, N = O.shape[:2]
    b, i, j = np.nonzero(np.ones((B, N, N), bool) if M is None else M)
    Oi, Oj = O[b, i], O[b, j]                                   # (E, 3, 2)
    Rij = polar2(np.einsum("ekp,ekq->epq", Oi, Oj))
    T = np.zeros((B, N, N, 3, 3))
    T[b, i, j] = np.einsum("ekp,epq,elq->ekl", Oi, Rij, Oj, optimize=True)
    return T


def vector_operator(W: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Lazy symmetric vector operator Q = (I + D^-1/2 S D^-1/2)/2, S_ij = w_ij T_ij: (B, 3N, 3N)."""
    B, N = W.shape[:2]
    dinv = 1.0 / np.sqrt(W.sum(2))
    blocks = (W * dinv[:, :, None] * dinv[:, None, :])[..., None, None] * T
    A = blocks.transpose(0, 1, 3, 2, 4).reshape(B, 3 * N, 3 * N)
    return 0.5 * (np.eye(3 * N) + A)


def scalar_operator(W: np.ndarray) -> np.ndarray:
    """Lazy symmetric scalar operator P = (I + D^-1/2 W D^-1/2)/2: (B, N, N)."""
    dinv = 1.0 / np.sqrt(W.sum(2))
    return 0.5 * (np.eye(W.shape[1]) + W * dinv[:, :, None] * dinv[:, None, :])


def dyadic_powers(Q: np.ndarray, J: int) -> list[np.ndarray]:
    """[I, Q, Q^2, Q^4, ..., Q^(2^J)] by repeated squaring (batched matmul; used by tests)."""
    out = [np.broadcast_to(np.eye(Q.shape[-1]), Q.shape), Q]
    for _ in range(J):
        out.append(out[-1] @ out[-1])
    return out


def dyadic_apply(Q: np.ndarray, V: np.ndarray, J: int) -> list[np.ndarray]:
    """[V, Q V, Q^2 V, Q^4 V, ..., Q^(2^J) V] for columns V (B, M, F).

    Same numbers as multiplying by the squared powers (tested), but 2^J products with a thin V
    cost far less than J squarings of the dense (3N x 3N) matrix on a few-column signal.
    """
    out, cur = [V, Q @ V], Q @ V
    for t in range(2, 2**J + 1):
        cur = Q @ cur
        if t & (t - 1) == 0:
            out.append(cur)
    return out


def wavelet_bands(QV: list[np.ndarray]) -> np.ndarray:
    """Filter bank from [V, QV, Q^2 V, ..., Q^(2^J) V] -> (B, J+2, M, F): Psi_0..Psi_J, Phi.

    Psi_0 = I - Q, Psi_j = Q^(2^(j-1)) - Q^(2^j) (j = 1..J), Phi = Q^(2^J).
    """
    return np.stack([QV[j] - QV[j + 1] for j in range(len(QV) - 1)] + [QV[-1]], axis=1)


def wavelet_apply(Q: np.ndarray, V: np.ndarray, J: int) -> np.ndarray:
    """Vector or scalar diffusion wavelets of the columns V (B, M, F) -> (B, J+2, M, F)."""
    return wavelet_bands(dyadic_apply(Q, V, J))


def frame_ratio(Q: np.ndarray, V: np.ndarray, J: int) -> np.ndarray:
    """(sum_j ||Psi_j v||^2 + ||Phi v||^2) / ||v||^2 for each column v of V (B, M, F) -> (B, F)."""
    U = wavelet_apply(Q, V, J)
    return (U**2).sum(axis=(1, 2)) / (V**2).sum(axis=1)


def lower_frame_bound(J: int, grid: int = 200001) -> float:
    """min over lambda in [0, 1] of the frame-ratio polynomial (spectrum of Q in [0, 1])."""
    lam = np.linspace(0.0, 1.0, grid)
    g = (1 - lam) ** 2 + lam ** (2 ** (J + 1))
    for j in range(1, J + 1):
        g = g + (lam ** (2 ** (j - 1)) - lam ** (2**j)) ** 2
    return float(g.min())


# ------------------------------------------------------------------------------------------
# one layer of coefficients (fixed filter bank) and per-node invariants
# ------------------------------------------------------------------------------------------
def vector_coefficients(Q, V: np.ndarray, J: int, second_order: bool) -> np.ndarray:
    """VDW coefficients of vector channels V (B, N, 3, F) with the vector operator Q.

    Returns U (B, N, 3, C): first order (j, f) for the J+2 filters, then, if asked, second
    order Psi_j' (U_(j,f) * sigmoid(||U_(j,f)||)) for wavelets j < j' (j, j' in 0..J).
    """
    B, N, _, F = V.shape
    U1 = wavelet_apply(Q, V.reshape(B, 3 * N, F), J)            # (B, J+2, 3N, F)
    out = [U1.transpose(0, 2, 1, 3).reshape(B, 3 * N, -1)]
    if second_order:
        nb = U1.shape[1] - 1                                        # wavelets Psi_0..Psi_J
        for j in range(nb):
            u = U1[:, j].reshape(B, N, 3, F)
            gated = u / (1.0 + np.exp(-np.linalg.norm(u, axis=2, keepdims=True)))
            U2 = wavelet_apply(Q, gated.reshape(B, 3 * N, F), J)  # (B, J+2, 3N, F)
            out.append(U2[:, j + 1:nb].transpose(0, 2, 1, 3).reshape(B, 3 * N, -1))
    return np.concatenate(out, axis=2).reshape(B, N, 3, -1)


def scalar_coefficients_on_vectors(P, V: np.ndarray, J: int, second_order: bool) -> np.ndarray:
    """Scalar-DW coefficients: the scalar wavelets applied to each coordinate (P kron I_3)."""
    B, N, _, F = V.shape
    U1 = wavelet_apply(P, V.reshape(B, N, 3 * F), J)              # (B, J+2, N, 3F)
    U1 = U1.reshape(B, -1, N, 3, F)
    out = [U1.transpose(0, 2, 3, 1, 4).reshape(B, N, 3, -1)]
    if second_order:
        nb = U1.shape[1] - 1
        for j in range(nb):
            u = U1[:, j]
            gated = u / (1.0 + np.exp(-np.linalg.norm(u, axis=2, keepdims=True)))
            U2 = wavelet_apply(P, gated.reshape(B, N, 3 * F), J).reshape(B, -1, N, 3, F)
            out.append(U2[:, j + 1:nb].transpose(0, 2, 3, 1, 4).reshape(B, N, 3, -1))
    return np.concatenate(out, axis=3)


def invariants(U: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Per-node invariants: norms ||U_c(i)||, inner products <U_c(i), U_c'(i)> (c < c'), and the
    scalar-channel coefficients S (B, N, Cs). Rotation-invariant by construction."""
    C = U.shape[-1]
    gram = np.einsum("bnkc,bnkd->bncd", U, U)
    iu = np.triu_indices(C, 1)
    norms = np.sqrt(np.maximum(np.diagonal(gram, axis1=2, axis2=3), 0.0))
    return np.concatenate([norms, gram[:, :, iu[0], iu[1]], S], axis=2)
