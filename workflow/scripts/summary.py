"""Rule summary: results/index.html, claims.csv and runs.csv (see icml26.pipeline.summary)."""
import sys
from pathlib import Path

# src/ on the path also where the package is not installed (e.g. --sdm conda)
sys.path.insert(0, str(Path(snakemake.scriptdir).parents[1] / "src"))  # noqa: F821

from icml26 import jobs  # noqa: E402


def stage(smk):
    from icml26 import pipeline

    out = {key: smk.output[key] for key in ("index", "claims_csv", "runs_csv")}
    pipeline.summary(smk.params.headlines, Path(smk.output.index).parent, out,
                     smk.params.run_counts)


jobs.run(snakemake, stage)  # noqa: F821 (injected by Snakemake's script directive)
