//! AccumulateGrad: adding a gradient into a leaf's `.grad`, with torch's layout rules
//! (spec §5): a new `.grad` copies the parameter's strides when those are dense,
//! else it is row-major; an existing `.grad` is added to in place (or replaced by a
//! differentiable sum under create_graph).

use crate::autograd::warnings::{warn, WarningKind};
use crate::error::Result;
use crate::kernels::copy::write_into;
use crate::layout::Layout;
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
        .zip(grad.strides())
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
        && grad.strides() == &layout.strides[..]
        && grad.offset() == 0
    {
        return Ok(grad);
    }
    let storage = Storage::zeros(grad.dtype(), layout.storage_extent()?.max(layout.numel()))?;
    let out = Tensor::from_storage(storage, layout)?;
    write_into(&out, &grad)?;
    Ok(out)
}

/// Add `grad` into `param.grad`. The leaf's metadata stays locked for the whole update,
/// so concurrent backward passes into one shared leaf never lose a contribution.
pub fn accumulate(param: &Tensor, grad: Tensor, create_graph: bool) -> Result<()> {
    let mut meta = param.meta();
    let new = match meta.grad.clone() {
        None if create_graph && grad.requires_grad() => crate::ops::unary::clone(&grad)?,
        None => copy_for(param, grad)?,
        Some(old) if !create_graph => {
            if !obeys_layout_contract(&old, param) {
                warn(
                    WarningKind::User,
                    format!(
                        "grad and param do not obey the gradient layout contract. This is not an error, but may impair performance.\ngrad.sizes() = {:?}, strides() = {:?}\nparam.sizes() = {:?}, strides() = {:?}",
                        old.shape(), old.strides(), param.shape(), param.strides()
                    ),
                );
            }
            let _no_grad = crate::autograd::grad_mode::NoGradGuard::new();
            let total = crate::ops::binary::add(&old, &grad)?;
            write_into(&old, &total)?;
            old.bump_version();
            old
        }
        Some(old) => crate::ops::binary::add(&old, &grad)?,
    };
    meta.grad = Some(new);
    Ok(())
}
