"""The budget table from Snakemake benchmark files."""

from icml26 import budget

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(path, wall, cpu):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{wall}\t0:00:01\t1\t1\t1\t1\t0\t0\t0\t{cpu}\n")


def test_budget_takes_the_larger_of_cpu_and_wall(tmp_path, capsys):
    _bench(tmp_path / "smoke" / "p" / "train_all.tsv", 6.0, 2.0)     # loaded: wall > cpu
    _bench(tmp_path / "smoke" / "p" / "report.tsv", 1.0, 3.0)        # threads: cpu > wall
    _bench(tmp_path / "default" / "p" / "train_all.tsv", 190.0, 185.0)  # over 180
    rows = {r["scale"]: r for r in budget.table(tmp_path) if r["paper"] == "p"}
    assert rows["smoke"]["cpu_s"] == 9.0 and rows["smoke"]["startup_s"] is None
    assert rows["smoke"]["ok"] is True and rows["default"]["ok"] is False
    assert budget.main([str(tmp_path)]) == 2
    assert "**NO**" in capsys.readouterr().out


def _usage(path, cpu, startup):
    path.with_suffix(".usage.json").write_text(
        f'{{"cpu_s": {cpu}, "startup_cpu_s": {startup}, "max_rss_mb": 100.0}}\n')


def test_budget_prefers_the_jobs_own_account_and_sums_start_up(tmp_path, capsys):
    # a short job under load: sampled 0, wall 4; its own account says 1.5 CPU-s, 1.2 start-up
    _bench(tmp_path / "default" / "p" / "train_all.tsv", 4.0, 0.0)
    _usage(tmp_path / "default" / "p" / "train_all.tsv", 1.5, 1.2)
    _bench(tmp_path / "default" / "p" / "report.tsv", 2.0, 0.0)
    _usage(tmp_path / "default" / "p" / "report.tsv", 10.5, 0.8)
    _bench(tmp_path / "default" / "q" / "report.tsv", 3.0, 1.0)   # no account: unknown start-up
    rows = {(r["paper"], r["scale"]): r for r in budget.table(tmp_path)}
    p = rows[("p", "default")]
    assert p["cpu_s"] == 12.0 and p["startup_s"] == 2.0 and p["startup_share"] == round(2 / 12, 3)
    assert p["wall_s"] == 6.0
    q = rows[("q", "default")]
    assert q["cpu_s"] == 3.0 and q["startup_s"] is None and q["startup_share"] is None
    total = rows[("all papers", "default")]
    assert total["cpu_s"] == 15.0 and total["startup_s"] is None and total["ok"] is None
    assert budget.main([str(tmp_path)]) == 0
    assert "| p | default | 2 | 12.0 | 6.0 | 2.0 | 17% |" in capsys.readouterr().out


def test_start_up_share_against_the_goal_is_printed(tmp_path, capsys):
    _bench(tmp_path / "default" / "p" / "train_all.tsv", 100.0, 0.0)
    _usage(tmp_path / "default" / "p" / "train_all.tsv", 100.0, 25.0)
    budget.main([str(tmp_path)])
    assert "start-up at default: 25.0% of 100 CPU-s (OVER the 10% goal)" in capsys.readouterr().out


def test_import_clock_times_imports_made_inside_functions(tmp_path, monkeypatch):
    import sys

    from icml26 import jobs

    # a module whose import burns CPU, imported lazily inside a function as papers do
    (tmp_path / "slow_mod_for_clock.py").write_text(
        "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_mod_for_clock", raising=False)

    def work():
        import slow_mod_for_clock  # noqa: F401
        t = jobs.cpu_seconds()
        while jobs.cpu_seconds() - t < 0.2:   # computation, not start-up
            pass

    import builtins

    original = builtins.__import__
    with jobs.ImportClock() as clock:
        work()
    assert 0.2 <= clock.seconds < 0.5
    assert builtins.__import__ is original
    usage = tmp_path / "u.usage.json"
    jobs.write_usage(usage, 1.0)
    import json
    record = json.loads(usage.read_text())
    assert record["startup_cpu_s"] == 1.0 and record["cpu_s"] >= 0.4


def test_start_up_goal_is_judged_at_default_only(tmp_path, capsys):
    _bench(tmp_path / "smoke" / "p" / "train_all.tsv", 2.0, 0.0)
    _usage(tmp_path / "smoke" / "p" / "train_all.tsv", 2.0, 1.5)
    budget.main([str(tmp_path)])
    out = capsys.readouterr().out
    assert "start-up at smoke: 75.0% of 2 CPU-s\n" in out and "goal" not in out
