"""Quantum k-junta states rho = rho_J (x) I/2^(n-k): single-copy random Pauli measurements
(classical shadows) and two learners, plain numpy on <= 2k-qubit matrices.

- ``learner`` (INFERRED reconstruction, spec "classical shadows + Pauli-mass selection"): per
  copy, measure every qubit in a uniformly random basis X, Y or Z; estimate every Pauli string
  of weight <= k by the shadow average of prod_a 3 [basis_a == P_a] (-1)^outcome_a; score each
  k-subset J' by the squared estimates of the non-identity Paulis supported in J'; take the
  argmax J*; rebuild rho_hat = 2^-k sum_P est(P) P on J*, project it onto density matrices
  (eigenvalues onto the probability simplex) and output rho_hat (x) I/2^(n-k).
- ``oracle`` (oracle-support tomography): the same shadows and reconstruction on the true J.

Qubit order: inside a subset, position 0 is the most significant factor of a Kronecker
product and the most significant bit of a measurement outcome.
"""

from __future__ import annotations

import itertools

import numpy as np

I2 = np.eye(2, dtype=complex)
PAULI = np.array([I2, [[0, 1], [1, 0]], [[0, -1j], [1j, 0]], [[1, 0], [0, -1]]], dtype=complex)
HAD = np.array([[1, 1], [1, -1]], dtype=complex) / np.sqrt(2)
SDG = np.diag([1, -1j])
# rotation before a computational-basis measurement: X -> H, Y -> H S^dagger, Z -> I
BASIS_ROT = (HAD, HAD @ SDG, I2)


def kron_all(mats) -> np.ndarray:
    out = np.ones((1, 1), dtype=complex)
    for a in mats:
        out = np.kron(out, a)
    return out


def pauli_string(letters) -> np.ndarray:
    """Matrix of the Pauli string with letters in {0=I, 1=X, 2=Y, 3=Z} (position 0 first)."""
    return kron_all(PAULI[list(letters)])


def haar_state(k: int, rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=2**k) + 1j * rng.normal(size=2**k)
    return v / np.linalg.norm(v)


def random_instance(n: int, k: int, mix: float, rng: np.random.Generator):
    """(J sorted, rho_J = mix |psi><psi| + (1 - mix) I/2^k with psi Haar-random)."""
    J = np.sort(rng.choice(n, size=k, replace=False))
    psi = haar_state(k, rng)
    rho = mix * np.outer(psi, psi.conj()) + (1 - mix) * np.eye(2**k) / 2**k
    return J, rho


def basis_probabilities(rho: np.ndarray) -> np.ndarray:
    """probs[b, o]: outcome o for basis combination b = sum_j basis_j 3^j (basis 0/1/2 = X/Y/Z),
    i.e. the diagonal of U rho U^dagger with U the tensor of the per-qubit rotations."""
    k = int(np.log2(rho.shape[0]))
    probs = np.zeros((3**k, 2**k))
    for b in range(3**k):
        U = kron_all([BASIS_ROT[(b // 3**j) % 3] for j in range(k)])
        probs[b] = np.clip(np.real(np.diag(U @ rho @ U.conj().T)), 0.0, None)
        probs[b] /= probs[b].sum()
    return probs


def measure(n: int, J: np.ndarray, rho: np.ndarray, m: int, rng: np.random.Generator):
    """m copies of rho_J (x) I/2^(n-k) measured in random Pauli bases: (bases, bits), each (m, n).
    Qubits outside J are maximally mixed, so their outcomes are fair coins in any basis."""
    k = len(J)
    bases = rng.integers(0, 3, size=(m, n), dtype=np.int8)
    bits = rng.integers(0, 2, size=(m, n), dtype=np.int8)
    if k:
        combo = (bases[:, J].astype(np.int64) * 3 ** np.arange(k)).sum(1)
        cum = np.cumsum(basis_probabilities(rho), axis=1)[combo]
        o = np.minimum((rng.random(m)[:, None] > cum).sum(1), 2**k - 1)
        bits[:, J] = ((o[:, None] >> (k - 1 - np.arange(k))) & 1).astype(np.int8)
    return bases, bits


def snapshot_factors(bases: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """v[t, q, a] = 3 [basis == a] (-1)^bit: the single-qubit shadow factor of letter a+1."""
    sign = 1.0 - 2.0 * bits
    return 3.0 * (bases[:, :, None] == np.arange(3)) * sign[:, :, None]


class ShadowStats:
    """Running shadow sums for every Pauli string of weight <= k (k <= 3): dense tensors
    E_w[q_1..q_w, a_1..a_w] = sum_t prod_i v[t, q_i, a_i]."""

    def __init__(self, n: int, k: int):
        if k > 3:
            raise ValueError("shadow tensors are built for k <= 3")
        self.n, self.k, self.m = n, k, 0
        self.sums = [np.zeros((n,) * w + (3,) * w) for w in range(1, k + 1)]

    def add(self, bases: np.ndarray, bits: np.ndarray) -> None:
        v = snapshot_factors(bases, bits)
        self.m += len(v)
        self.sums[0] += v.sum(0)
        if self.k >= 2:
            self.sums[1] += np.einsum("tia,tjb->ijab", v, v, optimize=True)
        if self.k >= 3:
            self.sums[2] += np.einsum("tia,tjb,tlc->ijlabc", v, v, v, optimize=True)

    def estimate(self, qubits, letters) -> float:
        """Shadow estimate of the Pauli string with the given letters (1..3) on given qubits
        (distinct); the identity is 1. Qubits need not be sorted."""
        if not len(qubits):
            return 1.0
        idx = tuple(int(q) for q in qubits) + tuple(int(a) - 1 for a in letters)
        return float(self.sums[len(qubits) - 1][idx] / self.m)

    def coefficients(self, subs: np.ndarray) -> np.ndarray:
        """C[J', s] = est(P_s on J') for every Pauli string s in {0..3}^k (digit j = letter of
        position j, base 4, position 0 most significant); C[:, 0] = 1."""
        k = self.k
        C = np.ones((len(subs), 4**k))
        for s, letters in enumerate(itertools.product(range(4), repeat=k)):
            pos = [j for j in range(k) if letters[j]]
            if not pos:
                continue
            let = tuple(letters[j] - 1 for j in pos)
            C[:, s] = self.sums[len(pos) - 1][tuple(subs[:, pos].T) + let] / self.m
        return C


def pauli_mass(C: np.ndarray) -> np.ndarray:
    """Sum of squared estimates over the non-identity Paulis supported in each subset."""
    return (C[:, 1:] ** 2).sum(1)


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of v onto {p >= 0, sum p = 1} (sort-and-threshold rule)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    j = np.arange(1, len(v) + 1)
    rho = int(np.nonzero(u - css / j > 0)[0][-1])
    theta = css[rho] / (rho + 1)
    return np.maximum(v - theta, 0.0)


def reconstruct(coeffs: np.ndarray, k: int) -> np.ndarray:
    """rho_hat = 2^-k sum_P est(P) P, projected onto density matrices."""
    raw = np.zeros((2**k, 2**k), dtype=complex)
    for s, letters in enumerate(itertools.product(range(4), repeat=k)):
        raw += coeffs[s] * pauli_string(letters)
    raw = (raw + raw.conj().T) / 2 / 2**k
    w, V = np.linalg.eigh(raw)
    return (V * project_simplex(w)) @ V.conj().T


def embed(rho_A: np.ndarray, A, U) -> np.ndarray:
    """rho_A on qubits A (sorted) tensored with the maximally mixed state on U minus A, as a
    matrix on the qubits U (sorted)."""
    A, U = [int(a) for a in A], [int(u) for u in U]
    rest = [u for u in U if u not in A]
    full = np.kron(rho_A, np.eye(2 ** len(rest)) / 2 ** len(rest))
    order = A + rest
    perm = [order.index(u) for u in U]
    w = len(U)
    t = full.reshape((2,) * (2 * w)).transpose(perm + [p + w for p in perm])
    return t.reshape(2**w, 2**w)


def trace_distance(J, rho, Jh, rho_h) -> float:
    """0.5 ||rho - rho_hat||_1 on the qubits J u J* (the rest is maximally mixed in both)."""
    U = sorted(set(map(int, J)) | set(map(int, Jh)))
    diff = embed(rho, J, U) - embed(rho_h, Jh, U)
    return 0.5 * float(np.abs(np.linalg.eigvalsh(diff)).sum())


def replicate(n: int, k: int, mix: float, m_grid, methods, rng: np.random.Generator) -> dict:
    """Trace distances and support hits of each method at each m of the grid (prefixes of one
    stream of max(m_grid) copies), for one fresh instance."""
    from .classical import subsets

    J, rho = random_instance(n, k, mix, rng)
    m_grid = [int(m) for m in m_grid]
    bases, bits = measure(n, J, rho, m_grid[-1], rng)
    subs = subsets(n, k)
    j_row = int(np.flatnonzero((subs == J).all(1))[0])
    stats = ShadowStats(n, k)
    out = {meth: (np.zeros(len(m_grid)), np.zeros(len(m_grid), dtype=bool)) for meth in methods}
    done = 0
    for g, m in enumerate(m_grid):
        stats.add(bases[done:m], bits[done:m])
        done = m
        C = stats.coefficients(subs)
        for meth in methods:
            if meth == "learner":
                row = int(np.argmax(pauli_mass(C)))  # INFERRED: Pauli-mass argmax selection
            elif meth == "oracle":
                row = j_row
            else:
                raise ValueError(f"unknown quantum method {meth!r}")
            rho_h = reconstruct(C[row], k)
            out[meth][0][g] = trace_distance(J, rho, subs[row], rho_h)
            out[meth][1][g] = row == j_row
    return out
