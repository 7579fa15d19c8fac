"""The Executable Exchange Contract (EEC): query templates, contract JSON, its validation and
canonical form, and the spec's query sampler.

Contract fields (INFERRED from the abstract, as in the spec):
``anchors`` name -> entity; ``branches`` each with ``id``, ``start`` (an anchor name) and
``hops`` [{rel, var}]; ``combine`` AND / OR / null; ``exclusions`` each with a ``scope``
{branch (id or null), var} and a ``set`` {class: "C2"} or {entity: 55}; ``return`` {var,
witness}. An exclusion scoped to (branch b, var v) constrains only the bindings of v inside
branch b; one scoped to (null, return var) constrains the answer.
"""

from __future__ import annotations

import json

import numpy as np

ANSWER = "y"
ANCHOR_NAMES = ("a", "b", "c")

# template -> (vars of each branch's hops, combine, scopes of the exclusions)
TEMPLATES = {
    "ANS": ([["y"]], None, [(None, "y")]),
    "HOP": ([["x", "y"]], None, [(0, "x")]),
    "BR-AND": ([["y"], ["x", "y"]], "AND", [(1, "x")]),
    "BR-OR": ([["y"], ["x", "y"]], "OR", [(1, "x")]),
    "DBL": ([["x", "y"]], None, [(0, "x"), (None, "y")]),
    # full scale only (spec: "plus 3-hop and 3-branch templates"; shapes INFERRED)
    "HOP3": ([["x", "z", "y"]], None, [(0, "x")]),
    "BR3-OR": ([["y"], ["x", "y"], ["y"]], "OR", [(1, "x")]),
}
SCOPE_SENSITIVE = ("HOP", "BR-AND", "BR-OR", "DBL", "HOP3", "BR3-OR")
BRANCH_TEMPLATES = ("BR-AND", "BR-OR", "BR3-OR")


class ContractError(ValueError):
    """A contract that does not satisfy the schema (a specification error)."""


def n_hops(template: str) -> int:
    return sum(len(v) for v in TEMPLATES[template][0])


def make(template: str, anchors, rels, sets) -> dict:
    """The gold contract of ``template`` with the given anchors (one per branch), relations
    (in hop order, branch by branch) and exclusion sets (in the template's order)."""
    branch_vars, combine, scopes = TEMPLATES[template]
    rels = list(rels)
    branches, k = [], 0
    for b, vars_ in enumerate(branch_vars):
        hops = [{"rel": int(rels[k + i]), "var": v} for i, v in enumerate(vars_)]
        k += len(vars_)
        branches.append({"id": b, "start": ANCHOR_NAMES[b], "hops": hops})
    return {
        "anchors": {ANCHOR_NAMES[b]: int(a) for b, a in enumerate(anchors)},
        "branches": branches,
        "combine": combine,
        "exclusions": [{"scope": {"branch": b, "var": v}, "set": dict(s)}
                       for (b, v), s in zip(scopes, sets, strict=True)],
        "return": {"var": ANSWER, "witness": True},
    }


def class_index(name) -> int:
    if not isinstance(name, str) or not name.startswith("C") or not name[1:].isdigit():
        raise ContractError(f"class {name!r} is not of the form C<k>")
    return int(name[1:])


def validate(c, n_entities: int, n_relations: int, n_classes: int) -> dict:
    """Raise ContractError unless ``c`` is a well-formed contract for this KG; return it."""
    if not isinstance(c, dict):
        raise ContractError("a contract is a JSON object")
    need = {"anchors", "branches", "combine", "exclusions", "return"}
    if set(c) != need:
        raise ContractError(f"contract keys {sorted(c)}; required exactly {sorted(need)}")
    anchors = c["anchors"]
    if not isinstance(anchors, dict) or not anchors:
        raise ContractError("anchors must be a non-empty object")
    for name, e in anchors.items():
        if not isinstance(e, int) or not 0 <= e < n_entities:
            raise ContractError(f"anchor {name!r}={e!r} is not an entity id")
    branches = c["branches"]
    if not isinstance(branches, list) or not branches:
        raise ContractError("branches must be a non-empty list")
    vars_of = {}
    for i, br in enumerate(branches):
        if not isinstance(br, dict) or br.get("id") != i or br.get("start") not in anchors:
            raise ContractError(f"branch {i}: needs id {i} and a start among the anchors")
        hops = br.get("hops")
        if not isinstance(hops, list) or not hops:
            raise ContractError(f"branch {i}: hops must be a non-empty list")
        for h in hops:
            if not isinstance(h.get("rel"), int) or not 0 <= h["rel"] < n_relations:
                raise ContractError(f"branch {i}: relation {h.get('rel')!r} is unknown")
            if not isinstance(h.get("var"), str):
                raise ContractError(f"branch {i}: a hop needs a var name")
        vs = [h["var"] for h in hops]
        if vs[-1] != c["return"].get("var") or len(set(vs)) != len(vs):
            raise ContractError(f"branch {i}: must end in the return var, vars distinct")
        vars_of[i] = set(vs)
    if (len(branches) > 1) != (c["combine"] in ("AND", "OR")) or \
            c["combine"] not in ("AND", "OR", None):
        raise ContractError("combine must be AND/OR with several branches, null with one")
    for ex in c["exclusions"]:
        scope, s = ex.get("scope", {}), ex.get("set", {})
        b, v = scope.get("branch"), scope.get("var")
        if b is None:
            if v != c["return"]["var"]:
                raise ContractError(f"exclusion scope (null, {v!r}): a branch-free scope "
                                    "must be the return var")
        elif b not in vars_of or v not in vars_of[b]:
            raise ContractError(f"exclusion scope ({b!r}, {v!r}) names no var of a branch")
        if list(s) == ["class"]:
            if not 0 <= class_index(s["class"]) < n_classes:
                raise ContractError(f"class {s['class']!r} is unknown")
        elif list(s) == ["entity"]:
            if not isinstance(s["entity"], int) or not 0 <= s["entity"] < n_entities:
                raise ContractError(f"excluded entity {s['entity']!r} is not an entity id")
        else:
            raise ContractError(f"exclusion set {s!r}: one of class or entity")
    return c


def canonical(c) -> str:
    """One string per contract meaning: sorted keys, exclusions in a fixed order."""
    if c is None:
        return ""
    c = dict(c)
    c["exclusions"] = sorted(c["exclusions"], key=lambda e: json.dumps(e, sort_keys=True))
    return json.dumps(c, sort_keys=True, separators=(",", ":"))


def template_of(c) -> str | None:
    """The template whose skeleton (branch vars, combine, scopes) ``c`` has, else None."""
    vars_ = [[h["var"] for h in br["hops"]] for br in c["branches"]]
    scopes = sorted(((e["scope"]["branch"] if e["scope"]["branch"] is not None else -1),
                     e["scope"]["var"]) for e in c["exclusions"])
    for name, (bv, comb, sc) in TEMPLATES.items():
        if bv == vars_ and comb == c["combine"] and \
                sorted(((b if b is not None else -1), v) for b, v in sc) == scopes:
            return name
    return None


def exclusion_mask(kg, s: dict) -> np.ndarray:
    """The boolean entity set of one exclusion set."""
    if "class" in s:
        return kg.member[:, class_index(s["class"])].copy()
    m = np.zeros(kg.n, dtype=bool)
    m[int(s["entity"])] = True
    return m


def scoped_masks(kg, c) -> dict:
    """(branch, var) -> union of the exclusion sets scoped there."""
    out: dict = {}
    for ex in c["exclusions"]:
        key = (ex["scope"]["branch"], ex["scope"]["var"])
        m = exclusion_mask(kg, ex["set"])
        out[key] = out[key] | m if key in out else m
    return out


def with_answer_scope(c) -> dict:
    """The same contract with every exclusion moved to the answer scope (MATLOGIC-NOSCOPE and
    the scope-free specifier)."""
    out = json.loads(json.dumps(c))
    for ex in out["exclusions"]:
        ex["scope"] = {"branch": None, "var": out["return"]["var"]}
    return out


# --------------------------------------------------------------------------------------------
def sample(template: str, kg, p: dict, rng: np.random.Generator, reference):
    """One query of ``template`` by the spec's rejection rule: anchors and relations uniform
    (distinct relations, distinct anchors), each exclusion a class (uniform) or, with
    probability p_entity_exclusion, one entity drawn from the positive bindings of its scope
    (INFERRED: the spec does not say which entity; a random one would rarely matter); rejected
    when the gold answer set is empty or larger than max_answers. Returns (contract, gold
    answers, per-branch gold answers)."""
    from .executors import positive_at

    branch_vars, _, scopes = TEMPLATES[template]
    n_br, hops = len(branch_vars), n_hops(template)
    for _ in range(int(p["max_tries"])):
        anchors = rng.choice(kg.n, n_br, replace=False)
        rels = rng.choice(kg.n_relations, hops, replace=False)
        draft = make(template, anchors, rels, [{"class": "C0"}] * len(scopes))
        sets, ok = [], True
        for b, v in scopes:
            if rng.random() < float(p["p_entity_exclusion"]):
                cand = np.flatnonzero(positive_at(kg, draft, b, v))
                if not cand.size:
                    ok = False
                    break
                sets.append({"entity": int(rng.choice(cand))})
            else:
                sets.append({"class": f"C{int(rng.integers(kg.member.shape[1]))}"})
        if not ok:
            continue
        c = make(template, anchors, rels, sets)
        gold, per_branch = reference(kg, c)
        if 0 < gold.sum() <= int(p["max_answers"]):
            return c, gold, per_branch
    raise RuntimeError(f"no {template} query with 1..{p['max_answers']} answers in "
                       f"{p['max_tries']} tries; raise max_tries or max_answers")
