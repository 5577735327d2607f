//! Choosing a SIMD level once per process, and running a kernel over slices at a level.

use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::sync::OnceLock;

use super::scalar::Libm;
use super::simd::{Fx, Lanes, Wide};

/// The instruction sets the kernels are built for. Every level computes the same
/// algorithm (bar `Scalar`, which is libm): lanes are independent, so a result does not
/// depend on where in a slice an element sits, nor on how a slice is split over threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// libm per element.
    Scalar,
    /// AVX2 + FMA: 8 f32 / 4 f64 lanes.
    Avx2,
    /// AVX-512 (F, BW, CD, DQ, VL): 16 f32 / 8 f64 lanes.
    Avx512,
}

impl Level {
    /// The best level this CPU runs, detected once.
    pub fn detect() -> Level {
        static LEVEL: OnceLock<Level> = OnceLock::new();
        *LEVEL.get_or_init(|| Level::supported().last().copied().unwrap_or(Level::Scalar))
    }

    /// Every level this CPU runs, from the slowest.
    pub fn supported() -> Vec<Level> {
        let mut levels = vec![Level::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if pulp::x86::V3::is_available() {
                levels.push(Level::Avx2);
            }
            if pulp::x86::V4::is_available() {
                levels.push(Level::Avx512);
            }
        }
        levels
    }
}

/// A function of one argument: its vector form, and its libm form for `Level::Scalar`.
pub trait Kernel {
    fn vector<F: Fx>(f: F, x: F::V) -> F::V;
    fn scalar<E: Libm>(x: E) -> E;
}

/// The element types with kernels, and their vectors at a pulp level.
pub trait Elem: Libm {
    type At<S: Wide>: Fx<E = Self>;
    fn at<S: Wide>(simd: S) -> Self::At<S>;
}

impl Elem for f32 {
    type At<S: Wide> = Lanes<S, f32>;
    #[inline(always)]
    fn at<S: Wide>(simd: S) -> Self::At<S> {
        Lanes::new(simd)
    }
}

impl Elem for f64 {
    type At<S: Wide> = Lanes<S, f64>;
    #[inline(always)]
    fn at<S: Wide>(simd: S) -> Self::At<S> {
        Lanes::new(simd)
    }
}

/// Work that runs inside a pulp level's `vectorize` (which compiles it with that level's
/// target features): everything it calls is `#[inline(always)]`.
pub trait Job<E> {
    fn run<F: Fx<E = E>>(self, f: F);
}

/// Run `job` at `level`; at `Scalar`, or a level this CPU lacks, the job comes back for the
/// caller's scalar form.
pub fn at_level<E: Elem, J: Job<E>>(level: Level, job: J) -> Result<(), J> {
    struct InFeatures<F, J>(F, J);
    impl<F: Fx, J: Job<F::E>> pulp::NullaryFnOnce for InFeatures<F, J> {
        type Output = ();
        #[inline(always)]
        fn call(self) {
            self.1.run(self.0)
        }
    }
    match level {
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => {
            let Some(simd) = pulp::x86::V4::try_new() else {
                return Err(job);
            };
            simd.vectorize(InFeatures(E::at(simd), job));
            Ok(())
        }
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => {
            let Some(simd) = pulp::x86::V3::try_new() else {
                return Err(job);
            };
            simd.vectorize(InFeatures(E::at(simd), job));
            Ok(())
        }
        _ => Err(job),
    }
}

/// `dst[i] = K(src[i])` for slices of equal length; every element of `dst` is written.
pub fn map_with<E: Elem, K: Kernel>(level: Level, src: &[E], dst: &mut [MaybeUninit<E>]) {
    let job = MapJob::<E, K> {
        src,
        dst,
        kernel: PhantomData,
    };
    if let Err(job) = at_level::<E, _>(level, job) {
        for (y, &x) in job.dst.iter_mut().zip(job.src) {
            y.write(K::scalar(x));
        }
    }
}

/// `dst[i] = K(src[i])` over whole vectors, the tail padded with zeros.
struct MapJob<'a, E, K> {
    src: &'a [E],
    dst: &'a mut [MaybeUninit<E>],
    kernel: PhantomData<K>,
}

impl<E: Elem, K: Kernel> Job<E> for MapJob<'_, E, K> {
    #[inline(always)]
    fn run<F: Fx<E = E>>(self, f: F) {
        let (xs, x_tail) = F::split(self.src);
        let (ys, y_tail) = F::split_uninit(self.dst);
        for (y, x) in ys.iter_mut().zip(xs) {
            y.write(K::vector(f, *x));
        }
        if !x_tail.is_empty() {
            let mut tail = [E::default(); MAX_LANES];
            f.store_part(&mut tail[..x_tail.len()], K::vector(f, f.load_part(x_tail)));
            for (y, &v) in y_tail.iter_mut().zip(&tail) {
                y.write(v);
            }
        }
    }
}

/// The most lanes of any level (f32 on AVX-512).
pub const MAX_LANES: usize = 16;
