//! In-place ops. Each computes its new value with the out-of-place op's forward, writes
//! it into the destination, bumps the version counter and rebases the destination's
//! history (CopySlices for views: see Note: views and in-place in autograd/view.rs).

use smallvec::SmallVec;

use crate::autograd::grad_mode;
use crate::autograd::view::rebase_history_on_view;
use crate::dtype::{Category, DType, Scalar};
use crate::error::{Error, Result};
use crate::ops::binary::{Add, Arithmetic, Div, Mul, ScalarOp, ScalarOpKind, Sub};
use crate::ops::device::write_into;
use crate::ops::rules::batch_broadcast;
use crate::ops::{
    build_node, recording, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::tensor::{CreationMeta, Tensor};

/// torch's checks before any in-place write (spec §6.2, §6.3, §7.3).
/// The inference-tensor check is not here: torch makes it at the version bump, after the
/// write (see `check_inference_write`).
pub(crate) fn check_inplace(t: &Tensor) -> Result<()> {
    if !recording() {
        return Ok(());
    }
    if let Some(info) = t.view_info() {
        let requires = t.requires_grad();
        match info.creation {
            CreationMeta::InferenceMode if requires => {
                return Err(Error::runtime("A view was created in inference mode and is being modified inplace in normal mode. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the inference mode block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."));
            }
            CreationMeta::MultipleOutputs(name, nr) if requires => {
                return Err(Error::runtime(format!(
                    "Output {nr} of {name}Backward0 is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one."
                ).replacen(&format!("of {name}Backward0"), &format!("of {name}"), 1)));
            }
            CreationMeta::CustomFunction(nr, multi) if requires => {
                return Err(custom_function_view_error(t, nr, multi));
            }
            CreationMeta::NoGradMode if requires => {
                return Err(Error::runtime("A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."));
            }
            _ => {}
        }
        if info.base.requires_grad() && info.base.is_leaf() {
            return Err(Error::runtime(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.",
            ));
        }
        return Ok(());
    }
    if t.requires_grad() && t.is_leaf() {
        return Err(Error::runtime(
            "a leaf Variable that requires grad is being used in an in-place operation.",
        ));
    }
    Ok(())
}

/// An inference tensor updated in place outside inference mode: torch refuses when it
/// bumps the version counter, i.e. after the kernel wrote the new values and before any
/// history is recorded, so the data does change (issue 7 §6).
fn check_inference_write(t: &Tensor) -> Result<()> {
    if t.is_inference() && !grad_mode::is_inference_mode() {
        return Err(Error::runtime("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details."));
    }
    Ok(())
}

/// torch's refusal to modify in place a view a custom Function returned (issue 7 §6).
fn custom_function_view_error(t: &Tensor, nr: usize, multi: bool) -> Error {
    let node = t.grad_fn();
    let name = node.as_ref().map_or("", |n| n.name());
    let name = name.strip_suffix("Backward").unwrap_or(name);
    let why = if multi {
        "This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one."
    } else {
        "This view was created inside a custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would override the custom backward associated with the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function."
    };
    Error::runtime(format!(
        "Output {nr} of {name} is a view and is being modified inplace. {why}"
    ))
}

/// torch refuses in-place results that would need a lossy category change.
fn check_cast(result: DType, dst: DType) -> Result<()> {
    if result.category() > dst.category() {
        return Err(Error::runtime(format!(
            "result type {} can't be cast to the desired output type {}",
            result.scalar_type_name(),
            dst.scalar_type_name()
        )));
    }
    Ok(())
}

/// torch's refusal, under vmap, of an in-place op (`op`: the name its message gives)
/// whose `self` (`inputs[0]`) is not batched at the innermost level another operand is
/// batched at: the write would need more elements than `self` has.
pub fn check_vmap_inplace(inputs: &[Tensor], op: &str) -> Result<()> {
    let innermost = inputs
        .iter()
        .filter_map(|t| t.batch_info())
        .map(|b| b.level)
        .max();
    let Some(level) = innermost else {
        return Ok(());
    };
    if crate::functorch::batched::is_batched_at(&inputs[0], level) {
        return Ok(());
    }
    Err(Error::runtime(format!(
        "vmap: {op}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args that has more elements than `self`. This happened due to `other` being vmapped over but `self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of {op}. If said operator is being called inside the PyTorch framework, please file a bug report instead."
    )))
}

/// `copy_` as the Python API calls it (`t.copy_(src)`, `t[key] = src`): refused under
/// vmap when `src` is batched and `t` is not, as torch does ("inplace arithmetic").
pub fn copy_checked(t: &Tensor, src: &Tensor) -> Result<()> {
    check_vmap_inplace(&[t.clone(), src.clone()], "inplace arithmetic")?;
    copy_(t, src)
}

/// Apply `op` in place on `inputs[0]`.
pub fn apply_inplace<O: Op>(op: O, inputs: &[Tensor]) -> Result<()> {
    let mut range = crate::profiler::op_range(op.name(), true, inputs);
    let dst = &inputs[0];
    check_inplace(dst)?;
    let batched = crate::functorch::batched::any_batched(inputs);
    // Written straight into dst when the op can (its result then has dst's shape and
    // dtype); else computed out of place, checked, and copied in below.
    let value = if !batched && op.writes_in_place(inputs) {
        None
    } else {
        let mut result = crate::ops::forward(&op, inputs)?;
        let value = result.swap_remove(0);
        check_cast(value.dtype(), dst.dtype())?;
        check_fits(&value, dst)?;
        Some(value)
    };
    let needs: SmallVec<[bool; 4]> = inputs
        .iter()
        .map(|t| recording() && t.requires_grad())
        .collect();
    let record = needs.contains(&true);
    // A rule that reads input 0 must see its value from before the write.
    let saves_self = record
        && op
            .save(&needs)
            .iter()
            .any(|s| matches!(s, Some(SaveRef::Input(0))));
    let old_self = if saves_self {
        Some(crate::ops::unary::clone(dst)?)
    } else {
        None
    };

    let fw = if crate::autograd::forward_ad::active() {
        crate::autograd::forward_ad::before_inplace(inputs)?
    } else {
        None
    };

    crate::autograd::mutation::before_write(dst)?;
    match &value {
        None => op.write_in_place(inputs)?,
        Some(value) if batched => crate::functorch::batched::write(dst, value)?,
        Some(value) => write_into(dst, value)?,
    }
    check_inference_write(dst)?;
    dst.bump_version();

    if record {
        let node = build_node(
            Box::new(op),
            inputs,
            std::slice::from_ref(dst),
            &needs,
            old_self.as_ref(),
        )?;
        if let Some(range) = &mut range {
            range.set_sequence_nr(node.sequence_nr, 0);
        }
        match dst.view_base() {
            Some(base) => rebase_history_on_view(&base, dst, node.clone()),
            None => dst.set_grad_fn(node.clone(), 0),
        }
        if let crate::autograd::node::NodeKind::Op(op) = &node.kind {
            crate::ops::save_outputs(&node, op.as_ref(), &needs, std::slice::from_ref(dst))?;
            if let Some(fw) = fw {
                crate::autograd::forward_ad::after_inplace(op.as_ref(), inputs, fw)?;
            }
        }
    } else if let Some(fw) = fw {
        crate::autograd::forward_ad::after_inplace(&op, inputs, fw)?;
    }
    Ok(())
}

/// torch's refusal of an in-place write whose operand shares some of the destination's
/// memory (`x[1:].add_(x[:-1])`, `x.mul_(x[1])`): elements would be read after being
/// written. The same memory exactly (`x.add_(x)`) passes when `same_ok` (elementwise
/// ops; index_add_ refuses it), and so do layouts that are not dense (torch's "too hard
/// to tell").
pub(crate) fn check_no_overlap(dst: &Tensor, other: &Tensor, same_ok: bool) -> Result<()> {
    let (d, o) = (dst.data(), other.data());
    if !std::sync::Arc::ptr_eq(d.storage(), o.storage()) {
        return Ok(());
    }
    let (ld, lo) = (d.layout(), o.layout());
    let dense = |l: &crate::layout::Layout| l.numel() > 0 && l.is_contiguous();
    if !dense(ld) || !dense(lo) {
        return Ok(());
    }
    let bytes = |l: &crate::layout::Layout, dtype: crate::dtype::DType| {
        let start = l.offset * dtype.itemsize();
        (start, start + l.numel() * dtype.itemsize())
    };
    let ((d0, d1), (o0, o1)) = (bytes(ld, d.dtype()), bytes(lo, o.dtype()));
    let same = d0 == o0 && d1 == o1 && ld.strides == lo.strides;
    if d0 < o1 && o0 < d1 && !(same && same_ok) {
        return Err(Error::runtime(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.",
        ));
    }
    Ok(())
}

pub fn add_(t: &Tensor, other: &Tensor, alpha: Scalar) -> Result<()> {
    check_no_overlap(t, other, true)?;
    apply_inplace(Add { alpha }, &[t.clone(), other.clone()])
}
pub fn sub_(t: &Tensor, other: &Tensor, alpha: Scalar) -> Result<()> {
    check_no_overlap(t, other, true)?;
    apply_inplace(Sub { alpha }, &[t.clone(), other.clone()])
}
pub fn mul_(t: &Tensor, other: &Tensor) -> Result<()> {
    check_no_overlap(t, other, true)?;
    apply_inplace(Mul, &[t.clone(), other.clone()])
}
pub fn div_(t: &Tensor, other: &Tensor) -> Result<()> {
    check_no_overlap(t, other, true)?;
    apply_inplace(Div, &[t.clone(), other.clone()])
}
/// `t.pow_(exponent)` with a tensor exponent.
pub fn pow_(t: &Tensor, exponent: &Tensor) -> Result<()> {
    check_no_overlap(t, exponent, true)?;
    apply_inplace(crate::ops::binary::Pow, &[t.clone(), exponent.clone()])
}
/// `t ⊕= s` for a Python number (recorded like torch, with a wrapped-number tensor).
pub fn scalar_(t: &Tensor, kind: Arithmetic, s: Scalar) -> Result<()> {
    let w = crate::ops::binary::wrapped_scalar(t, s);
    match kind {
        Arithmetic::Add => add_(t, &w, Scalar::Int(1)),
        Arithmetic::Sub => sub_(t, &w, Scalar::Int(1)),
        Arithmetic::Mul => mul_(t, &w),
        Arithmetic::Div => div_(t, &w),
        Arithmetic::Pow => apply_inplace(
            ScalarOp {
                kind: ScalarOpKind::Pow,
                scalar: s,
            },
            std::slice::from_ref(t),
        ),
    }
}
/// `exp_`, `sin_`, `relu_`, ...: a unary op written back into its input.
pub fn unary_<O: Op>(op: O, t: &Tensor) -> Result<()> {
    apply_inplace(op, std::slice::from_ref(t))
}

/// `copy_(src)`: the gradient goes to `src` (broadcast-summed and cast by the engine).
pub struct Copy;
impl Op for Copy {
    fn name(&self) -> &'static str {
        "CopyBackwards"
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let (dst, src) = (&inputs[0], &inputs[1]);
        let expanded = crate::ops::view::expand(&src.alias_detached(), &dst.shape())?;
        // Of dst's dtype already, the source view itself is the value: the write reads
        // it directly (through a temporary only when it shares dst's storage).
        if expanded.dtype() == dst.dtype() {
            return Ok(smallvec::smallvec![expanded]);
        }
        Ok(smallvec::smallvec![crate::ops::device::cast(
            &expanded,
            dst.dtype()
        )?])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        let gs = if ctx.needs(0) {
            Some(crate::ops::creation::zeros_like(&g)?)
        } else {
            None
        };
        Ok(smallvec::smallvec![gs, ctx.needs(1).then_some(g)])
    }
    /// The source's tangent, expanded and cast like the value; the old value's is lost.
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let t = ctx.tangent(1).cloned();
        Ok(smallvec::smallvec![t
            .map(|t| crate::ops::rules::fit(t, &ctx.outputs[0]))
            .transpose()?])
    }
    /// The source broadcast against the destination's examples, in its dtype.
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let dtype = ctx.inputs[0].0.dtype();
        batch_broadcast(ctx, |args| {
            let shape = crate::shape::broadcast_shapes(&args[0].shape(), &args[1].shape())?;
            let src = crate::ops::view::expand(&args[1], &shape)?;
            crate::ops::unary::to_dtype(&src, dtype)
        })
    }
}
pub fn copy_(t: &Tensor, src: &Tensor) -> Result<()> {
    if src.dtype().is_complex() && !t.dtype().is_complex() {
        crate::autograd::warnings::warn(
            crate::autograd::warnings::WarningKind::User,
            "Casting complex values to real discards the imaginary part",
        );
    }
    apply_inplace(Copy, &[t.clone(), src.clone()])
}

/// `fill_(value)` / `zero_()`: the old value's gradient is zero.
pub struct Fill {
    pub value: Scalar,
    pub zero: bool,
}
impl Op for Fill {
    fn name(&self) -> &'static str {
        if self.zero {
            "ZeroBackward0"
        } else {
            "FillBackward0"
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        let t = &inputs[0];
        if t.dtype().category() < Category::Complex {
            if let Scalar::Complex(_) = self.value {
                return Err(Error::runtime(format!(
                    "value cannot be converted to type {} without overflow",
                    t.dtype().name()
                )));
            }
        }
        // One element, expanded: the write fills dst with it (kernels::copy::write_into).
        let one = Tensor::full(&[], self.value, t.dtype())?;
        Ok(smallvec::smallvec![crate::ops::view::expand(
            &one,
            &t.shape()
        )?])
    }
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        Ok(smallvec::smallvec![Some(crate::ops::creation::zeros_like(
            &ctx.grad(0)?
        )?)])
    }
    /// The result is a constant: a zero tangent.
    fn jvp(&self, _ctx: &JvpCtx) -> Result<Tangents> {
        Ok(smallvec::smallvec![None])
    }
    /// The same value for every example (the dispatcher expands it).
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        let (x, b) = &ctx.inputs[0];
        let example: crate::shape::Dims = x
            .shape()
            .iter()
            .enumerate()
            .filter(|&(i, _)| Some(i) != *b)
            .map(|(_, &s)| s)
            .collect();
        let one = Tensor::full(&example, self.value, x.dtype())?;
        Ok(smallvec::smallvec![(one, None)])
    }
}
pub fn fill_(t: &Tensor, value: Scalar) -> Result<()> {
    apply_inplace(Fill { value, zero: false }, std::slice::from_ref(t))
}
pub fn zero_(t: &Tensor) -> Result<()> {
    apply_inplace(
        Fill {
            value: Scalar::Int(0),
            zero: true,
        },
        std::slice::from_ref(t),
    )
}

/// `x.eq_(other)` and kin: x's elements become 1 where the comparison holds and 0
/// elsewhere, in x's dtype. torch records EqBackward0 for a number operand (`scalar`)
/// and EqBackward1 for a tensor; both give zero gradients and a zero tangent.
pub struct CompareInPlace {
    pub cmp: crate::ops::binary::Cmp,
    pub scalar: Option<Scalar>,
}
impl Op for CompareInPlace {
    fn name(&self) -> &'static str {
        use crate::ops::binary::Cmp::*;
        match (self.cmp, self.scalar.is_some()) {
            (Eq, true) => "EqBackward0",
            (Eq, false) => "EqBackward1",
            (Ne, true) => "NeBackward0",
            (Ne, false) => "NeBackward1",
            (Lt, true) => "LtBackward0",
            (Lt, false) => "LtBackward1",
            (Le, true) => "LeBackward0",
            (Le, false) => "LeBackward1",
            (Gt, true) => "GtBackward0",
            (Gt, false) => "GtBackward1",
            (Ge, true) => "GeBackward0",
            (Ge, false) => "GeBackward1",
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        use crate::ops::binary::{compare, compare_scalar};
        let holds = match self.scalar {
            Some(s) => compare_scalar(&inputs[0], s, self.cmp)?,
            None => compare(&inputs[0], &inputs[1], self.cmp)?,
        };
        Ok(smallvec::smallvec![holds])
    }
    /// Zeros shaped like the gradient (the engine sums an operand's down to its shape).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        (0..ctx.inputs.len())
            .map(|i| {
                ctx.needs(i)
                    .then(|| crate::ops::creation::zeros_like(&g))
                    .transpose()
            })
            .collect()
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        let zero = crate::ops::creation::zeros_like(&ctx.outputs[0])?;
        Ok(smallvec::smallvec![Some(zero)])
    }
    fn batch(&self, ctx: &BatchCtx) -> Result<Batched> {
        batch_broadcast(ctx, |args| Ok(self.forward(args)?.swap_remove(0)))
    }
}
pub fn compare_(t: &Tensor, other: &Tensor, cmp: crate::ops::binary::Cmp) -> Result<()> {
    check_no_overlap(t, other, true)?;
    let op = CompareInPlace { cmp, scalar: None };
    apply_inplace(op, &[t.clone(), other.clone()])
}
pub fn compare_scalar_(t: &Tensor, s: Scalar, cmp: crate::ops::binary::Cmp) -> Result<()> {
    let op = CompareInPlace {
        cmp,
        scalar: Some(s),
    };
    apply_inplace(op, std::slice::from_ref(t))
}

/// Writes `value` into `dst` as torch's in-place ops that have no derivative do
/// (logical_and_, bitwise_or_, ...): torch records nothing for them and makes no leaf
/// check, so dst keeps its history and tangent; only the version counter moves on.
pub fn write_untracked(dst: &Tensor, value: &Tensor) -> Result<()> {
    check_cast(value.dtype(), dst.dtype())?;
    check_fits(value, dst)?;
    crate::autograd::mutation::before_write(dst)?;
    let pair = [dst.clone(), value.clone()];
    if crate::functorch::batched::any_batched(&pair) {
        check_vmap_inplace(&pair, "inplace arithmetic")?;
        crate::functorch::batched::write(dst, value)?;
    } else {
        write_into(dst, value)?;
    }
    check_inference_write(dst)?;
    dst.bump_version();
    Ok(())
}

/// torch's cast check of `dst.op_(other)`, made before the op runs: for an integer
/// `dst` and a float `other` its message comes before the op's own dtype error.
pub fn check_result_cast(dst: &Tensor, other: &Tensor) -> Result<()> {
    let types = [
        (dst.dtype(), dst.dim() == 0),
        (other.dtype(), other.dim() == 0),
    ];
    check_cast(crate::dtype::result_type(&types, &[]), dst.dtype())
}

/// An in-place result must broadcast to the destination's own shape.
fn check_fits(value: &Tensor, dst: &Tensor) -> Result<()> {
    if value.shape() == dst.shape() {
        return Ok(());
    }
    let b = crate::shape::broadcast_shapes(&value.shape(), &dst.shape())?;
    if b.as_slice() != &*dst.shape() {
        return Err(Error::runtime(format!(
            "output with shape {} doesn't match the broadcast shape {}",
            crate::shape::fmt_dims(&dst.shape()),
            crate::shape::fmt_dims(&b)
        )));
    }
    Ok(())
}
