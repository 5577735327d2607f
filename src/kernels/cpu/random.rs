//! Random fills on the CPU: values drawn in order from a generator (as f64 or i64,
//! complex values as (re, im) pairs), then cast to the dtype asked for.

use num_complex::Complex64;

use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::kinds::Random;
use crate::kernels::random::RngHandle;
use crate::kernels::{cast_data, data_from};
use crate::shape::checked_numel;
use crate::storage::Data;

pub fn random(shape: &[usize], dtype: DType, kind: Random, gen: &RngHandle) -> Result<Data> {
    let n = checked_numel(shape)?;
    // Drawn at 8 bytes per value before the cast (room for complex pairs when floating).
    let slots = match kind {
        Random::Int { .. } | Random::Permutation => n,
        _ => n.saturating_mul(2),
    };
    crate::storage::ensure_allocatable(slots, 8)?;
    let draws = if dtype.is_complex() { 2 * n } else { n };
    let drawn = match kind {
        Random::Int { low, high } => {
            let v: Vec<i64> = gen.with(|g| (0..n).map(|_| g.int_range(low, high)).collect());
            data_from(v, shape)
        }
        Random::Permutation => {
            // Fisher-Yates, from the back.
            let mut v: Vec<i64> = (0..n as i64).collect();
            gen.with(|g| {
                for i in (1..n).rev() {
                    v.swap(i, g.int_range(0, i as i64 + 1) as usize);
                }
            });
            data_from(v, shape)
        }
        Random::Uniform => from_f64s(
            gen.with(|g| (0..draws).map(|_| g.uniform()).collect()),
            shape,
            dtype,
        ),
        Random::Normal => {
            let scale = if dtype.is_complex() {
                std::f64::consts::FRAC_1_SQRT_2
            } else {
                1.0
            };
            from_f64s(
                gen.with(|g| (0..draws).map(|_| g.normal() * scale).collect()),
                shape,
                dtype,
            )
        }
    };
    Ok(if drawn.dtype() == dtype {
        drawn
    } else {
        cast_data(&drawn, dtype)
    })
}

/// Drawn values as f64, or as complex128 from (re, im) pairs when `dtype` is complex.
fn from_f64s(v: Vec<f64>, shape: &[usize], dtype: DType) -> Data {
    if dtype.is_complex() {
        let c: Vec<Complex64> = v.chunks(2).map(|p| Complex64::new(p[0], p[1])).collect();
        return data_from(c, shape);
    }
    data_from(v, shape)
}
