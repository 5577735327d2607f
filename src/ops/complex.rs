//! Complex views and complex ops (issue 11).
//!
//! `view_as_real` / `view_as_complex` are views that read their input's storage as the
//! other side of a complex / real-component pair (see Note: real views of complex
//! storage in storage.rs); `real` and `imag` are a select of `view_as_real`, as in
//! torch (so `x.real.grad_fn` is `SelectBackward0` over `ViewAsRealBackward0`). Then
//! `complex`, `polar`, `angle` and `conj_physical`, with torch's nodes and formulas.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::Unary;
use crate::layout::Layout;
use crate::ops::binary::{compare_scalar, div, mul, mul_scalar, where_, Cmp};
use crate::ops::creation::zeros_like;
use crate::ops::rules::{
    batch_broadcast, batch_unary, composite, fit, linear_jvp, sum_tangents, to_front,
};
use crate::ops::unary::{abs, conj, cos, float_dtype, sgn, sin, to_dtype};
use crate::ops::view::{as_strided_raw, contiguous, creation_meta, select};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::Dims;
use crate::tensor::Tensor;

/// `i`, to multiply by.
const I: Scalar = Scalar::Complex(num_complex::Complex64 { re: 0.0, im: 1.0 });

fn overflow() -> Error {
    Error::runtime("Storage size calculation overflowed")
}

/// A complex tensor's layout read in components: one more dim of size 2 and stride 1,
/// strides and offset doubled (checked).
fn real_layout(l: &Layout) -> Result<Layout> {
    let mut strides: Dims = l
        .strides
        .iter()
        .map(|&s| s.checked_mul(2).ok_or_else(overflow))
        .collect::<Result<_>>()?;
    strides.push(1);
    let mut shape = l.shape.clone();
    shape.push(2);
    Ok(Layout {
        shape,
        strides,
        offset: l.offset.checked_mul(2).ok_or_else(overflow)?,
    })
}

/// A float tensor's layout read as complex, with torch's checks and messages.
fn complex_layout(l: &Layout) -> Result<Layout> {
    let n = l.ndim();
    if n == 0 {
        return Err(Error::runtime(
            "Input tensor must have one or more dimensions",
        ));
    }
    if l.shape[n - 1] != 2 {
        return Err(Error::runtime(
            "Tensor must have a last dimension of size 2",
        ));
    }
    if l.strides[n - 1] != 1 {
        return Err(Error::runtime(
            "Tensor must have a last dimension with stride 1",
        ));
    }
    if l.strides[..n - 1].iter().any(|s| s % 2 != 0) {
        return Err(Error::runtime(
            "Tensor must have a stride divisible by 2 for all but last dimension",
        ));
    }
    if !l.offset.is_multiple_of(2) {
        return Err(Error::runtime(
            "Tensor must have a storage_offset divisible by 2",
        ));
    }
    Ok(Layout {
        shape: l.shape[..n - 1].into(),
        strides: l.strides[..n - 1].iter().map(|s| s / 2).collect(),
        offset: l.offset / 2,
    })
}

/// `view_as_real`: the components of a complex tensor, as a view with a last dim of 2.
pub struct ViewAsReal;
impl Op for ViewAsReal {
    fn name(&self) -> &'static str {
        "ViewAsRealBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        if !x.dtype().is_complex() {
            return Err(Error::type_error(
                "view_as_real is only supported for complex tensors",
            ));
        }
        let layout = real_layout(&x.layout())?;
        let meta = creation_meta(x, None);
        Ok(smallvec![x.make_view_as(
            layout,
            x.dtype().to_real(),
            meta
        )?])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(view_as_complex(&contiguous(
            &ctx.grad(0)?
        )?)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, view_as_real)
    }
    /// The new dim goes last: the batch dim stays where it is.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, view_as_real)
    }
}
pub fn view_as_real(x: &Tensor) -> Result<Tensor> {
    apply1(ViewAsReal, std::slice::from_ref(x))
}

/// `view_as_complex`: pairs along the last dim (size 2, stride 1) as one complex value.
pub struct ViewAsComplex;
impl Op for ViewAsComplex {
    fn name(&self) -> &'static str {
        "ViewAsComplexBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        let dtype = x.dtype();
        if dtype.is_complex() {
            return Err(Error::type_error(
                "view_as_complex is not supported for complex tensors",
            ));
        }
        let complex = match dtype {
            DType::F32 => DType::C64,
            DType::F64 => DType::C128,
            // complex32 (ComplexHalf) does not exist here.
            DType::F16 => {
                return Err(Error::not_implemented(
                    "view_as_complex is only supported for float and double tensors here (ComplexHalf is not supported), but got a tensor of scalar type: Half",
                ))
            }
            d => {
                return Err(Error::not_implemented(format!(
                    "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: {}",
                    d.scalar_type_name()
                )))
            }
        };
        let layout = complex_layout(&x.layout())?;
        let meta = creation_meta(x, None);
        Ok(smallvec![x.make_view_as(layout, complex, meta)?])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(view_as_real(&contiguous(&ctx.grad(0)?)?)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| view_as_complex(&contiguous(t)?))
    }
    /// torch's rule: the batch dim to the front, then the same view. Where the batch
    /// dim's stride is what breaks the view (a batch dim that was last), the physical
    /// value is made contiguous first: torch refuses that case.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        let Some(_) = b else {
            return Ok(smallvec![(view_as_complex(x)?, None)]);
        };
        if x.dim() < 2 {
            return Err(Error::runtime(
                "Input tensor must have one or more dimensions",
            ));
        }
        let mut front = to_front(x, *b)?;
        if complex_layout(&front.layout()).is_err() {
            front = contiguous(&front)?;
        }
        Ok(smallvec![(view_as_complex(&front)?, Some(0))])
    }
}
pub fn view_as_complex(x: &Tensor) -> Result<Tensor> {
    apply1(ViewAsComplex, std::slice::from_ref(x))
}

/// `x.real`: a view of the real parts (a real tensor is its own real part).
pub fn real(x: &Tensor) -> Result<Tensor> {
    if !x.dtype().is_complex() {
        return Ok(x.clone());
    }
    select(&view_as_real(x)?, -1, 0)
}

/// `x.imag`: a view of the imaginary parts (complex tensors only).
pub fn imag(x: &Tensor) -> Result<Tensor> {
    if !x.dtype().is_complex() {
        return Err(Error::type_error(
            "imag is not implemented for tensors with non-complex dtypes.",
        ));
    }
    select(&view_as_real(x)?, -1, 1)
}

/// How a view's elements relate to its base's: the same dtype, components of a
/// complex base, or complex values over a float base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    Same,
    RealOfComplex,
    ComplexOfReal,
}

impl Reading {
    pub fn between(base: DType, view: DType) -> Reading {
        match (base.is_complex(), view.is_complex()) {
            (true, false) => Reading::RealOfComplex,
            (false, true) => Reading::ComplexOfReal,
            _ => Reading::Same,
        }
    }

    /// An extent of `n` view elements in base elements (rounded up).
    pub fn to_base_units(self, n: usize) -> Result<usize> {
        match self {
            Reading::Same => Ok(n),
            Reading::RealOfComplex => Ok(n.div_ceil(2)),
            Reading::ComplexOfReal => n.checked_mul(2).ok_or_else(overflow),
        }
    }

    /// A stride of `n` base elements in view elements (`n` is even for a complex view).
    pub fn to_view_units(self, n: usize) -> Result<usize> {
        match self {
            Reading::Same => Ok(n),
            Reading::RealOfComplex => n.checked_mul(2).ok_or_else(overflow),
            Reading::ComplexOfReal => Ok(n / 2),
        }
    }
}

/// A tracked view of `src`'s storage with the absolute `layout`, read as `reading` says
/// (CopySlices' gradient slice, a view's tangent). For a complex reading of a float
/// `src`, the storage from its start is paired up first (its extent must be even).
pub fn strided_view(src: &Tensor, layout: Layout, reading: Reading) -> Result<Tensor> {
    match reading {
        Reading::Same => as_strided_raw(src, layout),
        Reading::RealOfComplex => as_strided_raw(&view_as_real(src)?, layout),
        Reading::ComplexOfReal => {
            let pairs = src.data().storage_len() / 2;
            let flat = as_strided_raw(
                src,
                Layout {
                    shape: smallvec![pairs, 2],
                    strides: smallvec![2, 1],
                    offset: 0,
                },
            )?;
            as_strided_raw(&view_as_complex(&flat)?, layout)
        }
    }
}

/// The real dtype pair `complex` and `polar` take (torch's checks and messages).
fn check_parts(op: &str, a: &Tensor, b: &Tensor) -> Result<DType> {
    let (da, db) = (a.dtype(), b.dtype());
    let ok = |d: DType| matches!(d, DType::F16 | DType::F32 | DType::F64);
    if !ok(da) || !ok(db) {
        return Err(Error::not_implemented(format!(
            "Expected both inputs to be Half, Float or Double tensors but got {} and {}",
            da.scalar_type_name(),
            db.scalar_type_name()
        )));
    }
    if da != db {
        return Err(Error::runtime(format!(
            "Expected object of scalar type {} but got scalar type {} for second argument",
            da.scalar_type_name(),
            db.scalar_type_name()
        )));
    }
    if da == DType::F16 {
        return Err(Error::not_implemented(format!(
            "{op}: ComplexHalf (complex32) results are not supported"
        )));
    }
    Ok(da.to_complex())
}

/// `real + i imag`, broadcast, written through the components of a fresh result.
fn interleave(re: &Tensor, im: &Tensor, dtype: DType) -> Result<Tensor> {
    composite(&[re.clone(), im.clone()], |p| {
        let shape = crate::shape::broadcast_shapes(&p[0].shape(), &p[1].shape())?;
        let out = Tensor::zeros(&shape, dtype)?;
        let parts = view_as_real(&out)?;
        crate::ops::inplace::copy_(&select(&parts, -1, 0)?, &p[0])?;
        crate::ops::inplace::copy_(&select(&parts, -1, 1)?, &p[1])?;
        Ok(out)
    })
}

/// `torch.complex(real, imag)`.
pub struct Complex;
impl Op for Complex {
    fn name(&self) -> &'static str {
        "ComplexBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let dtype = check_parts("complex", &inputs[0], &inputs[1])?;
        Ok(smallvec![interleave(&inputs[0], &inputs[1], dtype)?])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        Ok(smallvec![
            ctx.needs(0).then(|| real(&g)).transpose()?,
            ctx.needs(1).then(|| imag(&g)).transpose()?,
        ])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        if ctx.tangent(0).is_none() && ctx.tangent(1).is_none() {
            return Ok(smallvec![None]);
        }
        let part = |i: usize| -> Result<Tensor> {
            match ctx.tangent(i) {
                Some(t) => Ok(t.clone()),
                None => zeros_like(&ctx.primals[i]),
            }
        };
        let t = complex(&part(0)?, &part(1)?)?;
        Ok(smallvec![Some(fit(t, &ctx.outputs[0])?)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |a| complex(&a[0], &a[1]))
    }
}
pub fn complex(re: &Tensor, im: &Tensor) -> Result<Tensor> {
    apply1(Complex, &[re.clone(), im.clone()])
}

/// `torch.polar(abs, angle)`: abs * (cos(angle) + i sin(angle)).
pub struct Polar;
impl Op for Polar {
    fn name(&self) -> &'static str {
        "PolarBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let dtype = check_parts("polar", &inputs[0], &inputs[1])?;
        let out = composite(inputs, |p| {
            let re = mul(&p[0], &cos(&p[1])?)?;
            let im = mul(&p[0], &sin(&p[1])?)?;
            interleave(&re, &im, dtype)
        })?;
        Ok(smallvec![out])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(0))]
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("result", SavedAttr::Slot(0))]
    }
    /// torch's polar_backward: Re(conj(g) sgn(result)) and Re(conj(g) i result).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = conj(&ctx.grad(0)?)?;
        let result = ctx.saved(0)?;
        let grad_abs = ctx
            .needs(0)
            .then(|| crate::ops::unary::real(&mul(&g, &sgn(result)?)?))
            .transpose()?;
        let grad_angle = ctx
            .needs(1)
            .then(|| crate::ops::unary::real(&mul(&g, &mul_scalar(result, I)?)?))
            .transpose()?;
        Ok(smallvec![grad_abs, grad_angle])
    }
    /// abs_t (cos + i sin)(angle) + angle_t i result.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (angle, result) = (&ctx.primals[1], &ctx.outputs[0]);
        let total = sum_tangents([
            ctx.tangent(0)
                .map(|t| mul(t, &complex(&cos(angle)?, &sin(angle)?)?))
                .transpose(),
            ctx.tangent(1)
                .map(|t| mul(&mul_scalar(result, I)?, t))
                .transpose(),
        ])?;
        Ok(smallvec![total.map(|t| fit(t, result)).transpose()?])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |a| polar(&a[0], &a[1]))
    }
}
pub fn polar(abs: &Tensor, angle: &Tensor) -> Result<Tensor> {
    apply1(Polar, &[abs.clone(), angle.clone()])
}

/// `torch.angle`: atan2(imag, real) of a complex tensor; of a real one pi where it is
/// negative, 0 elsewhere, NaN kept (integers and bool in the default float dtype).
pub struct Angle;
impl Op for Angle {
    fn name(&self) -> &'static str {
        "AngleBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let out = composite(inputs, |p| {
            let x = &p[0];
            if x.dtype().is_complex() {
                return crate::ops::binary_math::binary_math(
                    &imag(x)?,
                    &real(x)?,
                    crate::kernels::kinds::BinaryMath::Atan2,
                );
            }
            let x = to_dtype(x, float_dtype(x))?;
            let dtype = x.dtype();
            let negative = compare_scalar(&x, Scalar::Int(0), Cmp::Lt)?;
            let pi = Tensor::scalar(Scalar::Float(std::f64::consts::PI), dtype);
            let zero = Tensor::scalar(Scalar::Int(0), dtype);
            let angle = where_(&negative, &pi, &zero)?;
            where_(&crate::ops::classify::isnan(&x)?, &x, &angle)
        })?;
        Ok(smallvec![out])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0))]
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self", SavedAttr::Slot(0))]
    }
    /// torch's angle_backward: g i z / |z|^2 (0 at z = 0) for complex z, 0 for real.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (g, z) = (ctx.grad(0)?, ctx.saved(0)?);
        if !z.dtype().is_complex() {
            return Ok(smallvec![Some(zeros_like(z)?)]);
        }
        let value = mul_scalar(&div(&mul(&g, z)?, &abs_squared(z)?)?, I)?;
        Ok(smallvec![Some(at_nonzero(z, &value)?)])
    }
    /// Im(t conj(z)) / |z|^2 (0 at z = 0); a zero tangent for real inputs.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let z = &ctx.primals[0];
        if !z.dtype().is_complex() {
            return Ok(smallvec![None]);
        }
        linear_jvp(ctx, |t| {
            let value = div(&imag(&mul(t, &conj(z)?)?)?, &abs_squared(z)?)?;
            at_nonzero(z, &value)
        })
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, angle)
    }
}
fn abs_squared(z: &Tensor) -> Result<Tensor> {
    let r = abs(z)?;
    mul(&r, &r)
}
/// `value` where z != 0, zero where z == 0.
fn at_nonzero(z: &Tensor, value: &Tensor) -> Result<Tensor> {
    let at_zero = compare_scalar(&abs(z)?, Scalar::Int(0), Cmp::Eq)?;
    where_(
        &at_zero,
        &Tensor::scalar(Scalar::Int(0), value.dtype()),
        value,
    )
}
pub fn angle(x: &Tensor) -> Result<Tensor> {
    apply1(Angle, std::slice::from_ref(x))
}

/// `conj_physical`: the conjugate as a new tensor (a real tensor is returned as is).
pub struct ConjPhysical;
impl Op for ConjPhysical {
    fn name(&self) -> &'static str {
        "ConjPhysicalBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let x = &inputs[0];
        crate::ops::unary::run(x, Unary::Conj, x.dtype())
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![Some(conj_physical(&ctx.grad(0)?)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, conj_physical)
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_unary(ctx, conj_physical)
    }
}
pub fn conj_physical(x: &Tensor) -> Result<Tensor> {
    if !x.dtype().is_complex() {
        return Ok(x.clone());
    }
    apply1(ConjPhysical, std::slice::from_ref(x))
}
/// `conj_physical_`: nothing to do for a real tensor.
pub fn conj_physical_(x: &Tensor) -> Result<()> {
    if !x.dtype().is_complex() {
        return Ok(());
    }
    crate::ops::inplace::unary_(ConjPhysical, x)
}
