"""The synthetic MultiHal benchmark of one seed (numpy only): knowledge graph, languages,
training corpus, path mining, the judge's pruning, test rows and the data card.

Everything is a pure function of (params, seed), so train, evaluate, the tables and the tests
rebuild the same benchmark without storing it.

The pipeline mirrors MultiHal's construction (official code, ernlavr/multihal):
- mining (src/kgs/querybuilder.py, kg_manager.py): every mined path starts at the question
  entity and its last object is pinned to the answer; hops are tried 1, 2, ... and mining
  stops at the first hop count that returns paths (shortest path first); paths whose start
  and end are the same entity are dropped;
- pruning (Api_judge.py, JudgeBaseClass.py, KnowledgeInjection.py): a judge rates each
  (question, path) row 1-5 with the gold answer visible and rows rated >= 4 are kept. Our judge
  is a rule (INFERRED): 5 when the path's relation chain is the question's chain, 2 when the
  path reaches the answer through unrelated relations (a coincidence of the graph);
- evaluation: one row per (question, path); vanilla QA is scored on the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import permutations

import numpy as np

from icml26.errors import ConfigError

# entity types and relations (domain type, range type)
TYPES = ("person", "city", "country", "org")
RELATIONS = {
    "born_in": ("person", "city"),
    "works_for": ("person", "org"),
    "spouse_of": ("person", "person"),
    "located_in": ("city", "country"),
    "headquartered_in": ("org", "city"),
    "studied_at": ("person", "org"),  # the sixth relation of the full scale (INFERRED)
}
SPECIALS = ("<pad>", "Q", "A", "K", ".", "<eos>")
PAD, Q, A, K, DOT, EOS = range(len(SPECIALS))
# test-row conditions; the oracle reads the curated rows
CONDITIONS = ("vanilla", "curated", "unfiltered", "spec-random")
SEEN, KG_TRAIN, TEST_UNSEEN = 0, 1, 2
GROUPS = ("seen", "kg-train", "test-unseen")
CURATED_SCORE, COINCIDENTAL_SCORE = 5, 2


def chain_name(chain) -> str:
    return ".".join(chain)


@dataclass
class Benchmark:
    """One seed's benchmark. Entity e has token ``ent_offset + e``."""

    params: dict
    n_entities: int
    etype: np.ndarray                  # (E,) index into TYPES
    names: list                        # entity display names
    tail: dict                         # relation -> (E,) tail entity or -1
    group: np.ndarray                  # (P,) SEEN / KG_TRAIN / TEST_UNSEEN
    test_seen: np.ndarray              # (P,) bool: seen person whose held-out types are tested
    chains: list                       # question types: tuples of relation names
    heldout: set                       # (person, chain index) of seen persons held out of QA
    vocab: list                        # token strings
    ent_offset: int
    rel_tok: np.ndarray                # (L, n_rel) token of relation r in language l
    rel_index: dict
    q_tok: np.ndarray                  # (n_chains, L, n_para, 2) question-word tokens
    q_order: np.ndarray                # (n_chains, L, n_para, 3) slot order (0, 1 words; 2 ent)
    train_seqs: list = field(default_factory=list)   # (tokens, first target index, kind)
    questions: list = field(default_factory=list)    # dicts, see _questions
    rows: list = field(default_factory=list)         # dicts, see _rows

    @property
    def n_languages(self) -> int:
        return self.rel_tok.shape[0]

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def tok(self, e: int) -> int:
        return self.ent_offset + int(e)

    def answer(self, person: int, chain) -> int:
        """Follow a relation chain from ``person``; -1 where an edge is missing."""
        e = int(person)
        for r in chain:
            e = int(self.tail[r][e])
            if e < 0:
                return -1
        return e

    def out_edges(self, e: int):
        return [(r, int(t[e])) for r, t in self.tail.items() if t[e] >= 0]

    def neighbours(self, e: int) -> set:
        """Undirected KG neighbours of e."""
        out = {t for _, t in self.out_edges(e)}
        for t in self.tail.values():
            out.update(int(x) for x in np.flatnonzero(t == e))
        return out


# ---------------------------------------------------------------------------------------------
# the graph


def _check(p: dict) -> None:
    kg, sp = p["kg"], p["split"]
    rels = list(kg["relations"])
    for r in rels:
        if r not in RELATIONS:
            raise ConfigError(f"params.kg.relations: unknown relation {r!r}; allowed: "
                              f"{', '.join(RELATIONS)}")
    for chain in kg["question_types"]:
        kind = "person"
        for r in chain:
            if r not in rels:
                raise ConfigError(f"params.kg.question_types: {chain_name(chain)} uses {r!r}, "
                                  "which is not in params.kg.relations")
            if RELATIONS[r][0] != kind:
                raise ConfigError(f"params.kg.question_types: {chain_name(chain)} is not a "
                                  f"chain ({r} starts at a {RELATIONS[r][0]}, not a {kind})")
            kind = RELATIONS[r][1]
        if len(chain) > kg["max_hops"]:
            raise ConfigError(f"params.kg.question_types: {chain_name(chain)} has more hops "
                              f"than params.kg.max_hops = {kg['max_hops']}")
    n_test_unseen = kg["n_persons"] - sp["n_seen"] - sp["n_kg_train"]
    if n_test_unseen < 1:
        raise ConfigError(f"params.split: n_seen + n_kg_train = {sp['n_seen'] + sp['n_kg_train']}"
                          f" leaves no test-only person of params.kg.n_persons = "
                          f"{kg['n_persons']}")
    if sp["n_test_seen"] > sp["n_seen"]:
        raise ConfigError(f"params.split.n_test_seen = {sp['n_test_seen']} exceeds n_seen = "
                          f"{sp['n_seen']}")


def _pair(rng, members: np.ndarray, frac: float, spouse: np.ndarray) -> None:
    """Marry round(frac * n / 2) disjoint couples among ``members`` (symmetric)."""
    order = rng.permutation(members)
    n_couples = int(round(frac * len(members) / 2))
    for k in range(n_couples):
        a, b = int(order[2 * k]), int(order[2 * k + 1])
        spouse[a], spouse[b] = b, a


def build(params: dict, seed: int) -> Benchmark:
    """The benchmark of one seed: ``params`` is the paper's params, ``seed`` a derived int."""
    _check(params)
    kg, sp, lang = params["kg"], params["split"], params["languages"]
    rng = np.random.default_rng(seed)
    counts = {"person": kg["n_persons"], "city": kg["n_cities"], "country": kg["n_countries"],
              "org": kg["n_orgs"]}
    start, etype, names = {}, [], []
    for t, n in counts.items():
        start[t] = len(etype)
        etype += [TYPES.index(t)] * n
        names += [f"{t}{i}" for i in range(n)]
    E = len(etype)
    etype = np.array(etype, dtype=np.int64)

    def ents(t):
        return np.arange(start[t], start[t] + counts[t])

    P = counts["person"]
    persons, cities, countries, orgs = ents("person"), ents("city"), ents("country"), ents("org")
    # knowledge split: seen persons (facts in text), KG-train (KG-RAG training only),
    # test-only unseen; spouses are paired within the seen and within the unseen persons
    # (INFERRED: so that a seen person's 2-hop spouse question is answerable from the text)
    order = rng.permutation(P)
    group = np.full(P, TEST_UNSEEN, dtype=np.int64)
    group[order[: sp["n_seen"]]] = SEEN
    group[order[sp["n_seen"]: sp["n_seen"] + sp["n_kg_train"]]] = KG_TRAIN
    test_seen = np.zeros(P, dtype=bool)
    test_seen[order[: sp["n_test_seen"]]] = True

    tail = {}
    rels = list(kg["relations"])
    for r in rels:
        t = np.full(E, -1, dtype=np.int64)
        if r == "born_in":
            t[persons] = rng.choice(cities, P)
        elif r in ("works_for", "studied_at"):
            t[persons] = rng.choice(orgs, P)
        elif r == "spouse_of":
            _pair(rng, persons[group == SEEN], kg["spouse_frac"], t)
            _pair(rng, persons[group != SEEN], kg["spouse_frac"], t)
        elif r == "located_in":  # balanced: every country holds cities
            t[cities] = countries[rng.permutation(len(cities)) % len(countries)]
        elif r == "headquartered_in":
            t[orgs] = rng.choice(cities, len(orgs))
        tail[r] = t

    # languages: own relation and question tokens, own word order per template; entity
    # tokens are shared (names not translated; see FIDELITY)
    L, n_para = int(lang["n_languages"]), int(lang["n_paraphrases"])
    chains = [tuple(c) for c in kg["question_types"]]
    vocab = list(SPECIALS)
    ent_offset = len(vocab)
    vocab += names
    rel_tok = np.zeros((L, len(rels)), dtype=np.int64)
    for l in range(L):
        for j, r in enumerate(rels):
            rel_tok[l, j] = len(vocab)
            vocab.append(f"{r}@L{l}")
    q_tok = np.zeros((len(chains), L, n_para, 2), dtype=np.int64)
    q_order = np.zeros((len(chains), L, n_para, 3), dtype=np.int64)
    perms = list(permutations(range(3)))
    for c, chain in enumerate(chains):
        for l in range(L):
            for k in range(n_para):
                for w in range(2):
                    q_tok[c, l, k, w] = len(vocab)
                    vocab.append(f"q{w}:{chain_name(chain)}#{k}@L{l}")
                q_order[c, l, k] = perms[int(rng.integers(len(perms)))]

    b = Benchmark(params=params, n_entities=E, etype=etype, names=names, tail=tail,
                  group=group, test_seen=test_seen, chains=chains, heldout=set(), vocab=vocab,
                  ent_offset=ent_offset, rel_tok=rel_tok,
                  rel_index={r: j for j, r in enumerate(rels)}, q_tok=q_tok, q_order=q_order)
    # held-out (seen person, question type) pairs: a fraction of all applicable pairs
    pairs = [(int(p), c) for p in persons[group == SEEN] for c in range(len(chains))
             if b.answer(p, chains[c]) >= 0]
    n_out = int(round(sp["holdout_frac"] * len(pairs)))
    pick = rng.permutation(len(pairs))[:n_out]
    b.heldout = {pairs[i] for i in sorted(pick)}
    _corpus(b, rng)
    _questions(b, rng)
    _rows(b, rng)
    return b


# ---------------------------------------------------------------------------------------------
# sequences


def question_tokens(b: Benchmark, person: int, c: int, l: int, k: int) -> list[int]:
    slots = [int(b.q_tok[c, l, k, 0]), int(b.q_tok[c, l, k, 1]), b.tok(person)]
    return [slots[i] for i in b.q_order[c, l, k]]


def path_tokens(b: Benchmark, path, l: int) -> list[int]:
    """A path (e0, r1, e1, r2, e2, ...) in language l."""
    out = [b.tok(path[0])]
    for i in range(1, len(path), 2):
        out += [int(b.rel_tok[l, b.rel_index[path[i]]]), b.tok(path[i + 1])]
    return out


def gold_path(b: Benchmark, person: int, chain) -> tuple:
    out, e = [int(person)], int(person)
    for r in chain:
        e = int(b.tail[r][e])
        out += [r, e]
    return tuple(out)


def vanilla_prompt(b, person, c, l, k) -> list[int]:
    return [Q] + question_tokens(b, person, c, l, k) + [A]


def kg_prompt(b, path, person, c, l, k) -> list[int]:
    return [K] + path_tokens(b, path, l) + vanilla_prompt(b, person, c, l, k)


def _corpus(b: Benchmark, rng) -> None:
    """Facts (loss on every token) in every language for seen persons, cities and
    organisations; vanilla QA for the QA-trained pairs of seen persons; KG-RAG QA (gold path)
    for those pairs and for every pair of the KG-train persons. QA loss: answer and <eos>."""
    L, n_para = b.n_languages, b.q_tok.shape[2]
    seqs = []
    person_rels = [r for r in b.tail if RELATIONS[r][0] == "person"]
    other_rels = [r for r in b.tail if RELATIONS[r][0] != "person"]
    P = len(b.group)
    for l in range(L):
        for p in np.flatnonzero(b.group == SEEN):
            for r in person_rels:
                t = int(b.tail[r][p])
                if t >= 0:
                    seqs.append(([b.tok(p), int(b.rel_tok[l, b.rel_index[r]]), b.tok(t), DOT], 1,
                                 "fact"))
        for r in other_rels:
            for e in np.flatnonzero(b.tail[r] >= 0):
                seqs.append(([b.tok(e), int(b.rel_tok[l, b.rel_index[r]]),
                              b.tok(b.tail[r][e]), DOT], 1, "fact"))
    for p in range(P):
        if b.group[p] == TEST_UNSEEN:
            continue
        for c, chain in enumerate(b.chains):
            ans = b.answer(p, chain)
            if ans < 0 or (p, c) in b.heldout:
                continue
            for l in range(L):
                k = int(rng.integers(n_para))
                if b.group[p] == SEEN:
                    prompt = vanilla_prompt(b, p, c, l, k)
                    seqs.append((prompt + [b.tok(ans), EOS], len(prompt), "vanilla-qa"))
                prompt = kg_prompt(b, gold_path(b, p, chain), p, c, l, k)
                seqs.append((prompt + [b.tok(ans), EOS], len(prompt), "kg-qa"))
    b.train_seqs = seqs


def train_arrays(b: Benchmark, context: int) -> tuple[np.ndarray, np.ndarray]:
    """Token array (N, length + 1) right-padded to the longest sequence of the corpus
    (length <= context) and loss mask over the targets (N, length): mask[i, t] = 1 where
    token t + 1 of sequence i is predicted with loss."""
    N = len(b.train_seqs)
    length = max(len(s) for s, _, _ in b.train_seqs) - 1
    seq = np.full((N, length + 1), PAD, dtype=np.int64)
    mask = np.zeros((N, length), dtype=np.float32)
    for i, (toks, first, _) in enumerate(b.train_seqs):
        if len(toks) > context + 1:
            raise ConfigError(f"a training sequence has {len(toks)} tokens; params.lm.context "
                              f"= {context} is too short")
        seq[i, : len(toks)] = toks
        mask[i, first - 1: len(toks) - 1] = 1.0
    return seq, mask


# ---------------------------------------------------------------------------------------------
# questions, mining, judge, rows


def _questions(b: Benchmark, rng) -> None:
    """Test questions: every type of the test-only unseen persons, the held-out types of the
    test-seen persons; each in every language (template drawn per question)."""
    out = []
    L, n_para = b.n_languages, b.q_tok.shape[2]
    for p in range(len(b.group)):
        for c, chain in enumerate(b.chains):
            ans = b.answer(p, chain)
            if ans < 0:
                continue
            if b.group[p] == TEST_UNSEEN:
                seen = False
            elif b.group[p] == SEEN and b.test_seen[p] and (p, c) in b.heldout:
                seen = True
            else:
                continue
            for l in range(L):
                out.append({"person": p, "chain": c, "lang": l, "para": int(rng.integers(n_para)),
                            "gold": ans, "hops": len(chain), "seen": seen})
    b.questions = out


def paths_from(b: Benchmark, e: int, hops: int) -> list[tuple]:
    """Every directed path of exactly ``hops`` edges from e: (e0, r1, e1, ...)."""
    frontier = [(int(e),)]
    for _ in range(hops):
        frontier = [path + (r, t) for path in frontier for r, t in b.out_edges(path[-1])]
    return frontier


def mine(b: Benchmark, person: int, answer: int, max_hops: int) -> list[tuple]:
    """The question -> answer paths of the shortest hop count that has any (MultiHal's
    mining); paths that end where they start are dropped."""
    for h in range(1, max_hops + 1):
        found = [p for p in paths_from(b, person, h) if p[-1] == answer and p[0] != p[-1]]
        if found:
            return found
    return []


def judge(path, chain) -> int:
    """The judge's 1-5 rating of a mined path for a question (INFERRED rule, see module doc)."""
    return CURATED_SCORE if tuple(path[1::2]) == tuple(chain) else COINCIDENTAL_SCORE


def _rows(b: Benchmark, rng) -> None:
    """One row per (question, path): unfiltered = every mined path, curated = those the judge
    rates >= keep, vanilla = the curated rows without the path, spec-random = one path drawn
    uniformly among all paths with the question's hop count from the question entity (the
    spec's reading of 'unfiltered'; a labelled variant)."""
    keep = int(b.params["eval"]["judge_keep"])
    max_hops = int(b.params["kg"]["max_hops"])
    rows = []
    for qi, q in enumerate(b.questions):
        chain = b.chains[q["chain"]]
        mined = mine(b, q["person"], q["gold"], max_hops)
        for path in mined:
            score = judge(path, chain)
            rows.append({"q": qi, "cond": "unfiltered", "path": path, "score": score})
            if score >= keep:
                rows.append({"q": qi, "cond": "curated", "path": path, "score": score})
                rows.append({"q": qi, "cond": "vanilla", "path": None, "score": score})
        pool = [p for p in paths_from(b, q["person"], q["hops"]) if p[0] != p[-1]]
        path = pool[int(rng.integers(len(pool)))]
        rows.append({"q": qi, "cond": "spec-random", "path": path, "score": judge(path, chain)})
    b.rows = rows


def row_prompt(b: Benchmark, row) -> list[int]:
    q = b.questions[row["q"]]
    if row["path"] is None:
        return vanilla_prompt(b, q["person"], q["chain"], q["lang"], q["para"])
    return kg_prompt(b, row["path"], q["person"], q["chain"], q["lang"], q["para"])


def target_counts(b: Benchmark) -> dict[int, int]:
    """How often each token is a loss target in the training corpus (answers, fact objects).
    With tied embeddings and single-token names, a token rarely or never trained as an output
    has its logit pushed down by every softmax, so a model copies it from a path poorly or
    not at all (second round)."""
    out: dict[int, int] = {}
    for toks, first, _ in b.train_seqs:
        for t in toks[first:]:
            out[int(t)] = out.get(int(t), 0) + 1
    return out


def trained_targets(b: Benchmark) -> set[int]:
    """Every token that some training sequence has as a loss target."""
    return set(target_counts(b))


# bins of how often a test question's gold answer is a training target (report breakdown)
FREQ_BINS = (("0", 0, 0), ("1-10", 1, 10), ("11-30", 11, 30), ("over 30", 31, 10**9))


def fact_probes(b: Benchmark) -> tuple[np.ndarray, np.ndarray]:
    """Every fact sentence of the training text as (e1, rel) -> e2: prompts (n, 2), targets."""
    facts = [s for s, _, kind in b.train_seqs if kind == "fact"]
    return (np.array([s[:2] for s in facts], dtype=np.int64).reshape(-1, 2),
            np.array([s[2] for s in facts], dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# data card


def data_card(b: Benchmark) -> dict[str, float]:
    """Counts of one seed's benchmark (the rows of the report's data card)."""
    out: dict[str, float] = {}
    for t in TYPES:
        out[f"entities: {t}"] = float((b.etype == TYPES.index(t)).sum())
    for g, name in enumerate(GROUPS):
        out[f"persons: {name}"] = float((b.group == g).sum())
    out["persons: seen with tested held-out types"] = float(
        (b.test_seen & (b.group == SEEN)).sum())
    if "spouse_of" in b.tail:
        out["persons: married"] = float((b.tail["spouse_of"] >= 0).sum())
    out["languages"] = float(b.n_languages)
    out["vocabulary (tokens)"] = float(b.vocab_size)
    for kind in ("fact", "vanilla-qa", "kg-qa"):
        out[f"train sequences: {kind}"] = float(sum(k == kind for _, _, k in b.train_seqs))
    out["held-out (seen person, type) pairs"] = float(len(b.heldout))
    qs = b.questions
    out["test questions (all languages)"] = float(len(qs))
    out["test questions: seen persons"] = float(sum(q["seen"] for q in qs))
    out["test questions: unseen persons"] = float(sum(not q["seen"] for q in qs))
    for c, chain in enumerate(b.chains):
        out[f"test questions: {chain_name(chain)}"] = float(sum(q["chain"] == c for q in qs))
    for cond in CONDITIONS:
        out[f"rows: {cond}"] = float(sum(r["cond"] == cond for r in b.rows))
    unf = [r for r in b.rows if r["cond"] == "unfiltered"]
    out["mined paths rated < keep (coincidental)"] = float(
        sum(r["score"] < int(b.params["eval"]["judge_keep"]) for r in unf))
    targets = trained_targets(b)
    out["test questions whose gold answer is never a training target"] = float(
        sum(b.tok(q["gold"]) not in targets for q in qs))
    for c, chain in enumerate(b.chains):
        out[f"  of which {chain_name(chain)}"] = float(
            sum(q["chain"] == c and b.tok(q["gold"]) not in targets for q in qs))
    with_curated = {r["q"] for r in b.rows if r["cond"] == "curated"}
    out["questions without a curated path (dropped)"] = float(len(qs) - len(with_curated))
    # what a model could exploit
    out["tail-copy oracle entailment: unfiltered rows"] = float(np.mean(
        [r["path"][-1] == qs[r["q"]]["gold"] for r in unf])) if unf else float("nan")
    rnd = [r for r in b.rows if r["cond"] == "spec-random"]
    out["tail-copy oracle entailment: spec-random rows"] = float(np.mean(
        [r["path"][-1] == qs[r["q"]]["gold"] for r in rnd])) if rnd else float("nan")
    out["most-frequent-answer-per-type entailment (test)"] = majority_baseline(b)
    return out


def majority_baseline(b: Benchmark) -> float:
    """Entailment of answering every test question with the most frequent answer of its type
    among the training QA sequences (a prior a model could exploit without any knowledge)."""
    best = {}
    for c, chain in enumerate(b.chains):
        answers = [b.answer(p, chain) for p in range(len(b.group))
                   if b.group[p] != TEST_UNSEEN and (p, c) not in b.heldout
                   and b.answer(p, chain) >= 0]
        best[c] = int(np.bincount(answers).argmax()) if answers else -1
    qs = b.questions
    return float(np.mean([best[q["chain"]] == q["gold"] for q in qs])) if qs else float("nan")
