"""Boolean formulas, their guidance circuits, the LOGDIFF calculus and the baselines.

A formula is parsed from text ("(A|B)&~C": ~ not, & and, | or, ^ xor; A, B, C, ... are
attributes 0, 1, 2, ...). The guidance of a circuit is evaluated bottom-up, each node returning
(log P_t(node | x), g = grad log P_t(node | x)) from the atoms' scores and posteriors (spec,
"Guidance calculus"; the rules are the probability identities the sufficient conditions imply):
  atom a:          g_a = s(x | a) - s(x),  log P_a from the posterior model
  NOT:             P = 1 - P_a,            g = -P_a g_a / (1 - P_a)
  AND (indep.):    P = prod P_i,           g = sum g_i
  OR (exclusive):  P = sum P_i,            g = sum P_i g_i / P
  OR (indep.):     P = 1 - prod (1 - P_i), g = sum_i P_i prod_{j != i}(1 - P_j) g_i / P
Numerics: log P is carried exactly (OR-exclusive by logsumexp, OR-independent in log space);
P is clipped to at most 1 - 1e-6 wherever 1 - P is formed (INFERRED reading of the spec's
"clip P to [1e-6, 1 - 1e-6]": a lower clip would bias the exact guidance where P -> 0
legitimately, e.g. on the oracle's own trajectory).

Two circuits per formula:
- ``compiled`` (LOGDIFF): an OR of mutually exclusive full assignments, the satisfying ones;
  each full assignment is one conditioning event of the conditional model. Valid for any
  mixture whose components carry full attribute assignments (spec, "Compilation").
- ``direct``: the formula's own tree with every AND / OR read as independent. Exact when the
  attributes are conditionally independent given x_t (D2); on D1 it is baseline 4, "calculus
  misapplied".
The optional cap on the NOT weight P_a / (1 - P_a) follows the official image code (capped at
3); it is off for the exact analytic variant (a cap breaks exactness by construction).
"""

from __future__ import annotations

import itertools

import numpy as np

from .mixture import UNKNOWN

P_MAX = 1.0 - 1e-6
METHODS = ("oracle", "logdiff", "indep-rules", "compose-w1", "compose-w3", "negprompt",
           "naive-or", "monolithic")


# --------------------------------------------------------------------------- formulas
def parse(text: str):
    """Text -> AST: ("var", i) | ("not", f) | ("and"|"or"|"xor", f, g)."""
    toks = [c for c in text if not c.isspace()]
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def take(ch=None):
        nonlocal pos
        tok = peek()
        if tok is None or (ch is not None and tok != ch):
            raise ValueError(f"formula {text!r}: expected {ch or 'a term'} at position {pos}")
        pos += 1
        return tok

    def expr():
        node = term()
        while peek() in ("|", "^"):
            op = {"|": "or", "^": "xor"}[take()]
            node = (op, node, term())
        return node

    def term():
        node = factor()
        while peek() == "&":
            take()
            node = ("and", node, factor())
        return node

    def factor():
        tok = peek()
        if tok == "~":
            take()
            return ("not", factor())
        if tok == "(":
            take()
            node = expr()
            take(")")
            return node
        tok = take()
        if not ("A" <= tok <= "Z"):
            raise ValueError(f"formula {text!r}: {tok!r} is not an attribute (A, B, C, ...)")
        return ("var", ord(tok) - ord("A"))

    node = expr()
    if pos != len(toks):
        raise ValueError(f"formula {text!r}: unexpected {toks[pos]!r} at position {pos}")
    return node


def n_vars(ast) -> int:
    if ast[0] == "var":
        return ast[1] + 1
    return max(n_vars(a) for a in ast[1:])


def holds(ast, assignment) -> bool:
    op = ast[0]
    if op == "var":
        return bool(assignment[ast[1]])
    if op == "not":
        return not holds(ast[1], assignment)
    a, b = holds(ast[1], assignment), holds(ast[2], assignment)
    return {"and": a and b, "or": a or b, "xor": a != b}[op]


def satisfied(ast, attrs: np.ndarray) -> np.ndarray:
    """1{c |= phi} per row of an attribute table (K, n_attr)."""
    return np.array([holds(ast, row) for row in attrs], dtype=bool)


def literals(ast):
    """A conjunction of literals as [(attr, positive)], or None."""
    if ast[0] == "var":
        return [(ast[1], True)]
    if ast[0] == "not" and ast[1][0] == "var":
        return [(ast[1][1], False)]
    if ast[0] == "and":
        a, b = literals(ast[1]), literals(ast[2])
        return None if a is None or b is None else a + b
    return None


def disjuncts(ast):
    """A disjunction of positive attributes as [attr], or None."""
    if ast[0] == "var":
        return [ast[1]]
    if ast[0] == "or":
        a, b = disjuncts(ast[1]), disjuncts(ast[2])
        return None if a is None or b is None else a + b
    return None


def applicable(method: str, ast) -> bool:
    if method in ("compose-w1", "compose-w3"):
        lits = literals(ast)
        return lits is not None and all(pos for _, pos in lits) and len(lits) > 1
    if method == "negprompt":
        lits = literals(ast)
        return lits is not None and any(not pos for _, pos in lits)
    if method == "naive-or":
        d = disjuncts(ast)
        return d is not None and len(d) > 1
    return method in METHODS


# --------------------------------------------------------------------------- circuits
def event(n_attr: int, **known) -> tuple:
    ev = [UNKNOWN] * n_attr
    for i, v in known.items():
        ev[int(i)] = int(v)
    return tuple(ev)


def literal_event(n_attr: int, attr: int, value: int = 1) -> tuple:
    return event(n_attr, **{str(attr): value})


def compiled(ast, n_attr: int):
    """OR (exclusive) of the satisfying full assignments, each one atom."""
    sats = [z for z in itertools.product((0, 1), repeat=n_attr) if holds(ast, z)]
    if not sats:
        raise ValueError("the formula is unsatisfiable")
    return ("orx", [("atom", tuple(z)) for z in sats])


def direct(ast, n_attr: int):
    """The formula's own tree, every AND / OR as independent (xor = OR of two ANDs)."""
    op = ast[0]
    if op == "var":
        return ("atom", literal_event(n_attr, ast[1]))
    if op == "not":
        return ("not", direct(ast[1], n_attr))
    a, b = direct(ast[1], n_attr), direct(ast[2], n_attr)
    if op == "and":
        return ("and", [a, b])
    if op == "or":
        return ("ori", [a, b])
    return ("ori", [("and", [a, ("not", b)]), ("and", [("not", a), b])])


def _log1m(logp: np.ndarray) -> np.ndarray:
    """log(1 - P) with P clipped to at most P_MAX."""
    return np.log1p(-np.minimum(np.exp(logp), P_MAX))


def evaluate(node, atoms, s_uncond, not_cap=None):
    """(log P_t(node | x), grad log P_t(node | x)) of a circuit, bottom-up."""
    op = node[0]
    if op == "atom":
        return atoms.logpost(node[1]), atoms.score(node[1]) - s_uncond
    if op == "not":
        lp, g = evaluate(node[1], atoms, s_uncond, not_cap)
        lq = _log1m(lp)
        w = np.exp(np.minimum(lp, np.log(P_MAX)) - lq)       # P_a / (1 - P_a)
        if not_cap is not None:
            w = np.minimum(w, not_cap)
        return lq, -w[..., None] * g
    kids = [evaluate(k, atoms, s_uncond, not_cap) for k in node[1]]
    lps = np.stack([k[0] for k in kids])
    gs = np.stack([k[1] for k in kids])
    if op == "and":
        return lps.sum(0), gs.sum(0)
    if op == "orx":
        m = lps.max(0)
        e = np.exp(lps - m)
        return m + np.log(e.sum(0)), np.einsum("k...,k...d->...d", e / e.sum(0), gs)
    if op == "ori":
        l1m = _log1m(lps)
        # log of P_i prod_{j != i} (1 - P_j): the weight of child i, and P = 1 - prod(1 - P_j)
        lw = lps + l1m.sum(0) - l1m
        lP = np.log(-np.expm1(np.minimum(l1m.sum(0), -1e-300)))
        lP = np.maximum(lP, np.logaddexp.reduce(lw, axis=0))  # P >= sum of weights (rounding)
        return lP, np.einsum("k...,k...d->...d", np.exp(lw - lP), gs)
    raise ValueError(f"unknown circuit node {op!r}")


# --------------------------------------------------------------------------- methods
def score(method: str, ast, atoms, n_attr: int, *, exact=None, not_cap=None,
          weights=None, monolithic=None) -> np.ndarray:
    """The conditional score a method follows for formula ``ast`` at the atoms' rows.

    ``exact``: the analytic atoms (the oracle); ``weights``: guidance weight per method
    (compose-w1/w3, negprompt); ``monolithic``: a callable giving grad log q_phi(x).
    """
    if method == "oracle":
        return exact.score_set(satisfied(ast, exact.mix.attrs))
    s = atoms.score(event(n_attr))                          # unconditional s_t(x)
    if method in ("logdiff", "indep-rules"):
        circuit = compiled(ast, n_attr) if method == "logdiff" else direct(ast, n_attr)
        return s + evaluate(circuit, atoms, s, not_cap)[1]
    if method in ("compose-w1", "compose-w3", "negprompt"):
        # Liu et al. 2022: s + w sum_i +-(s(x | c_i) - s(x)) (AND: +, NOT: -)
        w = weights[method]
        out = s.copy()
        for attr, positive in literals(ast):
            d = atoms.score(literal_event(n_attr, attr)) - s
            out = out + w * d if positive else out - w * d
        return out
    if method == "naive-or":
        d = disjuncts(ast)
        return sum(atoms.score(literal_event(n_attr, a)) for a in d) / len(d)
    if method == "monolithic":
        return s + monolithic()
    raise ValueError(f"unknown method {method!r}; allowed: {', '.join(METHODS)}")
