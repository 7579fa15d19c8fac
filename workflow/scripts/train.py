"""Rule train: the runs of one shard (see icml26.pipeline.train)."""
import sys
from pathlib import Path

# src/ on the path also where the package is not installed (e.g. --sdm conda)
sys.path.insert(0, str(Path(snakemake.scriptdir).parents[1] / "src"))  # noqa: F821

from icml26 import jobs  # noqa: E402


def stage(smk):
    from icml26 import pipeline

    pipeline.train(jobs.paper_config(smk), smk.wildcards.shard, smk.input.data, smk.output.state,
                   smk.output.curves)


jobs.run(snakemake, stage)  # noqa: F821 (injected by Snakemake's script directive)
