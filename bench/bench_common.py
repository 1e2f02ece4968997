"""Helpers shared by the whole-process benchmark scripts (compare_linkage.py, scaling_sweep.py).

- make_blobs: the Gaussian-blob data set used by compare_linkage.py.
- PEER_CODE / peer_command: the fastcluster and scipy average-linkage peers, each a small
  Python process that reads a data CSV (an optional header row is skipped), clusters it and
  writes a linkage CSV (a,b,height,size).
- run_measured: runs one child process and returns its wall time and CPU time (user + sys),
  from wait4's rusage of that child alone, and its peak resident memory (GNU time's %M where
  installed: see run_measured).
- check_linkage, find_program, machine_description, load_average.
"""
import os
import platform
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

import numpy as np

PEER_TOOLS = ("fastcluster", "scipy")

PEER_CODE = r"""
import sys
import numpy as np
method, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
with open(src) as f:
    first = f.readline()
try:
    [float(v) for v in first.split(",")]
    skip = 0
except ValueError:
    skip = 1  # a header row, as written by `kingman generate`
X = np.loadtxt(src, delimiter=",", ndmin=2, skiprows=skip)
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


def peer_command(python, tool, data_path, out_path):
    """Command line of a peer ('fastcluster' or 'scipy'): average linkage, whole process."""
    if tool not in PEER_TOOLS:
        raise ValueError(f"unknown peer tool '{tool}'")
    return [python, "-c", PEER_CODE, tool, data_path, out_path]


def make_blobs(n, d, clusters, seed):
    """n points around `clusters` centres: centres ~ N(0, 5^2 I), points ~ centre + N(0, I)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    centres = rng.normal(0.0, 5.0, size=(clusters, d))
    which = rng.integers(0, clusters, size=n)
    return centres[which] + rng.normal(0.0, 1.0, size=(n, d))


GNU_TIME = "/usr/bin/time"


def _have_gnu_time():
    try:
        out = subprocess.run([GNU_TIME, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return "GNU" in out.stdout + out.stderr


HAVE_GNU_TIME = _have_gnu_time()


@dataclass
class Measurement:
    wall_s: float      # elapsed time from start to reaping the child
    cpu_s: float       # user + system CPU time of the child (and its waited-for descendants)
    user_s: float
    sys_s: float
    peak_rss_mib: float  # peak resident set size of the measured program, MiB
    status: int        # exit status; negative: killed by that signal
    timed_out: bool
    rss_from: str      # 'gnu-time' or 'wait4' (see run_measured)


def run_measured(cmd, log_path, timeout):
    """Runs cmd with stdout and stderr appended to log_path and returns a Measurement.

    Wall and CPU time: the child is reaped with a blocking os.wait4 on its pid, so the resource
    usage is that of this one child (with its own reaped descendants), and the wall time ends
    when it exits. A timer kills the child's process group after `timeout` seconds.

    Peak RSS: Linux keeps a process's peak RSS across fork and exec, so ru_maxrss of a child
    started from this (numpy-sized) interpreter is at least the interpreter's own RSS, ~35 MiB.
    Where GNU time is installed (/usr/bin/time, Debian package `time`), the command runs under
    it and the peak RSS is GNU time's %M, i.e. wait4's ru_maxrss of a child forked from that
    small program (a floor of ~1 MiB); otherwise it is this child's ru_maxrss ('wait4').
    """
    rss_file = None
    if HAVE_GNU_TIME:
        rss_file = log_path + ".rss"
        cmd = [GNU_TIME, "-f", "%M", "-o", rss_file] + list(cmd)
    with open(log_path, "ab") as log:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        killed = threading.Event()

        def kill():
            killed.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak_kib, rss_from = usage.ru_maxrss, "wait4"  # ru_maxrss is in KiB on Linux
    if rss_file is not None:
        try:
            with open(rss_file) as f:
                lines = f.read().split()
            peak_kib, rss_from = int(lines[-1]), "gnu-time"
        except (OSError, ValueError, IndexError):
            pass
        try:
            os.remove(rss_file)
        except OSError:
            pass
    return Measurement(wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime,
                       user_s=usage.ru_utime, sys_s=usage.ru_stime,
                       peak_rss_mib=peak_kib / 1024.0, status=proc.returncode,
                       timed_out=killed.is_set(), rss_from=rss_from)


def check_linkage(path, n):
    """None if the file is a complete linkage of n leaves, else the reason it is not."""
    try:
        Z = np.loadtxt(path, delimiter=",", ndmin=2)
    except Exception as e:  # noqa: BLE001 - report any parse failure
        return f"unreadable linkage ({e})"
    if Z.shape != (n - 1, 4):
        return f"linkage has shape {Z.shape}, expected ({n - 1}, 4)"
    if int(Z[-1, 3]) != n:
        return f"last merge has size {int(Z[-1, 3])}, expected {n}"
    return None


def find_program(path):
    """Absolute path of an executable given as a path or a name on PATH, or None."""
    found = shutil.which(path) or (path if os.path.isfile(path) else None)
    return os.path.abspath(found) if found else None


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


def load_average():
    """The 1, 5 and 15 minute load averages as a string, e.g. '1.20 0.95 0.80'."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"
