#!/usr/bin/python3
"""Reference values of the incomplete GIG integrals for tests/data/gig_integral_table.csv.

    /usr/bin/python3 kernels/tools/make_gig_table.py > tests/data/gig_integral_table.csv

Each row is p, chi, psi, r, log_upper, log_lower with
    log_upper = log int_r^inf s^(p-1) exp(-(chi/s + psi s)/2) ds,
    log_lower = log int_0^r  (same integrand)  (-inf written as -inf).
Computed with mpmath at 40 digits in u = log s: the integrand's maximum on each side of r is
found by bisection, the window where it is within e^-120 of that maximum is split into 32
pieces and integrated with mpmath.quad. Rows with r = 0 are checked against the Bessel formula
2 (chi/psi)^(p/2) K_p(sqrt(chi psi)), rows with chi = 0 (and r > 0) against the gamma tail computed
another way (gamma_tail_reference). Parameters cover the SMC's ranges: p = 1 - d/2 for d in {1, 2, 3, 20, 256, 1000},
chi in [0, 1e6], psi in [1e-3, 1e7], r in [0, 1e4], with r placed around the mode and far
into both tails.
"""
import math
import sys

import mpmath as mp

mp.mp.dps = 40
DROP = 120


def phi(p, chi, psi, u):
    return p * u - (chi * mp.exp(-u) + psi * mp.exp(u)) / 2


def log_mode(p, chi, psi):
    if chi == 0:
        return mp.log(2 * p / psi) if p > 0 else -mp.inf
    root = mp.sqrt(p * p + chi * psi)
    return mp.log((p + root) / psi) if p >= 0 else mp.log(chi / (root - p))


def find_level(f, start, direction, level):
    """Point beyond `start` (where f >= level) along direction at which f falls to `level`."""
    step = mp.mpf(1) / 16
    far = start + direction * step
    while f(far) > level:
        step *= 2
        far = start + direction * step
    near = start
    for _ in range(120):
        mid = (near + far) / 2
        if f(mid) > level:
            near = mid
        else:
            far = mid
    return far


def log_integral(p, chi, psi, a, b):
    """log of the integral over u in [a, b] (a may be -inf, b may be +inf)."""
    p, chi, psi = mp.mpf(p), mp.mpf(chi), mp.mpf(psi)
    f = lambda u: phi(p, chi, psi, u)
    m = log_mode(p, chi, psi)
    m = max(a, min(b, m))
    if m == -mp.inf:
        return mp.inf
    top = f(m)
    level = top - DROP
    lo = a if (a != -mp.inf and f(a) >= level) else find_level(f, m, -1, level)
    hi = b if (b != mp.inf and f(b) >= level) else find_level(f, m, +1, level)
    lo, hi = max(lo, a), min(hi, b)
    pieces = 32
    points = [lo + (hi - lo) * i / pieces for i in range(pieces + 1)]
    value = mp.quad(lambda u: mp.exp(f(u) - top), points)
    return mp.log(value) + top


def bessel_reference(p, chi, psi):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from make_bessel_table import log_bessel_k_reference
    z = mp.sqrt(mp.mpf(chi)) * mp.sqrt(mp.mpf(psi))
    return mp.log(2) + p / 2 * (mp.log(chi) - mp.log(psi)) + log_bessel_k_reference(p, z)


def gamma_tail_reference(p, psi, r):
    """log int_r^inf s^(p-1) e^(-psi s/2) ds, independently: for p > 0 through mpmath's
    incomplete gamma function, (2/psi)^p Gamma(p, psi r/2); for p <= 0 (where mpmath's
    gammainc loses all precision at large arguments) by quadrature in s itself, relative to
    the integrand at r, over breakpoints spaced by the e-folding length 2/psi."""
    p, psi, r = mp.mpf(p), mp.mpf(psi), mp.mpf(r)
    if p > 0:
        return p * mp.log(2 / psi) + mp.log(mp.gammainc(p, psi * r / 2, mp.inf))
    log_at_r = (p - 1) * mp.log(r) - psi * r / 2
    scale = 2 / psi
    points = [r + scale * k for k in (0, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256)] + [mp.inf]
    integral = mp.quad(lambda s: mp.exp((p - 1) * mp.log(s) - psi * s / 2 - log_at_r), points)
    return mp.log(integral) + log_at_r


def radii(p, chi, psi):
    """r values: fixed points, multiples of the mode, and points far in both tails."""
    s_mode = float(mp.exp(log_mode(mp.mpf(p), mp.mpf(chi), mp.mpf(psi))))
    values = {0.0, 1e-6, 1e-2, 1.0, 1e4}
    for factor in (1e-3, 0.5, 1.0, 2.0, 10.0):
        values.add(s_mode * factor)
    # where the upper tail is about e^-30 and e^-300 below its peak: psi s / 2 ~ that much more
    for extra in (30.0, 300.0):
        values.add(s_mode + 2 * extra / psi)
    return sorted(v for v in values if v == 0.0 or 1e-300 < v <= 1e4)


def fmt(x):
    if x == mp.inf:
        return "inf"
    if x == -mp.inf:
        return "-inf"
    return mp.nstr(x, 20)


def main():
    orders = [0.5, 0.0, -0.5, -9.0, -127.0, -499.0]  # d = 1, 2, 3, 20, 256, 1000
    chis = [0.0, 1e-8, 0.3, 1e3, 1e6]
    psis = [1e-3, 1.0, 45.0, 4950.0, 1e7]
    print("p,chi,psi,r,log_upper,log_lower")
    checks = 0
    for p in orders:
        for chi in chis:
            for psi in psis:
                for r in radii(p, chi, psi):
                    if chi == 0 and p <= 0 and r == 0:
                        continue  # divergent at 0
                    log_r = mp.log(r) if r > 0 else -mp.inf
                    upper = log_integral(p, chi, psi, log_r, mp.inf)
                    lower = -mp.inf if r == 0 else log_integral(p, chi, psi, -mp.inf, log_r)
                    if r == 0 and chi > 0:
                        other = bessel_reference(p, chi, psi)
                        assert abs(other - upper) < mp.mpf(10) ** -25 * max(1, abs(upper)), \
                            (p, chi, psi)
                        checks += 1
                    if chi == 0 and r > 0:
                        other = gamma_tail_reference(p, psi, r)
                        assert abs(other - upper) < mp.mpf(10) ** -25 * max(1, abs(upper)), \
                            (p, chi, psi, r)
                        checks += 1
                    print("%r,%r,%r,%r,%s,%s" % (p, chi, psi, r, fmt(upper), fmt(lower)),
                          flush=True)
    print("cross-checked %d values" % checks, file=sys.stderr)


if __name__ == "__main__":
    main()
