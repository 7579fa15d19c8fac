"""icml26: ICML 2026 papers reproduced as one Snakemake workflow.

The top level imports nothing heavy: Snakemake imports it while building the DAG, and every
job pays for what its imports cost. Paper modules live in ``icml26.papers.<module>``.
"""

__version__ = "0.1.0"
