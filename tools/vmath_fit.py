"""Fit the polynomial coefficients of src/kernels/vmath (weighted minimax, Remez exchange).

Needs mpmath (torch's venv has it): `python tools/vmath_fit.py [fit ...] [--n N]`, no fit
names for all of them. Each fit prints its coefficients rounded to the target precision and
the weighted error of the rounded polynomial in units of 2^-p (p = 53 for f64, 24 for f32).
A fit approximates g(t) by sum c_i t^i on [a, b], minimising max |w(t) (g(t) - p(t))|; the
comment on each fit says what g and w are.
"""

import argparse
import struct

import mpmath as mp

mp.mp.dps = 60


def round_to(x, prec):
    """x rounded to the nearest f64 (prec 53) or f32 (prec 24)."""
    v = float(x)
    if prec == 24:
        v = struct.unpack("f", struct.pack("f", v))[0]
    return v


def poly(c, t):
    return mp.fsum(mp.mpf(ci) * t**i for i, ci in enumerate(c))


def remez(g, w, a, b, n, grid=4000, iters=30):
    """c[0..n) minimising max |w(t) (g(t) - sum c_i t^i)| on [a, b], on a Chebyshev grid."""
    ts = [a + (b - a) * (1 - mp.cos(mp.pi * (j + 0.5) / grid)) / 2 for j in range(grid)]
    gs = [g(t) for t in ts]
    ws = [w(t) for t in ts]
    ref = [int(round((grid - 1) * (1 - mp.cos(mp.pi * j / n)) / 2)) for j in range(n + 1)]
    c = None
    for _ in range(iters):
        # Solve for c and the levelled error E on the reference points.
        A = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for r, j in enumerate(ref):
            for i in range(n):
                A[r, i] = ts[j] ** i
            A[r, n] = (-1) ** r / ws[j]
            rhs[r] = gs[j]
        sol = mp.lu_solve(A, rhs)
        c = [sol[i] for i in range(n)]
        level = abs(sol[n])
        err = [ws[j] * (gs[j] - poly(c, ts[j])) for j in range(grid)]
        # New reference: the largest extremum of each run of one sign.
        ext = []
        for j in range(grid):
            left = abs(err[j - 1]) if j > 0 else 0
            right = abs(err[j + 1]) if j + 1 < grid else 0
            if abs(err[j]) < left or abs(err[j]) < right:
                continue
            if ext and mp.sign(err[ext[-1]]) == mp.sign(err[j]):
                if abs(err[j]) > abs(err[ext[-1]]):
                    ext[-1] = j
            else:
                ext.append(j)
        while len(ext) > n + 1:
            ext.pop(0 if abs(err[ext[0]]) < abs(err[ext[-1]]) else -1)
        if len(ext) < n + 1:
            break
        ref = ext
        if max(abs(e) for e in err) <= level * (1 + mp.mpf("1e-6")):
            break
    return c


def report(name, prec, c, g, w, a, b):
    cr = [round_to(ci, prec) for ci in c]
    ts = [a + (b - a) * j / 20000 for j in range(1, 20001)]
    worst = max(abs(w(t) * (g(t) - poly(cr, t))) for t in ts if t != 0)
    print(f"// {name}: {len(c)} coefficients, max weighted error {float(worst * 2**prec):.4f}"
          f" * 2^-{prec}")
    print(f"const {name}: [f64; {len(c)}] = [")
    for ci in cr:
        print(f"    {ci!r},")
    print("];")


LN2 = mp.log(2)
HALF_LN2 = LN2 / 2 * mp.mpf("1.0001")
PI_4 = mp.pi / 4 * mp.mpf("1.0001")
TANH_SMALL = mp.mpf("0.55")
S_MAX = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1) * mp.mpf("1.0001")
ERF_SPLIT = mp.mpf("0.875")
TAN_PI_8 = mp.tan(mp.pi / 8) * mp.mpf("1.0001")


def exp_fit(name, prec, n):
    """exp(r) = 1 + r + r^2 P(r) on |r| <= ln2/2; g = P, error relative to exp(r)."""

    def g(r):
        return (mp.exp(r) - 1 - r) / r**2

    def w(r):
        return r**2 / mp.exp(r)

    report(name, prec, remez(g, w, -HALF_LN2, HALF_LN2, n), g, w, -HALF_LN2, HALF_LN2)


def expm1_fit(name, prec, n):
    """expm1(r) = r + r^2/2 + r^3 P(r) on |r| <= ln2/2; error relative to expm1(r)."""

    def g(r):
        return (mp.expm1(r) - r - r**2 / 2) / r**3

    def w(r):
        return r**3 / mp.expm1(r)

    report(name, prec, remez(g, w, -HALF_LN2, HALF_LN2, n), g, w, -HALF_LN2, HALF_LN2)


def log_fit(name, prec, n):
    """log(1+f) = 2s + s z Q(z), s = f/(2+f), z = s^2; g = Q(z), error relative to 2s."""

    def g(z):
        s = mp.sqrt(z)
        return (2 * mp.atanh(s) / s - 2) / z

    def w(z):
        return z / 2

    a, b = S_MAX**2 * mp.mpf("1e-12"), S_MAX**2
    report(name, prec, remez(g, w, a, b, n), g, w, a, b)


def odd_fit(name, prec, n, fn, top):
    """fn(x) = x + x^3 P(x^2) on |x| <= top, for an odd fn; g = P(z), error relative to
    fn(x)."""

    def g(z):
        x = mp.sqrt(z)
        return (fn(x) - x) / (x * z)

    def w(z):
        x = mp.sqrt(z)
        return x * z / fn(x)

    a, b = top**2 * mp.mpf("1e-12"), top**2
    report(name, prec, remez(g, w, a, b, n), g, w, a, b)


def sin_fit(name, prec, n):
    """sin(r) = r + r^3 S(r^2) on |r| <= pi/4."""
    odd_fit(name, prec, n, mp.sin, PI_4)


def cos_fit(name, prec, n):
    """cos(r) = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4; g = C(z), error relative to cos(r)."""

    def g(z):
        return (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z**2

    def w(z):
        return z**2 / mp.cos(mp.sqrt(z))

    a, b = PI_4**2 * mp.mpf("1e-12"), PI_4**2
    report(name, prec, remez(g, w, a, b, n), g, w, a, b)


def tanh_fit(name, prec, n):
    """tanh(x) = x + x^3 T(x^2) on |x| <= 0.55 (f32's small range)."""
    odd_fit(name, prec, n, mp.tanh, TANH_SMALL)


def atan_fit(name, prec, n):
    """atan(u) = u + u^3 A(u^2) on |u| <= tan(pi/8) (atan2's reduced argument)."""
    odd_fit(name, prec, n, mp.atan, TAN_PI_8)


def erf_fit(name, prec, n):
    """erf(x) = x + x P(x^2) on |x| <= 0.875; g = P(z), error relative to erf(x). The
    leading 1 is exact, so P(0) = 2/sqrt(pi) - 1 keeps the first term's rounding small."""

    def g(z):
        return mp.erf(mp.sqrt(z)) / mp.sqrt(z) - 1

    def w(z):
        return mp.sqrt(z) / mp.erf(mp.sqrt(z))

    a, b = ERF_SPLIT**2 * mp.mpf("1e-12"), ERF_SPLIT**2
    report(name, prec, remez(g, w, a, b, n), g, w, a, b)


def erfc_fit(name, prec, n, top, shift):
    """erfc(x) = e^{-x^2} G(u - mid), u = 1/(x + shift), 0.875 <= x <= top; G is erfcx,
    which behaves like 1/x, so smooth in u. Error absolute (erf is about 1 there)."""
    ua, ub = 1 / (top + shift), 1 / (ERF_SPLIT + shift)
    mid = (ua + ub) / 2

    def x_of(t):
        return 1 / (t + mid) - shift

    def g(t):
        return mp.erfc(x_of(t)) * mp.exp(x_of(t) ** 2)

    def w(t):
        return mp.exp(-x_of(t) ** 2)

    print(f"// u centre {float(mid)!r}")
    report(name, prec, remez(g, w, ua - mid, ub - mid, n), g, w, ua - mid, ub - mid)


# name: (fit, precision, coefficient count, extra arguments)
FITS = {
    "EXP_P64": (exp_fit, 53, 10, ()),
    "EXP_P32": (exp_fit, 24, 5, ()),
    "EXPM1_P64": (expm1_fit, 53, 10, ()),
    "EXPM1_P32": (expm1_fit, 24, 5, ()),
    "LOG_Q64": (log_fit, 53, 7, ()),
    "LOG_Q32": (log_fit, 24, 3, ()),
    "SIN_S64": (sin_fit, 53, 6, ()),
    "SIN_S32": (sin_fit, 24, 3, ()),
    "COS_C64": (cos_fit, 53, 6, ()),
    "COS_C32": (cos_fit, 24, 3, ()),
    "TANH_T32": (tanh_fit, 24, 5, ()),
    "ATAN_A64": (atan_fit, 53, 11, ()),
    "ATAN_A32": (atan_fit, 24, 5, ()),
    "SMALL64": (erf_fit, 53, 11, ()),
    "SMALL32": (erf_fit, 24, 6, ()),
    # erf rounds to 1 above 5.921 (f64) and 3.92 (f32).
    "TAIL64": (erfc_fit, 53, 16, (mp.mpf("5.95"), 4)),
    "TAIL32": (erfc_fit, 24, 7, (mp.mpf("3.95"), 2)),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("fits", nargs="*", help=f"any of {', '.join(FITS)}")
    parser.add_argument("--n", type=int, help="coefficient count, to try another degree")
    args = parser.parse_args()
    for name in args.fits or FITS:
        fit, prec, n, extra = FITS[name]
        fit(name, prec, args.n or n, *extra)


if __name__ == "__main__":
    main()
