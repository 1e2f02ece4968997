#!/bin/bash
# Many-core checks of kingman (bench/RESULTS.md, "Sixteen cores"): on a machine with 16 cores,
# with kingman and smc_bench built elsewhere and packed by bench/bundle_binaries.sh into
# BUNDLE (default .devrun). Run from the repository root (it uses bench/*.py; python3 there
# needs numpy, scipy and matplotlib):
#
#   bash bench/bundle_binaries.sh build .devrun            # here
#   OUT=/tmp/out bash bench/many_core_checks.sh            # there
#
# 1. MPost2's engine on 1..16 threads (smc_bench, the whole process's CPU time); 2. MPost2
# (64, 64, 100) as a whole process on 1..16 threads, alternated; 3. the thread sweep of
# scaling_sweep.py on 1..16 threads; 4. Greedy-Rate1 at n = 10 000 beside scipy; 5. the race
# with 64 particles at n = 10 000 on 16 threads. Every result goes to $RES and is packed into
# $OUT/res.tgz after each step, so a run cut short still leaves what it finished. 6. Greedy-Rate1's
# two pair storages against each other on 4, 8 and 16 threads (pair_storage_crossover.py), the
# measurements behind greedy_rate1_prefers_bounded. STEPS lists the steps to run (default all,
# in the order given); QUICK=1 shrinks every size (a rehearsal on a small machine); PY names the
# Python interpreter.
set -u
ROOT=$(pwd)
D=$(realpath "${BUNDLE:-$ROOT/.devrun}")
RES=${RES:-/tmp/res}
OUT=${OUT:-/tmp/out}
mkdir -p "$RES" "$OUT"
pack() { tar czf "$OUT/res.tgz" -C "$(dirname "$RES")" "$(basename "$RES")"; }
log() { echo "== $(date -u +%T) $*" | tee -a "$RES/steps.txt"; }
Q=${QUICK:-0}
PY=${PY:-python3}
STEPS=${STEPS:-1 2 3 4 5 6}

export LD_LIBRARY_PATH=$D/lib
KINGMAN=$D/bin/kingman
SMC_BENCH=$D/bin/smc_bench
if ! "$KINGMAN" --version >/dev/null 2>&1; then
  # The machine's C library is older than Debian 12's: run through Debian's own loader.
  for p in kingman smc_bench; do
    mv "$D/bin/$p" "$D/bin/$p.bin"
    printf '#!/bin/sh\nexec %s --library-path %s:%s %s "$@"\n' "$D/glibc/ld-linux-x86-64.so.2" \
      "$D/glibc" "$D/lib" "$D/bin/$p.bin" >"$D/bin/$p"
    chmod +x "$D/bin/$p"
  done
  echo "using Debian's loader" >>"$RES/env.txt"
fi
[ -x /usr/bin/time ] || cp "$D/bin/gnutime" /usr/bin/time
{
  date -u; nproc; lscpu; free -g; uname -a; cat /etc/os-release | head -3
  $PY -c 'import numpy, scipy, matplotlib; print("numpy", numpy.__version__, "scipy", scipy.__version__)'
  "$KINGMAN" --version; /usr/bin/time --version | head -1
} >>"$RES/env.txt" 2>&1
pack
cat "$RES/env.txt" | grep -E "Model name|^CPU\(s\)|Thread|MHz|L2|L3|NUMA node|kingman|using|numpy|PRETTY"

if [ "$Q" = 1 ]; then
  TLIST="1 2"; REP=1; GB_REPS=1; N10K=1000; RACE_N=300; ROUNDS=3
  CROSS_N="1000 2000"; CROSS_T="1 2"; CROSS_ROUNDS=1
  TN="--thread-n greedy-rate1 1000 --thread-n mpost2 100 --thread-n postpost 24 --thread-n race 60 --thread-n priorprior 200"
else
  TLIST="1 2 4 8 16"; REP=3; GB_REPS=5; N10K=10000; RACE_N=10000; ROUNDS=21
  CROSS_N="10000 20000 30000"; CROSS_T="4 8 16"; CROSS_ROUNDS=2
  TN="--thread-n greedy-rate1 10000 --thread-n mpost2 800 --thread-n postpost 64 --thread-n race 300 --thread-n priorprior 2000"
fi

step1() {
  log "1. engine: MPost2 on 1..16 threads (Google Benchmark, process CPU time)"
  timeout 90 "$SMC_BENCH" --benchmark_filter='Mpost2Threads|Mpost2/n:64' --benchmark_repetitions=$GB_REPS \
    --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true \
    --benchmark_out="$RES/mpost2_engine.json" --benchmark_out_format=json 2>&1 |
    grep -v -E "_mean|_stddev|_cv" | tee "$RES/mpost2_engine.txt"
  pack
}

step2() {
  log "2. whole process: MPost2 (64, 64, 100), threads alternated"
  "$KINGMAN" generate -n 64 -d 64 --seed 11 --data /tmp/g64.csv >/dev/null
  CMDS=()
  for t in $TLIST; do
    CMDS+=("$KINGMAN fit /tmp/g64.csv -a mpost2 -p 100 --covariance identity --threads $t --linkage /tmp/l64_$t.csv")
  done
  timeout 60 $PY bench/alternate.py --rounds $ROUNDS "${CMDS[@]}" 2>&1 | tee "$RES/mpost2_process.txt"
  md5sum /tmp/l64_*.csv | tee -a "$RES/mpost2_process.txt"
  pack
}

step3() {
  log "3. thread sweep, whole process"
  timeout 180 $PY bench/scaling_sweep.py --kingman "$KINGMAN" --python $PY --sweeps threads \
    --series greedy-rate1 mpost2 postpost priorprior race --threads-list $TLIST $TN \
    --repeats $REP --long-run 60 --workdir /tmp/sweep --out-dir "$RES" --prefix many 2>&1 |
    tail -40 | tee "$RES/sweep_log.txt"
  pack
}

step4() {
  log "4. greedy-rate1 at n = $N10K beside scipy"
  timeout 60 $PY bench/compare_linkage.py --n $N10K --repeats 3 --tools kingman scipy \
    --python $PY --kingman "$KINGMAN" --kingman-threads 16 --csv "$RES/compare_t16.csv" 2>&1 |
    tail -6 | tee -a "$RES/compare.txt"
  timeout 40 $PY bench/compare_linkage.py --n $N10K --repeats 3 --tools kingman \
    --python $PY --kingman "$KINGMAN" --kingman-threads 1 --csv "$RES/compare_t1.csv" 2>&1 |
    tail -6 | tee -a "$RES/compare.txt"
  pack
}

step5() {
  log "5. race, 64 particles, n = $RACE_N, d = 20, on 16 threads"
  "$KINGMAN" generate -n $RACE_N -d 20 --seed 1 --data /tmp/race.csv >/dev/null
  timeout 120 /usr/bin/time -v "$KINGMAN" fit /tmp/race.csv -a race -p 64 --covariance identity \
    --seed 1 --threads 16 --json "$RES/race.json" --linkage /tmp/race_linkage.csv \
    >"$RES/race_stdout.txt" 2>"$RES/race_time.txt"
  echo "rc $?" >>"$RES/race_time.txt"
  grep -E "Elapsed|Maximum resident|User time|System time|rc " "$RES/race_time.txt"
  md5sum /tmp/race_linkage.csv | tee -a "$RES/race_time.txt"
  pack
}

step6() {
  log "6. Greedy-Rate1: full pair cache against the bounded path on $CROSS_T threads"
  timeout 300 $PY bench/pair_storage_crossover.py --kingman "$KINGMAN" --n $CROSS_N --d 20 \
    --threads $CROSS_T --rounds $CROSS_ROUNDS --out /tmp/crossover 2>&1 | tee "$RES/crossover.txt"
  cp /tmp/crossover/crossover.csv "$RES/" 2>/dev/null
  pack
}

for step in $STEPS; do "step$step"; done
log "done"
