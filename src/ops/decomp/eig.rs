//! `linalg.eig` / `eigvals` (LinalgEigBackward0): the eigendecomposition of a general
//! square matrix, complex outputs in LAPACK geev's conventions (kernel `Decomp::Eig`),
//! with torch's linalg_eig_backward (including its check that a loss does not depend on
//! the eigenvectors' phases) and linalg_eig_jvp.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::Decomp;
use crate::ops::binary::{add, compare_scalar, div, mul, sub, Cmp};
use crate::ops::decomp::lu::solve;
use crate::ops::decomp::{batch_front_all, check_square, decompose};
use crate::ops::diag::diag_embed;
use crate::ops::linalg::{matmul, mh};
use crate::ops::rules::composite;
use crate::ops::unary::{abs, conj, real, to_dtype};
use crate::ops::view::{diagonal, unsqueeze};
use crate::ops::{apply, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx};
use crate::tensor::Tensor;

#[derive(Clone, Copy)]
pub struct Eig;

/// `E[.., i, j] = L_j - L_i` off the diagonal, 1 on it (`conj`: of conj(L)).
fn differences(l: &Tensor, conjugate: bool) -> Result<Tensor> {
    let l = if conjugate { conj(l)? } else { l.clone() };
    let e = sub(&unsqueeze(&l, -2)?, &unsqueeze(&l, -1)?, Scalar::Int(1))?;
    let n = *l.shape().last().unwrap_or(&0);
    let eye = crate::ops::creation::eye(n, n, e.dtype())?;
    add(&e, &eye)
}

/// `x` with its diagonal set to zero.
fn off_diagonal(x: &Tensor) -> Result<Tensor> {
    let n = *x.shape().last().unwrap_or(&0);
    let eye = crate::ops::creation::eye(n, n, DType::Bool)?;
    let zero = Tensor::scalar(Scalar::Float(0.0), x.dtype());
    crate::ops::binary::where_(&eye, &zero, x)
}

/// `x` with its diagonal replaced by `d`.
fn with_diagonal(x: &Tensor, d: &Tensor) -> Result<Tensor> {
    add(&off_diagonal(x)?, &diag_embed(d, 0, -2, -1)?)
}

impl Op for Eig {
    fn name(&self) -> &'static str {
        "LinalgEigBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |x| {
            Ok(decompose(&[x[0].clone()], Decomp::Eig)?
                .into_iter()
                .collect())
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(0)), Some(SaveRef::Output(1))]
    }
    /// torch's linalg_eig_backward: with G = V^H gV - V^H V Re(diag(V^H gV)), gA =
    /// V^-H (G / conj(E) with gL on the diagonal) V^H (its real part for a real A).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (l, v) = (ctx.saved(0)?, ctx.saved(1)?);
        let (gl, gv) = (&ctx.grads[0], &ctx.grads[1]);
        let vh = mh(v)?;
        let inner = if let Some(gv) = gv {
            let vhgv = matmul(&vh, gv)?;
            let diag = diagonal(&vhgv, 0, -2, -1)?;
            let phase = crate::ops::complex::imag(&diag)?;
            let bad = compare_scalar(&abs(&phase)?, Scalar::Float(1e-2), Cmp::Gt)?;
            if !phase.is_batched() && bad.to_vec::<bool>().iter().any(|&b| b) {
                return Err(Error::runtime(
                    "linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.",
                ));
            }
            let re = to_dtype(&real(&diag)?, v.dtype())?;
            let g = sub(
                &vhgv,
                &matmul(&vh, &mul(v, &unsqueeze(&re, -2)?)?)?,
                Scalar::Int(1),
            )?;
            let g = div(&g, &differences(l, true)?)?;
            match gl {
                Some(gl) => with_diagonal(&g, gl)?,
                None => g,
            }
        } else {
            match gl {
                Some(gl) => diag_embed(gl, 0, -2, -1)?,
                None => return Ok(smallvec![None]),
            }
        };
        let ga = solve(&vh, &matmul(&inner, &vh)?, true)?;
        let ga = if ctx.inputs[0].dtype.is_complex() {
            ga
        } else {
            real(&ga)?
        };
        Ok(smallvec![Some(ga)])
    }
    /// torch's linalg_eig_jvp: dP = V^-1 dA V; dL = diag(dP); dV = V (dP / E off the
    /// diagonal), less V Re(diag(V^H that)).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(da) = ctx.tangent(0) else {
            return Ok(smallvec![None, None]);
        };
        let (l, v) = (&ctx.outputs[0], &ctx.outputs[1]);
        let da = to_dtype(da, v.dtype())?;
        let dp = solve(v, &matmul(&da, v)?, true)?;
        let dl = diagonal(&dp, 0, -2, -1)?;
        let dv = matmul(v, &off_diagonal(&div(&dp, &differences(l, false)?)?)?)?;
        let re = real(&diagonal(&matmul(&mh(v)?, &dv)?, 0, -2, -1)?)?;
        let dv = sub(
            &dv,
            &mul(v, &unsqueeze(&to_dtype(&re, v.dtype())?, -2)?)?,
            Scalar::Int(1),
        )?;
        Ok(smallvec![Some(dl), Some(dv)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2])
    }
}

fn eig_named(a: &Tensor, name: &str) -> Result<(Tensor, Tensor)> {
    check_square(a, name)?;
    let d = a.dtype();
    if matches!(d, DType::F16 | DType::BF16) {
        return Err(crate::dtype::unsupported("linalg_eig_out_cpu", d));
    }
    if !(d.is_floating_point() || d.is_complex()) {
        return Err(Error::runtime(format!(
            "Unknown Complex ScalarType for {}",
            d.scalar_type_name()
        )));
    }
    let mut out = apply(Eig, std::slice::from_ref(a))?;
    let v = out.pop().expect("two outputs");
    Ok((out.pop().expect("two outputs"), v))
}

/// `linalg.eig(A)`: `(eigenvalues, eigenvectors)`, complex.
pub fn eig(a: &Tensor) -> Result<(Tensor, Tensor)> {
    eig_named(a, "linalg.eig")
}

/// `linalg.eigvals(A)`.
pub fn eigvals(a: &Tensor) -> Result<Tensor> {
    Ok(eig_named(a, "linalg.eigvals")?.0)
}
