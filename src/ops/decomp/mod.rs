//! torch.linalg's decompositions and the solvers built on them (issue 11): one node per
//! torch node, each with vjp and jvp rules written with differentiable ops (solve,
//! inv, matmul, ...) so that they can be differentiated again, and a batching rule.
//! The kernels are `Backend::decompose` (faer on the CPU).
//!
//! Note: batch polymorphism. Every op here takes batches of matrices `(.., m, n)` and
//! broadcasts the batch dims of its operands, so its batching rule only moves the vmap
//! dims to the front and calls the op again.
//!
//! Note: errors. torch's checks come first in its order (dtype, rank, squareness,
//! shapes); the numerical failures (singular, not positive-definite) are raised by the
//! forward from the kernel's `info`, as `Error::LinAlg` (torch.linalg.LinAlgError),
//! naming the batch element in batched inputs. The `_ex` variants return `info`
//! instead.

pub mod cholesky;
pub mod cholesky_solve;
pub mod eig;
pub mod householder;
pub mod lstsq;
pub mod lu;
pub mod matrix_exp;
pub mod pinv;
pub mod qr;
pub mod spectral;
pub mod triangular;

use smallvec::SmallVec;

use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::Decomp;
use crate::ops::binary::{compare_scalar, mul, sub, Cmp};
use crate::ops::creation::arange;
use crate::ops::device::{backend, wrap};
use crate::ops::rules::{logical_rank, to_front};
use crate::ops::unary::to_dtype;
use crate::ops::view::{expand, unsqueeze};
use crate::ops::{apply, BatchCtx, Batched, Op};
use crate::shape::broadcast_shapes;
use crate::tensor::Tensor;

pub use cholesky::{cholesky, cholesky_ex};
pub use cholesky_solve::{cholesky_inverse, cholesky_solve};
pub use eig::{eig, eigvals};
pub use householder::householder_product;
pub use lstsq::lstsq;
pub use lu::{det, inv, inv_ex, logdet, slogdet, solve, solve_ex};
pub use matrix_exp::matrix_exp;
pub use pinv::{pinv, pinv_tensors};
pub use qr::qr;
pub use spectral::{eigh, eigvalsh, svd, svdvals};
pub use triangular::solve_triangular;

/// torch's checkFloatingOrComplex (NotImplementedError); `low_precision`: half and
/// bfloat16 are refused too.
pub(crate) fn check_float(a: &Tensor, name: &str, low_precision: bool) -> Result<()> {
    let d = a.dtype();
    if !(d.is_floating_point() || d.is_complex()) {
        return Err(Error::not_implemented(format!(
            "{name}: Expected a floating point or complex tensor as input. Got {}",
            d.scalar_type_name()
        )));
    }
    if low_precision && matches!(d, DType::F16 | DType::BF16) {
        return Err(Error::not_implemented(format!(
            "{name}: Low precision dtypes not supported. Got {}",
            d.scalar_type_name()
        )));
    }
    Ok(())
}

/// torch's checkIsMatrix: at least two dims.
pub(crate) fn check_matrix(a: &Tensor, name: &str, arg: &str) -> Result<()> {
    if a.dim() < 2 {
        return Err(Error::runtime(format!(
            "{name}: The input tensor {arg} must have at least 2 dimensions."
        )));
    }
    Ok(())
}

/// torch's squareCheckInputs.
pub(crate) fn check_square(a: &Tensor, name: &str) -> Result<()> {
    check_matrix(a, name, "A")?;
    let (m, n) = last2(a);
    if m != n {
        return Err(Error::runtime(format!(
            "{name}: A must be batches of square matrices, but they are {m} by {n} matrices"
        )));
    }
    Ok(())
}

pub(crate) fn last2(a: &Tensor) -> (usize, usize) {
    let s = a.shape();
    (s[s.len() - 2], s[s.len() - 1])
}

/// Run `kind` on the batches of matrices `inputs`, their batch dims broadcast first.
pub(crate) fn decompose(inputs: &[Tensor], kind: Decomp) -> Result<Vec<Tensor>> {
    let mut batch = crate::shape::Dims::new();
    for x in inputs {
        batch = broadcast_shapes(&batch, &x.shape()[..x.dim() - 2])?;
    }
    let mut full = Vec::with_capacity(inputs.len());
    for x in inputs {
        let mut shape = batch.to_vec();
        shape.extend_from_slice(&x.shape()[x.dim() - 2..]);
        full.push(if x.shape() == shape.as_slice() {
            x.clone()
        } else {
            expand(x, &shape)?
        });
    }
    let datas: Vec<_> = full.iter().map(|x| x.data()).collect();
    let refs: Vec<&crate::storage::Data> = datas.iter().map(|d| &**d).collect();
    let out = backend(&inputs[0])?.decompose(&refs, kind)?;
    Ok(out.into_iter().map(wrap).collect())
}

/// The first failing matrix of an `info` result (int32, batch shape), as torch names
/// it: `Some((batch element or None for an unbatched input, info))`.
pub(crate) fn first_failure(info: &Tensor) -> Option<(Option<usize>, i32)> {
    let values = info.to_vec::<i32>();
    let batched = info.dim() > 0;
    values
        .iter()
        .position(|&v| v != 0)
        .map(|i| (batched.then_some(i), values[i]))
}

/// `name: (Batch element i): message` (the batch part only for batched inputs).
pub(crate) fn linalg_error(name: &str, element: Option<usize>, message: &str) -> Error {
    let batch = element.map_or(String::new(), |i| format!("(Batch element {i}): "));
    Error::linalg(format!("{name}: {batch}{message}"))
}

/// The lower (`upper` false: entries with `col - row <= k`) or upper (`col - row >= k`)
/// triangle of the last two dims of `x`, zero elsewhere (torch's tril / triu).
pub(crate) fn triangle(x: &Tensor, k: i64, upper: bool) -> Result<Tensor> {
    let (m, n) = last2(x);
    let index = |len: usize| {
        arange(
            Scalar::Int(0),
            Scalar::Int(len as i64),
            Scalar::Int(1),
            None,
        )
    };
    let diff = sub(
        &unsqueeze(&index(n)?, 0)?,
        &unsqueeze(&index(m)?, 1)?,
        Scalar::Int(1),
    )?;
    let keep = compare_scalar(&diff, Scalar::Int(k), if upper { Cmp::Ge } else { Cmp::Le })?;
    mul(x, &to_dtype(&keep, x.dtype())?)
}

/// The batching rule of every op here (see Note: batch polymorphism). `core[i]`: the
/// number of trailing matrix (2) or vector (1) dims of input `i`; batched inputs get
/// size-1 dims after the vmap dim so that all batch dims line up from the right.
pub(crate) fn batch_front_all<O: Op + Clone>(
    op: &O,
    ctx: &BatchCtx,
    core: &[usize],
) -> Result<Batched> {
    let target = ctx
        .inputs
        .iter()
        .zip(core)
        .map(|((x, b), c)| logical_rank(x, *b).saturating_sub(*c))
        .max()
        .unwrap_or(0);
    let mut args: SmallVec<[Tensor; 2]> = SmallVec::new();
    for ((x, b), c) in ctx.inputs.iter().zip(core) {
        let mut y = to_front(x, *b)?;
        if b.is_some() {
            for _ in logical_rank(x, *b).saturating_sub(*c)..target {
                y = unsqueeze(&y, 1)?;
            }
        }
        args.push(y);
    }
    let batched = ctx.inputs.iter().any(|(_, b)| b.is_some());
    let out = apply(op.clone(), &args)?;
    Ok(out.into_iter().map(|o| (o, batched.then_some(0))).collect())
}
