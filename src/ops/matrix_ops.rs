//! Fused matrix products with their own nodes: `addmm`, `addmv`, `baddbmm`, `addbmm`
//! (`beta * self + alpha * product`), `vdot`, `linalg.cross` and `trace`.
//!
//! The four add-products are one op, [`AddProduct`], parameterized by the product
//! ([`Product`]): their rules differ only in how a gradient meets the other factor.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::ops::binary::{add, mul, mul_scalar, sub};
use crate::ops::linalg::{bmm, col_major_factors, matmul, mh, mm, mm_factor_grads, mv};
use crate::ops::reduce::sum;
use crate::ops::roll::{roll, wrap_dim_of};
use crate::ops::rules::{composite, fit, sum_tangents, to_front};
use crate::ops::unary::conj;
use crate::ops::view::{
    contiguous, diagonal, expand, permute, reshape, restride, squeeze, unsqueeze, ViewKind,
};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::{broadcast_shapes, Dims};
use crate::tensor::Tensor;

/// Which product an [`AddProduct`] adds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Product {
    /// addmm: (n, k) @ (k, m).
    Mm,
    /// addmv: (n, k) @ (k,).
    Mv,
    /// baddbmm: (B, n, k) @ (B, k, m), per batch.
    Bmm,
    /// addbmm: the sum over the batch of (B, n, k) @ (B, k, m).
    SumBmm,
}

impl Product {
    fn node(self) -> &'static str {
        match self {
            Product::Mm => "AddmmBackward0",
            Product::Mv => "AddmvBackward0",
            Product::Bmm => "BaddbmmBackward0",
            Product::SumBmm => "AddbmmBackward0",
        }
    }
    /// torch's names of the two factors (saved as `_saved_<name>`).
    fn factor_names(self) -> (&'static str, &'static str) {
        match self {
            Product::Mm => ("mat1", "mat2"),
            Product::Mv => ("mat", "vec"),
            Product::Bmm | Product::SumBmm => ("batch1", "batch2"),
        }
    }
    /// The product of unbatched factors (shapes already checked).
    fn apply(self, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        match self {
            Product::Mm => mm(a, b),
            Product::Mv => mv(a, b),
            Product::Bmm => bmm(a, b),
            Product::SumBmm => joined_product(a, b),
        }
    }
    /// The product where either factor may carry a leading batch dim (matmul broadcasts
    /// the batch dims).
    fn batched(self, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        match self {
            Product::Mm | Product::Bmm => matmul(a, b),
            Product::Mv => squeeze(&matmul(a, &unsqueeze(b, -1)?)?, Some(&[-1])),
            Product::SumBmm => sum(&matmul(a, b)?, Some(&[-3]), false, None),
        }
    }
    /// The gradients of the product's factors for output gradient `g` (before alpha);
    /// `col_major` as `linalg::Mm`'s (addmm's factors only).
    fn factor_grads(
        self,
        g: &Tensor,
        a: Option<&Tensor>,
        b: Option<&Tensor>,
        col_major: [bool; 2],
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        if self == Product::Mm {
            return mm_factor_grads(g, a, b, col_major);
        }
        // addbmm's gradient reaches every batch alike.
        let g = match (self, a.or(b)) {
            (Product::SumBmm, Some(f)) => {
                let mut shape: Dims = smallvec![f.shape()[0]];
                shape.extend(g.shape().iter().copied());
                expand(&unsqueeze(g, 0)?, &shape)?
            }
            _ => g.clone(),
        };
        // b (when given) is the saved second factor, for a's gradient, and vice versa.
        let ga = match (self, b) {
            (_, None) => None,
            (Product::Mv, Some(b)) => Some(mul(&unsqueeze(&g, 1)?, &unsqueeze(&conj(b)?, 0)?)?),
            (_, Some(b)) => Some(bmm(&g, &mh(b)?)?),
        };
        let gb = match (self, a) {
            (_, None) => None,
            (Product::Mv, Some(a)) => Some(mv(&mh(a)?, &g)?),
            (_, Some(a)) => Some(bmm(&mh(a)?, &g)?),
        };
        Ok((ga, gb))
    }
}

/// addbmm's sum over the batch of `a[i] @ b[i]` as one product over the joined
/// contraction, `(n, B·k) @ (B·k, m)`: the matmul kernel adds the batch's terms in its
/// accumulator and rounds once, as torch's addbmm does for float16 and bfloat16; a sum of
/// the B products rounded each to the narrow type first was off by tens of its ulps where
/// they cancel.
fn joined_product(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (batch, n, k) = (a.shape()[0], a.shape()[1], a.shape()[2]);
    let m = b.shape()[2];
    let joined_a = reshape(&contiguous(&permute(a, &[1, 0, 2])?)?, &[n, batch * k])?;
    mm(&joined_a, &reshape(b, &[batch * k, m])?)
}

/// A bilinear op's saves: each of the two factors at `first` and `first + 1`, kept only
/// when the other one needs a gradient.
fn save_factors(needs: &[bool], first: usize) -> SmallVec<[Option<SaveRef>; 2]> {
    smallvec![
        needs[first + 1].then_some(SaveRef::Input(first)),
        needs[first].then_some(SaveRef::Input(first + 1))
    ]
}

fn conj_scalar(s: Scalar) -> Scalar {
    match s {
        Scalar::Complex(c) => Scalar::Complex(c.conj()),
        s => s,
    }
}

/// `x * s`, skipping the multiplication by one.
fn scaled(x: &Tensor, s: Scalar) -> Result<Tensor> {
    if s.is_one() {
        Ok(x.clone())
    } else {
        mul_scalar(x, s)
    }
}

/// `beta * self + alpha * product(a, b)` (AddmmBackward0, AddmvBackward0,
/// BaddbmmBackward0, AddbmmBackward0). `self` broadcasts to the product's shape; with
/// `beta == 0` its values are ignored (nan and inf in it do not propagate), as torch.
#[derive(Clone)]
pub struct AddProduct {
    pub product: Product,
    pub beta: Scalar,
    pub alpha: Scalar,
    /// Whether each factor is column-major (addmm: see `linalg::Mm`).
    pub col_major: [bool; 2],
}

impl AddProduct {
    /// `beta * s + alpha * p` (`s` broadcast to `p`'s shape).
    fn combine(&self, s: &Tensor, p: &Tensor) -> Result<Tensor> {
        let p = scaled(p, self.alpha)?;
        if self.beta.is_zero() {
            return Ok(p);
        }
        let out = add(&scaled(s, self.beta)?, &p)?;
        // A broadcast self gives the product's shape already; this keeps the dtype.
        Ok(out)
    }
}

impl Op for AddProduct {
    fn name(&self) -> &'static str {
        self.product.node()
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        let (a, b) = self.product.factor_names();
        let mut attrs = vec![
            ("alpha", SavedAttr::Scalar(self.alpha)),
            ("beta", SavedAttr::Scalar(self.beta)),
            (a, SavedAttr::Slot(0)),
            (b, SavedAttr::Slot(1)),
        ];
        if self.product == Product::Mm {
            attrs.push(("mat1_sym_sizes", SavedAttr::InputSizes(1)));
            attrs.push(("mat2_sym_sizes", SavedAttr::InputSizes(2)));
        }
        attrs
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let out = composite(inputs, |p| {
            let prod = self.product.apply(&p[1], &p[2])?;
            self.combine(&p[0], &prod)
        })?;
        Ok(smallvec![out])
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        save_factors(needs, 1)
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let gs = if ctx.needs(0) {
            Some(scaled(&g, conj_scalar(self.beta))?)
        } else {
            None
        };
        let a = if ctx.needs(2) {
            Some(ctx.saved(0)?)
        } else {
            None
        };
        let b = if ctx.needs(1) {
            Some(ctx.saved(1)?)
        } else {
            None
        };
        let (ga, gb) = self.product.factor_grads(&g, a, b, self.col_major)?;
        let alpha = conj_scalar(self.alpha);
        Ok(smallvec![
            gs,
            ga.map(|t| scaled(&t, alpha)).transpose()?,
            gb.map(|t| scaled(&t, alpha)).transpose()?
        ])
    }
    /// beta * t_self + alpha * (product(t_a, b) + product(a, t_b)).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (a, b, out) = (&ctx.primals[1], &ctx.primals[2], &ctx.outputs[0]);
        let prod = sum_tangents([
            ctx.tangent(1).map(|t| self.product.apply(t, b)).transpose(),
            ctx.tangent(2).map(|t| self.product.apply(a, t)).transpose(),
        ])?
        .map(|p| scaled(&p, self.alpha))
        .transpose()?;
        let own = ctx
            .tangent(0)
            .filter(|_| !self.beta.is_zero())
            .map(|t| fit(scaled(t, self.beta)?, out))
            .transpose()?;
        let total = sum_tangents([Ok(own), Ok(prod)])?;
        Ok(smallvec![total.map(|t| fit(t, out)).transpose()?])
    }
    /// Batch dims in front; matmul broadcasts the factors' batch dims, and a batched
    /// self gets size-1 dims after its batch dim up to the output's rank.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let rank = match self.product {
            Product::Mv => 1,
            Product::Mm | Product::SumBmm => 2,
            Product::Bmm => 3,
        };
        let (s, bs) = &ctx.inputs[0];
        let mut s = to_front(s, *bs)?;
        if bs.is_some() {
            while s.dim() < rank + 1 {
                s = unsqueeze(&s, 1)?;
            }
        }
        let a = to_front(&ctx.inputs[1].0, ctx.inputs[1].1)?;
        let b = to_front(&ctx.inputs[2].0, ctx.inputs[2].1)?;
        let prod = self.product.batched(&a, &b)?;
        let mut out = self.combine(&s, &prod)?;
        if self.beta.is_zero() && bs.is_some() {
            // The output is batched even when only (the ignored) self is.
            let mut shape: Dims = smallvec![s.shape()[0]];
            shape.extend(prod.shape()[prod.dim() - rank..].iter().copied());
            out = expand(&out, &shape)?;
        }
        Ok(smallvec![(out, Some(0))])
    }
}

fn size_at(t: &Tensor, dim: i64) -> Result<usize> {
    Ok(t.shape()[wrap_dim_of(dim, t)?])
}

fn dtype_mismatch(first: &str, a: DType, b: DType) -> Error {
    Error::runtime(format!(
        "{first} and mat2 must have the same dtype, but got {} and {}",
        a.scalar_type_name(),
        b.scalar_type_name()
    ))
}

/// addmm and addbmm's dtype checks, in torch's order.
fn check_mm_dtypes(s: &Tensor, a: &Tensor, b: &Tensor) -> Result<()> {
    if s.dtype() != b.dtype() {
        return Err(dtype_mismatch("self", s.dtype(), b.dtype()));
    }
    if a.dtype() != b.dtype() {
        return Err(dtype_mismatch("mat1", a.dtype(), b.dtype()));
    }
    Ok(())
}

/// self broadcast to `shape` (torch's expand error otherwise).
fn check_expand(s: &Tensor, shape: &[usize]) -> Result<()> {
    composite(std::slice::from_ref(s), |p| {
        expand(&p[0], shape).map(|_| ())
    })
}

fn add_product(
    product: Product,
    s: &Tensor,
    a: &Tensor,
    b: &Tensor,
    beta: Scalar,
    alpha: Scalar,
) -> Result<Tensor> {
    apply1(
        AddProduct {
            product,
            beta,
            alpha,
            col_major: col_major_factors(a, b),
        },
        &[s.clone(), a.clone(), b.clone()],
    )
}

/// The output shape of `product` for these factors, with torch's checks in its order.
pub fn check_add_product(product: Product, s: &Tensor, a: &Tensor, b: &Tensor) -> Result<Dims> {
    match product {
        Product::Mm => {
            check_mm_dtypes(s, a, b)?;
            for (t, name) in [(a, "self"), (b, "mat2")] {
                if t.dim() != 2 {
                    return Err(Error::runtime(format!(
                        "addmm: {name} must be a matrix, got {}-D tensor",
                        t.dim()
                    )));
                }
            }
            if a.shape()[1] != b.shape()[0] {
                let fmt = |t: &Tensor| format!("{}x{}", t.shape()[0], t.shape()[1]);
                return Err(Error::runtime(format!(
                    "addmm: mat1 and mat2 shapes cannot be multiplied ({} and {})",
                    fmt(a),
                    fmt(b)
                )));
            }
            let shape: Dims = smallvec![a.shape()[0], b.shape()[1]];
            check_expand(s, &shape)?;
            Ok(shape)
        }
        Product::Mv => {
            if s.dim() > 1 || a.dim() != 2 || b.dim() != 1 {
                return Err(Error::runtime(format!(
                    "vector + matrix @ vector expected, got {}, {}, {}",
                    s.dim(),
                    a.dim(),
                    b.dim()
                )));
            }
            let n = s.shape().first().copied().unwrap_or(1);
            if a.shape()[1] != b.shape()[0] || (n != a.shape()[0] && n != 1) {
                return Err(Error::runtime(format!(
                    "size mismatch, got input ({n}), mat ({}x{}), vec ({})",
                    a.shape()[0],
                    a.shape()[1],
                    b.shape()[0]
                )));
            }
            if s.dtype() != a.dtype() || a.dtype() != b.dtype() {
                return Err(Error::runtime(format!(
                    "addmv input tensors must have the same dtype, but got {}, {}, and {}",
                    s.dtype().scalar_type_name(),
                    a.dtype().scalar_type_name(),
                    b.dtype().scalar_type_name()
                )));
            }
            Ok(smallvec![a.shape()[0]])
        }
        Product::Bmm => {
            let shape: Dims = smallvec![size_at(a, 0)?, size_at(a, 1)?, size_at(b, 2)?];
            check_expand(s, &shape)?;
            if s.dtype() != a.dtype() || s.dtype() != b.dtype() && a.dtype() == b.dtype() {
                return Err(Error::runtime(format!(
                    "Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}",
                    s.dtype().cpp_name(),
                    a.dtype().cpp_name(),
                    b.dtype().cpp_name()
                )));
            }
            check_batches(a, b, false)?;
            Ok(shape)
        }
        Product::SumBmm => {
            let shape: Dims = smallvec![size_at(a, 1)?, size_at(b, 2)?];
            check_expand(s, &shape)?;
            check_mm_dtypes(s, a, b)?;
            check_batches(a, b, true)?;
            Ok(shape)
        }
    }
}

/// bmm's shape checks (baddbmm) or addbmm's.
fn check_batches(a: &Tensor, b: &Tensor, summed: bool) -> Result<()> {
    if a.dim() != 3 {
        return Err(Error::runtime("batch1 must be a 3D tensor"));
    }
    if b.dim() != 3 {
        return Err(Error::runtime("batch2 must be a 3D tensor"));
    }
    if summed && a.shape()[0] != b.shape()[0] {
        return Err(Error::runtime(format!(
            "batch1 and batch2 must have same number of batches, got {} and {}",
            a.shape()[0],
            b.shape()[0]
        )));
    }
    if a.shape()[0] != b.shape()[0] || a.shape()[2] != b.shape()[1] {
        if summed {
            return Err(Error::runtime(format!(
                "Incompatible matrix sizes for bmm ({}x{} and {}x{})",
                a.shape()[1],
                a.shape()[2],
                b.shape()[1],
                b.shape()[2]
            )));
        }
        return Err(Error::runtime(format!(
            "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
            a.shape()[0],
            a.shape()[2],
            b.shape()[0],
            b.shape()[1]
        )));
    }
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "expected scalar type {} but found {}",
            a.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    Ok(())
}

/// `addmm` / `addmv` / `baddbmm` / `addbmm`: `beta * s + alpha * product(a, b)`.
pub fn addproduct(
    product: Product,
    s: &Tensor,
    a: &Tensor,
    b: &Tensor,
    beta: Scalar,
    alpha: Scalar,
) -> Result<Tensor> {
    check_add_product(product, s, a, b)?;
    add_product(product, s, a, b, beta, alpha)
}

/// The in-place form (`addmm_` ...): the result must keep self's shape.
pub fn addproduct_(
    product: Product,
    s: &Tensor,
    a: &Tensor,
    b: &Tensor,
    beta: Scalar,
    alpha: Scalar,
) -> Result<()> {
    let shape = check_add_product(product, s, a, b)?;
    if s.shape()[..] != shape[..] {
        return Err(Error::runtime(format!(
            "Bad in-place call: input tensor size {} and output tensor size {} should match",
            crate::shape::fmt_dims(&s.shape()),
            crate::shape::fmt_dims(&shape)
        )));
    }
    crate::ops::inplace::apply_inplace(
        AddProduct {
            product,
            beta,
            alpha,
            col_major: col_major_factors(a, b),
        },
        &[s.clone(), a.clone(), b.clone()],
    )
}

// ---------------------------------------------------------------- vdot

/// `vdot(a, b) = sum(conj(a) * b)` (VdotBackward0).
pub struct Vdot;

impl Op for Vdot {
    fn name(&self) -> &'static str {
        "VdotBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("other", SavedAttr::Slot(1)), ("self", SavedAttr::Slot(0))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let out = composite(inputs, |p| crate::ops::linalg::dot(&conj(&p[0])?, &p[1]))?;
        Ok(smallvec![out])
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        save_factors(needs, 0)
    }
    /// torch's formulas: grad_self = conj(g) * other, grad_other = g * self.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let ga = if ctx.needs(0) {
            Some(mul(&conj(&g)?, ctx.saved(1)?)?)
        } else {
            None
        };
        let gb = if ctx.needs(1) {
            Some(mul(&g, ctx.saved(0)?)?)
        } else {
            None
        };
        Ok(smallvec![ga, gb])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        crate::ops::rules::bilinear_jvp(ctx, vdot)
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        crate::ops::rules::batch_front(ctx, |x| {
            sum(&mul(&conj(&x[0])?, &x[1])?, Some(&[-1]), false, None)
        })
    }
}

pub fn vdot(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dim() != 1 || b.dim() != 1 {
        return Err(Error::runtime(format!(
            "1D tensors expected, but got {}D and {}D tensors",
            a.dim(),
            b.dim()
        )));
    }
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "dot : expected both vectors to have same dtype, but found {} and {}",
            a.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    if a.shape()[0] != b.shape()[0] {
        return Err(Error::runtime(format!(
            "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
            a.shape()[0], b.shape()[0], a.shape()[0], b.shape()[0]
        )));
    }
    apply1(Vdot, &[a.clone(), b.clone()])
}

// ---------------------------------------------------------------- cross

/// `linalg.cross(a, b, dim)` (LinalgCrossBackward0): the cross product of 3-vectors
/// along `dim`, the other dims broadcast. out_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}
/// (indices mod 3), i.e. roll(a, -1) roll(b, -2) - roll(a, -2) roll(b, -1).
#[derive(Clone, Copy)]
pub struct Cross {
    pub dim: usize,
}

impl Cross {
    fn compute(&self, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        let d = [self.dim as i64];
        let r = |x: &Tensor, s: i64| roll(x, &[s], &d);
        sub(
            &mul(&r(a, -1)?, &r(b, -2)?)?,
            &mul(&r(a, -2)?, &r(b, -1)?)?,
            Scalar::Int(1),
        )
    }
}

impl Op for Cross {
    fn name(&self) -> &'static str {
        "LinalgCrossBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![
            ("dim", SavedAttr::Scalar(Scalar::Int(self.dim as i64))),
            ("other", SavedAttr::Slot(1)),
            ("self", SavedAttr::Slot(0)),
        ]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        Ok(smallvec![composite(inputs, |p| self.compute(&p[0], &p[1]))?])
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        save_factors(needs, 0)
    }
    /// torch's formulas: cross(conj(other), g) and cross(g, conj(self)); the engine sums
    /// broadcast gradients back.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let ga = if ctx.needs(0) {
            Some(apply1(*self, &[conj(ctx.saved(1)?)?, g.clone()])?)
        } else {
            None
        };
        let gb = if ctx.needs(1) {
            Some(apply1(*self, &[g, conj(ctx.saved(0)?)?])?)
        } else {
            None
        };
        Ok(smallvec![ga, gb])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let out = &ctx.outputs[0];
        let total =
            crate::ops::rules::bilinear_jvp(ctx, |a, b| apply1(*self, &[a.clone(), b.clone()]))?;
        Ok(smallvec![total[0]
            .clone()
            .map(|t| fit(t, out))
            .transpose()?])
    }
    /// Batch dims in front (an unbatched operand gets a size-1 one), dim one further in.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let args: SmallVec<[Tensor; 2]> = ctx
            .inputs
            .iter()
            .map(|(x, b)| match b {
                Some(_) => to_front(x, *b),
                None => unsqueeze(x, 0),
            })
            .collect::<Result<_>>()?;
        let shifted = Cross { dim: self.dim + 1 };
        Ok(smallvec![(apply1(shifted, &args)?, Some(0))])
    }
}

/// `linalg.cross(a, b, dim=-1)`; `torch.cross` without a dim passes the first dim of
/// size 3 of `a` (see `default_cross_dim`).
pub fn linalg_cross(a: &Tensor, b: &Tensor, dim: i64) -> Result<Tensor> {
    if a.dim() != b.dim() {
        return Err(Error::runtime(
            "linalg.cross: inputs must have the same number of dimensions.",
        ));
    }
    let d = wrap_dim_of(dim, a)?;
    if a.shape()[d] != 3 || b.shape()[d] != 3 {
        return Err(Error::runtime(format!(
            "linalg.cross: inputs dimension {dim} must have length 3. Got {} and {}",
            a.shape()[d],
            b.shape()[d]
        )));
    }
    broadcast_shapes(&a.shape(), &b.shape())?;
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "expected scalar type {} but found {}",
            a.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    apply1(Cross { dim: d }, &[a.clone(), b.clone()])
}

/// torch.cross's dim when none is given: the first dim of size 3 of `a`.
pub fn default_cross_dim(a: &Tensor) -> Result<i64> {
    a.shape()
        .iter()
        .position(|&n| n == 3)
        .map(|d| d as i64)
        .ok_or_else(|| Error::runtime("no dimension of size 3 in input"))
}

// ---------------------------------------------------------------- trace

/// `trace(x)` of a matrix (TraceBackward0): the sum of its diagonal.
pub struct Trace;

/// The layout of a contiguous (n, m) matrix's main diagonal, and the matrix's.
fn diagonal_layouts(shape: &[usize]) -> Result<(Layout, Layout)> {
    let full = Layout::contiguous(shape);
    let diag = ViewKind::Diagonal {
        offset: 0,
        dim1: 0,
        dim2: 1,
    }
    .apply(&full)?;
    Ok((diag, full))
}

impl Op for Trace {
    fn name(&self) -> &'static str {
        "TraceBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self_sym_sizes", SavedAttr::InputSizes(0))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let out = composite(inputs, |p| {
            sum(&diagonal(&p[0], 0, 0, 1)?, None, false, None)
        })?;
        Ok(smallvec![out])
    }
    /// The gradient on the diagonal of a zero matrix.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (diag, full) = diagonal_layouts(&ctx.inputs[0].shape)?;
        let line = expand(&ctx.grad(0)?, &diag.shape)?;
        Ok(smallvec![Some(restride(&line, diag, full)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        crate::ops::rules::linear_jvp(ctx, |t| apply1(Trace, std::slice::from_ref(t)))
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        let x = to_front(x, *b)?;
        let out = sum(&diagonal(&x, 0, 1, 2)?, Some(&[-1]), false, None)?;
        Ok(smallvec![(out, Some(0))])
    }
}

pub fn trace(x: &Tensor) -> Result<Tensor> {
    if x.dim() != 2 {
        return Err(Error::runtime(format!(
            "trace: expected a matrix, but got tensor with dim {}",
            x.dim()
        )));
    }
    if x.dtype() == DType::Bool {
        return Err(crate::dtype::unsupported("trace", x.dtype()));
    }
    apply1(Trace, std::slice::from_ref(x))
}
