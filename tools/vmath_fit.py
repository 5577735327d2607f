"""Fit the polynomial coefficients of src/kernels/vmath (minimax, weighted Remez).

Run with any Python that has mpmath (e.g. torch's venv): `python tools/vmath_fit.py [name]`.
Each fit prints its coefficients rounded to the target precision, and the weighted error
of the rounded polynomial over the interval in units of 2^-p (p = 53 or 24).
"""

import os
import struct
import sys

import mpmath as mp

mp.mp.dps = 60


def round_to(x, prec):
    """x rounded to the nearest f64 (prec 53) or f32 (prec 24)."""
    v = float(x)
    if prec == 24:
        v = struct.unpack("f", struct.pack("f", v))[0]
    return v


def remez(g, w, a, b, n, basis=lambda i, t: t**i, grid=4000, iters=30):
    """c[0..n) minimising max |w(t) (g(t) - sum c_i basis(i, t))| on [a, b]."""
    ts = [a + (b - a) * (1 - mp.cos(mp.pi * (j + 0.5) / grid)) / 2 for j in range(grid)]
    gs = [g(t) for t in ts]
    ws = [w(t) for t in ts]
    phi = [[basis(i, t) for i in range(n)] for t in ts]
    ref = [int(round((grid - 1) * (1 - mp.cos(mp.pi * j / n)) / 2)) for j in range(n + 1)]
    c, E = None, None
    for _ in range(iters):
        A = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for r, j in enumerate(ref):
            for i in range(n):
                A[r, i] = phi[j][i]
            A[r, n] = (-1) ** r / ws[j]
            rhs[r] = gs[j]
        sol = mp.lu_solve(A, rhs)
        c = [sol[i] for i in range(n)]
        E = abs(sol[n])
        err = [ws[j] * (gs[j] - mp.fsum(ci * p for ci, p in zip(c, phi[j]))) for j in range(grid)]
        # Local extrema with alternating signs, keeping the largest of each sign run.
        ext = []
        for j in range(grid):
            left = err[j - 1] if j > 0 else -err[j] * 0
            right = err[j + 1] if j + 1 < grid else -err[j] * 0
            if abs(err[j]) >= abs(left) and abs(err[j]) >= abs(right):
                if ext and mp.sign(err[ext[-1]]) == mp.sign(err[j]):
                    if abs(err[j]) > abs(err[ext[-1]]):
                        ext[-1] = j
                else:
                    ext.append(j)
        while len(ext) > n + 1:
            # Drop the smaller end (keeps alternation).
            if abs(err[ext[0]]) < abs(err[ext[-1]]):
                ext.pop(0)
            else:
                ext.pop()
        if len(ext) < n + 1:
            break
        maxerr = max(abs(e) for e in err)
        ref = ext
        if maxerr <= E * (1 + mp.mpf("1e-6")):
            break
    return c


def report(name, c, g, w, a, b, prec, basis=lambda i, t: t**i):
    cr = [round_to(ci, prec) for ci in c]
    ts = [a + (b - a) * j / 20000 for j in range(20001)]
    worst = max(abs(w(t) * (g(t) - mp.fsum(mp.mpf(ci) * basis(i, t) for i, ci in enumerate(cr)))) for t in ts if t != 0)
    print(f"// {name}: {len(c)} coefficients, max weighted error {float(worst * 2**prec):.4f} * 2^-{prec}")
    kind = "f64" if prec == 53 else "f32"
    print(f"const {name}: [f64; {len(c)}] = [")
    for ci in cr:
        print(f"    {ci!r},")
    print("];  # as", kind)
    return cr


LN2 = mp.log(2)
FITS = {}


def fit(fn):
    FITS[fn.__name__] = fn
    return fn


def exp_fit(prec, n):
    # exp(r) = 1 + r + r^2 P(r), relative error.
    h = LN2 / 2 * mp.mpf("1.0001")
    g = lambda r: (mp.exp(r) - 1 - r) / r**2
    w = lambda r: r**2 / mp.exp(r)
    c = remez(g, w, -h, h, n)
    return report(f"EXP_P{prec}", c, g, w, -h, h, prec)


@fit
def exp64():
    exp_fit(53, int(os.environ.get("N", 11)))


@fit
def exp32():
    exp_fit(24, int(os.environ.get("N", 5)))


def expm1_fit(prec, n):
    # expm1(r) = r + r^2/2 + r^3 P(r), relative error.
    h = LN2 / 2 * mp.mpf("1.0001")
    g = lambda r: (mp.expm1(r) - r - r**2 / 2) / r**3
    w = lambda r: r**3 / mp.expm1(r)
    c = remez(g, w, -h, h, n)
    return report(f"EXPM1_P{prec}", c, g, w, -h, h, prec)


@fit
def expm164():
    expm1_fit(53, int(os.environ.get("N", 11)))


@fit
def expm132():
    expm1_fit(24, int(os.environ.get("N", 5)))


def log_fit(prec, n):
    # log(1+f) = 2 atanh(s) = 2s + s z Q(z), s = f/(2+f), z = s^2; error relative to 2s.
    smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1) * mp.mpf("1.0001")
    zmax = smax**2

    def g(z):
        s = mp.sqrt(z)
        return (2 * mp.atanh(s) / s - 2) / z

    w = lambda z: z / 2
    c = remez(g, w, mp.mpf(0) + zmax * mp.mpf("1e-12"), zmax, n)
    return report(f"LOG_Q{prec}", c, g, w, zmax * mp.mpf("1e-9"), zmax, prec)


@fit
def log64():
    log_fit(53, int(os.environ.get("N", 7)))


@fit
def log32():
    log_fit(24, int(os.environ.get("N", 3)))


def sin_fit(prec, n):
    rmax = mp.pi / 4 * mp.mpf("1.0001")

    def g(z):
        r = mp.sqrt(z)
        return (mp.sin(r) - r) / (r * z)

    def w(z):
        r = mp.sqrt(z)
        return r * z / mp.sin(r)

    c = remez(g, w, rmax**2 * mp.mpf("1e-12"), rmax**2, n)
    return report(f"SIN_S{prec}", c, g, w, rmax**2 * mp.mpf("1e-9"), rmax**2, prec)


def cos_fit(prec, n):
    rmax = mp.pi / 4 * mp.mpf("1.0001")
    g = lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z**2
    w = lambda z: z**2 / mp.cos(mp.sqrt(z))
    c = remez(g, w, rmax**2 * mp.mpf("1e-12"), rmax**2, n)
    return report(f"COS_C{prec}", c, g, w, rmax**2 * mp.mpf("1e-9"), rmax**2, prec)


@fit
def sin64():
    sin_fit(53, int(os.environ.get("N", 6)))


@fit
def sin32():
    sin_fit(24, int(os.environ.get("N", 3)))


@fit
def cos64():
    cos_fit(53, int(os.environ.get("N", 6)))


@fit
def cos32():
    cos_fit(24, int(os.environ.get("N", 3)))


def erf_small_fit(prec, n, x0):
    # erf(x) = x + x P(x^2), relative error (the 1 is exact, so P(0) = 2/sqrt(pi) - 1 keeps
    # the leading term's rounding small).
    g = lambda z: mp.erf(mp.sqrt(z)) / mp.sqrt(z) - 1
    w = lambda z: mp.sqrt(z) / mp.erf(mp.sqrt(z))
    c = remez(g, w, x0**2 * mp.mpf("1e-12"), x0**2, n)
    return report(f"ERF_SMALL{prec}", c, g, w, x0**2 * mp.mpf("1e-9"), x0**2, prec)


def erfc_fit(prec, n, a, b, shift):
    # erfc(x) = exp(-x^2) G(u - mid), u = 1/(x + shift) over x in [a, b]; error absolute (erf
    # is about 1 there). G is erfcx, which behaves like 1/x: smooth in u.
    ua, ub = 1 / (b + shift), 1 / (a + shift)
    mid = (ua + ub) / 2
    x = lambda t: 1 / (t + mid) - shift
    g = lambda t: mp.erfc(x(t)) * mp.exp(x(t) ** 2)
    w = lambda t: mp.exp(-x(t) ** 2)
    c = remez(g, w, ua - mid, ub - mid, n)
    print(f"// u centre {float(mid)!r}")
    return report(f"ERFC_G{prec}", c, g, w, ua - mid, ub - mid, prec)


ERF_SPLIT = mp.mpf("0.875")


@fit
def erf64():
    erf_small_fit(53, int(os.environ.get("N", 11)), ERF_SPLIT)


@fit
def erfc64():
    # erf rounds to 1 above 5.921.
    erfc_fit(53, int(os.environ.get("N", 16)), ERF_SPLIT, mp.mpf("5.95"), 4)


@fit
def erf32():
    erf_small_fit(24, int(os.environ.get("N", 5)), ERF_SPLIT)


@fit
def erfc32():
    # erff rounds to 1 above 3.92.
    erfc_fit(24, int(os.environ.get("N", 7)), ERF_SPLIT, mp.mpf("3.95"), 2)


if __name__ == "__main__":
    FITS[sys.argv[1]]()
