//! The cycle `backward(create_graph=True)` leaves between a parameter and its `.grad`
//! (whose graph reaches the parameter's AccumulateGrad node, which holds the parameter).
//! It runs through the core only, so no host collector sees it: it is broken here when
//! the parameter's host object goes away. torch leaks here; its docs ask users to reset
//! `.grad` themselves.

use std::sync::Mutex;

use super::region::{Region, Root, BUDGET};
use crate::tensor::{Tensor, WeakTensor};

/// Tensors whose host object went away while their `.grad` graph (possibly a cycle back
/// to them) was still reachable from elsewhere: `retry_grad_cycles` looks again.
static GRAD_CYCLE_CANDIDATES: Mutex<Vec<WeakTensor>> = Mutex::new(Vec::new());

/// Called as the host object of `t` goes away, while it still holds `t`. If every other
/// holder of `t` is inside the graph of its own `.grad`, which in turn only `t` holds,
/// nothing can reach that cycle any more: drop `.grad` to free it. If the graph is still
/// held from elsewhere (say the loss is freed after the parameter), remember `t` to look
/// again later.
pub fn break_grad_cycle(t: &Tensor) {
    if try_break_grad_cycle(t) == Some(false) {
        let weak = t.downgrade();
        let mut list = GRAD_CYCLE_CANDIDATES
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if !list.iter().any(|w| w.ptr_eq(&weak)) {
            list.push(weak);
        }
    }
}

/// Look again at the tensors `break_grad_cycle` could not free (those that have no host
/// object again: one that does is looked at when that object goes away).
pub fn retry_grad_cycles() {
    let candidates = std::mem::take(
        &mut *GRAD_CYCLE_CANDIDATES
            .lock()
            .unwrap_or_else(|e| e.into_inner()),
    );
    let mut keep = Vec::new();
    for weak in candidates {
        let Some(t) = weak.upgrade() else { continue };
        let has_host_object = t.py_handle().load(std::sync::atomic::Ordering::Acquire) != 0;
        if !has_host_object && try_break_grad_cycle(&t) == Some(false) {
            keep.push(weak);
        }
    }
    GRAD_CYCLE_CANDIDATES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(keep);
}

/// `t` (held once by the caller) and its `.grad` graph form a cycle nothing else
/// reaches: drop `.grad` and say true. None: there is no `.grad` graph to look at.
fn try_break_grad_cycle(t: &Tensor) -> Option<bool> {
    if t.owner_count() == 1 {
        return None;
    }
    let grad = {
        let meta = t.try_meta()?;
        match &meta.grad {
            Some(g) if g.owner_count() == 1 => g.clone(),
            _ => return None,
        }
    };
    grad.try_meta()?.grad_fn.as_ref()?;
    // Every object may be looked into: the cycle runs through shared nodes.
    let region = Region::explore(Root::Tensor(grad), None, Some(t), BUDGET);
    let inside: usize = region
        .owned()
        .into_iter()
        .zip(&region.entries)
        .filter(|(owned, _)| *owned)
        .map(|(_, e)| e.target_refs)
        .sum();
    drop(region);
    // The caller's handle is the one holder left outside.
    if inside > 0 && t.owner_count() == 1 + inside {
        t.set_grad_unchecked(None);
        return Some(true);
    }
    Some(false)
}
