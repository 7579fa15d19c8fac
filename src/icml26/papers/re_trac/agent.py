"""The search policy, its context, the Re-TRAC state compressor and the four methods.

No LLM is available, so the agent is a fixed stochastic, LLM-like heuristic over the browse
world (icml26.agents.worlds.browse); the ONLY difference between methods is what the policy
sees in its context (INFERRED design of the spec; the paper has no such environment):

- ReAct: one trajectory of up to B tool calls; context = its last W observations.
- ReAct-fullcontext: the same with W = infinity (an oracle-memory upper bound).
- Re-TRAC (equal-budget variant, ours): R rounds of up to b = B / R calls; after each round a
  deterministic compressor (the LLM summary's stand-in) reads the round's whole trajectory plus
  the previous state and writes the structured state; the next round's context is that state
  plus its own last W observations. Final answer = the last state's current answer.
- Re-TRAC official-like: no per-round split, as in the official graph (microsoft/InfoAgent,
  retrac/graph.py): a cycle ends when the policy answers or when its context reaches the cap
  (W observations: our proxy for the 122,880-token cap); up to ``cycles`` cycles, all run, the
  total of B tool calls shared by them.
- Independent restarts: R rounds of b calls with a fresh context each; majority vote.

Every tool call and observation token is counted through icml26.agents (run_batch charges each
call to a Budget before it runs). As the spec says, answer() costs no tool call (the browse world
charges it ``calls: 0``): the policy answers when its round's tool calls are spent.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from icml26.agents import Budget, Call, Trajectory, run_batch
from icml26.agents.worlds.browse import ANSWER, OPEN, SEARCH

POP = [bin(m).count("1") for m in range(1 << 8)]


@dataclass(frozen=True)
class PolicyParams:
    """The spec's policy: softmax(score / tau) over the candidate actions."""

    tau: float = 0.7
    open_base: float = 1.0
    open_per_clue: float = 1.5
    search_base: float = 1.0
    search_bonus: float = 0.5     # when no candidate in context satisfies >= 2 clues
    answer_score: float = 10.0
    plan_bonus: float = 1.0       # OURS (the official state has no plan section)
    plan_top: int = 3


# ---------------------------------------------------------------------------------------------
@dataclass
class State:
    """The structured Re-TRAC state (cumulative; the official schema's sections mapped onto the
    miniature): current answer; evidence (ids known to satisfy each clue: 'partial' facts; opened
    entities with the clues they satisfy: 'verified' facts); uncertainties (candidates seen for
    >= 2 clues, not opened); failures (opened entities violating a clue, and the (clue, page)
    pairs already fetched, with each clue's last page when seen); plan (ours)."""

    n_clues: int
    evidence: list = None          # per clue: set of ids seen in its search results
    opened: dict = field(default_factory=dict)      # id -> bit mask of satisfied clues
    fetched: list = None           # per clue: set of fetched pages
    last_page: list = None         # per clue: index of its last page, or None
    uncertainties: list = field(default_factory=list)
    plan: list = field(default_factory=list)        # Calls (ours)
    current_answer: int | None = None

    def __post_init__(self):
        c = self.n_clues
        self.evidence = self.evidence or [set() for _ in range(c)]
        self.fetched = self.fetched or [set() for _ in range(c)]
        self.last_page = self.last_page or [None] * c

    @property
    def full(self) -> int:
        return (1 << self.n_clues) - 1

    def failures(self) -> list:
        return [e for e, m in self.opened.items() if m != self.full]

    def n_items(self) -> int:
        """Listed ids / pairs of the state (each costs ``state_token_cost`` tokens)."""
        return (sum(len(s) for s in self.evidence) + len(self.opened)
                + len(self.uncertainties) + len(self.failures())
                + sum(len(s) for s in self.fetched) + len(self.plan)
                + (self.current_answer is not None))


def support(state: State, e: int) -> tuple:
    """How well the state supports answer e: (verified all clues, clues known, opened)."""
    if e in state.opened:
        m = state.opened[e]
        return (m == state.full, POP[m], 1)
    k = sum(e in s for s in state.evidence)
    return (False, k, 0)


def compress(prev: State | None, task, traj_steps, n_clues: int, clue_of: dict,
             plan_next_search: bool = True) -> State:
    """The deterministic summariser: the previous (cumulative) state plus the round's *whole*
    trajectory (not just the window) -> the new state. Lossless union, as a recursive summary
    over a context that already holds the previous one."""
    st = State(n_clues)
    if prev is not None:
        st.evidence = [set(s) for s in prev.evidence]
        st.opened = dict(prev.opened)
        st.fetched = [set(s) for s in prev.fetched]
        st.last_page = list(prev.last_page)
        st.current_answer = prev.current_answer
    for s in traj_steps:
        call, obs = s.call, s.obs
        if not obs.ok:
            continue
        if call.tool == SEARCH:
            c = clue_of.get((call.args[0], call.args[1]))
            if c is None:
                continue
            p = call.args[2]
            st.evidence[c].update(obs.content["ids"])
            st.fetched[c].add(p)
            if obs.content["last"] and (st.last_page[c] is None or p < st.last_page[c]):
                st.last_page[c] = p
        elif call.tool == OPEN:
            st.opened[call.args[0]] = sat_mask(obs.content, task.clues)
    seen = {}
    for c, ids in enumerate(st.evidence):
        for e in ids:
            seen[e] = seen.get(e, 0) | (1 << c)
    unc = [(POP[m], e) for e, m in seen.items() if POP[m] >= 2 and e not in st.opened]
    unc.sort(key=lambda t: (-t[0], t[1]))
    st.uncertainties = [e for _, e in unc]
    st.plan = [Call(OPEN, (e,)) for e in st.uncertainties]
    if plan_next_search:   # INFERRED ("optionally"): then the least-searched open clue
        open_clues = [c for c in range(n_clues) if _next_page(st.fetched[c], st.last_page[c])
                      is not None]
        if open_clues:
            c = min(open_clues, key=lambda c: (len(st.fetched[c]), c))
            a, v = task.clues[c]
            st.plan.append(Call(SEARCH, (a, v, _next_page(st.fetched[c], st.last_page[c]))))
    # current answer: the best-supported entity; replaced only on strictly better evidence
    cands = list(st.opened) + list(seen)
    if cands:
        best = max(cands, key=lambda e: (support(st, e), -e))
        if st.current_answer is None or support(st, best) > support(st, st.current_answer):
            st.current_answer = best
    return st


def sat_mask(row, clues) -> int:
    m = 0
    for c, (a, v) in enumerate(clues):
        if row[a] == v:
            m |= 1 << c
    return m


def _next_page(fetched, last):
    p = 0
    while p in fetched:
        p += 1
    return None if last is not None and p > last else p


# ---------------------------------------------------------------------------------------------
class Memory:
    """Working memory derived from what the context holds: S_c (ids seen in clue c's results),
    V (opened ids and their satisfied clues), P (fetched pages per clue). Counted, so that an
    observation leaving the window is forgotten exactly; the state (if any) is a permanent base."""

    def __init__(self, task, state: State | None, clue_of: dict):
        self.task, self.clue_of = task, clue_of
        self.C = len(task.clues)
        self.full = (1 << self.C) - 1
        self.seen_n = {}         # (e, c) -> count
        self.seen = {}           # e -> mask of clues it was seen for
        self.opened_n = {}       # e -> count
        self.opened = {}         # e -> satisfied mask
        self.pages_n = [dict() for _ in range(self.C)]   # per clue: page -> count
        self.last_n = [dict() for _ in range(self.C)]    # per clue: last page -> count
        if state is not None:
            for c, ids in enumerate(state.evidence):
                for e in ids:
                    self._see(e, c, 1)
            for e, m in state.opened.items():
                self.opened_n[e] = 1
                self.opened[e] = m
            for c in range(self.C):
                for p in state.fetched[c]:
                    self.pages_n[c][p] = 1
                if state.last_page[c] is not None:
                    self.last_n[c][state.last_page[c]] = 1

    def _see(self, e, c, d):
        k = (e, c)
        n = self.seen_n.get(k, 0) + d
        if n:
            self.seen_n[k] = n
            self.seen[e] = self.seen.get(e, 0) | (1 << c)
        else:
            del self.seen_n[k]
            m = self.seen[e] & ~(1 << c)
            if m:
                self.seen[e] = m
            else:
                del self.seen[e]

    def apply(self, step, d: int) -> None:
        """Add (d = +1) or forget (d = -1) one observation."""
        call, obs = step.call, step.obs
        if not obs.ok:
            return
        if call.tool == SEARCH:
            c = self.clue_of.get((call.args[0], call.args[1]))
            if c is None:
                return
            p = call.args[2]
            for e in obs.content["ids"]:
                self._see(e, c, d)
            _bump(self.pages_n[c], p, d)
            if obs.content["last"]:
                _bump(self.last_n[c], p, d)
        elif call.tool == OPEN:
            e = call.args[0]
            n = self.opened_n.get(e, 0) + d
            if n:
                self.opened_n[e] = n
                self.opened[e] = sat_mask(obs.content, self.task.clues)
            else:
                del self.opened_n[e]
                del self.opened[e]

    def next_page(self, c):
        last = min(self.last_n[c]) if self.last_n[c] else None
        return _next_page(self.pages_n[c], last)


def _bump(d, k, x):
    n = d.get(k, 0) + x
    if n:
        d[k] = n
    else:
        del d[k]


def candidate_scores(mem: Memory, pp: PolicyParams, plan=()) -> tuple[list, list]:
    """The spec's candidate actions and scores for what the context holds:
    answer(e) for an opened e satisfying every clue: answer_score; open(e) for a seen, unopened
    e: 1 + 1.5 x (clues whose results in context contain e); search(c, next unfetched page of
    c as far as the context shows): 1 + 0.5 x [no candidate in context satisfies >= 2 clues];
    + plan_bonus on the first ``plan_top`` plan actions that are candidates (ours)."""
    acts, scores = [], []
    full, opened = mem.full, mem.opened
    has2 = False
    for e, m in opened.items():
        if m == full:
            acts.append(Call(ANSWER, (e,)))
            scores.append(pp.answer_score)
            has2 = True
    for e, m in mem.seen.items():
        if e in opened:
            continue
        k = POP[m]
        has2 = has2 or k >= 2
        acts.append(Call(OPEN, (e,)))
        scores.append(pp.open_base + pp.open_per_clue * k)
    s_score = pp.search_base + pp.search_bonus * (not has2)
    for c, (a, v) in enumerate(mem.task.clues):
        p = mem.next_page(c)
        if p is not None:
            acts.append(Call(SEARCH, (a, v, p)))
            scores.append(s_score)
    if plan and pp.plan_bonus and acts:
        index = {act: i for i, act in enumerate(acts)}
        n = 0
        for act in plan:
            i = index.get(act)
            if i is not None:
                scores[i] += pp.plan_bonus
                n += 1
                if n == pp.plan_top:
                    break
    return acts, scores


def choose(mem: Memory, pp: PolicyParams, rng: random.Random, plan=()) -> Call:
    """One step of the spec's policy: sample softmax(score / tau) over the candidates."""
    acts, scores = candidate_scores(mem, pp, plan)
    if not acts:   # nothing left to do that the context knows of: a random clue, page 0
        a, v = mem.task.clues[rng.randrange(mem.C)]
        return Call(SEARCH, (a, v, 0))
    top = max(scores)
    w = [math.exp((s - top) / pp.tau) for s in scores]
    u = rng.random() * sum(w)
    acc = 0.0
    for act, wi in zip(acts, w, strict=True):
        acc += wi
        if u < acc:
            return act
    return acts[-1]


def best_guess(mem: Memory, rng: random.Random):
    """The answer when the round's budget is spent: the opened entity (in context) with the most
    satisfied clues, ties random; with nothing opened, the entity seen for the most clues."""
    pool = [(POP[m], e) for e, m in mem.opened.items()] or \
           [(POP[m], e) for e, m in mem.seen.items()]
    if not pool:
        return None
    top = max(k for k, _ in pool)
    best = sorted(e for k, e in pool if k == top)
    return best[rng.randrange(len(best))]


# ---------------------------------------------------------------------------------------------
@dataclass
class Episode:
    """One question's agent between steps: its context memory, plan and random stream."""

    task: object
    rng: random.Random
    mem: Memory = None
    plan: list = field(default_factory=list)
    seen_steps: int = 0


def run_round(world, tasks, episodes, states, caps, window, pp: PolicyParams):
    """One round for every question at once (icml26.agents.run_batch): question i may make
    ``caps[i]`` tool calls; its context is ``states[i]`` (or nothing) + its last ``window``
    observations (None: all). Returns the trajectories and the budgets."""
    clue_maps = [{tuple(cl): c for c, cl in enumerate(t.clues)} for t in tasks]
    for i, ep in enumerate(episodes):
        ep.mem = Memory(tasks[i], states[i], clue_maps[i])
        ep.plan = list(states[i].plan) if states[i] is not None else []
        ep.seen_steps = 0
    budgets = [Budget(calls=int(c)) for c in caps]

    def policy(_states, trajs, live):
        out = []
        for i, tr in zip(live, trajs, strict=True):
            ep = episodes[i]
            n = len(tr.steps)
            while ep.seen_steps < n:       # the newest observation enters the context ...
                ep.mem.apply(tr.steps[ep.seen_steps], +1)
                ep.seen_steps += 1
                old = ep.seen_steps - 1 - window if window is not None else -1
                if old >= 0:               # ... and the oldest leaves it
                    ep.mem.apply(tr.steps[old], -1)
            if budgets[i].remaining("calls") <= 0:
                out.append(Call(ANSWER, (best_guess(ep.mem, ep.rng),)))
            else:
                out.append(choose(ep.mem, pp, ep.rng, ep.plan))
        return out

    trajs = run_batch(world, tasks, policy, max_steps=int(max(caps)) + 1, budgets=budgets,
                      task_ids=[t.qid for t in tasks])
    return trajs, budgets


def tool_steps(tr: Trajectory) -> list:
    return [s for s in tr.steps if s.call.tool != ANSWER]


@dataclass
class Result:
    """Per-question records of one method on one task set."""

    final: list              # final answer per question
    correct: list
    calls: list              # per question: tool calls per round
    tokens: list             # per question: tokens per round (observations + state)
    state_tokens: list       # per question: state tokens read per round
    exits: list              # per question: exit status per round
    redundant: list          # per question: redundant tool calls over the whole question
    n_calls: list            # per question: tool calls over the whole question


def _exit(tr: Trajectory, cap: int, kind: str) -> str:
    n = len(tool_steps(tr))
    if n < cap:
        return "answered"
    return kind


def run_method(world, tasks, method: str, *, budget: int, window: int | None, rounds: int,
               pp: PolicyParams, seeds: list, state_token_cost: int = 2,
               cycles: int = 8) -> Result:
    """Run one method over all questions. ``seeds[i]``: the random stream of question i."""
    n = len(tasks)
    eps = [Episode(t, random.Random(int(s))) for t, s in zip(tasks, seeds, strict=True)]
    per_q_steps = [[] for _ in range(n)]
    calls = [[] for _ in range(n)]
    toks = [[] for _ in range(n)]
    stoks = [[] for _ in range(n)]
    exits = [[] for _ in range(n)]
    round_answers = [[] for _ in range(n)]
    states = [None] * n
    official = method == "re-trac-official"
    if method in ("react", "react-full"):
        plan = [(budget, window if method == "react" else None, False, "round_budget")]
    elif official:
        plan = [(None, window, True, "context_cap")] * cycles
    else:
        b = budget // rounds
        plan = [(b, window, method != "restarts", "round_budget")] * rounds
    left = [budget] * n
    for cap, win, carry, kind in plan:
        if cap is None:   # official-like: the context cap ends a cycle, the total is shared
            caps = [min(win, left[i]) for i in range(n)]
        else:
            caps = [cap] * n
        use = states if carry else [None] * n
        trajs, budgets = run_round(world, tasks, eps, use, caps, win, pp)
        for i, tr in enumerate(trajs):
            st_tok = state_token_cost * use[i].n_items() if use[i] is not None else 0
            budgets[i].add_tokens(st_tok)         # the state is read once per round
            steps = tool_steps(tr)
            per_q_steps[i].extend(steps)
            calls[i].append(len(steps))
            toks[i].append(int(budgets[i].used["tokens"]))
            stoks[i].append(st_tok)
            k = kind
            if official and left[i] <= win and len(steps) >= caps[i]:
                k = "total_budget"
            exits[i].append(_exit(tr, caps[i], k))
            round_answers[i].append(tr.answer)
            left[i] -= len(steps)
            if carry:
                clue_of = {tuple(cl): c for c, cl in enumerate(tasks[i].clues)}
                states[i] = compress(states[i], tasks[i], tr.steps, len(tasks[i].clues),
                                     clue_of)
    finals = []
    for i in range(n):
        if method in ("re-trac", "re-trac-noplan", "re-trac-official"):
            finals.append(states[i].current_answer)
        elif method == "restarts":
            finals.append(majority(round_answers[i]))
        else:
            finals.append(round_answers[i][-1])
    redundant = [Trajectory(steps=s).n_redundant([SEARCH, OPEN]) for s in per_q_steps]
    correct = [bool(world.verify(t, f)) for t, f in zip(tasks, finals, strict=True)]
    return Result(finals, correct, calls, toks, stoks, exits, redundant,
                  [len(s) for s in per_q_steps])


def majority(answers):
    """Self-consistency vote over the rounds' answers (None abstains); ties: the latest."""
    votes = [a for a in answers if a is not None]
    if not votes:
        return None
    count = {}
    for a in votes:
        count[a] = count.get(a, 0) + 1
    top = max(count.values())
    return next(a for a in reversed(votes) if count[a] == top)
