//! AccumulateGrad: adding a gradient into a leaf's `.grad`, with torch's layout rules
//! (spec §5): a new `.grad` copies the parameter's strides when those are dense,
//! else it is row-major; an existing `.grad` is added to in place (or replaced by a
//! differentiable sum under create_graph).

use crate::autograd::warnings::{warn, WarningKind};
use crate::error::Result;
use crate::layout::Layout;
use crate::ops::device::write_into;
use crate::storage::Storage;
use crate::tensor::Tensor;

/// Strides a fresh `.grad` for `param` gets (rules 1 and 2).
pub fn grad_layout_for(param: &Tensor) -> Layout {
    let l = param.layout();
    if l.is_non_overlapping_and_dense() {
        Layout {
            shape: l.shape.clone(),
            strides: l.dense_strides_like(),
            offset: 0,
        }
    } else {
        Layout::contiguous(&l.shape)
    }
}

fn obeys_layout_contract(grad: &Tensor, param: &Tensor) -> bool {
    if grad.numel() <= 1 {
        return true;
    }
    let expected = grad_layout_for(param);
    grad.shape()
        .iter()
        .zip(grad.strides().iter())
        .zip(expected.strides.iter())
        .all(|((&n, &g), &e)| n == 1 || g == e)
}

/// `grad` laid out for `param`, without history: the incoming tensor itself when nobody
/// else holds it and its layout already fits (torch "steals" it too), else a copy.
fn copy_for(param: &Tensor, grad: Tensor) -> Result<Tensor> {
    let layout = grad_layout_for(param);
    if grad.is_uniquely_owned()
        && !grad.requires_grad()
        && grad.dtype() == param.dtype()
        && grad.strides() == layout.strides
        && grad.offset() == 0
    {
        return Ok(grad);
    }
    let storage = Storage::zeros(grad.dtype(), layout.storage_extent()?.max(layout.numel()))?;
    let out = Tensor::from_storage(storage, layout)?;
    write_into(&out, &grad)?;
    Ok(out)
}

/// Add `grad` into `param.grad`.
///
/// Lock discipline (see `engine` module docs): the leaf's metadata lock is only held to
/// read `.grad` and to publish the result, never while an op runs (ops lock the metadata
/// of their operands, which may be `param` itself: `t.backward(t)`).
///
/// Concurrent backward passes into one shared leaf are serialized by the leaf's own
/// accumulation lock, held for the whole update as torch holds AccumulateGrad's mutex:
/// otherwise one pass would read `.grad` while another adds into it in place (a data
/// race). That lock is the one exception to "no lock across an op", and a safe one: it
/// is taken only here, every caller has released the GIL (backward and node calls
/// detach), and nothing below takes it again (hooks run after `accumulate` returns).
/// An update is still published only if `.grad` is the tensor it was computed from, at
/// the version it was read at, so a `.grad` the user replaced meanwhile is added to,
/// never overwritten.
pub fn accumulate(param: &Tensor, grad: Tensor, create_graph: bool) -> Result<()> {
    let _serial = param.accumulation_guard();
    let mut grad = grad;
    loop {
        let old = param.meta().grad.clone();
        match old {
            None => {
                let new = if create_graph && grad.requires_grad() {
                    crate::ops::unary::clone(&grad)?
                } else {
                    copy_for(param, grad)?
                };
                let mut meta = param.meta();
                if meta.grad.is_none() {
                    meta.grad = Some(new);
                    return Ok(());
                }
                // Someone else published first: add to theirs (`new` has grad's values).
                grad = new;
            }
            Some(old) if !create_graph => {
                if !obeys_layout_contract(&old, param) {
                    warn_layout_contract(&old, param);
                }
                let version = old.version();
                let total = {
                    let _no_grad = crate::autograd::grad_mode::NoGradGuard::new();
                    crate::ops::binary::add(&old, &grad)?
                };
                let meta = param.meta();
                if publishable(&meta.grad, &old, version) {
                    // A plain copy (no op, no pool, no Python) may run under the lock.
                    write_into(&old, &total)?;
                    old.bump_version();
                    return Ok(());
                }
            }
            Some(old) => {
                let version = old.version();
                let new = crate::ops::binary::add(&old, &grad)?;
                let mut meta = param.meta();
                if publishable(&meta.grad, &old, version) {
                    meta.grad = Some(new);
                    return Ok(());
                }
            }
        }
    }
}

/// Whether `.grad` is still `old` at `version` (nobody published or wrote in between).
/// An inference tensor's version never moves, so for an inference `.grad` only the
/// identity is checked.
fn publishable(current: &Option<Tensor>, old: &Tensor, version: u64) -> bool {
    matches!(current, Some(c) if c.ptr_eq(old)) && old.version() == version
}

fn warn_layout_contract(old: &Tensor, param: &Tensor) {
    warn(
        WarningKind::User,
        format!(
            "grad and param do not obey the gradient layout contract. This is not an error, but may impair performance.\ngrad.sizes() = {:?}, strides() = {:?}\nparam.sizes() = {:?}, strides() = {:?}",
            old.shape(), old.strides(), param.shape(), param.strides()
        ),
    );
}
