#!/usr/bin/env python3
"""bench/kernels/fit_erf.py -- the erf polynomials of ops/kernels/k_vmath.h (kvm_erf16).

    python3 bench/kernels/fit_erf.py

Near-minimax (Chebyshev interpolation, mpmath) fits, printed highest degree
first as Horner coefficients:
  |x| < 1:      erf(x) = x * P(x*x),  P of degree 6 on [0, 1]
  1 <= |x| <= 4: erf(x) = 1 - exp(-x*x) * Q(s), s = (|x| - 2.5) / 1.5,
                 Q(s) = erfc(x) * exp(x*x), degree 11 on [-1, 1]
and the absolute error of each fit on erf (Q's error weighted by exp(-x*x)).
Both are far below float32's half ulp (3e-8 near 1), so the float evaluation
dominates the error (measured <= 3 ulp by tests/unit/check_k_elemfast.c).
"""
import mpmath as mp

mp.mp.dps = 40


def p_target(t):
    if t == 0:
        return 2 / mp.sqrt(mp.pi)
    x = mp.sqrt(t)
    return mp.erf(x) / x


def q_target(s):
    x = mp.mpf(5) / 2 + mp.mpf(3) / 2 * s
    return mp.erfc(x) * mp.exp(x * x)


def show(name, coeffs, err):
    print(f"{name}: error {mp.nstr(err, 3)}")
    print("  " + ", ".join(mp.nstr(c, 12) for c in coeffs))


p, p_err = mp.chebyfit(p_target, [0, 1], 7, error=True)
show("P (t = x*x, x*P(t) for |x| < 1)", p, p_err)
q, q_err = mp.chebyfit(q_target, [-1, 1], 12, error=True)
weighted = max(abs(mp.polyval(q, s) - q_target(s)) * mp.exp(-(mp.mpf(5) / 2 + mp.mpf(3) / 2 * s) ** 2)
               for s in mp.linspace(-1, 1, 401))
show("Q (s = (|x| - 2.5) / 1.5)", q, q_err)
print(f"  error on erf: {mp.nstr(weighted, 3)}")
