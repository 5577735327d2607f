//! `linalg.cholesky` / `cholesky_ex` (LinalgCholeskyExBackward0).

use smallvec::{smallvec, SmallVec};

use crate::dtype::Scalar;
use crate::error::Result;
use crate::kernels::kinds::Decomp;
use crate::ops::binary::{add, mul_scalar, sub};
use crate::ops::decomp::{
    batch_front_all, check_float, check_matrix, check_square, decompose, first_failure,
    linalg_error, triangle, triangular::SolveTriangular,
};
use crate::ops::diag::diag_embed;
use crate::ops::linalg::{matmul, mh};
use crate::ops::rules::composite;
use crate::ops::view::{contiguous, diagonal};
use crate::ops::{
    apply, apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

/// `(L, info)`: A = L L^H from A's lower triangle, or `(U, info)` with A = U^H U from
/// its upper triangle. `check`: a matrix that is not positive-definite raises, naming
/// this function.
#[derive(Clone, Copy)]
pub struct Cholesky {
    pub upper: bool,
    pub check: Option<&'static str>,
}

fn tri_solve(a: &Tensor, b: &Tensor, upper: bool, left: bool) -> Result<Tensor> {
    let op = SolveTriangular {
        upper,
        left,
        unitriangular: false,
    };
    apply1(op, &[a.clone(), b.clone()])
}

impl Op for Cholesky {
    fn name(&self) -> &'static str {
        "LinalgCholeskyExBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let out = composite(inputs, |x| {
            // The upper factor of A is the conjugate transpose of the lower one of A^H.
            let a = if self.upper { mh(&x[0])? } else { x[0].clone() };
            let mut out = decompose(&[a], Decomp::Cholesky)?;
            if self.upper {
                out[0] = contiguous(&mh(&out[0])?)?;
            }
            Ok(out)
        })?;
        if let Some(name) = self.check {
            if let Some((element, k)) = first_failure(&out[1]) {
                return Err(linalg_error(
                    name,
                    element,
                    &format!("The factorization could not be completed because the input is not positive-definite (the leading minor of order {k} is not positive-definite)."),
                ));
            }
        }
        Ok(out.into_iter().collect())
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(0))]
    }
    /// torch's cholesky_backward: gA = L^-H π*(tril(L^H gL)) L^-1 with
    /// π*(X) = (X + X^H - diag X) / 2.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (l, gl) = if self.upper {
            (mh(ctx.saved(0)?)?, mh(&ctx.grad(0)?)?)
        } else {
            (ctx.saved(0)?.clone(), ctx.grad(0)?)
        };
        let ga = triangle(&matmul(&mh(&l)?, &gl)?, 0, false)?;
        let ga = mul_scalar(
            &add(&ga, &mh(&triangle(&ga, -1, false)?)?)?,
            Scalar::Float(0.5),
        )?;
        let ga = tri_solve(&mh(&l)?, &ga, true, true)?;
        let ga = tri_solve(&l, &ga, false, false)?;
        Ok(smallvec![Some(ga)])
    }
    /// torch's cholesky_jvp: dL = L π(L^-1 dA L^-H), π(X) = tril(X) - diag(X) / 2.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(da) = ctx.tangent(0) else {
            return Ok(smallvec![None, None]);
        };
        let l = if self.upper {
            mh(&ctx.outputs[0])?
        } else {
            ctx.outputs[0].clone()
        };
        let dl = tri_solve(&l, da, false, true)?;
        let dl = tri_solve(&mh(&l)?, &dl, true, false)?;
        let half_diag = mul_scalar(
            &diag_embed(&diagonal(&dl, 0, -2, -1)?, 0, -2, -1)?,
            Scalar::Float(0.5),
        )?;
        let dl = sub(&triangle(&dl, 0, false)?, &half_diag, Scalar::Int(1))?;
        let dl = matmul(&l, &dl)?;
        Ok(smallvec![
            Some(if self.upper { mh(&dl)? } else { dl }),
            None
        ])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2])
    }
}

/// `linalg.cholesky_ex(A, upper=, check_errors=)`: `(L, info)`.
pub fn cholesky_ex(a: &Tensor, upper: bool, check_errors: bool) -> Result<(Tensor, Tensor)> {
    cholesky_named(a, upper, check_errors.then_some("linalg.cholesky_ex"))
}

/// `linalg.cholesky(A, upper=)`.
pub fn cholesky(a: &Tensor, upper: bool) -> Result<Tensor> {
    Ok(cholesky_named(a, upper, Some("linalg.cholesky"))?.0)
}

fn cholesky_named(
    a: &Tensor,
    upper: bool,
    check: Option<&'static str>,
) -> Result<(Tensor, Tensor)> {
    const NAME: &str = "linalg.cholesky";
    check_matrix(a, NAME, "A")?;
    check_square(a, NAME)?;
    check_float(a, NAME, true)?;
    let op = Cholesky { upper, check };
    let mut out = apply(op, std::slice::from_ref(a))?;
    let info = out.pop().expect("two outputs");
    Ok((out.pop().expect("two outputs"), info))
}
