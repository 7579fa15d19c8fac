"""The synthetic private-record benchmark: vocabularies, templated records, instructions, the
decomposition pipeline's gold tags and the one-pass corpus's noisy tags (numpy only).

A record is about one subject whose profile holds the 14 attribute categories below. Sentences
come from 7 document types x 12-13 templates; a template mentions 0-3 subject attributes and,
as distractors, third parties (doctors, lawyers, colleagues) and public facts (conference city,
hospital, year) with the same surface types. Only context words ("patient X" vs "dr. X",
"lives in X" vs "conference in X") tell whose data a value is.

Every value is one or more tokens of a fixed vocabulary built deterministically at import.
Abstraction uses one fixed value -> coarse lexicon (DOB -> year, city -> region, workplace ->
industry, diagnosis -> condition group, salary -> band, job title -> field).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

CATEGORIES = ("name", "dob", "ethnicity", "workplace", "job", "city", "address", "phone",
              "email", "diagnosis", "medication", "account", "salary", "case")
CAT = {c: i for i, c in enumerate(CATEGORIES)}
N_CAT = len(CATEGORIES)
ABSTRACTABLE = ("dob", "city", "workplace", "diagnosis", "salary", "job")
# a linked attribute reveals its parent: the email spells the name, the street lies in one city
LINKS = {"name": ("email",), "city": ("address",)}
KEEP, REMOVE, ABSTRACT = 0, 1, 2          # per-token tags
A_NONE, A_REMOVE, A_ABSTRACT, A_KEEP = 0, 1, 2, 3   # per-(record, category) instruction
OWNER_SUBJECT, OWNER_THIRD, OWNER_PUBLIC = 0, 1, 2

# ------------------------------------------------------------------------------------------
# vocabulary (deterministic: the same strings and ids on every machine)
# ------------------------------------------------------------------------------------------
_CONS = list("bcdfghjklmnprstvwz")
_VOW = list("aeiou")


def _words(rng, n, syll, suffix, taken):
    out = []
    while len(out) < n:
        w = "".join(rng.choice(_CONS) + rng.choice(_VOW) for _ in range(syll)) + suffix
        if w not in taken:
            taken.add(w)
            out.append(w)
    return out


def _build_lexicons():
    rng = np.random.default_rng(20260219)
    taken: set = set()
    lex = {
        "first": _words(rng, 300, 2, "", taken),
        "last": _words(rng, 300, 3, "", taken),
        "region": [f"{r}-region" for r in ("north", "south", "east", "west", "coast",
                                           "central", "highland", "valley")],
        "city": _words(rng, 60, 2, "ville", taken),
        "street": _words(rng, 120, 2, "-street", taken),
        "industry": [f"{w}-sector" for w in ("health", "finance", "retail", "energy", "media",
                                             "transport", "education", "farming", "tech",
                                             "law")],
        "workplace": _words(rng, 80, 2, "-corp", taken),
        "group": [f"{w}-condition" for w in ("cardiac", "respiratory", "metabolic", "neural",
                                             "mental", "skin")],
        "diagnosis": _words(rng, 40, 2, "itis", taken),
        "medication": _words(rng, 30, 2, "mab", taken),
        "field": [f"{w}-field" for w in ("engineering", "care", "sales", "science", "arts",
                                         "trades", "admin", "legal")],
        "job": _words(rng, 40, 2, "ist", taken),
        "ethnicity": _words(rng, 12, 2, "ian", taken),
        "band": [f"band-{b}" for b in ("low", "lower-mid", "mid", "upper-mid", "high", "top")],
        "salary": [f"salary-{30 + 5 * i}k" for i in range(30)],
        "domain": _words(rng, 10, 2, "-mail", taken),
        "month": ["january", "february", "march", "april", "may", "june", "july", "august",
                  "september", "october", "november", "december"],
        "year": [str(y) for y in range(1940, 2006)],
        "number": [f"{n:02d}" for n in range(100)],
    }
    # coarse maps (value index -> coarse index), fixed by construction
    maps = {"city": ("region", lambda i: i % 8), "street": ("city", lambda i: i % 60),
            "workplace": ("industry", lambda i: i % 10),
            "diagnosis": ("group", lambda i: i % 6), "job": ("field", lambda i: i % 8),
            "salary": ("band", lambda i: i // 5)}
    return lex, maps


LEX, COARSE_OF = _build_lexicons()

# 7 document types, templates with slots. A third party always has its own context word
# ("dr.", "colleague", "friend", "with", ...), so whose name it is shows in the words next to
# it. Subject slots: NAME FIRST LAST DOB ETH WORK JOB CITY ADDR PHONE EMAIL DIAG MED ACCT SAL
# CASE. Distractors: TPNAME TPFIRST TPLAST (third parties), PCITY PWORK PYEAR PNUM (public).
TEMPLATES = {
    "medical": [
        "patient {NAME} , born {DOB} , was seen today .",
        "{FIRST} reports symptoms consistent with {DIAG} .",
        "dr. {TPNAME} prescribed {MED} for {FIRST} .",
        "the patient works as a {JOB} at {WORK} .",
        "ms. {LAST} lives at {ADDR} in {CITY} .",
        "contact number on file is {PHONE} .",
        "the referral came from {PWORK} hospital in {PCITY} .",
        "family history notes {ETH} heritage .",
        "follow up with dr. {TPLAST} in room {PNUM} .",
        "insurance account {ACCT} was billed .",
        "the clinic guideline from {PYEAR} was applied .",
        "nurse {TPNAME} recorded vitals .",
        "{NAME} can be reached at {EMAIL} .",
    ],
    "legal": [
        "client {NAME} retained counsel on case {CASE} .",
        "attorney {TPNAME} represents the opposing party .",
        "{FIRST} was born on {DOB} according to the filing .",
        "the client resides at {ADDR} , {CITY} .",
        "{FIRST} is employed by {WORK} as a {JOB} .",
        "the hearing is set at the court in {PCITY} .",
        "judge {TPLAST} granted the motion .",
        "ms. {LAST} disclosed a diagnosis of {DIAG} .",
        "settlement funds go to account {ACCT} .",
        "the client reported an annual salary of {SAL} .",
        "witness {TPNAME} testified for {PNUM} minutes .",
        "correspondence to {EMAIL} was acknowledged .",
        "the statute amended in {PYEAR} applies .",
    ],
    "financial": [
        "account holder {NAME} opened account {ACCT} .",
        "{FIRST} declared a salary of {SAL} from {WORK} .",
        "date of birth on the application is {DOB} .",
        "mailing address is {ADDR} , {CITY} .",
        "the applicant identifies as {ETH} .",
        "advisor {TPNAME} approved the loan .",
        "phone verification used {PHONE} .",
        "the branch in {PCITY} processed the request .",
        "{FIRST} works as a {JOB} .",
        "statements are sent to {EMAIL} .",
        "the rate was fixed in {PYEAR} by {PWORK} .",
        "ms. {LAST} listed {MED} as a recurring expense .",
    ],
    "calendar": [
        "meeting with {TPNAME} at {PWORK} office .",
        "{FIRST} has an appointment for {DIAG} treatment .",
        "pick up {MED} at the pharmacy .",
        "conference in {PCITY} starts at {PNUM} .",
        "{NAME} birthday party , born {DOB} .",
        "call {FIRST} back at {PHONE} .",
        "shift at {WORK} as {JOB} .",
        "deliver package to {ADDR} in {CITY} .",
        "review case {CASE} with lawyer {TPLAST} .",
        "send invoice from {EMAIL} .",
        "team lunch with {TPNAME} and {TPFIRST} .",
        "annual review of salary {SAL} .",
    ],
    "email": [
        "hi {TPFIRST} , this is {NAME} writing .",
        "please reply to {EMAIL} .",
        "i moved to {ADDR} in {CITY} last month .",
        "my new role is {JOB} at {WORK} .",
        "i was diagnosed with {DIAG} .",
        "my doctor , dr. {TPLAST} , suggested {MED} .",
        "you can call me at {PHONE} .",
        "i will attend the summit in {PCITY} .",
        "best , {FIRST} .",
        "the transfer to account {ACCT} went through .",
        "colleague {TPNAME} sends regards from {PWORK} .",
        "my birthday is {DOB} .",
    ],
    "meeting": [
        "{NAME} : thanks everyone for joining .",
        "colleague {TPNAME} : let us review the {PYEAR} budget .",
        "{FIRST} : i joined {WORK} as {JOB} .",
        "{FIRST} : i am from {CITY} originally .",
        "colleague {TPNAME} : the office in {PCITY} will close .",
        "{FIRST} : my salary of {SAL} is below band .",
        "{FIRST} : i was out with {DIAG} .",
        "colleague {TPNAME} : reach me after item {PNUM} .",
        "{FIRST} : my number is {PHONE} .",
        "{FIRST} : my email is {EMAIL} .",
        "{FIRST} : my claim case {CASE} is pending .",
        "{FIRST} : as an {ETH} employee i raised a concern .",
    ],
    "messages": [
        "{FIRST} : running late , at {ADDR} .",
        "friend {TPFIRST} : ok see you in {PCITY} .",
        "{FIRST} : took my {MED} already .",
        "{FIRST} : doctor says it is {DIAG} .",
        "friend {TPFIRST} : happy birthday !",
        "{FIRST} : thanks , born {DOB} feels old .",
        "{FIRST} : my new number {PHONE} .",
        "friend {TPFIRST} : how is {PWORK} ?",
        "{FIRST} : fine , still {JOB} at {WORK} .",
        "{FIRST} : send money to {ACCT} .",
        "friend {TPNAME} says hi from {PCITY} .",
        "{FIRST} : mail me at {EMAIL} .",
    ],
}
DOC_TYPES = tuple(TEMPLATES)
SUBJECT_SLOTS = {"NAME": "name", "FIRST": "name", "LAST": "name", "DOB": "dob",
                 "ETH": "ethnicity", "WORK": "workplace", "JOB": "job", "CITY": "city",
                 "ADDR": "address", "PHONE": "phone", "EMAIL": "email", "DIAG": "diagnosis",
                 "MED": "medication", "ACCT": "account", "SAL": "salary", "CASE": "case"}
THIRD_SLOTS = ("TPNAME", "TPFIRST", "TPLAST")
PUBLIC_SLOTS = ("PCITY", "PWORK", "PYEAR", "PNUM")


def _parse(t):
    return [(w[1:-1], True) if w.startswith("{") else (w, False) for w in t.split()]


PARSED = {d: [_parse(t) for t in ts] for d, ts in TEMPLATES.items()}
HAS_DISTRACTOR = {d: np.array([any(s and w in THIRD_SLOTS + PUBLIC_SLOTS for w, s in p)
                               for p in ps]) for d, ps in PARSED.items()}


def _vocab():
    words = ["<pad>", ".", "@"]
    for d in DOC_TYPES:
        for p in PARSED[d]:
            words += [w for w, s in p if not s]
    for key in ("first", "last", "region", "city", "street", "industry", "workplace", "group",
                "diagnosis", "medication", "field", "job", "ethnicity", "band", "salary",
                "domain", "month", "year", "number"):
        words += LEX[key]
    return list(dict.fromkeys(words))


VOCAB = _vocab()
TOK = {w: i for i, w in enumerate(VOCAB)}
V = len(VOCAB)
PAD, DOT, AT = TOK["<pad>"], TOK["."], TOK["@"]


def _ids(key):
    return np.array([TOK[w] for w in LEX[key]], dtype=np.int64)


IDS = {k: _ids(k) for k in LEX}

# abstraction lexicon: token -> coarse token (-1: deleted; the token itself: the year of a DOB).
# Tokens without a coarse form are deleted when tagged abstract.
COARSE = np.full(V, -1, dtype=np.int64)
for _key, (_to, _f) in COARSE_OF.items():
    if _key == "street":
        continue
    for _i, _t in enumerate(IDS[_key]):
        COARSE[_t] = IDS[_to][_f(_i)]
COARSE[IDS["year"]] = IDS["year"]
# street -> city (the inference attacker's gazetteer; two streets per city)
STREET_CITY = np.full(V, -1, dtype=np.int64)
for _i, _t in enumerate(IDS["street"]):
    STREET_CITY[_t] = IDS["city"][COARSE_OF["street"][1](_i)]
IS = {k: np.isin(np.arange(V), IDS[k]) for k in ("first", "last", "month", "year", "number",
                                                  "domain", "street", "city")}
IS["name"] = IS["first"] | IS["last"]


# ------------------------------------------------------------------------------------------
# records
# ------------------------------------------------------------------------------------------
@dataclass
class Record:
    tokens: list = field(default_factory=list)
    sent_starts: list = field(default_factory=list)   # token index of each sentence
    para_starts: list = field(default_factory=list)   # sentence index of each paragraph
    spans: list = field(default_factory=list)         # (start, length, owner, category)
    values: dict = field(default_factory=dict)        # category -> canonical token ids
    doc: int = 0


def profile(rng) -> dict:
    """The subject's 14 attributes as token-id tuples (canonical values)."""
    f, la = IDS["first"][rng.integers(300)], IDS["last"][rng.integers(300)]
    num = IDS["number"]
    return {
        "name": (f, la),
        "dob": (num[rng.integers(1, 29)], IDS["month"][rng.integers(12)],
                IDS["year"][rng.integers(len(IDS["year"]))]),
        "ethnicity": (IDS["ethnicity"][rng.integers(12)],),
        "workplace": (IDS["workplace"][rng.integers(80)],),
        "job": (IDS["job"][rng.integers(40)],),
        "city": (IDS["city"][rng.integers(60)],),
        "phone": tuple(num[rng.integers(100, size=3)]),
        "email": (f, DOT, la, AT, IDS["domain"][rng.integers(10)]),
        "diagnosis": (IDS["diagnosis"][rng.integers(40)],),
        "medication": (IDS["medication"][rng.integers(30)],),
        "account": tuple(num[rng.integers(100, size=2)]),
        "salary": (IDS["salary"][rng.integers(30)],),
        "case": tuple(num[rng.integers(100, size=2)]),
    }


def _with_address(prof, rng):
    # the street lies in the subject's city (2 streets per city): the linked attribute
    city = int(np.nonzero(IDS["city"] == prof["city"][0])[0][0])
    street = IDS["street"][city + 60 * rng.integers(2)]
    prof["address"] = (IDS["number"][rng.integers(1, 100)], street)
    return prof


def _other(rng, key, avoid):
    ids = IDS[key]
    while True:
        t = ids[rng.integers(len(ids))]
        if t != avoid:
            return t


def make_record(rng, n_sent: int, distractor_weight: float) -> Record:
    prof = _with_address(profile(rng), rng)
    doc = int(rng.integers(len(DOC_TYPES)))
    temps = PARSED[DOC_TYPES[doc]]
    w = 1.0 + distractor_weight * HAS_DISTRACTOR[DOC_TYPES[doc]]
    picks = rng.choice(len(temps), size=n_sent, p=w / w.sum())
    rec = Record(values={c: tuple(int(t) for t in v) for c, v in prof.items()}, doc=doc)
    s = 0
    while s < n_sent:   # paragraphs of 1-4 sentences
        rec.para_starts.append(s)
        s += int(rng.integers(1, 5))
    for k in picks:
        rec.sent_starts.append(len(rec.tokens))
        for word, is_slot in temps[k]:
            if not is_slot:
                rec.tokens.append(TOK[word])
                continue
            slot = word
            start = len(rec.tokens)
            if slot in SUBJECT_SLOTS:
                cat = SUBJECT_SLOTS[slot]
                val = (prof["name"][:1] if slot == "FIRST" else prof["name"][1:]
                       if slot == "LAST" else prof[cat])
                owner = OWNER_SUBJECT
            elif slot in THIRD_SLOTS:
                # distractors never share a value with the subject (no accidental leaks)
                f, la = _other(rng, "first", prof["name"][0]), _other(rng, "last",
                                                                      prof["name"][1])
                val = (f, la) if slot == "TPNAME" else (f,) if slot == "TPFIRST" else (la,)
                cat, owner = "name", OWNER_THIRD
            else:
                key = {"PCITY": "city", "PWORK": "workplace", "PYEAR": "year",
                       "PNUM": "number"}[slot]
                own = prof.get(key, (-1,))[0]
                val = (_other(rng, key, own),)
                cat, owner = key, OWNER_PUBLIC
            rec.tokens.extend(int(t) for t in val)
            rec.spans.append((start, len(val), owner, CAT.get(cat, -1)))
    return rec


# ------------------------------------------------------------------------------------------
# instructions (official selection rules, sanitize.py; the LLM ranking is a random order)
# ------------------------------------------------------------------------------------------
def select_targets(rng, present: list, keep_prob: float) -> np.ndarray:
    """Actions per category for one record.

    Official rules (sanitize.py _select_and_remove_attributes, select_target_attrbutes):
    n_abstract = ceil(Beta(2,5) G/2), n_drop = round(Beta(2,5) G/2) with G the attributes
    present; candidates ranked by sensitivity with the bottom third cut; drawn uniformly with
    replacement and deduplicated (the official np.random.choice passes the weights as its
    ``replace`` argument). INFERRED: the LLM's per-record sensitivity ranking is a random
    order; every category is an "individual" attribute (no attribute groups). Explicit keep
    attributes (1-2) appear in a keep_prob share of instructions, chosen among attributes that
    are neither targets nor linked to a target (no token overlap with the targets).
    """
    act = np.zeros(N_CAT, dtype=np.int8)
    G = len(present)
    if G == 0:
        return act

    def draw(pool, n):
        if n <= 0 or not pool:
            return []
        order = [pool[i] for i in rng.permutation(len(pool))]
        if len(order) > 3:
            order = order[: len(order) * 2 // 3]
        return sorted(set(order[i] for i in rng.integers(len(order), size=n)))

    pool_a = [c for c in present if CATEGORIES[c] in ABSTRACTABLE]
    for c in draw(pool_a, int(math.ceil(rng.beta(2, 5) * G / 2))):
        act[c] = A_ABSTRACT
    pool_d = [c for c in present if act[c] == A_NONE]
    for c in draw(pool_d, int(np.round(rng.beta(2, 5) * G / 2))):
        act[c] = A_REMOVE
    if rng.random() < keep_prob:
        linked = {CAT[x] for p, xs in LINKS.items() if act[CAT[p]] for x in xs}
        pool_k = [c for c in present if act[c] == A_NONE and c not in linked]
        n = min(len(pool_k), 1 + int(rng.integers(2)))
        for c in (rng.choice(pool_k, size=n, replace=False) if n else []):
            act[int(c)] = A_KEEP
    return act


def linked_removals(act) -> set:
    """Linked categories the decomposition pipeline removes with their target parent."""
    out = set()
    for parent, kids in LINKS.items():
        if act[CAT[parent]] in (A_REMOVE, A_ABSTRACT):
            out |= {CAT[k] for k in kids if act[CAT[k]] in (A_NONE,)}
    return out


def gold_tags(rec: Record, act) -> np.ndarray:
    """Decomposition pipeline: every occurrence of a target is tagged in every chunk, one
    abstraction per attribute (the fixed lexicon), and linked attributes are removed with
    their parent. The pipeline's per-chunk pass gives the same tags as one pass over the whole
    record here, because every span lies inside one sentence."""
    tags = np.zeros(len(rec.tokens), dtype=np.int8)
    linked = linked_removals(act)
    for start, n, owner, cat in rec.spans:
        if owner != OWNER_SUBJECT:
            continue
        if act[cat] == A_REMOVE or cat in linked:
            tags[start:start + n] = REMOVE
        elif act[cat] == A_ABSTRACT:
            tags[start:start + n] = ABSTRACT
    return tags


def one_pass_tags(rec: Record, act, rng, slope: float, cap: float) -> tuple[np.ndarray, int,
                                                                             int]:
    """One whole-document pass: each target occurrence is missed (left unchanged) with
    probability min(cap, slope x sentences); linked attributes are never handled.
    Returns the tags, the number of target occurrences and how many were missed."""
    tags = np.zeros(len(rec.tokens), dtype=np.int8)
    q = min(cap, slope * len(rec.sent_starts))
    occ = miss = 0
    for start, n, owner, cat in rec.spans:
        if owner != OWNER_SUBJECT or act[cat] not in (A_REMOVE, A_ABSTRACT):
            continue
        occ += 1
        if rng.random() < q:
            miss += 1
            continue
        tags[start:start + n] = REMOVE if act[cat] == A_REMOVE else ABSTRACT
    return tags, occ, miss


def chunks_of(rec: Record, max_tokens: int) -> list[tuple[int, int]]:
    """Token ranges of the training chunks: paragraphs, halved recursively (by sentences)
    while longer than max_tokens (official: blank-line paragraphs, halved at 512+ chars)."""
    bounds = rec.sent_starts + [len(rec.tokens)]
    paras = rec.para_starts + [len(rec.sent_starts)]
    out = []

    def split(a, b):   # sentences a..b-1
        if bounds[b] - bounds[a] > max_tokens and b - a > 1:
            m = (a + b) // 2
            split(a, m)
            split(m, b)
        else:
            out.append((bounds[a], bounds[b]))

    for i in range(len(paras) - 1):
        split(paras[i], paras[i + 1])
    return out


# ------------------------------------------------------------------------------------------
# a split as flat arrays (npz: numeric arrays only)
# ------------------------------------------------------------------------------------------
def build_split(rng, n_records: int, sent_range, distractor_weight: float, keep_prob: float,
                max_chunk: int, one_pass=None) -> dict:
    """n_records records with instructions, gold tags, chunks and (train) one-pass tags."""
    tok, gold, op = [], [], []
    rec_off, sent_n, docs, acts, values = [0], [], [], [], []
    span_rows, chunk_rows = [], []
    occ = miss = 0
    lo, hi = sent_range
    for r in range(n_records):
        rec = make_record(rng, int(rng.integers(lo, hi + 1)), distractor_weight)
        present = sorted({c for _, _, o, c in rec.spans if o == OWNER_SUBJECT})
        act = select_targets(rng, present, keep_prob)
        base = rec_off[-1]
        tok.extend(rec.tokens)
        gold.append(gold_tags(rec, act))
        if one_pass is not None:
            t, o, m = one_pass_tags(rec, act, rng, *one_pass)
            op.append(t)
            occ, miss = occ + o, miss + m
        rec_off.append(base + len(rec.tokens))
        sent_n.append(len(rec.sent_starts))
        docs.append(rec.doc)
        acts.append(act)
        v = np.full((N_CAT, 5), -1, dtype=np.int64)
        for c, val in rec.values.items():
            v[CAT[c], :len(val)] = val
        values.append(v)
        span_rows += [(r, base + s, n, o, c) for s, n, o, c in rec.spans]
        chunk_rows += [(r, base + a, base + b) for a, b in chunks_of(rec, max_chunk)]
    out = {"tok": np.array(tok, dtype=np.int32), "gold": np.concatenate(gold),
           "rec_off": np.array(rec_off, dtype=np.int64), "n_sent": np.array(sent_n),
           "doc": np.array(docs, dtype=np.int8), "act": np.stack(acts),
           "values": np.stack(values).astype(np.int32),
           "spans": np.array(span_rows, dtype=np.int64).reshape(-1, 5),
           "chunks": np.array(chunk_rows, dtype=np.int64).reshape(-1, 3)}
    if one_pass is not None:
        out["onepass"] = np.concatenate(op)
        out["onepass_counts"] = np.array([occ, miss], dtype=np.int64)
    return out


def record_slice(split: dict, r: int) -> slice:
    return slice(int(split["rec_off"][r]), int(split["rec_off"][r + 1]))


def render(tokens) -> str:
    return " ".join(VOCAB[int(t)] for t in tokens)
