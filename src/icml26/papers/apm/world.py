"""The intent world of one seed: 8 actions with 1-2 slots from 5 slot types, synthetic
languages (own syllable sets, pseudo-word lexicons, 3 templates per action with the language's
word order), and the rendering of intents into utterances.

Everything here is INFERRED from the spec's description (the paper's 8 real languages are not
available): the slot assignment of each action, the syllable inventories, the function words
and the template grammar are our choices. Words are lower-case letter strings so that the
character-level noise classes act on them meaningfully.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ACTIONS = ("set_alarm", "send_message", "call", "play_music", "book_table", "set_reminder",
           "check_weather", "order_item")
SLOT_TYPES = ("contact", "time", "place", "item", "song")
N_VALUES = {"contact": 30, "time": 26, "place": 20, "item": 30, "song": 30}
# INFERRED: which 1-2 slot types each action requires.
ACTION_SLOTS = {"set_alarm": ("time",), "send_message": ("contact",), "call": ("contact",),
                "play_music": ("song",), "book_table": ("place", "time"),
                "set_reminder": ("item", "time"), "check_weather": ("place",),
                "order_item": ("item", "place")}
# Contact names are shared across languages (the spec: "30 names shared across languages").
NAMES = ("anna", "boris", "carla", "dmitri", "elena", "farid", "greta", "hugo", "ingrid",
         "jonas", "karim", "lena", "marco", "nadia", "oskar", "paula", "quentin", "rosa",
         "samir", "tanja", "ulrich", "vera", "walter", "ximena", "yusuf", "zora", "bruno",
         "clara", "david", "emma")
CONSONANTS = "bcdfghjklmnpqrstvwxz"
VOWELS = "aeiou"
# function words per language: one case marker per slot type, a politeness particle, an
# article and a discourse particle
FUNCTION_ROLES = tuple(f"mark_{t}" for t in SLOT_TYPES) + ("please", "article", "particle")
N_TEMPLATES = 3


@dataclass
class Language:
    """One synthetic language: lexicon and templates. A template is a tuple of tokens
    ("V",) verb, ("F", role) function word, ("S", slot type) slot value."""

    name: str
    verbs: dict            # action -> word
    function: dict         # role -> word
    values: dict           # slot type -> tuple of words (contact: the shared names)
    templates: dict        # action -> list of N_TEMPLATES templates

    def lexicon(self) -> list[str]:
        words = list(self.verbs.values()) + list(self.function.values())
        for t in SLOT_TYPES:
            words += list(self.values[t])
        return words

    def function_words(self) -> set[str]:
        return set(self.function.values())


def _pseudo_words(rng, n, syllables, taken):
    out = []
    while len(out) < n:
        k = int(rng.integers(2, 4))                     # 2-3 syllables
        w = "".join(syllables[int(i)] for i in rng.integers(0, len(syllables), k))
        if w not in taken:
            taken.add(w)
            out.append(w)
    return out


def make_language(rng: np.random.Generator, name: str) -> Language:
    """A language with its own syllable set (7-9 consonants, 3-5 vowels, CV or CVC) and word
    order: verb-first or verb-last, pre- or postposed case markers, and per action three
    templates that permute the phrases (INFERRED grammar)."""
    cons = rng.choice(list(CONSONANTS), size=int(rng.integers(7, 10)), replace=False)
    vows = rng.choice(list(VOWELS), size=int(rng.integers(3, 6)), replace=False)
    codas = rng.choice(list(CONSONANTS), size=2, replace=False)
    syl = [c + v for c in cons for v in vows]
    syl += [c + v + k for c in cons[:3] for v in vows[:2] for k in codas]
    taken = set(NAMES)
    verbs = dict(zip(ACTIONS, _pseudo_words(rng, len(ACTIONS), syl, taken), strict=True))
    function = dict(zip(FUNCTION_ROLES, _pseudo_words(rng, len(FUNCTION_ROLES), syl, taken),
                        strict=True))
    values = {"contact": NAMES}
    for t in SLOT_TYPES[1:]:
        values[t] = tuple(_pseudo_words(rng, N_VALUES[t], syl, taken))
    verb_first = bool(rng.random() < 0.5)
    prepose = bool(rng.random() < 0.5)
    templates = {}
    for a in ACTIONS:
        phrases = []
        for t in ACTION_SLOTS[a]:
            mark, val = ("F", f"mark_{t}"), ("S", t)
            phrases.append((mark, val) if prepose else (val, mark))
        found, tries = [], 0
        while len(found) < N_TEMPLATES and tries < 200:
            tries += 1
            order = [phrases[i] for i in rng.permutation(len(phrases))]
            if len(found) == 1 and rng.random() < 0.5:   # one variant with an article
                order = [((("F", "article"),) + p) if prepose else (p + (("F", "article"),))
                         for p in order]
            body = [tok for p in order for tok in p]
            toks = [("V",)] + body if verb_first else body + [("V",)]
            extra = len(found)
            if extra == 1:
                toks = [("F", "please")] + toks
            elif extra == 2:
                toks = toks + [("F", "particle")]
            tpl = tuple(toks)
            if tpl not in found:
                found.append(tpl)
        templates[a] = found
    return Language(name, verbs, function, values, templates)


def make_world(rng: np.random.Generator, n_languages: int) -> list[Language]:
    return [make_language(rng, f"L{i + 1}") for i in range(n_languages)]


# intents ------------------------------------------------------------------------------------
def sample_intents(rng, n, cover=False):
    """n intents: (action index (n,), slot value index per slot type (n, 5), -1 = none,
    template index (n,)). Uniform; with cover=True the first rows cover every (action,
    template) and every slot value at least once (the spec: "every value and template occurs in
    training")."""
    action = rng.integers(0, len(ACTIONS), n)
    template = rng.integers(0, N_TEMPLATES, n)
    if cover:
        forced = [(a, k) for a in range(len(ACTIONS)) for k in range(N_TEMPLATES)]
        for j, t in enumerate(SLOT_TYPES):
            users = [i for i, a in enumerate(ACTIONS) if t in ACTION_SLOTS[a]]
            for v in range(N_VALUES[t]):
                forced.append((users[v % len(users)], -1 - (j * 100 + v)))
        if len(forced) > n:
            raise ValueError(f"{n} training utterances cannot cover every value and template "
                             f"(needs {len(forced)})")
    slots = np.full((n, len(SLOT_TYPES)), -1, dtype=np.int64)
    for i in range(n):
        for t in ACTION_SLOTS[ACTIONS[action[i]]]:
            j = SLOT_TYPES.index(t)
            slots[i, j] = rng.integers(0, N_VALUES[t])
    if cover:
        for i, (a, k) in enumerate(forced):
            action[i] = a
            slots[i] = -1
            for t in ACTION_SLOTS[ACTIONS[a]]:
                slots[i, SLOT_TYPES.index(t)] = rng.integers(0, N_VALUES[t])
            if k >= 0:
                template[i] = k
            else:
                j, v = divmod(-1 - k, 100)
                slots[i, j] = v
    return action, slots, template


def render(lang: Language, action: int, slots, template: int):
    """Words and a function-word flag per word of one intent in one language."""
    a = ACTIONS[action]
    words, is_func = [], []
    for tok in lang.templates[a][template % len(lang.templates[a])]:
        if tok[0] == "V":
            words.append(lang.verbs[a])
            is_func.append(False)
        elif tok[0] == "F":
            words.append(lang.function[tok[1]])
            is_func.append(True)
        else:
            j = SLOT_TYPES.index(tok[1])
            words.append(lang.values[tok[1]][int(slots[j])])
            is_func.append(False)
    return words, is_func


# edit distance -----------------------------------------------------------------------------
def edit_distances(words: list[str]) -> np.ndarray:
    """Levenshtein distance between every pair of words, vectorised over pairs."""
    n = len(words)
    L = max(len(w) for w in words)
    codes = np.full((n, L), -1, dtype=np.int64)
    lens = np.array([len(w) for w in words])
    for i, w in enumerate(words):
        codes[i, :len(w)] = [ord(c) for c in w]
    A = codes[:, None, :]          # (n, 1, L)
    B = codes[None, :, :]          # (1, n, L)
    # D[j] = distance between prefix a[:i] and b[:j], for all pairs at once
    prev = np.broadcast_to(np.arange(L + 1), (n, n, L + 1)).copy()
    full = np.zeros((n, n), dtype=np.int64)
    full[:] = -1
    for i in range(1, L + 1):
        cur = np.empty_like(prev)
        cur[..., 0] = i
        ai = A[..., i - 1]
        for j in range(1, L + 1):
            sub = prev[..., j - 1] + (ai != B[..., j - 1])
            cur[..., j] = np.minimum(np.minimum(prev[..., j] + 1, cur[..., j - 1] + 1), sub)
        prev = cur
        hit = lens == i
        full[hit, :] = prev[hit, :, :][np.arange(hit.sum())[:, None], np.arange(n)[None, :],
                                        lens[None, :]]
    return full


def nearest_words(words: list[str]) -> list[list[int]]:
    """For each word the indices of the other lexicon words at the smallest edit distance
    (the speech-recognition noise picks among them)."""
    d = edit_distances(words).astype(float)
    np.fill_diagonal(d, np.inf)
    m = d.min(axis=1, keepdims=True)
    return [list(np.flatnonzero(row == mm)) for row, mm in zip(d, m[:, 0], strict=True)]
