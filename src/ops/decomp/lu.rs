//! The LU family: `linalg.inv` / `inv_ex` (LinalgInvExBackward0), `linalg.det`
//! (LinalgDetBackward0), `linalg.slogdet` (LinalgSlogdetBackward0), `logdet` (torch's
//! composite over slogdet) and `linalg.solve` / `solve_ex` (LinalgSolveExBackward0).

use num_complex::Complex64;
use smallvec::{smallvec, SmallVec};

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::Decomp;
use crate::ops::binary::{compare_scalar, eq_scalar, mul, mul_scalar, sub, where_, Cmp};
use crate::ops::decomp::{
    batch_front_all, check_float, check_matrix, check_square, decompose, first_failure, last2,
    linalg_error,
};
use crate::ops::index::index_select;
use crate::ops::linalg::{matmul, mh};
use crate::ops::reduce::sum;
use crate::ops::rules::composite;
use crate::ops::unary::{abs, conj, log, neg, real, to_dtype};
use crate::ops::view::{
    contiguous, expand, narrow, permute, reshape, select, squeeze, transpose, unsqueeze,
};
use crate::ops::{
    apply, apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::shape::broadcast_shapes;
use crate::tensor::Tensor;

/// `x[..., None, None]`: a per-matrix value against its matrix.
fn per_matrix(x: &Tensor) -> Result<Tensor> {
    unsqueeze(&unsqueeze(x, -1)?, -1)
}

/// `mT`: the transpose of the last two dims.
fn mt(x: &Tensor) -> Result<Tensor> {
    transpose(x, -2, -1)
}

/// The imaginary part of a complex `z` (real(-i z)), with differentiable ops.
fn imag(z: &Tensor) -> Result<Tensor> {
    real(&mul_scalar(z, Scalar::Complex(Complex64::new(0.0, -1.0)))?)
}

// ------------------------------------------------------------------------------- inv

/// `(A^-1, info)`; `check`: a singular A raises (naming this function) instead of
/// reporting it.
#[derive(Clone, Copy)]
pub struct Inv {
    pub check: Option<&'static str>,
}

impl Op for Inv {
    fn name(&self) -> &'static str {
        "LinalgInvExBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let mut out = decompose(inputs, Decomp::Inv)?;
        if let Some(name) = self.check {
            if let Some((element, k)) = first_failure(&out[1]) {
                return Err(linalg_error(
                    name,
                    element,
                    &format!("The diagonal element {k} is zero, the inversion could not be completed because the input matrix is singular."),
                ));
            }
        }
        let info = out.pop().expect("two outputs");
        Ok(smallvec![out.pop().expect("two outputs"), info])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Output(0))]
    }
    /// gA = -A^-H g A^-H.
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let inv_h = mh(ctx.saved(0)?)?;
        let g = matmul(&matmul(&inv_h, &ctx.grad(0)?)?, &inv_h)?;
        Ok(smallvec![Some(neg(&g)?)])
    }
    /// d(A^-1) = -A^-1 dA A^-1.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(t) = ctx.tangent(0) else {
            return Ok(smallvec![None, None]);
        };
        let inv = &ctx.outputs[0];
        Ok(smallvec![Some(neg(&matmul(&matmul(inv, t)?, inv)?)?), None])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2])
    }
}

fn inv_checks(a: &Tensor) -> Result<()> {
    check_matrix(a, "linalg.inv", "A")?;
    check_square(a, "linalg.inv")?;
    check_float(a, "linalg.inv", true)
}

/// `linalg.inv_ex(A, check_errors=)`: `(inverse, info)`.
pub fn inv_ex(a: &Tensor, check_errors: bool) -> Result<(Tensor, Tensor)> {
    inv_checks(a)?;
    let check = check_errors.then_some("linalg.inv_ex");
    let mut out = apply(Inv { check }, std::slice::from_ref(a))?;
    let info = out.pop().expect("two outputs");
    Ok((out.pop().expect("two outputs"), info))
}

/// `linalg.inv(A)` / `torch.inverse`.
pub fn inv(a: &Tensor) -> Result<Tensor> {
    inv_checks(a)?;
    let check = Some("linalg.inv");
    Ok(apply(Inv { check }, std::slice::from_ref(a))?.swap_remove(0))
}

/// The inverse inside rules: no error for a singular matrix.
fn inverse(a: &Tensor) -> Result<Tensor> {
    Ok(apply(Inv { check: None }, std::slice::from_ref(a))?.swap_remove(0))
}

// ------------------------------------------------------------------------------- det

#[derive(Clone, Copy)]
pub struct Det;

impl Op for Det {
    fn name(&self) -> &'static str {
        "LinalgDetBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        Ok(decompose(inputs, Decomp::Det)?.into_iter().collect())
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    /// gA = g conj(cof(A)), cof(A) = d det / dA (the adjugate's transpose).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let cof = cofactors(ctx.saved(0)?, ctx.saved(1)?)?;
        Ok(smallvec![Some(mul(
            &per_matrix(&ctx.grad(0)?)?,
            &conj(&cof)?
        )?)])
    }
    /// d det = sum(cof(A) * dA).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(t) = ctx.tangent(0) else {
            return Ok(smallvec![None]);
        };
        let cof = cofactors(&ctx.primals[0], &ctx.outputs[0])?;
        Ok(smallvec![Some(sum(
            &mul(&cof, t)?,
            Some(&[-2, -1]),
            false,
            None
        )?)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2])
    }
}

/// The cofactor matrix of `a` (`d det(a) / d a`), given `det = det(a)`: `det · A^-T`
/// when every matrix is well invertible, else the signed determinants of the minors, which
/// stay smooth at singular matrices (torch's det backward takes an SVD there).
fn cofactors(a: &Tensor, det_a: &Tensor) -> Result<Tensor> {
    let n = last2(a).0;
    // As torch: the minors wherever |det| < 100 eps (A^-1 loses its accuracy there).
    let singular = n == 0 || det_a.is_batched() || {
        let eps = if matches!(det_a.dtype(), DType::F32 | DType::C64) {
            f64::from(f32::EPSILON)
        } else {
            f64::EPSILON
        };
        let small = compare_scalar(&abs(det_a)?, Scalar::Float(100.0 * eps), Cmp::Lt)?;
        crate::ops::device::any_true(&small)?
    };
    if !singular || n > 16 {
        return mul(&per_matrix(det_a)?, &mt(&inverse(a)?)?);
    }
    if n <= 1 {
        return crate::ops::creation::ones_like(a);
    }
    // minors[.., i, j] = det(a without row i and column j).
    let mut keep = Vec::with_capacity(n * (n - 1));
    for i in 0..n {
        keep.extend((0..n).filter(|&k| k != i).map(|k| k as i64));
    }
    let keep = Tensor::from_vec(keep, &[n * (n - 1)])?;
    let lead = a.dim() - 2;
    let mut shape: Vec<usize> = a.shape()[..lead].to_vec();
    let rows = index_select(a, -2, &keep)?; // (.., n(n-1), n)
    let both = index_select(&rows, -1, &keep)?; // (.., n(n-1), n(n-1))
    shape.extend([n, n - 1, n, n - 1]);
    let both = reshape(&both, &shape)?; // [.., i, r, j, c]
    let mut perm: Vec<i64> = (0..lead as i64).collect();
    let l = lead as i64;
    perm.extend([l, l + 2, l + 1, l + 3]);
    let minors = det(&permute(&both, &perm)?)?;
    let signs: Vec<f64> = (0..n * n)
        .map(|k| {
            if (k / n + k % n).is_multiple_of(2) {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let signs = to_dtype(&Tensor::from_vec(signs, &[n, n])?, a.dtype())?;
    mul(&minors, &signs)
}

fn det_checks(a: &Tensor, name: &str) -> Result<()> {
    check_matrix(a, name, "A")?;
    check_square(a, name)?;
    check_float(a, name, true)
}

/// `linalg.det(A)` / `torch.det`.
pub fn det(a: &Tensor) -> Result<Tensor> {
    det_checks(a, "linalg.det")?;
    apply1(Det, std::slice::from_ref(a))
}

// --------------------------------------------------------------------------- slogdet

#[derive(Clone, Copy)]
pub struct Slogdet;

impl Op for Slogdet {
    fn name(&self) -> &'static str {
        "LinalgSlogdetBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        Ok(decompose(inputs, Decomp::Slogdet)?.into_iter().collect())
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    /// gA = g A^-H with g = g_logabsdet (real input), or g_logabsdet - i Im(conj(g_sign)
    /// sign) (complex input; torch's slogdet_backward).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let a = ctx.saved(0)?;
        let complex = a.dtype().is_complex();
        if ctx.grads[1].is_none() && (!complex || ctx.grads[0].is_none()) {
            return Ok(smallvec![None]);
        }
        let mut g = to_dtype(&ctx.grad(1)?, a.dtype())?;
        if complex {
            if let Some(gs) = &ctx.grads[0] {
                let im = imag(&mul(&conj(gs)?, ctx.saved(1)?)?)?;
                let i_im = mul_scalar(
                    &to_dtype(&im, a.dtype())?,
                    Scalar::Complex(Complex64::new(0.0, 1.0)),
                )?;
                g = sub(&g, &i_im, Scalar::Int(1))?;
            }
        }
        Ok(smallvec![Some(mul(&per_matrix(&g)?, &mh(&inverse(a)?)?)?)])
    }
    /// tr = tr(A^-1 dA): d logabsdet = Re(tr), d sign = i Im(tr) sign (zero when real).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let Some(t) = ctx.tangent(0) else {
            return Ok(smallvec![None, None]);
        };
        let a = &ctx.primals[0];
        let tr = sum(&mul(&mt(&inverse(a)?)?, t)?, Some(&[-2, -1]), false, None)?;
        if !a.dtype().is_complex() {
            return Ok(smallvec![None, Some(tr)]);
        }
        let i_im = mul_scalar(
            &to_dtype(&imag(&tr)?, a.dtype())?,
            Scalar::Complex(Complex64::new(0.0, 1.0)),
        )?;
        Ok(smallvec![
            Some(mul(&i_im, &ctx.outputs[0])?),
            Some(real(&tr)?)
        ])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front_all(self, ctx, &[2])
    }
}

fn slogdet_named(a: &Tensor, name: &str) -> Result<(Tensor, Tensor)> {
    det_checks(a, name)?;
    let mut out = apply(Slogdet, std::slice::from_ref(a))?;
    let logabs = out.pop().expect("two outputs");
    Ok((out.pop().expect("two outputs"), logabs))
}

/// `linalg.slogdet(A)` / `torch.slogdet`: `(sign, logabsdet)`.
pub fn slogdet(a: &Tensor) -> Result<(Tensor, Tensor)> {
    slogdet_named(a, "linalg.slogdet")
}

/// `torch.logdet`: torch's composite, `log(sign) + logabsdet` for complex input,
/// `where(sign == -1, nan, logabsdet)` for real input.
pub fn logdet(a: &Tensor) -> Result<Tensor> {
    let (sign, logabs) = slogdet_named(a, "logdet")?;
    if a.dtype().is_complex() {
        return crate::ops::binary::add(&log(&sign)?, &logabs);
    }
    let negative = eq_scalar(&sign, Scalar::Int(-1))?;
    let nan = Tensor::scalar(Scalar::Float(f64::NAN), logabs.dtype());
    where_(&negative, &nan, &logabs)
}

// ----------------------------------------------------------------------------- solve

/// `(X, info)` with `A X = B` (`left`) or `X A = B`; `vector`: B is a (batch of)
/// vector(s), solved as one-column matrices. `check`: a singular A raises, naming
/// this function.
#[derive(Clone, Copy)]
pub struct Solve {
    pub left: bool,
    pub vector: bool,
    pub check: Option<&'static str>,
}

impl Op for Solve {
    fn name(&self) -> &'static str {
        "LinalgSolveExBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let out = composite(inputs, |x| {
            let (a, b) = (&x[0], &x[1]);
            let b = if self.vector {
                unsqueeze(b, -1)?
            } else {
                b.clone()
            };
            let mut out = if self.left {
                decompose(&[a.clone(), b], Decomp::Solve)?
            } else {
                let mut out = decompose(&[mt(a)?, mt(&b)?], Decomp::Solve)?;
                out[0] = contiguous(&mt(&out[0])?)?;
                out
            };
            if self.vector {
                out[0] = squeeze(&out[0], Some(&[-1]))?;
            }
            // torch factors A once: info has A's batch shape, not the broadcast one.
            out[1] = contiguous(&unbroadcast(&out[1], &a.shape()[..a.dim() - 2])?)?;
            Ok(out)
        })?;
        if let Some(name) = self.check {
            if let Some((element, _)) = first_failure(&out[1]) {
                return Err(linalg_error(
                    name,
                    element,
                    "The solver failed because the input matrix is singular.",
                ));
            }
        }
        Ok(out.into_iter().collect())
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(0)), Some(SaveRef::Output(0))]
    }
    /// gB = solve(A^H, gX) (same side); gA = -gB X^H (left) or -X^H gB (right).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let (a, x) = (ctx.saved(0)?, ctx.saved(1)?);
        let mut gx = ctx.grad(0)?;
        let mut x = x.clone();
        if self.vector {
            gx = unsqueeze(&gx, -1)?;
            x = unsqueeze(&x, -1)?;
        }
        let gb = solve_raw(&mh(a)?, &gx, self.left)?;
        let ga = if !ctx.needs(0) {
            None
        } else if self.left {
            Some(neg(&matmul(&gb, &mh(&x)?)?)?)
        } else {
            Some(neg(&matmul(&mh(&x)?, &gb)?)?)
        };
        let gb = if !ctx.needs(1) {
            None
        } else if self.vector {
            Some(squeeze(&gb, Some(&[-1]))?)
        } else {
            Some(gb)
        };
        Ok(smallvec![ga, gb])
    }
    /// dX = solve(A, dB - dA X) (left) or solve(A, dB - X dA, right).
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let (a, b) = (&ctx.primals[0], &ctx.primals[1]);
        if ctx.tangent(0).is_none() && ctx.tangent(1).is_none() {
            return Ok(smallvec![None, None]);
        }
        let mut x = ctx.outputs[0].clone();
        if self.vector {
            x = unsqueeze(&x, -1)?;
        }
        let mut rhs = match ctx.tangent(1) {
            Some(tb) if self.vector => unsqueeze(tb, -1)?,
            Some(tb) => tb.clone(),
            None => crate::ops::creation::zeros_like(&if self.vector {
                unsqueeze(b, -1)?
            } else {
                b.clone()
            })?,
        };
        if let Some(ta) = ctx.tangent(0) {
            let prod = if self.left {
                matmul(ta, &x)?
            } else {
                matmul(&x, ta)?
            };
            rhs = sub(&rhs, &prod, Scalar::Int(1))?;
        }
        let mut dx = solve_raw(a, &rhs, self.left)?;
        if self.vector {
            dx = squeeze(&dx, Some(&[-1]))?;
        }
        Ok(smallvec![Some(dx), None])
    }
    /// As for every op here; info follows A, so it is repeated over B's vmap dim when
    /// only B is batched (as a loop over the examples gives it).
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let mut out = batch_front_all(self, ctx, &[2, if self.vector { 1 } else { 2 }])?;
        if let (None, Some(bd)) = (ctx.inputs[0].1, ctx.inputs[1].1) {
            let size = ctx.inputs[1].0.shape()[bd];
            let info = unsqueeze(&out[1].0, 0)?;
            let mut shape = info.shape().to_vec();
            shape[0] = size;
            out[1].0 = contiguous(&expand(&info, &shape)?)?;
        }
        Ok(out)
    }
}

/// The part of `x` (whose leading dims were broadcast from `batch`) that `batch` holds:
/// index 0 of the added dims and of the expanded size-1 dims.
fn unbroadcast(x: &Tensor, batch: &[usize]) -> Result<Tensor> {
    let mut x = x.clone();
    while x.dim() > batch.len() {
        x = select(&x, 0, 0)?;
    }
    for (d, &size) in batch.iter().enumerate() {
        if size == 1 && x.shape()[d] != 1 {
            x = narrow(&x, d as i64, 0, 1)?;
        }
    }
    Ok(x)
}

/// The matrix solve inside rules (no checks, no error for a singular A).
fn solve_raw(a: &Tensor, b: &Tensor, left: bool) -> Result<Tensor> {
    let op = Solve {
        left,
        vector: false,
        check: None,
    };
    Ok(apply(op, &[a.clone(), b.clone()])?.swap_remove(0))
}

/// `linalg.solve_ex(A, B, left=, check_errors=)`: `(result, info)`.
pub fn solve_ex(
    a: &Tensor,
    b: &Tensor,
    left: bool,
    check_errors: bool,
) -> Result<(Tensor, Tensor)> {
    solve_named(a, b, left, check_errors.then_some("torch.linalg.solve_ex"))
}

/// `linalg.solve(A, B, left=)`.
pub fn solve(a: &Tensor, b: &Tensor, left: bool) -> Result<Tensor> {
    Ok(solve_named(a, b, left, Some("torch.linalg.solve"))?.0)
}

fn solve_named(
    a: &Tensor,
    b: &Tensor,
    left: bool,
    check: Option<&'static str>,
) -> Result<(Tensor, Tensor)> {
    const NAME: &str = "linalg.solve";
    check_float(a, NAME, false)?;
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "{NAME}: Expected A and B to have the same dtype, but found A of type {} and B of type {} instead",
            a.dtype().scalar_type_name(),
            b.dtype().scalar_type_name()
        )));
    }
    check_matrix(a, NAME, "A")?;
    check_square(a, NAME)?;
    let vector =
        left && (b.dim() == 1 || (b.dim() + 1 == a.dim() && b.shape() == a.shape()[..a.dim() - 1]));
    if b.dim() == 0 || (!vector && b.dim() < 2) {
        return Err(Error::runtime(format!(
            "{NAME}: The input tensor B must have at least 2 dimensions."
        )));
    }
    let (n, _) = last2(a);
    let (b_rows, b_cols) = if vector {
        (b.shape()[b.dim() - 1], 1)
    } else {
        last2(b)
    };
    let fits = if left { b_rows == n } else { b_cols == n };
    if !fits {
        return Err(Error::runtime(format!(
            "{NAME}: Incompatible shapes of A and B for the equation {} ({n}x{n} and {b_rows}x{b_cols})",
            if left { "AX = B" } else { "XA = B" }
        )));
    }
    let b_batch = &b.shape()[..b.dim() - if vector { 1 } else { 2 }];
    broadcast_shapes(&a.shape()[..a.dim() - 2], b_batch)?;
    let op = Solve {
        left,
        vector,
        check,
    };
    let mut out = apply(op, &[a.clone(), b.clone()])?;
    let info = out.pop().expect("two outputs");
    Ok((out.pop().expect("two outputs"), info))
}
