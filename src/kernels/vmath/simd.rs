//! The vector operations the math is written in: `Fx`, one SIMD level at one element
//! type. Every function in this module tree is written once over `Fx` and runs unchanged
//! on 16-lane AVX-512 and 8-lane AVX2 vectors, in f32 and in f64.
//!
//! `Fx` is a thin layer over `pulp::Simd`. pulp's trait has everything but constant
//! shifts and a cheap "any lane set" test; `Wide` adds those for the levels used here.
//!
//! Inlining: code runs with a level's instructions only inside that level's `vectorize`
//! (dispatch.rs), which enables the target features for the function it compiles. Every
//! function a kernel calls must therefore be `#[inline(always)]`: one that is not inlined
//! is compiled without the features, and each vector operation in it becomes a call.

use std::marker::PhantomData;
use std::mem::MaybeUninit;

use pulp::Simd;

/// Constant shifts and mask tests that `pulp::Simd` lacks (its only shifts are per-lane
/// variable ones on u32, and its `first_true` walks the lanes one by one on AVX2).
pub trait Wide: Simd {
    /// Each u32 lane shifted left by the f32 mantissa width (23).
    fn shl23(self, a: Self::u32s) -> Self::u32s;
    fn shr23(self, a: Self::u32s) -> Self::u32s;
    /// Each u64 lane shifted left by the f64 mantissa width (52).
    fn shl52(self, a: Self::u64s) -> Self::u64s;
    fn shr52(self, a: Self::u64s) -> Self::u64s;
    fn any32(self, m: Self::m32s) -> bool;
    fn any64(self, m: Self::m64s) -> bool;
}

#[cfg(target_arch = "x86_64")]
impl Wide for pulp::x86::V3 {
    #[inline(always)]
    fn shl23(self, a: Self::u32s) -> Self::u32s {
        self.shl_const_u32x8::<23>(a)
    }
    #[inline(always)]
    fn shr23(self, a: Self::u32s) -> Self::u32s {
        self.shr_const_u32x8::<23>(a)
    }
    #[inline(always)]
    fn shl52(self, a: Self::u64s) -> Self::u64s {
        self.shl_const_u64x4::<52>(a)
    }
    #[inline(always)]
    fn shr52(self, a: Self::u64s) -> Self::u64s {
        self.shr_const_u64x4::<52>(a)
    }
    #[inline(always)]
    fn any32(self, m: Self::m32s) -> bool {
        self.avx._mm256_movemask_ps(pulp::cast!(m)) != 0
    }
    #[inline(always)]
    fn any64(self, m: Self::m64s) -> bool {
        self.avx._mm256_movemask_pd(pulp::cast!(m)) != 0
    }
}

#[cfg(target_arch = "x86_64")]
impl Wide for pulp::x86::V4 {
    #[inline(always)]
    fn shl23(self, a: Self::u32s) -> Self::u32s {
        self.shl_const_u32x16::<23>(a)
    }
    #[inline(always)]
    fn shr23(self, a: Self::u32s) -> Self::u32s {
        self.shr_const_u32x16::<23>(a)
    }
    #[inline(always)]
    fn shl52(self, a: Self::u64s) -> Self::u64s {
        self.shl_const_u64x8::<52>(a)
    }
    #[inline(always)]
    fn shr52(self, a: Self::u64s) -> Self::u64s {
        self.shr_const_u64x8::<52>(a)
    }
    // AVX-512 masks are bit masks: one bit per lane.
    #[inline(always)]
    fn any32(self, m: Self::m32s) -> bool {
        m.0 != 0
    }
    #[inline(always)]
    fn any64(self, m: Self::m64s) -> bool {
        m.0 != 0
    }
}

/// An element type the kernels compute in.
pub trait Real: Copy + Default + PartialEq + Send + Sync + 'static {
    const IS_F64: bool;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Real for f32 {
    const IS_F64: bool = false;
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Real for f64 {
    const IS_F64: bool = true;
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
}

/// Vectors of `E` at one SIMD level: floats `V`, same-width unsigned integers `U` (the
/// float bits), lane masks `M`. Constants are passed as f64 and rounded to `E` once,
/// where `splat` is called (the optimizer hoists them out of the loops).
pub trait Fx: Copy + Send + Sync + 'static {
    type E: Real;
    type V: Copy;
    type U: Copy;
    type M: Copy;
    const LANES: usize;
    /// Mantissa bits (23 or 52) and the exponent bias (127 or 1023).
    const MANT: u32;
    const BIAS: u64;

    /// f64 vectors at the same level (f32 pow computes in them).
    type F64: Fx<E = f64>;
    fn f64_lanes(self) -> Self::F64;

    /// The f32 or the f64 member of a pair of constants.
    #[inline(always)]
    fn pick<T>(for_f32: T, for_f64: T) -> T {
        if Self::E::IS_F64 {
            for_f64
        } else {
            for_f32
        }
    }

    fn splat(self, c: f64) -> Self::V;
    fn splat_u(self, c: u64) -> Self::U;
    fn split(src: &[Self::E]) -> (&[Self::V], &[Self::E]);
    #[allow(clippy::type_complexity)]
    fn split_uninit(
        dst: &mut [MaybeUninit<Self::E>],
    ) -> (&mut [MaybeUninit<Self::V>], &mut [MaybeUninit<Self::E>]);
    /// The first `min(len, LANES)` elements; the other lanes are zero.
    fn load_part(self, src: &[Self::E]) -> Self::V;
    fn store_part(self, dst: &mut [Self::E], v: Self::V);

    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    fn div(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a * b + c`, rounded once.
    fn fma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    fn sqrt(self, a: Self::V) -> Self::V;
    fn abs(self, a: Self::V) -> Self::V;
    fn and_f(self, a: Self::V, b: Self::V) -> Self::V;
    fn or_f(self, a: Self::V, b: Self::V) -> Self::V;
    fn xor_f(self, a: Self::V, b: Self::V) -> Self::V;

    fn lt(self, a: Self::V, b: Self::V) -> Self::M;
    fn le(self, a: Self::V, b: Self::V) -> Self::M;
    fn gt(self, a: Self::V, b: Self::V) -> Self::M;
    fn eq(self, a: Self::V, b: Self::V) -> Self::M;
    fn select(self, m: Self::M, yes: Self::V, no: Self::V) -> Self::V;
    fn and_m(self, a: Self::M, b: Self::M) -> Self::M;
    fn or_m(self, a: Self::M, b: Self::M) -> Self::M;
    fn not_m(self, a: Self::M) -> Self::M;
    fn any(self, m: Self::M) -> bool;

    fn bits(self, a: Self::V) -> Self::U;
    fn of_bits(self, a: Self::U) -> Self::V;
    fn add_u(self, a: Self::U, b: Self::U) -> Self::U;
    fn and_u(self, a: Self::U, b: Self::U) -> Self::U;
    fn or_u(self, a: Self::U, b: Self::U) -> Self::U;
    fn eq_u(self, a: Self::U, b: Self::U) -> Self::M;
    /// Shifted by the mantissa width: left moves an exponent into place, right takes it out.
    fn shl_mant(self, a: Self::U) -> Self::U;
    fn shr_mant(self, a: Self::U) -> Self::U;

    // Derived operations.

    #[inline(always)]
    fn neg(self, a: Self::V) -> Self::V {
        self.xor_f(a, self.splat(-0.0))
    }
    /// `c - a * b`, rounded once.
    #[inline(always)]
    fn fnma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
        self.fma(self.neg(a), b, c)
    }
    #[inline(always)]
    fn is_nan(self, a: Self::V) -> Self::M {
        self.not_m(self.eq(a, a))
    }
    /// The magnitude of `mag` with the sign of `sign`.
    #[inline(always)]
    fn copysign(self, mag: Self::V, sign: Self::V) -> Self::V {
        let s = self.splat(-0.0);
        self.or_f(self.abs(mag), self.and_f(sign, s))
    }
    /// `c[0] + c[1] x + c[2] x^2 + ...` by Horner's rule with fused steps.
    #[inline(always)]
    fn poly(self, x: Self::V, c: &[f64]) -> Self::V {
        let (last, rest) = c.split_last().expect("a polynomial has coefficients");
        let mut acc = self.splat(*last);
        for &ci in rest.iter().rev() {
            acc = self.fma(acc, x, self.splat(ci));
        }
        acc
    }
    /// The exact float value of a small unsigned integer lane (below 2^MANT): placed in the
    /// mantissa of 2^MANT, whose value then is 2^MANT + n.
    #[inline(always)]
    fn u_to_f(self, n: Self::U) -> Self::V {
        let two_mant = (1u64 << Self::MANT) as f64;
        let v = self.of_bits(self.or_u(n, self.bits(self.splat(two_mant))));
        self.sub(v, self.splat(two_mant))
    }
}

/// `Fx` for the pulp level `S` at element type `E`.
#[derive(Clone, Copy)]
pub struct Lanes<S, E> {
    pub simd: S,
    elem: PhantomData<E>,
}

impl<S, E> Lanes<S, E> {
    #[inline(always)]
    pub fn new(simd: S) -> Self {
        Lanes {
            simd,
            elem: PhantomData,
        }
    }
}

macro_rules! impl_fx {
    ($e:ty, $bits:ty, $mant:expr, $bias:expr, $f:ident, $u:ident, $m:ident,
     $shl:ident, $shr:ident, $any:ident, $lanes:ident, $as_simd:ident, $as_mut_simd:ident,
     [$add:ident, $sub:ident, $mul:ident, $div:ident, $fma:ident, $sqrt:ident, $abs:ident,
      $and:ident, $or:ident, $xor:ident, $lt:ident, $le:ident, $gt:ident, $eq:ident,
      $select:ident, $and_m:ident, $or_m:ident, $not_m:ident, $to_u:ident, $to_f:ident,
      $add_u:ident, $and_u:ident, $or_u:ident, $eq_u:ident, $splat:ident, $splat_u:ident,
      $load:ident, $store:ident]) => {
        impl<S: Wide> Fx for Lanes<S, $e> {
            type E = $e;
            type V = S::$f;
            type U = S::$u;
            type M = S::$m;
            const LANES: usize = S::$lanes;
            const MANT: u32 = $mant;
            const BIAS: u64 = $bias;
            type F64 = Lanes<S, f64>;

            #[inline(always)]
            fn f64_lanes(self) -> Self::F64 {
                Lanes::new(self.simd)
            }

            #[inline(always)]
            fn splat(self, c: f64) -> Self::V {
                self.simd.$splat(c as $e)
            }
            #[inline(always)]
            fn splat_u(self, c: u64) -> Self::U {
                self.simd.$splat_u(c as $bits)
            }
            #[inline(always)]
            fn split(src: &[$e]) -> (&[Self::V], &[$e]) {
                S::$as_simd(src)
            }
            #[inline(always)]
            fn split_uninit(
                dst: &mut [MaybeUninit<$e>],
            ) -> (&mut [MaybeUninit<Self::V>], &mut [MaybeUninit<$e>]) {
                S::$as_mut_simd(dst)
            }
            #[inline(always)]
            fn load_part(self, src: &[$e]) -> Self::V {
                self.simd.$load(src)
            }
            #[inline(always)]
            fn store_part(self, dst: &mut [$e], v: Self::V) {
                self.simd.$store(dst, v)
            }
            #[inline(always)]
            fn add(self, a: Self::V, b: Self::V) -> Self::V {
                self.simd.$add(a, b)
            }
            #[inline(always)]
            fn sub(self, a: Self::V, b: Self::V) -> Self::V {
                self.simd.$sub(a, b)
            }
            #[inline(always)]
            fn mul(self, a: Self::V, b: Self::V) -> Self::V {
                self.simd.$mul(a, b)
            }
            #[inline(always)]
            fn div(self, a: Self::V, b: Self::V) -> Self::V {
                self.simd.$div(a, b)
            }
            #[inline(always)]
            fn fma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
                self.simd.$fma(a, b, c)
            }
            #[inline(always)]
            fn sqrt(self, a: Self::V) -> Self::V {
                self.simd.$sqrt(a)
            }
            #[inline(always)]
            fn abs(self, a: Self::V) -> Self::V {
                self.simd.$abs(a)
            }
            #[inline(always)]
            fn and_f(self, a: Self::V, b: Self::V) -> Self::V {
                self.simd.$and(a, b)
            }
            #[inline(always)]
            fn or_f(self, a: Self::V, b: Self::V) -> Self::V {
                self.simd.$or(a, b)
            }
            #[inline(always)]
            fn xor_f(self, a: Self::V, b: Self::V) -> Self::V {
                self.simd.$xor(a, b)
            }
            #[inline(always)]
            fn lt(self, a: Self::V, b: Self::V) -> Self::M {
                self.simd.$lt(a, b)
            }
            #[inline(always)]
            fn le(self, a: Self::V, b: Self::V) -> Self::M {
                self.simd.$le(a, b)
            }
            #[inline(always)]
            fn gt(self, a: Self::V, b: Self::V) -> Self::M {
                self.simd.$gt(a, b)
            }
            #[inline(always)]
            fn eq(self, a: Self::V, b: Self::V) -> Self::M {
                self.simd.$eq(a, b)
            }
            #[inline(always)]
            fn select(self, m: Self::M, yes: Self::V, no: Self::V) -> Self::V {
                self.simd.$select(m, yes, no)
            }
            #[inline(always)]
            fn and_m(self, a: Self::M, b: Self::M) -> Self::M {
                self.simd.$and_m(a, b)
            }
            #[inline(always)]
            fn or_m(self, a: Self::M, b: Self::M) -> Self::M {
                self.simd.$or_m(a, b)
            }
            #[inline(always)]
            fn not_m(self, a: Self::M) -> Self::M {
                self.simd.$not_m(a)
            }
            #[inline(always)]
            fn any(self, m: Self::M) -> bool {
                self.simd.$any(m)
            }
            #[inline(always)]
            fn bits(self, a: Self::V) -> Self::U {
                self.simd.$to_u(a)
            }
            #[inline(always)]
            fn of_bits(self, a: Self::U) -> Self::V {
                self.simd.$to_f(a)
            }
            #[inline(always)]
            fn add_u(self, a: Self::U, b: Self::U) -> Self::U {
                self.simd.$add_u(a, b)
            }
            #[inline(always)]
            fn and_u(self, a: Self::U, b: Self::U) -> Self::U {
                self.simd.$and_u(a, b)
            }
            #[inline(always)]
            fn or_u(self, a: Self::U, b: Self::U) -> Self::U {
                self.simd.$or_u(a, b)
            }
            #[inline(always)]
            fn eq_u(self, a: Self::U, b: Self::U) -> Self::M {
                self.simd.$eq_u(a, b)
            }
            #[inline(always)]
            fn shl_mant(self, a: Self::U) -> Self::U {
                self.simd.$shl(a)
            }
            #[inline(always)]
            fn shr_mant(self, a: Self::U) -> Self::U {
                self.simd.$shr(a)
            }
        }
    };
}

impl_fx!(
    f32,
    u32,
    23,
    127,
    f32s,
    u32s,
    m32s,
    shl23,
    shr23,
    any32,
    F32_LANES,
    as_simd_f32s,
    as_uninit_mut_simd_f32s,
    [
        add_f32s,
        sub_f32s,
        mul_f32s,
        div_f32s,
        mul_add_f32s,
        sqrt_f32s,
        abs_f32s,
        and_f32s,
        or_f32s,
        xor_f32s,
        less_than_f32s,
        less_than_or_equal_f32s,
        greater_than_f32s,
        equal_f32s,
        select_f32s,
        and_m32s,
        or_m32s,
        not_m32s,
        transmute_u32s_f32s,
        transmute_f32s_u32s,
        add_u32s,
        and_u32s,
        or_u32s,
        equal_u32s,
        splat_f32s,
        splat_u32s,
        partial_load_f32s,
        partial_store_f32s
    ]
);

impl_fx!(
    f64,
    u64,
    52,
    1023,
    f64s,
    u64s,
    m64s,
    shl52,
    shr52,
    any64,
    F64_LANES,
    as_simd_f64s,
    as_uninit_mut_simd_f64s,
    [
        add_f64s,
        sub_f64s,
        mul_f64s,
        div_f64s,
        mul_add_f64s,
        sqrt_f64s,
        abs_f64s,
        and_f64s,
        or_f64s,
        xor_f64s,
        less_than_f64s,
        less_than_or_equal_f64s,
        greater_than_f64s,
        equal_f64s,
        select_f64s,
        and_m64s,
        or_m64s,
        not_m64s,
        transmute_u64s_f64s,
        transmute_f64s_u64s,
        add_u64s,
        and_u64s,
        or_u64s,
        equal_u64s,
        splat_f64s,
        splat_u64s,
        partial_load_f64s,
        partial_store_f64s
    ]
);
