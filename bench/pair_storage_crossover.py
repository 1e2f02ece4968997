#!/usr/bin/env python3
"""Times Greedy-Rate1's two pair storages against each other (--pair-storage full | bounded) by
n, d and thread count, alternating them round by round, and reports where the bounded path
stops being slower: the measurements behind greedy_rate1_prefers_bounded (greedy.hpp).

    /usr/bin/python3 bench/pair_storage_crossover.py --n 10000 20000 30000 --d 20 \\
        --threads 1 2 4 8 16 --rounds 3 --out /tmp/crossover

For each (d, threads, n) it runs `kingman fit X.csv --header no -a greedy-rate1 --covariance
identity --leaf-variance 0 --threads T --pair-storage S --linkage L --json J` for S = full and
bounded, alternately (the order reversed every other round), on `make_blobs(n, d, 20, 42)` of
bench_common.py; checks that both linkages are byte-identical and that each JSON names the
storage asked for; and writes a CSV (one row per configuration: median wall and CPU time and
peak RSS of each storage, the median of the round-by-round wall ratios bounded / full) and a
summary: per d and thread count, the smallest n from which every measured n had the bounded path
no slower, next to the rule's threshold. Sizes whose full cache would not fit --max-memory
(default: kingman's own default, 3/4 of RAM) are skipped. Exits non-zero if a run fails or the
linkages differ.
"""
import argparse
import csv
import json
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import find_program, machine_description, make_blobs, run_measured  # noqa: E402

# greedy.hpp's thresholds (kBoundedPathTiers: from threads, from points), to print beside the
# measured crossover.
REFERENCE_DIMS = 20
TIERS = [(1, 40000), (2, 30000), (4, 10000), (8, 7000)]


def rule_threshold(d, threads):
    base = [points for from_threads, points in TIERS if threads >= from_threads][-1]
    return base * max(d, REFERENCE_DIMS) / REFERENCE_DIMS


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10000, 20000, 30000])
    parser.add_argument("--d", type=int, nargs="+", default=[20])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each storage per size")
    parser.add_argument("--kingman", default="build/bin/kingman")
    parser.add_argument("--max-memory", default=None,
                        help="skip sizes whose full cache needs more (kingman's syntax, e.g. 64G)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    parser.add_argument("--out", default="/tmp/pair_storage_crossover")
    args = parser.parse_args()
    kingman = find_program(args.kingman)
    if kingman is None:
        sys.exit(f"pair_storage_crossover.py: no kingman at {args.kingman}")
    if args.rounds < 1 or min(args.n) < 2 or min(args.d) < 1 or min(args.threads) < 1:
        sys.exit("pair_storage_crossover.py: rounds, n, d and threads must be positive (n >= 2)")
    os.makedirs(args.out, exist_ok=True)
    log = os.path.join(args.out, "runs.log")
    print(f"Machine: {machine_description()}")
    memory = ["--max-memory", args.max_memory] if args.max_memory else []

    rows = []
    for d in args.d:
        for n in sorted(args.n):
            data = os.path.join(args.out, f"x{n}_{d}.csv")
            if not os.path.exists(data):
                np.savetxt(data, make_blobs(n, d, 20, 42), delimiter=",", fmt="%.17g")
            for threads in args.threads:
                times = {"full": [], "bounded": []}
                ratios, skipped = [], False
                for round_index in range(args.rounds):
                    order = ["full", "bounded"] if round_index % 2 == 0 else ["bounded", "full"]
                    walls = {}
                    for storage in order:
                        linkage = os.path.join(args.out, f"{storage}.csv")
                        report = os.path.join(args.out, f"{storage}.json")
                        command = [kingman, "fit", data, "--header", "no", "-a", "greedy-rate1",
                                   "--covariance", "identity", "--leaf-variance", "0",
                                   "--threads", str(threads), "--pair-storage", storage,
                                   "--linkage", linkage, "--json", report] + memory
                        m = run_measured(command, log, args.timeout)
                        if m.status == 1 and storage == "full":
                            skipped = True  # the full cache does not fit the budget
                            break
                        if m.status != 0 or m.timed_out:
                            sys.exit(f"pair_storage_crossover.py: {' '.join(command)} failed "
                                     f"(status {m.status}); see {log}")
                        with open(report) as f:
                            ran = json.load(f).get("pair_storage")
                        if ran != storage:
                            sys.exit(f"pair_storage_crossover.py: asked for {storage}, the JSON "
                                     f"says {ran}")
                        times[storage].append(m)
                        walls[storage] = m.wall_s
                    if skipped:
                        break
                    with open(os.path.join(args.out, "full.csv"), "rb") as a, \
                            open(os.path.join(args.out, "bounded.csv"), "rb") as b:
                        if a.read() != b.read():
                            sys.exit(f"pair_storage_crossover.py: the linkages differ at n = {n}, "
                                     f"d = {d}, {threads} threads")
                    ratios.append(walls["bounded"] / walls["full"])
                if skipped:
                    print(f"n = {n}, d = {d}, threads = {threads}: the full cache does not fit; "
                          "skipped")
                    continue
                row = {"n": n, "d": d, "threads": threads, "rounds": args.rounds}
                for storage in ("full", "bounded"):
                    row[f"{storage}_wall_s"] = statistics.median(m.wall_s for m in times[storage])
                    row[f"{storage}_cpu_s"] = statistics.median(m.cpu_s for m in times[storage])
                    row[f"{storage}_peak_rss_mib"] = statistics.median(
                        m.peak_rss_mib for m in times[storage])
                row["bounded_over_full"] = statistics.median(ratios)
                rows.append(row)
                print(f"n = {n}, d = {d}, threads = {threads}: full {row['full_wall_s']:.2f} s "
                      f"({row['full_peak_rss_mib']:.0f} MiB), bounded {row['bounded_wall_s']:.2f} "
                      f"s ({row['bounded_peak_rss_mib']:.0f} MiB), bounded / full "
                      f"{row['bounded_over_full']:.3f}", flush=True)

    if not rows:
        sys.exit("pair_storage_crossover.py: nothing measured")
    table = os.path.join(args.out, "crossover.csv")
    with open(table, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    print(f"\nwrote {table}\n\n| d | threads | bounded no slower from n | rule's threshold |")
    print("|---:|---:|---:|---:|")
    for d in args.d:
        for threads in args.threads:
            measured = sorted((r["n"], r["bounded_over_full"]) for r in rows
                              if r["d"] == d and r["threads"] == threads)
            # The smallest measured n from which every larger measured n has ratio <= 1.
            crossover = None
            for k in range(len(measured)):
                if all(ratio <= 1.0 for _, ratio in measured[k:]):
                    crossover = measured[k][0]
                    break
            shown = crossover if crossover is not None else f"> {measured[-1][0]}" if measured \
                else "-"
            print(f"| {d} | {threads} | {shown} | {rule_threshold(d, threads):.0f} |")


if __name__ == "__main__":
    main()
