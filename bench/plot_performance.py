#!/usr/bin/python3
"""docs/performance.png from the rows that bench/gpu_bench.py --json-out wrote.

One line per row: on the left the percent of the copy ceiling reached (the fastest the row's bytes can move), on
the right the speed-up over PyTorch (log scale). Each row's own target is drawn on the panel it applies to, and
its bars are green where the row meets its target, red where not. Needs matplotlib (Debian: python3-matplotlib).

    python3 bench/plot_performance.py rows.json -o docs/performance.png [--title "..."]
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MET, MISSED = "#2e8b57", "#c0392b"
TARGET = "black"


def label(row):
    return f"{row['op']}  {row['shape']}  {row['dtype']}"


def ceiling_target(row):
    """The row's target is on the copy-ceiling panel (memory-bound, or a ratio the ceiling cannot allow)."""
    return row["target_ratio"] is None or "of ceiling" in row["target"].split(",")[0]


def draw_percent(ax, rows, y):
    colors = [MET if r["met"] else MISSED for r in rows]
    top = max(125, max(r["percent_of_ceiling"] for r in rows) + 15)
    ax.barh(y, [r["percent_of_ceiling"] for r in rows], color=colors, height=0.7)
    for yi, r in zip(y, rows):
        ax.text(min(r["percent_of_ceiling"], top - 12) + 1, yi, f"{r['percent_of_ceiling']:.0f}%", va="center",
                fontsize=7)
        if ceiling_target(r):
            ax.plot([90, 90], [yi - 0.45, yi + 0.45], color=TARGET, linewidth=2)
    ax.axvline(100, color="grey", linestyle="--", linewidth=1)
    ax.set_xlim(0, top)
    ax.set_xlabel("% of the copy ceiling (bound = minimum bytes at the ceiling)")


def draw_speed_up(ax, rows, y):
    colors = [MET if r["met"] else MISSED for r in rows]
    low = min(0.25, min(r["speed_up"] for r in rows) / 1.5)
    high = max(10.0, max(r["speed_up"] for r in rows) * 2.0)
    ax.barh(y, [r["speed_up"] - low for r in rows], color=colors, height=0.7, left=low)  # bars from the axis
    for yi, r in zip(y, rows):
        ax.text(r["speed_up"] * 1.05, yi, f"{r['speed_up']:.2f}x", va="center", fontsize=7)
        wanted = 1.0 if ceiling_target(r) else r["target_ratio"]
        ax.plot([wanted, wanted], [yi - 0.45, yi + 0.45], color=TARGET, linewidth=2)
    ax.axvline(1.0, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ticks = [t for t in (0.25, 0.5, 1, 2, 3, 4, 6, 10, 20, 50, 100) if low <= t <= high]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:g}x" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("speed-up over PyTorch (log scale)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json")
    parser.add_argument("-o", "--output", default="docs/performance.png")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    with open(args.json) as f:
        run = json.load(f)
    rows = run["rows"]
    y = list(range(len(rows)))[::-1]  # first row at the top

    fig, (left, right) = plt.subplots(1, 2, sharey=True, figsize=(15, 1.2 + 0.27 * len(rows)),
                                      gridspec_kw={"width_ratios": [1, 1]})
    draw_percent(left, rows, y)
    draw_speed_up(right, rows, y)
    left.set_yticks(y)
    left.set_yticklabels([label(r) for r in rows], fontsize=8)
    left.set_ylim(-0.7, len(rows) - 0.3)
    for ax in (left, right):
        ax.grid(axis="x", alpha=0.3)
        for above, below in zip(rows, rows[1:]):  # a rule between groups of rows
            if above["group"] != below["group"]:
                ax.axhline(y[rows.index(below)] + 0.5, color="grey", linewidth=0.6)
    met = sum(r["met"] for r in rows)
    title = args.title or f"dmlgrad on {run['device']}: copy ceiling {run['ceiling_gbps']:.0f} GB/s"
    fig.suptitle(f"{title}; {met} of {len(rows)} rows meet their target\n"
                 "green: target met, red: not; black tick: the row's target (90% of the ceiling, or N x PyTorch; "
                 "1x PyTorch for every row)", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


if __name__ == "__main__":
    main()
