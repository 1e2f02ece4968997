#!/usr/bin/python3
"""Reference values of log K_nu(z) for tests/data/log_bessel_k_table.csv, and the Debye
coefficients used by kernels/src/log_bessel_k.cpp.

    /usr/bin/python3 kernels/tools/make_bessel_table.py > tests/data/log_bessel_k_table.csv
    /usr/bin/python3 kernels/tools/make_bessel_table.py --debye-coefficients

The reference does not use mpmath.besselk (slow and sometimes stuck for nu ~ z ~ 500): it
integrates the representation K_nu(z) = int_0^inf exp(-z cosh t) cosh(nu t) dt at 30 digits,
in log space relative to the integrand's maximum, over the window where the integrand is within
e^-110 of it. A sample of rows is cross-checked against mpmath.besselk where that is quick.
Inputs are written with repr() so that the C++ test reads back exactly the doubles used here.
"""
import math
import sys
from fractions import Fraction

import mpmath as mp

mp.mp.dps = 30

# Branch switch points of kernels/src/log_bessel_k.cpp (keep in sync).
DEBYE_MIN_ORDER = 25.0
STEED_MIN_Z = 2.0


def log_bessel_k_reference(nu, z):
    nu = abs(mp.mpf(nu))
    z = mp.mpf(z)

    def g(t):  # log of the integrand; log cosh(a) written to avoid overflow
        a = nu * t
        return -z * mp.cosh(t) + (a + mp.log1p(mp.exp(-2 * a)) - mp.log(2))

    def dg(t):
        return -z * mp.sinh(t) + nu * mp.tanh(nu * t)

    if nu * nu <= z:  # g''(0) = nu^2 - z <= 0 and g is concave after that: maximum at 0
        t_max = mp.mpf(0)
    else:
        lo, hi = mp.mpf(0), mp.asinh(nu / z) + 1
        for _ in range(200):
            mid = (lo + hi) / 2
            if dg(mid) > 0:
                lo = mid
            else:
                hi = mid
        t_max = (lo + hi) / 2
    g_max = g(t_max)
    drop = mp.mpf(110)
    step = (z * z + nu * nu) ** mp.mpf(-0.25)
    hi = t_max + step
    while g(hi) > g_max - drop:
        step *= 2
        hi = t_max + step
    lo = t_max
    for _ in range(100):
        mid = (lo + hi) / 2
        if g(mid) > g_max - drop:
            lo = mid
        else:
            hi = mid
    t_end = hi
    t_start = mp.mpf(0)
    if t_max > 0 and g(0) < g_max - drop:
        lo, hi = mp.mpf(0), t_max
        for _ in range(100):
            mid = (lo + hi) / 2
            if g(mid) < g_max - drop:
                lo = mid
            else:
                hi = mid
        t_start = lo
    pieces = 24
    points = [t_start + (t_end - t_start) * i / pieces for i in range(pieces + 1)]
    integral = mp.quad(lambda t: mp.exp(g(t) - g_max), points)
    return mp.log(integral) + g_max


def orders():
    values = [0.0, 1e-8, 1e-3, -1e-3, 0.25, -0.25, 1 / 3, -1 / 3, 0.4999999999, 0.5,
              0.5000000001, 0.75, 1.0, 1.5, 2.0, 2.4999999999, 2.5, 2.5000000001, 3.0, math.pi,
              5.5, 7.25, 10.0, 12.5, 17.7, 20.0, 23.5, 24.5, 24.9999999, 24.999999999999996,
              25.0, 25.0000001, 25.5, 26.0, 30.0, 37.3, 50.0, 64.5, 100.0, 150.25, 200.0, 256.0,
              333.3, 400.5, 499.0, 499.99, 500.0, -2.5, -7.5, -30.0, -128.0, -499.0, -500.0]
    return values


def arguments(nu):
    decades = [10.0 ** (k / 4) for k in range(-40, 21)]  # 1e-10 .. 1e5, four per decade
    near_switch = [1.5, 1.9, 1.99, 1.9999999, math.nextafter(STEED_MIN_Z, 0), STEED_MIN_Z,
                   math.nextafter(STEED_MIN_Z, 4), 2.0000001, 2.01, 2.1, 2.5]
    a = abs(nu)
    turning = [x for x in (0.6627 * a, a, 2 * a, 7.3) if 1e-10 <= x <= 1e5]
    return sorted(set(decades + near_switch + turning))


def debye_coefficients(count):
    """u_k(t) = t^k P_k(t^2) (DLMF 10.41.9-10); returns the coefficients of P_1..P_count."""
    def derivative(c):
        return [j * c[j] for j in range(1, len(c))]

    def integral(c):
        return [Fraction(0)] + [c[j] / (j + 1) for j in range(len(c))]

    def multiply(a, b):
        out = [Fraction(0)] * (len(a) + len(b) - 1)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                out[i + j] += x * y
        return out

    def add(a, b):
        n = max(len(a), len(b))
        return [(a[i] if i < len(a) else 0) + (b[i] if i < len(b) else 0) for i in range(n)]

    u = [[Fraction(1)]]
    for _ in range(count):
        uk = u[-1]
        first = multiply([0, 0, Fraction(1, 2), 0, Fraction(-1, 2)], derivative(uk)) \
            if len(uk) > 1 else [Fraction(0)]
        second = [x / 8 for x in integral(multiply([1, 0, -5], uk))]
        u.append(add(first, second))
    rows = []
    for k in range(1, count + 1):
        c = u[k]
        rows.append([c[k + 2 * j] for j in range((len(c) - 1 - k) // 2 + 1)])
    return rows


def main():
    if "--debye-coefficients" in sys.argv:
        for row in debye_coefficients(12):
            print("    " + ", ".join("%.17g" % float(x) for x in row) + ",")
        return
    print("nu,z,log_k")
    checked = 0
    for nu in orders():
        for z in arguments(nu):
            value = log_bessel_k_reference(nu, z)
            if z in (0.5, 7.3) and abs(nu) < 100:  # cheap independent cross-check
                other = mp.log(mp.besselk(abs(nu), z))
                assert abs(other - value) < mp.mpf(10) ** -20 * max(1, abs(value)), (nu, z)
                checked += 1
            print("%r,%r,%s" % (nu, z, mp.nstr(value, 22)), flush=True)
    print("cross-checked %d values against mpmath.besselk" % checked, file=sys.stderr)


if __name__ == "__main__":
    main()
