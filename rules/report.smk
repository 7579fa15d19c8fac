rule report:
    """Claims with verdicts, figures, metrics with intervals over seeds, and the paper's page."""
    input:
        evals=shard_evals,
        curves=shard_curves,
        states=shard_states,
    output:
        metrics="results/{paper}/metrics.csv",
        summary="results/{paper}/metrics_summary.csv",
        claims="results/{paper}/claims.json",
        report_md="results/{paper}/report.md",
        report_html="results/{paper}/report.html",
        figures=report(
            directory("results/{paper}/figures"),
            patterns=["{name}.png"],
            category="{paper}",
            caption="../workflow/report/figure.rst",
            labels={"paper": "{paper}", "figure": "{name}"},
        ),
    params:
        cfg_hash=paper_config_hash,
        usage=usage_file("report"),
        captions=figure_captions,
    log:
        "logs/{paper}/report.log",
    benchmark:
        benchmark_file("report")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        ENV
    script:
        "../workflow/scripts/report.py"


rule summary:
    """The summary page over all papers built, and the tables other tools read."""
    input:
        claims=claims_files,
        metrics=metrics_files,
    output:
        index="results/index.html",
        claims_csv="results/claims.csv",
        runs_csv="results/runs.csv",
    params:
        headlines=headline_figures,
        run_counts=run_counts,
    log:
        "logs/summary.log",
    benchmark:
        f"benchmarks/{SCALE}/summary.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        ENV
    script:
        "../workflow/scripts/summary.py"
