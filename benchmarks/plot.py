#!/usr/bin/python3
"""Turns `tessera-bench --json` output into PNG plots.

    benchmarks/plot.py [-o OUTDIR] [--machine TEXT] [--only NAMES] FILE...

Each FILE holds the output of one or more runs (one JSON object per line; other lines, such as
launcher noise, are skipped). Per benchmark and PE count it writes OUTDIR/<bench>-<P>pe.png:

  put, signal, all_gather,  bandwidth and latency vs size: Tessera (per variant), the physical
  all_reduce,               limit (dashed) and the peer, MPI (dotted)
  reduce_scatter,
  all_to_all, broadcast
  ag_gemm, gemm_rs          time per shape: fused variants vs unfused (all-gather + GEMM, GEMM +
                            reduce-scatter) vs the GEMM alone vs the peer (MPI + GEMM)
  moe                       time per (tokens, hidden) case: Tessera vs limit vs peer for
                            dispatch, combine and both
  taxonomy                  OUTDIR/taxonomy-<P>pe.svg, a heat map: one column per op and shape,
                            one row per overlap pattern x direction x comm_blocks, automatic and
                            the GEMM alone; each cell the speedup over MPI-unfused (MPI collective
                            + the same GEMM), the best pattern of each column framed, refused
                            patterns grey. Written by hand: needs no matplotlib.
  split (rows with split_*  OUTDIR/split-<P>pe.png: where one call's time goes (a build with
  fields, any bench)        -DTESSERA_PROFILE_SPLIT=ON, benchmarks/split.hpp), a bar per op and
                            size of the automatic variant (MoE: dispatch_combine) split into
                            hand-off, copy, wait and the rest of the kernel, as % of the call.

Fields read (benchmarks/report.cpp): bench, variant, pes, bytes, time_us, limit_time_us,
peer_time_us, and m/n/k, tokens, hidden for the ops (taxonomy: op, chose, not_applicable too).
Uses Debian's python3-matplotlib (hence /usr/bin/python3 rather than whichever python3 is first on
PATH) for everything but taxonomy.
"""

import argparse
import collections
import json
import os
import sys

# matplotlib draws every plot but taxonomy's (hand-written SVG); it is imported when first needed,
# so a machine without it can still draw the taxonomy.
matplotlib = plt = None


def need_matplotlib():
    """Imports matplotlib, or exits saying how to install it."""
    global matplotlib, plt
    if plt is not None:
        return
    try:
        import matplotlib as mpl

        mpl.use("Agg")
        import matplotlib.pyplot as pyplot
        import matplotlib.ticker  # noqa: F401  (matplotlib.ticker is used through mpl)
    except ImportError:
        sys.exit("plot.py: needs matplotlib for the %s plots (Debian: apt-get install "
                 "python3-matplotlib; or pip install matplotlib); only taxonomy draws without it"
                 % ", ".join(SWEEP_BENCHES + FUSED_BENCHES + ("moe",)))
    matplotlib, plt = mpl, pyplot

SWEEP_BENCHES = ("put", "signal", "all_gather", "all_reduce", "reduce_scatter", "all_to_all",
                 "broadcast")
FUSED_BENCHES = ("ag_gemm", "gemm_rs")
# Small PNGs: docs/performance.md embeds them.
FIG_DPI = 90


def read_rows(paths):
    """The benchmark rows of every file, in order."""
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if "bench" in row and "time_us" in row:
                    rows.append(row)
    return rows


def size_label(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def gbps(nbytes, time_us):
    return nbytes / (time_us * 1e3) if time_us else None


def moved_bytes(row):
    """Bytes one call moves as the benchmark counts them: all_gather receives P buffers."""
    if row["bench"] == "all_gather":
        return row["bytes"] * row["pes"]
    return row["bytes"]


def series(rows, key):
    """(sizes, values) of rows sorted by size, skipping missing values."""
    points = sorted((r["bytes"], r) for r in rows if r.get(key) is not None)
    return [b for b, _ in points], [r for _, r in points]


def plot_sweep(bench, pes, rows, out, machine):
    need_matplotlib()
    by_variant = collections.OrderedDict()
    for r in rows:
        by_variant.setdefault(r["variant"], []).append(r)
    fig, (ax_bw, ax_lat) = plt.subplots(1, 2, figsize=(10, 3.8))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    seen_reference = {}
    for i, (variant, vrows) in enumerate(by_variant.items()):
        color = colors[i % len(colors)]
        sizes, pts = series(vrows, "time_us")
        ax_bw.plot(sizes, [gbps(moved_bytes(r), r["time_us"]) for r in pts], "o-", color=color,
                   label=f"tessera {variant}")
        ax_lat.plot(sizes, [r["time_us"] for r in pts], "o-", color=color,
                    label=f"tessera {variant}")
        # Limit and peer are measured per variant. A curve shared by every variant is drawn once
        # in black (limit) or gray (peer); one that differs gets the variant's colour.
        for key, style, name, shared_color in (("limit_time_us", "--", "limit", "black"),
                                               ("peer_time_us", ":", "peer (MPI)", "gray")):
            sizes_ref, ref = series(vrows, key)
            if not ref:
                continue
            curve = tuple(r[key] for r in ref)
            drawn = seen_reference.setdefault(key, [])
            if curve in drawn:
                continue
            drawn.append(curve)
            shared = all(tuple(r[key] for r in series(v, key)[1]) == curve
                         for v in by_variant.values())
            ref_color, label = (shared_color, name) if shared else (color, f"{name} {variant}")
            ax_bw.plot(sizes_ref, [gbps(moved_bytes(r), r[key]) for r in ref], style,
                       color=ref_color, label=label)
            ax_lat.plot(sizes_ref, [r[key] for r in ref], style, color=ref_color, label=label)
    for ax in (ax_bw, ax_lat):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=4))
        ax.xaxis.set_major_formatter(
            matplotlib.ticker.FuncFormatter(lambda x, _: size_label(int(round(x)))))
        ax.set_yscale("log")
        ax.set_xlabel("bytes" if bench in ("put", "signal") else "bytes per PE")
        ax.grid(True, which="major", alpha=0.3)
    ax_bw.set_ylabel("GB/s")
    ax_bw.set_title("bandwidth (higher is better)", fontsize=10)
    ax_lat.set_ylabel("µs per call")
    ax_lat.set_title("latency (lower is better)", fontsize=10)
    ax_lat.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{bench}, {pes} PEs — {machine}" if machine else f"{bench}, {pes} PEs",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=FIG_DPI)
    plt.close(fig)


def grouped_bars(ax, groups, bars, values, ylabel):
    """One cluster per group, one bar per name in `bars`; values[(group, bar)] in ms or None."""
    width = 0.8 / max(1, len(bars))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for j, bar in enumerate(bars):
        xs, hs = [], []
        for g, group in enumerate(groups):
            v = values.get((group, bar))
            if v is not None:
                xs.append(g + (j - (len(bars) - 1) / 2) * width)
                hs.append(v)
        ax.bar(xs, hs, width, label=bar, color=colors[j % len(colors)])
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", alpha=0.3)


def plot_fused(bench, pes, rows, out, machine):
    """Fused vs unfused per shape; the peer (MPI collective + GEMM) as one more bar."""
    need_matplotlib()
    groups, bars, values = [], [], {}
    for r in rows:
        shape = f"{r.get('m')}x{r.get('n')}x{r.get('k')}"
        if shape not in groups:
            groups.append(shape)
        if r["variant"] not in bars:
            bars.append(r["variant"])
        values[(shape, r["variant"])] = r["time_us"] / 1e3
        if r.get("peer_time_us") is not None:
            values[(shape, "peer (MPI)")] = r["peer_time_us"] / 1e3
    if any(bar == "peer (MPI)" for _, bar in values):
        bars.append("peer (MPI)")
    fig, ax = plt.subplots(figsize=(max(5, 1.8 * len(groups) + 3), 3.8))
    grouped_bars(ax, groups, bars, values, "ms per call (lower is better)")
    ax.set_xlabel("shape M x N x K")
    ax.legend(fontsize=7)
    title = f"{bench}: fused vs unfused, {pes} PEs"
    ax.set_title(f"{title} — {machine}" if machine else title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=FIG_DPI)
    plt.close(fig)


def plot_moe(bench, pes, rows, out, machine):
    """Per (tokens, hidden) case and variant: Tessera vs limit vs peer."""
    need_matplotlib()
    variants = []
    for r in rows:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    fig, axes = plt.subplots(1, len(variants), figsize=(3.6 * len(variants) + 1, 3.8),
                             squeeze=False)
    for ax, variant in zip(axes[0], variants):
        groups, values = [], {}
        for r in rows:
            if r["variant"] != variant:
                continue
            case = f"T={r.get('tokens')}\nH={r.get('hidden')}"
            groups.append(case)
            values[(case, "tessera")] = r["time_us"] / 1e3
            for key, name in (("limit_time_us", "limit"), ("peer_time_us", "peer (MPI)")):
                if r.get(key) is not None:
                    values[(case, name)] = r[key] / 1e3
        grouped_bars(ax, groups, ["tessera", "limit", "peer (MPI)"], values, "ms per call")
        ax.set_yscale("log")
        ax.set_title(variant, fontsize=10)
    axes[0][0].legend(fontsize=7)
    title = f"{bench}, {pes} PEs (lower is better)"
    fig.suptitle(f"{title} — {machine}" if machine else title, fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=FIG_DPI)
    plt.close(fig)


SPLIT_PARTS = (("split_handoff_us", "call, launch, hand-off"), ("split_copy_us", "copy"),
               ("split_wait_us", "wait"), ("split_rest_us", "rest of the kernel"))


def plot_split(pes, rows, out, machine):
    """A stacked bar per (bench, size) of the automatic variant: the mean call's time split."""
    need_matplotlib()
    labels, parts = [], {key: [] for key, _ in SPLIT_PARTS}
    for r in rows:
        if r["variant"] not in ("auto", "dispatch_combine"):
            continue
        total = sum(max(0.0, r.get(key, 0.0)) for key, _ in SPLIT_PARTS) or 1.0
        what = (f"moe T={r.get('tokens')} H={r.get('hidden')}" if r["bench"] == "moe" else
                f"{r['bench']} {size_label(r['bytes'])}")
        labels.append(f"{what} ({r['split_call_us']:.3g} µs)")
        for key, _ in SPLIT_PARTS:
            parts[key].append(100.0 * max(0.0, r.get(key, 0.0)) / total)
    if not labels:
        return False
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(labels) + 1.6))
    left = [0.0] * len(labels)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (key, name) in enumerate(SPLIT_PARTS):
        ax.barh(range(len(labels)), parts[key], left=left, color=colors[i % len(colors)],
                label=name)
        left = [a + b for a, b in zip(left, parts[key])]
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of the mean call (PE 0; the call's µs in brackets)")
    ax.legend(fontsize=7, loc="lower right")
    title = f"where a call's time goes, {pes} PEs"
    ax.set_title(f"{title} — {machine}" if machine else title, fontsize=10)
    ax.grid(True, axis="x", which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=FIG_DPI)
    plt.close(fig)
    return True


def shape_label(m, n, k):
    return f"{m}\u00b3" if m == n == k else f"{m}\u00d7{n}\u00d7{k}"


def speedup_color(x):
    """Diverging fill: red below 1 (slower than MPI-unfused), white at 1, green above; log scale,
    saturating at 4x either way."""
    import math

    t = max(-1.0, min(1.0, math.log(x, 4))) if x and x > 0 else 0.0
    if t >= 0:
        r, g, b = 255 - 190 * t, 255 - 80 * t, 255 - 170 * t
    else:
        r, g, b = 255 + 25 * t, 255 + 190 * t, 255 + 190 * t
    return "#%02x%02x%02x" % (int(r), int(g), int(b))


def svg_text(x, y, text, size=11, anchor="middle", weight="normal", fill="#000"):
    from xml.sax.saxutils import escape

    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}">{escape(str(text))}</text>')


def plot_taxonomy(bench, pes, rows, out, machine):
    """Heat map of speedup over MPI-unfused, written as SVG by hand."""
    columns, row_names, cells, best, chose, refused = [], [], {}, {}, {}, {}
    for r in rows:
        col = (r.get("op"), r.get("m"), r.get("n"), r.get("k"))
        if col not in columns:
            columns.append(col)
        v = r["variant"]
        if v == "summary":
            best[col] = r.get("best")
            for name in filter(None, (r.get("not_applicable") or "").split(",")):
                refused[(col, name)] = True
                if name not in row_names:
                    row_names.append(name)
            continue
        if v == "mpi_unfused":
            continue
        if v not in row_names:
            row_names.append(v)
        cells[(col, v)] = r
        if v == "automatic":
            chose[col] = r.get("chose", "")
    # The taxonomy's order, then automatic, then gemm_only: the bound every pattern is read against.
    order = ("bulk_synchronous", "producer_consumer", "workgroup_specialized", "fused_sequential",
             "automatic", "gemm_only")

    def row_key(name):
        pattern, _, rest = name.partition("/")
        direction, _, blocks = rest.partition("/")
        return (order.index(pattern) if pattern in order else len(order),
                ("push", "pull").index(direction) if direction in ("push", "pull") else -1,
                int(blocks[2:]) if blocks.startswith("cb") else 0)

    row_names.sort(key=row_key)
    label_w, cell_w, cell_h, top = 230, 92, 20, 78
    width = max(700, label_w + cell_w * len(columns) + 20)
    height = top + cell_h * (len(row_names) + 1) + 70
    out_lines = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                 f'font-family="DejaVu Sans, Arial, sans-serif">',
                 f'<rect width="{width}" height="{height}" fill="#fff"/>']
    title = f"tessera-bench taxonomy, {pes} PEs: speedup over MPI-unfused (MPI collective + GEMM)"
    out_lines.append(svg_text(10, 18, title, 13, "start", "bold"))
    if machine:
        out_lines.append(svg_text(10, 34, machine, 10, "start", fill="#444"))
    ops = []
    for col in columns:
        if col[0] not in ops:
            ops.append(col[0])
    # Per op (in order of appearance): the squares by size, then the other shapes, whatever order
    # the files came in.
    columns.sort(key=lambda c: (ops.index(c[0]), not (c[1] == c[2] == c[3]), c[1] * c[2] * c[3]))
    for op in ops:
        idx = [i for i, c in enumerate(columns) if c[0] == op]
        x0 = label_w + cell_w * idx[0]
        x1 = label_w + cell_w * (idx[-1] + 1)
        out_lines.append(svg_text((x0 + x1) / 2, top - 30, op, 12, weight="bold"))
        out_lines.append(f'<line x1="{x0 + 3}" y1="{top - 25}" x2="{x1 - 3}" y2="{top - 25}" '
                         'stroke="#888"/>')
    for i, col in enumerate(columns):
        out_lines.append(svg_text(label_w + cell_w * (i + 0.5), top - 8, shape_label(*col[1:]), 10))
    for j, name in enumerate(row_names):
        y = top + cell_h * j
        out_lines.append(svg_text(label_w - 6, y + 14, name, 10, "end",
                                  "bold" if name in ("automatic", "gemm_only") else "normal"))
        for i, col in enumerate(columns):
            x = label_w + cell_w * i
            r = cells.get((col, name))
            if r is None:
                text = "n/a" if refused.get((col, name)) else ""
                out_lines.append(f'<rect x="{x}" y="{y}" width="{cell_w}" height="{cell_h}" '
                                 'fill="#ddd" stroke="#fff"/>')
                out_lines.append(svg_text(x + cell_w / 2, y + 14, text, 9, fill="#777"))
                continue
            sp = r.get("speedup_vs_peer")
            out_lines.append(f'<rect x="{x}" y="{y}" width="{cell_w}" height="{cell_h}" '
                             f'fill="{speedup_color(sp)}" stroke="#fff"/>')
            out_lines.append(svg_text(x + cell_w / 2, y + 14,
                                      f"{sp:.2f}\u00d7" if sp is not None else "-", 10))
            if best.get(col) == name:
                out_lines.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cell_w - 2}" '
                                 f'height="{cell_h - 2}" fill="none" stroke="#000" '
                                 'stroke-width="2"/>')
    y = top + cell_h * len(row_names)
    out_lines.append(svg_text(label_w - 6, y + 14, "automatic chose", 10, "end", fill="#444"))
    abbrev = {"bulk_synchronous": "bulk", "producer_consumer": "prod-cons",
              "workgroup_specialized": "wg-spec", "fused_sequential": "fused-seq"}
    for i, col in enumerate(columns):
        pattern, _, direction = chose.get(col, "").partition("/")
        text = abbrev.get(pattern, pattern) + ("" if direction in ("", "automatic")
                                               else "/" + direction)
        out_lines.append(svg_text(label_w + cell_w * (i + 0.5), y + 14, text, 9, fill="#444"))
    notes = ["cell: MPI-unfused time / this time (above 1: faster than MPI); framed: the best "
             "explicit pattern of the column;",
             "grey n/a: the op refuses that pattern; gemm_only: the GEMM alone, no communication "
             "(what perfect overlap would reach)"]
    for n, note in enumerate(notes):
        out_lines.append(svg_text(10, y + 40 + 14 * n, note, 10, "start", fill="#444"))
    out_lines.append("</svg>")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(out_lines) + "\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="tessera-bench --json output files")
    parser.add_argument("-o", "--outdir", default=".", help="where the PNGs go (default: .)")
    parser.add_argument("--machine", default="", help="text added to every title")
    parser.add_argument("--only", default="",
                        help="comma-separated plots to draw (benchmark names, split); default all")
    args = parser.parse_args(argv)

    rows = read_rows(args.files)
    if not rows:
        sys.exit("plot.py: no tessera-bench JSON rows in " + ", ".join(args.files))
    os.makedirs(args.outdir, exist_ok=True)
    only = {name for name in args.only.split(",") if name}
    groups = collections.OrderedDict()
    for r in rows:
        if only and r["bench"] not in only:
            continue
        groups.setdefault((r["bench"], r["pes"]), []).append(r)
    for (bench, pes), brows in groups.items():
        out = os.path.join(args.outdir, f"{bench}-{pes}pe.png")
        if bench == "taxonomy":
            out = os.path.join(args.outdir, f"{bench}-{pes}pe.svg")
            plot_taxonomy(bench, pes, brows, out, args.machine)
        elif bench in SWEEP_BENCHES:
            plot_sweep(bench, pes, brows, out, args.machine)
        elif bench in FUSED_BENCHES:
            plot_fused(bench, pes, brows, out, args.machine)
        elif bench == "moe":
            plot_moe(bench, pes, brows, out, args.machine)
        else:
            print(f"plot.py: no plot for '{bench}' (skipped)", file=sys.stderr)
            continue
        print(f"{out}: {len(brows)} points")
    split = collections.OrderedDict()
    for r in rows:
        if "split_call_us" in r and (not only or "split" in only):
            split.setdefault(r["pes"], []).append(r)
    for pes, srows in split.items():
        out = os.path.join(args.outdir, f"split-{pes}pe.png")
        if plot_split(pes, srows, out, args.machine):
            print(f"{out}: {len(srows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
