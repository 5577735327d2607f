//! `cholesky_solve` (CholeskySolveBackward0) and `cholesky_inverse`
//! (CholeskyInverseBackward0): solves and inverses from a Cholesky factor, built from
//! two triangular solves. As torch, the forward reads only the factor's triangle while
//! the rules (torch's cholesky_solve_backward / cholesky_inverse_backward and their jvps)
//! treat the factor as the full matrix it is given.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::ops::binary::{add, eq_scalar, sub};
use crate::ops::decomp::triangular::SolveTriangular;
use crate::ops::decomp::{batch_front_all, check_square, first_failure, last2, linalg_error};
use crate::ops::linalg::{matmul, mh};
use crate::ops::rules::composite;
use crate::ops::unary::neg;
use crate::ops::view::diagonal;
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

/// `A^-1 B` for `A = L L^H` (lower) or `A = U^H U` (`upper`), by two triangular solves.
fn solve_factored(b: &Tensor, l: &Tensor, upper: bool) -> Result<Tensor> {
    let tri = |t: &Tensor, upper: bool, rhs: &Tensor| {
        let op = SolveTriangular {
            upper,
            left: true,
            unitriangular: false,
        };
        apply1(op, &[t.clone(), rhs.clone()])
    };
    let lh = mh(l)?;
    if upper {
        tri(l, true, &tri(&lh, false, b)?)
    } else {
        tri(&lh, true, &tri(l, false, b)?)
    }
}

/// `cholesky_solve(B, L, upper)`: `X` with `(L L^H) X = B` (or `(U^H U) X = B`).
#[derive(Clone, Copy)]
pub struct CholeskySolve {
    pub upper: bool,
}

impl Op for CholeskySolve {
    fn name(&self) -> &'static str {
        "CholeskySolveBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |x| {
            Ok(smallvec![solve_factored(&x[0], &x[1], self.upper)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1)), Some(SaveRef::Output(0))]
    }
    /// torch's cholesky_solve_backward: gB = cholesky_solve(gX, L); C = gB X^H + X gB^H;
    /// gL = -C L (lower) or -L C (upper).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (l, x) = (ctx.saved(0)?, ctx.saved(1)?);
        let gb = apply1(*self, &[ctx.grad(0)?, l.clone()])?;
        let gl = if ctx.needs(1) {
            let c = matmul(&gb, &mh(x)?)?;
            let c = add(&c, &mh(&c)?)?;
            Some(neg(&if self.upper {
                matmul(l, &c)?
            } else {
                matmul(&c, l)?
            })?)
        } else {
            None
        };
        Ok(smallvec![ctx.needs(0).then_some(gb), gl])
    }
    /// torch's cholesky_solve_jvp: dK = dL L^H (lower) or dU^H U; dA = dK + dK^H;
    /// dX = cholesky_solve(dB - dA X, L).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (l, x) = (&ctx.primals[1], &ctx.outputs[0]);
        let mut rhs = match ctx.tangent(0) {
            Some(tb) => tb.clone(),
            None if ctx.tangent(1).is_none() => return Ok(smallvec![None]),
            None => crate::ops::creation::zeros_like(x)?,
        };
        if let Some(tl) = ctx.tangent(1) {
            let dk = if self.upper {
                matmul(&mh(tl)?, l)?
            } else {
                matmul(tl, &mh(l)?)?
            };
            let da = add(&dk, &mh(&dk)?)?;
            rhs = sub(&rhs, &matmul(&da, x)?, Scalar::Int(1))?;
        }
        Ok(smallvec![Some(apply1(*self, &[rhs, l.clone()])?)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2, 2])
    }
}

fn unsupported_low_precision(name: &str, d: DType) -> Result<()> {
    if !(d.is_floating_point() || d.is_complex()) || matches!(d, DType::F16 | DType::BF16) {
        return Err(crate::dtype::unsupported(name, d));
    }
    Ok(())
}

/// `torch.cholesky_solve(B, L, upper=)`: torch's checks in its order (ranks, dtypes,
/// squareness, sizes, batch broadcast, dtype support).
pub fn cholesky_solve(b: &Tensor, l: &Tensor, upper: bool) -> Result<Tensor> {
    if b.dim() < 2 {
        return Err(Error::runtime(format!(
            "b should have at least 2 dimensions, but has {} dimensions instead",
            b.dim()
        )));
    }
    if l.dim() < 2 {
        return Err(Error::runtime(format!(
            "u should have at least 2 dimensions, but has {} dimensions instead",
            l.dim()
        )));
    }
    if b.dtype() != l.dtype() {
        return Err(Error::runtime(format!(
            "Expected b and A to have the same dtype, but found b of type {} and A of type {} instead.",
            b.dtype().scalar_type_name(),
            l.dtype().scalar_type_name()
        )));
    }
    let (m, n) = last2(l);
    if m != n {
        return Err(Error::runtime(format!(
            "A must be batches of square matrices, but they are {m} by {n} matrices"
        )));
    }
    let (rows, cols) = last2(b);
    if rows != n {
        return Err(Error::runtime(format!(
            "Incompatible matrix sizes for cholesky_solve: each A matrix is {n} by {n} but each b matrix is {rows} by {cols}"
        )));
    }
    crate::shape::broadcast_shapes(&b.shape()[..b.dim() - 2], &l.shape()[..l.dim() - 2])?;
    unsupported_low_precision("cholesky_solve_cpu", b.dtype())?;
    apply1(CholeskySolve { upper }, &[b.clone(), l.clone()])
}

// ------------------------------------------------------------------ cholesky_inverse

/// `cholesky_inverse(L, upper)`: `(L L^H)^-1` (or `(U^H U)^-1`).
#[derive(Clone, Copy)]
pub struct CholeskyInverse {
    pub upper: bool,
    /// Raise torch's LinAlgError for a zero on the diagonal (not inside rules).
    pub check: bool,
}

impl Op for CholeskyInverse {
    fn name(&self) -> &'static str {
        "CholeskyInverseBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |x| {
            let l = &x[0];
            if self.check && l.numel() > 0 {
                // LAPACK's potri (trtri) info: the first zero on the diagonal.
                let zero = eq_scalar(&diagonal(l, 0, -2, -1)?, Scalar::Int(0))?;
                let n = last2(l).0;
                let info: Vec<i32> = zero
                    .to_vec::<bool>()
                    .chunks(n)
                    .map(|c| c.iter().position(|&z| z).map_or(0, |k| k as i32 + 1))
                    .collect();
                let info = Tensor::from_vec(info, &l.shape()[..l.dim() - 2])?;
                if let Some((element, k)) = first_failure(&info) {
                    return Err(linalg_error(
                        "cholesky_inverse",
                        element,
                        &format!("The diagonal element {k} is zero, the inversion could not be completed because the input matrix is singular."),
                    ));
                }
            }
            let n = last2(l).0;
            let eye = crate::ops::creation::eye(n, n, l.dtype())?;
            let eye = crate::ops::view::expand(&eye, &l.shape())?;
            Ok(smallvec![solve_factored(&eye, l, self.upper)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    /// torch's cholesky_inverse_backward: C = X (G + G^H) X; gL = -C L (lower) or -L C.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (l, x) = (ctx.saved(0)?, ctx.saved(1)?);
        let g = ctx.grad(0)?;
        let c = matmul(x, &matmul(&add(&g, &mh(&g)?)?, x)?)?;
        let gl = if self.upper {
            matmul(l, &c)?
        } else {
            matmul(&c, l)?
        };
        Ok(smallvec![Some(neg(&gl)?)])
    }
    /// torch's cholesky_inverse_jvp: P = -X dC C X with C = U (upper) or L^H and dC its
    /// tangent; dX = P + P^H.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(t) = ctx.tangent(0) else {
            return Ok(smallvec![None]);
        };
        let (l, x) = (&ctx.primals[0], &ctx.outputs[0]);
        let (c, dc) = if self.upper {
            (l.clone(), mh(t)?)
        } else {
            (mh(l)?, t.clone())
        };
        let p = neg(&matmul(&matmul(&matmul(x, &dc)?, &c)?, x)?)?;
        Ok(smallvec![Some(add(&p, &mh(&p)?)?)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2])
    }
}

/// `torch.cholesky_inverse(L, upper=)`.
pub fn cholesky_inverse(l: &Tensor, upper: bool) -> Result<Tensor> {
    check_square(l, "cholesky_inverse")?;
    unsupported_low_precision("cholesky_inverse_out_cpu", l.dtype())?;
    let op = CholeskyInverse { upper, check: true };
    apply1(op, std::slice::from_ref(l))
}
