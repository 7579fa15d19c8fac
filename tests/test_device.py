"""Every torch paper places its models through ``icml26.seeding.torch_device(cfg["device"])``.

Two checks per paper, on a tiny config and without training anything:
- the helper is called with the config's ``device`` (a recording stand-in for the helper stops
  the stages at its first call, so the test takes the time of ``prepare`` only);
- ``device=cuda`` on a machine without CUDA stops with the helper's one-line error instead of
  silently training on the CPU (skipped where CUDA exists).
The CPU numbers themselves are pinned by each paper's own tests and smoke runs.
"""
import sys

import pytest

from icml26 import grid, pipeline, registry, seeding

TORCH_PAPERS = ["bear", "castle", "cde-dataset-distillation", "chatsfm", "clasp", "codemamba",
                "cofrgenets", "cryoace", "ctf-dojo", "cyber-reward-sparsity", "impquant",
                "lamp", "logdiff", "muloco", "multihal", "outformer", "privasis", "pro-dyn",
                "protdis", "rl-vs-sft-forgetting", "rollout-scheduling", "sad-flower",
                "sim2real-safe-metarl", "smac", "smo-multilingual-safety",
                "stage-accountability", "std-former", "telecomts", "telescope-perplexity",
                "time-peft", "transformer-holder-approx", "unirrm", "vdw-gnn"]


class Reached(Exception):
    """Raised by the stand-in helper: the stages got as far as asking for a device."""


def tiny_config(slug: str) -> dict:
    if slug == "rl-vs-sft-forgetting":
        # numpy except the full profile's `sequence` setting (the character transformer)
        cfg = pipeline.resolve(slug, "full")
        cfg["seeds"] = [0]
        cfg["settings"] = {"sequence": {"part": "sequence"}}
        cfg["methods"] = ["sft"]
        cfg["params"]["sequence"] = {**cfg["params"]["sequence"], "prompts": 8, "d_model": 16,
                                     "heads": 2, "pretrain_steps": 1, "batch": 8, "steps": 1,
                                     "log_every": 1}
        return cfg
    if slug == "telecomts":
        # smoke is FEAT-GBM only (the spec's smoke); the CNN runs from default on
        cfg = pipeline.resolve(slug, "default")
        cfg["seeds"] = [0]
        cfg["params"].update(n_train_normal=20, n_train_per_type=5, n_test_normal=10,
                             n_test_per_type=2, cnn_epochs=1)
        return cfg
    if slug == "logdiff":
        # smoke is the analytic variant only (numpy); torch trains the learned variant
        cfg = pipeline.resolve(slug, "default")
        cfg["seeds"] = [0]
        cfg["methods"] = ["oracle", "logdiff"]
        cfg["settings"] = {"learned-and": cfg["settings"]["learned-and"]}
        cfg["params"]["learned"] = {**cfg["params"]["learned"], "samples": 8, "steps": 2,
                                    "train_steps": 1, "n_pool": 64, "batch": 16}
        cfg["params"].update(reference_samples=16, gf_samples=4, scatter_settings=[])
        return cfg
    if slug != "sim2real-safe-metarl":
        return pipeline.resolve(slug, "smoke")
    # numpy at smoke and default: torch (the learned encoder) only in the full profile
    cfg = pipeline.resolve(slug, "full")
    cfg["seeds"] = [0]
    cfg["params"].update(n_cell_rollouts=1, n_episodes=2, n_deploy=1, bins=[0.6, 1.0],
                         gap_edges=[10, 50, 90], speed_edges=[12, 16], n_rollouts=10)
    cfg["params"]["encoder"] = {**cfg["params"]["encoder"], "n_tasks": 10, "iters": 2}
    return cfg


def prepare_and_train(cfg: dict) -> None:
    exp = registry.stage(cfg["paper"], "experiment")
    data = exp.prepare(cfg, seeding.rng(cfg["paper"], "prepare"))
    exp.train(cfg, data, grid.runs(cfg))


def record_device_calls(monkeypatch, calls: list) -> None:
    """Replace torch_device in icml26.seeding and wherever a loaded module imported it."""
    real = seeding.torch_device

    def stand_in(name="auto"):
        calls.append(name)
        raise Reached(name)

    monkeypatch.setattr(seeding, "torch_device", stand_in)
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("icml26.") and \
                getattr(mod, "torch_device", None) is real:
            monkeypatch.setattr(mod, "torch_device", stand_in)


@pytest.mark.parametrize("slug", TORCH_PAPERS)
def test_paper_asks_the_shared_helper_for_its_device(monkeypatch, slug):
    cfg = tiny_config(slug)
    cfg["device"] = "cuda"
    registry.stage(slug, "experiment")  # loaded first, so a by-name import is replaced too
    calls = []
    record_device_calls(monkeypatch, calls)
    with pytest.raises(Reached):
        prepare_and_train(cfg)
    assert calls and set(calls) == {"cuda"}


@pytest.mark.parametrize("slug", TORCH_PAPERS)
def test_cuda_without_cuda_stops_with_one_clear_error(slug):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here: scripts/gpu-check.sh runs the papers on it")
    cfg = tiny_config(slug)
    cfg["device"] = "cuda"
    with pytest.raises(RuntimeError, match="device=cuda was asked for but no CUDA device"):
        prepare_and_train(cfg)


def test_command_line_device_reaches_the_config(monkeypatch, tmp_path):
    from icml26.__main__ import main

    seen = {}

    def fake_run(cfg, out):
        seen.update(cfg)
        return {"report_md": tmp_path / "report.md"}

    monkeypatch.setattr(pipeline, "run_inprocess", fake_run)
    assert main(["run", "clasp", "--scale", "smoke", "--device", "cpu",
                 "--out", str(tmp_path)]) == 0
    assert seen["device"] == "cpu"


def test_command_line_cuda_without_cuda_is_one_line(capsys, tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    from icml26.__main__ import main

    assert main(["run", "clasp", "--device", "cuda", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no CUDA device" in err
    assert not any(tmp_path.iterdir())
