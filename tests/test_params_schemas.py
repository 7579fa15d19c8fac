"""Params schemas (config/schemas/params/<slug>.schema.yaml): every paper has one, every scale
resolves, and a bad value (unknown key, missing required key, negative count, unknown setting
key) is one ConfigError line naming the key, before any job runs."""
import copy

import pytest
from conftest import REPO

from icml26.config import available_papers, check_params, resolve_paper
from icml26.errors import ConfigError
from icml26.pipeline import resolve

SCALES = ("smoke", "default", "full")

# slug -> (a required key of params, an integer count of params); a tuple is a nested path
CASES = {
    "avg-reward-td": ("eta", "T"),
    "cdot": ("max_iter", "starts"),
    "qkmeans": ("batch", "n"),
    "junta-learning": ("tau", "reps"),
    "st-gpa": ("knn_k", "n_test"),
    "embedding-generalization": ("lr", "epochs"),
    "diskd": ("lam", "n_train"),
    "flowdup": ("sigma", "rounds"),
    "cofrgenets": ("d_model", "steps"),
    "clasp": ("R", "M"),
    "vdw-gnn": ("J", "epochs"),
    "sad-flower": ("delta", "n_steps"),
    "lagea": ("gamma", "episodes"),
    "fedcgnm": ("beta", "rounds"),
    "telescope-perplexity": ("window", "n_texts"),
    "sim2real-safe-metarl": ("n_episodes", "n_deploy"),
    "smac": ("offline_steps", "batch"),
    "fisher-dimension": ("threshold", "trials"),
    "mudo-com": ("maxiter", "restarts"),
    "castle": ("corpus", ("lm", "steps")),
    "cyber-reward-sparsity": ("horizon", "eval_episodes"),
    "fedqueue": ("local_steps", "fedbuff_buffer"),
    "rl-vs-sft-forgetting": ("match_acc", ("policy", "steps")),
    "nested-dro": ("lr", "steps"),
    "chatsfm": ("top_k", "steps"),
    "telecomts": ("ridge_alpha", "cnn_epochs"),
    "std-former": ("tau_frac", "steps"),
    "pro-dyn": ("lr", "steps"),
    "ia-sft": ("n_labelled", "rounds"),
    "lamp": ("lm_band", "overfit_steps"),
    "time-peft": ("top_k", "steps"),
    "hmer-schema": ("artifact_prob", "n_per_category"),
    "cryoace": ("k_test", "epochs"),
    "codemamba": ("lr_grid", "steps"),
    "muloco": ("H", "val_windows"),
    "re-trac": ("tau", "n_questions"),
    "ctf-dojo": ("eps_plain", "n_pool"),
    "prm-adaptive-tts": ("thetas", "n_per_K"),
    "multihal": ("kg", ("lm", "steps")),
    "apm": ("n_languages", "n_test"),
    "medmosaic": ("window", "n_test_per_type"),
    "unirrm": ("n_test", "epochs"),
    "privasis": ("lr", "steps"),
    "stage-accountability": ("hidden", "n_test"),
    "transformer-holder-approx": ("steps_approx", "n_approx"),
    "feature-unlearning": ("d", "steps"),
    "cde-dataset-distillation": ("ipc", "iterations"),
    "rollout-scheduling": ("lr", "steps"),
    "smo-multilingual-safety": ("steps_s3", "steps_s3"),
    "impquant": ("damp", "n_calib"),
    "bear": ("epochs", "n_test_per_skill"),
    "kmm-dataset-valuation": ("kmm_lam_rel", "steps"),
    "outformer": ("lr", "steps"),
    "protdis": ("lambda_adv", "epochs"),
    "also-social": ("eta", "episodes"),
    "eec-matlogic": ("lr_C", "n_queries"),
    "logdiff": ("t_end", ("analytic", "steps")),
}
SLUGS = list(CASES)


def test_every_paper_has_a_schema_and_a_case_here():
    assert set(available_papers(REPO / "config")) == set(CASES)


def test_a_paper_without_schema_is_one_line(tmp_path):
    (tmp_path / "papers").mkdir()
    (tmp_path / "schemas").mkdir()
    for f in ("config.schema.yaml", "paper.schema.yaml"):
        (tmp_path / "schemas" / f).write_bytes((REPO / "config" / "schemas" / f).read_bytes())
    src = REPO / "config" / "papers" / "qkmeans.yaml"
    (tmp_path / "papers" / "qkmeans.yaml").write_bytes(src.read_bytes())
    with pytest.raises(ConfigError, match="has no params schema"):
        resolve_paper("qkmeans", {"scale": "smoke"}, tmp_path)


def _path(key) -> tuple:
    return key if isinstance(key, tuple) else (key,)


def _parent(params: dict, key) -> tuple[dict, str]:
    *head, last = _path(key)
    for k in head:
        params = params[k]
    return params, last


def _error(cfg: dict) -> str:
    with pytest.raises(ConfigError) as info:
        check_params(cfg, REPO / "config")
    msg = str(info.value)
    assert "\n" not in msg, msg
    return msg


@pytest.fixture(scope="module")
def smoke_cfgs():
    return {slug: resolve(slug, "smoke", repo=REPO) for slug in SLUGS}


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("slug", SLUGS)
def test_resolves_at_every_scale(slug, scale):
    cfg = resolve(slug, scale, repo=REPO)  # resolve checks params against the schema
    check_params(cfg, REPO / "config")


@pytest.mark.parametrize("slug", SLUGS)
def test_unknown_key(slug, smoke_cfgs):
    cfg = copy.deepcopy(smoke_cfgs[slug])
    cfg["params"]["bogus_key"] = 1
    msg = _error(cfg)
    assert "bogus_key" in msg and "unknown key" in msg


@pytest.mark.parametrize("slug", SLUGS)
def test_unknown_setting_key(slug, smoke_cfgs):
    cfg = copy.deepcopy(smoke_cfgs[slug])
    name = next(iter(cfg["settings"]))
    cfg["settings"][name]["bogus_key"] = 1
    msg = _error(cfg)
    assert "bogus_key" in msg and name in msg


@pytest.mark.parametrize("slug", SLUGS)
def test_missing_required_key(slug, smoke_cfgs):
    cfg = copy.deepcopy(smoke_cfgs[slug])
    parent, key = _parent(cfg["params"], CASES[slug][0])
    del parent[key]
    msg = _error(cfg)
    assert repr(key) in msg and "required" in msg


@pytest.mark.parametrize("slug", SLUGS)
def test_negative_count(slug, smoke_cfgs):
    cfg = copy.deepcopy(smoke_cfgs[slug])
    parent, key = _parent(cfg["params"], CASES[slug][1])
    assert isinstance(parent[key], int)
    parent[key] = -1
    msg = _error(cfg)
    assert "params." + ".".join(_path(CASES[slug][1])) in msg and "-1" in msg
