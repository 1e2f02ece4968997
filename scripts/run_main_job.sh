#!/usr/bin/env bash
# The main job: build kingman, cluster 200 handwritten digits with it, and compare the tree
# with scipy's average linkage on the same data.
#
#   bash scripts/run_main_job.sh
#
# 1. installs missing Debian packages (scripts/install_deps.sh main);
# 2. configures build/ (Release) and builds only the kingman program;
# 3. runs `kingman fit data/digits200.csv` (default algorithm greedy-rate1, learned covariance)
#    writing out/digits200.nwk, out/digits200_linkage.csv and out/digits200.json (with scores
#    against data/digits200_labels.txt);
# 4. computes scipy average linkage (euclidean) on the same data into
#    out/digits200_average_linkage.csv and scores it with `kingman score`;
# 5. prints where everything was written and the scores side by side.
# Extra CMake configure arguments can be passed in KINGMAN_CMAKE_ARGS.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PY=/usr/bin/python3
BUILD=build
KINGMAN="$BUILD/bin/kingman"
DATA=data/digits200.csv
LABELS=data/digits200_labels.txt
OUT=out

echo "== installing missing packages"
bash scripts/install_deps.sh main

echo "== building kingman in $BUILD/ (Release)"
# shellcheck disable=SC2086
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release ${KINGMAN_CMAKE_ARGS:-}
cmake --build "$BUILD" -j"$(nproc)" --target kingman_cli

mkdir -p "$OUT"

echo "== kingman fit $DATA"
"$KINGMAN" fit "$DATA" --labels "$LABELS" \
  --newick "$OUT/digits200.nwk" \
  --linkage "$OUT/digits200_linkage.csv" \
  --json "$OUT/digits200.json"

echo "== scipy average linkage on $DATA"
"$PY" - "$DATA" "$OUT/digits200_average_linkage.csv" <<'PY'
import sys
import numpy as np
from scipy.cluster.hierarchy import linkage

data_path, out_path = sys.argv[1], sys.argv[2]
with open(data_path) as f:
    first = f.readline().strip().split(",")
try:
    [float(v) for v in first]
    skip = 0
except ValueError:
    skip = 1  # header row
X = np.loadtxt(data_path, delimiter=",", skiprows=skip, ndmin=2)
Z = linkage(X, method="average", metric="euclidean")
with open(out_path + ".tmp", "w") as f:
    for a, b, h, s in Z:
        f.write(f"{int(a)},{int(b)},{h:.17g},{int(s)}\n")
import os
os.replace(out_path + ".tmp", out_path)
PY

"$KINGMAN" score --linkage "$OUT/digits200_average_linkage.csv" --labels "$LABELS" \
  > "$OUT/digits200_average_scores.json"

echo
"$PY" - "$DATA" "$ROOT/$OUT" <<'PY'
import json
import sys

data, out = sys.argv[1], sys.argv[2]
with open(f"{out}/digits200.json") as f:
    fit = json.load(f)
with open(f"{out}/digits200_average_scores.json") as f:
    avg = json.load(f)
avg = avg.get("scores", avg)
ks = fit.get("scores") or {}

def fmt(v):
    return "n/a" if v is None else f"{v:.4f}"

print(f"kingman main job on {data} (n={fit.get('n')}, d={fit.get('d')})")
print(f"  kingman tree, Newick:   {out}/digits200.nwk")
print(f"  kingman tree, linkage:  {out}/digits200_linkage.csv")
print(f"  kingman result, JSON:   {out}/digits200.json")
print(f"  average linkage:        {out}/digits200_average_linkage.csv")
print(f"  algorithm {fit.get('algorithm')}, seed {fit.get('seed')}, "
      f"threads {fit.get('threads')}, {fit.get('seconds', 0.0):.3f} s")
lj = fit.get("log_joint")
print(f"  kingman log joint log p(x, tree): {'n/a' if lj is None else f'{lj:.4f}'}")
print()
rows = [("kingman " + str(fit.get("algorithm")), ks), ("scipy average linkage", avg)]
width = max(len(r[0]) for r in rows)
print(f"  {'':<{width}}  dendrogram purity  subtree score  LOO accuracy")
for name, s in rows:
    print(f"  {name:<{width}}  {fmt(s.get('dendrogram_purity')):>17}  "
          f"{fmt(s.get('subtree_score')):>13}  {fmt(s.get('leave_one_out_accuracy')):>12}")
PY
