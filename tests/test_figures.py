"""The house figure style (icml26.plotting) on every paper's smoke figures: readable at 100%
zoom (PNG >= 800 px wide, no text under MIN_FONT_PT), legends outside the data, and the
proposed method (its colour, PROPOSED_COLOR) drawn above the baselines (BASELINE_COLORS)."""
import struct

import numpy as np
import pytest
from conftest import REPO

from icml26 import grid, pipeline, plotting, registry
from icml26.config import available_papers

PAPERS = available_papers(REPO / "config")
MIN_PNG_WIDTH = 800


# ----------------------------------------------------------------------------- the rules
def _visible_axes(fig):
    return [ax for ax in fig.axes if ax.get_visible() and ax.axison]


def small_texts(fig) -> list[str]:
    """Visible, non-empty texts smaller than MIN_FONT_PT."""
    from matplotlib.text import Text

    fig.canvas.draw()
    out = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip():
            continue
        if t.axes is not None and not t.axes.get_visible():
            continue
        if t.get_fontsize() < plotting.MIN_FONT_PT:
            out.append(f"{t.get_text()[:40]!r} at {t.get_fontsize():g} pt")
    return out


def _shared(a, b) -> tuple[float, float]:
    return min(a.x1, b.x1) - max(a.x0, b.x0), min(a.y1, b.y1) - max(a.y0, b.y0)


def legends_over_data(fig) -> list[str]:
    """Legends whose window extent overlaps an axes' (the data area's) window extent, or a
    title (the one text that commonly overhangs its axes)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + fig.legends
    titles = [t for ax in _visible_axes(fig) for t in (ax.title, ax._left_title, ax._right_title)]
    if fig._suptitle is not None:
        titles.append(fig._suptitle)
    out = []
    for leg in legends:
        if not leg.get_visible():
            continue
        lb = leg.get_window_extent(renderer)
        name = f"legend {[t.get_text() for t in leg.get_texts()][:3]}"
        for k, ax in enumerate(_visible_axes(fig)):
            w, h = _shared(lb, ax.get_window_extent(renderer))
            if w > 1 and h > 1:  # more than a pixel of shared area
                out.append(f"{name} overlaps {ax.get_title() or f'axes {k}'!r} "
                           f"by {w:.0f}x{h:.0f} px")
        for t in titles:
            if t.get_visible() and t.get_text().strip():
                w, h = _shared(lb, t.get_window_extent(renderer))
                if w > 1 and h > 1:
                    out.append(f"{name} overlaps the title {t.get_text()!r}")
    return out


def _rgb(color):
    from matplotlib.colors import to_rgba

    try:
        r, g, b, a = to_rgba(color)
    except (ValueError, TypeError):
        return None
    return None if a == 0 else (round(r, 3), round(g, 3), round(b, 3))


PROPOSED_RGB = _rgb(plotting.PROPOSED_COLOR)
BASELINE_RGB = {_rgb(c) for c in plotting.BASELINE_COLORS}


def _colors(artist) -> set:
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if isinstance(artist, Line2D):
        if len(np.atleast_1d(artist.get_xdata())) == 0:  # legend-only proxy
            return set()
        cols = [artist.get_color(), artist.get_markerfacecolor(), artist.get_markeredgecolor()]
    elif isinstance(artist, Patch):
        cols = [artist.get_facecolor(), artist.get_edgecolor()]
    elif isinstance(artist, Collection):
        cols = [*artist.get_facecolor(), *artist.get_edgecolor()]
    else:
        return set()
    return {c for c in map(_rgb, cols) if c is not None}


def proposed_below_baselines(fig) -> list[str]:
    """Axes where an artist in the proposed colour is not above every baseline-coloured one."""
    out = []
    for k, ax in enumerate(fig.axes):
        prop, base = [], []
        for a in [*ax.lines, *ax.patches, *ax.collections]:
            cols = _colors(a)
            if PROPOSED_RGB in cols:
                prop.append(a.get_zorder())
            elif cols & BASELINE_RGB:
                base.append(a.get_zorder())
        if prop and base and min(prop) <= max(base):
            out.append(f"{ax.get_title() or f'axes {k}'!r}: proposed zorder {min(prop):g} "
                       f"<= baseline zorder {max(base):g}")
    return out


def png_width(path) -> int:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    return struct.unpack(">I", head[16:20])[0]


# ----------------------------------------------------------------------- the helpers alone
def _demo(legend="figure"):
    fig, axes = plotting.subplots(1, 2, figsize=(4, 3))
    methods, proposed = ["ours", "base-a", "base-b"], "ours"
    x = np.arange(10.0)
    for ax in axes:
        for i, m in enumerate(methods):
            st = plotting.method_style(m, methods, proposed)
            ax.plot(x, x * (i + 1), **st)
            ax.fill_between(x, x * i, x * (i + 2), **plotting.band_style(st))
    if legend == "figure":
        plotting.legend_outside(fig)
    elif legend == "axes":
        for ax in axes:
            plotting.legend_outside(ax)
    else:
        axes[0].legend(loc="upper left", fontsize=6)
    return fig


@pytest.mark.parametrize("legend", ["figure", "axes"])
def test_helpers_meet_the_style(tmp_path, legend):
    fig = _demo(legend)
    assert fig.get_figwidth() >= plotting.MIN_WIDTH_IN
    assert not small_texts(fig)
    assert not legends_over_data(fig)
    assert not proposed_below_baselines(fig)
    plotting.save(fig, tmp_path / "a.png", tmp_path / "a.pdf")
    plotting.save(fig, tmp_path / "b.png", tmp_path / "b.pdf")
    assert png_width(tmp_path / "a.png") >= MIN_PNG_WIDTH
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()
    plotting.pyplot().close(fig)


def test_checks_catch_violations():
    fig = _demo("inside")
    assert small_texts(fig) and legends_over_data(fig)
    fig.axes[0].lines[0].set_zorder(1)  # the proposed line under the baselines
    assert proposed_below_baselines(fig)
    plotting.pyplot().close(fig)


def test_method_style_proposed_on_top():
    methods = ["a", "b", "ours"]
    top = plotting.method_style("ours", methods, "ours")
    for m in ("a", "b"):
        st = plotting.method_style(m, methods, ["ours"])
        assert st["zorder"] < plotting.band_style(top)["zorder"] < top["zorder"]
        assert plotting.band_style(st)["zorder"] < st["zorder"]
    assert top["color"] == plotting.PROPOSED_COLOR


# ------------------------------------------------------------- every paper's smoke figures
def smoke_figures(results, slug) -> dict:
    """The paper's figures, rebuilt from the metrics and curves of a smoke run."""
    cfg = pipeline.resolve(slug, "smoke")
    base = results / slug
    shards = grid.shards(cfg)  # the report's own inputs, checked and in grid order
    metrics, curves = pipeline.collect_shards(
        cfg, [base / "eval" / f"{s}.csv" for s in shards],
        [base / "train" / f"{s}.csv" for s in shards],
        [base / "train" / f"{s}.npz" for s in shards])
    plotting.pyplot()
    return registry.stage(slug, "figures").make(cfg, metrics, curves)


@pytest.fixture(scope="module", params=PAPERS)
def figures(request, smoke):
    """One paper's figures (pytest runs all tests of one paper, then the next)."""
    figs = smoke_figures(smoke / "results", request.param)
    yield figs
    plt = plotting.pyplot()
    for fig in figs.values():
        plt.close(fig)


@pytest.mark.workflow
def test_smoke_figures_readable(figures, tmp_path):
    problems = []
    for name, fig in figures.items():  # saved first, as the pipeline does (save fixes layout)
        plotting.save(fig, tmp_path / f"{name}.png")
        width = png_width(tmp_path / f"{name}.png")
        if width < MIN_PNG_WIDTH:
            problems.append(f"{name}: PNG {width} px wide")
        problems += [f"{name}: text {p}" for p in small_texts(fig)]
    assert not problems, "\n".join(problems)


@pytest.mark.workflow
def test_smoke_figures_legend_outside_data(figures):
    problems = [f"{name}: {p}" for name, fig in figures.items() for p in legends_over_data(fig)]
    assert not problems, "\n".join(problems)


@pytest.mark.workflow
def test_smoke_figures_proposed_on_top(figures):
    problems = [f"{name}: {p}" for name, fig in figures.items()
                for p in proposed_below_baselines(fig)]
    assert not problems, "\n".join(problems)
