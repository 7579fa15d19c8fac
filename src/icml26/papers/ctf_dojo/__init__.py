"""ctf-dojo: execution-verified agent trajectories from an executable CTF runtime (metadata)."""

TITLE = ("Training language model agents to find vulnerabilities with CTF-Dojo "
         "(execution-verified trajectories from an executable CTF runtime)")
TIER = "C"
ABSTRACT = "000_0e29b462e842f6da.txt, abstract 9"

SUMMARY = """\
LLM agents improve most when they are trained inside executable environments that verify
success, but such environments are scarce for security tasks. CTF-Dojo packages 658
Capture-The-Flag challenges as reproducible Docker runtimes (built by the CTF-Forge pipeline).
Teacher agents (EnIGMA+ with DeepSeek-V3 and others, optionally given a public write-up as a
hint) solve challenges in these runtimes; only trajectories whose flag the runtime verifies are
kept, and 486 of them fine-tune 7B-32B open models by up to 11.6 absolute points of Pass@1 on
InterCode-CTF, NYU CTF Bench and Cybench. The message: execution-grounded training signal is
decisive.

Here the recipe runs in miniature. MiniDojo is an executable decode-the-flag runtime (a flag
hidden behind 1-4 encodings: base64, hex, reversal, ROT13, Atbash, XOR with a key file; seven
tools: six decoders and submit; icml26.agents.worlds.ctf). A noisy scripted teacher (right
action with probability 1 - eps, eps lower with a write-up hint) collects trajectories: up to
3 attempts per training challenge, the first runtime-verified one kept, until N. A character
CNN student is behaviour-cloned from a weak base policy on these verified trajectories and
compared with the base policy, with students cloned on the same number of unverified
trajectories (first attempts, success or not) and of runtime-free, Cyber-Zero-style
trajectories (imagined observations, kept only when they submit the true flag). The data
scaling (N = 60, 180, 486), and the teacher's yield with and without hints, are measured too.
Every agent is evaluated greedily (pass@1) on three held-out benchmarks with shifted
distributions (InterCode-mini, NYU-mini, Cybench-mini).
"""

FIDELITY = """\
Official code read: amazon-science/CTF-Dojo (CTF-Forge, write-up matching, metadata; no
training code) and amazon-science/Cyber-Zero (the EnIGMA+ runtime that CTF-Dojo's
trajectories come from, and the runtime-free Cyber-Zero simulator). Facts were carried over;
no code was copied.

- **What follows the official code (and changes the spec).**
  - *Wrong submit:* in EnIGMA+ (`sweagent/environment/swe_env.py`, SWEEnv.step) a wrong flag
    returns "Wrong flag!" and the episode continues; only a correct flag ends it. Here a wrong
    submit is an error observation (error bit 1, string unchanged) and the episode runs on to
    the step limit; the spec's "submit ends the episode" is not used. Wrong submits count as
    invalid calls (reported separately too).
  - *Flag check:* exact, or the body without the `flag{}` wrapper (EnIGMA+'s wrapper rule; the
    toy never produces a bare body, so it is equivalent to exact). One verifier serves the
    runtime, the data filter, the simulator's flag check and the evaluation.
  - *Step limit:* EnIGMA+ defaults to 40 steps for real tasks. Here the limit follows a rule
    fixed before any run: ceil(1.6 x the longest oracle path over all splits) = ceil(1.6 x 5) =
    8 (chains of <= 4 layers + one submit), the same for every agent, teacher and simulator.
  - *Simulated (Cyber-Zero-style) baseline:* Cyber-Zero keeps a trajectory only if the player
    submits the write-up's true flag (`cyber_zero/trajectory_generator.py`); what it lacks is
    execution. So the simulated data here are the teacher acting on imagined observations
    (each wrong w.p. 0.3: half the time the output of a different tool, half the time the
    unchanged string), nothing executed, and a trajectory is kept only when its submit equals
    the true flag; the same <= 3 attempts / first kept / until N recipe and the same hints as
    the verified data. The spec's "no flag verification" is not used. Cyber-Zero's LLM quality
    judge and duplicate filters are not reproduced.
  - *Hints:* a write-up exists per challenge (official: matched at similarity >= 0.9), drawn
    once per challenge at generation with probability 0.5 (INFERRED; the spec's "hint with
    probability 0.5 per attempt" is not used). A hint changes only the teacher's noise; the
    student never sees it (official SFT text strips the hint).
  - *Loss on actions only* (official SFT records mask the user/observation turns); greedy
    evaluation (official temperature 0), one episode per challenge.
- **INFERRED (as the spec marks or implies).** Teacher noise eps = 0.35 without and 0.12 with a
  hint (the official teachers are LLMs); the write-up fraction 0.5; the base model (10 epochs
  on 60 verified single-operation trajectories); the benchmark distributions (labels for
  shifted toy distributions, not the real InterCode-CTF, NYU CTF Bench or Cybench).
- **Spec constructions, not in any official code:** the base policy, the unverified SFT set
  (first attempt of the first N challenges, success or not), the teacher and scripted-solver
  baselines, the yield measurement (verified / attempts over the challenges the recipe visits,
  split by whether the challenge has a write-up), the data-scaling points (the N = 60 and 180
  sets are the first 60 and 180 of the 486 verified trajectories, in collection order).
- **Substituted / scaled down.** Toy decoding puzzles replace real pwn, web, crypto and
  forensics challenges; a scripted noisy oracle replaces LLM teachers; a character CNN
  replaces 7B-32B LLMs; no Docker, no CTF-Forge. The student sees one Markov observation
  (current string truncated to 96 characters, last action, error bit, step index), where
  EnIGMA+ keeps the last 5 observations. Its alphabet has 70 symbols (pad, one "other byte"
  symbol, the 65 base64 symbols, braces and %), not the spec's 64, which cannot hold the base64
  alphabet; its MLP input is width + 8 + 1 + a one-hot of the step (the spec's "96" does not
  say how its parts add up). **Default runs the CNN at width 32** (spec: 64) by a budget rule
  fixed before any result (the spec's per-job estimate counts parameters, not convolution
  positions, and the convolution's cost grows with the square of the width); smoke runs
  width 32 and 3 epochs. The full profile keeps width 64, swaps in a one-layer GRU student
  (the spec's "GRU/1-layer transformer"), pool 3,000, N in {60, 486, 1,500} (the spec's 180
  point is dropped there: three scaling runs per seed) and URL-encoding as an extra operation
  (tool `urld`); the spec's Caesar cipher with an unknown shift and a brute-force tool is not
  implemented (a brute-force tool needs a plausibility rule that the toy cannot state
  without leaking the flag). Batches are bucketed by string length (identical logits to the
  padded window; tested); the CNN students of a seed train side by side as one stack on
  packed batches (each its own initialisation, batch order and Adam state; the same numbers
  as training alone up to float rounding, tested). Trajectories are stored as arrays in the
  data file, not as JSONL.
"""

METHODS = ("base", "verified-n1", "verified-n2", "verified", "unverified", "simulated",
           "teacher-hint", "teacher-nohint", "scripted")
SETTINGS = ("main",)
PROPOSED = "verified"
BACKEND = "torch"
