"""The synthetic judging world and the MixReward stand-in built from it (numpy only).

A world (one per seed) fixes the domain weights of the G = 4 task-generic criteria, the half of
the 28 constraint pairs seen in training, and the word order of each synthetic language. An
instruction is (domain, topic, requested constraints); a response is 4 criterion levels (1-5)
and 8 constraint states (0/1). Its true quality is

    Q(r | i) = sum_g w_dom(i),g lev_g(r) + 3 sum_{c in req(i)} (2 sat_c(r) - 1),

so the criteria that matter depend on the instruction. Every concept has its own token in every
language; languages differ only in token ids and instruction word order.
"""

from __future__ import annotations

import itertools

import numpy as np

GENERIC = ("correctness", "completeness", "clarity", "harmlessness")
CONSTRAINTS = ("list format", "table format", "short", "long", "formal tone", "casual tone",
               "include example", "cite source")
G, S = len(GENERIC), len(CONSTRAINTS)
N_ATTR = G + S                 # attributes of a response: 4 levels + 8 states
N_FILLER = 6
RESP_LEN = N_ATTR + 4          # 12 attribute tokens + 4 filler tokens
N_SPECIAL = 4                  # PAD, BOS, SEP, UNK (only PAD is used)
PAD = 0
INSTR_LEN = 4                  # domain, topic, up to two constraints
PAIRS = list(itertools.combinations(range(S), 2))   # the 28 constraint pairs


def concept_layout(n_domains: int, n_topics: int) -> dict:
    """Offsets of each concept kind inside one language's block of concept ids."""
    off = {"domain": 0}
    off["topic"] = off["domain"] + n_domains
    off["constraint"] = off["topic"] + n_domains * n_topics
    off["level"] = off["constraint"] + S
    off["state"] = off["level"] + G * 5
    off["filler"] = off["state"] + S * 2
    off["n"] = off["filler"] + N_FILLER
    return off


def vocab_size(p) -> int:
    return N_SPECIAL + p["n_languages"] * concept_layout(p["n_domains"], p["n_topics"])["n"]


def make_world(rng: np.random.Generator, p) -> dict:
    """The per-seed constants: domain weights, training constraint pairs, language word orders."""
    w = p["generic_scale"] * rng.dirichlet([p["dirichlet_alpha"]] * G, size=p["n_domains"])
    train_pairs = np.sort(rng.permutation(len(PAIRS))[: len(PAIRS) // 2])
    test_pairs = np.setdiff1d(np.arange(len(PAIRS)), train_pairs)
    orders = np.stack([rng.permutation(INSTR_LEN) for _ in range(p["n_languages"])])
    return {"w_dom": w, "train_pairs": train_pairs, "test_pairs": test_pairs, "orders": orders}


def quality(w_dom, dom, req, lev, sat, constraint_weight: float) -> np.ndarray:
    """Q of responses (..., K) for instructions (...): the world's noiseless quality."""
    gen = (w_dom[dom][..., None, :] * lev).sum(-1)
    con = (req[..., None, :] * (2.0 * sat - 1.0)).sum(-1)
    return gen + constraint_weight * con


def sample_instructions(rng, n, p, world, n_cons, pair_pool) -> dict:
    """n instructions with n_cons[i] in {0, 1, 2} requested constraints; pairs from pair_pool."""
    dom = rng.integers(0, p["n_domains"], n)
    topic = rng.integers(0, p["n_topics"], n)
    req = np.zeros((n, S), np.int8)
    one = np.flatnonzero(n_cons == 1)
    req[one, rng.integers(0, S, len(one))] = 1
    two = np.flatnonzero(n_cons == 2)
    chosen = np.asarray(PAIRS)[rng.choice(pair_pool, len(two))]
    req[two, chosen[:, 0]] = 1
    req[two, chosen[:, 1]] = 1
    return {"dom": dom, "topic": topic, "req": req, "n_cons": n_cons.astype(np.int8)}


def _mutate(rng, lev, sat, m):
    """Change m distinct attributes of each response (a level to another level, a state flipped)."""
    lev, sat = lev.copy(), sat.copy()
    n = len(m)
    which = np.argsort(rng.random((n, N_ATTR)), axis=1)
    change = np.zeros((n, N_ATTR), bool)
    np.put_along_axis(change, which, (np.arange(N_ATTR)[None, :] < m[:, None]), axis=1)
    shift = rng.integers(1, 5, (n, G))                       # a different level in 1..5
    lev = np.where(change[:, :G], (lev - 1 + shift) % 5 + 1, lev)
    sat = np.where(change[:, G:], 1 - sat, sat)
    return lev, sat


def _n_diff(lev, sat, a, b):
    return (lev[:, a] != lev[:, b]).sum(-1) + (sat[:, a] != sat[:, b]).sum(-1)


def sample_candidates(rng, n, k, p):
    """k candidates per instruction; every pair differs in diff_min..diff_max attributes.

    Candidate 0 is drawn uniformly; candidate j >= 1 changes diff_min..diff_max attributes of
    it; sets in which two later candidates violate the bound are drawn again.
    """
    lev = np.empty((n, k, G), np.int8)
    sat = np.empty((n, k, S), np.int8)
    todo = np.arange(n)
    while len(todo):
        m = len(todo)
        base_l = rng.integers(1, 6, (m, G))
        base_s = rng.integers(0, 2, (m, S))
        lev[todo, 0], sat[todo, 0] = base_l, base_s
        for j in range(1, k):
            nm = rng.integers(p["diff_min"], p["diff_max"] + 1, m)
            lev[todo, j], sat[todo, j] = _mutate(rng, base_l, base_s, nm)
        ok = np.ones(m, bool)
        for a, b in itertools.combinations(range(1, k), 2):
            d = _n_diff(lev[todo], sat[todo], a, b)
            ok &= (d >= p["diff_min"]) & (d <= p["diff_max"])
        todo = todo[~ok]
    return lev, sat


def response_tokens(rng, lev, sat, p):
    """Concept ids (before the language offset) of each response's 16 tokens, in random order."""
    off = concept_layout(p["n_domains"], p["n_topics"])
    shape = lev.shape[:-1]
    lvl = off["level"] + np.arange(G) * 5 + (lev.astype(np.int64) - 1)
    st = off["state"] + np.arange(S) * 2 + sat.astype(np.int64)
    fill = off["filler"] + rng.integers(0, N_FILLER, shape + (RESP_LEN - N_ATTR,))
    tok = np.concatenate([lvl, st, fill], -1)
    order = np.argsort(rng.random(tok.shape), axis=-1)
    return np.take_along_axis(tok, order, -1)


def instruction_concepts(ins, p) -> np.ndarray:
    """(n, 4) concept ids in canonical slot order [domain, topic, cons1, cons2]; -1 = empty."""
    off = concept_layout(p["n_domains"], p["n_topics"])
    n = len(ins["dom"])
    out = np.full((n, INSTR_LEN), -1, np.int64)
    out[:, 0] = off["domain"] + ins["dom"]
    out[:, 1] = off["topic"] + ins["dom"] * p["n_topics"] + ins["topic"]
    rows, cols = np.nonzero(ins["req"])
    slot = np.zeros(n, np.int64)
    for r, c in zip(rows, cols, strict=True):      # at most two per row
        out[r, 2 + slot[r]] = off["constraint"] + c
        slot[r] += 1
    return out


def render(concepts, lang, world, p, instruction: bool) -> np.ndarray:
    """Token ids of concept ids in one language (instructions in that language's word order,
    empty slots moved to the end as PAD)."""
    block = concept_layout(p["n_domains"], p["n_topics"])["n"]
    ids = np.where(concepts >= 0, N_SPECIAL + lang * block + concepts, PAD)
    if instruction:
        ids = ids[:, world["orders"][lang]]
        keep = np.argsort(ids == PAD, axis=1, kind="stable")     # PAD slots last
        ids = np.take_along_axis(ids, keep, 1)
    return ids.astype(np.int16)


def noisy_targets(rng, w_dom, ins, lev, sat, p) -> dict:
    """Teacher 'rubric traces' with teacher noise: each entry corrupted with prob teacher_noise.

    INFERRED (the spec says only '10% of entries corrupted'): a corrupted generic weight is
    redrawn from the Dirichlet marginal Beta(a, (G-1)a); a corrupted indicator or state is
    flipped; a corrupted level is redrawn uniformly in 1..5.
    """
    q = p["teacher_noise"]
    a = p["dirichlet_alpha"]
    wt = w_dom[ins["dom"]] / p["generic_scale"]
    bad = rng.random(wt.shape) < q
    wt = np.where(bad, rng.beta(a, (G - 1) * a, wt.shape), wt)
    req = ins["req"].astype(np.float64)
    req = np.where(rng.random(req.shape) < q, 1.0 - req, req)
    lev_t = np.where(rng.random(lev.shape) < q, rng.integers(1, 6, lev.shape), lev)
    sat_t = np.where(rng.random(sat.shape) < q, 1 - sat, sat)
    return {"rubric_gen": wt.astype(np.float32), "rubric_req": req.astype(np.float32),
            "crit_gen": ((lev_t - 3) / 2.0).astype(np.float32),
            "crit_sat": sat_t.astype(np.float32)}


def gumbel_labels(rng, Q, scale: float) -> np.ndarray:
    """Annotator: the candidate with the largest Q + Gumbel(scale) noise."""
    return np.argmax(Q + scale * rng.gumbel(size=Q.shape), axis=-1).astype(np.int8)


def train_cons_counts(rng, n, p) -> np.ndarray:
    """Training mix: 0 or 1 constraint (equal halves) in frac_le1 of the items, else a pair."""
    u = rng.random(n)
    le1 = p["frac_le1_train"]
    return np.where(u < le1 / 2, 0, np.where(u < le1, 1, 2))


def test_cons_counts(n) -> np.ndarray:
    """Test mix: 0, 1 and 2 (unseen pairs) constraints in equal thirds."""
    return np.arange(n) % 3


def build_train_split(rng, n, k, p, world):
    """n training items with k candidates: concepts, Q, noisy labels, teacher targets."""
    ins = sample_instructions(rng, n, p, world, train_cons_counts(rng, n, p),
                              world["train_pairs"])
    lev, sat = sample_candidates(rng, n, k, p)
    Q = quality(world["w_dom"], ins["dom"], ins["req"], lev, sat, p["constraint_weight"])
    label = gumbel_labels(rng, Q, p["label_noise"])
    resp = response_tokens(rng, lev, sat, p)
    tgt = noisy_targets(rng, world["w_dom"], ins, lev, sat, p)
    return ins, lev, sat, Q, label, resp, tgt


def build_eval_split(rng, n, k, p, world, cons_counts, pair_pool, pos_rng):
    """n evaluation items of k candidates without ties: the pair (0, 1) differs in Q and the
    best of the k is unique (items with ties are drawn again; the count is returned). The
    answer positions are shuffled (the official loader swaps pairs and places the best at a
    random slot) before the tie check, so the pair is the one judged."""
    ins = sample_instructions(rng, n, p, world, cons_counts, pair_pool)

    def draw(m):
        lev, sat = sample_candidates(rng, m, k, p)
        perm = np.argsort(pos_rng.random((m, k)), -1)
        return (np.take_along_axis(lev, perm[..., None], 1),
                np.take_along_axis(sat, perm[..., None], 1))

    lev, sat = draw(n)
    redrawn = 0
    for _ in range(1000):
        Q = quality(world["w_dom"], ins["dom"], ins["req"], lev, sat, p["constraint_weight"])
        srt = np.sort(Q, -1)
        tie = np.abs(Q[:, 0] - Q[:, 1]) < 1e-9
        if k > 2:
            tie |= np.abs(srt[:, -1] - srt[:, -2]) < 1e-9
        bad = np.flatnonzero(tie)
        if not len(bad):
            break
        redrawn += len(bad)
        lev[bad], sat[bad] = draw(len(bad))
    Q = quality(world["w_dom"], ins["dom"], ins["req"], lev, sat, p["constraint_weight"])
    resp = response_tokens(rng, lev, sat, p)
    return ins, lev, sat, Q, resp, redrawn


def mean_judge(w_dom, ins, lev, sat, p) -> np.ndarray:
    """The official aggregation with the true rubric and true criterion scores: the mean over
    the active criteria (generic ones weighted by G * w / sum w, requested constraints scored
    1 or 5). The ceiling of a perfect mini-UniRRM."""
    a = G * w_dom[ins["dom"]] / w_dom[ins["dom"]].sum(-1, keepdims=True)
    req = ins["req"].astype(np.float64)
    num = (a[..., None, :] * lev).sum(-1) + (req[..., None, :] * (1.0 + 4.0 * sat)).sum(-1)
    return num / (G + req.sum(-1))[..., None]
