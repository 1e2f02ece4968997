#!/usr/bin/env python3
"""Runs whole-process commands alternately and reports the median wall and CPU time of each.

On a shared machine whose speed drifts from minute to minute, timing one binary after another
compares two different machines; alternating them (and reversing the order every other round)
puts both under the same drift. CPU time is user + system of the process and its threads
(os.wait4), so a 2-thread run's CPU time includes any time its second thread spent waiting.

    /usr/bin/python3 bench/alternate.py --rounds 21 \\
        'old/kingman fit g64.csv -a mpost2 -p 100 --covariance identity --threads 1 --linkage /dev/null' \\
        'build/bin/kingman fit g64.csv -a mpost2 -p 100 --covariance identity --threads 1 --linkage /dev/null'

Prints, per command: median wall and CPU in ms with their quartiles. Exits non-zero if any run
fails (its output is shown).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def run_once(command):
    start = time.perf_counter()
    process = subprocess.Popen(command, shell=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    error = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"alternate.py: '{command}' failed:\n{error}")
    return wall * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=11, help="runs of each command")
    parser.add_argument("commands", nargs="+", help="shell commands to compare")
    args = parser.parse_args()
    times = {command: ([], []) for command in args.commands}
    for round_index in range(args.rounds):
        order = args.commands if round_index % 2 == 0 else args.commands[::-1]
        for command in order:
            wall, cpu = run_once(command)
            times[command][0].append(wall)
            times[command][1].append(cpu)
    print(f"{args.rounds} rounds, load average {os.getloadavg()[0]:.2f}")
    for command in args.commands:
        wall, cpu = times[command]
        wq, cq = quartiles(wall), quartiles(cpu)
        print(f"wall {statistics.median(wall):9.2f} ms [{wq[0]:.2f}, {wq[1]:.2f}]   "
              f"cpu {statistics.median(cpu):9.2f} ms [{cq[0]:.2f}, {cq[1]:.2f}]   {command}")


if __name__ == "__main__":
    main()
