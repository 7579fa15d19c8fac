"""MiniDojo (icml26.agents.worlds.ctf): every encoder inverted by its tool, invalid input left
unchanged and counted invalid, a wrong submit that does not end the episode, the flag check, the
scripted oracle solving 100% of every split, and the runtime-free simulator."""
import base64

import numpy as np
import pytest

from icml26.agents import Call, oracle_rate, run_batch, run_episode
from icml26.agents.worlds import ctf


@pytest.mark.parametrize("op", ctf.ALL_OPS)
def test_every_encoder_is_inverted_by_its_tool(op):
    rng = np.random.default_rng(0)
    for _ in range(30):
        s = "".join(chr(int(c)) for c in rng.integers(0, 256, size=int(rng.integers(1, 20))))
        key = int(rng.integers(1, 256))
        assert ctf.decode(ctf.INVERSE[op], ctf.encode(op, s, key), key) == s


def test_encoders_by_hand():
    assert ctf.encode("base64", "flag{ab}") == base64.b64encode(b"flag{ab}").decode()
    assert ctf.encode("hex", "fl") == "666c"
    assert ctf.encode("rot13", "flag{z9}") == "synt{m9}"
    assert ctf.encode("atbash", "flag{z9}") == "uozt{a9}"
    assert ctf.encode("rev", "ab}") == "}ba"
    assert ctf.encode("xor", "A", key=1) == "40"          # 0x41 ^ 0x01 = 0x40
    assert ctf.encode("url", "a{b}") == "a%7Bb%7D"


@pytest.mark.parametrize("tool,bad", [("b64d", "abc"), ("b64d", "ab!c"), ("b64d", "a==="),
                                      ("hexd", "abc"), ("hexd", "zz"), ("hexd", "AB"),
                                      ("xor", "0g"), ("xor", "123"), ("urld", "a%4"),
                                      ("urld", "%zz"), ("b64d", ""), ("hexd", "")])
def test_invalid_input_leaves_the_string_unchanged_and_counts_invalid(tool, bad):
    assert ctf.decode(tool, bad, 7) is None
    task = ctf.Challenge("flag{x}", ("hex",), 7, False, ("flag{x}", bad))
    world = ctf.MiniDojo(ctf.tools_for(ctf.ALL_OPS))
    tr = run_episode(world, task, lambda s, t: Call(tool), max_steps=3)
    assert tr.n_calls == 3 and tr.n_invalid == 3 and tr.stop == "steps" and not tr.success
    st = world.start(task)
    world.execute(st, Call(tool))
    assert st["s"] == bad and st["err"] == 1


def test_wrong_submit_does_not_end_the_episode_and_the_flag_check():
    task = ctf.make_challenge("flag{abc}", ["rev", "hex"], key=5)
    world = ctf.MiniDojo()
    calls = iter([Call("submit"), Call("hexd"), Call("submit"), Call("rev"), Call("submit")])
    tr = run_episode(world, task, lambda s, t: next(calls), max_steps=8)
    obs = [s.obs for s in tr.steps]
    assert [o.ok for o in obs] == [False, True, False, True, True]
    assert obs[0].content == ctf.WRONG_FLAG and not obs[0].final
    assert tr.success and tr.stop == "final" and tr.n_calls == 5 and tr.n_invalid == 2
    assert world.verify(task, "flag{abc}") and world.verify(task, "abc")     # wrapper rule
    assert not world.verify(task, "flag{abd}") and not world.verify(task, None)
    # a policy that only ever submits a wrong string runs to the step limit
    tr = run_episode(world, task, lambda s, t: Call("submit"), max_steps=6)
    assert tr.stop == "steps" and tr.n_calls == 6 and not tr.success


@pytest.mark.parametrize("split", list(ctf.SPLITS))
def test_the_scripted_oracle_solves_every_split(split):
    for extra in ((), ctf.EXTRA_OPS):
        spec = ctf.split_spec(split, extra)
        tasks = ctf.generate(np.random.default_rng(1), 200, spec)
        world = ctf.MiniDojo(ctf.tools_for(spec["ops"]))
        L = ctf.longest_oracle_path(tasks)
        assert oracle_rate(world, tasks, max_steps=L) == 1.0
        trajs = run_batch(world, tasks, lambda st, tr, live, w=world, ts=tasks:
                          [w.oracle(ts[i], s) for i, s in zip(live, st, strict=True)],
                          max_steps=L)
        # at most L + 1 calls (fewer where a layer repeats an involution: rev rev = identity)
        assert all(t.n_calls <= c.length + 1 and t.n_invalid == 0
                   for t, c in zip(trajs, tasks, strict=True))
        # (fewer also where a layer is the identity on its input: rot13 of a digit string)
        assert np.mean([t.n_calls == c.length + 1 for t, c in zip(trajs, tasks,
                                                                 strict=True)]) > 0.5


def test_split_constraints():
    rng = np.random.default_rng(2)
    nyu = ctf.generate(rng, 100, ctf.SPLITS["nyu"])
    assert all(set(c.ops) & {"xor", "atbash"} and c.length in (2, 3) for c in nyu)
    cyb = ctf.generate(rng, 100, ctf.SPLITS["cybench"])
    assert all(len(c.flag) == 18 and all(a != b for a, b in zip(c.ops, c.ops[1:], strict=False))
               for c in cyb)
    ic = ctf.generate(rng, 100, ctf.SPLITS["intercode"])
    assert all(set(c.ops) <= {"base64", "hex", "rev", "rot13"} for c in ic)
    dojo = ctf.generate(rng, 400, ctf.SPLITS["dojo"], writeup_frac=0.5)
    assert 0.4 < np.mean([c.has_writeup for c in dojo]) < 0.6


def test_oracle_recovers_from_an_involution_off_the_chain():
    task = ctf.make_challenge("flag{abc}", ["base64"], key=3)
    world = ctf.MiniDojo()
    st = world.start(task)
    world.execute(st, Call("rev"))                 # off the chain; rev undoes it
    assert task.level(st["s"]) == -1 and world.oracle(task, st) == Call("rev")


def test_imagined_dojo_noise_and_flag_check():
    task = ctf.make_challenge("flag{abc}", ["hex", "base64"], key=3)
    clean = ctf.ImaginedDojo(np.random.default_rng(0), 0.0)
    assert oracle_rate(clean, [task], max_steps=3) == 1.0       # p_wrong 0: the runtime
    noisy = ctf.ImaginedDojo(np.random.default_rng(0), 1.0)
    trajs = run_batch(noisy, [task] * 50, lambda st, tr, live: [noisy.oracle(task, s)
                                                                 for s in st], max_steps=3)
    # every decoding observation is wrong: the true chain is never followed to the flag
    assert not any(t.success for t in trajs)
