#!/usr/bin/python3
"""Scaling sweeps of kingman's algorithms beside fastcluster and scipy, whole process each.

Four sweeps, each run as separate processes that read a data CSV and write a linkage CSV
(a,b,height,size), timed together in one run:

  n          every algorithm and peer over its own list of sizes, at fixed d (--d)
  d          every algorithm and peer over --d-values, each at its fixed n (--fixed-n)
  particles  the SMC algorithms over --particle-values, each at its fixed n
  threads    every kingman algorithm with each of --threads-list, at --thread-n; the linkage
             files of all thread counts and repeats are compared byte for byte. 1 thread is
             also timed "beside a twin": while the same 1-thread command runs on the other
             CPU. On a machine whose CPUs share a core's arithmetic (hyperthreads, or vCPUs
             of one host core) a second busy thread slows the first whatever the program, so
             T threads' CPU time is compared with both: 1 thread alone (what T threads cost
             on this machine) and 1 thread beside a twin (the same load on the machine: the
             difference is the program's own cost of threading, e.g. waiting at joins).

Tools: kingman fit -a greedy-rate1 | greedy-minduration | greedy-maxprob | mgreedy (greedy) and
mpost2 | postpost | priorprior | race (SMC, -p particles), always with --covariance identity
--leaf-variance 0 --seed S --threads T; peers fastcluster and scipy average linkage, each a
/usr/bin/python3 process (numpy.loadtxt, linkage, write CSV; bench_common.PEER_CODE).

Data: by default drawn from the model with `kingman generate -n N -d D --seed S --data F`
(Kingman's coalescent, Brownian diffusion with Lambda = I); --data blobs uses the Gaussian
blobs of compare_linkage.py instead. One file per (n, d), shared by every tool.

Each measurement: wall time and CPU time (user + sys) of that one child (os.wait4) and its peak
RSS (GNU time's %M where installed, see bench_common.run_measured), the median over --repeats
runs (tools interleaved within each repeat). A point whose first run takes longer than
--long-run seconds is not repeated; after a run longer than --skip-after seconds, that tool's
larger sizes in the same sweep are skipped. Every output is checked to be a complete linkage.

Growth exponents: a least-squares fit of log(median wall time) on log(n) (and of CPU time;
likewise on log d and log particles) over the --fit-points largest sizes of each series.

Outputs (--out-dir, default bench/results), prefix --prefix (default scaling):
  scaling_runs.csv       every run
  scaling_summary.csv    medians per point, ratio to fastcluster where it ran at the same n, d
  scaling_exponents.csv  fitted exponents
  scaling_threads.csv    thread sweep: CPU-time overhead vs 1 thread alone and beside a
                         twin, wall speedup, byte-identical linkage across thread counts
  scaling_meta.csv       date, commit, machine, load averages before and after, command line
  scaling_n.png, scaling_d.png, scaling_particles.png, scaling_threads.png

Run with Debian's interpreter from the repository root:

  /usr/bin/python3 bench/scaling_sweep.py --kingman build/bin/kingman
"""
import argparse
import csv
import datetime
import hashlib
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from bench_common import (PEER_TOOLS, check_linkage, find_program, load_average,
                          machine_description, make_blobs, peer_command, run_measured)

GREEDY = ("greedy-rate1", "greedy-minduration", "greedy-maxprob", "mgreedy")
SMC = ("mpost2", "postpost", "priorprior", "race")
KINGMAN = GREEDY + SMC
SERIES = KINGMAN + PEER_TOOLS
SWEEPS = ("n", "d", "particles", "threads")

# Sizes of the n sweep. Greedy-Rate1 and the peers are O(n^2); the other greedy algorithms
# rescan the live pairs after each merge (O(n^3)); SMC costs grow with n and the particles:
# PostPost evaluates an incomplete GIG integral for every live pair at every step.
DEFAULT_N = {
    "greedy-rate1": [500, 1000, 2000, 5000, 10000],
    "fastcluster": [500, 1000, 2000, 5000, 10000],
    "scipy": [500, 1000, 2000, 5000, 10000],
    "greedy-minduration": [125, 250, 500, 1000],
    "greedy-maxprob": [125, 250, 500, 1000],
    "mgreedy": [125, 250, 500, 1000],
    "mpost2": [50, 100, 200, 400],
    "priorprior": [200, 400, 800, 1600, 2400],
    "race": [100, 200, 400, 800],
    "postpost": [16, 32, 64, 96, 128],
}
# n of the d and particle sweeps.
DEFAULT_FIXED_N = {
    "greedy-rate1": 2000, "fastcluster": 2000, "scipy": 2000,
    "greedy-minduration": 500, "greedy-maxprob": 500, "mgreedy": 500,
    "mpost2": 200, "priorprior": 200, "race": 200, "postpost": 32,
}
# n of the thread sweep (large enough that start-up is a small part of the time).
DEFAULT_THREAD_N = {
    "greedy-rate1": 5000,
    "greedy-minduration": 500, "greedy-maxprob": 500, "mgreedy": 500,
    "mpost2": 200, "priorprior": 800, "race": 200, "postpost": 48,
}

RUN_FIELDS = ["sweep", "series", "tool", "algorithm", "n", "d", "particles", "threads", "twin",
              "repeat", "wall_s", "cpu_s", "user_s", "sys_s", "peak_rss_mib", "rss_from",
              "status", "linkage_sha256", "error"]
SUMMARY_FIELDS = ["sweep", "series", "tool", "algorithm", "n", "d", "particles", "threads", "twin",
                  "runs", "median_wall_s", "min_wall_s", "median_cpu_s", "median_peak_rss_mib",
                  "wall_ratio_to_fastcluster", "linkage_sha256", "identical_across_runs",
                  "error"]
EXPONENT_FIELDS = ["sweep", "series", "variable", "metric", "x_min", "x_max", "points",
                   "exponent", "r2", "last_slope", "fixed"]
THREAD_FIELDS = ["series", "n", "d", "particles", "threads", "runs", "median_wall_s",
                 "median_cpu_s", "median_peak_rss_mib", "cpu_overhead_vs_1",
                 "cpu_overhead_vs_1_beside_twin", "median_cpu_s_1_beside_twin",
                 "cpu_overhead_paired_median", "cpu_overhead_paired_q1", "cpu_overhead_paired_q3",
                 "wall_speedup_vs_1",
                 "linkage_sha256", "identical_to_1_thread", "error"]


def parse_overrides(pairs, defaults, convert):
    """Applies --OPT NAME VALUE overrides (nargs=2, action=append) to a copy of defaults."""
    out = {k: (list(v) if isinstance(v, list) else v) for k, v in defaults.items()}
    for name, value in pairs or []:
        if name not in SERIES:
            sys.exit(f"scaling_sweep.py: unknown algorithm or tool '{name}' "
                     f"(one of {', '.join(SERIES)})")
        out[name] = convert(value)
    return out


def int_list(text):
    return [int(v) for v in text.replace(",", " ").split()]


class Sweeper:
    def __init__(self, args):
        self.args = args
        self.runs = []       # one dict per run
        self.summary = []    # one dict per point
        self.data_cache = {}
        os.makedirs(os.path.join(args.workdir, "data"), exist_ok=True)
        os.makedirs(os.path.join(args.workdir, "out"), exist_ok=True)
        os.makedirs(os.path.join(args.workdir, "logs"), exist_ok=True)

    # ---- data ------------------------------------------------------------------------------
    def data_file(self, n, d):
        key = (n, d)
        if key in self.data_cache:
            return self.data_cache[key]
        a = self.args
        path = os.path.join(a.workdir, "data", f"{a.data}_n{n}_d{d}_s{a.seed}.csv")
        if not os.path.exists(path):
            tmp = path + ".part"
            if a.data == "model":
                subprocess.run([a.kingman, "generate", "-n", str(n), "-d", str(d),
                                "--seed", str(a.seed), "--data", tmp], check=True,
                               stdout=subprocess.DEVNULL)
            else:
                np.savetxt(tmp, make_blobs(n, d, a.clusters, a.seed), delimiter=",",
                           fmt="%.9g")
            os.replace(tmp, path)
        self.data_cache[key] = path
        return path

    # ---- one run ---------------------------------------------------------------------------
    def command(self, series, data, out, particles, threads):
        a = self.args
        if series in PEER_TOOLS:
            return peer_command(a.python, series, data, out)
        cmd = [a.kingman, "fit", data, "-a", series, "--covariance", "identity",
               "--leaf-variance", "0", "--seed", str(a.fit_seed), "--threads", str(threads),
               "--linkage", out]
        if series in SMC:
            cmd += ["-p", str(particles)]
        return cmd

    def run(self, sweep, series, n, d, particles, threads, repeat, twin=False):
        """One measured run; with `twin`, while the same command runs beside it (unmeasured)."""
        a = self.args
        tag = f"{sweep}_{series}_n{n}_d{d}_p{particles}_t{threads}" + ("_twin" if twin else "")
        out = os.path.join(a.workdir, "out", f"{tag}_r{repeat}.csv")
        log = os.path.join(a.workdir, "logs", f"{tag}.log")
        if os.path.exists(out):
            os.remove(out)
        data = self.data_file(n, d)
        other = None
        if twin:
            other = subprocess.Popen(
                self.command(series, data, out + ".twin", particles, threads),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        m = run_measured(self.command(series, data, out, particles, threads), log, a.timeout)
        if other is not None:
            other.wait()
            if os.path.exists(out + ".twin"):
                os.remove(out + ".twin")
        error = ""
        digest = ""
        if m.timed_out:
            error = f"timed out after {a.timeout:g} s"
        elif m.status != 0:
            with open(log, errors="replace") as f:
                tail = f.read()[-300:].strip().replace("\n", " | ")
            error = f"exit status {m.status}: {tail}"
        else:
            error = check_linkage(out, n) or ""
            if not error:
                with open(out, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
        if os.path.exists(out) and not a.keep:
            os.remove(out)
        row = {"sweep": sweep, "series": series,
               "tool": series if series in PEER_TOOLS else "kingman",
               "algorithm": "average linkage" if series in PEER_TOOLS else series,
               "n": n, "d": d, "particles": particles if series in SMC else "",
               "threads": threads if series in KINGMAN else 1, "twin": twin, "repeat": repeat,
               "wall_s": m.wall_s, "cpu_s": m.cpu_s, "user_s": m.user_s, "sys_s": m.sys_s,
               "peak_rss_mib": m.peak_rss_mib, "rss_from": m.rss_from, "status": m.status,
               "linkage_sha256": digest, "error": error}
        self.runs.append(row)
        state = f"FAILED: {error}" if error else (f"{m.wall_s:.3f} s wall, {m.cpu_s:.3f} s CPU, "
                                                  f"{m.peak_rss_mib:.1f} MiB")
        print(f"[{sweep}] {series:18s} n={n:<6d} d={d:<4d} p={particles:<4d} t={threads}"
              f"{' beside a twin' if twin else ''} run {repeat + 1}: {state}", file=sys.stderr,
              flush=True)
        return row

    # ---- a group of points measured together ----------------------------------------------
    def measure(self, sweep, points):
        """points: list of (series, n, d, particles, threads[, twin]). Repeats interleave the
        points; returns the summary rows in the order of points."""
        a = self.args
        done = {p: [] for p in points}
        failed = set()
        for rep in range(a.repeats):
            for p in points:
                if p in failed:
                    continue
                if rep > 0 and done[p] and done[p][0]["wall_s"] > a.long_run:
                    continue
                row = self.run(sweep, *p[:5], rep, twin=len(p) > 5 and p[5])
                done[p].append(row)
                if row["error"]:
                    failed.add(p)
        rows = []
        for p in points:
            series, n, d, particles, threads = p[:5]
            twin = len(p) > 5 and p[5]
            good = [r for r in done[p] if not r["error"]]
            errors = [r["error"] for r in done[p] if r["error"]]
            digests = {r["linkage_sha256"] for r in good}
            rows.append({
                "sweep": sweep, "series": series,
                "tool": series if series in PEER_TOOLS else "kingman",
                "algorithm": "average linkage" if series in PEER_TOOLS else series,
                "n": n, "d": d, "particles": particles if series in SMC else "",
                "threads": threads if series in KINGMAN else 1, "twin": twin,
                "runs": len(good),
                "median_wall_s": statistics.median(r["wall_s"] for r in good) if good else None,
                "min_wall_s": min(r["wall_s"] for r in good) if good else None,
                "median_cpu_s": statistics.median(r["cpu_s"] for r in good) if good else None,
                "median_peak_rss_mib":
                    statistics.median(r["peak_rss_mib"] for r in good) if good else None,
                "wall_ratio_to_fastcluster": None,
                "linkage_sha256": sorted(digests)[0] if len(digests) == 1 else "",
                "identical_across_runs": (len(digests) == 1) if good else None,
                "error": errors[0] if errors else "",
            })
        self.summary.extend(rows)
        return rows

    def skipped(self, sweep, series, n, d, particles, threads, why):
        self.summary.append({
            "sweep": sweep, "series": series,
            "tool": series if series in PEER_TOOLS else "kingman",
            "algorithm": "average linkage" if series in PEER_TOOLS else series,
            "n": n, "d": d, "particles": particles if series in SMC else "",
            "threads": threads if series in KINGMAN else 1, "twin": False, "runs": 0,
            "median_wall_s": None, "min_wall_s": None, "median_cpu_s": None,
            "median_peak_rss_mib": None, "wall_ratio_to_fastcluster": None,
            "linkage_sha256": "", "identical_across_runs": None, "error": f"skipped: {why}"})
        print(f"[{sweep}] {series:18s} n={n} d={d} p={particles}: skipped ({why})",
              file=sys.stderr, flush=True)

    def ladder(self, sweep, plan):
        """plan: {series: [(x, point), ...]} with x ascending. Runs one rung (all series at the
        same x position in the union of the x values) at a time, so the tools at equal size are
        interleaved; after a run longer than --skip-after, that series' larger x are skipped."""
        a = self.args
        order = sorted({x for steps in plan.values() for x, _ in steps})
        stopped = {}
        for x in order:
            points = []
            for series, steps in plan.items():
                for sx, point in steps:
                    if sx != x:
                        continue
                    if series in stopped:
                        self.skipped(sweep, *point, why=stopped[series])
                    else:
                        points.append(point)
            for row in self.measure(sweep, points):
                if row["error"]:
                    stopped[row["series"]] = f"a smaller size failed ({row['error'][:60]})"
                elif row["min_wall_s"] > a.skip_after:
                    stopped[row["series"]] = (f"{x} took {row['min_wall_s']:.0f} s "
                                              f"> --skip-after {a.skip_after:g}")


def fit_exponent(xs, ys, points):
    """Least-squares slope of log y on log x over the `points` largest x; (slope, r2, used)."""
    pairs = sorted((x, y) for x, y in zip(xs, ys) if y is not None and y > 0)
    pairs = pairs[-points:]
    if len(pairs) < 2:
        return None
    lx = np.log([p[0] for p in pairs])
    ly = np.log([p[1] for p in pairs])
    slope, intercept = np.polyfit(lx, ly, 1)
    resid = ly - (slope * lx + intercept)
    ss_tot = float(np.sum((ly - ly.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid ** 2)) / ss_tot if ss_tot > 0 else 1.0
    return float(slope), float(intercept), r2, pairs


def write_csv(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            out = {}
            for k in fields:
                v = r.get(k)
                if v is None:
                    out[k] = ""
                elif isinstance(v, float):
                    out[k] = f"{v:.6g}"
                else:
                    out[k] = v
            w.writerow(out)


def style(series):
    """(colour, marker, line style) per series; peers in greys, dashed."""
    palette = {
        "greedy-rate1": "#1f77b4", "greedy-minduration": "#ff7f0e", "greedy-maxprob": "#2ca02c",
        "mgreedy": "#d62728", "mpost2": "#9467bd", "postpost": "#8c564b",
        "priorprior": "#e377c2", "race": "#17becf",
        "fastcluster": "#000000", "scipy": "#7f7f7f",
    }
    markers = {"fastcluster": "s", "scipy": "D"}
    return palette[series], markers.get(series, "o"), "--" if series in PEER_TOOLS else "-"


def plot_sweep(plt, path, rows, fits, variable, title, xlabel, with_rss=True):
    series_list = [s for s in SERIES if any(r["series"] == s for r in rows)]
    if not series_list:
        return False
    ncols = 2 if with_rss else 1
    fig, axes = plt.subplots(1, ncols, figsize=(11 if with_rss else 7, 5.6), squeeze=False)
    ax_t = axes[0][0]
    for s in series_list:
        pts = sorted((r[variable], r["median_wall_s"], r["median_peak_rss_mib"], r["n"])
                     for r in rows if r["series"] == s and r["median_wall_s"] is not None)
        if not pts:
            continue
        colour, marker, ls = style(s)
        label = s
        if variable != "n":
            label += f" (n={pts[0][3]})"
        fit = fits.get(s)
        if fit is not None:
            label += f", slope {fit[0]:.2f}"
        ax_t.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=colour,
                  linestyle=ls, linewidth=1.2, markersize=4, label=label)
        if fit is not None:
            slope, intercept, _, used = fit
            xs = np.array([used[0][0], used[-1][0]], dtype=float)
            ax_t.plot(xs, np.exp(intercept) * xs ** slope, color=colour, linestyle=":",
                      linewidth=2.5, alpha=0.6)
        if with_rss:
            axes[0][1].plot([p[0] for p in pts], [p[2] for p in pts], marker=marker,
                            color=colour, linestyle=ls, linewidth=1.2, markersize=4, label=s)
    ax_t.set_xscale("log")
    ax_t.set_yscale("log")
    ax_t.set_xlabel(xlabel)
    ax_t.set_ylabel("median wall time (s), whole process")
    ax_t.set_title(title, fontsize=10)
    ax_t.grid(True, which="both", alpha=0.25)
    if with_rss:
        ax = axes[0][1]
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("peak RSS (MiB)")
        ax.set_title("peak resident memory", fontsize=10)
        ax.grid(True, which="both", alpha=0.25)
    handles, labels = ax_t.get_legend_handles_labels()
    rows_needed = (len(labels) + 3) // 4
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7.5, frameon=False)
    fig.tight_layout(rect=(0, 0.045 * rows_needed + 0.01, 1, 1))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def plot_threads(plt, path, trows, threads_list):
    series_list = [s for s in KINGMAN if any(r["series"] == s for r in trows)]
    others = [t for t in threads_list if t != 1]
    if not series_list or not others:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    bars = [(t, key, label) for t in others
            for key, label in (("cpu_overhead_vs_1", f"{t} threads vs 1 thread alone (medians)"),
                               ("cpu_overhead_vs_1_beside_twin",
                                f"{t} threads vs 1 thread beside a twin (medians)"),
                               ("cpu_overhead_paired_median",
                                f"{t} threads vs 1 thread, paired by repeat (quartiles)"))]
    width = 0.8 / len(bars)
    xs = np.arange(len(series_list))
    for k, (t, key, label) in enumerate(bars):
        cpu, low, high = [], [], []
        for s in series_list:
            r = next((r for r in trows if r["series"] == s and r["threads"] == t), None)
            value = 100.0 * r[key] if r and r.get(key) is not None else np.nan
            cpu.append(value)
            paired = key == "cpu_overhead_paired_median" and r and r.get(key) is not None
            low.append(value - 100.0 * r["cpu_overhead_paired_q1"] if paired else 0.0)
            high.append(100.0 * r["cpu_overhead_paired_q3"] - value if paired else 0.0)
        errors = [low, high] if key == "cpu_overhead_paired_median" else None
        axes[0].bar(xs + k * width, cpu, width, label=label, yerr=errors, capsize=2)
    width_wall = 0.8 / len(others)
    for k, t in enumerate(others):
        wall = []
        for s in series_list:
            r = next((r for r in trows if r["series"] == s and r["threads"] == t), None)
            wall.append(r["wall_speedup_vs_1"]
                        if r and r["wall_speedup_vs_1"] is not None else np.nan)
        axes[1].bar(xs + k * width_wall, wall, width_wall, label=f"{t} threads")
    for ax, w, count in ((axes[0], width, len(bars)), (axes[1], width_wall, len(others))):
        ax.set_xticks(xs + w * (count - 1) / 2)
        ax.set_xticklabels(series_list, rotation=30, ha="right", fontsize=8)
        ax.grid(True, axis="y", alpha=0.25)
        ax.legend(fontsize=8)
    axes[0].axhline(0, color="black", linewidth=0.8)
    axes[0].set_ylabel("CPU time (user+sys) vs 1 thread (%)")
    axes[0].set_title("CPU-time overhead of T threads", fontsize=10)
    axes[1].axhline(1, color="black", linewidth=0.8)
    axes[1].set_ylabel("wall time of 1 thread / wall time of T")
    axes[1].set_title("wall-time speedup", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def paired_overhead(runs, series, threads):
    """CPU time of `threads` threads over that of 1 thread (alone) in the same repeat, minus 1:
    the median and quartiles over repeats. Pairing runs made a second apart cancels most of
    the drift of a shared host, which the ratio of two medians does not."""
    def cpu(t):
        return {r["repeat"]: r["cpu_s"] for r in runs
                if r["sweep"] == "threads" and r["series"] == series and r["threads"] == t
                and not r["twin"] and not r["error"]}
    one, many = cpu(1), cpu(threads)
    ratios = sorted(many[k] / one[k] - 1.0 for k in one if k in many and one[k] > 0)
    if not ratios:
        return {"cpu_overhead_paired_median": None, "cpu_overhead_paired_q1": None,
                "cpu_overhead_paired_q3": None}
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    return {"cpu_overhead_paired_median": statistics.median(ratios),
            "cpu_overhead_paired_q1": quartiles[0], "cpu_overhead_paired_q3": quartiles[2]}


def paired_cell(r):
    m = r["cpu_overhead_paired_median"] if r["threads"] != 1 else None
    if m is None:
        return "—"
    return (f"{100 * m:+.1f} % [{100 * r['cpu_overhead_paired_q1']:+.1f}, "
            f"{100 * r['cpu_overhead_paired_q3']:+.1f}]")


def cell(v, spec):
    return "—" if v is None or v == "" else format(v, spec)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Default sizes of the n sweep:\n" + "\n".join(
                                         f"  {k}: {' '.join(map(str, v))}"
                                         for k, v in DEFAULT_N.items()))
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--kingman", default="build/bin/kingman", help="the kingman program")
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="interpreter with numpy, scipy and fastcluster (the peers)")
    parser.add_argument("--sweeps", nargs="+", choices=SWEEPS, default=list(SWEEPS))
    parser.add_argument("--series", nargs="+", choices=SERIES, default=list(SERIES),
                        help="algorithms and peers to run (default: all)")
    parser.add_argument("--n", nargs=2, action="append", metavar=("NAME", "SIZES"),
                        help="sizes of the n sweep for one algorithm or peer, e.g. "
                             "--n race 100,200,400 (repeatable)")
    parser.add_argument("--fixed-n", nargs=2, action="append", metavar=("NAME", "N"),
                        help="n of the d and particle sweeps for one series (repeatable)")
    parser.add_argument("--thread-n", nargs=2, action="append", metavar=("NAME", "N"),
                        help="n of the thread sweep for one algorithm (repeatable)")
    parser.add_argument("--d", type=int, default=20, help="columns in the n, particle and "
                        "thread sweeps (default 20)")
    parser.add_argument("--d-values", type=int, nargs="+", default=[2, 5, 10, 20, 50, 100, 200])
    parser.add_argument("--particles", type=int, default=64,
                        help="SMC particles in the n, d and thread sweeps (default 64)")
    parser.add_argument("--particle-values", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    parser.add_argument("--threads-list", type=int, nargs="+", default=[1, 2],
                        help="thread counts of the thread sweep (default 1 2; 1 is always added)")
    parser.add_argument("--sweep-threads", type=int, default=1,
                        help="kingman --threads in the n, d and particle sweeps (default 1: the "
                             "peers are single-threaded)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--long-run", type=float, default=30.0,
                        help="a point whose first run takes longer (s) is not repeated")
    parser.add_argument("--skip-after", type=float, default=120.0,
                        help="after a run longer than this (s), skip the series' larger sizes")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--fit-points", type=int, default=3,
                        help="the exponent is fitted over this many largest sizes (default 3)")
    parser.add_argument("--data", choices=("model", "blobs"), default="model",
                        help="model: kingman generate (default); blobs: compare_linkage.py's "
                             "Gaussian blobs")
    parser.add_argument("--clusters", type=int, default=20, help="blobs only")
    parser.add_argument("--seed", type=int, default=1, help="data seed")
    parser.add_argument("--fit-seed", type=int, default=1, help="kingman fit --seed")
    parser.add_argument("--workdir", default="/tmp/sweep", help="data, outputs and logs")
    parser.add_argument("--out-dir", default=os.path.join(here, "results"),
                        help="CSV and PNG results (default bench/results)")
    parser.add_argument("--prefix", default="scaling", help="file name prefix of the results")
    parser.add_argument("--keep", action="store_true", help="keep the linkage outputs")
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args()

    k = find_program(args.kingman)
    if k is None:
        sys.exit(f"scaling_sweep.py: kingman program not found at '{args.kingman}' "
                 "(build it or pass --kingman)")
    args.kingman = k
    sizes = parse_overrides(args.n, DEFAULT_N, int_list)
    fixed_n = parse_overrides(args.fixed_n, DEFAULT_FIXED_N, int)
    thread_n = parse_overrides(args.thread_n, DEFAULT_THREAD_N, int)
    threads_list = sorted(set([1] + args.threads_list))
    os.makedirs(args.out_dir, exist_ok=True)
    os.makedirs(args.workdir, exist_ok=True)

    started = time.perf_counter()
    meta = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": " ".join([sys.executable] + sys.argv),
        "kingman": args.kingman,
        "kingman_version": "",
        "kingman_binary_sha256": "",
        "commit": "",
        "machine": machine_description(),
        "load_before": load_average(),
        "data": ("kingman generate (coalescent + Brownian, Lambda = I)" if args.data == "model"
                 else f"Gaussian blobs, {args.clusters} clusters"),
        "seed": args.seed, "repeats": args.repeats, "particles": args.particles,
        "sweep_threads": args.sweep_threads,
    }
    try:
        meta["kingman_version"] = subprocess.run([args.kingman, "--version"], capture_output=True,
                                                 text=True).stdout.strip()
        with open(args.kingman, "rb") as f:
            meta["kingman_binary_sha256"] = hashlib.sha256(f.read()).hexdigest()
    except OSError:
        pass
    try:
        meta["commit"] = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    print(f"scaling_sweep.py: load average {meta['load_before']}; kingman {args.kingman}",
          file=sys.stderr)

    sw = Sweeper(args)
    pick = [s for s in SERIES if s in args.series]

    if "n" in args.sweeps:
        plan = {s: [(n, (s, n, args.d, args.particles, args.sweep_threads))
                    for n in sorted(sizes[s])] for s in pick}
        sw.ladder("n", plan)
    if "d" in args.sweeps:
        plan = {s: [(d, (s, fixed_n[s], d, args.particles, args.sweep_threads))
                    for d in sorted(args.d_values)] for s in pick}
        sw.ladder("d", plan)
    if "particles" in args.sweeps:
        plan = {s: [(p, (s, fixed_n[s], args.d, p, args.sweep_threads))
                    for p in sorted(args.particle_values)] for s in pick if s in SMC}
        sw.ladder("particles", plan)
    thread_rows = []
    if "threads" in args.sweeps:
        points = [(s, thread_n[s], args.d, args.particles, t, twin)
                  for s in pick if s in KINGMAN
                  for t, twin in [(t, False) for t in threads_list] + [(1, True)]]
        rows = sw.measure("threads", points)
        for s in [s for s in pick if s in KINGMAN]:
            mine = [r for r in rows if r["series"] == s and not r["twin"]]
            base = next(r for r in mine if r["threads"] == 1)
            loaded = next(r for r in rows if r["series"] == s and r["twin"])
            base_digests = {r["linkage_sha256"] for r in sw.runs
                            if r["sweep"] == "threads" and r["series"] == s
                            and r["threads"] == 1 and not r["error"]}
            for r in mine:
                digests = {x["linkage_sha256"] for x in sw.runs
                           if x["sweep"] == "threads" and x["series"] == s
                           and x["threads"] == r["threads"] and not x["error"]}
                ok = r["median_wall_s"] is not None and base["median_wall_s"] is not None
                same = (len(digests | base_digests) == 1) if (digests and base_digests) else None
                thread_rows.append({
                    "series": s, "n": r["n"], "d": r["d"], "particles": r["particles"],
                    "threads": r["threads"], "runs": r["runs"],
                    "median_wall_s": r["median_wall_s"], "median_cpu_s": r["median_cpu_s"],
                    "median_peak_rss_mib": r["median_peak_rss_mib"],
                    "cpu_overhead_vs_1": (r["median_cpu_s"] / base["median_cpu_s"] - 1.0)
                    if ok and base["median_cpu_s"] > 0 else None,
                    "cpu_overhead_vs_1_beside_twin":
                    (r["median_cpu_s"] / loaded["median_cpu_s"] - 1.0)
                    if ok and loaded["median_cpu_s"] else None,
                    "median_cpu_s_1_beside_twin": loaded["median_cpu_s"],
                    **paired_overhead(sw.runs, s, r["threads"]),
                    "wall_speedup_vs_1": (base["median_wall_s"] / r["median_wall_s"])
                    if ok else None,
                    "linkage_sha256": next(iter(digests)) if len(digests) == 1 else "",
                    "identical_to_1_thread": same,
                    "error": r["error"],
                })
                if r["threads"] != 1:
                    r["identical_across_runs"] = same

    # ratio of each median to fastcluster's at the same sweep, n and d
    fc = {(r["sweep"], r["n"], r["d"]): r["median_wall_s"] for r in sw.summary
          if r["series"] == "fastcluster" and r["median_wall_s"] is not None}
    for r in sw.summary:
        f = fc.get((r["sweep"], r["n"], r["d"]))
        if f and r["median_wall_s"] is not None:
            r["wall_ratio_to_fastcluster"] = r["median_wall_s"] / f

    # growth exponents
    exponents = []
    fits_for_plot = {"n": {}, "d": {}, "particles": {}}
    for sweep, variable in (("n", "n"), ("d", "d"), ("particles", "particles")):
        for s in SERIES:
            rows = [r for r in sw.summary if r["sweep"] == sweep and r["series"] == s]
            if not rows:
                continue
            for metric, key in (("wall", "median_wall_s"), ("cpu", "median_cpu_s")):
                fit = fit_exponent([r[variable] for r in rows], [r[key] for r in rows],
                                   args.fit_points)
                if fit is None:
                    continue
                slope, intercept, r2, used = fit
                (x0, y0), (x1, y1) = used[-2], used[-1]
                last = float(np.log(y1 / y0) / np.log(x1 / x0))
                if metric == "wall":
                    fits_for_plot[sweep][s] = fit
                fixed = {"n": f"d={args.d}" + (f", p={args.particles}" if s in SMC else ""),
                         "d": f"n={fixed_n[s]}" + (f", p={args.particles}" if s in SMC else ""),
                         "particles": f"n={fixed_n[s]}, d={args.d}"}[sweep]
                exponents.append({"sweep": sweep, "series": s, "variable": variable,
                                  "metric": metric, "x_min": used[0][0], "x_max": used[-1][0],
                                  "points": len(used), "exponent": slope, "r2": r2,
                                  "last_slope": last,
                                  "fixed": fixed})

    meta["load_after"] = load_average()
    meta["elapsed_s"] = f"{time.perf_counter() - started:.0f}"
    p = os.path.join(args.out_dir, args.prefix)
    write_csv(p + "_runs.csv", RUN_FIELDS, sw.runs)
    write_csv(p + "_summary.csv", SUMMARY_FIELDS, sw.summary)
    write_csv(p + "_exponents.csv", EXPONENT_FIELDS, exponents)
    if thread_rows:
        write_csv(p + "_threads.csv", THREAD_FIELDS, thread_rows)
    with open(p + "_meta.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["key", "value"])
        for key, v in meta.items():
            w.writerow([key, v])

    written = [p + s for s in ("_runs.csv", "_summary.csv", "_exponents.csv", "_meta.csv")]
    if thread_rows:
        written.append(p + "_threads.csv")
    if not args.no_plots:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        for sweep, xlabel, title in (
                ("n", "n (rows)", f"time vs n (d={args.d}, SMC {args.particles} particles, "
                                  f"{args.sweep_threads} thread)"),
                ("d", "d (columns)", f"time vs d (SMC {args.particles} particles)"),
                ("particles", "particles", f"SMC time vs particles (d={args.d})")):
            rows = [r for r in sw.summary if r["sweep"] == sweep]
            if plot_sweep(plt, f"{p}_{sweep}.png", rows, fits_for_plot[sweep], sweep, title,
                          xlabel):
                written.append(f"{p}_{sweep}.png")
        if thread_rows and plot_threads(plt, p + "_threads.png", thread_rows, threads_list):
            written.append(p + "_threads.png")

    # ---- report ----------------------------------------------------------------------------
    print(f"\nMachine: {meta['machine']}; load average before {meta['load_before']}, after "
          f"{meta['load_after']}; {meta['elapsed_s']} s in all")
    print(f"Data: {meta['data']}, seed {args.seed}; median of {args.repeats} runs; whole "
          f"process (read CSV, cluster, write linkage)\n")
    for sweep, variable in (("n", "n"), ("d", "d"), ("particles", "particles")):
        rows = [r for r in sw.summary if r["sweep"] == sweep]
        if not rows:
            continue
        print(f"### {sweep} sweep\n")
        print("| series | n | d | particles | median wall (s) | median CPU (s) | peak RSS (MiB) "
              "| time / fastcluster |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            name = r["series"] + (f" ({r['error']})" if r["error"] else "")
            print(f"| {name} | {r['n']} | {r['d']} | {r['particles']} | "
                  f"{cell(r['median_wall_s'], '.3f')} | {cell(r['median_cpu_s'], '.3f')} | "
                  f"{cell(r['median_peak_rss_mib'], '.1f')} | "
                  f"{cell(r['wall_ratio_to_fastcluster'], '.2f')} |")
        print()
    if exponents:
        print("### growth exponents (least squares on log-log, largest sizes)\n")
        print("| sweep | series | metric | range | points | exponent | r² | slope of last two |")
        print("|---|---|---|---|---:|---:|---:|---:|")
        for e in exponents:
            print(f"| {e['sweep']} | {e['series']} | {e['metric']} | {e['x_min']}–{e['x_max']} "
                  f"| {e['points']} | {e['exponent']:.2f} | {e['r2']:.3f} "
                  f"| {e['last_slope']:.2f} |")
        print()
    if thread_rows:
        print("### threads\n")
        print("| series | n | threads | median wall (s) | median CPU (s) | CPU vs 1 thread "
              "alone | CPU vs 1 thread beside a twin | CPU vs 1 thread, paired by repeat "
              "(median [quartiles]) | wall speedup | identical linkage |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in thread_rows:
            ov = r["cpu_overhead_vs_1"]
            ovt = r["cpu_overhead_vs_1_beside_twin"] if r["threads"] != 1 else None
            same = r["identical_to_1_thread"]
            print(f"| {r['series']} | {r['n']} | {r['threads']} | "
                  f"{cell(r['median_wall_s'], '.3f')} | {cell(r['median_cpu_s'], '.3f')} | "
                  f"{'—' if ov is None else f'{100 * ov:+.1f} %'} | "
                  f"{'—' if ovt is None else f'{100 * ovt:+.1f} %'} | "
                  f"{paired_cell(r)} | "
                  f"{cell(r['wall_speedup_vs_1'], '.2f')} | "
                  f"{'—' if same is None else ('yes' if same else 'NO')} |")
        print()
    print("Wrote:\n  " + "\n  ".join(written))
    bad = [r for r in sw.summary if r["error"] and not r["error"].startswith("skipped")]
    differs = [r for r in thread_rows if r["identical_to_1_thread"] is False]
    if differs:
        print("linkage differs between thread counts: "
              + ", ".join(f"{r['series']} t={r['threads']}" for r in differs), file=sys.stderr)
    return 1 if (bad or differs) else 0


if __name__ == "__main__":
    sys.exit(main())
