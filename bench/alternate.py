#!/usr/bin/env python3
"""Runs commands alternately and reports the median wall and CPU time of each, and of each
command against the first, round by round.

On a shared machine whose speed drifts from minute to minute, timing one binary after another
compares two different machines; alternating them (and reversing the order every other round)
puts both under the same drift. CPU time is user + system of the process and its threads
(os.wait4), so a 2-thread run's CPU time includes any time its second thread spent waiting.

    /usr/bin/python3 bench/alternate.py --rounds 21 \\
        'old/kingman fit g64.csv -a mpost2 -p 100 --covariance identity --threads 1 --linkage /dev/null' \\
        'build/bin/kingman fit g64.csv -a mpost2 -p 100 --covariance identity --threads 1 --linkage /dev/null'

With --benchmark FILTER the commands are Google Benchmark programs instead (bench/README.md):
each run is one call of the program on the one benchmark that FILTER selects, with
--repetitions repetitions, and its wall and CPU times are the median repetition's real_time
and cpu_time; so the engine is timed without the process's start-up.

    /usr/bin/python3 bench/alternate.py --rounds 9 --benchmark 'Mpost2/n:64/d:64/N:100/threads:1' \\
        old/bench/smc_bench build/bench/smc_bench

Prints, per command: median wall and CPU in ms with their quartiles (and user time alone, for
commands); then, per command after
the first, the median of its round-by-round ratios to the first command (each round's pair ran
within seconds, under the same drift) with a 95 % confidence interval for that median from the
ratios' order statistics (distribution-free). Exits non-zero if any run fails (its output is
shown).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time


# Characters that need a shell; a command without them is run directly.
SHELL_SYNTAX = set("|&;<>()$`\\\"'*?[]#~{}\n")


def direct_arguments(command):
    """The command's program and arguments, and the NAME=VALUE assignments before them, when it
    needs no shell; else None. Starting /bin/sh first added 0.5-0.8 ms to every run's wall time
    (a 'hello world' took 1.26-1.63 ms through the shell and 0.7-0.8 ms exec'd directly;
    bench/RESULTS.md, thirty-first session), which matters for runs of a few milliseconds."""
    if any(character in SHELL_SYNTAX for character in command):
        return None
    words = command.split()
    environment = {}
    while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        name, value = words.pop(0).split("=", 1)
        environment[name] = value
    return (words, environment) if words else None


def run_once(command):
    direct = direct_arguments(command)
    start = time.perf_counter()
    if direct is None:
        process = subprocess.Popen(command, shell=True, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE)
    else:
        arguments, environment = direct
        process = subprocess.Popen(arguments, env={**os.environ, **environment},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    error = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"alternate.py: '{command}' failed:\n{error}")
    return wall * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3, usage.ru_utime * 1e3


MILLISECONDS_PER_UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def run_benchmark_once(program, benchmark_filter, repetitions):
    """The median repetition's real and CPU time (ms) of the one benchmark that the filter
    selects in a Google Benchmark program."""
    arguments = [program, f"--benchmark_filter={benchmark_filter}",
                 f"--benchmark_repetitions={repetitions}",
                 "--benchmark_report_aggregates_only=true", "--benchmark_format=json"]
    result = subprocess.run(arguments, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"alternate.py: '{' '.join(arguments)}' failed:\n{result.stderr}")
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError as error:
        sys.exit(f"alternate.py: {program} did not print a JSON report ({error})")
    # One repetition is reported as its run; more as aggregates, of which the median is taken.
    entries = report.get("benchmarks", [])
    if repetitions == 1:
        medians = [entry for entry in entries if entry.get("run_type") == "iteration"]
    else:
        medians = [entry for entry in entries if entry.get("aggregate_name") == "median"]
    names = sorted({entry.get("run_name", entry.get("name", "?")) for entry in medians})
    if len(names) != 1:
        found = ", ".join(names) if names else "none"
        sys.exit(f"alternate.py: --benchmark '{benchmark_filter}' must select exactly one "
                 f"benchmark of {program}; it selected: {found}")
    entry = medians[0]
    scale = MILLISECONDS_PER_UNIT.get(entry.get("time_unit", "ns"))
    if scale is None:
        sys.exit(f"alternate.py: unknown time unit '{entry.get('time_unit')}' in {program}'s report")
    return entry["real_time"] * scale, entry["cpu_time"] * scale, None


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def median_interval(values, confidence=0.95):
    """A distribution-free interval for the median: order statistics k and n + 1 - k, with k the
    largest for which P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2. None when n is too small
    for any k >= 1 (n < 6 at 95 %)."""
    ordered = sorted(values)
    n = len(ordered)
    tail = (1.0 - confidence) / 2.0
    k, below = 0, 0.0
    while k < n // 2:
        below_next = below + math.comb(n, k) / 2.0**n  # P(Binomial < k + 1)
        if below_next > tail:
            break
        below = below_next
        k += 1
    if k == 0:
        return None
    return ordered[k - 1], ordered[n - k]


def percent(ratio):
    return f"{100.0 * (ratio - 1.0):+.1f} %"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=11, help="runs of each command")
    parser.add_argument("--benchmark", metavar="FILTER",
                        help="the commands are Google Benchmark programs; time the one "
                             "benchmark this filter selects")
    parser.add_argument("--repetitions", type=int, default=5,
                        help="with --benchmark: repetitions per run (their median is the run's)")
    parser.add_argument("commands", nargs="+",
                        help="commands to compare: run directly (with any leading NAME=VALUE "
                             "assignments as environment) unless they need a shell")
    args = parser.parse_args()
    if args.rounds < 1 or args.repetitions < 1:
        sys.exit("alternate.py: --rounds and --repetitions must be at least 1")

    def run(command):
        if args.benchmark is not None:
            return run_benchmark_once(command, args.benchmark, args.repetitions)
        return run_once(command)

    # Per command: wall, CPU and user times of each round (user None for benchmarks).
    times = {command: ([], [], []) for command in args.commands}
    for round_index in range(args.rounds):
        order = args.commands if round_index % 2 == 0 else args.commands[::-1]
        for command in order:
            for series, value in zip(times[command], run(command)):
                series.append(value)
    print(f"{args.rounds} rounds, load average {os.getloadavg()[0]:.2f}")
    # User time apart from CPU time: a process's system time here can swing by hundreds of
    # milliseconds from run to run with the host's cost of backing fresh pages (a 400 MB pair
    # matrix: 0.04-0.40 s), which can hide a thread count's cost in user time.
    with_user = args.benchmark is None
    for command in args.commands:
        wall, cpu, user = times[command]
        wq, cq = quartiles(wall), quartiles(cpu)
        user_part = f"user {statistics.median(user):9.2f} ms   " if with_user else ""
        print(f"wall {statistics.median(wall):9.2f} ms [{wq[0]:.2f}, {wq[1]:.2f}]   "
              f"cpu {statistics.median(cpu):9.2f} ms [{cq[0]:.2f}, {cq[1]:.2f}]   "
              f"{user_part}{command}")
    first = args.commands[0]
    labels = (("wall", 0), ("cpu", 1), ("user", 2)) if with_user else (("wall", 0), ("cpu", 1))
    for command in args.commands[1:]:
        parts = []
        for label, index in labels:
            ratios = [b / a for a, b in zip(times[first][index], times[command][index])]
            interval = median_interval(ratios)
            bounds = (f" [{percent(interval[0])}, {percent(interval[1])}]" if interval
                      else " (too few rounds for a 95 % interval)")
            parts.append(f"{label} {percent(statistics.median(ratios))}{bounds}")
        print(f"against the first, round by round: {', '.join(parts)}   {command}")


if __name__ == "__main__":
    main()
