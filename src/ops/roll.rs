//! Copies that move elements around: `roll`, `rot90` and `narrow_copy`. Each is linear
//! and its gradient undoes the move (roll back, rotate back, scatter into zeros).

use smallvec::{smallvec, SmallVec};

use crate::dtype::Scalar;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::ops::join::cat;
use crate::ops::rules::{batch_reduction, composite, linear_jvp, to_front};
use crate::ops::shape::flip;
use crate::ops::unary::clone;
use crate::ops::view::{contiguous, narrow, reshape, restride, transpose};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::{wrap_dim, Dims};
use crate::tensor::Tensor;

/// `dim` of `t` wrapped, refused for a 0-dim `t` (which torch's size and roll checks
/// give no dims, unlike reductions that treat it as 1-D).
pub(crate) fn wrap_dim_of(dim: i64, t: &Tensor) -> Result<usize> {
    if t.dim() == 0 {
        return Err(Error::index(format!(
            "Dimension specified as {dim} but tensor has no dimensions"
        )));
    }
    wrap_dim(dim, t.dim())
}

fn ints(v: impl IntoIterator<Item = i64>) -> SavedAttr {
    SavedAttr::Ints(v.into_iter().collect())
}

/// `roll(x, shifts, dims)` (RollBackward0): elements shifted along each dim, wrapping
/// around; with no dims, along the flattened tensor (then `shifts` has one entry).
#[derive(Clone)]
pub struct Roll {
    pub shifts: SmallVec<[i64; 4]>,
    pub dims: Dims,
}

/// `x` with its elements along `dim` shifted by `shift`: the last `shift` ones first.
fn roll_one(x: &Tensor, shift: i64, dim: usize) -> Result<Option<Tensor>> {
    let n = x.shape()[dim] as i64;
    let s = if n == 0 { 0 } else { shift.rem_euclid(n) };
    if s == 0 {
        return Ok(None);
    }
    let d = dim as i64;
    Ok(Some(cat(
        &[narrow(x, d, n - s, s)?, narrow(x, d, 0, n - s)?],
        d,
    )?))
}

impl Roll {
    fn compute(&self, x: &Tensor) -> Result<Tensor> {
        if self.dims.is_empty() {
            let flat = reshape(x, &[x.numel()])?;
            let rolled = Roll {
                shifts: self.shifts.clone(),
                dims: smallvec![0],
            }
            .compute(&flat)?;
            // A plain tensor, not a view of the rolled copy.
            return Ok(reshape(&rolled, &x.shape())?.alias_fresh_version());
        }
        let mut out: Option<Tensor> = None;
        for (&s, &d) in self.shifts.iter().zip(&self.dims) {
            let current = out.as_ref().unwrap_or(x);
            if let Some(r) = roll_one(current, s, d)? {
                out = Some(r);
            }
        }
        match out {
            Some(o) => Ok(o),
            None => clone(x),
        }
    }
}

impl Op for Roll {
    fn name(&self) -> &'static str {
        "RollBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dims", ints(self.dims.iter().map(|&d| d as i64))),
            ("shifts", ints(self.shifts.iter().copied())),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        Ok(smallvec![composite(inputs, |p| self.compute(&p[0]))?])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let back = Roll {
            shifts: self.shifts.iter().map(|s| s.wrapping_neg()).collect(),
            dims: self.dims.clone(),
        };
        Ok(smallvec![Some(apply1(back, &[ctx.grad(0)?])?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(self.clone(), std::slice::from_ref(t)))
    }
    /// Dims one further in; the flattened roll rolls each example's flattened values.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        let x = to_front(x, *b)?;
        if self.dims.is_empty() {
            let shape = x.shape();
            let rows = reshape(&x, &[shape[0], x.numel() / shape[0].max(1)])?;
            let op = Roll {
                shifts: self.shifts.clone(),
                dims: smallvec![1],
            };
            let out = reshape(&apply1(op, &[rows])?, &shape)?;
            return Ok(smallvec![(out, Some(0))]);
        }
        let op = Roll {
            shifts: self.shifts.clone(),
            dims: self.dims.iter().map(|&d| d + 1).collect(),
        };
        Ok(smallvec![(apply1(op, &[x])?, Some(0))])
    }
}

/// `roll(x, shifts, dims)`, with torch's checks.
pub fn roll(x: &Tensor, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
    if shifts.is_empty() {
        return Err(Error::runtime("`shifts` required"));
    }
    if !(dims.is_empty() && shifts.len() == 1) && shifts.len() != dims.len() {
        return Err(Error::runtime(format!(
            "shifts and dimensions must align. shifts: {}, dims:{}",
            shifts.len(),
            dims.len()
        )));
    }
    let dims = dims
        .iter()
        .map(|&d| wrap_dim_of(d, x))
        .collect::<Result<Dims>>()?;
    apply1(
        Roll {
            shifts: shifts.into(),
            dims,
        },
        std::slice::from_ref(x),
    )
}

// ---------------------------------------------------------------- rot90

/// `rot90(x, k, dims)` (Rot90Backward0): `k` quarter turns in the plane of `dims`, from
/// the first dim towards the second. As torch, odd turns return the transposed layout
/// of a flipped copy.
#[derive(Clone)]
pub struct Rot90 {
    pub k: i64,
    pub dims: [usize; 2],
}

impl Op for Rot90 {
    fn name(&self) -> &'static str {
        "Rot90Backward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dims", ints(self.dims.iter().map(|&d| d as i64))),
            ("k", SavedAttr::Scalar(Scalar::Int(self.k))),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let [d0, d1] = self.dims.map(|d| d as i64);
        let out = composite(inputs, |p| {
            let x = &p[0];
            match self.k.rem_euclid(4) {
                // A plain tensor over the flipped copy, not a view of it.
                1 => Ok(transpose(&flip(x, &[d1])?, d0, d1)?.alias_fresh_version()),
                2 => flip(x, &[d0, d1]),
                3 => Ok(transpose(&flip(x, &[d0])?, d0, d1)?.alias_fresh_version()),
                _ => contiguous(&clone(x)?),
            }
        })?;
        Ok(smallvec![out])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let back = Rot90 {
            k: self.k.wrapping_neg(),
            dims: self.dims,
        };
        Ok(smallvec![Some(apply1(back, &[ctx.grad(0)?])?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(self.clone(), std::slice::from_ref(t)))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Rot90 {
            k: self.k,
            dims: self.dims.map(|d| d + shift),
        })
    }
}

/// `rot90(x, k, dims)`, with torch's checks in its order.
pub fn rot90(x: &Tensor, k: i64, dims: &[i64]) -> Result<Tensor> {
    if dims.len() != 2 {
        return Err(Error::runtime(format!(
            "expected total rotation dims == 2, but got dims = {}",
            dims.len()
        )));
    }
    if x.dim() < 2 {
        return Err(Error::runtime(format!(
            "expected total dims >= 2, but got total dims = {}",
            x.dim()
        )));
    }
    let (d0, d1) = (wrap_dim(dims[0], x.dim())?, wrap_dim(dims[1], x.dim())?);
    if d0 == d1 {
        return Err(Error::runtime(format!(
            "expected rotation dims to be different, but got dim0 = {} and dim1 = {}",
            dims[0], dims[1]
        )));
    }
    apply1(Rot90 { k, dims: [d0, d1] }, std::slice::from_ref(x))
}

// ---------------------------------------------------------------- narrow_copy

/// `narrow_copy(x, dim, start, length)` (NarrowCopyBackward0): `narrow` as a new
/// contiguous tensor.
#[derive(Clone, Copy)]
pub struct NarrowCopy {
    pub dim: usize,
    pub start: usize,
    pub length: usize,
}

impl NarrowCopy {
    /// Where the narrowed elements sit in a contiguous tensor of `shape`, and that tensor.
    fn layouts(&self, shape: &[usize]) -> Result<(Layout, Layout)> {
        let full = Layout::contiguous(shape);
        let part = full.narrow(self.dim as i64, self.start as i64, self.length as i64)?;
        Ok((part, full))
    }
}

impl Op for NarrowCopy {
    fn name(&self) -> &'static str {
        "NarrowCopyBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        let int = |v: usize| SavedAttr::Scalar(Scalar::Int(v as i64));
        vec![
            ("dim", int(self.dim)),
            ("length", int(self.length)),
            ("self_sym_sizes", SavedAttr::InputSizes(0)),
            ("start", int(self.start)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let out = composite(inputs, |p| {
            let part = narrow(
                &p[0],
                self.dim as i64,
                self.start as i64,
                self.length as i64,
            )?;
            contiguous(&clone(&part)?)
        })?;
        Ok(smallvec![out])
    }
    /// The gradient placed where the slice came from, zeros elsewhere.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (part, full) = self.layouts(&ctx.inputs[0].shape)?;
        Ok(smallvec![Some(restride(&ctx.grad(0)?, part, full)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(*self, std::slice::from_ref(t)))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| NarrowCopy {
            dim: self.dim + shift,
            ..*self
        })
    }
}

/// `narrow_copy(x, dim, start, length)`, with torch's checks (a negative `start`
/// counts from the end).
pub fn narrow_copy(x: &Tensor, dim: i64, start: i64, length: i64) -> Result<Tensor> {
    if x.dim() == 0 {
        return Err(Error::runtime(
            "narrow() cannot be applied to a 0-dim tensor.",
        ));
    }
    if dim >= x.dim() as i64 {
        return Err(Error::runtime("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"));
    }
    let d = wrap_dim(dim, x.dim())?;
    x.layout().narrow(dim, start, length)?;
    let start = if start < 0 {
        start + x.shape()[d] as i64
    } else {
        start
    };
    apply1(
        NarrowCopy {
            dim: d,
            start: start as usize,
            length: length as usize,
        },
        std::slice::from_ref(x),
    )
}
