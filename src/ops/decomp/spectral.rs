//! The spectral decompositions: `linalg.eigh` / `eigvalsh` (LinalgEighBackward0) and
//! `linalg.svd` / `svdvals` (LinalgSvdBackward0), with torch's rules
//! (linalg_eig_backward / linalg_eig_jvp for Hermitian input, svd_backward /
//! linalg_svd_jvp). Eigen- and singular vectors are defined up to a sign (a phase for
//! complex input); a loss that depends on the phase has no derivative, and the reverse
//! rules raise torch's error for it.

use num_complex::Complex64;
use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::Decomp;
use crate::ops::binary::{add, div, mul, mul_scalar, sub};
use crate::ops::creation::eye;
use crate::ops::decomp::{
    batch_front_all, check_float, check_matrix, check_square, decompose, last2,
};
use crate::ops::diag::diag_embed;
use crate::ops::linalg::{matmul, mh};
use crate::ops::rules::composite;
use crate::ops::unary::{real, to_dtype};
use crate::ops::view::{contiguous, diagonal, narrow, unsqueeze};
use crate::ops::{apply, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx};
use crate::tensor::Tensor;

/// The imaginary part of a complex `z` (real(-i z)).
fn imag(z: &Tensor) -> Result<Tensor> {
    real(&mul_scalar(z, Scalar::Complex(Complex64::new(0.0, -1.0)))?)
}

/// Whether the phase check can read `x` (not inside vmap).
fn all_close(a: &Tensor, b: &Tensor) -> Result<bool> {
    if a.is_batched() || b.is_batched() {
        return Ok(true);
    }
    let a = to_dtype(a, DType::F64)?.to_vec::<f64>();
    let b = to_dtype(b, DType::F64)?.to_vec::<f64>();
    // at::allclose(a, b, rtol=1e-2, atol=1e-2)
    Ok(a.iter()
        .zip(&b)
        .all(|(x, y)| (x - y).abs() <= 1e-2 + 1e-2 * y.abs()))
}

/// `L_j - L_i` at `(i, j)`, with ones on the diagonal (torch's Econj, real L).
fn gaps(l: &Tensor) -> Result<Tensor> {
    let e = sub(&unsqueeze(l, -2)?, &unsqueeze(l, -1)?, Scalar::Int(1))?;
    let n = l.shape()[l.dim() - 1];
    add(&e, &eye(n, n, l.dtype())?)
}

/// `x` with its diagonal replaced by `d` (or zeroed when `d` is None).
fn set_diagonal(x: &Tensor, d: Option<&Tensor>) -> Result<Tensor> {
    let off = sub(
        x,
        &diag_embed(&diagonal(x, 0, -2, -1)?, 0, -2, -1)?,
        Scalar::Int(1),
    )?;
    match d {
        Some(d) => add(&off, &diag_embed(&to_dtype(d, x.dtype())?, 0, -2, -1)?),
        None => Ok(off),
    }
}

// ------------------------------------------------------------------------------ eigh

/// `(eigenvalues, eigenvectors)` of the Hermitian matrix in A's `upper` / lower
/// triangle.
#[derive(Clone, Copy)]
pub struct Eigh {
    pub upper: bool,
}

impl Op for Eigh {
    fn name(&self) -> &'static str {
        "LinalgEighBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let kind = Decomp::Eigh { upper: self.upper };
        Ok(decompose(inputs, kind)?.into_iter().collect())
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(0)), Some(SaveRef::Output(1))]
    }
    /// gA = V (skew(Vᴴ gV) / E with diag(gL)) Vᴴ, E_ij = L_j - L_i.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (l, v) = (ctx.saved(0)?, ctx.saved(1)?);
        let vh = mh(v)?;
        let Some(gv) = &ctx.grads[1] else {
            let Some(gl) = &ctx.grads[0] else {
                return Ok(smallvec![None]);
            };
            let scaled = mul(v, &unsqueeze(&to_dtype(gl, v.dtype())?, -2)?)?;
            return Ok(smallvec![Some(matmul(&scaled, &vh)?)]);
        };
        let vhgv = matmul(&vh, gv)?;
        if v.dtype().is_complex() {
            let im = imag(&diagonal(&vhgv, 0, -2, -1)?)?;
            if !all_close(&im, &crate::ops::creation::zeros_like(&im)?)? {
                return Err(Error::runtime(
                    "linalg_eigh_backward: The eigenvectors in the complex case are specified up to multiplication by e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.",
                ));
            }
        }
        let skew = mul_scalar(
            &sub(&vhgv, &mh(&vhgv)?, Scalar::Int(1))?,
            Scalar::Float(0.5),
        )?;
        let inner = div(&skew, &gaps(l)?)?;
        let inner = match &ctx.grads[0] {
            Some(gl) => set_diagonal(&inner, Some(gl))?,
            None => inner,
        };
        Ok(smallvec![Some(matmul(v, &matmul(&inner, &vh)?)?)])
    }
    /// dP = Vᴴ dA V: dL = Re(diag dP), dV = V (dP / E, zero diagonal).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(da) = ctx.tangent(0) else {
            return Ok(smallvec![None, None]);
        };
        let (l, v) = (&ctx.outputs[0], &ctx.outputs[1]);
        let dp = matmul(&matmul(&mh(v)?, da)?, v)?;
        let dl = real(&diagonal(&dp, 0, -2, -1)?)?;
        let dv = set_diagonal(&div(&dp, &gaps(l)?)?, None)?;
        Ok(smallvec![Some(contiguous(&dl)?), Some(matmul(v, &dv)?)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2])
    }
}

fn eigh_checks(a: &Tensor, uplo: &str) -> Result<bool> {
    let d = a.dtype();
    if !(d.is_floating_point() || d.is_complex()) || matches!(d, DType::F16 | DType::BF16) {
        return Err(crate::dtype::unsupported("linalg_eigh_cpu", d));
    }
    let upper = match uplo {
        "L" | "l" => false,
        "U" | "u" => true,
        _ => {
            return Err(Error::runtime(format!(
                "Expected UPLO argument to be 'L' or 'U', but got {uplo}"
            )))
        }
    };
    check_square(a, "linalg.eigh")?;
    Ok(upper)
}

/// `linalg.eigh(A, UPLO=)`: `(eigenvalues, eigenvectors)`.
pub fn eigh(a: &Tensor, uplo: &str) -> Result<(Tensor, Tensor)> {
    let upper = eigh_checks(a, uplo)?;
    let mut out = apply(Eigh { upper }, std::slice::from_ref(a))?;
    let v = out.pop().expect("two outputs");
    Ok((out.pop().expect("two outputs"), v))
}

/// `linalg.eigvalsh(A, UPLO=)`: the eigenvalues (through the same node, as torch).
pub fn eigvalsh(a: &Tensor, uplo: &str) -> Result<Tensor> {
    Ok(eigh(a, uplo)?.0)
}

// ------------------------------------------------------------------------------- svd

/// `(U, S, Vh)`; `full`: U and Vh square.
#[derive(Clone, Copy)]
pub struct Svd {
    pub full: bool,
}

impl Svd {
    /// U and Vh narrowed to the `k` singular vectors the rules use.
    fn reduced(&self, u: &Tensor, vh: &Tensor, k: usize) -> Result<(Tensor, Tensor)> {
        if !self.full {
            return Ok((u.clone(), vh.clone()));
        }
        Ok((narrow(u, -1, 0, k as i64)?, narrow(vh, -2, 0, k as i64)?))
    }
}

impl Op for Svd {
    fn name(&self) -> &'static str {
        "LinalgSvdBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let a = &inputs[0];
        let (m, n) = last2(a);
        if m.min(n) == 0 {
            // No singular values: the full factors are identities (as LAPACK's).
            return composite(inputs, |x| {
                let a = &x[0];
                let batch = &a.shape()[..a.dim() - 2];
                let ident = |k: usize, rows: usize, cols: usize| -> Result<Tensor> {
                    let mut shape = batch.to_vec();
                    shape.extend([rows, cols]);
                    let e = eye(k, k, a.dtype())?;
                    let e = narrow(&narrow(&e, 0, 0, rows as i64)?, 1, 0, cols as i64)?;
                    contiguous(&crate::ops::view::expand(&e, &shape)?)
                };
                let (ur, uc, vr, vc) = if self.full {
                    (m, m, n, n)
                } else {
                    (m, 0, 0, n)
                };
                let mut sshape = batch.to_vec();
                sshape.push(0);
                let s = crate::ops::creation::zeros(&sshape, a.dtype().to_real())?;
                Ok(smallvec![
                    ident(m.max(n), ur, uc)?,
                    s,
                    ident(m.max(n), vr, vc)?
                ])
            });
        }
        let kind = Decomp::Svd { full: self.full };
        Ok(decompose(inputs, kind)?.into_iter().collect())
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            Some(SaveRef::Output(0)),
            Some(SaveRef::Output(1)),
            Some(SaveRef::Output(2))
        ]
    }
    /// torch's svd_backward (full factors narrowed to the first k vectors).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let s = ctx.saved(1)?;
        let k = s.shape()[s.dim() - 1];
        let (u, vh) = self.reduced(ctx.saved(0)?, ctx.saved(2)?, k)?;
        let (m, n) = (u.shape()[u.dim() - 2], vh.shape()[vh.dim() - 1]);
        let narrow_g = |g: &Option<Tensor>, dim: i64| -> Result<Option<Tensor>> {
            match g {
                Some(g) if self.full => Ok(Some(narrow(g, dim, 0, k as i64)?)),
                other => Ok(other.clone()),
            }
        };
        let (gu, gs, gvh) = (
            narrow_g(&ctx.grads[0], -1)?,
            ctx.grads[1].clone(),
            narrow_g(&ctx.grads[2], -2)?,
        );
        let dtype = u.dtype();
        let sc = to_dtype(s, dtype)?;
        if gu.is_none() && gvh.is_none() {
            let Some(gs) = gs else {
                return Ok(smallvec![None]);
            };
            let gs = to_dtype(&gs, dtype)?;
            let ga = if m >= n {
                matmul(&u, &mul(&unsqueeze(&gs, -1)?, &vh)?)?
            } else {
                matmul(&mul(&u, &unsqueeze(&gs, -2)?)?, &vh)?
            };
            return Ok(smallvec![Some(ga)]);
        }
        let complex = dtype.is_complex();
        let skew = |x: &Tensor| sub(x, &mh(x)?, Scalar::Int(1));
        let uhgu = gu
            .as_ref()
            .map(|g| skew(&matmul(&mh(&u)?, g)?))
            .transpose()?;
        let vhgv = gvh
            .as_ref()
            .map(|g| skew(&matmul(&vh, &mh(g)?)?))
            .transpose()?;
        if complex {
            let zeros = crate::ops::creation::zeros_like(s)?;
            let im = |x: &Option<Tensor>| -> Result<Tensor> {
                match x {
                    Some(x) => imag(&diagonal(x, 0, -2, -1)?),
                    None => Ok(zeros.clone()),
                }
            };
            let neg_v = crate::ops::unary::neg(&im(&vhgv)?)?;
            if !all_close(&im(&uhgu)?, &neg_v)? {
                return Err(Error::runtime(
                    "svd_backward: The singular vectors in the complex case are specified up to multiplication by e^{i phi}. The specified loss function depends on this phase term, making it ill-defined.",
                ));
            }
        }
        let s2 = mul(s, s)?;
        let e = to_dtype(&gaps(&s2)?, dtype)?;
        let s_row = unsqueeze(&sc, -2)?;
        let s_col = unsqueeze(&sc, -1)?;
        let mut ga = match (&uhgu, &vhgv) {
            (Some(a), Some(b)) => div(&add(&mul(a, &s_row)?, &mul(&s_col, b)?)?, &e)?,
            (Some(a), None) => mul(a, &div(&s_row, &e)?)?,
            (None, Some(b)) => mul(&s_col, &div(b, &e)?)?,
            (None, None) => unreachable!("checked above"),
        };
        if let Some(gs) = &gs {
            ga = add(&ga, &diag_embed(&to_dtype(gs, dtype)?, 0, -2, -1)?)?;
        }
        if complex {
            if let Some(a) = &uhgu {
                let d = div(
                    &diagonal(a, 0, -2, -1)?,
                    &mul_scalar(&sc, Scalar::Float(2.0))?,
                )?;
                ga = add(&ga, &diag_embed(&d, 0, -2, -1)?)?;
            }
        }
        let ga = match (&gu, &gvh) {
            (Some(gu), _) if m > n => {
                let ga = matmul(&u, &ga)?;
                let gu_sinv = div(gu, &s_row)?;
                let proj = matmul(&u, &matmul(&mh(&u)?, &gu_sinv)?)?;
                matmul(&sub(&add(&ga, &gu_sinv)?, &proj, Scalar::Int(1))?, &vh)?
            }
            (_, Some(gvh)) if m < n => {
                let ga = matmul(&ga, &vh)?;
                let sinv_gvh = div(gvh, &s_col)?;
                let proj = matmul(&matmul(&sinv_gvh, &mh(&vh)?)?, &vh)?;
                matmul(&u, &sub(&add(&ga, &sinv_gvh)?, &proj, Scalar::Int(1))?)?
            }
            _ if m >= n => matmul(&u, &matmul(&ga, &vh)?)?,
            _ => matmul(&matmul(&u, &ga)?, &vh)?,
        };
        Ok(smallvec![Some(ga)])
    }
    /// torch's linalg_svd_jvp.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(da) = ctx.tangent(0) else {
            return Ok(smallvec![None, None, None]);
        };
        let s = &ctx.outputs[1];
        let k = s.shape()[s.dim() - 1];
        let (u, vh) = self.reduced(&ctx.outputs[0], &ctx.outputs[2], k)?;
        let (m, n) = last2(da);
        let dtype = u.dtype();
        let complex = dtype.is_complex();
        let v = mh(&vh)?;
        let sc = to_dtype(s, dtype)?;
        let dp = if m >= n {
            matmul(&mh(&u)?, &matmul(da, &v)?)?
        } else {
            matmul(&matmul(&mh(&u)?, da)?, &v)?
        };
        let ds = real(&diagonal(&dp, 0, -2, -1)?)?;
        let dp = sub(
            &dp,
            &diag_embed(&to_dtype(&ds, dtype)?, 0, -2, -1)?,
            Scalar::Int(1),
        )?;
        let e = to_dtype(&gaps(&mul(s, s)?)?, dtype)?;
        let sym = |x: &Tensor| add(x, &mh(x)?);
        let diag_dp_2s = if complex {
            Some(diag_embed(
                &div(
                    &diagonal(&dp, 0, -2, -1)?,
                    &mul_scalar(&sc, Scalar::Float(2.0))?,
                )?,
                0,
                -2,
                -1,
            )?)
        } else {
            None
        };
        let mut du_aux = div(&sym(&mul(&dp, &unsqueeze(&sc, -2)?)?)?, &e)?;
        if let Some(d) = &diag_dp_2s {
            du_aux = add(&du_aux, d)?;
        }
        let mut du = matmul(&u, &du_aux)?;
        if m > n {
            let dav_sinv = matmul(da, &div(&v, &unsqueeze(&sc, -2)?)?)?;
            du = sub(
                &add(&du, &dav_sinv)?,
                &matmul(&u, &matmul(&mh(&u)?, &dav_sinv)?)?,
                Scalar::Int(1),
            )?;
            if self.full {
                du = pad_zeros(&du, -1, m - n)?;
            }
        }
        let neg_s = crate::ops::unary::neg(&sc)?;
        let mut dvh_aux = div(&sym(&mul(&dp, &unsqueeze(&neg_s, -1)?)?)?, &e)?;
        if let Some(d) = &diag_dp_2s {
            dvh_aux = add(&dvh_aux, d)?;
        }
        let mut dvh = matmul(&dvh_aux, &vh)?;
        if m < n {
            let uhda_sinv = matmul(&div(&mh(&u)?, &unsqueeze(&sc, -1)?)?, da)?;
            dvh = sub(
                &add(&dvh, &uhda_sinv)?,
                &matmul(&matmul(&uhda_sinv, &v)?, &vh)?,
                Scalar::Int(1),
            )?;
            if self.full {
                dvh = pad_zeros(&dvh, -2, n - m)?;
            }
        }
        Ok(smallvec![Some(du), Some(contiguous(&ds)?), Some(dvh)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2])
    }
}

/// `x` with `extra` zero slices appended along `dim` (-1 or -2).
fn pad_zeros(x: &Tensor, dim: i64, extra: usize) -> Result<Tensor> {
    let mut shape = x.shape().to_vec();
    let d = (shape.len() as i64 + dim) as usize;
    shape[d] = extra;
    let z = crate::ops::creation::zeros(&shape, x.dtype())?;
    crate::ops::join::cat(&[x.clone(), z], dim)
}

fn svd_checks(a: &Tensor, name: &str) -> Result<()> {
    check_matrix(a, name, "A")?;
    check_float(a, name, true)
}

/// `linalg.svd(A, full_matrices=)`: `(U, S, Vh)`.
pub fn svd(a: &Tensor, full_matrices: bool) -> Result<(Tensor, Tensor, Tensor)> {
    svd_checks(a, "linalg.svd")?;
    let mut out = apply(
        Svd {
            full: full_matrices,
        },
        std::slice::from_ref(a),
    )?;
    let vh = out.pop().expect("three outputs");
    let s = out.pop().expect("three outputs");
    Ok((out.pop().expect("three outputs"), s, vh))
}

/// `linalg.svdvals(A)`: the singular values (through the svd node, as torch).
pub fn svdvals(a: &Tensor) -> Result<Tensor> {
    svd_checks(a, "linalg.svd")?;
    Ok(apply(Svd { full: false }, std::slice::from_ref(a))?.swap_remove(1))
}
