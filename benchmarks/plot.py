#!/usr/bin/python3
"""Turns `tessera-bench --json` output into PNG plots.

    benchmarks/plot.py [-o OUTDIR] [--machine TEXT] FILE...

Each FILE holds the output of one or more runs (one JSON object per line; other lines, such as
launcher noise, are skipped). Per benchmark and PE count it writes OUTDIR/<bench>-<P>pe.png:

  put, signal, all_gather,  bandwidth and latency vs size: Tessera (per variant), the physical
  all_reduce                limit (dashed) and the peer, MPI (dotted)
  ag_gemm, gemm_rs          time per shape: fused variants vs unfused (all-gather + GEMM, GEMM +
                            reduce-scatter) vs the GEMM alone vs the peer (MPI + GEMM)
  moe                       time per (tokens, hidden) case: Tessera vs limit vs peer for
                            dispatch, combine and both

Fields read (benchmarks/report.cpp): bench, variant, pes, bytes, time_us, limit_time_us,
peer_time_us, and m/n/k, tokens, hidden for the ops. Uses Debian's python3-matplotlib (hence
/usr/bin/python3 rather than whichever python3 is first on PATH).
"""

import argparse
import collections
import json
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
except ImportError:
    sys.exit("plot.py: needs matplotlib (Debian: apt-get install python3-matplotlib)")

SWEEP_BENCHES = ("put", "signal", "all_gather", "all_reduce")
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
        ax.set_xlabel("bytes per PE" if bench in ("all_gather", "all_reduce") else "bytes")
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


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="tessera-bench --json output files")
    parser.add_argument("-o", "--outdir", default=".", help="where the PNGs go (default: .)")
    parser.add_argument("--machine", default="", help="text added to every title")
    args = parser.parse_args(argv)

    rows = read_rows(args.files)
    if not rows:
        sys.exit("plot.py: no tessera-bench JSON rows in " + ", ".join(args.files))
    os.makedirs(args.outdir, exist_ok=True)
    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault((r["bench"], r["pes"]), []).append(r)
    for (bench, pes), brows in groups.items():
        out = os.path.join(args.outdir, f"{bench}-{pes}pe.png")
        if bench in SWEEP_BENCHES:
            plot_sweep(bench, pes, brows, out, args.machine)
        elif bench in FUSED_BENCHES:
            plot_fused(bench, pes, brows, out, args.machine)
        elif bench == "moe":
            plot_moe(bench, pes, brows, out, args.machine)
        else:
            print(f"plot.py: no plot for '{bench}' (skipped)", file=sys.stderr)
            continue
        print(f"{out}: {len(brows)} points")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
