//! Ops that rearrange elements into a new tensor: `flip`.

use smallvec::{smallvec, SmallVec};

use crate::dtype::Scalar;
use crate::error::{Error, Result};
use crate::ops::device::{backend, wrap};
use crate::ops::rules::{batch_reduction, linear_jvp};
use crate::ops::view::{expand, reshape};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::Dims;
use crate::tensor::Tensor;

/// `flip(x, dims)` (FlipBackward0): a copy with the order along `dims` reversed. It is
/// its own inverse, so the gradient is the flipped gradient.
#[derive(Clone)]
pub struct Flip {
    pub dims: Dims,
}

impl Op for Flip {
    fn name(&self) -> &'static str {
        "FlipBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![(
            "dims",
            SavedAttr::Ints(self.dims.iter().map(|&d| d as i64).collect()),
        )]
    }
    /// One strided copy with the flipped dims walked backwards (see Note: strided
    /// copies); with no dims, a plain copy.
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        Ok(smallvec![wrap(backend(x)?.flip(&x.data(), &self.dims)?)])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(apply1(self.clone(), &[ctx.grad(0)?])?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(self.clone(), std::slice::from_ref(t)))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |shift| Flip {
            dims: self.dims.iter().map(|&d| d + shift).collect(),
        })
    }
}

/// `flip(x, dims)`: each dim at most once.
pub fn flip(x: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let mut resolved = Dims::new();
    for &d in dims {
        let w = crate::shape::wrap_dim(d, x.dim())?;
        if resolved.contains(&w) {
            return Err(Error::runtime(format!(
                "dim {w} appears multiple times in the list of dims"
            )));
        }
        resolved.push(w);
    }
    // A scalar has nothing to reverse.
    if x.dim() == 0 {
        resolved.clear();
    }
    apply1(Flip { dims: resolved }, std::slice::from_ref(x))
}

/// `movedim(x, source, destination)`: a permutation that puts each `source` dim at its
/// `destination` and keeps the other dims in order (a PermuteBackward0 view).
pub fn movedim(x: &Tensor, source: &[i64], destination: &[i64]) -> Result<Tensor> {
    let fmt = |v: &[i64]| {
        let parts: Vec<String> = v.iter().map(|d| d.to_string()).collect();
        format!("[{}]", parts.join(", "))
    };
    if source.len() != destination.len() {
        return Err(Error::runtime(format!(
            "movedim: Invalid source or destination dims: source ({} dims) should contain the same number of dims as destination ({} dims)",
            fmt(source),
            fmt(destination)
        )));
    }
    let n = x.dim();
    let wrap = |v: &[i64], what: &str| -> Result<Dims> {
        let mut out = Dims::new();
        for &d in v {
            let w = crate::shape::wrap_dim(d, n)?;
            if out.contains(&w) {
                return Err(Error::runtime(format!(
                    "movedim: repeated dim in `{what}` ({})",
                    fmt(v)
                )));
            }
            out.push(w);
        }
        Ok(out)
    };
    let (src, dst) = (wrap(source, "source")?, wrap(destination, "destination")?);
    if n == 0 {
        // A scalar has one arrangement: torch returns an alias.
        return crate::ops::view::alias(x);
    }
    let mut order: SmallVec<[Option<usize>; 6]> = smallvec![None; n];
    for (&s, &d) in src.iter().zip(&dst) {
        order[d] = Some(s);
    }
    let mut rest = (0..n).filter(|d| !src.contains(d));
    let perm: SmallVec<[i64; 6]> = order
        .iter()
        .map(|o| o.or_else(|| rest.next()).map_or(0, |d| d as i64))
        .collect();
    crate::ops::view::permute(x, &perm)
}

// ---------------------------------------------------------------- tril / triu

/// `tril(x, diagonal)` / `triu` (TrilBackward0 / TriuBackward0): the elements on and
/// below (above) the `diagonal`-th diagonal of the last two dims, zeros elsewhere. The
/// op is a mask, so its gradient and tangent are the same mask applied.
#[derive(Clone, Copy)]
pub struct Triangle {
    pub diagonal: i64,
    pub upper: bool,
}

impl Op for Triangle {
    fn name(&self) -> &'static str {
        if self.upper {
            "TriuBackward0"
        } else {
            "TrilBackward0"
        }
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("diagonal", SavedAttr::Scalar(Scalar::Int(self.diagonal)))]
    }
    /// One pass: each row copies its kept columns and zeroes the others.
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        let be = backend(x)?;
        Ok(smallvec![wrap(be.triangle(
            &x.data(),
            self.diagonal,
            self.upper
        )?)])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(apply1(*self, &[ctx.grad(0)?])?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(*self, std::slice::from_ref(t)))
    }
    /// The batch dim in front: the last two dims stay where they are.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_reduction(ctx, |_| *self)
    }
}

fn triangle_of(x: &Tensor, diagonal: i64, upper: bool) -> Result<Triangle> {
    if x.dim() < 2 {
        return Err(Error::runtime(format!(
            "{}: input tensor must have at least 2 dimensions",
            if upper { "triu" } else { "tril" }
        )));
    }
    Ok(Triangle { diagonal, upper })
}
pub fn triangle(x: &Tensor, diagonal: i64, upper: bool) -> Result<Tensor> {
    apply1(triangle_of(x, diagonal, upper)?, std::slice::from_ref(x))
}
/// `tril_` / `triu_`.
pub fn triangle_(x: &Tensor, diagonal: i64, upper: bool) -> Result<()> {
    let op = triangle_of(x, diagonal, upper)?;
    crate::ops::inplace::apply_inplace(op, std::slice::from_ref(x))
}

// ---------------------------------------------------------------- repeat

/// `x.repeat(*sizes)` (RepeatBackward0): `x` tiled `sizes[i]` times along each dim;
/// `sizes` may have more dims than `x` (new leading dims).
#[derive(Clone)]
pub struct Repeat {
    pub sizes: Dims,
}

impl Repeat {
    /// `x`'s shape with ones in front, as many dims as `sizes`.
    fn padded_shape(&self, shape: &[usize]) -> Dims {
        let extra = self.sizes.len() - shape.len();
        std::iter::repeat_n(1, extra)
            .chain(shape.iter().copied())
            .collect()
    }
}

impl Op for Repeat {
    fn name(&self) -> &'static str {
        "RepeatBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            (
                "repeats",
                SavedAttr::Ints(self.sizes.iter().map(|&d| d as i64).collect()),
            ),
            ("self_sym_sizes", SavedAttr::InputSizes(0)),
        ]
    }
    /// Each dim d viewed as (1, n_d), expanded to (sizes_d, n_d), then flattened.
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let shape = self.padded_shape(&inputs[0].shape());
        let out = crate::ops::rules::composite(inputs, |p| {
            let (mut pairs, mut tiled, mut out_shape) = (Dims::new(), Dims::new(), Dims::new());
            for (&r, &n) in self.sizes.iter().zip(&shape) {
                pairs.extend([1, n]);
                tiled.extend([r, n]);
                out_shape.push(r * n);
            }
            let spread = expand(&reshape(&p[0], &pairs)?, &tiled)?;
            crate::ops::view::contiguous(&reshape(
                &crate::ops::view::contiguous(&spread)?,
                &out_shape,
            )?)
        })?;
        Ok(smallvec![out])
    }
    /// The gradient viewed as (sizes_d, n_d) pairs, summed over the copies.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let in_shape = ctx.inputs[0].shape.clone();
        let shape = self.padded_shape(&in_shape);
        let mut tiled = Dims::new();
        for (&r, &n) in self.sizes.iter().zip(&shape) {
            tiled.extend([r, n]);
        }
        let copies: SmallVec<[usize; 6]> = (0..self.sizes.len()).map(|d| 2 * d).collect();
        let g = reshape(&ctx.grad(0)?, &tiled)?;
        let summed = crate::ops::reduce::sum_over(&g, &copies, false, false)?;
        Ok(smallvec![Some(reshape(&summed, &in_shape)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| apply1(self.clone(), std::slice::from_ref(t)))
    }
    /// The batch dim in front, after any new leading dims: its repeat count is 1.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        let Some(_) = b else {
            return Ok(smallvec![(
                apply1(self.clone(), std::slice::from_ref(x))?,
                None
            )]);
        };
        let x = crate::ops::rules::to_front(x, *b)?;
        let mut shape: Dims = smallvec![x.shape()[0]];
        shape.extend(self.padded_shape(&x.shape()[1..]));
        let x = reshape(&x, &shape)?;
        let sizes = std::iter::once(1)
            .chain(self.sizes.iter().copied())
            .collect();
        Ok(smallvec![(apply1(Repeat { sizes }, &[x])?, Some(0))])
    }
}

pub fn repeat(x: &Tensor, sizes: &[i64]) -> Result<Tensor> {
    if sizes.len() < x.dim() {
        return Err(Error::runtime(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
        ));
    }
    let shape = Repeat {
        sizes: smallvec![0; sizes.len()],
    }
    .padded_shape(&x.shape());
    // Each output size r * n, saturating: an overflowing size fails checked_numel below.
    let target: SmallVec<[i64; 6]> = sizes
        .iter()
        .zip(&shape)
        .map(|(&r, &n)| r.saturating_mul(n as i64))
        .collect();
    if let Some(&neg) = target.iter().find(|&&t| t < 0) {
        let parts: Vec<String> = target.iter().map(|t| t.to_string()).collect();
        return Err(Error::runtime(format!(
            "Trying to create tensor with negative dimension {neg}: [{}]",
            parts.join(", ")
        )));
    }
    let out_shape: Dims = target.iter().map(|&t| t as usize).collect();
    crate::shape::checked_numel(&out_shape)?;
    let counts: Dims = sizes.iter().map(|&r| r as usize).collect();
    apply1(Repeat { sizes: counts }, std::slice::from_ref(x))
}

/// `tile(x, dims)`: `repeat` with `dims` padded with leading ones to x's rank.
pub fn tile(x: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let pad = x.dim().saturating_sub(dims.len());
    let sizes: SmallVec<[i64; 6]> = std::iter::repeat_n(1, pad)
        .chain(dims.iter().copied())
        .collect();
    repeat(x, &sizes)
}
