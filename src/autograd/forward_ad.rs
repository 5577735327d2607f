//! Forward-mode AD: dual levels and the tangents tensors carry at them.
//!
//! # Levels
//! A level is an index into a process-wide stack (torch's levels are global too); the
//! public API allows one at a time, so the first is 0 in a fresh process. Each level
//! keeps weak handles to the tensors that got a tangent at it, and exiting the level
//! takes those tangents away. [`active`] is the only thing the dispatcher pays for when
//! no level exists: one relaxed atomic load.
//!
//! # Tangents
//! A tangent lives in the tensor's autograd metadata (`AutogradMeta::fw_grads`, a lazily
//! boxed list: a tensor that never had one pays a null pointer). A stored tangent always
//! has its primal's sizes, strides and storage offset over a storage at least as long as
//! the primal's reach (torch's "same meta" rule), so the tangent of a view is the same
//! view of the base's tangent, and an in-place update of a view's tangent is seen
//! through the base's. A view with no tangent of its own reads its base's (made on first
//! read), so a view made before its base became dual sees the base's tangent.
//!
//! # Propagation
//! [`propagate`] runs after an op's forward when some input has a tangent at the
//! current level: the op's jvp rule gets the inputs as primals, with propagation at that
//! level switched off on this thread while it runs (torch hands rules the primals
//! without their tangents; switching propagation off has the same effect without making
//! an alias per input). Grad mode stays as it is, so rules record reverse-mode graphs
//! (reverse-over-forward) and, inside `autograd.grad(create_graph=True)`, vjp rules
//! propagate tangents (forward-over-reverse).

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use smallvec::SmallVec;

use crate::autograd::grad_mode;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::ops::{JvpCtx, Op, Tangents};
use crate::tensor::{Tensor, WeakTensor};

/// Tangents of one tensor, one entry per level that gave it one.
pub type FwGrads = SmallVec<[(usize, Tensor); 1]>;

/// Number of live levels; 0 means forward AD costs nothing.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Per live level: the tensors that got a tangent at it (weak: a level does not keep
/// tensors alive), and the length after the last sweep of dead handles.
struct Level {
    tensors: Vec<WeakTensor>,
    swept_len: usize,
}

static LEVELS: Mutex<Vec<Level>> = Mutex::new(Vec::new());

thread_local! {
    /// torch's `_set_fwd_grad_enabled` (thread-local, on by default).
    static FWD_ENABLED: Cell<bool> = const { Cell::new(true) };
    /// Levels at or above this one do not propagate on this thread: a jvp rule for
    /// level L runs with L here (lower levels still see its ops: nested jvp), helpers
    /// that must not propagate at all run with 0 (see the module docs).
    static CEILING: Cell<usize> = const { Cell::new(usize::MAX) };
}

pub const ERR_NESTED: &str = "Nested forward mode AD is not supported at the moment";

fn levels() -> std::sync::MutexGuard<'static, Vec<Level>> {
    LEVELS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether any level exists (the dispatcher's fast check).
#[inline]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed) != 0
}

pub fn is_fwd_grad_enabled() -> bool {
    FWD_ENABLED.with(|c| c.get())
}
pub fn set_fwd_grad_enabled(on: bool) {
    FWD_ENABLED.with(|c| c.set(on))
}

/// How many levels (0..n) propagate on this thread now.
fn propagating_levels() -> usize {
    if !active() || !is_fwd_grad_enabled() || grad_mode::is_inference_mode() {
        return 0;
    }
    // ACTIVE is the number of levels (stored under the levels lock): no lock per op.
    ACTIVE
        .load(Ordering::Relaxed)
        .min(CEILING.with(|c| c.get()))
}

/// Whether `level` exists now.
pub fn level_exists(level: usize) -> bool {
    level < ACTIVE.load(Ordering::Relaxed)
}

/// Enter a new level. The public forward_ad API allows one at a time; torch.func's
/// jvp nests them (`allow_nested`).
pub fn enter_level(allow_nested: bool) -> Result<usize> {
    let mut ls = levels();
    if !ls.is_empty() && !allow_nested {
        return Err(Error::runtime(ERR_NESTED));
    }
    ls.push(Level {
        tensors: Vec::new(),
        swept_len: 0,
    });
    ACTIVE.store(ls.len(), Ordering::Relaxed);
    Ok(ls.len() - 1)
}

/// Exit `level` (the innermost one), dropping every tangent made at it.
pub fn exit_level(level: usize) -> Result<()> {
    let level_entry = {
        let mut ls = levels();
        if level + 1 != ls.len() {
            return Err(Error::runtime(
                "Trying to exit a forward AD level that was not the last one that was created. This is not supported.",
            ));
        }
        let l = ls.pop().expect("checked");
        ACTIVE.store(ls.len(), Ordering::Relaxed);
        l
    };
    // Taken out under each tensor's lock, dropped after it (a tangent may own history).
    let mut dropped: Vec<Tensor> = Vec::new();
    for w in level_entry.tensors {
        if let Some(t) = w.upgrade() {
            let mut m = t.meta();
            if let Some(fw) = m.fw_grads.as_mut() {
                if let Some(pos) = fw.iter().position(|(l, _)| *l == level) {
                    dropped.push(fw.remove(pos).1);
                }
                if fw.is_empty() {
                    m.fw_grads = None;
                }
            }
        }
    }
    drop(dropped);
    Ok(())
}

/// Remember that `t` has a tangent at `level`, sweeping dead handles now and then so
/// that a long loop inside one level keeps the list bounded.
fn register(t: &Tensor, level: usize) {
    let mut ls = levels();
    let Some(l) = ls.get_mut(level) else { return };
    l.tensors.push(t.downgrade());
    if l.tensors.len() > 2 * l.swept_len.max(64) {
        l.tensors.retain(|w| w.upgrade().is_some());
        l.swept_len = l.tensors.len();
    }
}

/// The tangent `t` stores itself at `level` (not one derived from a view's base).
fn own_fw_grad(t: &Tensor, level: usize) -> Option<Tensor> {
    let m = t.meta();
    let fw = m.fw_grads.as_ref()?;
    fw.iter().find(|(l, _)| *l == level).map(|(_, g)| g.clone())
}

/// Store `tangent` (already laid out like `t`) as `t`'s tangent at `level`.
fn store(t: &Tensor, tangent: Tensor, level: usize) {
    // A replaced tangent is dropped after the lock, as in `exit_level`.
    let _replaced = {
        let mut m = t.meta();
        let fw = m.fw_grads.get_or_insert_with(Default::default);
        match fw.iter_mut().find(|(l, _)| *l == level) {
            Some(slot) => Some(std::mem::replace(&mut slot.1, tangent)),
            None => {
                fw.push((level, tangent));
                None
            }
        }
    };
    register(t, level);
}

/// `t`'s tangent at `level`: its own, or for a view the same view of its base's.
pub fn fw_grad(t: &Tensor, level: usize) -> Result<Option<Tensor>> {
    if let Some(g) = own_fw_grad(t, level) {
        return Ok(Some(g));
    }
    let Some(info) = t.view_info() else {
        return Ok(None);
    };
    if t.meta().fw_view_cut {
        return Ok(None);
    }
    let Some(base_grad) = own_fw_grad(&info.base, level) else {
        return Ok(None);
    };
    let g = without_propagation(|| view_of_tangent(&base_grad, &info.base, t))?;
    store(t, g.clone(), level);
    Ok(Some(g))
}

/// The view of `tangent` (the tangent of `of`) that `view` is of `of`'s memory: the same
/// layout, read as the other side of a complex pair where `view` reads `of` so.
fn view_of_tangent(tangent: &Tensor, of: &Tensor, view: &Tensor) -> Result<Tensor> {
    use crate::ops::complex::{strided_view, Reading};
    let reading = Reading::between(of.dtype(), view.dtype());
    strided_view(tangent, view.layout().clone(), reading)
}

/// Run `f` with propagation off on this thread (unpacking a primal, tangent copies).
pub fn without_propagation<R>(f: impl FnOnce() -> R) -> R {
    below_level(0, f)
}

/// Run `f` with only the levels below `level` propagating (a jvp rule for `level`).
fn below_level<R>(level: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            CEILING.with(|c| c.set(self.0));
        }
    }
    let old = CEILING.with(|c| c.get());
    let _restore = Restore(old);
    CEILING.with(|c| c.set(level.min(old)));
    f()
}

/// Whether `g` can serve as `t`'s tangent as is (same sizes, strides, offset, and a
/// storage that reaches as far).
fn same_meta(g: &Tensor, t: &Tensor) -> Result<bool> {
    let (gl, tl) = (g.layout().clone(), t.layout().clone());
    if gl.shape != tl.shape || gl.strides != tl.strides || gl.offset != tl.offset {
        return Ok(false);
    }
    Ok(g.data().storage_len() >= tl.storage_extent()?)
}

/// A zero tensor of `dtype` laid out exactly like `t` (sizes, strides, offset).
fn zeros_like_layout(t: &Tensor, dtype: crate::dtype::DType) -> Result<Tensor> {
    let layout: Layout = t.layout().clone();
    let storage = crate::storage::Storage::zeros(dtype, layout.storage_extent()?)?;
    Tensor::from_storage(storage, layout)
}

/// `g` as a tangent for `t`: itself when its layout matches, else a copy that does.
fn conform(g: Tensor, t: &Tensor) -> Result<Tensor> {
    // A vmap wrapper (jacfwd's batched tangents) has no layout of its own to match: it
    // is kept as is, and views of its primal get theirs from the view ops' jvp rules.
    if g.is_batched() || same_meta(&g, t)? {
        return Ok(g);
    }
    let out = zeros_like_layout(t, g.dtype())?;
    without_propagation(|| crate::ops::inplace::copy_(&out, &g))?;
    Ok(out)
}

/// torch's `_set_fw_grad` for a tensor made by an op or by `make_dual` (not in place).
pub fn set_fw_grad(t: &Tensor, g: Tensor, level: usize) -> Result<()> {
    let g = conform(g, t)?;
    store(t, g, level);
    Ok(())
}

/// The checks `make_dual` makes on a tangent (torch's texts).
pub fn check_new_tangent(t: &Tensor, g: &Tensor, level: usize) -> Result<()> {
    if fw_grad(g, level)?.is_some() {
        return Err(Error::runtime(format!(
            "Setting a forward grad that itself has a forward gradient at the same level{level} is not supported."
        )));
    }
    if g.dims() != t.dims() {
        return Err(Error::runtime(format!(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is not supported. Tensor is of size {} while the given forward gradient is of size {}.",
            crate::shape::fmt_dims(&t.dims()),
            crate::shape::fmt_dims(&g.dims())
        )));
    }
    Ok(())
}

/// Mark a tensor as not reading its base's tangent (`unpack_dual`'s primal).
pub fn cut_from_base(t: &Tensor) {
    t.meta().fw_view_cut = true;
}

/// One tangent (or none) per input of an op.
type InputTangents = SmallVec<[Option<Tensor>; 2]>;

/// The inputs' tangents at each propagating level that gives one any (innermost first).
fn input_tangents(inputs: &[Tensor]) -> Result<SmallVec<[(usize, InputTangents); 1]>> {
    let mut found = SmallVec::new();
    for level in (0..propagating_levels()).rev() {
        if let Some(t) = input_tangents_at(inputs, level)? {
            found.push((level, t));
        }
    }
    Ok(found)
}

fn input_tangents_at(inputs: &[Tensor], level: usize) -> Result<Option<InputTangents>> {
    let tangents: InputTangents = inputs
        .iter()
        .map(|t| fw_grad(t, level))
        .collect::<Result<_>>()?;
    if tangents.iter().all(Option::is_none) {
        return Ok(None);
    }
    Ok(Some(tangents))
}

fn run_rule(
    op: &dyn Op,
    level: usize,
    primals: &[Tensor],
    outputs: &[Tensor],
    tangents: &[Option<Tensor>],
) -> Result<Tangents> {
    below_level(level, || {
        op.jvp(&JvpCtx {
            primals,
            outputs,
            tangents,
        })
    })
}

/// After an out-of-place op: give its outputs their tangents (see the module docs).
pub fn propagate(op: &dyn Op, inputs: &[Tensor], outputs: &[Tensor]) -> Result<()> {
    for (level, tangents) in input_tangents(inputs)? {
        propagate_at(op, level, &tangents, inputs, outputs)?;
    }
    Ok(())
}

fn propagate_at(
    op: &dyn Op,
    level: usize,
    tangents: &[Option<Tensor>],
    inputs: &[Tensor],
    outputs: &[Tensor],
) -> Result<()> {
    // A view op's outputs get the same views of input 0's tangent (sharing its memory),
    // which the rule's own result might not (it may read a contiguous copy).
    // Not for vmap wrappers: their layouts are one example's, not the memory's.
    let views_of_input = !outputs.is_empty()
        && !inputs[0].is_batched()
        && tangents[0].as_ref().is_some_and(|t| !t.is_batched())
        && outputs.iter().all(|o| {
            o.is_view() && std::sync::Arc::ptr_eq(o.data().storage(), inputs[0].data().storage())
        });
    if views_of_input {
        if let Some(t0) = &tangents[0] {
            if tangents[1..].iter().all(Option::is_none) && same_meta(t0, &inputs[0])? {
                for o in outputs {
                    let g = without_propagation(|| view_of_tangent(t0, &inputs[0], o))?;
                    store(o, g, level);
                }
                return Ok(());
            }
        }
    }
    let results = run_rule(op, level, inputs, outputs, tangents)?;
    for (o, g) in outputs.iter().zip(results) {
        if let Some(g) = g {
            if o.dtype().is_differentiable() {
                set_fw_grad(o, g, level)?;
            }
        }
    }
    Ok(())
}

/// State carried across an in-place write: the inputs' tangents and the destination's
/// value before the write (the rule's primal 0).
pub struct InplaceFw {
    levels: SmallVec<[(usize, InputTangents); 1]>,
    old_self: Tensor,
}

/// Before an in-place op writes `inputs[0]`: what its jvp rules will need.
pub fn before_inplace(inputs: &[Tensor]) -> Result<Option<InplaceFw>> {
    let levels = input_tangents(inputs)?;
    if levels.is_empty() {
        return Ok(None);
    }
    let old_self = without_propagation(|| crate::ops::unary::clone(&inputs[0]))?;
    Ok(Some(InplaceFw { levels, old_self }))
}

/// After the write: update the destination's tangent in place (its views and base see
/// it), or give the destination one (for a view: its base gets a zero tangent first).
pub fn after_inplace(op: &dyn Op, inputs: &[Tensor], fw: InplaceFw) -> Result<()> {
    let mut primals: SmallVec<[Tensor; 3]> = SmallVec::new();
    primals.push(fw.old_self);
    primals.extend(inputs[1..].iter().cloned());
    for (level, tangents) in &fw.levels {
        after_inplace_at(op, *level, tangents, &primals, &inputs[0])?;
    }
    Ok(())
}

fn after_inplace_at(
    op: &dyn Op,
    level: usize,
    tangents: &[Option<Tensor>],
    primals: &[Tensor],
    dst: &Tensor,
) -> Result<()> {
    let new = run_rule(op, level, primals, std::slice::from_ref(dst), tangents)?
        .into_iter()
        .next()
        .flatten();
    let current = fw_grad(dst, level)?;
    without_propagation(|| match (current, new) {
        (Some(cur), Some(new)) => crate::ops::inplace::copy_(&cur, &new),
        (Some(cur), None) => crate::ops::inplace::zero_(&cur),
        (None, None) => Ok(()),
        (None, Some(_)) if !dst.dtype().is_differentiable() => Ok(()),
        (None, Some(new)) => match dst.view_info().map(|i| i.base.clone()) {
            Some(base) if !dst.meta().fw_view_cut => {
                let base_grad = match own_fw_grad(&base, level) {
                    Some(g) => g,
                    None => {
                        // In the base's dtype: a real view's tangent is real, its
                        // complex base's is complex.
                        let dtype = match crate::ops::complex::Reading::between(
                            base.dtype(),
                            dst.dtype(),
                        ) {
                            crate::ops::complex::Reading::Same => new.dtype(),
                            _ => base.dtype(),
                        };
                        let g = zeros_like_layout(&base, dtype)?;
                        store(&base, g.clone(), level);
                        g
                    }
                };
                let view_grad = view_of_tangent(&base_grad, &base, dst)?;
                crate::ops::inplace::copy_(&view_grad, &new)?;
                store(dst, view_grad, level);
                Ok(())
            }
            _ => set_fw_grad(dst, new, level),
        },
    })
}

/// Copy `from`'s tangents to `to` (an alias of it: a saved output keeps its tangent).
pub fn copy_tangents(from: &Tensor, to: &Tensor) {
    let fw = from.meta().fw_grads.clone();
    if let Some(fw) = fw {
        for (level, g) in fw.iter() {
            store(to, g.clone(), *level);
        }
    }
}

fn check_level(level: usize, what: &str) -> Result<()> {
    if level_exists(level) {
        Ok(())
    } else {
        Err(Error::runtime(format!("Invalid level given to {what}")))
    }
}

/// torch's `_make_dual`: a view of `t` (backward-differentiable, `ViewBackward0`)
/// carrying `tangent` at `level`.
pub fn make_dual(t: &Tensor, tangent: &Tensor, level: usize) -> Result<Tensor> {
    check_level(level, "_make_dual")?;
    if fw_grad(t, level)?.is_some() {
        return Err(Error::runtime(format!(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the same level {level} is not supported."
        )));
    }
    check_new_tangent(t, tangent, level)?;
    let dual = without_propagation(|| crate::ops::view::dual_alias(t))?;
    set_fw_grad(&dual, tangent.clone(), level)?;
    Ok(dual)
}

/// A tangent given from outside (a custom Function's jvp): checked like `make_dual`'s,
/// kept as is when `t` already has it (a jvp that updated a tangent in place).
pub fn set_checked_fw_grad(t: &Tensor, g: &Tensor, level: usize) -> Result<()> {
    check_level(level, "_set_fw_grad")?;
    if own_fw_grad(t, level).is_some_and(|cur| cur.ptr_eq(g)) {
        return Ok(());
    }
    check_new_tangent(t, g, level)?;
    set_fw_grad(t, g.clone(), level)
}

/// torch's `_unpack_dual`: a view of `t` without a tangent at `level`, and the tangent.
pub fn unpack_dual(t: &Tensor, level: usize) -> Result<(Tensor, Option<Tensor>)> {
    check_level(level, "_fw_primal")?;
    let tangent = fw_grad(t, level)?;
    let primal = without_propagation(|| crate::ops::view::alias(t))?;
    cut_from_base(&primal);
    Ok((primal, tangent))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(t: &Tensor) -> Vec<f64> {
        t.to_vec::<f64>()
    }

    /// The only test that enters a level (levels are process-wide and one at a time):
    /// propagation through an op and an in-place op, then the tangents go at exit.
    #[test]
    fn level_propagation_and_exit() {
        let x = Tensor::from_vec(vec![0.5f64, -1.0], &[2]).unwrap();
        let v = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
        let level = enter_level(false).unwrap();
        assert!(matches!(enter_level(false), Err(Error::Runtime(m)) if m == ERR_NESTED));
        let d = make_dual(&x, &v, level).unwrap();
        assert!(fw_grad(&d, level).unwrap().unwrap().ptr_eq(&v));
        let out = crate::ops::unary::exp(&d).unwrap();
        let t = values(&fw_grad(&out, level).unwrap().unwrap());
        assert!(
            (t[0] - 0.5f64.exp()).abs() < 1e-15 && (t[1] - 2.0 * (-1.0f64).exp()).abs() < 1e-15
        );
        let plain = Tensor::from_vec(vec![3.0f64, 4.0], &[2]).unwrap();
        crate::ops::inplace::mul_(&plain, &d).unwrap();
        assert_eq!(
            values(&fw_grad(&plain, level).unwrap().unwrap()),
            vec![3.0, 8.0]
        );
        assert!(exit_level(level + 1).is_err());
        exit_level(level).unwrap();
        assert!(!active());
        assert!(out.meta().fw_grads.is_none() && plain.meta().fw_grads.is_none());
    }
}
