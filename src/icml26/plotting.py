"""One figure style for the whole project: the proposed method always in the same colour,
baselines muted, ablations dashed. Imports matplotlib (Agg) lazily."""

from __future__ import annotations

PROPOSED_COLOR = "#c0392b"
BASELINE_COLORS = ("#34495e", "#7f8c8d", "#2980b9", "#8e9eab", "#27ae60", "#b7950b", "#6c3483")
REFERENCE_COLOR = "#999999"


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": 110,
            "font.size": 9,
            "axes.titlesize": 9,
            "axes.labelsize": 9,
            "legend.fontsize": 8,
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


def method_style(method, methods, proposed) -> dict:
    """Keyword arguments for plot(): colour, and a thicker line for the proposed method."""
    color = method_colors(methods, proposed)[method]
    width = 2.2 if method in proposed_set(proposed) else 1.4
    return {"color": color, "linewidth": width, "label": method}


def save(fig, png_path, pdf_path=None) -> None:
    """Save PNG (and PDF) without timestamps, so the same data give the same bytes."""
    from .io import atomic_path

    with atomic_path(png_path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None}, bbox_inches="tight")
    if pdf_path is not None:
        with atomic_path(pdf_path) as tmp:
            fig.savefig(
                tmp, format="pdf", metadata={"CreationDate": None, "Producer": None},
                bbox_inches="tight",
            )
