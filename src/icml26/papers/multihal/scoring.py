"""The three answer scores as vectors over the vocabulary (numpy only).

For a test question every vocabulary token v gets a score; an answer distribution p over the
vocabulary then scores sum_v p_v score_v (the expectation under sampling at T = 1, how the
official code answers) and a greedy answer scores score_{argmax p}.

- semantic similarity (stand-in for the MiniLM embedding cosine of the official code):
  cos(phi(v), phi(gold)), phi(e) = L2-normalised [one-hot(type), one-hot(entity),
  w * bag of e's undirected KG neighbours]; a non-entity token scores 0;
- entailment (stand-in for NLI): 1 if (question entity, relation chain, v) holds in the KG;
- consistency (stand-in for the HHEM "consistent" rate): 1 if v has the expected type and lies
  within ``hops`` undirected hops of the question entity (not fabricated).
"""

from __future__ import annotations

import numpy as np

from .benchmark import RELATIONS, TYPES, Benchmark


def embeddings(b: Benchmark, neighbour_weight: float) -> np.ndarray:
    """phi of every vocabulary token, (V, n_types + 2E); rows of non-entity tokens are 0."""
    E, nt = b.n_entities, len(TYPES)
    phi = np.zeros((b.vocab_size, nt + 2 * E))
    for e in range(E):
        row = phi[b.tok(e)]
        row[b.etype[e]] = 1.0
        row[nt + e] = 1.0
        for n in b.neighbours(e):
            row[nt + E + n] = neighbour_weight
        row /= np.linalg.norm(row)
    return phi


def within_hops(b: Benchmark, e: int, hops: int) -> set:
    """Entities at undirected distance 1..hops from e."""
    seen, frontier = {int(e)}, {int(e)}
    for _ in range(hops):
        frontier = {n for x in frontier for n in b.neighbours(x)} - seen
        seen |= frontier
    return seen - {int(e)}


def question_scores(b: Benchmark, neighbour_weight: float, hops: int) -> dict[str, np.ndarray]:
    """Per test question: score vectors over the vocabulary, each (n_questions, V)."""
    phi = embeddings(b, neighbour_weight)
    nq, V = len(b.questions), b.vocab_size
    sem, ent, con = np.zeros((nq, V)), np.zeros((nq, V)), np.zeros((nq, V))
    near_cache: dict[int, set] = {}
    for i, q in enumerate(b.questions):
        chain = b.chains[q["chain"]]
        sem[i] = phi @ phi[b.tok(q["gold"])]
        # entailment: every entity the chain reaches from the question entity (functional
        # relations: the gold answer only)
        reach = b.answer(q["person"], chain)
        if reach >= 0:
            ent[i, b.tok(reach)] = 1.0
        want = TYPES.index(RELATIONS[chain[-1]][1])
        near = near_cache.setdefault(q["person"], within_hops(b, q["person"], hops))
        for e in near:
            if b.etype[e] == want:
                con[i, b.tok(e)] = 1.0
    return {"semsim": sem, "entail": ent, "consist": con}


def expected_and_greedy(probs: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: sum_v p_v s_v (T = 1 sampling) and s at argmax p (greedy)."""
    expected = (probs * scores).sum(axis=1)
    greedy = scores[np.arange(len(scores)), probs.argmax(axis=1)]
    return expected, greedy
