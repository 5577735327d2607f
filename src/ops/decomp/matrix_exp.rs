//! `linalg.matrix_exp` (LinalgMatrixExpBackward0): scaling and squaring with the
//! degree-13 Padé approximant (Higham 2005), every matrix of a batch scaled by its own
//! power of two. Both rules are matrix_exp again, of the block matrix
//! `[[X, E], [0, X]]` whose top-right block is the Fréchet derivative of exp at X in
//! the direction E (X = A^H for the vjp, A for the jvp), so they can be differentiated
//! again.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::Result;
use crate::ops::binary::{add, mul, mul_scalar, sub, where_};
use crate::ops::decomp::lu::solve_ex;
use crate::ops::decomp::{batch_front_all, check_float, check_square, last2};
use crate::ops::extrema::amax;
use crate::ops::join::cat;
use crate::ops::linalg::{matmul, mh};
use crate::ops::reduce::{sum, Extreme};
use crate::ops::rules::composite;
use crate::ops::unary::{abs, to_dtype};
use crate::ops::view::{contiguous, expand, narrow};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

#[derive(Clone, Copy)]
pub struct MatrixExp;

/// The Padé-13 numerator and denominator coefficients (Higham 2005, table 2.3).
const PADE13: [f64; 14] = [
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
];

/// The largest 1-norm for which Padé 13 is accurate to double precision (θ13).
const THETA13: f64 = 5.371920351148152;

/// `c0 x0 + c1 x1 + c2 x2 (+ c3 x3)`.
fn combine(terms: &[(&Tensor, f64)]) -> Result<Tensor> {
    let mut acc = mul_scalar(terms[0].0, Scalar::Float(terms[0].1))?;
    for (x, c) in &terms[1..] {
        acc = add(&acc, &mul_scalar(x, Scalar::Float(*c))?)?;
    }
    Ok(acc)
}

/// exp of a batch of square matrices (float32/64, complex; no autograd).
fn expm(a: &Tensor) -> Result<Tensor> {
    let n = last2(a).0;
    if a.numel() == 0 {
        return contiguous(a);
    }
    let batch = &a.shape()[..a.dim() - 2];
    // s_i = ceil(log2(|A_i|_1 / θ13)), so that A_i / 2^s_i is within Padé 13's range.
    let norms = amax(
        &sum(&abs(a)?, Some(&[-2]), false, None)?,
        Extreme::Max,
        Some(&[-1]),
        false,
    )?;
    let steps: Vec<u32> = to_dtype(&norms, DType::F64)?
        .to_vec::<f64>()
        .iter()
        .map(|&v| {
            if v.is_finite() && v > THETA13 {
                (v / THETA13).log2().ceil().max(0.0) as u32
            } else {
                0
            }
        })
        .collect();
    let mut per_matrix: Vec<usize> = batch.to_vec();
    per_matrix.extend([1, 1]);
    let scales: Vec<f64> = steps.iter().map(|&s| (-f64::from(s)).exp2()).collect();
    let scales = to_dtype(&Tensor::from_vec(scales, &per_matrix)?, a.dtype())?;
    let a = mul(a, &scales)?;

    let b = PADE13;
    let eye = expand(&crate::ops::creation::eye(n, n, a.dtype())?, &a.shape())?;
    let a2 = matmul(&a, &a)?;
    let a4 = matmul(&a2, &a2)?;
    let a6 = matmul(&a4, &a2)?;
    let u_inner = matmul(&a6, &combine(&[(&a6, b[13]), (&a4, b[11]), (&a2, b[9])])?)?;
    let u_inner = add(
        &u_inner,
        &combine(&[(&a6, b[7]), (&a4, b[5]), (&a2, b[3]), (&eye, b[1])])?,
    )?;
    let u = matmul(&a, &u_inner)?;
    let v = matmul(&a6, &combine(&[(&a6, b[12]), (&a4, b[10]), (&a2, b[8])])?)?;
    let v = add(
        &v,
        &combine(&[(&a6, b[6]), (&a4, b[4]), (&a2, b[2]), (&eye, b[0])])?,
    )?;
    let lhs = sub(&v, &u, Scalar::Int(1))?;
    let rhs = add(&v, &u)?;
    let mut x = solve_ex(&lhs, &rhs, true, false)?.0;

    // Undo the scaling: square each matrix s_i times.
    let most = steps.iter().copied().max().unwrap_or(0);
    for k in 0..most {
        let sq = matmul(&x, &x)?;
        x = if steps.iter().all(|&s| s > k) {
            sq
        } else {
            let keep: Vec<bool> = steps.iter().map(|&s| s > k).collect();
            where_(&Tensor::from_vec(keep, &per_matrix)?, &sq, &x)?
        };
    }
    contiguous(&x)
}

/// The top-right block of exp([[x, e], [0, x]]).
fn frechet(x: &Tensor, e: &Tensor) -> Result<Tensor> {
    let n = last2(x).0 as i64;
    let zero = crate::ops::creation::zeros_like(x)?;
    let top = cat(&[x.clone(), e.clone()], -1)?;
    let bottom = cat(&[zero, x.clone()], -1)?;
    let big = apply1(MatrixExp, &[cat(&[top, bottom], -2)?])?;
    narrow(&narrow(&big, -2, 0, n)?, -1, n, n)
}

impl Op for MatrixExp {
    fn name(&self) -> &'static str {
        "LinalgMatrixExpBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |x| {
            let a = &x[0];
            let out = if matches!(a.dtype(), DType::F16 | DType::BF16) {
                to_dtype(&expm(&to_dtype(a, DType::F32)?)?, a.dtype())?
            } else {
                expm(a)?
            };
            Ok(smallvec![out])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0))]
    }
    /// gA = L(A^H, G), the Fréchet derivative at A^H in the direction G.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let a = ctx.saved(0)?;
        Ok(smallvec![Some(frechet(&mh(a)?, &ctx.grad(0)?)?)])
    }
    /// dexp(A) = L(A, dA).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(t) = ctx.tangent(0) else {
            return Ok(smallvec![None]);
        };
        Ok(smallvec![Some(frechet(&ctx.primals[0], t)?)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2])
    }
}

/// `linalg.matrix_exp(A)` / `torch.matrix_exp` / `Tensor.matrix_exp`.
pub fn matrix_exp(a: &Tensor) -> Result<Tensor> {
    const NAME: &str = "linalg.matrix_exp";
    check_square(a, NAME)?;
    check_float(a, NAME, false)?;
    apply1(MatrixExp, std::slice::from_ref(a))
}
