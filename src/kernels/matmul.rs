//! Matrix products on strided operands: the `gemm` crate for f16/f32/f64/complex,
//! a plain loop for integers and bfloat16 (via f32).

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::kernels::traits::Arith;
use crate::tensor::Tensor;

/// A matrix operand: base slice plus offset and row/column strides (in elements).
#[derive(Clone, Copy)]
pub struct MatRef {
    pub offset: usize,
    pub rs: usize,
    pub cs: usize,
}

/// out[b] = a[b] @ b[b] for `batch` products of (m×k)·(k×n); `a_batch`/`b_batch` give
/// each operand's storage offset per batch entry (stride 0 broadcasting allowed).
#[allow(clippy::too_many_arguments)]
pub fn batched<T: Element + Arith>(
    a: &Tensor,
    b: &Tensor,
    a_mats: &[MatRef],
    b_mats: &[MatRef],
    m: usize,
    k: usize,
    n: usize,
) -> Result<Vec<T>> {
    let batch = a_mats.len();
    let total = crate::shape::checked_numel(&[batch, m, n])?;
    crate::storage::ensure_allocatable(total, std::mem::size_of::<T>())?;
    let mut out = vec![T::zero(); total];
    let (sa, sb) = (a.storage().slice::<T>(), b.storage().slice::<T>());
    let gemm_native = matches!(
        T::DTYPE,
        DType::F16 | DType::F32 | DType::F64 | DType::C64 | DType::C128
    );
    let big = (m * n * k) >= 48 * 48 * 48;
    let par = if big {
        gemm::Parallelism::Rayon(0)
    } else {
        gemm::Parallelism::None
    };
    for bi in 0..batch {
        let (am, bm) = (a_mats[bi], b_mats[bi]);
        let dst = &mut out[bi * m * n..(bi + 1) * m * n];
        if k == 0 || m == 0 || n == 0 {
            continue;
        }
        if gemm_native {
            // SAFETY: every index the kernel touches lies inside the operand layouts,
            // which were checked against their storages when the tensors were made.
            unsafe {
                gemm::gemm(
                    m,
                    n,
                    k,
                    dst.as_mut_ptr(),
                    1,
                    n as isize,
                    false,
                    sa.as_ptr().add(am.offset),
                    am.cs as isize,
                    am.rs as isize,
                    sb.as_ptr().add(bm.offset),
                    bm.cs as isize,
                    bm.rs as isize,
                    T::zero(),
                    T::one(),
                    false,
                    false,
                    false,
                    par,
                );
            }
        } else {
            for i in 0..m {
                for j in 0..n {
                    let mut acc = T::zero();
                    for p in 0..k {
                        acc = acc
                            + sa[am.offset + i * am.rs + p * am.cs]
                                * sb[bm.offset + p * bm.rs + j * bm.cs];
                    }
                    dst[i * n + j] = acc;
                }
            }
        }
    }
    Ok(out)
}
