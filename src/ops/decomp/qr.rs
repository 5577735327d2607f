//! `linalg.qr` (LinalgQrBackward0) with torch's rules (linalg_qr_backward /
//! linalg_qr_jvp). A wide A = [A1 A2] is A1 = Q R1 (square) with R2 = Qᴴ A2, which
//! is how the rules for m < n are built from the square ones.

use smallvec::{smallvec, SmallVec};

use crate::dtype::Scalar;
use crate::error::{Error, Result};
use crate::kernels::kinds::Decomp;
use crate::ops::binary::{add, mul_scalar, sub};
use crate::ops::decomp::triangular::SolveTriangular;
use crate::ops::decomp::{batch_front_all, check_float, check_matrix, decompose, last2, triangle};
use crate::ops::diag::diag_embed;
use crate::ops::linalg::{matmul, mh};
use crate::ops::unary::real;
use crate::ops::view::{diagonal, narrow};
use crate::ops::{
    apply, apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::tensor::Tensor;

/// torch's QR modes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum QrMode {
    Reduced,
    Complete,
    R,
}

/// `(Q, R)`; for mode 'r', Q is an empty tensor.
#[derive(Clone, Copy)]
pub struct LinalgQr {
    pub mode: QrMode,
}

const NO_Q: &str = "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.";
const NOT_DIFFERENTIABLE: &str =
    "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.";

/// `x` with the real part of its diagonal halved (the imaginary part kept).
fn halve_real_diagonal(x: &Tensor) -> Result<Tensor> {
    let d = diagonal(x, 0, -2, -1)?;
    let half = mul_scalar(&real(&d)?, Scalar::Float(-0.5))?;
    let half = crate::ops::unary::to_dtype(&half, x.dtype())?;
    add(x, &diag_embed(&half, 0, -2, -1)?)
}

fn right_solve_upper(r: &Tensor, b: &Tensor) -> Result<Tensor> {
    // b R^-1
    let op = SolveTriangular {
        upper: true,
        left: false,
        unitriangular: false,
    };
    apply1(op, &[r.clone(), b.clone()])
}

impl LinalgQr {
    fn check_rule(&self, m: usize, n: usize) -> Result<()> {
        match self.mode {
            QrMode::R => Err(Error::runtime(NO_Q)),
            QrMode::Complete if m > n => Err(Error::runtime(NOT_DIFFERENTIABLE)),
            _ => Ok(()),
        }
    }
}

/// The reverse rule of a QR with m >= n (R square):
/// gA = (gQ + Q syminvadj(triu(gR Rᴴ - Qᴴ gQ))) R^-H.
fn qr_vjp_tall(gq: Option<&Tensor>, gr: Option<&Tensor>, q: &Tensor, r: &Tensor) -> Result<Tensor> {
    let mhm = match (gq, gr) {
        (Some(gq), Some(gr)) => sub(&matmul(gr, &mh(r)?)?, &matmul(&mh(q)?, gq)?, Scalar::Int(1))?,
        (Some(gq), None) => crate::ops::unary::neg(&matmul(&mh(q)?, gq)?)?,
        (None, Some(gr)) => matmul(gr, &mh(r)?)?,
        (None, None) => unreachable!("checked by the caller"),
    };
    let t = triangle(&mhm, 0, true)?;
    let sym = halve_real_diagonal(&add(&t, &mh(&t)?)?)?;
    let mut b = matmul(q, &sym)?;
    if let Some(gq) = gq {
        b = add(&b, gq)?;
    }
    // b R^-H: R^H is lower triangular.
    let op = SolveTriangular {
        upper: false,
        left: false,
        unitriangular: false,
    };
    apply1(op, &[mh(r)?, b])
}

/// The forward rule of a QR with m >= n: dR = syminv(sym(Qᴴ dA R^-1)) R,
/// dQ = dA R^-1 - Q syminv(...).
fn qr_jvp_tall(da: &Tensor, q: &Tensor, r: &Tensor) -> Result<(Tensor, Tensor)> {
    let da_rinv = right_solve_upper(r, da)?;
    let x = matmul(&mh(q)?, &da_rinv)?;
    let sym = add(&x, &mh(&x)?)?;
    let dr = halve_real_diagonal(&triangle(&sym, 0, true)?)?;
    let dq = sub(&da_rinv, &matmul(q, &dr)?, Scalar::Int(1))?;
    Ok((dq, matmul(&dr, r)?))
}

impl Op for LinalgQr {
    fn name(&self) -> &'static str {
        "LinalgQrBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let complete = self.mode == QrMode::Complete;
        let mut out = decompose(inputs, Decomp::Qr { complete })?;
        if self.mode == QrMode::R {
            out[0] = crate::ops::creation::zeros(&[0], inputs[0].dtype())?;
        }
        Ok(out.into_iter().collect())
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(0)), Some(SaveRef::Output(1))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (q, r) = (ctx.saved(0)?, ctx.saved(1)?);
        let (m, n) = (
            ctx.inputs[0].shape[ctx.inputs[0].shape.len() - 2],
            ctx.inputs[0].shape[ctx.inputs[0].shape.len() - 1],
        );
        self.check_rule(m, n)?;
        let (gq, gr) = (ctx.grads[0].as_ref(), ctx.grads[1].as_ref());
        if gq.is_none() && gr.is_none() {
            return Ok(smallvec![None]);
        }
        if m >= n {
            return Ok(smallvec![Some(qr_vjp_tall(gq, gr, q, r)?)]);
        }
        // A = [A1 A2]: R2 = Qᴴ A2 adds A2 gR2ᴴ = Q R2 gR2ᴴ to Q's gradient.
        let (r1, r2) = (
            narrow(r, -1, 0, m as i64)?,
            narrow(r, -1, m as i64, (n - m) as i64)?,
        );
        let (gr1, gr2) = match gr {
            Some(g) => (
                Some(narrow(g, -1, 0, m as i64)?),
                Some(narrow(g, -1, m as i64, (n - m) as i64)?),
            ),
            None => (None, None),
        };
        let gq_total = match (&gr2, gq) {
            (Some(g2), Some(gq)) => Some(add(gq, &matmul(q, &matmul(&r2, &mh(g2)?)?)?)?),
            (Some(g2), None) => Some(matmul(q, &matmul(&r2, &mh(g2)?)?)?),
            (None, gq) => gq.cloned(),
        };
        let g1 = qr_vjp_tall(gq_total.as_ref(), gr1.as_ref(), q, &r1)?;
        let g2 = match &gr2 {
            Some(g2) => matmul(q, g2)?,
            None => crate::ops::creation::zeros(&[m, n - m], q.dtype()).and_then(|z| {
                crate::ops::view::expand(&z, &{
                    let mut s = g1.shape().to_vec();
                    let l = s.len();
                    s[l - 1] = n - m;
                    s
                })
            })?,
        };
        Ok(smallvec![Some(crate::ops::join::cat(&[g1, g2], -1)?)])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(da) = ctx.tangent(0) else {
            return Ok(smallvec![None, None]);
        };
        let (q, r) = (&ctx.outputs[0], &ctx.outputs[1]);
        let (m, n) = last2(da);
        self.check_rule(m, n)?;
        if m >= n {
            let (dq, dr) = qr_jvp_tall(da, q, r)?;
            return Ok(smallvec![Some(dq), Some(dr)]);
        }
        let (da1, da2) = (
            narrow(da, -1, 0, m as i64)?,
            narrow(da, -1, m as i64, (n - m) as i64)?,
        );
        let (r1, r2) = (
            narrow(r, -1, 0, m as i64)?,
            narrow(r, -1, m as i64, (n - m) as i64)?,
        );
        let (dq, dr1) = qr_jvp_tall(&da1, q, &r1)?;
        // dR2 = Qᴴ (dA2 - dQ R2)
        let dr2 = matmul(&mh(q)?, &sub(&da2, &matmul(&dq, &r2)?, Scalar::Int(1))?)?;
        Ok(smallvec![
            Some(dq),
            Some(crate::ops::join::cat(&[dr1, dr2], -1)?)
        ])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let mut out = batch_front_all(self, ctx, &[2])?;
        if self.mode == QrMode::R {
            out[0].1 = None; // the empty Q is not batched
        }
        Ok(out)
    }
}

/// `linalg.qr(A, mode=)`: `(Q, R)`.
pub fn qr(a: &Tensor, mode: &str) -> Result<(Tensor, Tensor)> {
    let mode = match mode {
        "reduced" => QrMode::Reduced,
        "complete" => QrMode::Complete,
        "r" => QrMode::R,
        other => {
            return Err(Error::runtime(format!(
                "qr received unrecognized mode '{other}' but expected one of 'reduced' (default), 'r', or 'complete'"
            )))
        }
    };
    check_matrix(a, "linalg.qr", "A")?;
    check_float(a, "linalg.qr", true)?;
    let mut out = apply(LinalgQr { mode }, std::slice::from_ref(a))?;
    let r = out.pop().expect("two outputs");
    Ok((out.pop().expect("two outputs"), r))
}
