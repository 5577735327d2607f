//! Diagonals as new tensors: `diag_embed` (the last dim placed on a diagonal of zeros;
//! `diag` of a vector and `diagflat` are built on it, as torch builds them) and the
//! diagonal copy `diag` of a matrix returns.

use smallvec::smallvec;

use crate::dtype::Scalar;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::ops::device::{backend, wrap};
use crate::ops::rules::{batch_reduction, composite, linear_jvp};
use crate::ops::unary::clone;
use crate::ops::view::{contiguous, diagonal, restride, ViewKind};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::{wrap_dim, Dims};
use crate::tensor::Tensor;

/// Where the `offset` diagonal of dims (`dim1`, `dim2`) of a contiguous tensor of
/// `shape` lies, and that tensor's layout.
fn diagonal_of(shape: &[usize], offset: i64, dim1: usize, dim2: usize) -> Result<(Layout, Layout)> {
    let full = Layout::contiguous(shape);
    let diag = ViewKind::Diagonal {
        offset,
        dim1: dim1 as i64,
        dim2: dim2 as i64,
    }
    .apply(&full)?;
    Ok((diag, full))
}

fn int(v: i64) -> SavedAttr {
    SavedAttr::Scalar(Scalar::Int(v))
}

/// `diag_embed(x, offset, dim1, dim2)` (DiagEmbedBackward0): a tensor of zeros with one
/// more dim whose `offset` diagonal over (`dim1`, `dim2`) holds x's last dim. Its
/// adjoint is `diagonal`.
#[derive(Clone, Copy)]
pub struct DiagEmbed {
    pub offset: i64,
    /// Output dims, non-negative.
    pub dim1: usize,
    pub dim2: usize,
}

impl DiagEmbed {
    fn out_shape(&self, shape: &[usize]) -> Dims {
        let (rest, last) = shape.split_at(shape.len() - 1);
        let n = last[0] + self.offset.unsigned_abs() as usize;
        let mut out: Dims = rest.iter().copied().collect();
        let (lo, hi) = (self.dim1.min(self.dim2), self.dim1.max(self.dim2));
        out.insert(lo, n);
        out.insert(hi, n);
        out
    }
}

impl Op for DiagEmbed {
    fn name(&self) -> &'static str {
        "DiagEmbedBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim1", int(self.dim1 as i64)),
            ("dim2", int(self.dim2 as i64)),
            ("offset", int(self.offset)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        let shape = self.out_shape(&x.shape());
        let (diag, full) = diagonal_of(&shape, self.offset, self.dim1, self.dim2)?;
        // Zeros with x written along the diagonal: one strided copy.
        Ok(smallvec![wrap(backend(x)?.embed(
            &x.data(),
            &diag,
            &full.shape
        )?)])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let (d1, d2) = (self.dim1 as i64, self.dim2 as i64);
        Ok(smallvec![Some(diagonal(&g, self.offset, d1, d2)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(*self, std::slice::from_ref(t)))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| DiagEmbed {
            dim1: self.dim1 + shift,
            dim2: self.dim2 + shift,
            ..*self
        })
    }
}

/// `diag_embed(x, offset=0, dim1=-2, dim2=-1)`; the dims count in the output.
pub fn diag_embed(x: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
    let rank = x.dim() + 1;
    let (d1, d2) = (wrap_dim(dim1, rank)?, wrap_dim(dim2, rank)?);
    if d1 == d2 {
        return Err(Error::runtime(format!(
            "diagonal dimensions cannot be identical {dim1}, {dim2}"
        )));
    }
    let op = DiagEmbed {
        offset,
        dim1: d1,
        dim2: d2,
    };
    crate::shape::checked_numel(&op.out_shape(&x.shape()))?;
    apply1(op, std::slice::from_ref(x))
}

/// The `offset` diagonal of dims (`dim1`, `dim2`) as a new tensor
/// (`DiagonalBackward0_copy`, the node torch records for `diag` of a matrix).
#[derive(Clone, Copy)]
pub struct DiagonalCopy {
    pub offset: i64,
    pub dim1: usize,
    pub dim2: usize,
}

impl Op for DiagonalCopy {
    fn name(&self) -> &'static str {
        "DiagonalBackward0_copy"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim1", int(self.dim1 as i64)),
            ("dim2", int(self.dim2 as i64)),
            ("offset", int(self.offset)),
            ("self_sym_sizes", SavedAttr::InputSizes(0)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (d1, d2) = (self.dim1 as i64, self.dim2 as i64);
        let out = composite(inputs, |p| {
            contiguous(&clone(&diagonal(&p[0], self.offset, d1, d2)?)?)
        })?;
        Ok(smallvec![out])
    }
    /// The gradient on the diagonal of zeros.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let shape = &ctx.inputs[0].shape;
        let (diag, full) = diagonal_of(shape, self.offset, self.dim1, self.dim2)?;
        Ok(smallvec![Some(restride(&ctx.grad(0)?, diag, full)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(*self, std::slice::from_ref(t)))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| DiagonalCopy {
            dim1: self.dim1 + shift,
            dim2: self.dim2 + shift,
            ..*self
        })
    }
}

/// `diag(x, diagonal=0)`: a vector on a diagonal of a square matrix (`diag_embed`), or
/// a matrix's diagonal as a new vector.
pub fn diag(x: &Tensor, offset: i64) -> Result<Tensor> {
    match x.dim() {
        1 => diag_embed(x, offset, -2, -1),
        2 => apply1(
            DiagonalCopy {
                offset,
                dim1: 0,
                dim2: 1,
            },
            std::slice::from_ref(x),
        ),
        n => Err(Error::runtime(format!(
            "diag(): Supports 1D or 2D tensors. Got {n}D"
        ))),
    }
}

/// `diagflat(x, offset=0)`: the flattened input on a diagonal (`diag_embed` of a view).
pub fn diagflat(x: &Tensor, offset: i64) -> Result<Tensor> {
    let flat = crate::ops::view::view(&contiguous(x)?, &[-1])?;
    diag_embed(&flat, offset, -2, -1)
}
