#!/usr/bin/env python3
"""Writes the clustered table with missing entries that bench/RESULTS.md times the missing-data
SMC on ("Engine: SMC", thirteenth session), and the same table complete.

Five centres N(0, 3^2 I) in d dimensions, each row a centre picked uniformly plus N(0, I) noise;
then every entry missing with probability --missing. Run with /usr/bin/python3 (numpy).

    /usr/bin/python3 bench/missing_table.py --rows 100 --dims 10 --missing 0.1 --seed 2 \\
        --out miss100.csv --complete full100.csv
"""
import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--dims", type=int, default=10)
    parser.add_argument("--missing", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--out", required=True)
    parser.add_argument("--complete", help="also write the table without missing entries")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    centres = rng.normal(scale=3.0, size=(5, args.dims))
    x = centres[rng.integers(0, 5, args.rows)] + rng.normal(size=(args.rows, args.dims))
    if args.complete:
        np.savetxt(args.complete, x, delimiter=",", fmt="%.6g")
    x[rng.random(x.shape) < args.missing] = np.nan
    np.savetxt(args.out, x, delimiter=",", fmt="%.6g")


if __name__ == "__main__":
    main()
