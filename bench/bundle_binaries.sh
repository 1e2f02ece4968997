#!/bin/bash
# Packs kingman and smc_bench, built here, with the shared libraries they load, so that they run
# on another x86-64 Linux machine that has neither oneTBB nor fmt nor Google Benchmark installed
# (bench/many_core_checks.sh runs them there). lib/ holds the libraries that the programs find
# through LD_LIBRARY_PATH; glibc/ holds this machine's C library and its loader, for a machine
# whose C library is older than the one these programs were linked against.
#
#   bash bench/bundle_binaries.sh build .devrun
set -euo pipefail
build=${1:?build folder}
bundle=${2:?bundle folder}
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/glibc"
cp "$build/bin/kingman" "$build/bench/smc_bench" "$bundle/bin/"
cp -L /usr/bin/time "$bundle/bin/gnutime"  # GNU time (Debian package time)
for program in "$bundle"/bin/kingman "$bundle"/bin/smc_bench; do
  ldd "$program" | awk '$3 ~ /^\// { print $3 }' | while read -r library; do
    case $(basename "$library") in
      libc.so.*|libm.so.*) cp -L "$library" "$bundle/glibc/" ;;
      *) cp -L "$library" "$bundle/lib/" ;;
    esac
  done
done
cp -L /lib64/ld-linux-x86-64.so.2 "$bundle/glibc/"
# oneTBB loads its allocator at run time, when it is there.
for library in /lib/x86_64-linux-gnu/libtbbmalloc.so.2; do
  [ -e "$library" ] && cp -L "$library" "$bundle/lib/"
done
du -sh "$bundle"
