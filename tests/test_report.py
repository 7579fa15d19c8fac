"""Report pages: Markdown rendered by a real parser, verdicts readable without an emoji font,
smoke pages saying plainly that their verdicts are a plumbing check."""
import re

import pytest

from icml26 import pipeline
from icml26.report import VERDICT_MARK, Page

FIDELITY = """Scaled down:
- bullet one with `code` and **bold**
- bullet two, continued
  on a second line

A closing paragraph."""


def test_markdown_lists_render_as_lists():
    page = Page("t")
    page.h(2, "Fidelity")
    page.p(FIDELITY)
    page.table(["id", "verdict"], [["C1", VERDICT_MARK["not_reproduced"]]])
    html = page.html()
    assert html.count("<li>") == 2 and "<ul>" in html
    assert "<code>code</code>" in html and "<strong>bold</strong>" in html
    assert "continued\non a second line" in html or "continued on a second line" in html
    assert not re.search(r"<p>\s*- ", html)  # no literal bullets
    assert '<span class="bad">NOT reproduced</span>' in html
    assert "<table>" in html


def test_verdict_marks_need_no_emoji_font():
    for mark in VERDICT_MARK.values():
        assert all(ord(ch) < 0x2000 for ch in mark), mark


@pytest.fixture(scope="module")
def smoke_page(tmp_path_factory):
    out = pipeline.run_inprocess(pipeline.resolve("avg-reward-td", "smoke"),
                                 tmp_path_factory.mktemp("page"))
    return out


def test_paper_page_renders_fidelity_bullets_and_smoke_warning(smoke_page):
    from icml26.registry import metadata

    html = smoke_page["report_html"].read_text()
    md = smoke_page["report_md"].read_text()
    assert "plumbing check" in html and "plumbing check" in md
    bullets = [ln for ln in metadata("avg-reward-td").FIDELITY.splitlines()
               if ln.strip().startswith("- ")]
    assert bullets, "test needs a paper whose FIDELITY has a list"
    assert html.count("<li>") >= len(bullets)
    assert not re.search(r"<p>\s*- ", html)
    assert not any(ord(ch) >= 0x1F000 for ch in html)


def test_default_page_has_no_smoke_warning(tmp_path):
    from icml26 import report as rep
    from icml26.registry import metadata

    cfg = pipeline.resolve("avg-reward-td", "default")
    doc = {"claims": []}
    import pandas as pd

    page = rep.paper_page(metadata("avg-reward-td"), cfg, doc, pd.DataFrame(
        columns=["method", "setting", "metric", "mean", "ci_lo", "ci_hi", "n_seeds"]), {},
        tmp_path)
    assert "plumbing check" not in page.html()
