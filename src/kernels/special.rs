//! Scalar special functions in float64 (every float dtype computes them here and rounds
//! once): erfc and lgamma from libm, the rest from their textbook formulas —
//! digamma by reflection, recurrence and its asymptotic series; polygamma of order
//! n >= 1 through the Hurwitz zeta function (Euler–Maclaurin summation); erfinv from
//! Giles' single-precision approximation refined by two Newton steps. torch's special
//! values are kept (digamma(±0) = ∓inf, NaN at the poles of negative integers,
//! erfinv(±1) = ±inf).

use std::f64::consts::PI;

pub fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}

pub fn lgamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// sin(pi x) / (pi x), 1 at 0 (torch's formula, so the same rounding).
pub fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        return 1.0;
    }
    let p = PI * x;
    p.sin() / p
}

/// ψ(x) = d/dx ln Γ(x).
pub fn digamma(x: f64) -> f64 {
    if x == 0.0 {
        // torch: the sign of the infinity is the opposite of zero's.
        return (-x).signum() * f64::INFINITY;
    }
    if x < 0.0 {
        if x == x.floor() {
            return f64::NAN;
        }
        // Reflection: ψ(1 - x) - ψ(x) = π cot(π x). tan of π·frac keeps precision.
        let r = x - x.floor();
        return digamma(1.0 - x) - PI / (PI * r).tan();
    }
    let mut x = x;
    let mut acc = 0.0;
    // ψ(x) = ψ(x + 1) - 1/x, up to where the asymptotic series is accurate.
    while x < 10.0 {
        acc -= 1.0 / x;
        x += 1.0;
    }
    // ψ(x) ~ ln x - 1/(2x) - Σ B_2k / (2k x^2k).
    let z = 1.0 / (x * x);
    let series = z
        * (1.0 / 12.0
            - z * (1.0 / 120.0
                - z * (1.0 / 252.0
                    - z * (1.0 / 240.0 - z * (1.0 / 132.0 - z * (691.0 / 32760.0 - z / 12.0))))));
    acc + x.ln() - 0.5 / x - series
}

/// (2k)! / B_2k for k = 1..12: the Euler–Maclaurin tail coefficients of zeta (written
/// with their exact leading digits; f64 rounds them).
#[allow(clippy::excessive_precision)]
const EM: [f64; 12] = [
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1.8924375803183791606e9,
    7.47242496e10,
    -2.950130727918164224e12,
    1.1646782814350067249e14,
    -4.5979787224074726105e15,
    1.8152105401943546773e17,
    -7.1661652561756670113e18,
];

/// The Hurwitz zeta function ζ(s, q) = Σ_k (q + k)^-s, for s > 1.
pub fn zeta(s: f64, q: f64) -> f64 {
    if s == 1.0 {
        return f64::INFINITY;
    }
    if s < 1.0 {
        return f64::NAN;
    }
    if q <= 0.0 {
        if q == q.floor() {
            return f64::INFINITY;
        }
        if s != s.floor() {
            return f64::NAN;
        }
    }
    // Direct sum until the terms are tiny or q + k is large enough for the tail.
    let mut sum = q.powf(-s);
    let mut a = q;
    let mut i = 0;
    while i < 9 || a <= 9.0 {
        i += 1;
        a += 1.0;
        let b = a.powf(-s);
        sum += b;
        if (b / sum).abs() < f64::EPSILON {
            return sum;
        }
    }
    // Tail: ∫ + half the first term + Σ B_2k/(2k)! s(s+1)..(s+2k-2) a^(-s-2k+1).
    let w = a;
    sum += w.powf(1.0 - s) / (s - 1.0);
    sum -= 0.5 * w.powf(-s);
    let mut fac = 1.0;
    let mut k = 0.0;
    let mut wk = w.powf(-s);
    for c in EM {
        fac *= s + k;
        wk /= w;
        let t = fac * wk / c;
        sum += t;
        if (t / sum).abs() < f64::EPSILON {
            break;
        }
        k += 1.0;
        fac *= s + k;
        wk /= w;
        k += 1.0;
    }
    sum
}

/// ψ1(x), with the reflection ψ1(x) + ψ1(1 - x) = π² / sin²(π x) below 1/2.
fn trigamma(x: f64) -> f64 {
    if x < 0.5 {
        let s = (PI * x).sin();
        return PI * PI / (s * s) - trigamma(1.0 - x);
    }
    zeta(2.0, x)
}

/// ψ^(n)(x) = (-1)^(n+1) n! ζ(n + 1, x) for n >= 1; ψ for n = 0.
pub fn polygamma(n: u32, x: f64) -> f64 {
    match n {
        0 => digamma(x),
        1 => trigamma(x),
        _ => {
            let n = n as f64;
            let sign = if n % 2.0 == 0.0 { -1.0 } else { 1.0 };
            sign * lgamma(n + 1.0).exp() * zeta(n + 1.0, x)
        }
    }
}

/// erf^-1(y) on [-1, 1]: NaN outside, ±inf at ±1.
pub fn erfinv(y: f64) -> f64 {
    if y.is_nan() || y.abs() > 1.0 {
        return f64::NAN;
    }
    if y.abs() == 1.0 {
        return y * f64::INFINITY;
    }
    let mut x = giles(y);
    // Newton on erf near 0; in the tails on ln erfc(|x|) = ln(1 - |y|) (1 - |y| is exact;
    // the logarithm is nearly quadratic, so steps converge fast even where Giles' guess,
    // made for single precision, is far off). Each step at least squares the error.
    let d = std::f64::consts::FRAC_2_SQRT_PI;
    for _ in 0..8 {
        let step = if y.abs() <= 0.5 {
            (libm::erf(x) - y) / (d * (-x * x).exp())
        } else {
            let a = x.abs();
            let c = libm::erfc(a);
            let slope = -d * (-a * a).exp() / c;
            y.signum() * (c.ln() - (1.0 - y.abs()).ln()) / slope
        };
        x -= step;
        if step.abs() <= f64::EPSILON * x.abs() {
            break;
        }
    }
    x
}

/// Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single
/// precision: a polynomial in w = -ln(1 - y²), split at w = 5.
fn giles(y: f64) -> f64 {
    let w = -((1.0 - y) * (1.0 + y)).ln();
    let horner = |c: &[f64], t: f64| c.iter().fold(0.0, |p, &k| p * t + k);
    let p = if w < 5.0 {
        horner(
            &[
                2.81022636e-08,
                3.43273939e-07,
                -3.5233877e-06,
                -4.39150654e-06,
                0.00021858087,
                -0.00125372503,
                -0.00417768164,
                0.246640727,
                1.50140941,
            ],
            w - 2.5,
        )
    } else {
        horner(
            &[
                -0.000200214257,
                0.000100950558,
                0.00134934322,
                -0.00367342844,
                0.00573950773,
                -0.0076224613,
                0.00943887047,
                1.00167406,
                2.83297682,
            ],
            w.sqrt() - 3.0,
        )
    };
    p * y
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rtol: f64) {
        assert!(
            (a - b).abs() <= rtol * b.abs().max(1e-300),
            "{a} vs {b} (rtol {rtol})"
        );
    }

    // Reference values: Abramowitz & Stegun / DLMF closed forms.
    #[test]
    fn digamma_and_polygamma_known_values() {
        let euler = 0.577_215_664_901_532_9;
        close(digamma(1.0), -euler, 1e-14);
        close(digamma(0.5), -euler - 2.0 * 2f64.ln(), 1e-14);
        close(digamma(-0.5), -euler - 2.0 * 2f64.ln() + 2.0, 1e-13);
        assert!(digamma(-2.0).is_nan());
        assert_eq!(digamma(0.0), f64::NEG_INFINITY);
        assert_eq!(digamma(-0.0), f64::INFINITY);
        close(polygamma(1, 1.0), PI * PI / 6.0, 1e-14);
        close(polygamma(1, 0.5), PI * PI / 2.0, 1e-14);
        // ψ''(1) = -2 ζ(3).
        close(polygamma(2, 1.0), -2.0 * 1.202_056_903_159_594_2, 1e-14);
        close(polygamma(3, 1.0), 6.0 * PI.powi(4) / 90.0, 1e-13);
    }

    #[test]
    fn erfinv_inverts_erf() {
        for &y in &[
            -0.999999,
            -0.9,
            -0.5,
            -1e-8,
            0.0,
            0.3,
            0.7,
            0.99,
            0.9999999999,
        ] {
            let x = erfinv(y);
            close(libm::erf(x), y, 1e-15);
        }
        assert_eq!(erfinv(1.0), f64::INFINITY);
        assert_eq!(erfinv(-1.0), f64::NEG_INFINITY);
        assert!(erfinv(1.5).is_nan());
        // Far tail, where Giles' single-precision guess is far off: 1 - y is exact.
        let y = 1.0 - 1e-15;
        close(libm::erfc(erfinv(y)), 1.0 - y, 1e-12);
    }

    #[test]
    fn sinc_at_zero_and_integers() {
        assert_eq!(sinc(0.0), 1.0);
        assert!(sinc(3.0).abs() < 1e-15);
        close(sinc(0.5), 2.0 / PI, 1e-15);
    }
}
