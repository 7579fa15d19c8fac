"""Side experiment (outside the pipeline): SFT warm-start premise on validation seeds 900..904.
Reads only the SFT policy (no RL, no claim metric).  Run from the repository root: .venv/bin/python scripts/side/rollout_scheduling_warm_start.py {table|thermometer} [stop_pass]"""
import sys

import numpy as np
import torch

from icml26.lm.grpo import ArithmeticTask
from icml26.papers.rollout_scheduling import policy
from icml26.rl.optim import Adam
from icml26.seeding import derive_seed
from icml26.seeding import rng as named_rng

torch.set_num_threads(1)
paper = "rollout-scheduling"
task = ArithmeticTask(16, 0)
prompts = task.prompts()
seeds = [900, 901, 902, 903, 904]
codes = [sys.argv[1]]; stop = sys.argv[2] if len(sys.argv) > 2 else None
for code in codes:
    perms = [named_rng(paper, "split", s).permutation(256) for s in seeds]
    tr = np.stack([p[:192] for p in perms]); he = np.stack([p[192:] for p in perms]); sf = tr[:, :48]
    par = policy.init([derive_seed(paper, "init", s) for s in seeds], 16, task.vocab, 1, 32, 64, "cpu", code)
    opt = Adam(list(par.values()), lr=3e-3)
    taken = policy.sft(par, opt, task, prompts, sf, 150, "cpu", stop_pass=float(stop) if stop else None)
    def pass_rate(idx):
        p = prompts[idx]
        a, b = torch.as_tensor(p[..., 0]), torch.as_tensor(p[..., 1])
        tok = torch.as_tensor(task.encode(task.answer(p)))
        with torch.no_grad():
            _, _, lp = policy.token_pass(par, a, b, tok, 1, task.vocab)
        return lp.exp().numpy()
    ptr = pass_rate(tr)
    spread = ((ptr >= 0.1) & (ptr <= 0.9)).mean(1)
    acc_tr = policy.accuracy(par, task, prompts, tr, 1, task.vocab, "cpu")
    acc_he = policy.accuracy(par, task, prompts, he, 1, task.vocab, "cpu")
    acc_sft = policy.accuracy(par, task, prompts, sf, 1, task.vocab, "cpu")
    nonsft = ptr[:, 48:]
    print(f"{code} stop {stop} steps {taken}: spread {spread.round(3)} mean {spread.mean():.3f}; held greedy {acc_he.round(3)} mean {acc_he.mean():.3f}; "
          f"train greedy {acc_tr.mean():.3f}; sft-prompt greedy {acc_sft.mean():.3f}; overall {(acc_tr*192+acc_he*64).mean()/256:.3f}; "
          f"pass mean train {ptr.mean():.3f} (non-SFT train {nonsft.mean():.3f}); pass>0.9 {(ptr>0.9).mean():.3f} pass<0.1 {(ptr<0.1).mean():.3f}")
