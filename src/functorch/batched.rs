//! Batched wrappers: making them, taking them apart, and running ops on them (see the
//! module docs in `functorch`).

use smallvec::SmallVec;

use crate::error::{Error, Result};
use crate::functorch::levels::{self, Randomness};
use crate::ops::rules::to_front;
use crate::ops::{BatchCtx, Batched, Outputs};
use crate::shape::{broadcast_shapes, fmt_dims, Dims};
use crate::tensor::Tensor;

pub const ERR_RANDOM: &str = "vmap: called random operation while in randomness error mode. Please either use the 'same' or 'different' randomness flags on vmap or perform the randomness operation out of vmap";

/// Whether some input is a vmap wrapper (the dispatcher's check: one load per input).
#[inline]
pub fn any_batched(inputs: &[Tensor]) -> bool {
    inputs.iter().any(Tensor::is_batched)
}

/// The innermost level among the wrappers in `inputs`, and its batch size.
fn innermost(inputs: &[Tensor]) -> Option<(u64, usize)> {
    inputs
        .iter()
        .filter_map(|t| t.batch_info())
        .max_by_key(|b| b.level)
        .map(|b| (b.level, b.value.shape()[b.bdim]))
}

/// `x` (not batched at the level being opened) repeated `size` times along a new dim 0.
fn expand_front(x: &Tensor, size: usize) -> Result<Tensor> {
    let x = crate::ops::view::unsqueeze(x, 0)?;
    let mut shape: Dims = x.dims();
    shape[0] = size;
    crate::ops::view::expand(&x, &shape)
}

/// Run `rule` for `inputs`: the wrappers of the innermost level opened into their
/// physical values and batch dims, the rule's results wrapped back at that level.
/// A result that views input 0's memory becomes a view (for autograd) of input 0.
pub fn dispatch(
    inputs: &[Tensor],
    rule: impl FnOnce(&BatchCtx) -> Result<Batched>,
) -> Result<Outputs> {
    let (level, size) = innermost(inputs)
        .ok_or_else(|| Error::runtime("internal error: batched dispatch without a wrapper"))?;
    let opened: SmallVec<[(Tensor, Option<usize>); 3]> = inputs
        .iter()
        .map(|t| match t.batch_info() {
            Some(b) if b.level == level => (b.value.clone(), Some(b.bdim)),
            _ => (t.clone(), None),
        })
        .collect();
    let results = rule(&BatchCtx { inputs: &opened })?;
    let base = inputs.first().filter(|t| t.is_batched());
    results
        .into_iter()
        .map(|(value, bdim)| {
            let (value, bdim) = match bdim {
                Some(b) => (value, b),
                None => (expand_front(&value, size)?, 0),
            };
            let view_of = base.filter(|b| {
                value.is_view()
                    && b.batch_info().is_some_and(|info| {
                        std::sync::Arc::ptr_eq(value.data().storage(), info.value.data().storage())
                    })
            });
            Tensor::batched(value, bdim, level, view_of)
        })
        .collect()
}

/// Wrap `t` with its dim `bdim` as the batch dim of `level` (vmap's input side).
pub fn add_batch_dim(t: &Tensor, bdim: i64, level: u64) -> Result<Tensor> {
    let bdim = crate::shape::wrap_dim(bdim, t.dim())?;
    Tensor::batched(t.clone(), bdim, level, None)
}

/// The physical value of `t` at `level` with the batch dim at `out_dim` (vmap's output
/// side); a value not batched at `level` is expanded to `batch_size` there.
pub fn remove_batch_dim(t: &Tensor, level: u64, batch_size: usize, out_dim: i64) -> Result<Tensor> {
    match t.batch_info() {
        Some(b) if b.level == level => {
            let out = crate::shape::wrap_dim(out_dim, b.value.dim())?;
            if out == b.bdim {
                return Ok(b.value.clone());
            }
            let mut perm: SmallVec<[i64; 6]> = (0..b.value.dim() as i64).collect();
            perm.remove(b.bdim);
            perm.insert(out, b.bdim as i64);
            crate::ops::view::permute(&b.value, &perm)
        }
        Some(b) if b.level > level => Err(Error::runtime(
            "vmap: a tensor batched at an inner vmap level was used after that vmap returned",
        )),
        _ => {
            let out = crate::shape::wrap_dim(out_dim, t.dim() + 1)?;
            let x = crate::ops::view::unsqueeze(t, out as i64)?;
            let mut shape: Dims = x.dims();
            shape[out] = batch_size;
            crate::ops::view::expand(&x, &shape)
        }
    }
}

pub fn is_batched_at(t: &Tensor, level: u64) -> bool {
    t.batch_info().is_some_and(|b| b.level == level)
}

/// In-place write of an op's (possibly batched) result into `dst`. The physical write
/// is itself an in-place copy, so the physical level's autograd records it.
pub fn write(dst: &Tensor, value: &Tensor) -> Result<()> {
    let pair = [dst.clone(), value.clone()];
    let Some((level, size)) = innermost(&pair) else {
        return crate::ops::device::write_into(dst, value);
    };
    let Some(d) = dst.batch_info().filter(|b| b.level == level) else {
        let logical = broadcast_shapes(&dst.shape(), &value.shape())?;
        let physical: Dims = std::iter::once(size)
            .chain(logical.iter().copied())
            .collect();
        return Err(Error::runtime(format!(
            "output with shape {} doesn't match the broadcast shape {}",
            fmt_dims(&dst.shape()),
            fmt_dims(&physical)
        )));
    };
    let dst_front = to_front(&d.value, Some(d.bdim))?;
    let src = match value.batch_info() {
        Some(v) if v.level == level => {
            let mut s = to_front(&v.value, Some(v.bdim))?;
            while s.dim() < dst_front.dim() {
                s = crate::ops::view::unsqueeze(&s, 1)?;
            }
            s
        }
        _ => value.clone(),
    };
    crate::ops::inplace::copy_(&dst_front, &src)
}

/// A random tensor of one example's `shape` drawn inside vmap: refused in "error" mode,
/// one draw per example for "different" levels, one shared draw for "same" levels.
pub fn random(shape: &[usize], draw: impl FnOnce(&[usize]) -> Result<Tensor>) -> Result<Tensor> {
    let open = levels::open();
    if open.iter().any(|l| l.randomness == Randomness::Error) {
        return Err(Error::runtime(ERR_RANDOM));
    }
    let different: Vec<_> = open
        .iter()
        .filter(|l| l.randomness == Randomness::Different)
        .collect();
    let physical: Dims = different
        .iter()
        .map(|l| l.batch_size)
        .chain(shape.iter().copied())
        .collect();
    let mut t = draw(&physical)?;
    for l in different {
        t = Tensor::batched(t, 0, l.id, None)?;
    }
    Ok(t)
}
