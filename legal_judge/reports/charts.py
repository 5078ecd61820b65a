"""Charts as inline SVG strings: plotting only, no statistics.

Every function takes numbers already computed elsewhere (run summaries, stored reports) and returns
an ``<svg>`` element ready to be placed in an HTML page; how a figure is styled and exported (no
metadata, no external reference, text kept as text, ids salted per chart) is
:mod:`legal_judge.reports.figures`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import matplotlib.patches
import numpy as np

from legal_judge.reports.figures import PALETTE, figure, finite, slug, small_multiples, to_svg

__all__ = [
    "bar_with_ci",
    "bland_altman",
    "confusion_matrix",
    "deltas_with_ci",
    "forest_plot",
    "grouped_accuracy",
    "histograms",
    "judge_vs_ensemble",
    "probe_panel",
    "scatter_identity",
    "strip_plot",
    "trend_lines",
]


#: The colour of the harmful error (a false pass) and of a flagged effect.
HARM = PALETTE[5]


def _titled(fig: Any, key: str, title: str) -> str:
    """A multi-panel figure's bold title, tight layout and SVG (every grid chart ends so)."""
    fig.suptitle(title, fontweight="bold")
    fig.tight_layout()
    return to_svg(fig, key, title)


def _single(fig: Any, ax: Any, key: str, title: str, *, grid: str) -> str:
    """A one-panel chart's title, light grid lines along ``grid`` ("x" or "y") and SVG."""
    ax.set_title(title)
    ax.grid(axis=grid, alpha=0.3)
    return to_svg(fig, key, title)


def _interval(ax: Any, ci: Sequence[float | None] | None, y: float, color: str, *,
              gid: str | None = None) -> None:
    """A horizontal 95% CI at height ``y`` (nothing when a bound is missing)."""
    if ci is not None and all(finite(c) for c in ci):
        ax.plot([ci[0], ci[1]], [y, y], color=color, lw=2, gid=gid)


def _rows_axes(axes: Sequence[Any], y: Any, labels: Sequence[str]) -> None:
    """Row labels on the first of side-by-side panels, the same rows and grid on every one."""
    for i, ax in enumerate(axes):
        ax.set_yticks(y, labels if i == 0 else [""] * len(labels))
        ax.set_ylim(-0.7, len(labels) - 0.3)
        ax.grid(axis="x", alpha=0.3)


@contextmanager
def _row_panels(key: str, n: int) -> Iterator[tuple[Any, Any, Any, Any]]:
    """Two side-by-side panels of ``n`` rows (figure, left, right, the rows' heights top first)."""
    with figure(key, 9.6, 0.5 * n + 1.6, ncols=2) as (fig, axes):
        yield fig, axes[0][0], axes[0][1], np.arange(n)[::-1]


@contextmanager
def _rubric_panels(key: str, panels: Mapping[str, tuple[Sequence[float], Sequence[float]]],
                   panel_w: float, panel_h: float) -> Iterator[tuple[Any, list[tuple[Any, ...]]]]:
    """One panel per rubric: (index, axes, rubric, lawyers' scores, judge's scores as floats)."""
    with small_multiples(key, list(panels), panel_w, panel_h) as (fig, cells):
        yield fig, [(i, ax, name, *(np.asarray(v, dtype=float) for v in panels[name]))
                    for i, ax, name in cells]


def bar_with_ci(labels: Sequence[str], means: Sequence[float], cis: Sequence[Sequence[float] | None],
                *, title: str, xlabel: str, xlim: tuple[float, float] | None = None) -> str:
    """Horizontal points with 95% CI whiskers, one row per label (rubric means, pass rate)."""
    key = slug(title)
    with figure(key, 6.4, 0.45 * len(labels) + 1.0) as (fig, axes):
        ax = axes[0][0]
        y = np.arange(len(labels))[::-1]
        for yi, m, ci in zip(y, means, cis, strict=True):
            _interval(ax, ci, yi, PALETTE[0])
            ax.plot([m], [yi], "o", color=PALETTE[0], ms=6)
            ax.annotate(f"{m:.2f}", (m, yi), xytext=(0, 7), textcoords="offset points",
                        ha="center", fontsize=8)
        ax.set_yticks(y, labels)
        ax.set_xlabel(xlabel)
        if xlim:
            ax.set_xlim(*xlim)
        return _single(fig, ax, key, title, grid="x")


def deltas_with_ci(labels: Sequence[str], deltas: Sequence[float | None],
                   cis: Sequence[Sequence[float] | None], *, title: str, threshold: float,
                   flagged: Sequence[bool]) -> str:
    """Change per row (B - A) with its 95% CI, a zero line and the regression threshold."""
    key = slug(title)
    with figure(key, 6.4, 0.45 * len(labels) + 1.2) as (fig, axes):
        ax = axes[0][0]
        y = np.arange(len(labels))[::-1]
        for yi, d, ci, bad in zip(y, deltas, cis, flagged, strict=True):
            color = HARM if bad else PALETTE[0]
            _interval(ax, ci, yi, color)
            if finite(d):
                ax.plot([d], [yi], "s", color=color, ms=6)
                ax.annotate(f"{d:+.2f}", (d, yi), xytext=(0, 7), textcoords="offset points",
                            ha="center", fontsize=8)
        ax.axvline(0, color="#333333", lw=0.8)
        ax.axvline(-threshold, color=PALETTE[5], ls="--", lw=1)
        ax.annotate(f"-{threshold:g}: regression threshold", (-threshold, len(labels) - 0.4),
                    fontsize=7, color=PALETTE[5], xytext=(3, 0), textcoords="offset points")
        ax.set_yticks(y, labels)
        ax.set_ylim(-0.7, len(labels) - 0.1)
        ax.set_xlabel("change in ensemble score, B - A (points, 95% CI)")
        return _single(fig, ax, key, title, grid="x")


def histograms(series: dict[str, Sequence[float]], *, title: str, bins: Sequence[float],
               xlabel: str) -> str:
    """Small multiples: one histogram per series (score distributions per rubric)."""
    key = slug(title)
    names = list(series)
    with small_multiples(key, names, 3.0, 2.2) as (fig, cells):
        for i, ax, name in cells:
            values = list(series[name])
            ax.hist(values, bins=list(bins), color=PALETTE[i % len(PALETTE)], edgecolor="white")
            ax.set_title(f"{name} (n={len(values)})", fontsize=9)
            ax.set_xlabel(xlabel, fontsize=8)
        return _titled(fig, key, title)


def judge_vs_ensemble(rubrics: Sequence[str], judges: dict[str, dict[str, float]],
                      ensemble: dict[str, float], *, title: str) -> str:
    """Grouped bars: each judge's mean per rubric beside the ensemble's mean."""
    key = slug(title)
    groups = [*judges.items(), ("ensemble", ensemble)]
    width = 0.8 / len(groups)
    with figure(key, 7.6, 3.2) as (fig, axes):
        ax = axes[0][0]
        x = np.arange(len(rubrics))
        for gi, (name, means) in enumerate(groups):
            values = [means.get(r, np.nan) for r in rubrics]
            color = "#222222" if name == "ensemble" else PALETTE[gi % len(PALETTE)]
            ax.bar(x + (gi - (len(groups) - 1) / 2) * width, values, width, label=name, color=color)
        ax.set_xticks(x, [r.replace("_", "\n") for r in rubrics], fontsize=8)
        ax.set_ylabel("mean score (0-5)")
        ax.set_ylim(0, 5)
        ax.legend(fontsize=7, ncols=min(4, len(groups)), loc="upper center",
                  bbox_to_anchor=(0.5, -0.22), frameon=False)
        return _single(fig, ax, key, title, grid="y")


def strip_plot(series: dict[str, Sequence[float]], *, title: str, xlabel: str,
               threshold: float | None = None) -> str:
    """One row of points per series (disagreement ranges per rubric), with an optional threshold."""
    key = slug(title)
    names = list(series)
    rng = np.random.default_rng(0)  # fixed jitter: the same data draws the same picture
    with figure(key, 6.4, 0.45 * len(names) + 1.1) as (fig, axes):
        ax = axes[0][0]
        for i, name in enumerate(names):
            values = np.asarray(series[name], dtype=float)
            y = len(names) - 1 - i + rng.uniform(-0.15, 0.15, size=values.size)
            ax.plot(values, y, "o", ms=3.5, alpha=0.55, color=PALETTE[i % len(PALETTE)])
        if threshold is not None:
            ax.axvline(threshold, color="#b03a48", ls="--", lw=1)
            ax.annotate("review threshold", (threshold, len(names) - 0.5), fontsize=7,
                        color="#b03a48", xytext=(3, 0), textcoords="offset points")
        ax.set_yticks(range(len(names))[::-1], names)
        ax.set_xlabel(xlabel)
        return _single(fig, ax, key, title, grid="x")


def forest_plot(rows: Sequence[dict[str, Any]], *, title: str, min_effect: float,
                margin: float | None = None) -> str:
    """Two panels per dimension row: the mean difference with its 95% CI against the equivalence
    margin (green dotted, when given), and the effect size against +/- the minimum effect (and
    the minimum detectable effect when known).

    A dimension's own CI decides, so it is drawn over everything; the noise floor is only a pair
    of small grey ticks under the row, never a band that could cover a flagged effect and read
    as "within noise". SVG ids name the parts: ``<key>-ci-<i>``, ``<key>-noise-<i>``,
    ``<key>-margin``.

    Each row: ``dimension``, ``mean``, ``ci`` (pair or None), ``noise`` (score units or None),
    ``effect``, ``effect_kind``, ``mde`` (or None), ``flagged``.
    """
    key = slug(title)
    with _row_panels(key, len(rows)) as (fig, left, right, y):
        for i, (yi, row) in enumerate(zip(y, rows, strict=True)):
            color = HARM if row["flagged"] else PALETTE[0]
            if finite(row.get("noise")):
                left.plot([-row["noise"], row["noise"]], [yi - 0.32] * 2, "|", color="#888888",
                          ms=6, gid=f"{key}-noise-{i}")
            _interval(left, row.get("ci"), yi, color, gid=f"{key}-ci-{i}")
            if finite(row.get("mean")):
                left.plot([row["mean"]], [yi], "s", color=color, ms=6)
            if finite(row.get("mde")):
                for sign in (-1, 1):
                    right.plot([sign * row["mde"]], [yi], "|", color="#777777", ms=12)
            if finite(row.get("effect")):
                right.plot([row["effect"]], [yi], "D", color=color, ms=6)
        left.axvline(0, color="#333333", lw=0.8)
        right.axvline(0, color="#333333", lw=0.8)
        for sign in (-1, 1):
            right.axvline(sign * min_effect, color=HARM, ls="--", lw=1)
            if margin is not None:
                left.axvline(sign * margin, color=PALETTE[2], ls=":", lw=1.6,
                             gid=f"{key}-margin{'-lo' if sign < 0 else ''}")
        _rows_axes((left, right), y, [f"{r['dimension']}{' *' if r['flagged'] else ''}"
                                      for r in rows])
        left.set_title("mean difference A - B, 95% CI", fontsize=9)
        left.set_xlabel("score points (" + (f"green: ±{margin:g} equivalence margin; "
                                            if margin is not None else "")
                        + "grey ticks: noise floor)", fontsize=8)
        right.set_title("effect size", fontsize=9)
        right.set_xlabel(f"red: ±{min_effect:g} minimum effect; grey: detectable", fontsize=8)
        return _titled(fig, key, title)


def probe_panel(rows: Sequence[dict[str, Any]], *, title: str, min_sensitivity: float,
                step: float = 1.0) -> str:
    """Two panels per probe row: the score drop (original - degraded) with its 95% CI against one
    scale step, and the sensitivity with its Clopper-Pearson 95% CI against the minimum.

    Each row: ``probe``, ``drop`` (or None), ``ci``, ``sensitivity`` (or None), ``sens_ci``,
    ``passed``.
    """
    key = slug(title)
    with _row_panels(key, len(rows)) as (fig, left, right, y):
        for yi, row in zip(y, rows, strict=True):
            color = PALETTE[2] if row["passed"] else HARM
            _interval(left, row.get("ci"), yi, color)
            if finite(row.get("drop")):
                left.plot([row["drop"]], [yi], "s", color=color, ms=6)
            _interval(right, row.get("sens_ci"), yi, color)
            if finite(row.get("sensitivity")):
                right.plot([row["sensitivity"]], [yi], "D", color=color, ms=6)
        left.axvline(0, color="#333333", lw=0.8)
        left.axvline(step, color="#777777", ls="--", lw=1)
        right.axvline(min_sensitivity, color=HARM, ls="--", lw=1)
        _rows_axes((left, right), y, [f"{r['probe']}{'' if r['passed'] else ' (fail)'}"
                                      for r in rows])
        right.set_xlim(-0.02, 1.02)
        left.set_title("score drop, original - degraded, 95% CI", fontsize=9)
        left.set_xlabel(f"score points (grey: one scale step, {step:g})", fontsize=8)
        right.set_title("sensitivity (pairs that dropped a step)", fontsize=9)
        right.set_xlabel(f"share, Clopper-Pearson 95% CI (red: minimum {min_sensitivity:g})",
                         fontsize=8)
        return _titled(fig, key, title)


def scatter_identity(panels: Mapping[str, tuple[Sequence[float], Sequence[float]]], *, title: str,
                     lo: float = 0.0, hi: float = 5.0) -> str:
    """Judge (y) against lawyer (x) per rubric with the identity line; a fixed small jitter."""
    key = slug(title)
    rng = np.random.default_rng(0)
    with _rubric_panels(key, panels, 3.0, 3.0) as (fig, cells):
        for i, ax, name, human, judge in cells:
            jx, jy = rng.uniform(-0.08, 0.08, (2, human.size))
            ax.plot([lo, hi], [lo, hi], color="#777777", ls="--", lw=1, label="identity")
            ax.plot(human + jx, judge + jy, "o", ms=3.5, alpha=0.5, color=PALETTE[i % len(PALETTE)])
            ax.set_xlim(lo - 0.3, hi + 0.3)
            ax.set_ylim(lo - 0.3, hi + 0.3)
            ax.set_aspect("equal")
            ax.set_title(f"{name} (n={human.size})", fontsize=9)
            ax.set_xlabel("lawyer", fontsize=8)
            ax.set_ylabel("judge", fontsize=8)
        return _titled(fig, key, title)


def bland_altman(panels: Mapping[str, tuple[Sequence[float], Sequence[float]]], *, title: str) -> str:
    """Bland-Altman per rubric: mean of (judge, lawyer) against judge - lawyer.

    The horizontal lines are drawing aids over the plotted points: the mean difference and
    mean +/- 1.96 SD (the conventional limits of agreement); the report's own divergence
    statistics (with their CI) are in the tables beside the chart.
    """
    key = slug(title)
    rng = np.random.default_rng(1)
    with _rubric_panels(key, panels, 3.0, 2.6) as (fig, cells):
        for i, ax, name, human, judge in cells:
            avg, diff = (judge + human) / 2, judge - human
            ax.plot(avg + rng.uniform(-0.05, 0.05, avg.size), diff, "o", ms=3.5, alpha=0.5,
                    color=PALETTE[i % len(PALETTE)])
            if diff.size > 1:
                bias, sd = float(np.mean(diff)), float(np.std(diff, ddof=1))
                ax.axhline(bias, color="#222222", lw=1)
                for lim in (bias - 1.96 * sd, bias + 1.96 * sd):
                    ax.axhline(lim, color="#b03a48", ls="--", lw=1)
            ax.axhline(0, color="#999999", lw=0.6)
            ax.set_title(f"{name}", fontsize=9)
            ax.set_xlabel("mean of judge and lawyer", fontsize=8)
            ax.set_ylabel("judge - lawyer", fontsize=8)
        return _titled(fig, key, title)


def confusion_matrix(cells: list[list[int]], *, title: str, rows: Sequence[str],
                     cols: Sequence[str], harmful: tuple[int, int] | None = None) -> str:
    """A 2x2 (or n x n) count matrix as a heat map with the counts written in.

    ``harmful`` (row, column) is the cell of the harmful error (the judge passed what the
    lawyers failed): it is drawn in red with a thick border and the word "harmful" (SVG id
    ``<key>-harmful``), never in the agreement cells' blue.
    """
    key = slug(title)
    data = np.asarray(cells, dtype=float)
    with figure(key, 3.4, 3.0) as (fig, axes):
        ax = axes[0][0]
        # pcolormesh stays vector in SVG (imshow would embed a raster image).
        ax.pcolormesh(np.arange(data.shape[1] + 1) - 0.5, np.arange(data.shape[0] + 1) - 0.5, data,
                      cmap="Blues", vmin=0, vmax=max(1.0, float(data.max())))
        if harmful is not None:
            hr, hc = harmful
            ax.add_patch(matplotlib.patches.Rectangle(
                (hc - 0.5, hr - 0.5), 1, 1, facecolor="#f6d5d9", edgecolor=HARM, lw=3,
                gid=f"{key}-harmful"))
            ax.text(hc, hr + 0.3, "harmful", ha="center", va="center", fontsize=8, color=HARM,
                    fontweight="bold")
        ax.invert_yaxis()
        ax.set_aspect("equal")
        for (r, c), v in np.ndenumerate(data):
            on_dark = v > data.max() / 2 and (r, c) != harmful
            ax.text(c, r, f"{int(v)}", ha="center", va="center", fontsize=12,
                    color=HARM if (r, c) == harmful else "white" if on_dark else "black")
        ax.set_xticks(range(len(cols)), cols)
        ax.set_yticks(range(len(rows)), rows)
        ax.set_title(title)
        ax.spines[:].set_visible(False)
        return to_svg(fig, key, title)


def trend_lines(series: dict[str, list[tuple[str, float | None, Sequence[float] | None]]], *,
                title: str, ylabel: str) -> str:
    """One line per series over quarters, with CI whiskers; points keep their quarter labels."""
    key = slug(title)
    quarters = sorted({q for pts in series.values() for q, _, _ in pts})
    index = {q: i for i, q in enumerate(quarters)}
    with figure(key, 6.8, 3.0) as (fig, axes):
        ax = axes[0][0]
        for si, (name, pts) in enumerate(series.items()):
            color = PALETTE[si % len(PALETTE)]
            shown = [(index[q], m, ci) for q, m, ci in pts if finite(m)]
            offset = (si - (len(series) - 1) / 2) * 0.04
            ax.plot([x + offset for x, _, _ in shown], [m for _, m, _ in shown], "o-", color=color,
                    label=name, ms=4)
            for x, _, ci in shown:
                if ci is not None:
                    ax.plot([x + offset] * 2, list(ci), color=color, lw=1)
        ax.axhline(0, color="#999999", lw=0.6)
        ax.set_xticks(range(len(quarters)), quarters)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
        return _single(fig, ax, key, title, grid="y")


def grouped_accuracy(biases: Sequence[str], modes: Sequence[str],
                     cells: dict[tuple[str, str], tuple[float | None, Sequence[float | None] | None]],
                     *, title: str) -> str:
    """Accuracy per bias (groups) and mode (bars) with 95% CI whiskers."""
    key = slug(title)
    width = 0.8 / max(1, len(modes))
    with figure(key, max(6.4, 1.1 * len(biases) + 2), 3.4) as (fig, axes):
        ax = axes[0][0]
        x = np.arange(len(biases))
        for mi, mode in enumerate(modes):
            xs = x + (mi - (len(modes) - 1) / 2) * width
            for xi, bias in zip(xs, biases, strict=True):
                acc, ci = cells.get((bias, mode), (None, None))
                if not finite(acc):
                    continue
                ax.bar([xi], [acc], width, color=PALETTE[mi % len(PALETTE)],
                       label=mode if bias == biases[0] else None)
                if ci is not None and all(finite(c) for c in ci):
                    ax.plot([xi, xi], list(ci), color="#222222", lw=1)
        ax.set_xticks(x, list(biases), fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy (95% CI)")
        ax.legend(fontsize=7, ncols=min(5, len(modes)), loc="upper center",
                  bbox_to_anchor=(0.5, -0.12), frameon=False)
        return _single(fig, ax, key, title, grid="y")
