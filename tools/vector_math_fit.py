#!/usr/bin/env python3
"""Prints the polynomial coefficients of operators/elementwise/vector_math.h.

Each is a Chebyshev fit (mpmath.chebyfit, close to minimax) of the smooth
part of a function on the interval its float32 kernel reduces arguments to,
printed highest degree first, with the fit's largest absolute error.
Needs only mpmath (Debian: python3-mpmath):
  python3 tools/vector_math_fit.py
"""
import mpmath as mp

mp.mp.dps = 40


def fit(name, f, a, b, degree):
    poly, err = mp.chebyfit(f, [a, b], degree + 1, error=True)
    print("// %s: degree %d on [%s, %s], largest error %s" %
          (name, degree, mp.nstr(a, 8), mp.nstr(b, 8), mp.nstr(err, 3)))
    print(", ".join("%.9ef" % float(c) for c in poly))


def main():
    # e^r = 1 + r + r^2 q(r), |r| <= ln 2 / 2.
    fit("exp q(r)", lambda r: (mp.exp(r) - 1 - r) / r**2 if r else mp.mpf(1) / 2,
        -0.35, 0.35, 4)
    # log(1 + f) = f - f^2 / 2 + f^3 q(f), 1 + f in [sqrt(1/2), sqrt(2)).
    fit("log q(f)",
        lambda f: (mp.log1p(f) - f + f**2 / 2) / f**3 if f else mp.mpf(1) / 3,
        mp.sqrt(0.5) - 1, mp.sqrt(2) - 1, 8)
    # tanh(x) = x + x^3 q(x^2), |x| < 0.625.
    fit("tanh q(z)",
        lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z)**3
        if z else -mp.mpf(1) / 3, 0, 0.625**2, 5)
    # erf(x) = x p(x^2), |x| <= 1.
    fit("erf p(z)",
        lambda z: mp.erf(mp.sqrt(z)) / mp.sqrt(z) if z else 2 / mp.sqrt(mp.pi),
        0, 1, 6)
    # Phi(-a) = t g(u) e^(-a^2 / 2) with t = 1 / (1 + a / 2) and
    # u = (t - 0.5625) / 0.4375 in [-1, 1] for 0 <= a <= 14.
    def tail(u):
        t = mp.mpf(0.5625) + mp.mpf(0.4375) * u
        a = (1 / t - 1) / mp.mpf(0.5)
        return mp.ncdf(-a) * mp.exp(a * a / 2) / t
    fit("normal tail g(u)", tail, -1, 1, 11)


if __name__ == "__main__":
    main()
