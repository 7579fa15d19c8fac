"""Truncated or corrupt contract files: every stage that reads one stops with one line naming
it, and writes nothing. A file cut at a row boundary is caught by the row counts each stage
knows (runs per shard, curve rows per run, runs per paper)."""
import os
import stat

import pytest

from icml26 import grid, io, pipeline
from icml26.errors import ArtifactError

PAPER = "avg-reward-td"  # smoke scale runs in well under a second


@pytest.fixture
def done(tmp_path):
    cfg = pipeline.resolve(PAPER, "smoke", shard_by=["seed"])
    out = pipeline.run_inprocess(cfg, tmp_path)
    base = tmp_path / PAPER
    shards = grid.shards(cfg)
    assert len(shards) == 2
    paths = {
        "data": base / "data.npz",
        "state": [base / "train" / f"{s}.npz" for s in shards],
        "curves": [base / "train" / f"{s}.csv" for s in shards],
        "evals": [base / "eval" / f"{s}.csv" for s in shards],
    }
    return cfg, paths, out, tmp_path


def cut_mid_row(path):
    raw = path.read_bytes()
    cut = len(raw) // 2
    while raw[cut - 1:cut] == b"\n":
        cut += 1
    path.write_bytes(raw[:cut])


def cut_at_row(path, keep_fraction=0.5):
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: max(2, int(len(lines) * keep_fraction))]))


def report_args(paths, tmp_path):
    out = {k: tmp_path / "again" / name for k, name in (
        ("metrics", "metrics.csv"), ("summary", "summary.csv"), ("claims", "claims.json"),
        ("report_md", "report.md"), ("report_html", "report.html"), ("figures", "figures"))}
    return paths["evals"], paths["curves"], out, paths["state"]


def assert_one_line_naming(info, path):
    msg = str(info.value)
    assert "\n" not in msg and path.name in msg and str(path.parent.name) in msg, msg


@pytest.mark.parametrize("cut", [cut_mid_row, cut_at_row])
def test_truncated_curves_stop_evaluate_and_report(done, cut):
    cfg, paths, _, tmp_path = done
    victim = paths["curves"][0]
    cut(victim)
    shard = victim.stem
    with pytest.raises(ArtifactError) as info:
        pipeline.evaluate(cfg, shard, paths["data"], paths["state"][0], victim,
                          tmp_path / "ev.csv")
    assert_one_line_naming(info, victim)
    assert not (tmp_path / "ev.csv").exists()
    evals, curves, out, states = report_args(paths, tmp_path)
    with pytest.raises(ArtifactError) as info:
        pipeline.report(cfg, evals, curves, out, states)
    assert_one_line_naming(info, victim)
    assert not (tmp_path / "again").exists() or not any((tmp_path / "again").iterdir())


@pytest.mark.parametrize("cut", [cut_mid_row, cut_at_row])
def test_truncated_eval_stops_report(done, cut):
    cfg, paths, _, tmp_path = done
    victim = paths["evals"][1]
    cut(victim)
    evals, curves, out, states = report_args(paths, tmp_path)
    with pytest.raises(ArtifactError) as info:
        pipeline.report(cfg, evals, curves, out, states)
    assert_one_line_naming(info, victim)


@pytest.mark.parametrize("cut", [cut_mid_row, cut_at_row])
def test_truncated_metrics_stop_summary(done, cut):
    cfg, paths, out, tmp_path = done
    victim = out["metrics"]
    cut(victim)
    dest = {k: tmp_path / "sum" / f for k, f in (("index", "index.html"),
                                                 ("claims_csv", "claims.csv"),
                                                 ("runs_csv", "runs.csv"))}
    with pytest.raises(ArtifactError) as info:
        pipeline.summary({PAPER: "convergence"}, tmp_path, dest,
                         {PAPER: len(grid.runs(cfg))})
    assert_one_line_naming(info, victim)
    assert not (tmp_path / "sum" / "runs.csv").exists()


@pytest.mark.parametrize("which", ["data", "state"])
def test_truncated_npz_stops_the_next_stage(done, which):
    cfg, paths, _, tmp_path = done
    victim = paths[which] if which == "data" else paths[which][0]
    victim.write_bytes(victim.read_bytes()[: len(victim.read_bytes()) // 2])
    with pytest.raises(ArtifactError) as info:
        pipeline.evaluate(cfg, grid.shards(cfg)[0], paths["data"], paths["state"][0],
                          paths["curves"][0], tmp_path / "ev.csv")
    assert_one_line_naming(info, victim)


def test_truncated_claims_json_stops_summary(done):
    cfg, paths, out, tmp_path = done
    victim = out["claims"]
    victim.write_text(victim.read_text()[:200])
    dest = {k: tmp_path / "sum" / f for k, f in (("index", "index.html"),
                                                 ("claims_csv", "claims.csv"),
                                                 ("runs_csv", "runs.csv"))}
    with pytest.raises(ArtifactError) as info:
        pipeline.summary({PAPER: "convergence"}, tmp_path, dest)
    assert_one_line_naming(info, victim)


def test_state_without_curve_counts_is_rejected(done):
    cfg, paths, _, tmp_path = done
    state = io.load_npz(paths["state"][0])
    state.pop(pipeline.CURVE_ROWS_KEY)
    io.save_npz(paths["state"][0], state)
    with pytest.raises(ArtifactError, match="curve row counts"):
        pipeline.evaluate(cfg, grid.shards(cfg)[0], paths["data"], paths["state"][0],
                          paths["curves"][0], tmp_path / "ev.csv")


def test_results_readable_as_umask_allows(done):
    _, paths, out, _ = done
    old = os.umask(0o022)
    os.umask(old)
    for path in (paths["data"], paths["curves"][0], out["metrics"], out["claims"],
                 out["report_html"]):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == 0o666 & ~old, (path, oct(mode))


def test_sharding_does_not_change_tables(tmp_path):
    """metrics.csv (and so runs.csv) is in grid order whatever shard_by is."""
    frames = {}
    for shard_by in ([], ["seed"], ["method", "setting", "seed"]):
        cfg = pipeline.resolve(PAPER, "smoke", shard_by=shard_by)
        out = pipeline.run_inprocess(cfg, tmp_path / "-".join(shard_by or ["none"]))
        frames[tuple(shard_by)] = (out["metrics"].read_bytes(), out["claims"].read_bytes(),
                                   out["summary"].read_bytes())
    first = next(iter(frames.values()))
    for value in frames.values():
        assert value == first


@pytest.mark.parametrize("edit, words", [
    (lambda doc: doc["claims"][0].update(verdict=None), "has verdict None"),
    (lambda doc: doc["claims"][0].pop("verdict"), "has verdict None"),
    (lambda doc: doc.update(claims=[]), "no claims"),
])
def test_summary_fails_naming_the_paper_when_a_verdict_is_missing(done, edit, words):
    """make reproduce exits non-zero at the summary, naming the paper, when any claim of any
    paper lacks a verdict (the check that used to be a test of all papers at default)."""
    import json

    cfg, paths, out, tmp_path = done
    doc = json.loads(out["claims"].read_text())
    edit(doc)
    out["claims"].write_text(json.dumps(doc))
    dest = {k: tmp_path / "sum" / f for k, f in (("index", "index.html"),
                                                 ("claims_csv", "claims.csv"),
                                                 ("runs_csv", "runs.csv"))}
    with pytest.raises(ArtifactError) as info:
        pipeline.summary({PAPER: "convergence"}, tmp_path, dest)
    message = str(info.value)
    assert "\n" not in message and PAPER in message and words in message
    assert "reproduced, not_reproduced, inconclusive" in message
    assert not any(p.exists() for p in dest.values())
