"""MiniDojo: an executable decode-the-flag runtime (the CTF world of ctf-dojo).

A challenge hides a flag ``flag{<body>}`` behind a chain of 1-4 encodings; the agent sees the
final artefact and peels it with tools, one call per step. Strings are Python ``str`` whose
characters are bytes (latin-1), so every byte sequence a wrong decode produces is a state.

- encoders and the tool that inverts each: base64 / ``b64d``, hex / ``hexd``, reversal / ``rev``,
  ROT13 / ``rot13``, Atbash / ``atbash``, XOR with the challenge's 1-byte key then hex / ``xor``
  (the key sits in the challenge's "key file": the tool reads it, the agent never needs it),
  and, only where a split asks for it (full profile), URL-encoding / ``urld``;
- invalid input (bad base64 padding or alphabet, odd length or non-hex for ``hexd`` / ``xor``,
  a malformed ``%`` escape for ``urld``, an empty string for any decoder) returns an error
  observation (``ok=False``) and leaves the string unchanged;
- ``submit`` submits the current string. A correct flag ends the episode; a wrong one returns
  "Wrong flag!" (``ok=False``) and the episode goes on, as in EnIGMA+'s runtime (a wrong submit
  never ends an episode, only the step limit or a correct flag do);
- ``verify`` is the flag check shared by the runtime, the data filter and the evaluation:
  the exact flag, or its body without the ``flag{}`` wrapper (EnIGMA+'s wrapper rule);
- ``oracle`` is the scripted solver: on the decoding chain it applies the inverse of the
  outermost remaining layer (submit at the flag); off the chain it takes the tool that returns
  to the chain nearest the flag, if one does, else submits. From the start it needs at most
  L + 1 calls (tested to solve 100% of every split).

:class:`ImaginedDojo` is the runtime-free simulator (the Cyber-Zero-style baseline): the same
interface, but each observation is what a simulator that knows the writeup imagines, wrong with
a fixed probability, and nothing is executed; it still checks a submit against the true flag.

numpy and the standard library only.
"""
from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

import numpy as np

from icml26.agents.core import Call, Observation

BASE_OPS = ("base64", "hex", "rev", "rot13", "atbash", "xor")
EXTRA_OPS = ("url",)
ALL_OPS = BASE_OPS + EXTRA_OPS
INVERSE = {"base64": "b64d", "hex": "hexd", "rev": "rev", "rot13": "rot13", "atbash": "atbash",
           "xor": "xor", "url": "urld"}
DECODERS = ("b64d", "hexd", "rev", "rot13", "atbash", "xor", "urld")
SUBMIT = "submit"
TOOLS = ("b64d", "hexd", "rev", "rot13", "atbash", "xor", SUBMIT)   # the spec's 7 actions
WRONG_FLAG = "Wrong flag!"
FLAG_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"

_HEX = re.compile(r"^(?:[0-9a-f]{2})+$")
_B64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")
_ROT13 = str.maketrans("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                       "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZABCDEFGHIJKLM")
_ATBASH = str.maketrans("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                        "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA")
_URL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")


def tools_for(ops) -> tuple[str, ...]:
    """The action set of a world whose challenges use ``ops``: the six base decoders, ``urld``
    when URL-encoding is in play, and ``submit`` last."""
    extra = tuple(INVERSE[o] for o in EXTRA_OPS if o in ops)
    return TOOLS[:-1] + extra + (SUBMIT,)


# ------------------------------------------------------------------------------------------
# encoders and decoding tools (a decoder returns None on invalid input)
# ------------------------------------------------------------------------------------------
def _bytes(s: str) -> bytes:
    return s.encode("latin-1")


def _str(b: bytes) -> str:
    return b.decode("latin-1")


def encode(op: str, s: str, key: int = 0) -> str:
    if op == "base64":
        return base64.b64encode(_bytes(s)).decode("ascii")
    if op == "hex":
        return _bytes(s).hex()
    if op == "rev":
        return s[::-1]
    if op == "rot13":
        return s.translate(_ROT13)
    if op == "atbash":
        return s.translate(_ATBASH)
    if op == "xor":
        return bytes(b ^ key for b in _bytes(s)).hex()
    if op == "url":
        return "".join(c if c in _URL_SAFE else f"%{ord(c):02X}" for c in s)
    raise ValueError(f"unknown encoding {op!r}")


def decode(tool: str, s: str, key: int = 0) -> str | None:
    """The tool's output on ``s``, or None when ``s`` is invalid input for it."""
    if tool in ("rev", "rot13", "atbash"):
        return encode(tool, s)
    if not s:
        return None
    if tool == "b64d":
        if len(s) % 4 or not _B64.match(s):
            return None
        try:
            return _str(base64.b64decode(s, validate=True))
        except (binascii.Error, ValueError):
            return None
    if tool in ("hexd", "xor"):
        if not _HEX.match(s):
            return None
        raw = bytes.fromhex(s)
        return _str(raw if tool == "hexd" else bytes(b ^ key for b in raw))
    if tool == "urld":
        out, i = [], 0
        while i < len(s):
            if s[i] == "%":
                h = s[i + 1:i + 3]
                if len(h) < 2 or not all(c in "0123456789ABCDEFabcdef" for c in h):
                    return None
                out.append(chr(int(h, 16)))
                i += 3
            else:
                out.append(s[i])
                i += 1
        return "".join(out)
    raise ValueError(f"unknown tool {tool!r}")


# ------------------------------------------------------------------------------------------
# challenges and splits
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Challenge:
    flag: str
    ops: tuple            # encodings in the order applied (ops[0] first, on the flag)
    key: int              # the "key file" of the xor tool
    has_writeup: bool     # a public write-up exists: the teacher may get it as a hint
    chain: tuple          # chain[j] = string after the first j encodings; chain[0] = flag

    @property
    def artefact(self) -> str:
        return self.chain[-1]

    @property
    def length(self) -> int:
        return len(self.ops)

    def level(self, s: str) -> int:
        """The smallest j with chain[j] == s (layers still to peel), or -1 off the chain."""
        for j, c in enumerate(self.chain):
            if c == s:
                return j
        return -1


def make_challenge(flag: str, ops, key: int = 1, has_writeup: bool = False) -> Challenge:
    chain = [flag]
    for op in ops:
        chain.append(encode(op, chain[-1], key))
    return Challenge(flag, tuple(ops), int(key), bool(has_writeup), tuple(chain))


# Distributions: lengths (uniform), ops (uniform), at least one of require_any, no operation
# twice in a row, flag body length. "dojo" is the training pool, "single" the base model's data.
SPLITS = {
    "dojo": {"lengths": (1, 2, 3, 4), "ops": BASE_OPS, "body": 8},
    "single": {"lengths": (1,), "ops": BASE_OPS, "body": 8},
    "intercode": {"lengths": (1, 2), "ops": ("base64", "hex", "rev", "rot13"), "body": 8},
    "nyu": {"lengths": (2, 3), "ops": BASE_OPS, "require_any": ("xor", "atbash"), "body": 8},
    "cybench": {"lengths": (3, 4), "ops": BASE_OPS, "no_repeat": True, "body": 12},
}


def split_spec(name: str, extra_ops=()) -> dict:
    spec = dict(SPLITS[name])
    if extra_ops and name != "intercode":
        spec["ops"] = tuple(spec["ops"]) + tuple(extra_ops)
    return spec


def generate(rng: np.random.Generator, n: int, spec: dict, writeup_frac: float = 0.0
             ) -> list[Challenge]:
    """``n`` challenges of one split; rejection-sample the constraints."""
    out = []
    ops_pool = tuple(spec["ops"])
    while len(out) < n:
        L = int(rng.choice(spec["lengths"]))
        ops = [ops_pool[int(rng.integers(len(ops_pool)))] for _ in range(L)]
        if spec.get("require_any") and not set(ops) & set(spec["require_any"]):
            continue
        if spec.get("no_repeat") and any(a == b for a, b in zip(ops, ops[1:], strict=False)):
            continue
        body = "".join(FLAG_CHARS[int(i)] for i in rng.integers(len(FLAG_CHARS),
                                                               size=spec["body"]))
        key = int(rng.integers(1, 256))
        hint = bool(rng.random() < writeup_frac)
        out.append(make_challenge("flag{" + body + "}", ops, key, hint))
    return out


def longest_oracle_path(challenges) -> int:
    return max(c.length for c in challenges) + 1


# ------------------------------------------------------------------------------------------
# the runtime
# ------------------------------------------------------------------------------------------
class MiniDojo:
    """The executable runtime (see the module docstring); a world for icml26.agents."""

    verified_by = "runtime"

    def __init__(self, tools=TOOLS):
        self.tools = tuple(tools)

    def start(self, task: Challenge) -> dict:
        return {"task": task, "s": task.artefact, "last": -1, "err": 0, "t": 0}

    def _after(self, state, call, s, ok, answer=None, final=False, content=None):
        state["s"] = s
        state["last"] = self.tools.index(call.tool)
        state["err"] = int(not ok)
        state["t"] += 1
        return Observation(s if content is None else content, ok=ok, answer=answer,
                           final=final)

    def execute(self, state: dict, call: Call) -> Observation:
        task, s = state["task"], state["s"]
        if call.tool not in self.tools:
            raise ValueError(f"unknown tool {call.tool!r}; tools: {', '.join(self.tools)}")
        if call.tool == SUBMIT:
            if self.verify(task, s):
                return self._after(state, call, s, True, answer=s, final=True)
            return self._after(state, call, s, False, answer=s, content=WRONG_FLAG)
        out = decode(call.tool, s, task.key)
        if out is None:
            return self._after(state, call, s, False, content=f"error: invalid input for "
                                                              f"{call.tool}")
        return self._after(state, call, out, True)

    def verify(self, task: Challenge, answer) -> bool:
        """The flag check: exact, or the body without the flag{} wrapper."""
        return isinstance(answer, str) and (answer == task.flag or answer == task.flag[5:-1])

    def oracle(self, task: Challenge, state: dict) -> Call:
        return Call(oracle_tool(task, state["s"], self.tools))


def oracle_tool(task: Challenge, s: str, tools=TOOLS) -> str:
    """The scripted solver's next tool for string ``s`` of ``task``."""
    j = task.level(s)
    if j == 0:
        return SUBMIT
    if j > 0:
        return INVERSE[task.ops[j - 1]]
    best, best_j = SUBMIT, None
    for tool in tools:
        if tool == SUBMIT:
            continue
        out = decode(tool, s, task.key)
        if out is None:
            continue
        k = task.level(out)
        if k >= 0 and (best_j is None or k < best_j):
            best, best_j = tool, k
    return best


class ImaginedDojo(MiniDojo):
    """Runtime-free simulator (Cyber-Zero-style): nothing is executed. The simulator knows the
    write-up and the flag; each observation it imagines is, with probability ``p_wrong``, wrong:
    half the time the output of a different tool on the current string (with that tool's error
    bit), half the time the unchanged string with no error. Otherwise it is what the tool would
    return. The imagined string becomes the episode's string. A submit is still checked against
    the true flag (Cyber-Zero keeps only runs that submit the writeup's flag)."""

    verified_by = "simulator_flag"

    def __init__(self, rng: np.random.Generator, p_wrong: float, tools=TOOLS):
        super().__init__(tools)
        self.rng = rng
        self.p_wrong = float(p_wrong)

    def execute(self, state: dict, call: Call) -> Observation:
        if call.tool == SUBMIT:
            return super().execute(state, call)
        task, s = state["task"], state["s"]
        tool = call.tool
        wrong = self.rng.random() < self.p_wrong
        mode = self.rng.random()
        other = self.rng.integers(len(self.tools) - 2)
        state["imagined_wrong"] = state.get("imagined_wrong", 0) + int(wrong)
        if wrong and mode < 0.5:
            tool = [t for t in self.tools if t not in (SUBMIT, call.tool)][int(other)]
        elif wrong:
            return self._after(state, call, s, True)
        out = decode(tool, s, task.key)
        if out is None:
            return self._after(state, call, s, False, content=f"error: invalid input for "
                                                              f"{call.tool}")
        return self._after(state, call, out, True)


class NoisyOracle:
    """The teacher (stand-in for the LLM teacher inside EnIGMA+): the scripted solver's call
    with probability 1 - eps, otherwise a uniformly random tool. ``eps`` depends on whether the
    challenge's write-up is given as a hint. A batched policy for ``run_batch``."""

    def __init__(self, tasks, rng: np.random.Generator, eps_hint: float, eps_plain: float,
                 hints, tools=TOOLS):
        self.tasks, self.rng, self.tools = list(tasks), rng, tuple(tools)
        self.eps = [eps_hint if h else eps_plain for h in hints]

    def __call__(self, states, trajs, live):
        calls = []
        for i, st in zip(live, states, strict=True):
            u, r = self.rng.random(), int(self.rng.integers(len(self.tools)))
            if u < self.eps[i]:
                calls.append(Call(self.tools[r]))
            else:
                calls.append(Call(oracle_tool(self.tasks[i], st["s"], self.tools)))
        return calls
