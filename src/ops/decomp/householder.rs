//! `linalg.householder_product` / `orgqr` (LinalgHouseholderProductBackward0): the first
//! n columns of H_1 ⋯ H_k, H_i = I − τ_i v_i v_iᴴ, v_i the i-th column of A's unit lower
//! trapezoid (1 on the diagonal, A's entries below it). Built from matmuls, one
//! reflector at a time from the last; the rules run the same recursion backwards
//! (vjp) and forwards (jvp) with differentiable ops, so they can be differentiated
//! again.

use smallvec::{smallvec, SmallVec};

use crate::error::{Error, Result};
use crate::ops::binary::{add, mul, sub};
use crate::ops::decomp::{batch_front_all, last2, triangle};
use crate::ops::join::cat;
use crate::ops::linalg::{matmul, mh};
use crate::ops::rules::composite;
use crate::ops::unary::{conj, neg};
use crate::ops::view::{contiguous, expand, narrow, squeeze, unsqueeze};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::shape::broadcast_shapes;
use crate::tensor::Tensor;

#[derive(Clone, Copy)]
pub struct HouseholderProduct;

/// A and τ with their batch dims broadcast (the op checks equality for users; vmap
/// may batch one of them only).
fn aligned(a: &Tensor, tau: &Tensor) -> Result<(Tensor, Tensor)> {
    let batch = broadcast_shapes(&a.shape()[..a.dim() - 2], &tau.shape()[..tau.dim() - 1])?;
    let mut sa = batch.to_vec();
    sa.extend_from_slice(&a.shape()[a.dim() - 2..]);
    let mut st = batch.to_vec();
    st.push(tau.shape()[tau.dim() - 1]);
    Ok((expand(a, &sa)?, expand(tau, &st)?))
}

/// The unit lower trapezoid of A (the reflectors' vectors as columns).
fn reflectors(a: &Tensor) -> Result<Tensor> {
    let (m, n) = last2(a);
    let eye = crate::ops::creation::eye(m, n, a.dtype())?;
    add(&triangle(a, -1, false)?, &eye)
}

/// Column `i` of `x` as an `(.., rows, 1)` matrix.
fn column(x: &Tensor, i: usize) -> Result<Tensor> {
    narrow(x, -1, i as i64, 1)
}

/// τ_i as an `(.., 1, 1)` matrix.
fn scalar_of(tau: &Tensor, i: usize) -> Result<Tensor> {
    unsqueeze(&narrow(tau, -1, i as i64, 1)?, -1)
}

/// `H_i Q = Q − τ v (vᴴ Q)`.
fn reflect(q: &Tensor, v: &Tensor, t: &Tensor) -> Result<Tensor> {
    let w = matmul(&mh(v)?, q)?;
    sub(q, &mul(t, &matmul(v, &w)?)?, crate::dtype::Scalar::Int(1))
}

/// `[Q_0, Q_1, .., Q_k]` with `Q_k = I (m × n)` and `Q_i = H_i Q_{i+1}`.
fn partial_products(a: &Tensor, tau: &Tensor) -> Result<Vec<Tensor>> {
    let (m, n) = last2(a);
    let k = tau.shape()[tau.dim() - 1];
    let v = reflectors(a)?;
    let mut q = expand(&crate::ops::creation::eye(m, n, a.dtype())?, &a.shape())?;
    let mut out = vec![q.clone()];
    for i in (0..k).rev() {
        q = reflect(&q, &column(&v, i)?, &scalar_of(tau, i)?)?;
        out.push(q.clone());
    }
    out.reverse();
    Ok(out)
}

impl Op for HouseholderProduct {
    fn name(&self) -> &'static str {
        "LinalgHouseholderProductBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |x| {
            let (a, tau) = aligned(&x[0], &x[1])?;
            let q = partial_products(&a, &tau)?.swap_remove(0);
            Ok(smallvec![contiguous(&q)?])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Input(1))]
    }
    /// Back through Q_i = Q_{i+1} − τ v w, w = vᴴ Q_{i+1}: gτ_i = −vᴴ g wᴴ,
    /// gv_i = −conj(τ) g wᴴ − τ Q_{i+1} gᴴ v, and g ← H_iᴴ g for Q_{i+1}; gA is gv
    /// below the diagonal.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (a, tau) = aligned(ctx.saved(0)?, ctx.saved(1)?)?;
        let n = last2(&a).1;
        let k = tau.shape()[tau.dim() - 1];
        let qs = partial_products(&a, &tau)?;
        let v = reflectors(&a)?;
        let mut g = ctx.grad(0)?;
        let mut gv = Vec::with_capacity(n);
        let mut gt = Vec::with_capacity(k);
        for i in 0..k {
            let (vi, ti) = (column(&v, i)?, scalar_of(&tau, i)?);
            let next = &qs[i + 1];
            let wh = mh(&matmul(&mh(&vi)?, next)?)?; // (.., n, 1)
            let g_wh = matmul(&g, &wh)?; // (.., m, 1)
            gt.push(squeeze(&neg(&matmul(&mh(&vi)?, &g_wh)?)?, Some(&[-1]))?);
            let term = matmul(next, &matmul(&mh(&g)?, &vi)?)?;
            let gvi = add(&mul(&conj(&ti)?, &g_wh)?, &mul(&ti, &term)?)?;
            gv.push(neg(&gvi)?);
            g = reflect(&g, &vi, &conj(&ti)?)?;
        }
        let mut shape = a.shape().to_vec();
        shape[a.dim() - 1] = n - k;
        gv.push(crate::ops::creation::zeros(&shape, a.dtype())?);
        let ga = triangle(&cat(&gv, -1)?, -1, false)?;
        let gtau = if k == 0 {
            crate::ops::creation::zeros_like(&tau)?
        } else {
            cat(&gt, -1)?
        };
        Ok(smallvec![
            ctx.needs(0).then_some(ga),
            ctx.needs(1).then_some(gtau)
        ])
    }
    /// Forward through the same recursion: dQ_i = dQ_{i+1} − dτ v w − τ dv w − τ v dw,
    /// dw = dvᴴ Q_{i+1} + vᴴ dQ_{i+1}.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (ta, tt) = (ctx.tangent(0), ctx.tangent(1));
        if ta.is_none() && tt.is_none() {
            return Ok(smallvec![None]);
        }
        let (a, tau) = aligned(&ctx.primals[0], &ctx.primals[1])?;
        let (m, n) = last2(&a);
        let k = tau.shape()[tau.dim() - 1];
        let da = match ta {
            Some(t) => triangle(&expand(t, &a.shape())?, -1, false)?,
            None => crate::ops::creation::zeros_like(&a)?,
        };
        let dtau = match tt {
            Some(t) => expand(t, &tau.shape())?,
            None => crate::ops::creation::zeros_like(&tau)?,
        };
        let v = reflectors(&a)?;
        let mut q = expand(&crate::ops::creation::eye(m, n, a.dtype())?, &a.shape())?;
        let mut dq = crate::ops::creation::zeros_like(&a)?;
        for i in (0..k).rev() {
            let (vi, ti) = (column(&v, i)?, scalar_of(&tau, i)?);
            let (dvi, dti) = (column(&da, i)?, scalar_of(&dtau, i)?);
            let w = matmul(&mh(&vi)?, &q)?;
            let dw = add(&matmul(&mh(&dvi)?, &q)?, &matmul(&mh(&vi)?, &dq)?)?;
            let change = add(
                &add(
                    &mul(&dti, &matmul(&vi, &w)?)?,
                    &mul(&ti, &matmul(&dvi, &w)?)?,
                )?,
                &mul(&ti, &matmul(&vi, &dw)?)?,
            )?;
            dq = sub(&dq, &change, crate::dtype::Scalar::Int(1))?;
            q = reflect(&q, &vi, &ti)?;
        }
        Ok(smallvec![Some(dq)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2, 1])
    }
}

/// `linalg.householder_product(A, tau)` / `orgqr`: torch's checks in its order.
pub fn householder_product(a: &Tensor, tau: &Tensor) -> Result<Tensor> {
    const NAME: &str = "torch.linalg.householder_product";
    if a.dim() < 2 {
        return Err(Error::runtime(format!(
            "{NAME}: input must have at least 2 dimensions."
        )));
    }
    let (m, n) = last2(a);
    if m < n {
        return Err(Error::runtime(format!(
            "{NAME}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )));
    }
    if tau.dim() == 0 {
        return Err(Error::index(
            "Dimension specified as -1 but tensor has no dimensions",
        ));
    }
    let k = tau.shape()[tau.dim() - 1];
    if n < k {
        return Err(Error::runtime(format!(
            "{NAME}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )));
    }
    if a.dim() != tau.dim() + 1 {
        return Err(Error::runtime(format!(
            "{NAME}: Expected tau to have one dimension less than input, but got tau.ndim equal to {} and input.ndim is equal to {}",
            tau.dim(),
            a.dim()
        )));
    }
    let a_batch = &a.shape()[..a.dim() - 2];
    let t_batch = &tau.shape()[..tau.dim() - 1];
    if a_batch != t_batch {
        return Err(Error::runtime(format!(
            "{NAME}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got {t_batch:?}"
        )));
    }
    if a.dtype() != tau.dtype() {
        return Err(Error::runtime(format!(
            "{NAME}: tau dtype {} does not match input dtype {}",
            tau.dtype().scalar_type_name(),
            a.dtype().scalar_type_name()
        )));
    }
    let d = a.dtype();
    if !(d.is_floating_point() || d.is_complex())
        || matches!(d, crate::dtype::DType::F16 | crate::dtype::DType::BF16)
    {
        return Err(crate::dtype::unsupported("orgqr_cpu", d));
    }
    apply1(HouseholderProduct, &[a.clone(), tau.clone()])
}
