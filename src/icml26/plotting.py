"""One figure style for the whole project, so every paper's figures read the same:

- readable at 100% zoom: every figure at least ``MIN_WIDTH_IN`` wide at ``DPI`` (the saved PNG
  is >= 800 px wide) and no text smaller than ``MIN_FONT_PT``;
- the legend outside the data: ``legend_outside`` puts it right of an axes, or beside (below)
  the whole grid of panels as a figure legend; constrained layout makes room for it;
- the proposed method always in the same colour, drawn on top (``method_style`` gives it a
  higher zorder than every baseline), baselines muted, ablations dashed.

Imports matplotlib (Agg) lazily.
"""

from __future__ import annotations

PROPOSED_COLOR = "#c0392b"
BASELINE_COLORS = ("#34495e", "#7f8c8d", "#2980b9", "#8e9eab", "#27ae60", "#b7950b", "#6c3483")
REFERENCE_COLOR = "#999999"

DPI = 140
MIN_WIDTH_IN = 6.4  # 896 px at DPI: >= 800 px after bbox_inches="tight" trims the margins
MIN_FONT_PT = 8
# Lines and markers of the proposed method above every baseline artist; the proposed method's
# s.d. band (zorder - 0.5) still above the baselines' lines, theirs below everything.
PROPOSED_ZORDER = 3.0
BASELINE_ZORDER = 2.0


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "figure.dpi": DPI,
            "savefig.dpi": DPI,
            "figure.constrained_layout.use": True,
            "font.size": 10,
            "axes.titlesize": 10,
            "axes.labelsize": 10,
            "xtick.labelsize": 9,
            "ytick.labelsize": 9,
            "legend.fontsize": 9,
            "legend.title_fontsize": 9,
            "figure.titlesize": 11,
            "figure.labelsize": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.25,
            "lines.linewidth": 1.6,
            # reproducible PDF/PNG bytes: no creation dates, fixed hash salt
            "pdf.compression": 6,
            "svg.hashsalt": "icml26",
        }
    )
    return plt


def subplots(nrows: int = 1, ncols: int = 1, *, figsize=(MIN_WIDTH_IN, 3.6), **kwargs):
    """``plt.subplots`` in the house layout: constrained (room for outside legends and
    colorbars), at least ``MIN_WIDTH_IN`` wide; ``figsize`` is the wanted size in inches."""
    plt = pyplot()
    width, height = figsize
    return plt.subplots(nrows, ncols, figsize=(max(float(width), MIN_WIDTH_IN), float(height)),
                        layout="constrained", **kwargs)


def unique_handles(axes) -> tuple[list, list]:
    """Legend handles and labels of several axes, one entry per label, in first-seen order."""
    seen: dict = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label and not label.startswith("_"):
                seen.setdefault(label, handle)
    return list(seen.values()), list(seen)


def legend_outside(where, handles=None, labels=None, *, below: bool = False, **kwargs):
    """A legend that covers no data.

    ``where`` an Axes: to the right of that axes (for panels whose entries differ).
    ``where`` a Figure: one figure legend for all its panels (entries merged by label), to
    the right of the grid, or ``below`` it in up to four columns.
    Returns the legend, or None when there is nothing to label.
    """
    from matplotlib.figure import Figure

    kwargs.setdefault("frameon", False)
    if isinstance(where, Figure):
        if handles is None:
            handles, labels = unique_handles(where.axes)
        if not handles:
            return None
        kwargs.setdefault("ncol", min(4, len(handles)) if below else 1)
        # centred beside the grid, clear of titles that overhang the last column
        loc = "outside lower center" if below else "outside right center"
        return where.legend(handles, labels, loc=loc, **kwargs)
    if handles is None:
        handles, labels = where.get_legend_handles_labels()
    if not handles:
        return None
    return where.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                        borderaxespad=0.0, **kwargs)


def method_label(cfg: dict, method: str) -> str:
    """A method's display name: the paper config's ``labels`` entry, else its name."""
    return cfg.get("labels", {}).get(method, method)


def proposed_set(proposed) -> set:
    """A paper's PROPOSED (one id or several) as a set."""
    return {proposed} if isinstance(proposed, str) else set(proposed)


def method_colors(methods, proposed) -> dict:
    """Colour per method: the proposed one(s) red, baselines from the muted cycle."""
    proposed = proposed_set(proposed)
    colors, k = {}, 0
    for m in methods:
        if m in proposed:
            colors[m] = PROPOSED_COLOR
        else:
            colors[m] = BASELINE_COLORS[k % len(BASELINE_COLORS)]
            k += 1
    return colors


def method_zorder(method, proposed) -> float:
    """zorder of a method's lines, bars and markers: the proposed method on top."""
    return PROPOSED_ZORDER if method in proposed_set(proposed) else BASELINE_ZORDER


def method_style(method, methods, proposed) -> dict:
    """Keyword arguments for plot(): colour, a thicker line and a higher zorder for the
    proposed method."""
    color = method_colors(methods, proposed)[method]
    width = 2.2 if method in proposed_set(proposed) else 1.4
    return {"color": color, "linewidth": width, "label": method,
            "zorder": method_zorder(method, proposed)}


def band_style(style: dict, alpha: float = 0.15) -> dict:
    """Keyword arguments for fill_between() of a method's spread: its colour, just below its
    line (so the proposed method's band still covers the baselines' lines)."""
    return {"color": style["color"], "alpha": alpha, "linewidth": 0,
            "zorder": style["zorder"] - 0.5}


def save(fig, png_path, pdf_path=None) -> None:
    """Save PNG (and PDF) without timestamps, so the same data give the same bytes.

    Lays the figure out once and then freezes it: constrained layout starts from the current
    positions, so every further pass (each savefig) would move things by a pixel.
    """
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    from .io import atomic_path

    engine = fig.get_layout_engine()
    if engine is not None and not isinstance(engine, PlaceHolderLayoutEngine):
        fig.canvas.draw()
        fig.set_layout_engine("none")
    with atomic_path(png_path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None}, bbox_inches="tight")
    if pdf_path is not None:
        with atomic_path(pdf_path) as tmp:
            fig.savefig(
                tmp, format="pdf", metadata={"CreationDate": None, "Producer": None},
                bbox_inches="tight",
            )
