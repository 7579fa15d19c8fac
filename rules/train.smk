rule train:
    """Train every run (method x setting x seed) of one shard of a paper's grid."""
    input:
        data="results/{paper}/data.npz",
    output:
        state="results/{paper}/train/{shard}.npz",
        curves="results/{paper}/train/{shard}.csv",
    params:
        cfg_hash=paper_config_hash,
        usage=usage_file("train_{shard}"),
    log:
        "logs/{paper}/train_{shard}.log",
    benchmark:
        benchmark_file("train_{shard}")
    threads: 1
    resources:
        mem_mb=train_mem_mb,
        runtime=train_runtime,
        gpu=train_gpus,
    conda:
        ENV
    script:
        "../workflow/scripts/train.py"
