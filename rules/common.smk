# Config loading, validation and every helper the rules use. Nothing here runs a paper.
import sys
from pathlib import Path

REPO = Path(workflow.basedir)
# The package imports from src/ also where it is not installed (e.g. --sdm conda).
sys.path.insert(0, str(REPO / "src"))

from icml26 import grid, registry  # noqa: E402
from icml26.config import (  # noqa: E402
    config_hash,
    load_paper_file,
    resolve_paper,
    validate_workflow_config,
)
from icml26.errors import Icml26Error  # noqa: E402
from icml26.seeding import check_device_available  # noqa: E402

CONFIG_DIR = REPO / "config"
ENV = "../envs/icml26.yaml"


def load_config(raw):
    """Validated workflow config and each selected paper's resolved config, or one clear line."""
    try:
        cfg = validate_workflow_config(raw, CONFIG_DIR)
        papers = {slug: resolve_paper(slug, cfg, CONFIG_DIR) for slug in cfg["papers"]}
        for paper_cfg in papers.values():
            registry.check_config_against_module(paper_cfg)
            grid.runs(paper_cfg)
        # Jobs run here: device=cuda needs CUDA here. On a cluster the nodes are checked by
        # the jobs themselves (the submitting host often has no GPU).
        if workflow.local_exec and workflow.is_main_process:
            check_device_available(cfg["device"])
    except Icml26Error as err:
        print(f"invalid config: {err}", file=sys.stderr)
        sys.exit(1)
    return cfg, papers


CONFIG, PAPER_CFG = load_config(config)
SCALE = CONFIG["scale"]
PAPERS = list(PAPER_CFG)


wildcard_constraints:
    paper="|".join(PAPERS) if PAPERS else "none",
    shard=r"[A-Za-z0-9.+~-]+",


def benchmark_file(job):
    """Snakemake's benchmark file of one job of a paper at this scale (wall, sampled CPU, RSS)."""
    return f"benchmarks/{SCALE}/{{paper}}/{job}.tsv"


def usage_file(job):
    """The job's own CPU account beside its benchmark file: exact CPU seconds and how many of
    them were start-up (written by icml26.jobs, read by icml26.budget)."""
    return f"benchmarks/{SCALE}/{{paper}}/{job}.usage.json"


def paper_config_hash(wildcards):
    """Hash of the paper's resolved config: a change reruns only that paper's jobs. The job
    resolves the config itself (icml26.jobs.paper_config) and checks it has this hash."""
    return config_hash(PAPER_CFG[wildcards.paper])


def figure_captions(wildcards):
    """Caption of each figure of the paper (config/papers/<slug>.yaml: figures), escaped for
    reStructuredText, for `snakemake --report` (workflow/report/figure.rst)."""
    special = "\\*`_|"
    return {
        name: "".join(f"\\{ch}" if ch in special else ch for ch in " ".join(text.split()))
        for name, text in PAPER_CFG[wildcards.paper]["figures"].items()
    }


def train_shards(paper):
    return grid.shards(PAPER_CFG[paper])


def shard_curves(wildcards):
    return [f"results/{wildcards.paper}/train/{s}.csv" for s in train_shards(wildcards.paper)]


def shard_evals(wildcards):
    return [f"results/{wildcards.paper}/eval/{s}.csv" for s in train_shards(wildcards.paper)]


def headline_figures(wildcards):
    """Name of each paper's headline figure (the first one its config lists)."""
    return {p: next(iter(PAPER_CFG[p]["figures"])) for p in PAPERS}


def claims_files(wildcards):
    return [f"results/{p}/claims.json" for p in PAPERS]


def metrics_files(wildcards):
    return [f"results/{p}/metrics.csv" for p in PAPERS]


RESOURCES = {
    p: load_paper_file(p, CONFIG_DIR).get("resources", {}).get(SCALE, {}) for p in PAPERS
}


def train_mem_mb(wildcards):
    """Train-job memory of the paper at this scale (config/papers/<slug>.yaml: resources)."""
    return RESOURCES[wildcards.paper].get("mem_mb", 2000)


def train_runtime(wildcards):
    """Train-job time limit in minutes of the paper at this scale."""
    return RESOURCES[wildcards.paper].get("runtime", 30)


def train_gpus(wildcards):
    """GPUs a train job asks for (only papers that declare one at this scale)."""
    return RESOURCES[wildcards.paper].get("gpu", 0)


def shard_states(wildcards):
    return [f"results/{wildcards.paper}/train/{s}.npz" for s in train_shards(wildcards.paper)]


def run_counts(wildcards):
    """Runs in each paper's grid: the summary checks every metrics.csv holds them all."""
    return {p: len(grid.runs(PAPER_CFG[p])) for p in PAPERS}


def all_outputs():
    return ["results/index.html", "results/claims.csv", "results/runs.csv"]
