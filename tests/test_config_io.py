"""Config validation and resolution, grid and shards, and artifact IO errors."""
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from icml26 import grid, io
from icml26.config import CATALOG_SLUGS, available_papers, resolve_paper, validate_workflow_config
from icml26.errors import ArtifactError, ConfigError


@pytest.fixture
def cfgdir(repo):
    return repo / "config"


def wf(cfgdir, **kw):
    return validate_workflow_config({"scale": "smoke", "papers": "all", **kw}, cfgdir)


def test_every_catalog_paper_with_config_resolves_at_every_scale(cfgdir):
    papers = wf(cfgdir)["papers"]
    assert papers, "no paper configs found"
    for scale in ("smoke", "default", "full"):
        for slug in papers:
            cfg = resolve_paper(slug, wf(cfgdir, scale=scale), cfgdir)
            assert grid.runs(cfg) and grid.shards(cfg)


# (paper, setting) pairs that are one deterministic computation, where seeds mean nothing;
# each with its reason. Every other (method, setting) runs >= 5 seeds at default, >= 10 at full.
DETERMINISTIC_SETTINGS: dict[tuple[str, str], str] = {}
MIN_SEEDS_AT = {"default": 5, "full": 10}


@pytest.mark.parametrize("scale", sorted(MIN_SEEDS_AT))
def test_every_run_has_enough_seeds(cfgdir, scale):
    """Issue 13: claims decided over seeds need >= 5 seeds at default and >= 10 at full."""
    short = []
    for slug in wf(cfgdir)["papers"]:
        cfg = resolve_paper(slug, wf(cfgdir, scale=scale), cfgdir)
        seeds = {}
        for run in grid.runs(cfg):
            seeds.setdefault((run.method, run.setting), set()).add(run.seed)
        for (method, setting), got in seeds.items():
            if (slug, setting) not in DETERMINISTIC_SETTINGS and len(got) < MIN_SEEDS_AT[scale]:
                short.append(f"{slug} {method}/{setting}: {len(got)} seeds")
    assert not short, "\n".join(short)


@pytest.mark.parametrize("override, words", [
    ({"scale": "huge"}, ["scale", "smoke, default, full"]),
    ({"papers": ["nope"]}, ["unknown paper 'nope'", "available papers"]),
    ({"papers": ["UNBUILT"]}, ["not implemented yet"]),
    ({"sead": 3}, ["unknown key 'sead'", "allowed keys"]),
    ({"seeds": ["a"]}, ["seeds", "integer"]),
    ({"seeds": [-1]}, ["seeds"]),
    ({"device": "tpu"}, ["device", "auto, cpu, cuda"]),
    ({"shard_by": ["gpu"]}, ["shard_by", "method, setting, seed"]),
])
def test_bad_workflow_config_gives_one_clear_line(cfgdir, override, words):
    if override.get("papers") == ["UNBUILT"]:  # a catalog paper without a config yet
        unbuilt = [s for s in CATALOG_SLUGS if s not in available_papers(cfgdir)]
        if not unbuilt:
            pytest.skip("every catalog paper is built")
        override = {"papers": unbuilt[:1]}
    with pytest.raises(ConfigError) as info:
        wf(cfgdir, **override)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_seeds_replace_and_offset_shifts(cfgdir):
    slug = wf(cfgdir)["papers"][0]
    cfg = resolve_paper(slug, wf(cfgdir, seeds=[7, 8], seed_offset=1000), cfgdir)
    assert cfg["seeds"] == [1007, 1008]


def _paper_dir(tmp_path, cfgdir, body):
    (tmp_path / "papers").mkdir()
    (tmp_path / "schemas" / "params").mkdir(parents=True)
    for name in ("config.schema.yaml", "paper.schema.yaml"):
        (tmp_path / "schemas" / name).write_bytes((cfgdir / "schemas" / name).read_bytes())
    slug = "qkmeans"  # a catalog slug, with a made-up body and an accept-all params schema
    (tmp_path / "schemas" / "params" / f"{slug}.schema.yaml").write_text("type: object\n")
    (tmp_path / "papers" / f"{slug}.yaml").write_text(yaml.safe_dump(body))
    return slug


def test_bad_paper_config(tmp_path, cfgdir):
    body = {"figures": {"f": "c"}, "common": {"methods": ["m"], "metods": ["x"]},
            "scales": {s: {"seeds": [0]} for s in ("smoke", "default", "full")}}
    slug = _paper_dir(tmp_path, cfgdir, body)
    with pytest.raises(ConfigError, match="unknown key 'metods'.*allowed keys"):
        resolve_paper(slug, {"scale": "smoke"}, tmp_path)


def test_unknown_method_names_the_allowed_ones(cfgdir):
    from icml26.registry import check_config_against_module

    slug = wf(cfgdir)["papers"][0]
    cfg = resolve_paper(slug, wf(cfgdir), cfgdir)
    cfg["methods"] = cfg["methods"] + ["NoSuchMethod"]
    with pytest.raises(ConfigError, match="unknown method 'NoSuchMethod'; allowed: "):
        check_config_against_module(cfg)


def test_grid_exclude_and_shards():
    cfg = {"paper": "p", "methods": ["a", "b"], "settings": {"s1": {}, "s2": {}},
           "seeds": [0, 1], "exclude": [{"method": "b", "setting": "s2"}], "shard_by": []}
    runs = grid.runs(cfg)
    assert len(runs) == 6 and grid.Run("b", "s2", 0) not in runs
    assert grid.shards(cfg) == ["all"]
    cfg["shard_by"] = ["method"]
    assert grid.shards(cfg) == ["a", "b"] and len(grid.runs_in_shard(cfg, "b")) == 2
    cfg["shard_by"] = ["method", "setting", "seed"]
    assert len(grid.shards(cfg)) == 6
    with pytest.raises(ConfigError, match="unknown shard"):
        grid.runs_in_shard(cfg, "zzz")
    # seeds depend on the run, not on the shard it lands in
    assert runs[0].rng_seed("p") == grid.Run("a", "s1", 0).rng_seed("p")
    assert runs[0].rng_seed("p") != runs[1].rng_seed("p")


def test_setting_n_seeds_takes_the_first_seeds():
    cfg = {"paper": "p", "methods": ["a"], "settings": {"s1": {"n_seeds": 2}, "s2": {}},
           "seeds": [5, 6, 7], "exclude": [], "shard_by": []}
    assert [(r.setting, r.seed) for r in grid.runs(cfg)] == [
        ("s1", 5), ("s1", 6), ("s2", 5), ("s2", 6), ("s2", 7)]
    cfg["settings"]["s1"]["n_seeds"] = 0
    with pytest.raises(ConfigError, match="n_seeds=0; allowed: an integer >= 1"):
        grid.runs(cfg)


def test_truncated_artifacts_name_the_file(tmp_path):
    path = tmp_path / "x.npz"
    io.save_npz(path, {"a": np.arange(1000.0)})
    assert np.array_equal(io.load_npz(path)["a"], np.arange(1000.0))
    path.write_bytes(path.read_bytes()[:50])
    with pytest.raises(ArtifactError, match=r"x\.npz: truncated or corrupt"):
        io.load_npz(path)
    csv = tmp_path / "t.csv"
    io.write_csv(csv, pd.DataFrame({"method": ["a"], "v": [1.0]}))
    csv.write_text("")
    with pytest.raises(ArtifactError, match=r"t\.csv"):
        io.read_csv(csv, required=["method"])
    js = tmp_path / "c.json"
    io.write_json(js, {"a": 1})
    js.write_text(js.read_text()[:4])
    with pytest.raises(ArtifactError, match=r"c\.json"):
        io.read_json(js)
    with pytest.raises(ArtifactError, match="not found"):
        io.load_npz(tmp_path / "missing.npz")


def test_failed_write_leaves_nothing(tmp_path):
    target = tmp_path / "out.json"
    with pytest.raises(TypeError):
        io.write_json(target, {"bad": object()})
    assert list(tmp_path.iterdir()) == []
    assert json.loads(json.dumps({"ok": 1}))


def test_shard_by_per_scale_overrides_paper_default(tmp_path, cfgdir):
    body = {"figures": {"f": "c"}, "shard_by": ["method"], "common": {"methods": ["m"]},
            "scales": {"smoke": {"seeds": [0]}, "default": {"seeds": [0]},
                       "full": {"seeds": [0], "shard_by": ["setting", "seed"]}}}
    slug = _paper_dir(tmp_path, cfgdir, body)
    assert resolve_paper(slug, {"scale": "smoke"}, tmp_path)["shard_by"] == ["method"]
    assert resolve_paper(slug, {"scale": "full"}, tmp_path)["shard_by"] == ["setting", "seed"]
    assert resolve_paper(slug, {"scale": "full", "shard_by": []}, tmp_path)["shard_by"] == []
