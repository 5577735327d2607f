//! Matrix products (dot, mv, mm, bmm and torch's matmul dispatch) and the gather /
//! scatter pair used by index-selecting reductions.

use smallvec::{smallvec, SmallVec};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::matmul::MatRef;
use crate::ops::binary::mul;
use crate::ops::device::{backend, cast, wrap};
use crate::ops::rules::{
    batch_front, batch_size, bilinear_jvp, front_or_expand, linear_jvp, to_front,
};
use crate::ops::unary::conj;
use crate::ops::view::{
    contiguous, expand, permute, reshape, squeeze, squeeze_product_row, transpose, unsafe_view,
    unsqueeze,
};
use crate::ops::{
    apply1, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, SavedAttr, Tangents, VjpCtx,
};
use crate::shape::{broadcast_shapes, Dims};
use crate::tensor::Tensor;

fn check_same_dtype(a: &Tensor, b: &Tensor) -> Result<()> {
    if a.dtype() != b.dtype() {
        return Err(Error::runtime(format!(
            "expected m1 and m2 to have the same dtype, but got: {} != {}",
            a.dtype().cpp_name(),
            b.dtype().cpp_name()
        )));
    }
    Ok(())
}

fn mat(
    t: &Tensor,
    batch_offsets: &[usize],
    row_dim: Option<usize>,
    col_dim: Option<usize>,
) -> Vec<MatRef> {
    let rs = row_dim.map_or(1, |d| t.strides()[d]);
    let cs = col_dim.map_or(1, |d| t.strides()[d]);
    batch_offsets
        .iter()
        .map(|&o| MatRef { offset: o, rs, cs })
        .collect()
}

/// Storage offsets of each matrix of a (broadcast) batch of matrices.
fn batch_offsets(t: &Tensor, batch: usize) -> Vec<usize> {
    if t.dim() < 3 {
        return vec![t.offset(); batch];
    }
    (0..batch)
        .map(|b| t.offset() + b * t.strides()[0])
        .collect()
}

/// out = a @ b for a: (batch?, m, k), b: (batch?, k, n); either may be a vector
/// (`m`/`n` dims absent). Shapes must already be checked.
fn product(a: &Tensor, b: &Tensor, out_shape: &[usize]) -> Result<Tensor> {
    check_same_dtype(a, b)?;
    if a.dtype() == DType::BF16 {
        // Computed in float32 and rounded once, as torch's bfloat16 products are: the
        // kernel's plain loop added in bfloat16 and lost tens of ulps where terms cancel.
        let wide = product(&cast(a, DType::F32)?, &cast(b, DType::F32)?, out_shape)?;
        return cast(&wide, DType::BF16);
    }
    let batch = if a.dim() == 3 { a.shape()[0] } else { 1 };
    let (m, k, a_row, a_col) = match a.dim() {
        1 => (1, a.shape()[0], None, Some(0)),
        2 => (a.shape()[0], a.shape()[1], Some(0), Some(1)),
        _ => (a.shape()[1], a.shape()[2], Some(1), Some(2)),
    };
    let (n, b_row, b_col) = match b.dim() {
        1 => (1, Some(0), None),
        2 => (b.shape()[1], Some(0), Some(1)),
        _ => (b.shape()[2], Some(1), Some(2)),
    };
    let am = mat(a, &batch_offsets(a, batch), a_row, a_col);
    let bm = mat(b, &batch_offsets(b, batch), b_row, b_col);
    let out = backend(a)?.matmul(&a.data(), &b.data(), &am, &bm, [m, k, n], out_shape)?;
    Ok(wrap(out))
}

fn shape_error(a: &Tensor, b: &Tensor) -> Error {
    let fmt = |t: &Tensor| {
        t.shape()
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("x")
    };
    Error::runtime(format!(
        "mm: mat1 and mat2 shapes cannot be multiplied ({} and {})",
        fmt(a),
        fmt(b)
    ))
}

/// The conjugate transpose of the last two dims.
pub(crate) fn mh(t: &Tensor) -> Result<Tensor> {
    conj(&transpose(t, -2, -1)?)
}

/// `col_major[i]`: factor `i` is stored column-major (a transposed contiguous matrix, as
/// a Linear layer's `weight.t()`). Its gradient is then computed transposed, so it comes
/// out in the factor's own layout (torch's mm_mat1/mm_mat2_backward) and reaches the
/// parameter without a strided copy.
#[derive(Default)]
pub struct Mm {
    pub col_major: [bool; 2],
}

/// A 2-d matrix laid out as the transpose of a contiguous one (and not also row-major).
fn is_col_major(t: &Tensor) -> bool {
    let (shape, strides) = (t.shape(), t.strides());
    shape.len() == 2 && shape[1] > 1 && strides[0] == 1 && strides[1] == shape[0]
}

/// The gradients of `a @ b`'s factors for output gradient `g`: a's from the saved `b`
/// (when given), b's from the saved `a`. grad_a = g b^H, or (conj(b) g^T)^T for a
/// column-major a; grad_b = a^H g, or (g^T conj(a))^T for a column-major b (torch's
/// mm_mat1/mm_mat2_backward), so each comes out in its factor's own layout.
pub(crate) fn mm_factor_grads(
    g: &Tensor,
    a: Option<&Tensor>,
    b: Option<&Tensor>,
    col_major: [bool; 2],
) -> Result<(Option<Tensor>, Option<Tensor>)> {
    let ga = match b {
        None => None,
        Some(b) if col_major[0] => Some(transpose(&mm(&conj(b)?, &transpose(g, 0, 1)?)?, 0, 1)?),
        Some(b) => Some(mm(g, &mh(b)?)?),
    };
    let gb = match a {
        None => None,
        Some(a) if col_major[1] => Some(transpose(&mm(&transpose(g, 0, 1)?, &conj(a)?)?, 0, 1)?),
        Some(a) => Some(mm(&mh(a)?, g)?),
    };
    Ok((ga, gb))
}

/// Whether each of mm's factors is column-major (see `Mm`).
pub(crate) fn col_major_factors(a: &Tensor, b: &Tensor) -> [bool; 2] {
    [is_col_major(a), is_col_major(b)]
}

impl Op for Mm {
    fn name(&self) -> &'static str {
        "MmBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self", SavedAttr::Slot(0)), ("mat2", SavedAttr::Slot(1))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (a, b) = (&inputs[0], &inputs[1]);
        if a.dim() != 2 {
            return Err(Error::runtime("self must be a matrix"));
        }
        if b.dim() != 2 {
            return Err(Error::runtime("mat2 must be a matrix"));
        }
        if a.shape()[1] != b.shape()[0] {
            return Err(shape_error(a, b));
        }
        Ok(smallvec![product(a, b, &[a.shape()[0], b.shape()[1]])?])
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            needs[1].then_some(SaveRef::Input(0)),
            needs[0].then_some(SaveRef::Input(1))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let a = ctx.needs(1).then(|| ctx.saved(0)).transpose()?;
        let b = ctx.needs(0).then(|| ctx.saved(1)).transpose()?;
        let (ga, gb) = mm_factor_grads(&g, a, b, self.col_major)?;
        Ok(smallvec![ga, gb])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        bilinear_jvp(ctx, mm)
    }
    /// One GEMM whatever is batched: a batched left factor folds into the rows, a
    /// batched right factor into the columns (`a @ [b_1 .. b_B]`).
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let ((a, ba), (b, bb)) = (&ctx.inputs[0], &ctx.inputs[1]);
        match (ba, bb) {
            (None, Some(_)) => {
                let bf = to_front(b, *bb)?; // [B, k, m]
                let (nb, k, m) = (bf.shape()[0], bf.shape()[1], bf.shape()[2]);
                let cols = reshape(&permute(&bf, &[1, 0, 2])?, &[k, nb * m])?;
                let out = reshape(&mm(a, &cols)?, &[a.shape()[0], nb, m])?;
                Ok(smallvec![(out, Some(1))])
            }
            _ => batch_front(ctx, |a| matmul(&a[0], &a[1])),
        }
    }
}
pub fn mm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let col_major = col_major_factors(a, b);
    apply1(Mm { col_major }, &[a.clone(), b.clone()])
}

pub struct Bmm;
impl Op for Bmm {
    fn name(&self) -> &'static str {
        "BmmBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self", SavedAttr::Slot(0)), ("mat2", SavedAttr::Slot(1))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (a, b) = (&inputs[0], &inputs[1]);
        if a.dim() != 3 {
            return Err(Error::runtime("batch1 must be a 3D tensor"));
        }
        if b.dim() != 3 {
            return Err(Error::runtime("batch2 must be a 3D tensor"));
        }
        if a.shape()[0] != b.shape()[0] || a.shape()[2] != b.shape()[1] {
            return Err(Error::runtime(format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                a.shape()[0],
                a.shape()[2],
                b.shape()[0],
                b.shape()[1]
            )));
        }
        Ok(smallvec![product(
            a,
            b,
            &[a.shape()[0], a.shape()[1], b.shape()[2]]
        )?])
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            needs[1].then_some(SaveRef::Input(0)),
            needs[0].then_some(SaveRef::Input(1))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let ga = if ctx.needs(0) {
            Some(bmm(&g, &mh(ctx.saved(1)?)?)?)
        } else {
            None
        };
        let gb = if ctx.needs(1) {
            Some(bmm(&mh(ctx.saved(0)?)?, &g)?)
        } else {
            None
        };
        Ok(smallvec![ga, gb])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        bilinear_jvp(ctx, bmm)
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_front(ctx, |a| matmul(&a[0], &a[1]))
    }
}
pub fn bmm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    apply1(Bmm, &[a.clone(), b.clone()])
}

pub struct Mv;
impl Op for Mv {
    fn name(&self) -> &'static str {
        "MvBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self", SavedAttr::Slot(0)), ("vec", SavedAttr::Slot(1))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (a, b) = (&inputs[0], &inputs[1]);
        if a.dim() != 2 || b.dim() != 1 {
            return Err(Error::runtime(format!(
                "vector + matrix @ vector expected, got {}, {}, {}",
                1,
                a.dim(),
                b.dim()
            )));
        }
        if a.shape()[1] != b.shape()[0] {
            return Err(Error::runtime(format!(
                "size mismatch, got input ({}), mat ({}x{}), vec ({})",
                a.shape()[0],
                a.shape()[0],
                a.shape()[1],
                b.shape()[0]
            )));
        }
        Ok(smallvec![product(a, b, &[a.shape()[0]])?])
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            needs[1].then_some(SaveRef::Input(0)),
            needs[0].then_some(SaveRef::Input(1))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let ga = if ctx.needs(0) {
            Some(mul(
                &unsqueeze(&g, 1)?,
                &unsqueeze(&conj(ctx.saved(1)?)?, 0)?,
            )?)
        } else {
            None
        };
        let gb = if ctx.needs(1) {
            Some(mv(&mh(ctx.saved(0)?)?, &g)?)
        } else {
            None
        };
        Ok(smallvec![ga, gb])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        bilinear_jvp(ctx, mv)
    }
    /// A GEMM: batched vectors are the rows of `V @ A^T`, batched matrices fold into the
    /// rows of `A @ v`, both batched is a bmm.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (ba, bv) = (ctx.inputs[0].1, ctx.inputs[1].1);
        batch_front(ctx, |x| match (ba, bv) {
            (None, Some(_)) => mm(&x[1], &transpose(&x[0], 0, 1)?),
            (Some(_), None) => matmul(&x[0], &x[1]),
            _ => squeeze(&bmm(&x[0], &unsqueeze(&x[1], -1)?)?, Some(&[-1])),
        })
    }
}
pub fn mv(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    apply1(Mv, &[a.clone(), b.clone()])
}

pub struct Dot;
impl Op for Dot {
    fn name(&self) -> &'static str {
        "DotBackward0"
    }
    fn saved_attrs(&self) -> Vec<(&'static str, SavedAttr)> {
        vec![("self", SavedAttr::Slot(0)), ("tensor", SavedAttr::Slot(1))]
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (a, b) = (&inputs[0], &inputs[1]);
        if a.dim() != 1 || b.dim() != 1 {
            return Err(Error::runtime(format!(
                "1D tensors expected, but got {}D and {}D tensors",
                a.dim(),
                b.dim()
            )));
        }
        if a.shape()[0] != b.shape()[0] {
            return Err(Error::runtime(format!(
                "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                a.shape()[0], b.shape()[0], a.shape()[0], b.shape()[0]
            )));
        }
        Ok(smallvec![product(a, b, &[])?])
    }
    fn save(&self, needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![
            needs[1].then_some(SaveRef::Input(0)),
            needs[0].then_some(SaveRef::Input(1))
        ]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let ga = if ctx.needs(0) {
            Some(mul(&g, &conj(ctx.saved(1)?)?)?)
        } else {
            None
        };
        let gb = if ctx.needs(1) {
            Some(mul(&g, &conj(ctx.saved(0)?)?)?)
        } else {
            None
        };
        Ok(smallvec![ga, gb])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        bilinear_jvp(ctx, dot)
    }
    /// A matrix-vector product when one side is batched, a row-wise sum when both are.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (ba, bb) = (ctx.inputs[0].1, ctx.inputs[1].1);
        batch_front(ctx, |x| match (ba, bb) {
            (Some(_), None) => mv(&x[0], &x[1]),
            (None, Some(_)) => mv(&x[1], &x[0]),
            _ => crate::ops::reduce::sum(&mul(&x[0], &x[1])?, Some(&[-1]), false, None),
        })
    }
}
pub fn dot(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    apply1(Dot, &[a.clone(), b.clone()])
}

/// torch.matmul: picks dot / mv / mm / bmm by operand ranks, broadcasting batch dims.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (da, db) = (a.dim(), b.dim());
    if da == 0 || db == 0 {
        return Err(Error::runtime(format!(
            "both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )));
    }
    match (da, db) {
        (1, 1) => dot(a, b),
        (2, 1) => mv(a, b),
        (1, 2) => squeeze_product_row(&mm(&unsqueeze(a, 0)?, b)?),
        (2, 2) => mm(a, b),
        (_, 1) | (_, 2) if da >= 3 => {
            // Fold the batch into the rows of one mm.
            let k = a.shape()[da - 1];
            if b.shape()[0] != k {
                return Err(shape_error(
                    &reshape(a, &[a.numel() / k.max(1), k]).unwrap_or(a.clone()),
                    b,
                ));
            }
            let rows: usize = a.shape()[..da - 1].iter().product();
            let a2 = reshape(a, &[rows, k])?;
            let b2 = if db == 1 { unsqueeze(b, 1)? } else { b.clone() };
            let out = mm(&a2, &b2)?;
            let mut shape: Dims = a.shape()[..da - 1].into();
            if db == 2 {
                shape.push(b.shape()[1]);
            }
            unsafe_view(&out, &shape)
        }
        (1, _) | (2, _) if a.requires_grad() => {
            // As torch when `a` needs a gradient: b's batch folded into the rows of one
            // product with `a`, transposed back (its gradient is then one product, not a
            // sum over expanded copies of `a`); a matrix result is made contiguous.
            let bt = transpose(b, -1, -2)?;
            let rows: usize = bt.shape()[..db - 1].iter().product();
            let folded = reshape(&bt, &[rows, bt.shape()[db - 1]])?;
            let mut shape: Dims = bt.shape()[..db - 1].into();
            if da == 1 {
                return unsafe_view(&mv(&folded, a)?, &shape);
            }
            shape.push(a.shape()[0]);
            let out = unsafe_view(&mm(&folded, &transpose(a, 0, 1)?)?, &shape)?;
            contiguous(&transpose(&out, -1, -2)?)
        }
        (3, 3) if a.shape()[0] != b.shape()[0] && a.shape()[0] == 1 && a.requires_grad() => {
            // torch drops a grad-requiring batch of one rather than expand it.
            matmul(&squeeze(a, Some(&[0]))?, b)
        }
        (3, 3) if a.shape()[0] != b.shape()[0] && b.shape()[0] == 1 && b.requires_grad() => {
            matmul(a, &squeeze(b, Some(&[0]))?)
        }
        _ => {
            // General batched case: broadcast batch dims, then one bmm.
            let a2 = if da == 1 { unsqueeze(a, 0)? } else { a.clone() };
            let b2 = if db == 1 { unsqueeze(b, 1)? } else { b.clone() };
            let (n_a, n_b) = (a2.dim(), b2.dim());
            let (m, k) = (a2.shape()[n_a - 2], a2.shape()[n_a - 1]);
            let (k2, n) = (b2.shape()[n_b - 2], b2.shape()[n_b - 1]);
            // As torch: the batch dims broadcast first, then bmm checks the inner sizes
            // of the expanded operands.
            let batch = broadcast_shapes(&a2.shape()[..n_a - 2], &b2.shape()[..n_b - 2])?;
            let nb: usize = batch.iter().product();
            if k != k2 {
                return Err(Error::runtime(format!(
                    "Expected size for first two dimensions of batch2 tensor to be: [{nb}, {k}] but got: [{nb}, {k2}]."
                )));
            }
            let mut ashape = batch.clone();
            ashape.extend([m, k]);
            let mut bshape = batch.clone();
            bshape.extend([k, n]);
            let a3 = reshape(&expand(&a2, &ashape)?, &[nb, m, k])?;
            let b3 = reshape(&expand(&b2, &bshape)?, &[nb, k, n])?;
            let out = bmm(&a3, &b3)?;
            let mut shape = batch;
            if da > 1 {
                shape.push(m);
            }
            if db > 1 {
                shape.push(n);
            }
            unsafe_view(&out, &shape)
        }
    }
}

// ---------------------------------------------------------------- gather / scatter

/// zeros(shape) with `src` scattered along `dim` at `index` (torch's
/// value_selecting_reduction_backward); its adjoint is `gather`.
#[derive(Clone)]
pub struct ScatterIntoZeros {
    pub dim: usize,
    pub shape: Dims,
}
impl Op for ScatterIntoZeros {
    fn name(&self) -> &'static str {
        "ScatterBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (src, idx) = (&inputs[0], &inputs[1]);
        let out = backend(src)?.scatter_add(&self.shape, self.dim, &idx.data(), &src.data())?;
        Ok(smallvec![wrap(out)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec![
            Some(gather(&ctx.grad(0)?, self.dim, ctx.saved(0)?)?),
            None
        ])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| {
            apply1(self.clone(), &[t.clone(), ctx.primals[1].clone()])
        })
    }
    /// Source and index batched alike (in front), scattered one dim further in.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let batch = batch_size(ctx);
        let src = front_or_expand(&ctx.inputs[0].0, ctx.inputs[0].1, batch)?;
        let idx = front_or_expand(&ctx.inputs[1].0, ctx.inputs[1].1, batch)?;
        let shape: Dims = std::iter::once(batch)
            .chain(self.shape.iter().copied())
            .collect();
        Ok(smallvec![(
            scatter_into_zeros(&src, self.dim + 1, &idx, &shape)?,
            Some(0)
        )])
    }
}
pub fn scatter_into_zeros(
    src: &Tensor,
    dim: usize,
    index: &Tensor,
    shape: &[usize],
) -> Result<Tensor> {
    apply1(
        ScatterIntoZeros {
            dim,
            shape: shape.into(),
        },
        &[src.clone(), index.clone()],
    )
}

pub struct Gather {
    pub dim: usize,
}
impl Op for Gather {
    fn name(&self) -> &'static str {
        "GatherBackward0"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (src, idx) = (&inputs[0], &inputs[1]);
        let out = backend(src)?.gather(&src.data(), self.dim, &idx.data())?;
        Ok(smallvec![wrap(out)])
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![Some(SaveRef::Input(1))]
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let shape = ctx.inputs[0].shape.clone();
        Ok(smallvec![
            Some(scatter_into_zeros(
                &ctx.grad(0)?,
                self.dim,
                ctx.saved(0)?,
                &shape
            )?),
            None
        ])
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        linear_jvp(ctx, |t| gather(t, self.dim, &ctx.primals[1]))
    }
    /// Source and index batched alike (in front), gathered one dim further in.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let batch = batch_size(ctx);
        let src = front_or_expand(&ctx.inputs[0].0, ctx.inputs[0].1, batch)?;
        let idx = front_or_expand(&ctx.inputs[1].0, ctx.inputs[1].1, batch)?;
        Ok(smallvec![(gather(&src, self.dim + 1, &idx)?, Some(0))])
    }
}
pub fn gather(src: &Tensor, dim: usize, index: &Tensor) -> Result<Tensor> {
    apply1(Gather { dim }, &[src.clone(), index.clone()])
}
