"""FedHOO (full profile only, no claim; INFERRED form): HOO over the resampling exponent q.

The server runs hierarchical optimistic optimisation (HOO; Bubeck, Munos, Stoltz, Szepesvari
2011, "X-armed bandits") over q in [0, 1], the exponent of the resampling probabilities
p(i) propto n_{y_i}^(-q). Each round it descends the tree by the larger B-value to a leaf,
splits that leaf into its two halves and evaluates their midpoints in parallel: the first half
of the clients trains with one rate, the second half with the other (two arm pulls at the cost
of one round). The reward of each rate is the change in server-side validation balanced
accuracy of its half-aggregate relative to the previous global model. Smoothness parameters
nu = 1, rho = 0.5 (INFERRED).
"""

from __future__ import annotations

import math

import numpy as np


class FixedRate:
    """The same resampling exponent q for every client and round (q = 0: no resampling)."""

    halves = False

    def __init__(self, q: float, n_clients: int):
        self.q = float(q)
        self.n_clients = n_clients

    def rates(self) -> np.ndarray:
        return np.full(self.n_clients, self.q)


class HOORates:
    """HOO tree over [0, 1]; node (h, i) covers [i 2^-h, (i + 1) 2^-h]."""

    halves = True

    def __init__(self, n_clients: int, nu: float = 1.0, rho: float = 0.5):
        self.n_clients, self.nu, self.rho = n_clients, nu, rho
        self.count: dict = {(0, 0): 0}
        self.mean: dict = {(0, 0): 0.0}
        self.children: dict = {}
        self.n = 0
        self.pending: tuple | None = None
        self.history: list[tuple[float, float]] = []

    @staticmethod
    def midpoint(node) -> float:
        h, i = node
        return (i + 0.5) / 2 ** h

    def _b_values(self) -> dict:
        """B = min(U, max B(children)), U = mean + sqrt(2 ln n / T) + nu rho^h (bottom-up)."""
        b: dict = {}
        for node in sorted(self.count, key=lambda nd: -nd[0]):
            t = self.count[node]
            if t == 0:
                u = math.inf
            else:
                u = (self.mean[node] + math.sqrt(2.0 * math.log(max(self.n, 1)) / t)
                     + self.nu * self.rho ** node[0])
            kids = self.children.get(node)
            b[node] = min(u, max(b[k] for k in kids)) if kids else u
        return b

    def _leaf(self):
        b = self._b_values()
        node = (0, 0)
        while node in self.children:
            left, right = self.children[node]
            node = left if b[left] >= b[right] else right    # ties: the left (smaller q)
        return node

    def rates(self) -> np.ndarray:
        """Expand the chosen leaf; its two halves' midpoints go to the two client halves."""
        h, i = self._leaf()
        kids = ((h + 1, 2 * i), (h + 1, 2 * i + 1))
        self.children[(h, i)] = kids
        for k in kids:
            self.count[k], self.mean[k] = 0, 0.0
        self.pending = kids
        qa, qb = self.midpoint(kids[0]), self.midpoint(kids[1])
        self.history.append((qa, qb))
        half = self.n_clients // 2
        return np.where(np.arange(self.n_clients) < half, qa, qb)

    def observe(self, reward_a: float, reward_b: float) -> None:
        """Both rewards update their node and every ancestor (running means)."""
        for node, reward in zip(self.pending, (reward_a, reward_b), strict=True):
            h, i = node
            while True:
                self.count[(h, i)] += 1
                self.mean[(h, i)] += (reward - self.mean[(h, i)]) / self.count[(h, i)]
                if h == 0:
                    break
                h, i = h - 1, i // 2
            self.n += 1
        self.pending = None
