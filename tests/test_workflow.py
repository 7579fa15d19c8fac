"""The workflow end to end through the snakemake command line, into temporary folders."""
import json
import shutil
import subprocess
from html import escape

import pandas as pd
import pytest
import yaml
from conftest import REPO, SNAKEMAKE

from icml26.catalog import CATALOG
from icml26.config import available_papers

PAPERS = available_papers(REPO / "config")
VERDICTS = {"reproduced", "not_reproduced", "inconclusive"}

pytestmark = pytest.mark.workflow


def snakemake(workdir, *args, check=True):
    cmd = [SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(workdir), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


@pytest.mark.parametrize("scale", ["smoke", "default", "full"])
def test_dry_run_every_scale(tmp_path, scale):
    out = snakemake(tmp_path, "-n", "--config", f"scale={scale}").stdout
    for paper in PAPERS:
        assert f"results/{paper}/claims.json" in out
    assert not (tmp_path / "results").exists()


def paper_figures(paper):
    return list(yaml.safe_load((REPO / "config/papers" / f"{paper}.yaml").read_text())["figures"])


def test_smoke_writes_every_contract_file(smoke):
    res = smoke / "results"
    for paper in PAPERS:
        doc = json.loads((res / paper / "claims.json").read_text())
        assert doc["paper"] == paper and doc["scale"] == "smoke" and doc["seeds"]
        assert doc["claims"], f"{paper} has no claims"
        for claim in doc["claims"]:
            assert {"id", "statement", "category", "measured", "comparison", "threshold",
                    "verdict", "n_seeds"} <= set(claim)
            assert claim["verdict"] in VERDICTS and claim["category"] in {"result", "sanity"}
        for name in paper_figures(paper):
            for ext in ("png", "pdf"):
                assert (res / paper / "figures" / f"{name}.{ext}").stat().st_size > 1000
        md = (res / paper / "report.md").read_text()
        assert "## Claims" in md and "Fidelity" in md and "95% CI" in md
        assert (res / paper / "report.html").exists()
        assert pd.read_csv(res / paper / "metrics.csv").shape[0] > 0
    claims = pd.read_csv(res / "claims.csv")
    assert set(claims["paper"]) == set(PAPERS) and set(claims["verdict"]) <= VERDICTS
    runs = pd.read_csv(res / "runs.csv")
    assert {"paper", "method", "setting", "seed"} <= set(runs.columns)
    assert set(runs["paper"]) == set(PAPERS)
    index = (res / "index.html").read_text()
    assert index.count("<tr") == len(CATALOG) + 1  # header + one row per catalog paper
    for paper in PAPERS:
        assert f'href="{paper}/report.html"' in index
    for paper in PAPERS:
        bench = smoke / "benchmarks" / "smoke" / paper
        assert (bench / "prepare.tsv").exists() and (bench / "report.tsv").exists()
        for tsv in bench.glob("*.tsv"):   # every job wrote its own CPU account beside it
            usage = json.loads(tsv.with_suffix(".usage.json").read_text())
            assert 0 < usage["startup_cpu_s"] <= usage["cpu_s"], tsv
        logs = sorted((smoke / "logs" / paper).glob("train_*.log"))
        assert logs and all("train shard" in log.read_text() for log in logs), paper


def test_snakemake_report_offline(smoke):
    snakemake(smoke, "--config", "scale=smoke", "--report", "report.html")
    html = (smoke / "report.html").read_text(errors="replace")
    for paper in PAPERS:
        assert paper in html
        captions = yaml.safe_load((REPO / "config/papers" / f"{paper}.yaml").read_text())[
            "figures"]
        for caption in captions.values():  # every figure has its caption in the report
            words = " ".join(caption.split()[:4])
            page = html.replace("\\", "")
            assert words in page or escape(words, quote=False) in page, (paper, words)


def _without_timings(root, rel):
    """The artifact with measured CPU times removed: metric columns named *cpu_s* and claims
    marked ``timing`` (docs/adding-a-paper.md); everything else must be byte-identical."""
    path = root / rel
    if rel.endswith("claims.json"):
        doc = json.loads(path.read_text())
        doc["claims"] = [c for c in doc["claims"] if not c.get("timing")]
        return json.dumps(doc, sort_keys=True)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if "timing" in frame.columns:
        frame = frame[frame["timing"] != "True"]
    frame = frame[[c for c in frame.columns if "cpu_s" not in c]]
    return frame.to_csv(index=False)


def test_same_config_same_bytes(smoke, tmp_path):
    snakemake(tmp_path, "-c2", "--config", "scale=smoke")
    for rel in ["results/runs.csv", "results/claims.csv"] + [
            f"results/{p}/claims.json" for p in PAPERS]:
        a, b = (smoke / rel).read_bytes(), (tmp_path / rel).read_bytes()
        if a != b:  # only measured CPU times may differ
            assert _without_timings(smoke, rel) == _without_timings(tmp_path, rel), rel
    # a truncated artifact: one line naming the file, and the failed job leaves no output
    paper = PAPERS[0]
    state = sorted((tmp_path / "results" / paper / "train").glob("*.npz"))[0]
    state.write_bytes(state.read_bytes()[:64])
    target = f"results/{paper}/eval/{state.stem}.csv"
    proc = snakemake(tmp_path, "-c1", "--config", "scale=smoke", f"papers=[{paper}]",
                     "--forcerun", "evaluate", "--", target, check=False)
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if "truncated or corrupt npz" in ln]
    assert lines and state.name in lines[0]
    assert not (tmp_path / target).exists()


@pytest.mark.parametrize("override, words", [
    ("papers=[nosuchpaper]", ["unknown paper 'nosuchpaper'", "available papers"]),
    ("scale=huge", ["scale='huge'", "smoke, default, full"]),
    ("seeds=[x]", ["seeds", "integer"]),
    ("sede=1", ["unknown key 'sede'", "allowed keys"]),
])
def test_bad_config_one_line_no_output(tmp_path, override, words):
    proc = snakemake(tmp_path, "-c1", "--config", override, check=False)
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("invalid config:")]
    assert len(lines) == 1, proc.stderr
    for word in words:
        assert word in lines[0]
    assert not (tmp_path / "results").exists()


def copy_workflow(dest):
    """A copy of the workflow (rules, scripts, config, package) to edit in a test."""
    dest.mkdir()
    for part in ("Snakefile", "rules", "workflow", "config", "src", "profiles", "envs"):
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / part)
    return dest


def test_yaml_syntax_error_in_paper_config_is_one_line(tmp_path):
    copy = copy_workflow(tmp_path / "repo")
    target = copy / "config" / "papers" / "qkmeans.yaml"
    n_lines = len(target.read_text().splitlines())
    target.write_text(target.read_text() + "  broken: [1, 2\n")
    cmd = [SNAKEMAKE, "-s", str(copy / "Snakefile"), "-d", str(tmp_path / "w"), "-n"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()
             and not ln.startswith("Using workflow specific profile")]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("invalid config: config/papers/qkmeans.yaml:")
    assert f":{n_lines + 2}:" in lines[0] and "YAML syntax error" in lines[0]


def test_cuda_without_cuda_stops_before_any_job(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    proc = snakemake(tmp_path, "-c1", "--config", "device=cuda", "papers=[castle]", check=False)
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("invalid config:")]
    assert len(lines) == 1 and "device=cuda" in lines[0] and "device=cpu" in lines[0]
    assert not (tmp_path / "results").exists()


def test_config_change_reruns_only_that_paper(smoke, tmp_path):
    """Edit one paper's config in a copy of the workflow: only that paper's jobs rerun."""
    if len(PAPERS) < 2:
        pytest.skip("needs two papers")
    copy = copy_workflow(tmp_path / "repo")
    edited = copy / "config" / "papers" / f"{PAPERS[0]}.yaml"
    body = yaml.safe_load(edited.read_text())
    body["scales"]["smoke"]["seeds"] = [s + 100 for s in body["scales"]["smoke"].get(
        "seeds", body.get("common", {}).get("seeds", [0]))]
    edited.write_text(yaml.safe_dump(body))
    cmd = [SNAKEMAKE, "-s", str(copy / "Snakefile"), "-d", str(smoke), "-n", "--config",
           "scale=smoke"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert f"results/{PAPERS[0]}/data.npz" in out
    assert "'methods'" not in out and '"methods"' not in out  # a hash, not the whole config
    outputs = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("output:")]
    assert any(f"results/{PAPERS[0]}/" in ln for ln in outputs)
    for other in PAPERS[1:]:
        assert not any(f"results/{other}/" in ln for ln in outputs), other
    unchanged = snakemake(smoke, "-n", "--config", "scale=smoke").stdout
    assert "Nothing to be done" in unchanged


# Three fixed papers at default (a numpy RL paper, a torch meta-RL paper, a graph paper): all
# 25 at default cost ~25 minutes on 2 cores, more than the test budget allows; `make reproduce`
# runs them all, and every paper's default grid is resolved and dry-run above.
DEFAULT_SCALE_PAPERS = ["avg-reward-td", "sim2real-safe-metarl", "st-gpa"]


def test_default_scale_every_claim_has_a_verdict(tmp_path):
    papers = [p for p in DEFAULT_SCALE_PAPERS if p in PAPERS]
    snakemake(tmp_path, "-c2", "--config", "scale=default", f"papers=[{','.join(papers)}]")
    for paper in papers:
        doc = json.loads((tmp_path / "results" / paper / "claims.json").read_text())
        assert doc["scale"] == "default" and len(doc["seeds"]) >= 5
        assert doc["claims"] and all(c["verdict"] in VERDICTS for c in doc["claims"])
