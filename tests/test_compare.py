"""python -m icml26 compare: the claims whose verdict or measured value differ."""
import json
import subprocess
import sys

import pytest

from icml26.compare import compare


def write(root, paper, claims, scale="default", seeds=(0, 1, 2, 3, 4)):
    (root / paper).mkdir(parents=True, exist_ok=True)
    doc = {"paper": paper, "scale": scale, "seeds": list(seeds), "claims": claims}
    (root / paper / "claims.json").write_text(json.dumps(doc))


def claim(cid, verdict, measured, **kw):
    return {"id": cid, "statement": "s", "category": "result", "measured": measured,
            "comparison": ">=", "threshold": 0.5, "verdict": verdict, "n_seeds": 5, **kw}


@pytest.fixture
def folders(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, "p1", [claim("C1", "reproduced", 0.9), claim("C2", "reproduced", {"x": 1.0}),
                    claim("C3", "inconclusive", 0.4), claim("T", "reproduced", 2.0, timing=True)])
    write(b, "p1", [claim("C1", "reproduced", 0.9), claim("C2", "not_reproduced", {"x": 0.2}),
                    claim("C3", "inconclusive", 0.44), claim("T", "reproduced", 2.5, timing=True)])
    write(a, "p2", [claim("C1", "reproduced", 1.0)])
    write(b, "p3", [claim("C1", "reproduced", 1.0)], seeds=(1000, 1001))
    return a, b


def test_compare_lists_exactly_the_claims_that_differ(folders):
    frame, n = compare(*folders)
    assert n == 6
    got = {(r.paper, r.id): r.what for r in frame.itertuples()}
    assert got == {("p1", "C2"): "verdict", ("p1", "C3"): "measured", ("p1", "T"): "measured",
                   ("p2", "C1"): "only in A", ("p3", "C1"): "only in B"}
    row = frame[(frame.paper == "p1") & (frame.id == "C2")].iloc[0]
    assert row.verdict_a == "reproduced" and row.verdict_b == "not_reproduced"
    assert row.max_rel_change == pytest.approx(0.8)
    assert frame[frame.id == "T"].iloc[0].timing


def test_compare_command_line_and_html(folders, tmp_path):
    page = tmp_path / "cmp.html"
    proc = subprocess.run([sys.executable, "-m", "icml26", "compare", str(folders[0]),
                           str(folders[1]), "--html", str(page)],
                          capture_output=True, text=True, check=True)
    assert "1 verdicts differ" in proc.stdout and "C2" in proc.stdout
    html = page.read_text()
    assert html.count("<tr") == 1 + 5 and "not_reproduced" in html


def test_compare_rejects_a_folder_without_results(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = subprocess.run([sys.executable, "-m", "icml26", "compare", str(tmp_path / "empty"),
                           str(tmp_path / "empty")], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "no <paper>/claims.json" in proc.stderr
