"""The workflow on a real single-node SLURM cluster, through profiles/slurm, against a local run."""
import subprocess
import time

import pytest
from conftest import REPO, SNAKEMAKE
from slurm_local import LocalSlurm, Unavailable

PAPERS = ["avg-reward-td", "qkmeans"]
CONFIG = ["--config", "scale=smoke", f"papers=[{','.join(PAPERS)}]"]
COMPARED = ["results/runs.csv", "results/claims.csv"] + [
    f"results/{p}/claims.json" for p in PAPERS]

pytestmark = pytest.mark.slurm


def snakemake(workdir, *args, timeout=900):
    cmd = ["timeout", "-k", "10", str(timeout), SNAKEMAKE, "-s", str(REPO / "Snakefile"),
           "-d", str(workdir), *args]
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    try:
        with LocalSlurm(tmp_path_factory.mktemp("slurm")) as slurm:
            yield slurm
    except Unavailable as why:
        pytest.skip(str(why))


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    work = tmp_path_factory.mktemp("on-slurm")
    start = time.monotonic()
    proc = snakemake(work, "--workflow-profile", str(REPO / "profiles" / "slurm"), *CONFIG)
    wall = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-4000:] + cluster.logs()
    submitted = proc.stderr.count("Job ") and len(
        {ln.split("SLURM jobid ")[1].split()[0] for ln in proc.stderr.splitlines()
         if "SLURM jobid " in ln})
    print(f"SLURM run: {wall:.0f} s wall, {submitted} SLURM jobs submitted")
    return work, proc


def test_slurm_results_equal_local_results(slurm_run, tmp_path):
    work, proc = slurm_run
    assert "SLURM jobid" in proc.stderr  # the jobs really went through sbatch
    local = snakemake(tmp_path, "-c2", *CONFIG)
    assert local.returncode == 0, local.stderr[-3000:]
    for rel in COMPARED:
        assert (work / rel).read_bytes() == (tmp_path / rel).read_bytes(), rel


def test_failed_slurm_job_is_reported(slurm_run):
    """A job that fails on the cluster: Snakemake names the rule, the SLURM state and the log."""
    work, _ = slurm_run
    paper = PAPERS[0]
    evals = sorted((work / "results" / paper / "eval").glob("*.csv"))
    evals[0].write_text("")  # a truncated artifact makes this paper's report job fail
    target = f"results/{paper}/claims.json"
    proc = snakemake(work, "--workflow-profile", str(REPO / "profiles" / "slurm"), *CONFIG,
                     "--forcerun", "report", "--", target, timeout=600)
    err = proc.stderr
    assert proc.returncode != 0
    assert "Error in rule report" in err
    assert "SLURM status is: 'FAILED'" in err
    assert ".snakemake/slurm_logs/rule_report/" in err  # where the job's output went
    assert f"logs/{paper}/report.log" in err
    assert "truncated or corrupt CSV artifact" in (work / "logs" / paper / "report.log").read_text()
    assert not (work / target).exists()


def test_full_scale_dry_run_through_slurm_profile(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    proc = snakemake(tmp_path, "-n", "--workflow-profile", str(REPO / "profiles" / "slurm"),
                     "--config", "scale=full", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "train" in proc.stdout and "results/index.html" in proc.stdout
