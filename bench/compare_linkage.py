#!/usr/bin/python3
"""Time kingman beside fastcluster and scipy average linkage, whole process each.

For each n, writes Gaussian-blob data (n rows, d columns, --clusters blobs, fixed seed) to a
CSV in a temporary directory, then times, in one run, each tool as a separate process that
reads the CSV and writes a linkage CSV (a,b,height,size):

  kingman      kingman fit X.csv -a greedy-rate1 --covariance identity --leaf-variance 0
               --linkage out.csv
  fastcluster  /usr/bin/python3: numpy.loadtxt, fastcluster.linkage(X, 'average'), write CSV
  scipy        /usr/bin/python3: numpy.loadtxt, scipy.cluster.hierarchy.linkage(X, 'average'),
               write CSV

Each tool runs --repeats times (default 3), interleaved; the table shows the median wall time
and the median peak resident memory (from wait4's rusage of that one child), and the ratio of
kingman's median to fastcluster's. Run with Debian's interpreter:

  /usr/bin/python3 bench/compare_linkage.py [--n 2000 10000] [--d 20] [--kingman build/bin/kingman]
"""
import argparse
import csv
import os
import shutil
import statistics
import sys
import tempfile

import numpy as np

from bench_common import (check_linkage, find_program, machine_description, make_blobs,
                          peer_command, run_measured)

TOOLS = ("kingman", "fastcluster", "scipy")


def command_for(tool, args, data_path, out_path):
    if tool == "kingman":
        cmd = [args.kingman, "fit", data_path, "-a", "greedy-rate1", "--covariance", "identity",
               "--leaf-variance", "0", "--linkage", out_path]
        if args.kingman_threads is not None:
            cmd += ["--threads", str(args.kingman_threads)]
        return cmd
    return peer_command(args.python, tool, data_path, out_path)


def run_once(cmd, log_path, timeout):
    """Runs cmd; returns (wall seconds, peak RSS in MiB, exit status)."""
    m = run_measured(cmd, log_path, timeout)
    return m.wall_s, m.peak_rss_mib, m.status


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[2000, 10000], help="row counts")
    parser.add_argument("--d", type=int, default=20, help="columns")
    parser.add_argument("--clusters", type=int, default=20, help="Gaussian blobs")
    parser.add_argument("--seed", type=int, default=42, help="data seed")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kingman", default="build/bin/kingman", help="path to the kingman program")
    parser.add_argument("--kingman-threads", type=int, default=None,
                        help="pass --threads T to kingman (default: kingman's own default)")
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="interpreter with numpy, scipy and fastcluster")
    parser.add_argument("--tools", nargs="+", choices=TOOLS, default=list(TOOLS))
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per run")
    parser.add_argument("--csv", help="also write the per-tool results to this CSV file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()

    if "kingman" in args.tools:
        path = find_program(args.kingman)
        if path is None:
            sys.exit(f"compare_linkage.py: kingman program not found at '{args.kingman}' "
                     "(build it, pass --kingman, or leave it out with --tools)")
        args.kingman = path

    workdir = tempfile.mkdtemp(prefix="kingman-compare-")
    results = []  # dicts, one per (n, tool)
    failed = False
    try:
        for n in args.n:
            data_path = os.path.join(workdir, f"blobs_n{n}_d{args.d}.csv")
            X = make_blobs(n, args.d, args.clusters, args.seed)
            np.savetxt(data_path, X, delimiter=",", fmt="%.9g")
            walls = {t: [] for t in args.tools}
            rss = {t: [] for t in args.tools}
            errors = {}
            for rep in range(args.repeats):
                for tool in args.tools:
                    if tool in errors:
                        continue
                    out_path = os.path.join(workdir, f"{tool}_n{n}_r{rep}.csv")
                    log_path = os.path.join(workdir, f"{tool}_n{n}.log")
                    cmd = command_for(tool, args, data_path, out_path)
                    wall, peak, status = run_once(cmd, log_path, args.timeout)
                    problem = None
                    if status != 0:
                        problem = f"exit status {status}"
                    else:
                        problem = check_linkage(out_path, n)
                    if problem:
                        with open(log_path, errors="replace") as f:
                            tail = f.read()[-2000:]
                        errors[tool] = problem
                        print(f"n={n} {tool}: {problem}\n{tail}", file=sys.stderr)
                        continue
                    walls[tool].append(wall)
                    rss[tool].append(peak)
                    print(f"n={n} {tool} run {rep + 1}/{args.repeats}: {wall:.3f} s, "
                          f"{peak:.1f} MiB", file=sys.stderr, flush=True)
            for tool in args.tools:
                ok = tool not in errors and walls[tool]
                results.append({
                    "n": n, "d": args.d, "tool": tool,
                    "runs": len(walls[tool]),
                    "median_s": statistics.median(walls[tool]) if ok else None,
                    "min_s": min(walls[tool]) if ok else None,
                    "peak_rss_mib": statistics.median(rss[tool]) if ok else None,
                    "error": errors.get(tool, ""),
                })
                failed |= not ok
    finally:
        if args.keep:
            print(f"kept {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    def median_of(n, tool):
        for r in results:
            if r["n"] == n and r["tool"] == tool:
                return r["median_s"]
        return None

    for r in results:
        k, f = median_of(r["n"], r["tool"]), median_of(r["n"], "fastcluster")
        r["ratio_to_fastcluster"] = (k / f) if (k is not None and f) else None

    def cell(v, spec):
        return "—" if v is None else format(v, spec)

    print(f"\nMachine: {machine_description()}")
    print(f"Data: Gaussian blobs, d={args.d}, {args.clusters} clusters, seed {args.seed}; "
          f"median of {args.repeats} runs, whole process (read CSV, cluster, write linkage)\n")
    print("| n | d | tool | median wall (s) | min wall (s) | peak RSS (MiB) | time / fastcluster |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for r in results:
        name = r["tool"] + (f" (failed: {r['error']})" if r["error"] else "")
        print(f"| {r['n']} | {r['d']} | {name} | {cell(r['median_s'], '.3f')} | "
              f"{cell(r['min_s'], '.3f')} | {cell(r['peak_rss_mib'], '.1f')} | "
              f"{cell(r['ratio_to_fastcluster'], '.2f')} |")
    if "kingman" in args.tools and "fastcluster" in args.tools:
        for n in args.n:
            k, f = median_of(n, "kingman"), median_of(n, "fastcluster")
            if k is not None and f:
                print(f"\nn={n}: kingman / fastcluster = {k / f:.2f}", end="")
        print()

    if args.csv:
        fields = ["n", "d", "tool", "runs", "median_s", "min_s", "peak_rss_mib",
                  "ratio_to_fastcluster", "error"]
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            for r in results:
                w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
