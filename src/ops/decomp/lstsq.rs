//! `linalg.lstsq` (LinalgLstsqBackward0): `(solution, residuals, rank, singular_values)`
//! with torch's CPU conventions per driver. gelsy (the default) and gels solve an A of
//! full column rank (m >= n) through its column-pivoted QR, as gelsy does; otherwise the
//! solution is the minimum-norm one from the thin SVD, singular values at or below
//! `rcond · σ_max` dropped (gelsd / gelss exactly; gelsy's complete orthogonal
//! decomposition agrees with it on the rank-deficient matrices tested). Which
//! outputs are empty follows torch: rank is empty for gels, singular values for all but
//! gelsd / gelss, residuals (‖AX − B‖² per column) exist only for m > n with a driver
//! other than gelsy and (but for gels) every matrix of full rank. The rules are torch's:
//! the solution's through pinv(A) B, the residuals' by the envelope theorem.

use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::Decomp;
use crate::ops::binary::{add, div, mul, mul_scalar, sub, where_, Cmp};
use crate::ops::decomp::pinv::Pinv;
use crate::ops::decomp::spectral::Svd;
use crate::ops::decomp::{batch_front_all, decompose, last2};
use crate::ops::linalg::{matmul, mh};
use crate::ops::reduce::sum;
use crate::ops::rules::composite;
use crate::ops::unary::{abs, conj, real, to_dtype};
use crate::ops::view::{expand, narrow, squeeze, unsqueeze};
use crate::ops::{
    apply, apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::shape::broadcast_shapes;
use crate::tensor::Tensor;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Driver {
    Gels,
    Gelsy,
    Gelsd,
    Gelss,
}

impl Driver {
    fn parse(name: Option<&str>) -> Result<Driver> {
        match name {
            None | Some("gelsy") => Ok(Driver::Gelsy),
            Some("gels") => Ok(Driver::Gels),
            Some("gelsd") => Ok(Driver::Gelsd),
            Some("gelss") => Ok(Driver::Gelss),
            Some(_) => Err(Error::runtime(
                "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)",
            )),
        }
    }
}

/// `vector`: B is a (batch of) vector(s), solved as one-column matrices.
#[derive(Clone, Copy)]
pub struct Lstsq {
    pub rcond: f64,
    pub driver: Driver,
    pub vector: bool,
}

fn empty(dtype: DType) -> Result<Tensor> {
    crate::ops::creation::zeros(&[0], dtype)
}

/// The pseudo-inverse inside the rules (torch's default tolerances).
const PINV: Pinv = Pinv {
    atol: None,
    rtol: None,
    hermitian: false,
};

impl Lstsq {
    fn matrix(&self, b: &Tensor) -> Result<Tensor> {
        if self.vector {
            unsqueeze(b, -1)
        } else {
            Ok(b.clone())
        }
    }
    fn unmatrix(&self, x: Tensor) -> Result<Tensor> {
        if self.vector {
            squeeze(&x, Some(&[-1]))
        } else {
            Ok(x)
        }
    }
}

impl Lstsq {
    /// gelsy's way for A of full column rank (m >= n): the solution through A's
    /// column-pivoted QR, `(solution, rank, empty singular values)`; `None` when some
    /// matrix looks rank-deficient, `|R_jj| <= rcond |R_00|` for some j (gelsy's test on
    /// the pivoted R, with its diagonal for the condition estimate), which then takes the
    /// SVD's minimum-norm solution.
    fn through_qr(&self, a: &Tensor, b: &Tensor) -> Result<Option<(Tensor, Tensor, Tensor)>> {
        let (_, n) = last2(a);
        let mut out = decompose(&[a.clone(), b.clone()], Decomp::LstsqQr)?;
        let diag = out.pop().expect("two outputs").to_vec::<f64>();
        let full_rank = diag.chunks(n.max(1)).all(|d| {
            let cut = d[0] * self.rcond;
            d[0].is_finite() && d.iter().all(|&x| x > cut && x > 0.0)
        });
        if !full_rank {
            return Ok(None);
        }
        let a_batch = &a.shape()[..a.dim() - 2];
        let rank = crate::ops::creation::full(a_batch, Scalar::Int(n as i64), DType::I64)?;
        let mut s_shape = a_batch.to_vec();
        s_shape.push(0);
        let s = crate::ops::creation::zeros(&s_shape, a.dtype().to_real())?;
        Ok(Some((out.pop().expect("two outputs"), rank, s)))
    }
}

impl Op for Lstsq {
    fn name(&self) -> &'static str {
        "LinalgLstsqBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |x| {
            let a = &x[0];
            let b = self.matrix(&x[1])?;
            let (m, n) = last2(a);
            let k = last2(&b).1;
            let real_dtype = a.dtype().to_real();
            let mut batch =
                broadcast_shapes(&a.shape()[..a.dim() - 2], &b.shape()[..b.dim() - 2])?.to_vec();
            let a_batch = a.shape()[..a.dim() - 2].to_vec();
            let qr =
                if m.min(n) > 0 && m >= n && matches!(self.driver, Driver::Gelsy | Driver::Gels) {
                    self.through_qr(a, &b)?
                } else {
                    None
                };
            let (solution, rank, s) = if let Some(found) = qr {
                found
            } else if m.min(n) == 0 {
                batch.extend([n, k]);
                let sol = crate::ops::creation::zeros(&batch, a.dtype())?;
                let rank = crate::ops::creation::zeros(&a_batch, DType::I64)?;
                let mut s_shape = a_batch.clone();
                s_shape.push(0);
                (
                    sol,
                    rank,
                    crate::ops::creation::zeros(&s_shape, real_dtype)?,
                )
            } else {
                let mut d = apply(Svd { full: false }, std::slice::from_ref(a))?;
                let vh = d.pop().expect("three outputs");
                let s = d.pop().expect("three outputs");
                let u = d.pop().expect("three outputs");
                let cut = mul_scalar(&narrow(&s, -1, 0, 1)?, Scalar::Float(self.rcond))?;
                let keep = crate::ops::binary::compare(&s, &cut, Cmp::Gt)?;
                let one = Tensor::scalar(Scalar::Float(1.0), s.dtype());
                let zero = Tensor::scalar(Scalar::Float(0.0), s.dtype());
                let sinv = to_dtype(&where_(&keep, &div(&one, &s)?, &zero)?, a.dtype())?;
                let uhb = mul(&unsqueeze(&sinv, -1)?, &matmul(&mh(&u)?, &b)?)?;
                let sol = matmul(&mh(&vh)?, &uhb)?;
                let rank = sum(&keep, Some(&[-1]), false, Some(DType::I64))?;
                (sol, rank, s)
            };
            let full_rank = rank.to_vec::<i64>().iter().all(|&r| r == n as i64);
            let residuals = if m > n
                && self.driver != Driver::Gelsy
                && (self.driver == Driver::Gels || full_rank)
            {
                let r = sub(&matmul(a, &solution)?, &b, Scalar::Int(1))?;
                {
                    let r_abs = abs(&r)?;
                    sum(&mul(&r_abs, &r_abs)?, Some(&[-2]), false, None)?
                }
            } else {
                empty(real_dtype)?
            };
            let rank = if self.driver == Driver::Gels {
                empty(DType::I64)?
            } else {
                rank
            };
            let s = if matches!(self.driver, Driver::Gelsd | Driver::Gelss) {
                s
            } else {
                empty(real_dtype)?
            };
            Ok(smallvec![self.unmatrix(solution)?, residuals, rank, s])
        })
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            Some(SaveRef::Input(0)),
            Some(SaveRef::Input(1)),
            Some(SaveRef::Output(0))
        ]
    }
    /// torch's linalg_lstsq_backward: through X = pinv(A) B (gB = pinv(A)^H gX, gA by
    /// pinv's rule for g = gX B^H); the residuals ρ = ‖AX − B‖² add gA += 2 (R gρ) X^H and
    /// gB -= 2 R gρ, R = AX − B (X's own change does not move ρ at the optimum).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (a, b) = (ctx.saved(0)?, self.matrix(ctx.saved(1)?)?);
        let x = self.matrix(ctx.saved(2)?)?;
        let mut ga: Option<Tensor> = None;
        let mut gb: Option<Tensor> = None;
        let acc = |slot: &mut Option<Tensor>, t: Tensor| -> Result<()> {
            *slot = Some(match slot.take() {
                Some(s) => add(&s, &t)?,
                None => t,
            });
            Ok(())
        };
        if let Some(gx) = &ctx.grads[0] {
            let gx = self.matrix(gx)?;
            let p = apply1(PINV, std::slice::from_ref(a))?;
            if ctx.needs(0) {
                let g = [Some(matmul(&gx, &mh(&b)?)?)];
                let saved = [Some(a.clone()), Some(p.clone())];
                let inner = VjpCtx {
                    grads: &g,
                    saved: &saved,
                    needs: &[true],
                    inputs: &ctx.inputs[..1],
                    outputs: &[crate::autograd::node::TensorMeta::of(&p)],
                };
                if let Some(g) = PINV.vjp(&inner)?.swap_remove(0) {
                    acc(&mut ga, g)?;
                }
            }
            if ctx.needs(1) {
                acc(&mut gb, matmul(&mh(&p)?, &gx)?)?;
            }
        }
        if let Some(gr) = ctx.grads[1].as_ref().filter(|g| g.numel() > 0) {
            let r = sub(&matmul(a, &x)?, &b, Scalar::Int(1))?;
            let gr = to_dtype(&unsqueeze(gr, -2)?, a.dtype())?;
            let rg = mul_scalar(&mul(&r, &gr)?, Scalar::Float(2.0))?;
            if ctx.needs(0) {
                acc(&mut ga, matmul(&rg, &mh(&x)?)?)?;
            }
            if ctx.needs(1) {
                acc(&mut gb, crate::ops::unary::neg(&rg)?)?;
            }
        }
        let gb = match gb {
            Some(g) => Some(self.unmatrix(g)?),
            None => None,
        };
        Ok(smallvec![ga, gb])
    }
    /// torch's lstsq jvps: dX = dpinv(A) B + pinv(A) dB; dρ = 2 Re Σ conj(R) (dA X − dB).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (ta, tb) = (ctx.tangent(0), ctx.tangent(1));
        if ta.is_none() && tb.is_none() {
            return Ok(smallvec![None, None, None, None]);
        }
        let a = &ctx.primals[0];
        let b = self.matrix(&ctx.primals[1])?;
        let x = self.matrix(&ctx.outputs[0])?;
        let p = apply1(PINV, std::slice::from_ref(a))?;
        let mut dx: Option<Tensor> = None;
        let mut dr_in: Option<Tensor> = None; // dA X - dB
        if let Some(ta) = ta {
            let inner = JvpCtx {
                primals: std::slice::from_ref(a),
                outputs: std::slice::from_ref(&p),
                tangents: &[Some(ta.clone())],
            };
            if let Some(dp) = PINV.jvp(&inner)?.swap_remove(0) {
                dx = Some(matmul(&dp, &b)?);
            }
            dr_in = Some(matmul(ta, &x)?);
        }
        if let Some(tb) = tb {
            let tb = self.matrix(tb)?;
            let term = matmul(&p, &tb)?;
            dx = Some(match dx {
                Some(d) => add(&d, &term)?,
                None => term,
            });
            dr_in = Some(match dr_in {
                Some(d) => sub(&d, &tb, Scalar::Int(1))?,
                None => crate::ops::unary::neg(&tb)?,
            });
        }
        let dx = match dx {
            Some(d) => Some(self.unmatrix(d)?),
            None => None,
        };
        let dres = match dr_in {
            Some(d) if ctx.outputs[1].numel() > 0 => {
                let r = sub(&matmul(a, &x)?, &b, Scalar::Int(1))?;
                let prod = mul(&conj(&r)?, &d)?;
                let prod = if prod.dtype().is_complex() {
                    real(&prod)?
                } else {
                    prod
                };
                Some(mul_scalar(
                    &sum(&prod, Some(&[-2]), false, None)?,
                    Scalar::Float(2.0),
                )?)
            }
            _ => None,
        };
        Ok(smallvec![dx, dres, None, None])
    }
    /// As for every op here; the empty outputs get the vmap dim a loop gives them.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let size = ctx.inputs.iter().find_map(|(x, b)| b.map(|d| x.shape()[d]));
        let mut out = batch_front_all(self, ctx, &[2, if self.vector { 1 } else { 2 }])?;
        if let Some(size) = size {
            for (t, _) in out.iter_mut().skip(1) {
                if t.dim() == 1 && t.numel() == 0 {
                    *t = expand(&unsqueeze(t, 0)?, &[size, 0])?;
                }
            }
        }
        Ok(out)
    }
}

/// `linalg.lstsq(A, B, rcond=, driver=)`: `(solution, residuals, rank, singular_values)`;
/// torch's checks in its order.
pub fn lstsq(
    a: &Tensor,
    b: &Tensor,
    rcond: Option<f64>,
    driver: Option<&str>,
) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
    const NAME: &str = "torch.linalg.lstsq";
    if a.dim() < 2 {
        return Err(Error::runtime(format!(
            "{NAME}: input must have at least 2 dimensions."
        )));
    }
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "{NAME}: Expected input and other to have the same dtype, but got input's dtype {} and other's dtype {}",
            a.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    let diff = a.dim() as i64 - b.dim() as i64;
    if !(0..=1).contains(&diff) {
        return Err(Error::runtime(format!(
            "{NAME}: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1"
        )));
    }
    let vector = b.dim() == 1 || (diff == 1 && b.shape() == a.shape()[..a.dim() - 1]);
    let (m, n) = last2(a);
    let b_rows = if vector {
        b.shape()[b.dim() - 1]
    } else {
        b.shape()[b.dim() - 2]
    };
    if diff == 1 && !vector && b_rows == m {
        // torch reads B as a batch of vectors here: its batch dims then fail to broadcast
        broadcast_shapes(&a.shape()[..a.dim() - 2], &b.shape()[..b.dim() - 1])?;
    }
    if b_rows != m {
        let which = if vector { "-1" } else { "-2" };
        return Err(Error::runtime(format!(
            "{NAME}: input.size(-2) should match other.size({which})"
        )));
    }
    let driver = Driver::parse(driver)?;
    let eps = match a.dtype() {
        DType::F32 | DType::C64 => f64::from(f32::EPSILON),
        DType::F64 | DType::C128 => f64::EPSILON,
        _ => {
            return Err(Error::runtime(
                "This function doesn't handle types other than float and double",
            ))
        }
    };
    let b_batch = &b.shape()[..b.dim() - if vector { 1 } else { 2 }];
    broadcast_shapes(&a.shape()[..a.dim() - 2], b_batch)?;
    let rcond = rcond.unwrap_or(eps * m.max(n) as f64);
    let op = Lstsq {
        rcond,
        driver,
        vector,
    };
    let mut out = apply(op, &[a.clone(), b.clone()])?;
    // torch differentiates the solution and the residuals only.
    let s = out.pop().expect("four outputs").alias_detached();
    let rank = out.pop().expect("four outputs");
    let residuals = out.pop().expect("four outputs");
    Ok((out.pop().expect("four outputs"), residuals, rank, s))
}
