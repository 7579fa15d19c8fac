"""End-to-end track: questions rendered from contracts, and the specifier that writes contracts
back from the text (our stand-in for the LLM specifier).

Rendering (spec): entities are written "E17", relations by a fixed noun lexicon, classes as
"C2 items"; three paraphrase templates per query type, and in a fraction p_ambiguous of the
questions a scope-ambiguous paraphrase whose exclusion phrase ("excluding C2 items") has no
attachment cue (the gold contract still fixes the scope). INFERRED: every paraphrase names the
anchors, relations and exclusions in contract order, so that exact lexicon matching fills the
slots in order; an excluded single entity is written "the entity E55".

Specifier (spec): a multinomial logistic regression on 1-3-gram counts predicts the query type,
a second one the scope of each exclusion (INFERRED encoding: the exclusion's mention replaced by
TGT, the others by OTH; label "mid" = the intermediate var of the branch that has one, "ans" =
the answer); anchors, relations and classes by exact lexicon matching; the contract is
validated and an invalid one is a specification error. The scope-free specifier keeps the type
head and puts every exclusion on the answer.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from .contract import ANSWER, TEMPLATES, ContractError, make, validate

REL_NOUNS = ("producer", "location", "partner", "author", "supplier", "owner")

# {a} {b} {c}: anchors; {r1}..{r4}: relations in contract order; {s1}/{p1}: the first
# exclusion set, singular / plural; {s2}/{p2}: the second.
PARAPHRASES = {
    "ANS": [
        "Which {r1}s of {a} are not {p1}?",
        "List every {r1} of {a}, keeping only answers other than {p1}.",
        "Find the {r1}s of {a}; the answer must not be {s1}.",
    ],
    "HOP": [
        "Starting from {a}, go via a {r1} that is not {s1}; which {r2}s do you reach?",
        "Take the {r1}s of {a} other than {p1}: what are their {r2}s?",
        "Follow {r1} links from {a}, never passing through {s1}, then one {r2} link: which "
        "entities result?",
    ],
    "BR-AND": [
        "Which {r1}s of {a} are also reached from {b} via a {r2} that is not {s1} and then a "
        "{r3} link?",
        "List the {r1}s of {a} that can also be reached by taking the {r2}s of {b} other than "
        "{p1} and following {r3} links.",
        "Find every {r1} of {a} that is also reachable when you follow {r2} links from {b}, "
        "never passing through {s1}, then a {r3} link.",
    ],
    "BR-OR": [
        "Which entities are {r1}s of {a}, or are reached from {b} via a {r2} that is not {s1} "
        "and then a {r3} link?",
        "List the {r1}s of {a} together with whatever can be reached by taking the {r2}s of "
        "{b} other than {p1} and following {r3} links.",
        "Find every entity that is a {r1} of {a} or that you reach when you follow {r2} links "
        "from {b}, never passing through {s1}, then a {r3} link.",
    ],
    "DBL": [
        "Starting from {a}, go via a {r1} that is not {s1}; which {r2}s do you reach that are "
        "not {p2}?",
        "Take the {r1}s of {a} other than {p1}: what are their {r2}s, keeping only answers "
        "other than {p2}?",
        "Follow {r1} links from {a}, never passing through {s1}, then one {r2} link: which "
        "entities result? The answer must not be {s2}.",
    ],
    "HOP3": [
        "Starting from {a}, go via a {r1} that is not {s1}, then a {r2} link; which {r3}s do "
        "you reach?",
        "Take the {r1}s of {a} other than {p1}, then their {r2}s: what are the {r3}s of those?",
        "Follow {r1} links from {a}, never passing through {s1}, then {r2} and {r3} links: "
        "which entities result?",
    ],
    "BR3-OR": [
        "Which entities are {r1}s of {a}, or are reached from {b} via a {r2} that is not {s1} "
        "and then a {r3} link, or are {r4}s of {c}?",
        "List the {r1}s of {a} together with whatever can be reached by taking the {r2}s of "
        "{b} other than {p1} and following {r3} links, and the {r4}s of {c}.",
        "Find every entity that is a {r1} of {a}, or that you reach when you follow {r2} links "
        "from {b}, never passing through {s1}, then a {r3} link, or that is a {r4} of {c}.",
    ],
}
# the scope-ambiguous paraphrase per type: one neutral exclusion phrase, no attachment cue
AMBIGUOUS = {
    "ANS": "Give the {r1}s of {a}, excluding {p1}.",
    "HOP": "Follow {r1} then {r2} links from {a}, excluding {p1}: which entities result?",
    "BR-AND": "Give the {r1}s of {a} that are also reached by following {r2} then {r3} links "
              "from {b}, excluding {p1}.",
    "BR-OR": "Give the {r1}s of {a} as well as everything reached by following {r2} then {r3} "
             "links from {b}, excluding {p1}.",
    "DBL": "Follow {r1} then {r2} links from {a}, excluding {p1} and {p2}: which entities "
           "result?",
    "HOP3": "Follow {r1}, {r2} then {r3} links from {a}, excluding {p1}: which entities "
            "result?",
    "BR3-OR": "Give the {r1}s of {a}, everything reached by following {r2} then {r3} links "
              "from {b}, and the {r4}s of {c}, excluding {p1}.",
}

ENTITY_RE = re.compile(r"(?<!entity )\bE(\d+)\b")
EXCL_RE = re.compile(r"\b(?:C(\d+)\b|entity E(\d+)\b)")
REL_RE = re.compile(r"\b(" + "|".join(REL_NOUNS) + r")s?\b")


def _set_phrases(s: dict) -> tuple[str, str]:
    if "class" in s:
        return f"a {s['class']} item", f"{s['class']} items"
    return f"the entity E{s['entity']}", f"the entity E{s['entity']}"


def render(c: dict, template: str, variant: int, swap: bool = False) -> str:
    """The question of contract ``c``: paraphrase ``variant`` (0-2) or the ambiguous one
    (-1); ``swap`` lists the exclusion sets in reverse order (ambiguous paraphrases only)."""
    fields = {name: f"E{e}" for name, e in c["anchors"].items()}
    rels = [h["rel"] for br in c["branches"] for h in br["hops"]]
    fields.update({f"r{i + 1}": REL_NOUNS[r] for i, r in enumerate(rels)})
    exclusions = c["exclusions"][::-1] if swap and variant < 0 else c["exclusions"]
    for i, ex in enumerate(exclusions):
        fields[f"s{i + 1}"], fields[f"p{i + 1}"] = _set_phrases(ex["set"])
    text = AMBIGUOUS[template] if variant < 0 else PARAPHRASES[template][variant]
    return text.format(**fields)


def render_many(contracts, templates, rng, p_ambiguous: float):
    """Questions and their ambiguity flags: a paraphrase uniform over the three templates,
    replaced by the ambiguous one with probability p_ambiguous. An ambiguous paraphrase with
    two exclusions lists their sets in random order, so the text does not say which set binds
    which var."""
    texts, amb = [], []
    for c, t in zip(contracts, templates, strict=True):
        is_amb = bool(rng.random() < p_ambiguous)
        variant = -1 if is_amb else int(rng.integers(3))
        swap = bool(is_amb and rng.random() < 0.5)
        texts.append(render(c, t, variant, swap))
        amb.append(is_amb)
    return texts, np.array(amb)


# --------------------------------------------------------------------------------------------
def _type_text(q: str) -> str:
    return EXCL_RE.sub("CLS", ENTITY_RE.sub("ENT", q))


def _scope_texts(q: str) -> list[str]:
    """One text per exclusion mention: that mention TGT, the others OTH."""
    base = ENTITY_RE.sub("ENT", q)
    spans = [m.span() for m in EXCL_RE.finditer(base)]
    out = []
    for k in range(len(spans)):
        parts, last = [], 0
        for j, (s, e) in enumerate(spans):
            parts.append(base[last:s])
            parts.append("TGT" if j == k else "OTH")
            last = e
        parts.append(base[last:])
        out.append("".join(parts))
    return out


def _scope_label(c: dict, k: int) -> str:
    return "ans" if c["exclusions"][k]["scope"]["branch"] is None else "mid"


def _mentions(q: str):
    anchors = [int(m) for m in ENTITY_RE.findall(q)]
    rels = [REL_NOUNS.index(m) for m in REL_RE.findall(q)]
    sets = [{"class": f"C{cl}"} if cl else {"entity": int(en)} for cl, en in EXCL_RE.findall(q)]
    return anchors, rels, sets


def assemble(template: str, q: str, scopes: list | None, kg_shape: tuple) -> dict:
    """A contract from the predicted type, the lexicon matches and the predicted scope of each
    exclusion mention (None: every exclusion on the answer); raises ContractError when the
    mentions do not fill the type's slots or a scope has no var to bind."""
    from .contract import n_hops

    branch_vars, combine, gold_scopes = TEMPLATES[template]
    anchors, rels, sets = _mentions(q)
    if len(anchors) != len(branch_vars) or len(rels) != n_hops(template) or \
            len(sets) != len(gold_scopes):
        raise ContractError(f"the mentions do not fill the slots of {template}")
    c = make(template, anchors, rels, sets)
    mid = [(b, vs[0]) for b, vs in enumerate(branch_vars) if len(vs) > 1]
    for k, ex in enumerate(c["exclusions"]):
        label = "ans" if scopes is None else scopes[k]
        if label == "ans":
            ex["scope"] = {"branch": None, "var": ANSWER}
        elif mid:
            ex["scope"] = {"branch": mid[-1][0], "var": mid[-1][1]}
        else:
            raise ContractError(f"scope 'mid' but {template} has no intermediate var")
    return validate(c, *kg_shape)


class Specifier:
    """Type head and scope head: CountVectorizer(1-3-grams) + multinomial logistic
    regression each (scikit-learn); ``scoped=False`` drops the scope head."""

    def __init__(self, ngram_max: int = 3, C: float = 1.0, max_iter: int = 2000):
        self.ngram_max, self.C, self.max_iter = ngram_max, C, max_iter

    def _model(self):
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline

        return make_pipeline(
            CountVectorizer(ngram_range=(1, self.ngram_max), token_pattern=r"[A-Za-z]+"),
            LogisticRegression(C=self.C, max_iter=self.max_iter))

    def fit(self, questions, templates, contracts):
        from sklearn.exceptions import ConvergenceWarning
        from threadpoolctl import threadpool_limits

        stexts, slabels = [], []
        for q, c in zip(questions, contracts, strict=True):
            for k, t in enumerate(_scope_texts(q)):
                stexts.append(t)
                slabels.append(_scope_label(c, k))
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.type_ = self._model().fit([_type_text(q) for q in questions], list(templates))
            self.scope_ = self._model().fit(stexts, slabels) if len(set(slabels)) > 1 else None
            self.only_scope_ = slabels[0] if self.scope_ is None else None
        self.n_iter_ = max(int(np.max(self.type_[-1].n_iter_)),
                           int(np.max(self.scope_[-1].n_iter_)) if self.scope_ else 0)
        return self

    def predict(self, questions, kg_shape, scoped: bool = True):
        """(predicted type, contract or None when invalid) per question."""
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):
            types = self.type_.predict([_type_text(q) for q in questions])
            per_q = [_scope_texts(q) for q in questions]
            flat = [t for ts in per_q for t in ts]
            if scoped and flat:
                labels = (list(self.scope_.predict(flat)) if self.scope_ is not None
                          else [self.only_scope_] * len(flat))
            else:
                labels = [None] * len(flat)
        out, k = [], 0
        for q, t, ts in zip(questions, types, per_q, strict=True):
            scopes = labels[k:k + len(ts)] if scoped else None
            k += len(ts)
            try:
                out.append((str(t), assemble(str(t), q, scopes, kg_shape)))
            except ContractError:
                out.append((str(t), None))
        return out
