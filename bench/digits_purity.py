#!/usr/bin/python3
"""Dendrogram purity of kingman beside average linkage on random 200-point subsets of the 8x8
digits (20 per class), the check of issue 2: kingman's default settings (no covariance flag).

Run: /usr/bin/python3 bench/digits_purity.py [--kingman build/bin/kingman] [--subsets 10]
Needs python3-numpy, python3-scipy and python3-sklearn (for the digits) from Debian.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.cluster.hierarchy import linkage

DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"


def write_linkage(z, path):
    with open(path, "w") as f:
        for a, b, h, size in z:
            f.write(f"{int(a)},{int(b)},{h!r},{int(size)}\n")


def score(kingman, linkage_path, labels_path):
    out = subprocess.run([kingman, "score", "--linkage", linkage_path, "--labels", labels_path],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kingman", default="build/bin/kingman")
    parser.add_argument("--subsets", type=int, default=10)
    parser.add_argument("--per-class", type=int, default=20)
    parser.add_argument("--algorithm", default="greedy-rate1")
    parser.add_argument("--rescale-columns", action="store_true",
                        help="multiply each column by 10^U(-2, 2): columns in different units")
    parser.add_argument("--standardize", action="store_true",
                        help="z-score each column before fitting")
    parser.add_argument("extra", nargs="*", help="extra kingman fit arguments")
    args = parser.parse_args()

    with gzip.open(DIGITS, "rt") as f:
        table = np.loadtxt(f, delimiter=",")
    x_all, y_all = table[:, :-1], table[:, -1].astype(int)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for subset in range(args.subsets):
            rng = np.random.default_rng(1000 + subset)
            chosen = np.concatenate([rng.choice(np.flatnonzero(y_all == c), args.per_class,
                                                replace=False) for c in range(10)])
            x, y = x_all[chosen], y_all[chosen]
            if args.rescale_columns:
                x = x * 10.0 ** rng.uniform(-2, 2, size=x.shape[1])
            if args.standardize:
                sd = x.std(axis=0, ddof=1)
                x = (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
            data = os.path.join(tmp, "x.csv")
            labels = os.path.join(tmp, "y.txt")
            np.savetxt(data, x, fmt="%.17g", delimiter=",")
            with open(labels, "w") as f:
                f.writelines(f"{c}\n" for c in y)
            report = os.path.join(tmp, "r.json")
            subprocess.run([args.kingman, "fit", data, "-a", args.algorithm, "--labels", labels,
                            "--json", report] + args.extra, check=True)
            with open(report) as f:
                k = json.load(f)["scores"]["dendrogram_purity"]
            avg_path = os.path.join(tmp, "avg.csv")
            write_linkage(linkage(x, "average"), avg_path)
            a = score(args.kingman, avg_path, labels)["dendrogram_purity"]
            rows.append((subset, k, a))
            print(f"subset {subset}: kingman {k:.4f}  average linkage {a:.4f}", flush=True)
    k = np.array([r[1] for r in rows])
    a = np.array([r[2] for r in rows])
    print(f"mean purity over {len(rows)} subsets: kingman {k.mean():.4f} (sd {k.std(ddof=1):.4f})"
          f"  average linkage {a.mean():.4f} (sd {a.std(ddof=1):.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
