#!/usr/bin/python3
"""Make data/digits200.csv and data/digits200_labels.txt.

Takes 20 images per class (200 in all) from the 8x8 handwritten digits that Debian's
python3-sklearn ships (sklearn/datasets/data/digits.csv.gz: 1797 rows, 64 integer pixel
values 0..16 and the digit label in the last column). The rows of each class are drawn
without replacement with numpy's PCG64 generator seeded with SEED, then kept in their
original file order, so the output is the same on every machine with the same source file.

Run with Debian's interpreter:  /usr/bin/python3 scripts/make_digits_subset.py
"""
import argparse
import gzip
import hashlib
import os
import sys

import numpy as np

SOURCE = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
SEED = 20240101
PER_CLASS = 20


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=SOURCE, help="digits.csv.gz from python3-sklearn")
    parser.add_argument("--out-dir", default=os.path.join(here, "..", "data"))
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--per-class", type=int, default=PER_CLASS)
    args = parser.parse_args()

    with open(args.source, "rb") as f:
        raw = f.read()
    table = np.loadtxt(gzip.decompress(raw).decode("ascii").splitlines(), delimiter=",")
    if table.ndim != 2 or table.shape[1] != 65:
        print(f"{args.source}: expected 65 columns, got shape {table.shape}", file=sys.stderr)
        return 1
    if not np.array_equal(table, np.round(table)):
        print(f"{args.source}: expected integer values", file=sys.stderr)
        return 1
    table = table.astype(np.int64)
    pixels, labels = table[:, :64], table[:, 64]

    rng = np.random.Generator(np.random.PCG64(args.seed))
    chosen = []
    for digit in range(10):
        rows = np.flatnonzero(labels == digit)
        if rows.size < args.per_class:
            print(f"class {digit} has only {rows.size} rows", file=sys.stderr)
            return 1
        chosen.append(rng.choice(rows, size=args.per_class, replace=False))
    chosen = np.sort(np.concatenate(chosen))

    os.makedirs(args.out_dir, exist_ok=True)
    data_path = os.path.join(args.out_dir, f"digits{chosen.size}.csv")
    label_path = os.path.join(args.out_dir, f"digits{chosen.size}_labels.txt")
    with open(data_path, "w", newline="\n") as f:
        f.write(",".join(f"p{j}" for j in range(64)) + "\n")
        for i in chosen:
            f.write(",".join(str(v) for v in pixels[i]) + "\n")
    with open(label_path, "w", newline="\n") as f:
        for i in chosen:
            f.write(f"{labels[i]}\n")

    print(f"source {args.source} sha256 {hashlib.sha256(raw).hexdigest()}")
    print(f"seed {args.seed}, {args.per_class} per class, {chosen.size} rows")
    print(f"source rows (0-based): {' '.join(str(i) for i in chosen)}")
    print(f"wrote {os.path.normpath(data_path)} and {os.path.normpath(label_path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
