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
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PEER_CODE = r"""
import sys
import numpy as np
method, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
X = np.loadtxt(src, delimiter=",", ndmin=2)
if method == "fastcluster":
    import fastcluster
    Z = fastcluster.linkage(X, method="average", metric="euclidean")
else:
    from scipy.cluster.hierarchy import linkage
    Z = linkage(X, method="average", metric="euclidean")
with open(dst, "w") as f:
    for a, b, h, s in Z:
        f.write(f"{int(a)},{int(b)},{h:.17g},{int(s)}\n")
"""

TOOLS = ("kingman", "fastcluster", "scipy")


def make_blobs(n, d, clusters, seed):
    """n points around `clusters` centres: centres ~ N(0, 5^2 I), points ~ centre + N(0, I)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    centres = rng.normal(0.0, 5.0, size=(clusters, d))
    which = rng.integers(0, clusters, size=n)
    return centres[which] + rng.normal(0.0, 1.0, size=(n, d))


def command_for(tool, args, data_path, out_path):
    if tool == "kingman":
        cmd = [args.kingman, "fit", data_path, "-a", "greedy-rate1", "--covariance", "identity",
               "--leaf-variance", "0", "--linkage", out_path]
        if args.kingman_threads is not None:
            cmd += ["--threads", str(args.kingman_threads)]
        return cmd
    return [args.python, "-c", PEER_CODE, tool, data_path, out_path]


def run_once(cmd, log_path, timeout):
    """Runs cmd; returns (wall seconds, peak RSS in MiB, exit status)."""
    with open(log_path, "ab") as log:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.002)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024.0, proc.returncode  # ru_maxrss is in KiB on Linux


def check_linkage(path, n):
    """Number of well-formed rows if the file is a complete linkage of n leaves, else a reason."""
    try:
        Z = np.loadtxt(path, delimiter=",", ndmin=2)
    except Exception as e:  # noqa: BLE001 - report any parse failure
        return f"unreadable linkage ({e})"
    if Z.shape != (n - 1, 4):
        return f"linkage has shape {Z.shape}, expected ({n - 1}, 4)"
    if int(Z[-1, 3]) != n:
        return f"last merge has size {int(Z[-1, 3])}, expected {n}"
    return None


def machine_description():
    model = platform.processor() or "unknown CPU"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return f"{model}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}"


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
        path = shutil.which(args.kingman) or (args.kingman if os.path.isfile(args.kingman) else None)
        if path is None:
            sys.exit(f"compare_linkage.py: kingman program not found at '{args.kingman}' "
                     "(build it, pass --kingman, or leave it out with --tools)")
        args.kingman = os.path.abspath(path)

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
