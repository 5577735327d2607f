//! `linalg.pinv` (LinalgPinvBackward0): torch's forward from the SVD (or eigh for
//! `hermitian`), singular values at or below `max(atol, rtol · σ_max)` dropped, and
//! torch's pinv_backward / pinv_jvp rules.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::{Bitwise, Compare};
use crate::ops::binary::{add, compare, compare_scalar, div, mul, mul_scalar, sub, where_};
use crate::ops::decomp::spectral::{Eigh, Svd};
use crate::ops::decomp::{batch_front_all, last2};
use crate::ops::linalg::{matmul, mh};
use crate::ops::rules::composite;
use crate::ops::unary::{abs, neg, to_dtype};
use crate::ops::view::{narrow, unsqueeze};
use crate::ops::{
    apply, apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

#[derive(Clone, Copy)]
pub struct Pinv {
    pub atol: Option<f64>,
    pub rtol: Option<f64>,
    pub hermitian: bool,
}

impl Pinv {
    /// torch's get_atol_rtol: rtol defaults to eps · max(m, n) unless a positive atol
    /// is given.
    fn tolerances(&self, a: &Tensor) -> (f64, f64) {
        let (m, n) = last2(a);
        let eps = if matches!(a.dtype(), DType::F32 | DType::C64) {
            f64::from(f32::EPSILON)
        } else {
            f64::EPSILON
        };
        let atol = self.atol.unwrap_or(0.0);
        let rtol = self.rtol.unwrap_or(if atol > 0.0 {
            0.0
        } else {
            eps * m.max(n) as f64
        });
        (atol, rtol)
    }
}

/// 1/s where `keep`, else 0, in `dtype`.
fn pseudo_reciprocal(s: &Tensor, keep: &Tensor, dtype: DType) -> Result<Tensor> {
    let one = Tensor::scalar(Scalar::Float(1.0), s.dtype());
    let zero = Tensor::scalar(Scalar::Float(0.0), s.dtype());
    to_dtype(&where_(keep, &div(&one, s)?, &zero)?, dtype)
}

impl Op for Pinv {
    fn name(&self) -> &'static str {
        "LinalgPinvBackward0"
    }
    /// inputs: `[A]` with the tolerances in `self`, or `[A, atol, rtol]` with tensor
    /// tolerances, broadcast against the batch of singular values (see [`pinv_tensors`]).
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (atol, rtol) = self.tolerances(&inputs[0]);
        composite(inputs, |x| {
            let a = &x[0];
            let keep = |s: &Tensor, max: &Tensor| match x {
                [_, atol_t, rtol_t] => above_tensors(s, max, atol_t, rtol_t),
                _ => above(s, max, atol, rtol),
            };
            let (m, n) = last2(a);
            if a.numel() == 0 {
                let mut shape = a.shape()[..a.dim() - 2].to_vec();
                shape.extend([n, m]);
                return Ok(smallvec![crate::ops::creation::zeros(&shape, a.dtype())?]);
            }
            let out = if self.hermitian {
                let mut e = apply(Eigh { upper: false }, std::slice::from_ref(a))?;
                let (u, w) = (e.pop().expect("two outputs"), e.pop().expect("two outputs"));
                let w_abs = abs(&w)?;
                let which = crate::ops::reduce::Extreme::Max;
                let max = crate::ops::extrema::amax(&w_abs, which, Some(&[-1]), true)?;
                let winv = pseudo_reciprocal(&w, &keep(&w_abs, &max)?, a.dtype())?;
                matmul(&mul(&u, &unsqueeze(&winv, -2)?)?, &mh(&u)?)?
            } else {
                let mut d = apply(Svd { full: false }, std::slice::from_ref(a))?;
                let vh = d.pop().expect("three outputs");
                let s = d.pop().expect("three outputs");
                let u = d.pop().expect("three outputs");
                let max = narrow(&s, -1, 0, 1)?;
                let sinv = pseudo_reciprocal(&s, &keep(&s, &max)?, a.dtype())?;
                matmul(&mul(&mh(&vh)?, &unsqueeze(&sinv, -2)?)?, &mh(&u)?)?
            };
            Ok(smallvec![out])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    /// torch's pinv_backward.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (a, p) = (ctx.saved(0)?, ctx.saved(1)?);
        let (m, n) = last2(a);
        let ph = mh(p)?;
        let gh = mh(&ctx.grad(0)?)?;
        let g = if m <= n {
            let k = matmul(&gh, p)?;
            let k_ph = matmul(&k, &ph)?;
            let t1 = neg(&mh(&matmul(p, &k)?)?)?;
            let t3 = matmul(&matmul(a, p)?, &k_ph)?;
            let t4 = matmul(
                &matmul(&ph, p)?,
                &sub(&gh, &matmul(&k, a)?, Scalar::Int(1))?,
            )?;
            add(&sub(&add(&t1, &k_ph)?, &t3, Scalar::Int(1))?, &t4)?
        } else {
            let k = matmul(p, &gh)?;
            let ph_k = matmul(&ph, &k)?;
            let t1 = neg(&mh(&matmul(&k, p)?)?)?;
            let t2 = matmul(
                &matmul(&sub(&gh, &matmul(a, &k)?, Scalar::Int(1))?, p)?,
                &ph,
            )?;
            let t4 = matmul(&matmul(&ph_k, p)?, a)?;
            sub(&add(&add(&t1, &t2)?, &ph_k)?, &t4, Scalar::Int(1))?
        };
        // Tensor tolerances are not differentiated.
        let mut grads: Grads = smallvec![Some(g)];
        grads.extend((1..ctx.inputs.len()).map(|_| None));
        Ok(grads)
    }
    /// torch's pinv_jvp.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(da) = ctx.tangent(0) else {
            return Ok(smallvec![None]);
        };
        let (a, p) = (&ctx.primals[0], &ctx.outputs[0]);
        let (m, n) = last2(a);
        let dah = mh(da)?;
        let ph = mh(p)?;
        let out = if m <= n {
            let k = matmul(&ph, &dah)?;
            let inner = sub(
                &sub(&k, &mh(&k)?, Scalar::Int(1))?,
                &matmul(&k, &matmul(a, p)?)?,
                Scalar::Int(1),
            )?;
            let rest = sub(&dah, &matmul(p, &matmul(a, &dah)?)?, Scalar::Int(1))?;
            add(&matmul(p, &inner)?, &matmul(&rest, &matmul(&ph, p)?)?)?
        } else {
            let k = matmul(&dah, &ph)?;
            let inner = sub(
                &sub(&k, &mh(&k)?, Scalar::Int(1))?,
                &matmul(&matmul(p, a)?, &k)?,
                Scalar::Int(1),
            )?;
            let rest = sub(&dah, &matmul(&matmul(&dah, a)?, p)?, Scalar::Int(1))?;
            add(&matmul(&inner, p)?, &matmul(&matmul(p, &ph)?, &rest)?)?
        };
        Ok(smallvec![Some(out)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2, 0, 0])
    }
}

/// `s > max(atol, rtol · max)`, elementwise.
fn above(s: &Tensor, max: &Tensor, atol: f64, rtol: f64) -> Result<Tensor> {
    let rel = compare(s, &mul_scalar(max, Scalar::Float(rtol))?, Compare::Gt)?;
    let abs_ok = compare_scalar(s, Scalar::Float(atol), Compare::Gt)?;
    crate::ops::bitwise::logical(&rel, &abs_ok, Bitwise::And)
}

/// `s > max(atol, rtol · max)` with tolerance tensors, one per matrix of the batch
/// they broadcast against.
fn above_tensors(s: &Tensor, max: &Tensor, atol: &Tensor, rtol: &Tensor) -> Result<Tensor> {
    let rel = compare(s, &mul(&unsqueeze(rtol, -1)?, max)?, Compare::Gt)?;
    let abs_ok = compare(s, &unsqueeze(atol, -1)?, Compare::Gt)?;
    crate::ops::bitwise::logical(&rel, &abs_ok, Bitwise::And)
}

/// `linalg.pinv(A, atol=, rtol=, hermitian=)`.
pub fn pinv(a: &Tensor, atol: Option<f64>, rtol: Option<f64>, hermitian: bool) -> Result<Tensor> {
    check_input(a)?;
    apply1(
        Pinv {
            atol,
            rtol,
            hermitian,
        },
        std::slice::from_ref(a),
    )
}

fn check_input(a: &Tensor) -> Result<()> {
    let d = a.dtype();
    if !matches!(d, DType::F32 | DType::F64 | DType::C64 | DType::C128) || a.dim() < 2 {
        let shape: Vec<String> = a.shape().iter().map(|s| s.to_string()).collect();
        return Err(Error::runtime(format!(
            "linalg.pinv({}{{[{}]}}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types",
            d.scalar_type_name(),
            shape.join(", ")
        )));
    }
    Ok(())
}

/// `linalg.pinv(A, atol=, rtol=, hermitian=)` with tensor tolerances (torch's
/// `atol_rtol_tensor` overload): each broadcast against the batch of A's singular
/// values; not differentiable. A missing atol is 0; a missing rtol is eps · max(m, n)
/// where atol is not positive, else 0 (elementwise).
pub fn pinv_tensors(
    a: &Tensor,
    atol: Option<&Tensor>,
    rtol: Option<&Tensor>,
    hermitian: bool,
) -> Result<Tensor> {
    let recording = crate::autograd::grad_mode::is_grad_enabled();
    for (name, t) in [("atol", atol), ("rtol", rtol)] {
        if recording && t.is_some_and(Tensor::requires_grad) {
            return Err(Error::runtime(format!(
                "The function 'linalg_pinv' is not differentiable with respect to argument '{name}'. This input cannot have requires_grad True."
            )));
        }
    }
    check_input(a)?;
    for (name, t) in [("atol", atol), ("rtol", rtol)] {
        if let Some(t) = t.filter(|t| t.dtype().is_complex()) {
            return Err(Error::runtime(format!(
                "torch.linalg.pinv: {name} tensor of complex type is not supported. Got {}",
                t.dtype().scalar_type_name()
            )));
        }
    }
    let zero = Tensor::scalar(Scalar::Float(0.0), DType::F64);
    let atol_t = atol.cloned().unwrap_or_else(|| zero.clone());
    let rtol_t = match rtol {
        Some(r) => r.clone(),
        None => {
            let (_, default) = Pinv {
                atol: None,
                rtol: None,
                hermitian,
            }
            .tolerances(a);
            let default = Tensor::scalar(Scalar::Float(default), DType::F64);
            match atol {
                Some(t) => where_(
                    &compare_scalar(t, Scalar::Int(0), Compare::Gt)?,
                    &zero,
                    &default,
                )?,
                None => default,
            }
        }
    };
    let op = Pinv {
        atol: None,
        rtol: None,
        hermitian,
    };
    apply1(op, &[a.clone(), atol_t, rtol_t])
}
