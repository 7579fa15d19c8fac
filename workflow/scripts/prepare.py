"""Rule prepare: the paper's data for every setting (see icml26.pipeline.prepare)."""
import sys
from pathlib import Path

# src/ on the path also where the package is not installed (e.g. --sdm conda)
sys.path.insert(0, str(Path(snakemake.scriptdir).parents[1] / "src"))  # noqa: F821

from icml26 import jobs  # noqa: E402


def stage(smk):
    from icml26 import pipeline

    pipeline.prepare(jobs.paper_config(smk), smk.output.data)


jobs.run(snakemake, stage)  # noqa: F821 (injected by Snakemake's script directive)
