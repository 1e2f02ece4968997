#!/usr/bin/python3
"""The regenerative race beside MPost2 as n grows: time, peak memory, ESS and evidence spread.

For each n, draws one data set from the model (`kingman generate -n N -d D --seed DATA_SEED`,
Kingman's coalescent with Brownian diffusion, Lambda = I) and, for each seed, times each
algorithm as one whole process:

  kingman fit data.csv -a ALG -p 64 --covariance identity --seed SEED --threads 1
      --json out.json --linkage out.csv            (ALG = race | mpost2)

Each run records wall time, CPU time (user + sys of that child, os.wait4), peak RSS (GNU
time's %M where installed; see bench_common.run_measured), the fit time kingman reports,
log Z-hat (the log of the SMC evidence estimate), the ESS after each step's reweighting and the
steps after which the particles were resampled (from the JSON report). Every linkage output
is checked to be complete.

Per algorithm and n the summary gives the median wall and CPU time, seconds per particle,
peak RSS, the mean, standard deviation and variance of log Z-hat over seeds and the standard
deviation of Z-hat / mean(Z-hat) (at most sqrt(seeds)), the smallest and mean ESS / N and
the number of resampling steps. The growth exponent of the time per particle is the
least-squares slope of log(seconds per particle) on log(n) over the --fit-points largest
sizes of each algorithm; CPU seconds per particle is also fitted as a n^2 + b n (race) and
a n^3 + b n^2 (mpost2) over every size.

MPost2 costs O(n^3) per particle (every state sums every live cluster's row of pair weights
at every step): at n = 5000, 64 particles took 682 s at commit 8d3c2da, so its default sizes
stop at 2000 (--mpost2-n to add more). Sizes above --single-seed-above run the first seed
only.

Outputs (--out-dir, default bench/results; prefix --prefix, default race_vs_mpost2):
  race_vs_mpost2.csv          one row per run
  race_vs_mpost2_summary.csv  one row per algorithm and n
  race_vs_mpost2_ess.csv      ESS / N after every step, first seed of each algorithm and n
  race_vs_mpost2_meta.csv     date, commit, binary, machine, load averages, command, exponents
  race_vs_mpost2.png          time per particle, peak RSS, ESS / N per step, spread of log Z-hat

Run with Debian's interpreter from the repository root (about 4 minutes with the defaults on
2 vCPUs):

  /usr/bin/python3 bench/race_vs_mpost2.py --kingman build/bin/kingman
  /usr/bin/python3 bench/race_vs_mpost2.py --replot     # plot and tables from the CSVs again
"""
import argparse
import csv
import datetime
import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from bench_common import (check_linkage, find_program, load_average, machine_description,
                          run_measured)
from scaling_sweep import cell, fit_exponent, write_csv

ALGORITHMS = ("race", "mpost2")
# Leading power of n in the cost per particle: the race's rows scan the live clusters at each
# of n - 1 steps (n^2); MPost2 rescores every live pair at each step (n^3).
LEADING = {"race": 2, "mpost2": 3}
COLOURS = {"race": "#17becf", "mpost2": "#9467bd"}  # as in scaling_sweep.py's plots
MPOST2_COST_NOTE = ("mpost2 is O(n^3) per particle: n = 5000 with 64 particles took 682 s "
                     "(bench/RESULTS.md)")

RUN_FIELDS = ["algorithm", "n", "d", "particles", "seed", "data_seed", "threads", "wall_s",
              "cpu_s", "user_s", "sys_s", "fit_s", "wall_per_particle_s", "cpu_per_particle_s",
              "peak_rss_mib", "rss_from", "log_evidence", "steps", "min_ess_frac",
              "mean_ess_frac", "median_ess_frac", "resamplings", "load1_before", "status",
              "error"]
SUMMARY_FIELDS = ["algorithm", "n", "d", "particles", "runs", "seeds", "median_wall_s",
                  "median_cpu_s", "median_fit_s", "wall_per_particle_s", "cpu_per_particle_s",
                  "cpu_per_particle_over_leading_ns", "median_peak_rss_mib", "max_peak_rss_mib", "log_z_mean", "log_z_sd",
                  "log_z_var", "z_rel_sd", "min_ess_frac", "mean_ess_frac",
                  "mean_resamplings", "errors"]
ESS_FIELDS = ["algorithm", "n", "seed", "step", "ess_frac", "resampled"]
FLOAT_RUN = {"wall_s", "cpu_s", "user_s", "sys_s", "fit_s", "wall_per_particle_s",
             "cpu_per_particle_s", "peak_rss_mib", "log_evidence", "min_ess_frac",
             "mean_ess_frac", "median_ess_frac", "load1_before"}
INT_RUN = {"n", "d", "particles", "seed", "data_seed", "threads", "steps", "resamplings",
           "status"}


def precise(rows, keys):
    """Copies of rows with `keys` as 12-digit strings: write_csv keeps 6 significant digits,
    too few for a log evidence in the hundred thousands."""
    return [{k: (f"{v:.12g}" if k in keys and isinstance(v, float) else v)
             for k, v in r.items()} for r in rows]


def int_list(text):
    return [int(v) for v in text.replace(",", " ").split()]


def log_mean_exp(values):
    m = max(values)
    return m + math.log(sum(math.exp(v - m) for v in values) / len(values))


def summarize(runs, d, particles):
    """One summary row per (algorithm, n) over the successful runs."""
    out = []
    keys = sorted({(r["algorithm"], r["n"]) for r in runs},
                  key=lambda k: (ALGORITHMS.index(k[0]) if k[0] in ALGORITHMS else 9, k[1]))
    for alg, n in keys:
        group = [r for r in runs if r["algorithm"] == alg and r["n"] == n]
        ok = [r for r in group if not r["error"]]
        row = {"algorithm": alg, "n": n, "d": d, "particles": particles, "runs": len(ok),
               "seeds": " ".join(str(r["seed"]) for r in ok),
               "errors": "; ".join(f"seed {r['seed']}: {r['error']}" for r in group
                                   if r["error"])}
        if ok:
            med = lambda k: statistics.median(r[k] for r in ok)  # noqa: E731
            row.update(median_wall_s=med("wall_s"), median_cpu_s=med("cpu_s"),
                       median_fit_s=med("fit_s"),
                       wall_per_particle_s=med("wall_s") / particles,
                       cpu_per_particle_s=med("cpu_s") / particles,
                       # CPU seconds per particle / n^p (p = LEADING): flat once the leading
                       # term dominates
                       cpu_per_particle_over_leading_ns=(
                           1e9 * med("cpu_s") / particles / n ** LEADING.get(alg, 2)),
                       median_peak_rss_mib=med("peak_rss_mib"),
                       max_peak_rss_mib=max(r["peak_rss_mib"] for r in ok),
                       min_ess_frac=min(r["min_ess_frac"] for r in ok),
                       mean_ess_frac=statistics.fmean(r["mean_ess_frac"] for r in ok),
                       mean_resamplings=statistics.fmean(r["resamplings"] for r in ok))
            logz = [r["log_evidence"] for r in ok]
            row["log_z_mean"] = statistics.fmean(logz)
            if len(logz) >= 2:
                row["log_z_sd"] = statistics.stdev(logz)
                row["log_z_var"] = statistics.variance(logz)
                # Z-hat_i / mean(Z-hat), computed in logs: Z-hat itself overflows a double.
                lme = log_mean_exp(logz)
                row["z_rel_sd"] = statistics.stdev(math.exp(v - lme) for v in logz)
        out.append(row)
    return out


def exponents(summary, fit_points):
    """{(algorithm, metric): dict} with the fitted slope of seconds per particle on n."""
    out = {}
    for alg in ALGORITHMS:
        rows = sorted((r for r in summary if r["algorithm"] == alg
                       and r.get("wall_per_particle_s") is not None), key=lambda r: r["n"])
        for metric in ("wall_per_particle_s", "cpu_per_particle_s"):
            xs = [r["n"] for r in rows]
            ys = [r[metric] for r in rows]
            fit = fit_exponent(xs, ys, fit_points)
            if fit is None:
                continue
            slope, intercept, r2, used = fit
            (x1, y1), (x2, y2) = used[-2], used[-1]
            out[(alg, metric)] = {
                "slope": slope, "intercept": intercept, "r2": r2, "used": used,
                "last_slope": math.log(y2 / y1) / math.log(x2 / x1),
            }
    return out


def two_term_fits(summary):
    """Seconds per particle (CPU) = a n^p + b n^(p-1) with p = LEADING[alg], least squares on
    the relative error over every size; {alg: dict(a, b, p, crossover n = b / a,
    max_rel_err, leading_share at the largest n)}."""
    out = {}
    for alg, p in LEADING.items():
        rows = [r for r in summary if r["algorithm"] == alg
                and r.get("cpu_per_particle_s") is not None]
        if len(rows) < 3:
            continue
        n = np.array([r["n"] for r in rows], dtype=float)
        y = np.array([r["cpu_per_particle_s"] for r in rows])
        basis = np.stack([n ** p, n ** (p - 1)], axis=1)
        (a, b), *_ = np.linalg.lstsq(basis / y[:, None], np.ones_like(y), rcond=None)
        model = basis @ np.array([a, b])
        top = int(np.argmax(n))
        out[alg] = {"a": float(a), "b": float(b), "p": p,
                    "crossover": float(b / a) if a > 0 else None,
                    "max_rel_err": float(np.max(np.abs(model / y - 1))),
                    "leading_share": float(a * n[top] ** p / model[top])}
    return out


def plot(path, runs, summary, ess_rows, fits, models, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(12, 9.2))
    outer = fig.add_gridspec(2, 2, hspace=0.32, wspace=0.24)
    ax_t = fig.add_subplot(outer[0, 0])
    ax_m = fig.add_subplot(outer[0, 1])
    inner = outer[1, 0].subgridspec(2, 1, hspace=0.08)
    ax_e = [fig.add_subplot(inner[0, 0])]
    ax_e.append(fig.add_subplot(inner[1, 0], sharex=ax_e[0]))
    ax_z = fig.add_subplot(outer[1, 1])
    all_n = sorted({r["n"] for r in summary})

    # (a) seconds per particle, log-log, with n^2 and n^3 references and the fits.
    for alg in ALGORITHMS:
        rows = sorted((r for r in summary if r["algorithm"] == alg
                       and r.get("wall_per_particle_s") is not None), key=lambda r: r["n"])
        if not rows:
            continue
        xs = [r["n"] for r in rows]
        label = f"{alg}, wall"
        fw = fits.get((alg, "wall_per_particle_s"))
        if fw:
            label += f" (slope {fw['slope']:.2f})"
        ax_t.plot(xs, [r["wall_per_particle_s"] for r in rows], "o-", color=COLOURS[alg],
                  label=label)
        label = f"{alg}, CPU"
        fc = fits.get((alg, "cpu_per_particle_s"))
        if fc:
            label += (f" (slope {fc['slope']:.2f} over {fc['used'][0][0]}–"
                      f"{fc['used'][-1][0]}, dotted)")
        ax_t.plot(xs, [r["cpu_per_particle_s"] for r in rows], "s--", color=COLOURS[alg],
                  markerfacecolor="none", alpha=0.8, label=label)
        if fc:
            fx = np.array([fc["used"][0][0], fc["used"][-1][0]], dtype=float)
            ax_t.plot(fx, np.exp(fc["intercept"]) * fx ** fc["slope"], ":",
                      color=COLOURS[alg], linewidth=3, alpha=0.5)
        m = models.get(alg)
        if m:
            mx = np.geomspace(xs[0], xs[-1], 60)
            p = m["p"]
            ax_t.plot(mx, m["a"] * mx ** p + m["b"] * mx ** (p - 1), "-", color="black",
                      linewidth=0.7, alpha=0.7,
                      label=f"{alg} CPU ≈ {m['a']:.2g}·n^{p} + {m['b']:.2g}·n^{p - 1}")
    # References over each algorithm's sizes: n^2 through the race's largest CPU point, n^3
    # through MPost2's.
    for alg, style in (("race", (0, (6, 3))), ("mpost2", (0, (2, 2)))):
        power = LEADING[alg]
        rows = [r for r in summary if r["algorithm"] == alg
                and r.get("cpu_per_particle_s") is not None]
        if rows:
            top = max(rows, key=lambda r: r["n"])
            xr = np.array([min(r["n"] for r in rows), top["n"]], dtype=float)
            ax_t.plot(xr, top["cpu_per_particle_s"] * (xr / top["n"]) ** power, color="grey",
                      linestyle=style, linewidth=1.2, label=f"n^{power} reference ({alg})")
    ax_t.set_xscale("log")
    ax_t.set_yscale("log")
    ax_t.set_xlabel("n (rows)")
    ax_t.set_ylabel("seconds per particle (median over seeds)")
    ax_t.set_title(f"time per particle, whole process (d = {args.d}, {args.particles} "
                   f"particles, 1 thread)", fontsize=10)
    ax_t.grid(True, which="both", alpha=0.25)
    ys = [r[k] for r in summary for k in ("wall_per_particle_s", "cpu_per_particle_s")
          if r.get(k)]
    if ys:  # room above the data for the legend
        lo, hi = min(ys), max(ys)
        ax_t.set_ylim(lo / 1.5, hi * (hi / lo) ** 0.75)
    ax_t.legend(fontsize=7, loc="upper left", framealpha=0.9)

    # (b) peak RSS.
    for alg in ALGORITHMS:
        rows = sorted((r for r in summary if r["algorithm"] == alg
                       and r.get("median_peak_rss_mib") is not None), key=lambda r: r["n"])
        if not rows:
            continue
        xs = [r["n"] for r in rows]
        ys = [r["median_peak_rss_mib"] for r in rows]
        ax_m.plot(xs, ys, "o-", color=COLOURS[alg], label=alg)
        for x, y in zip(xs, ys):
            ax_m.annotate(f"{y:.0f}", (x, y), textcoords="offset points", xytext=(0, 6),
                          ha="center", fontsize=7.5, color=COLOURS[alg])
    ax_m.set_xscale("log")
    ax_m.set_yscale("log")
    ax_m.set_xlabel("n (rows)")
    ax_m.set_ylabel("peak RSS (MiB, median over seeds)")
    ax_m.set_title("peak resident memory (GNU time %M)", fontsize=10)
    ax_m.grid(True, which="both", alpha=0.25)
    ax_m.legend(fontsize=8)

    # (c) ESS / N after each step, first seed. It swings between ~1/N and 1 from one step to
    # the next, so each line is its mean over bins of 2 % of the steps; x = step / (n - 1)
    # lines the sizes up. Every value is in the _ess.csv file.
    cmap = matplotlib.colormaps["viridis"]
    bins = 50
    for ax, alg in zip(ax_e, ALGORITHMS):
        sizes = sorted({e["n"] for e in ess_rows if e["algorithm"] == alg})
        for k, n in enumerate(sizes):
            pts = sorted((e["step"], e["ess_frac"]) for e in ess_rows
                         if e["algorithm"] == alg and e["n"] == n)
            frac = np.array([s for s, _ in pts], dtype=float) / (n - 1)
            vals = np.array([v for _, v in pts])
            which = np.minimum((frac * bins).astype(int), bins - 1)
            centres, means = [], []
            for b in range(bins):
                sel = which == b
                if sel.any():
                    centres.append((b + 0.5) / bins)
                    means.append(vals[sel].mean())
            colour = cmap(k / max(1, len(sizes) - 1) * 0.9)
            ax.plot(centres, means, color=colour, linewidth=1.2, label=f"n={n}")
        ax.axhline(0.5, color="black", linewidth=0.8, linestyle="--")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(f"{alg}\nESS / N", fontsize=9)
        ax.grid(True, alpha=0.25)
        if sizes:
            ax.legend(fontsize=6.5, ncol=3, loc="lower left", framealpha=0.8)
    ax_e[0].set_title("ESS / N after each step, first seed (mean over 2 % bins of the steps);"
                      "\ndashed: resampling threshold", fontsize=9)
    ax_e[0].tick_params(labelbottom=False)
    ax_e[1].set_xlabel("step / (n − 1)")

    # (d) spread of log Z-hat over seeds.
    for alg in ALGORITHMS:
        rows = sorted((r for r in summary if r["algorithm"] == alg
                       and r.get("log_z_sd") is not None), key=lambda r: r["n"])
        if rows:
            ax_z.plot([r["n"] for r in rows], [r["log_z_sd"] for r in rows], "o-",
                      color=COLOURS[alg], label=f"{alg}: sd of log Ẑ")
        for r in rows:
            devs = [abs(x["log_evidence"] - r["log_z_mean"]) for x in runs
                    if x["algorithm"] == alg and x["n"] == r["n"] and not x["error"]]
            ax_z.plot([r["n"]] * len(devs), [max(v, 1e-3) for v in devs], "x",
                      color=COLOURS[alg], alpha=0.6, markersize=5)
    if any(r.get("log_z_sd") is not None for r in summary):
        ax_z.plot([], [], "x", color="grey", label="|log Ẑ − mean| of each seed")
        ax_z.set_yscale("log")
        ax_z.legend(fontsize=8)
    else:
        ax_z.text(0.5, 0.5, "no size ran with two or more seeds", ha="center",
                  transform=ax_z.transAxes)
    ax_z.set_xscale("log")
    ax_z.set_xlabel("n (rows)")
    ax_z.set_ylabel("log Ẑ spread over seeds (nats)")
    seeds_text = ", ".join(str(s) for s in args.seeds)
    ax_z.set_title(f"log-evidence spread over seeds {seeds_text} (sizes with ≥ 2 seeds)",
                   fontsize=10)
    ax_z.grid(True, which="both", alpha=0.25)

    from matplotlib.ticker import (FixedLocator, LogLocator, NullFormatter, NullLocator,
                                   ScalarFormatter)
    for ax in (ax_t, ax_m, ax_z):
        ax.xaxis.set_major_locator(FixedLocator(all_n))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(ScalarFormatter())
    ax_m.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax_m.yaxis.set_major_formatter(ScalarFormatter())
    ax_m.yaxis.set_minor_formatter(NullFormatter())
    ax_m.margins(y=0.12)

    fig.suptitle(f"Regenerative race beside MPost2: data from the model, d = {args.d}, "
                 f"{args.particles} particles, --covariance identity, one thread", fontsize=11)
    save_small_png(fig, path)
    plt.close(fig)


def save_small_png(fig, path):
    """Saves fig as a PNG with a 256-colour palette where Pillow is installed (a third of the
    size of matplotlib's RGBA file for line plots), else as matplotlib writes it."""
    try:
        import io
        from PIL import Image
    except ImportError:
        fig.savefig(path, dpi=90, bbox_inches="tight")
        return
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    buf.seek(0)
    with Image.open(buf) as im:
        im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(
            path, optimize=True)


def read_back(args, prefix):
    """Runs and ESS rows from the CSVs of an earlier run (for --replot)."""
    runs, ess = [], []
    with open(prefix + ".csv", newline="") as f:
        for r in csv.DictReader(f):
            for k in FLOAT_RUN:
                r[k] = float(r[k]) if r[k] != "" else None
            for k in INT_RUN:
                r[k] = int(r[k]) if r[k] != "" else None
            runs.append(r)
    with open(prefix + "_ess.csv", newline="") as f:
        for e in csv.DictReader(f):
            ess.append({"algorithm": e["algorithm"], "n": int(e["n"]), "seed": int(e["seed"]),
                        "step": int(e["step"]), "ess_frac": float(e["ess_frac"]),
                        "resampled": int(e["resampled"])})
    if runs:
        args.particles = runs[0]["particles"]
        args.d = runs[0]["d"]
        args.seeds = sorted({r["seed"] for r in runs})
    return runs, ess


def run_one(args, alg, n, seed, data_path):
    """Runs one fit; returns (run row, ESS / N list, resampled steps)."""
    stem = f"{alg}_n{n}_s{seed}"
    json_path = os.path.join(args.workdir, "out", stem + ".json")
    link_path = os.path.join(args.workdir, "out", stem + "_linkage.csv")
    log_path = os.path.join(args.workdir, "logs", stem + ".log")
    for p in (json_path, link_path, log_path):
        if os.path.exists(p):
            os.remove(p)
    cmd = [args.kingman, "fit", data_path, "-a", alg, "-p", str(args.particles),
           "--covariance", "identity", "--seed", str(seed), "--threads", str(args.threads),
           "--json", json_path, "--linkage", link_path]
    load1 = os.getloadavg()[0]
    m = run_measured(cmd, log_path, args.timeout)
    row = {"algorithm": alg, "n": n, "d": args.d, "particles": args.particles, "seed": seed,
           "data_seed": args.data_seed, "threads": args.threads, "wall_s": m.wall_s,
           "cpu_s": m.cpu_s, "user_s": m.user_s, "sys_s": m.sys_s,
           "wall_per_particle_s": m.wall_s / args.particles,
           "cpu_per_particle_s": m.cpu_s / args.particles, "peak_rss_mib": m.peak_rss_mib,
           "rss_from": m.rss_from, "load1_before": load1, "status": m.status, "error": ""}
    ess, resampled = [], []
    if m.timed_out:
        row["error"] = f"timed out after {args.timeout:g} s"
    elif m.status != 0:
        row["error"] = f"exit status {m.status}"
    else:
        row["error"] = check_linkage(link_path, n) or ""
    if not row["error"]:
        try:
            with open(json_path) as f:
                report = json.load(f)
            ess = [v / args.particles for v in report["ess"]]
            resampled = list(report["resampled_at"])
            row.update(fit_s=float(report["seconds"]),
                       log_evidence=float(report["log_evidence"]), steps=len(ess),
                       min_ess_frac=min(ess), mean_ess_frac=statistics.fmean(ess),
                       median_ess_frac=statistics.median(ess), resamplings=len(resampled))
            if len(report["particles"]) != args.particles or len(ess) != n - 1:
                row["error"] = (f"JSON has {len(report['particles'])} particles and "
                                f"{len(ess)} ESS values, expected {args.particles} and {n - 1}")
        except (OSError, ValueError, KeyError, TypeError) as e:
            row["error"] = f"unreadable JSON report ({e})"
    if row["error"]:
        with open(log_path, errors="replace") as f:
            tail = f.read()[-1500:]
        print(f"{stem}: {row['error']}\n{tail}", file=sys.stderr)
    if not args.keep:
        for p in (json_path, link_path):
            if os.path.exists(p):
                os.remove(p)
    return row, ess, resampled


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kingman", default="build/bin/kingman", help="path to kingman")
    parser.add_argument("--race-n", type=int_list, default=[100, 200, 500, 1000, 2000, 5000],
                        help="sizes of the race, e.g. '100,200,500' (default %(default)s)")
    parser.add_argument("--mpost2-n", type=int_list, default=[100, 200, 500, 1000, 2000],
                        help="sizes of mpost2 (default %(default)s; n = 2000 takes ~10 min)")
    parser.add_argument("--seeds", type=int_list, default=[1, 2, 3],
                        help="kingman fit seeds (default %(default)s)")
    parser.add_argument("--single-seed-above", type=int, default=1000,
                        help="sizes above this run the first seed only (default %(default)s)")
    parser.add_argument("--algorithms", nargs="+", choices=ALGORITHMS, default=list(ALGORITHMS))
    parser.add_argument("--d", type=int, default=20, help="columns (default %(default)s)")
    parser.add_argument("--particles", type=int, default=64, help="default %(default)s")
    parser.add_argument("--threads", type=int, default=1, help="kingman --threads (default 1)")
    parser.add_argument("--data-seed", type=int, default=1, help="kingman generate --seed")
    parser.add_argument("--fit-points", type=int, default=3,
                        help="largest sizes in the growth-exponent fit (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per run")
    parser.add_argument("--out-dir", default=None, help="default: bench/results")
    parser.add_argument("--prefix", default="race_vs_mpost2")
    parser.add_argument("--workdir", default="/tmp/racebench",
                        help="data, logs and (with --keep) outputs (default %(default)s)")
    parser.add_argument("--keep", action="store_true", help="keep JSON and linkage outputs")
    parser.add_argument("--replot", action="store_true",
                        help="no runs: summary, plot and tables from the CSVs in --out-dir")
    args = parser.parse_args()

    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = args.out_dir or os.path.join(here, "results")
    os.makedirs(out_dir, exist_ok=True)
    prefix = os.path.join(out_dir, args.prefix)
    started = time.perf_counter()
    meta = {}

    if args.replot:
        runs, ess_rows = read_back(args, prefix)
    else:
        path = find_program(args.kingman)
        if path is None:
            sys.exit(f"race_vs_mpost2.py: kingman not found at '{args.kingman}' (--kingman)")
        args.kingman = path
        for sub in ("data", "out", "logs"):
            os.makedirs(os.path.join(args.workdir, sub), exist_ok=True)
        sizes = {"race": args.race_n if "race" in args.algorithms else [],
                 "mpost2": args.mpost2_n if "mpost2" in args.algorithms else []}
        left_out = [n for n in sizes["race"] if n not in sizes["mpost2"]]
        if "mpost2" in args.algorithms and left_out:
            print(f"race_vs_mpost2.py: mpost2 not run at n = {', '.join(map(str, left_out))}: "
                  f"{MPOST2_COST_NOTE}; add sizes with --mpost2-n", file=sys.stderr)
        meta = {
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "command": " ".join([sys.executable] + sys.argv),
            "kingman": args.kingman,
            "kingman_version": subprocess.run([args.kingman, "--version"], capture_output=True,
                                              text=True).stdout.strip(),
            "commit": subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                                     capture_output=True, text=True).stdout.strip(),
            "machine": machine_description(),
            "load_before": load_average(),
            "data": f"kingman generate -n N -d {args.d} --seed {args.data_seed} (Lambda = I)",
            "fit": f"-p {args.particles} --covariance identity --threads {args.threads}",
            "seeds": " ".join(map(str, args.seeds)),
            "single_seed_above": args.single_seed_above,
            "race_n": " ".join(map(str, sizes["race"])),
            "mpost2_n": " ".join(map(str, sizes["mpost2"])),
        }
        with open(args.kingman, "rb") as f:
            meta["kingman_binary_sha256"] = hashlib.sha256(f.read()).hexdigest()
        print(f"race_vs_mpost2.py: load average {meta['load_before']}; kingman {args.kingman}",
              file=sys.stderr)

        runs, ess_rows = [], []
        for n in sorted(set(sizes["race"]) | set(sizes["mpost2"])):
            data_path = os.path.join(args.workdir, "data", f"model_n{n}_d{args.d}.csv")
            subprocess.run([args.kingman, "generate", "-n", str(n), "-d", str(args.d), "--seed",
                            str(args.data_seed), "--data", data_path], check=True)
            seeds = args.seeds if n <= args.single_seed_above else args.seeds[:1]
            for seed in seeds:
                for alg in ALGORITHMS:
                    if n not in sizes[alg]:
                        continue
                    row, ess, resampled = run_one(args, alg, n, seed, data_path)
                    runs.append(row)
                    if seed == seeds[0]:
                        marks = set(resampled)
                        ess_rows += [{"algorithm": alg, "n": n, "seed": seed, "step": k + 1,
                                      "ess_frac": round(v, 4),
                                      "resampled": int(k + 1 in marks)}
                                     for k, v in enumerate(ess)]
                    print(f"{alg:6s} n={n:5d} seed {seed}: {row['wall_s']:8.2f} s wall, "
                          f"{row['cpu_s']:8.2f} s CPU, {row['peak_rss_mib']:7.1f} MiB, "
                          f"log Z {row.get('log_evidence', float('nan')):.2f}, "
                          f"min ESS/N {row.get('min_ess_frac', float('nan')):.3f}, "
                          f"{row.get('resamplings', 0)} resamplings, "
                          f"load {row['load1_before']:.2f}"
                          + (f"  FAILED: {row['error']}" if row["error"] else ""),
                          file=sys.stderr, flush=True)
                    # kept current as the runs end
                    write_csv(prefix + ".csv", RUN_FIELDS, precise(runs, {"log_evidence"}))

    for e in ess_rows:
        e["ess_frac"] = round(e["ess_frac"], 4)
    write_csv(prefix + "_ess.csv", ESS_FIELDS, ess_rows)
    summary = summarize(runs, args.d, args.particles)
    fits = exponents(summary, args.fit_points)
    write_csv(prefix + "_summary.csv", SUMMARY_FIELDS, precise(summary, {"log_z_mean"}))
    for (alg, metric), f in fits.items():
        key = f"exponent_{alg}_{metric.replace('_per_particle_s', '')}"
        meta[key] = (f"{f['slope']:.3f} over n = {f['used'][0][0]}..{f['used'][-1][0]} "
                     f"(r2 {f['r2']:.3f}; last two {f['last_slope']:.3f})")
    models = two_term_fits(summary)
    for alg, m in models.items():
        meta[f"model_{alg}_cpu"] = (f"{m['a']:.4g} n^{m['p']} + {m['b']:.4g} n^{m['p'] - 1} s "
                                    f"per particle (max rel. error {m['max_rel_err']:.3f}; equal "
                                    f"terms at n = {cell(m['crossover'], '.0f')}; leading term "
                                    f"{100 * m['leading_share']:.0f} % at the largest n)")
    if args.replot and os.path.exists(prefix + "_meta.csv"):
        with open(prefix + "_meta.csv", newline="") as f:
            old_meta = {r["key"]: r["value"] for r in csv.DictReader(f)}
        old_meta.update(meta)  # the fitted values only
        meta = old_meta
    else:
        meta["load_after"] = load_average()
        meta["elapsed_s"] = f"{time.perf_counter() - started:.0f}"
    if meta.get("date"):
        with open(prefix + "_meta.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["key", "value"])
            for key, v in meta.items():
                w.writerow([key, v])
    plot(prefix + ".png", runs, summary, ess_rows, fits, models, args)

    # ---- report ----------------------------------------------------------------------------
    if meta.get("load_after"):
        print(f"\nMachine: {meta['machine']}; load average before {meta['load_before']}, "
              f"after {meta['load_after']}; {meta['elapsed_s']} s in all")
    by = {(r["algorithm"], r["n"]): r for r in summary}

    def logz(r):
        if r is None or r.get("log_z_mean") is None:
            return "—"
        sd = r.get("log_z_sd")
        return f"{r['log_z_mean']:.1f}" + (f" ± {sd:.2f}" if sd is not None else " (1 seed)")

    def per_particle(r):
        if r is None or r.get("wall_per_particle_s") is None:
            return "—"
        return f"{r['wall_per_particle_s']:.4g} / {r['cpu_per_particle_s']:.4g}"

    print(f"\nSeconds per particle (median wall / CPU over seeds, whole process), peak RSS, "
          f"log Ẑ mean ± sd over seeds; d = {args.d}, {args.particles} particles\n")
    print("| n | seeds | race s/particle | race CPU/n² (ns) | mpost2 s/particle "
          "| mpost2 CPU/n³ (ns) | mpost2 / race (CPU) | race RSS (MiB) | mpost2 RSS (MiB) "
          "| race log Ẑ | mpost2 log Ẑ |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sorted({r["n"] for r in summary}):
        ra, mp = by.get(("race", n)), by.get(("mpost2", n))
        ratio = None
        if ra and mp and ra.get("cpu_per_particle_s") and mp.get("cpu_per_particle_s"):
            ratio = mp["cpu_per_particle_s"] / ra["cpu_per_particle_s"]
        seeds = max((r["runs"] for r in (ra, mp) if r), default=0)
        lead = lambda r: cell(r and r.get("cpu_per_particle_over_leading_ns"), ".3g")  # noqa
        print(f"| {n} | {seeds} | {per_particle(ra)} | {lead(ra)} | {per_particle(mp)} | "
              f"{lead(mp)} | "
              f"{cell(ratio, '.2f')} | {cell(ra and ra.get('median_peak_rss_mib'), '.1f')} | "
              f"{cell(mp and mp.get('median_peak_rss_mib'), '.1f')} | {logz(ra)} | "
              f"{logz(mp)} |")
    print("\n| algorithm | n | runs | var log Ẑ | sd Ẑ/mean Ẑ | min ESS/N | mean ESS/N "
          "| resamplings (of n − 2) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in summary:
        print(f"| {r['algorithm']} | {r['n']} | {r['runs']} | {cell(r.get('log_z_var'), '.3g')} "
              f"| {cell(r.get('z_rel_sd'), '.3g')} | {cell(r.get('min_ess_frac'), '.3f')} | "
              f"{cell(r.get('mean_ess_frac'), '.3f')} | {cell(r.get('mean_resamplings'), '.1f')} "
              f"|" + (f" {r['errors']}" if r["errors"] else ""))
    print("\nGrowth exponent of seconds per particle (least squares on log-log over the "
          f"{args.fit_points} largest sizes):")
    for (alg, metric), f in fits.items():
        print(f"  {alg:6s} {metric.split('_')[0]:4s}: n^{f['slope']:.2f} over n = "
              f"{f['used'][0][0]}..{f['used'][-1][0]} (r² {f['r2']:.3f}); between the last "
              f"two sizes n^{f['last_slope']:.2f}")
    print("Two-term law of CPU seconds per particle, least squares on the relative error over "
          "every size:")
    for alg, m in models.items():
        print(f"  {alg:6s}: {m['a']:.4g}·n^{m['p']} + {m['b']:.4g}·n^{m['p'] - 1} (largest "
              f"relative error {100 * m['max_rel_err']:.1f} %); the terms are equal at "
              f"n = {cell(m['crossover'], '.0f')}, the n^{m['p']} term is "
              f"{100 * m['leading_share']:.0f} % of the time at the largest n")
    written = [prefix + s for s in (".csv", "_summary.csv", "_ess.csv", "_meta.csv", ".png")]
    print("Wrote:\n  " + "\n  ".join(written))
    return 1 if any(r["error"] for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
