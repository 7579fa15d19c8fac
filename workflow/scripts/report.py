"""Rule report: claims, figures, metrics and the paper's page (see icml26.pipeline.report)."""
import sys
from pathlib import Path

# src/ on the path also where the package is not installed (e.g. --sdm conda)
sys.path.insert(0, str(Path(snakemake.scriptdir).parents[1] / "src"))  # noqa: F821

from icml26 import jobs  # noqa: E402


def stage(smk):
    from icml26 import pipeline

    out = {key: smk.output[key] for key in
           ("metrics", "summary", "claims", "report_md", "report_html", "figures")}
    pipeline.report(jobs.paper_config(smk), smk.input.evals, smk.input.curves, out,
                    smk.input.states)


jobs.run(snakemake, stage)  # noqa: F821 (injected by Snakemake's script directive)
