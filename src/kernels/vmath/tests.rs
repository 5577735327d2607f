//! Accuracy of the vector kernels against libm, at every level this CPU runs.
//!
//! f32: the reference is f64 libm rounded to f32, and the error is measured against the
//! unrounded f64 value (so "0.5" is a correctly rounded result). f64: the reference is
//! glibc's result, and the error is the count of floats between the two. Where a
//! reference is ±0, ±inf or NaN the result must match it exactly (sign of zero included).
//! `cargo test --lib vmath -- --nocapture` prints the max-ulp table.

use super::*;

extern "C" {
    // glibc's erf (std links libm); the f64 reference, where std has none.
    fn erf(x: f64) -> f64;
}

const MAX_ULP: f64 = 4.0;

/// The exact reference for f32 (in f64, unrounded) and for f64 (glibc or a double-double
/// evaluation on glibc's exp where glibc has no such function).
fn reference(op: Unary, x: f64) -> f64 {
    match op {
        Unary::Exp => x.exp(),
        Unary::Expm1 => x.exp_m1(),
        Unary::Log => x.ln(),
        Unary::Log1p => x.ln_1p(),
        Unary::Sin => x.sin(),
        Unary::Cos => x.cos(),
        Unary::Tan => x.tan(),
        Unary::Tanh => x.tanh(),
        Unary::Sigmoid => sigmoid_dd(x),
        // SAFETY: a pure libm function.
        Unary::Erf => unsafe { erf(x) },
        Unary::Sqrt => x.sqrt(),
        Unary::Rsqrt => rsqrt_dd(x),
        Unary::Reciprocal => 1.0 / x,
    }
}

/// a / (b + c) for b >= |c|, with the rounding of b + c carried into the quotient.
fn div_dd(a: f64, b: f64, c: f64) -> f64 {
    let s = b + c;
    let s_lo = (b - s) + c;
    let q = a / s;
    let r = (-q).mul_add(s, a) - q * s_lo;
    q + r / s
}

/// 1 / (1 + e^-x) from glibc's exp.
fn sigmoid_dd(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let e = (-x.abs()).exp();
    div_dd(if x < 0.0 { e } else { 1.0 }, 1.0, e)
}

/// 1 / sqrt(x) from the square root and its exact remainder.
fn rsqrt_dd(x: f64) -> f64 {
    let s = x.sqrt();
    if !s.is_finite() || s == 0.0 {
        return 1.0 / s;
    }
    let s_lo = (-s).mul_add(s, x) / (2.0 * s);
    div_dd(1.0, s, s_lo)
}

/// Where the worst result of one function at one level sits.
#[derive(Default, Debug)]
struct Worst {
    ulp: f64,
    x: f64,
    got: f64,
    want: f64,
}

/// Error of an f32 result in ulps of the f32 nearest `exact` (exact: the f64 reference).
fn ulp_err32(got: f32, exact: f64) -> f64 {
    let want = exact as f32;
    if want.is_nan() || want == 0.0 && exact == 0.0 || want.is_infinite() {
        return if same(got as f64, want as f64) {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if !got.is_finite() {
        return f64::INFINITY;
    }
    let e = (want.abs().max(f32::MIN_POSITIVE) as f64).log2().floor();
    let ulp = 2f64.powf(e - 23.0);
    (got as f64 - exact).abs() / ulp
}

/// Floats between `got` and glibc's `want` (f64).
fn ulp_err64(got: f64, want: f64) -> f64 {
    if want.is_nan() || want == 0.0 || want.is_infinite() {
        return if same(got, want) { 0.0 } else { f64::INFINITY };
    }
    if !got.is_finite() {
        return f64::INFINITY;
    }
    // The bits as a line of integers ordered as the floats are.
    let ord = |v: f64| {
        let b = v.to_bits() as i64 as i128;
        if b < 0 {
            i64::MIN as i128 - b
        } else {
            b
        }
    };
    (ord(got) - ord(want)).unsigned_abs() as f64
}

/// Equal as libm's special values are: NaN with NaN, and zeros with their sign.
fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn worst32(level: Level, op: Unary, xs: &[f32]) -> Worst {
    let mut ys = vec![0f32; xs.len()];
    map_at(level, op, xs, &mut ys);
    let mut w = Worst::default();
    for (&x, &y) in xs.iter().zip(&ys) {
        let exact = reference(op, x as f64);
        let e = ulp_err32(y, exact);
        if e > w.ulp || e.is_nan() {
            w = Worst {
                ulp: e,
                x: x as f64,
                got: y as f64,
                want: exact,
            };
        }
    }
    w
}

fn worst64(level: Level, op: Unary, xs: &[f64]) -> Worst {
    let mut ys = vec![0f64; xs.len()];
    map_at(level, op, xs, &mut ys);
    let mut w = Worst::default();
    for (&x, &y) in xs.iter().zip(&ys) {
        let want = reference(op, x);
        let e = ulp_err64(y, want);
        if e > w.ulp || e.is_nan() {
            w = Worst {
                ulp: e,
                x,
                got: y,
                want,
            };
        }
    }
    w
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Values every function is tested on, as f64 (each also tested rounded to f32).
fn points(f32_range: bool) -> Vec<f64> {
    let mut v: Vec<f64> = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        0.875,
        -0.875,
    ];
    let (min_sub, min_norm, max, mant) = if f32_range {
        (
            f32::from_bits(1) as f64,
            f32::MIN_POSITIVE as f64,
            f32::MAX as f64,
            23,
        )
    } else {
        (f64::from_bits(1), f64::MIN_POSITIVE, f64::MAX, 52)
    };
    for s in [1.0, -1.0] {
        for m in [min_sub, 3.0 * min_sub, min_norm - min_sub, min_norm, max] {
            v.push(s * m);
        }
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Every exponent, a few mantissas each.
    let (emin, emax) = if f32_range {
        (-149, 127)
    } else {
        (-1074, 1023)
    };
    for e in emin..=emax {
        let p = 2f64.powi(e);
        for _ in 0..6 {
            let m = 1.0 + rng.unit();
            v.push(p * m);
            v.push(-p * m);
        }
        v.push(p);
        v.push(-p * (2.0 - 2f64.powi(-mant)));
    }
    // Dense near 0 and near ±1.
    for i in 0..20000 {
        let t = i as f64 / 20000.0;
        v.push(t * 2f64.powi(-8));
        v.push(-t * 2f64.powi(-8));
        v.push(1.0 + (t - 0.5) * 2f64.powi(-6));
        v.push(-1.0 + (t - 0.5) * 2f64.powi(-6));
    }
    // Around overflow and underflow of exp/expm1/sigmoid, the tails of erf and tanh, and
    // the branch points of erf, tanh, log.
    let edges: &[f64] = if f32_range {
        &[
            88.72284, -87.33655, -103.97208, 3.92, 9.01, 0.875, 1.0, 0.5, -17.33, 89.0,
        ]
    } else {
        &[
            709.782712893384,
            -708.3964185322641,
            -745.1332191019411,
            5.92,
            19.06,
            0.875,
            1.0,
            37.4,
        ]
    };
    for &c in edges {
        for s in [1.0, -1.0] {
            for i in -2000..2000 {
                v.push(s * c * (1.0 + i as f64 * 2f64.powi(-mant - 2)));
                v.push(s * (c + i as f64 * 1e-3));
            }
        }
    }
    // Near multiples of pi/2 (and past the vector reduction's limit).
    let pio2 = std::f64::consts::FRAC_PI_2;
    for k in (-3000i64..3000).chain([
        1 << 15,
        1 << 16,
        1 << 17,
        1 << 20,
        1 << 27,
        1 << 28,
        1 << 29,
    ]) {
        let x = k as f64 * pio2;
        for d in -3..=3 {
            let step = 2f64.powf(x.abs().max(1.0).log2().floor() - mant as f64);
            v.push(x + d as f64 * step);
            v.push(-(x + d as f64 * step));
        }
    }
    for big in [1e5, 1e6, 1e7, 1e10, 1e15, 1e20, 1e30, 1e38, 1e100, 1e300] {
        v.push(big);
        v.push(-big);
    }
    // Random: all bit patterns, and the ranges tensors usually hold.
    for _ in 0..200_000 {
        let bits = rng.next();
        v.push(if f32_range {
            f32::from_bits(bits as u32) as f64
        } else {
            f64::from_bits(bits)
        });
        for scale in [1.0, 10.0, 100.0, 1000.0] {
            v.push((rng.unit() * 2.0 - 1.0) * scale);
        }
    }
    v
}

fn points32() -> Vec<f32> {
    points(true).into_iter().map(|x| x as f32).collect()
}

fn points64() -> Vec<f64> {
    points(false)
}

/// Every function at every level within MAX_ULP on `xs`; prints the max-ulp table.
fn check_all<E: Copy>(type_name: &str, xs: &[E], worst: fn(Level, Unary, &[E]) -> Worst) {
    let mut failed = vec![];
    for &level in &Level::supported() {
        for &op in Unary::ALL {
            let w = worst(level, op, xs);
            println!(
                "{type_name} {level:?} {op:?}: max {:.3} ulp at x = {:e} (got {:e}, want {:e})",
                w.ulp, w.x, w.got, w.want
            );
            if w.ulp.is_nan() || w.ulp > MAX_ULP {
                failed.push(format!("{type_name} {level:?} {op:?}: {w:?}"));
            }
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn unary_accuracy_f32() {
    check_all("f32", &points32(), worst32);
}

#[test]
fn unary_accuracy_f64() {
    check_all("f64", &points64(), worst64);
}

/// libm's special values exactly, not just within MAX_ULP: results 0, ±1 and ±inf, and
/// NaN (exp(-inf) = 0, log(0) = -inf, log(-1) = NaN, tanh(±inf) = ±1, sigmoid(-inf) = 0,
/// erf(±inf) = ±1, sqrt(-0) = -0, cos(0) = 1, ...).
#[test]
fn special_values_exact() {
    let xs = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        -2.0,
    ];
    let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let exact = |r: f64| r.is_nan() || r == 0.0 || r.abs() == 1.0 || r.is_infinite();
    for level in Level::supported() {
        for &op in Unary::ALL {
            let mut y64 = [0f64; 8];
            let mut y32 = [0f32; 8];
            map_at(level, op, &xs, &mut y64);
            map_at(level, op, &xs32, &mut y32);
            for i in 0..xs.len() {
                let want = reference(op, xs[i]);
                if exact(want) {
                    assert!(
                        same(y64[i], want),
                        "{level:?} {op:?}({}) = {} not {want}",
                        xs[i],
                        y64[i]
                    );
                    let got = y32[i] as f64;
                    assert!(
                        same(got, want),
                        "f32 {level:?} {op:?}({}) = {got} not {want}",
                        xs[i]
                    );
                }
            }
        }
    }
}

/// An element's result does not depend on its place in the slice (a vector lane or the
/// padded tail), nor on the SIMD level among the vector ones (all run the same algorithm).
#[test]
fn results_independent_of_position_and_vector_level() {
    let xs: Vec<f64> = points64().into_iter().step_by(97).collect();
    let vector_levels: Vec<Level> = Level::supported()
        .into_iter()
        .filter(|&l| l != Level::Scalar)
        .collect();
    for &op in Unary::ALL {
        let mut first: Option<Vec<f64>> = None;
        for &level in &vector_levels {
            let mut whole = vec![0f64; xs.len()];
            map_at(level, op, &xs, &mut whole);
            for shift in 1..9 {
                let mut part = vec![0f64; xs.len() - shift];
                map_at(level, op, &xs[shift..], &mut part);
                for (i, &y) in part.iter().enumerate() {
                    assert!(
                        same(y, whole[i + shift]),
                        "{op:?} {level:?} at {}",
                        xs[i + shift]
                    );
                }
            }
            match &first {
                None => first = Some(whole),
                Some(ys) => {
                    for (a, b) in ys.iter().zip(&whole) {
                        assert!(
                            same(*a, *b),
                            "{op:?}: {level:?} differs from {:?}",
                            vector_levels[0]
                        );
                    }
                }
            }
        }
    }
}

/// `map` splits long slices over the pool; each element comes out as on one thread.
#[test]
fn map_over_the_pool_matches_one_thread() {
    let n = crate::kernels::PARALLEL_GRAIN + 12345;
    let xs: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 20.0).collect();
    for op in [Unary::Exp, Unary::Sin, Unary::Tanh] {
        let mut pooled = vec![0f32; n];
        map(op, &xs, &mut pooled);
        let mut single = vec![0f32; n];
        map_at(Level::detect(), op, &xs, &mut single);
        assert!(
            pooled
                .iter()
                .zip(&single)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{op:?}"
        );
    }
}

#[test]
fn pow_f32_accuracy_and_special_cases() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        2.0,
        -2.0,
        3.0,
        -3.0,
        0.5,
        -0.5,
        2.5,
        -2.5,
        1e10,
        -1e10,
        16777215.0,
        -16777215.0,
        16777216.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(1),
        f32::MAX,
        -f32::MAX,
    ];
    let (mut xs, mut ys) = (vec![], vec![]);
    for &x in specials
        .iter()
        .chain(&[0.25, 4.0, 10.0, 0.999, 1.001, -0.75, -7.0])
    {
        for &y in &specials {
            xs.push(x);
            ys.push(y);
        }
    }
    for _ in 0..200_000 {
        xs.push(f32::from_bits(rng.next() as u32 & 0x7fff_ffff));
        ys.push(((rng.unit() * 2.0 - 1.0) * 8.0) as f32);
        xs.push((rng.unit() * 20.0 - 10.0) as f32);
        ys.push(((rng.unit() * 2.0 - 1.0) * 40.0).round() as f32);
        xs.push((rng.unit() * 4.0) as f32);
        ys.push(((rng.unit() * 2.0 - 1.0) * 100.0) as f32);
    }
    for level in Level::supported() {
        let mut out = vec![0f32; xs.len()];
        pow_at(level, &xs, &ys, &mut out);
        let mut worst = 0f64;
        for i in 0..xs.len() {
            let exact = (xs[i] as f64).powf(ys[i] as f64);
            let e = ulp_err32(out[i], exact);
            assert!(
                e <= MAX_ULP,
                "{level:?} pow({}, {}) = {} not {exact}",
                xs[i],
                ys[i],
                out[i]
            );
            worst = worst.max(e);
        }
        println!("f32 {level:?} Pow: max {worst:.3} ulp");
    }
}

/// Every f32 (every VMATH_STRIDE-th bit pattern; default 7, 1 for all 2^32) through every
/// function at the detected level: `cargo test --profile quick --lib vmath_sweep --
/// --ignored --nocapture`. Minutes of CPU, so not part of the default run.
#[test]
#[ignore]
fn vmath_sweep_f32() {
    use rayon::prelude::*;
    let stride: u64 = std::env::var("VMATH_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    let level = Level::detect();
    const BLOCK: u64 = 1 << 16;
    for &op in Unary::ALL {
        let worst = (0..(1u64 << 32) / (BLOCK * stride) + 1)
            .into_par_iter()
            .map(|b| {
                let xs: Vec<f32> = (0..BLOCK)
                    .map(|i| (b * BLOCK + i) * stride)
                    .filter(|&v| v < 1 << 32)
                    .map(|v| f32::from_bits(v as u32))
                    .collect();
                let mut ys = vec![0f32; xs.len()];
                map_at(level, op, &xs, &mut ys);
                xs.iter()
                    .zip(&ys)
                    .map(|(&x, &y)| (ulp_err32(y, reference(op, x as f64)), x))
                    .fold((0.0, 0.0), |a: (f64, f32), b| if b.0 > a.0 { b } else { a })
            })
            .reduce(|| (0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
        println!(
            "sweep f32 {level:?} {op:?}: max {:.3} ulp at x = {:e}",
            worst.0, worst.1
        );
        assert!(worst.0 <= MAX_ULP, "{op:?}");
    }
}

/// atan2 within MAX_ULP at every level over pairs of awkward values (signed zeros,
/// infinities, NaN, subnormals, the largest floats, both halves of the reduction and
/// lo = hi) and random pairs over every exponent; libm's special values exactly.
#[test]
fn atan2_accuracy_and_special_values() {
    let special = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        0.41421356,
        -2.5,
        1e-310,
        -1e-40,
        1e30,
        -1e300,
        f64::MAX,
        -f32::MAX as f64,
    ];
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    let (mut ys, mut xs) = (vec![], vec![]);
    for &y in &special {
        for &x in &special {
            ys.push(y);
            xs.push(x);
        }
    }
    let all = points64();
    for _ in 0..300_000 {
        ys.push(all[(rng.next() % all.len() as u64) as usize]);
        xs.push(all[(rng.next() % all.len() as u64) as usize]);
        // Near the diagonal and near tan(pi/8), where the reduction switches.
        let x = (rng.unit() * 2.0 - 1.0) * 1e3;
        let t = [1.0, 0.41421356237309503, 2.414213562373095][(rng.next() % 3) as usize];
        ys.push(x * t * (1.0 + (rng.unit() - 0.5) * 1e-6));
        xs.push(x);
    }
    let exact = |r: f64| r.is_nan() || r == 0.0 || r.is_infinite();
    for level in Level::supported() {
        let mut out = vec![0f64; xs.len()];
        atan2_at(level, &ys, &xs, &mut out);
        let (ys32, xs32): (Vec<f32>, Vec<f32>) = ys
            .iter()
            .zip(&xs)
            .map(|(&y, &x)| (y as f32, x as f32))
            .unzip();
        let mut out32 = vec![0f32; xs.len()];
        atan2_at(level, &ys32, &xs32, &mut out32);
        let (mut worst64, mut worst32) = (0f64, 0f64);
        for i in 0..xs.len() {
            let want = ys[i].atan2(xs[i]);
            let e = ulp_err64(out[i], want);
            assert!(
                e <= MAX_ULP && (!exact(want) || same(out[i], want)),
                "{level:?} atan2({:e}, {:e}) = {:e} not {want:e}",
                ys[i],
                xs[i],
                out[i]
            );
            worst64 = worst64.max(e);
            let want32 = (ys32[i] as f64).atan2(xs32[i] as f64);
            let e = ulp_err32(out32[i], want32);
            assert!(
                e <= MAX_ULP && (!exact(want32) || same(out32[i] as f64, want32)),
                "f32 {level:?} atan2({:e}, {:e}) = {:e} not {want32:e}",
                ys32[i],
                xs32[i],
                out32[i]
            );
            worst32 = worst32.max(e);
        }
        println!("{level:?} Atan2: f64 max {worst64:.3} ulp, f32 max {worst32:.3} ulp");
    }
    // The pool's split gives each element the bits of one thread's pass.
    let n = crate::kernels::PARALLEL_GRAIN + 777;
    let (y, x): (Vec<f32>, Vec<f32>) = (0..n)
        .map(|i| ((i as f32 * 0.37).sin() * 5.0, (i as f32 * 0.11).cos() * 3.0))
        .unzip();
    let pooled = atan2_vec(&y, &x);
    let mut single = vec![0f32; n];
    atan2_at(Level::detect(), &y, &x, &mut single);
    assert!(pooled
        .iter()
        .zip(&single)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}
