"""The benchmark builder: clips, items (5 question types) and the features every model reads.

One call of ``build_split`` renders a split from one Generator. Answer priors are balanced
by construction within each type (answers assigned cyclically, then shuffled), and option
order is shuffled, so the question and option text carry no signal about the answer.

Item types (spec 39): T1 MCQ-condition (HEART/LUNG, 4 options), T2 MCQ-rate category (3),
T3 multi-hop over a CONVERSATION ("which medication right after symptom X", 4; half SHORT,
half LONG), T4 sequential multi-turn on one HEART/LUNG clip (condition, rate category, next
step; one item per turn, n/3 clips), T5 open-ended symptom on a VOICE clip (artifacts
balanced).
"""

from __future__ import annotations

import numpy as np

from . import audio as A
from . import features as F

TYPES = ("T1", "T2", "T3", "T4", "T5")
NEXT_STEPS = ("reassure", "monitor", "imaging", "refer")
CONDITIONS = {"heart": A.HEART_CONDITIONS, "lung": A.LUNG_CONDITIONS}
RATES = {"heart": A.HEART_RATES, "lung": A.LUNG_RATES}
N_OPTIONS = 4
# every string a model may answer with (the answer space of all types)
ANSWERS = tuple(dict.fromkeys(A.HEART_CONDITIONS + A.LUNG_CONDITIONS + A.HEART_RATES
                              + A.LUNG_RATES + A.MEDICATIONS + NEXT_STEPS + A.SYMPTOMS))
CHANCE = {"T1": 1 / 4, "T2": 1 / 3, "T3": 1 / 4, "T4": None, "T5": 1 / len(A.SYMPTOMS)}
T4_CHANCE = (1 / 4, 1 / 3, 1 / 4)


def next_step(cond_index: int, rate_index: int) -> str:
    """INFERRED fixed lookup: the 12 (condition, rate category) pairs map to 4 next steps,
    3 pairs each, so balanced pairs give balanced answers; right for sure only when both the
    condition and the rate category are."""
    return NEXT_STEPS[(cond_index + rate_index) % 4]


def _balanced(rng, n, k):
    """n labels in 0..k-1, as equal in count as n allows, in random order."""
    return rng.permutation(np.arange(n) % k)


def _split_sites(n):
    return ["heart" if i < (n + 1) // 2 else "lung" for i in range(n)]


class _Builder:
    def __init__(self, rng, snr_db):
        self.rng = rng
        self.snr_db = snr_db
        self.clips = {k: [] for k in ("desc", "halves", "kind", "site", "cond", "rate")}
        self.n_samples = 0
        self.syl = {k: [] for k in ("clip", "word", "prof")}
        self.items = {k: [] for k in ("type", "turn", "chain", "clip", "question", "options",
                                      "answer", "context", "artifact", "site",
                                      "target_from_end")}

    def clip(self, x, kind, site, speech=False, cond="", rate=""):
        desc, halves = F.describe(x)
        cid = len(self.clips["desc"])
        self.n_samples += len(x)
        for k, v in (("desc", desc), ("halves", halves), ("kind", kind), ("site", site),
                     ("cond", cond), ("rate", rate)):
            self.clips[k].append(v)
        if speech:
            words = F.segment(x)
            spans = [s for w in words for s in w]
            _, prof = F.harmonic_profiles(x, spans)
            self.syl["prof"].append(prof)
            self.syl["clip"] += [cid] * len(spans)
            self.syl["word"] += [wi for wi, w in enumerate(words) for _ in w]
        return cid

    def item(self, type_, clip, question, options, answer, turn=-1, chain=-1, context="",
             artifact="", site="", target_from_end=-1):
        opts = list(options)
        if opts:
            opts = [opts[i] for i in self.rng.permutation(len(opts))]
        opts += [""] * (N_OPTIONS - len(opts))
        for k, v in (("type", type_), ("turn", turn), ("chain", chain), ("clip", clip),
                     ("question", question), ("options", opts), ("answer", answer),
                     ("context", context), ("artifact", artifact), ("site", site),
                     ("target_from_end", target_from_end)):
            self.items[k].append(v)

    def physio(self, site, cond, rate):
        if site == "heart":
            x = A.heart(self.rng, cond, rate, self.snr_db)
        else:
            x = A.lung(self.rng, cond, rate)
        return self.clip(x, site, site, cond=cond, rate=A.rate_category(rate, site))

    def arrays(self):
        out = {f"clip_{k}": np.asarray(v) for k, v in self.clips.items()}
        out["syl_clip"] = np.asarray(self.syl["clip"], dtype=np.int64)
        out["syl_word"] = np.asarray(self.syl["word"], dtype=np.int64)
        out["syl_prof"] = (np.concatenate(self.syl["prof"]).astype(np.float32)
                           if self.syl["prof"] else np.zeros((0, A.N_HARMONICS), np.float32))
        for k, v in self.items.items():
            out[f"item_{k}"] = np.asarray(v)
        out["n_samples"] = np.asarray(self.n_samples, dtype=np.int64)
        return out


def _rate_text(site):
    return "heart" if site == "heart" else "breathing"


def build_t1(b: _Builder, n: int):
    sites = _split_sites(n)
    for site in ("heart", "lung"):
        idx = [i for i, s in enumerate(sites) if s == site]
        conds = _balanced(b.rng, len(idx), 4)
        lo, hi = A.HR_RANGE if site == "heart" else A.RR_RANGE
        for c in conds:
            cond = CONDITIONS[site][c]
            cid = b.physio(site, cond, float(b.rng.uniform(lo, hi)))
            b.item("T1", cid, f"which finding is present in this {site} sound",
                   CONDITIONS[site], cond, site=site)


def build_t2(b: _Builder, n: int):
    sites = _split_sites(n)
    for site in ("heart", "lung"):
        idx = [i for i, s in enumerate(sites) if s == site]
        for r in _balanced(b.rng, len(idx), 3):
            rate = A.rate_in_category(b.rng, int(r), site)
            cond = CONDITIONS[site][int(b.rng.integers(4))]
            cid = b.physio(site, cond, rate)
            b.item("T2", cid, f"what is the {_rate_text(site)} rate category", RATES[site],
                   RATES[site][r], site=site)


def build_t4(b: _Builder, n: int):
    n_clips = max(1, n // 3)
    sites = _split_sites(n_clips)
    chain = 0
    for site in ("heart", "lung"):
        idx = [i for i, s in enumerate(sites) if s == site]
        for combo in _balanced(b.rng, len(idx), 12):
            c, r = int(combo) // 3, int(combo) % 3
            cid = b.physio(site, CONDITIONS[site][c], A.rate_in_category(b.rng, r, site))
            turns = [(f"step one which finding is present in this {site} sound",
                      CONDITIONS[site], CONDITIONS[site][c]),
                     (f"step two what is the {_rate_text(site)} rate category", RATES[site],
                      RATES[site][r]),
                     ("step three what is the recommended next step", NEXT_STEPS,
                      next_step(c, r))]
            for t, (q, opts, ans) in enumerate(turns):
                b.item("T4", cid, q, opts, ans, turn=t, chain=chain, site=site)
            chain += 1


def _filler(rng, k=None):
    k = int(rng.integers(2, 4)) if k is None else k
    return [str(w) for w in rng.choice(A.FILLER, k)]


def conversation(rng, long: bool, target_symptom: str, target_med: str):
    """Turns (doctor first, alternating) with two symptom -> medication events in patient
    turns ([symptom, duration number, medication]); LONG adds an allergy-context medication
    ([body site, medication]); everything else is filler. Returns (turns, f0s, meds named in
    the facts (target, other, allergy or None), words from the end to the target symptom)."""
    n_turns = 16 if long else 4
    other_symptom = str(rng.choice([s for s in A.SYMPTOMS if s != target_symptom]))
    meds = [m for m in A.MEDICATIONS if m != target_med]
    other_med, allergy_med = (str(m) for m in rng.choice(meds, 2, replace=False))
    patient = list(range(1, n_turns, 2))
    slots = rng.permutation(patient)[:3 if long else 2]
    events = [[target_symptom, str(rng.choice(A.NUMBERS)), target_med],
              [other_symptom, str(rng.choice(A.NUMBERS)), other_med]]
    order = rng.permutation(2)
    turns = [_filler(rng) for _ in range(n_turns)]
    turns[slots[0]] = events[order[0]]
    turns[slots[1]] = events[order[1]]
    if long:
        turns[slots[2]] = [str(rng.choice(A.SITES)), allergy_med]
    f0_doc, f0_pat = rng.uniform(*A.DOCTOR_F0), rng.uniform(*A.PATIENT_F0)
    f0s = [f0_doc if t % 2 == 0 else f0_pat for t in range(n_turns)]
    flat = [w for t in turns for w in t]
    from_end = len(flat) - flat.index(target_symptom)
    return turns, f0s, (target_med, other_med, allergy_med if long else None), from_end


def build_t3(b: _Builder, n: int):
    contexts = ["short" if i < (n + 1) // 2 else "long" for i in range(n)]
    meds = _balanced(b.rng, n, len(A.MEDICATIONS))
    for i, context in enumerate(contexts):
        target = A.MEDICATIONS[meds[i]]
        symptom = str(b.rng.choice(A.SYMPTOMS))
        turns, f0s, named, from_end = conversation(b.rng, context == "long", symptom, target)
        x, _ = A.speech(b.rng, turns, f0s)
        cid = b.clip(x, context, "conversation", speech=True)
        opts = [m for m in named if m is not None]
        rest = [m for m in A.MEDICATIONS if m not in opts]
        opts += [str(m) for m in b.rng.choice(rest, N_OPTIONS - len(opts), replace=False)]
        b.item("T3", cid, f"which medication did the patient mention right after the symptom "
               f"{symptom}", opts, target, context=context, site="conversation",
               target_from_end=from_end)


def build_t5(b: _Builder, n: int):
    artifacts = _balanced(b.rng, n, len(A.ARTIFACTS))
    symptoms = _balanced(b.rng, n, len(A.SYMPTOMS))
    others = [w for w in A.WORDS if w not in A.SYMPTOMS]
    for a, s in zip(artifacts, symptoms, strict=True):
        words = [str(w) for w in b.rng.choice(others, 5)]
        pos = int(b.rng.integers(6))
        words.insert(pos, A.SYMPTOMS[s])
        art = A.ARTIFACTS[a]
        x, _ = A.speech(b.rng, [words], [b.rng.uniform(*A.VOICE_F0)], art, target=(0, pos))
        cid = b.clip(x, "voice", "voice", speech=True)
        b.item("T5", cid, "what symptom does the speaker report", [], A.SYMPTOMS[s],
               artifact=art, site="voice")


def build_split(rng: np.random.Generator, n_per_type: int,
                snr_db: tuple[float, float] = A.HEART_SNR_DB) -> dict[str, np.ndarray]:
    """One split: n_per_type items of each type (T4: n_per_type // 3 clips x 3 turns);
    ``snr_db`` is the heart sounds' background-noise SNR range."""
    b = _Builder(rng, tuple(snr_db))
    build_t1(b, n_per_type)
    build_t2(b, n_per_type)
    build_t3(b, n_per_type)
    build_t4(b, n_per_type)
    build_t5(b, n_per_type)
    return b.arrays()
