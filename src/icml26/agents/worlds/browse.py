"""A BrowseComp-like "find the entity that satisfies every clue" world (multi-hop search).

A task set is an entity table (``n_entities`` x ``n_attrs``, each value uniform in
``0..n_values-1``) and questions; a question lists ``n_clues`` (attribute, value) clues taken
from a target entity and resampled until the target is the *only* entity that satisfies all of
them, so the answer is unique and the verifier is an exact id match.

Tools (every call is one tool call in :mod:`icml26.agents.core`; the observation tokens are
added through ``Observation.tokens``):

- ``search(attr, val, page)``: up to ``page_size`` entity ids with that attribute value, in a
  fixed per-query random order (``rank``); the pages of a query partition its matches. The
  observation says whether this is the query's last page. ``search_tokens`` tokens (12).
- ``open(entity)``: all attribute values of the entity. ``open_tokens`` tokens (16).
- ``answer(entity)``: commits the answer and ends the episode (no observation tokens).

A malformed call (an attribute, value or entity out of range, a negative page) is an invalid
call: it changes nothing and returns ``error_tokens`` tokens. The scripted oracle searches each
clue page by page, opens the intersection of the clues' matches and answers; it needs
sum_c ceil(matches_c / page_size) + |intersection| + 1 calls (26 on average at the defaults),
well inside 80.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.agents.core import Call, Observation

SEARCH, OPEN, ANSWER = "search", "open", "answer"


@dataclass(frozen=True)
class BrowseTask:
    """One question: its clues ((attr, value), ...) and the unique entity satisfying them."""

    qid: int
    clues: tuple
    target: int


def make_table(rng: np.random.Generator, n_entities: int = 300, n_attrs: int = 6,
               n_values: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """The entity table (values uniform) and the per-query result order ``rank`` (entity e is
    listed for query (a, v) in increasing ``rank[e, a]``: a fixed random order per query)."""
    table = rng.integers(0, n_values, size=(n_entities, n_attrs))
    rank = np.stack([rng.permutation(n_entities) for _ in range(n_attrs)], axis=1)
    return table.astype(np.int64), rank.astype(np.int64)


def make_questions(rng: np.random.Generator, table: np.ndarray, n_questions: int,
                   n_clues: int = 4, max_tries: int = 50) -> list[BrowseTask]:
    """Questions with a unique answer: a target entity and ``n_clues`` distinct attributes with
    the target's values, resampled (attributes, then the target) until no other entity matches
    every clue."""
    n_entities, n_attrs = table.shape
    if not 1 <= n_clues <= n_attrs:
        raise ValueError(f"n_clues must be in 1..{n_attrs}, got {n_clues}")
    out = []
    while len(out) < n_questions:
        target = int(rng.integers(n_entities))
        for _ in range(max_tries):
            attrs = np.sort(rng.choice(n_attrs, size=n_clues, replace=False))
            match = np.all(table[:, attrs] == table[target, attrs], axis=1)
            if int(match.sum()) == 1:
                clues = tuple((int(a), int(table[target, a])) for a in attrs)
                out.append(BrowseTask(len(out), clues, target))
                break
    return out


class BrowseWorld:
    """The world interface of :mod:`icml26.agents.worlds` over one entity table."""

    def __init__(self, table, rank, *, page_size: int = 5, search_tokens: int = 12,
                 open_tokens: int = 16, error_tokens: int = 4, n_values: int | None = None):
        self.table = np.asarray(table, dtype=np.int64)
        self.rank = np.asarray(rank, dtype=np.int64)
        self.n_entities, self.n_attrs = self.table.shape
        self.n_values = int(n_values if n_values is not None else self.table.max() + 1)
        self.page_size = int(page_size)
        self.search_tokens, self.open_tokens = int(search_tokens), int(open_tokens)
        self.error_tokens = int(error_tokens)
        self._rows = [tuple(int(x) for x in row) for row in self.table]
        # every query's full result list in its fixed order (pages are slices of it)
        self._results = {}
        for a in range(self.n_attrs):
            order = np.argsort(self.rank[:, a], kind="stable")
            col = self.table[order, a]
            for v in range(self.n_values):
                self._results[(a, v)] = tuple(int(e) for e in order[col == v])

    # -- the world interface ---------------------------------------------------------------
    def start(self, task: BrowseTask) -> dict:
        # what this episode has observed (read by the oracle; a policy keeps its own context)
        return {"task": task, "pages": {}, "opened": {}}

    def matches(self, attr: int, val: int) -> tuple:
        """All entities with ``attr == val``, in the query's result order."""
        return self._results[(attr, val)]

    def n_pages(self, attr: int, val: int) -> int:
        return max(1, -(-len(self._results[(attr, val)]) // self.page_size))

    def execute(self, state: dict, call: Call) -> Observation:
        if call.tool == SEARCH:
            if len(call.args) != 3:
                return Observation("error: search(attr, val, page)", ok=False,
                                   tokens=self.error_tokens)
            a, v, p = call.args
            if not (0 <= a < self.n_attrs and 0 <= v < self.n_values and p >= 0):
                return Observation("error: no such query", ok=False, tokens=self.error_tokens)
            res = self._results[(a, v)]
            k = self.page_size
            ids = res[p * k:(p + 1) * k]
            content = {"ids": ids, "last": (p + 1) * k >= len(res)}
            state["pages"].setdefault((a, v), {})[p] = content
            return Observation(content, tokens=self.search_tokens)
        if call.tool == OPEN:
            e = call.args[0] if len(call.args) == 1 else -1
            if not 0 <= e < self.n_entities:
                return Observation("error: no such entity", ok=False, tokens=self.error_tokens)
            state["opened"][e] = self._rows[e]
            return Observation(self._rows[e], tokens=self.open_tokens)
        if call.tool == ANSWER:
            return Observation(None, final=True, answer=call.args[0] if call.args else None)
        return Observation(f"error: unknown tool {call.tool!r}", ok=False,
                           tokens=self.error_tokens)

    def verify(self, task: BrowseTask, answer) -> bool:
        return answer is not None and int(answer) == task.target

    def cost(self, call: Call) -> dict:
        # answer() is not a tool: it costs no tool call; observation tokens come after the call
        return {"calls": 0 if call.tool == ANSWER else 1, "tokens": 0, "flops": 0.0}

    def oracle(self, task: BrowseTask, state: dict) -> Call:
        """Search every clue page by page, intersect, open the intersection, answer."""
        cand = None
        for a, v in task.clues:
            got = state["pages"].get((a, v), {})
            p = 0
            while p in got and not got[p]["last"]:
                p += 1
            if p not in got:
                return Call(SEARCH, (a, v, p))
            ids = {e for page in got.values() for e in page["ids"]}
            cand = ids if cand is None else cand & ids
        for e in sorted(cand):
            if e not in state["opened"]:
                return Call(OPEN, (e,))
        for e in sorted(cand):
            row = state["opened"][e]
            if all(row[a] == v for a, v in task.clues):
                return Call(ANSWER, (e,))
        return Call(ANSWER, (None,))

    def satisfied(self, task: BrowseTask, entity: int) -> int:
        """How many of the task's clues an entity satisfies."""
        row = self._rows[entity]
        return sum(row[a] == v for a, v in task.clues)
