//! `linalg.solve_triangular` (LinalgSolveTriangularBackward0).

use smallvec::{smallvec, SmallVec};

use crate::dtype::Scalar;
use crate::error::{Error, Result};
use crate::kernels::kinds::Decomp;
use crate::ops::binary::sub;
use crate::ops::decomp::{batch_front_all, check_matrix, check_square, decompose, last2, triangle};
use crate::ops::linalg::{matmul, mh};
use crate::ops::rules::composite;
use crate::ops::unary::{neg, to_dtype};
use crate::ops::view::{contiguous, transpose};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

/// `X` with `A X = B` (`left`) or `X A = B`, reading only A's `upper` or lower triangle
/// (and taking its diagonal as ones when `unitriangular`).
#[derive(Clone, Copy)]
pub struct SolveTriangular {
    pub upper: bool,
    pub left: bool,
    pub unitriangular: bool,
}

impl SolveTriangular {
    /// A's part that the solve reads: its triangle, without the diagonal when unit.
    fn mask(&self, a: &Tensor) -> Result<Tensor> {
        let k = i64::from(self.unitriangular);
        if self.upper {
            triangle(a, k, true)
        } else {
            triangle(a, -k, false)
        }
    }
}

impl Op for SolveTriangular {
    fn name(&self) -> &'static str {
        "LinalgSolveTriangularBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |x| {
            let (a, b) = (&x[0], &x[1]);
            if self.left {
                let kind = Decomp::SolveTriangular {
                    upper: self.upper,
                    unitriangular: self.unitriangular,
                };
                return Ok(decompose(&[a.clone(), b.clone()], kind)?
                    .into_iter()
                    .collect());
            }
            // X A = B is A^T X^T = B^T, with A^T's triangle the other one.
            let kind = Decomp::SolveTriangular {
                upper: !self.upper,
                unitriangular: self.unitriangular,
            };
            let at = transpose(a, -2, -1)?;
            let bt = transpose(b, -2, -1)?;
            let xt = decompose(&[at, bt], kind)?.swap_remove(0);
            Ok(smallvec![contiguous(&transpose(&xt, -2, -1)?)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    /// gB = solve_triangular(A^H, gX, !upper, same side); gA = -gB X^H (left) or
    /// -X^H gB, masked to the triangle that was read.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (a, x) = (ctx.saved(0)?, ctx.saved(1)?);
        let flipped = SolveTriangular {
            upper: !self.upper,
            ..*self
        };
        let gb = apply1(flipped, &[mh(a)?, ctx.grad(0)?])?;
        let ga = if ctx.needs(0) {
            let g = if self.left {
                matmul(&gb, &mh(x)?)?
            } else {
                matmul(&mh(x)?, &gb)?
            };
            Some(neg(&self.mask(&g)?)?)
        } else {
            None
        };
        Ok(smallvec![ga, ctx.needs(1).then_some(gb)])
    }
    /// dX = solve_triangular(A, dB - dA X) (left) or (dB - X dA) A^-1, dA masked.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (a, x) = (&ctx.primals[0], &ctx.outputs[0]);
        let mut rhs = match ctx.tangent(1) {
            Some(tb) => tb.clone(),
            None if ctx.tangent(0).is_none() => return Ok(smallvec![None]),
            None => crate::ops::creation::zeros_like(x)?,
        };
        if let Some(ta) = ctx.tangent(0) {
            let ta = self.mask(ta)?;
            let prod = if self.left {
                matmul(&ta, x)?
            } else {
                matmul(x, &ta)?
            };
            rhs = sub(&rhs, &prod, Scalar::Int(1))?;
        }
        Ok(smallvec![Some(apply1(*self, &[a.clone(), rhs])?)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2, 2])
    }
}

/// `linalg.solve_triangular(A, B, upper=, left=, unitriangular=)`.
pub fn solve_triangular(
    a: &Tensor,
    b: &Tensor,
    upper: bool,
    left: bool,
    unitriangular: bool,
) -> Result<Tensor> {
    const NAME: &str = "linalg.solve_triangular";
    let d = a.dtype();
    if !(d.is_floating_point() || d.is_complex())
        || matches!(d, crate::dtype::DType::F16 | crate::dtype::DType::BF16)
    {
        return Err(crate::dtype::unsupported("triangular_solve_cpu", d));
    }
    check_square(a, NAME)?;
    check_matrix(b, NAME, "B")?;
    let (n, _) = last2(a);
    let (rows, cols) = last2(b);
    if (left && rows != n) || (!left && cols != n) {
        return Err(Error::runtime(format!(
            "{NAME}: Incompatible shapes of A and B for the equation {} ({n}x{n} and {rows}x{cols})",
            if left { "AX = B" } else { "XA = B" }
        )));
    }
    crate::shape::broadcast_shapes(&a.shape()[..a.dim() - 2], &b.shape()[..b.dim() - 2])?;
    // torch computes in A's dtype.
    let b = if b.dtype() == d {
        b.clone()
    } else {
        to_dtype(b, d)?
    };
    let op = SolveTriangular {
        upper,
        left,
        unitriangular,
    };
    apply1(op, &[a.clone(), b])
}
