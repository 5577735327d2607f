//! Objects of the host language (Python hooks, packed saved values, Function contexts,
//! node metadata) that the core holds, and which of them one owner holds alone.
//!
//! Python's cycle collector must be told every reference an object holds, exactly once.
//! The graph is shared (`Arc`), so a Python object reports only the host objects held
//! by the part of the graph it *owns*: the tensors and nodes reachable from it whose
//! every holder is itself owned (the collector's own trial-deletion rule, applied to the
//! Rust graph). Nothing else can reach those without going through the owner, so when
//! the owner is garbage they are too. For a chain this is torch's rule for `grad_fn` (a
//! tensor held only by its Python object, a `grad_fn` held only by that tensor).
//!
//! A leaf's own hooks are reported by its canonical Python object whatever the count,
//! as torch does; when that object is collected the hooks are removed with it
//! (`clear_tensor_hooks`). What is shared is not reported, which can only keep it alive
//! longer. Locks are only tried: a structure another thread is using is skipped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use crate::autograd::node::{Node, NodeKind};
use crate::tensor::{AutogradMeta, Tensor, WeakTensor};

/// A host object held by the core, for `NodeExtras::py_metadata`.
pub trait Foreign: Send + Sync {
    /// Push the address of each host object held.
    fn foreign_refs(&self, out: &mut Vec<usize>);
    fn as_any(&self) -> &dyn std::any::Any;
}

/// At most this many tensors and nodes are examined per owner: bounds the collector's
/// pauses on long graphs (what lies further is not reported, so it stays alive).
const BUDGET: usize = 1024;

/// A lock, unless another holder has it right now (a poisoned one is still usable: every
/// write under these locks is a single assignment).
pub fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

enum Obj {
    Tensor(Tensor),
    Node(Arc<Node>),
}

impl Obj {
    fn addr(&self) -> usize {
        match self {
            Obj::Tensor(t) => t.impl_addr(),
            Obj::Node(n) => Arc::as_ptr(n) as usize,
        }
    }
    /// Give up the region's handle without freeing anything here (see `release`).
    fn release(self) {
        let last = match self {
            Obj::Tensor(t) => t.into_last(),
            Obj::Node(n) => Arc::into_inner(n).map(|n| Box::new(n) as Box<dyn Send>),
        };
        if let Some(last) = last {
            DEFERRED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(last);
        }
    }
    /// Holders other than the region's own clone of it.
    fn holders(&self) -> usize {
        match self {
            Obj::Tensor(t) => t.owner_count() - 1,
            Obj::Node(n) => Arc::strong_count(n) - 1,
        }
    }
}

/// Tensors and nodes whose other holders went away while a walk held them. Freeing
/// them may free host objects, which must not happen inside the host's collector: the
/// bindings free them later with `drop_deferred`.
static DEFERRED: Mutex<Vec<Box<dyn Send>>> = Mutex::new(Vec::new());

/// Free what walks were left holding last (call where host code may run).
pub fn drop_deferred() {
    let items = std::mem::take(&mut *DEFERRED.lock().unwrap_or_else(|e| e.into_inner()));
    drop(items);
}

/// Everything reachable from one root (up to `BUDGET`), with the references between.
struct Region {
    objs: Vec<Obj>,
    index: HashMap<usize, usize>,
    /// References from region objects to each object.
    held_inside: Vec<usize>,
    children: Vec<Vec<usize>>,
    /// Host objects each object holds.
    foreign: Vec<Vec<usize>>,
    /// References to the `target` tensor, per holding object (see `break_grad_cycle`).
    target_refs: Vec<usize>,
}

impl Region {
    /// Explore from `root`, which the owner holds once. `target` is not entered; the
    /// references to it are counted instead.
    fn explore(root: Obj, own_hooks: bool, target: Option<&Tensor>) -> Region {
        let mut r = Region {
            objs: Vec::new(),
            index: HashMap::new(),
            held_inside: Vec::new(),
            children: Vec::new(),
            foreign: Vec::new(),
            target_refs: Vec::new(),
        };
        r.add(root);
        let mut next = 0;
        while next < r.objs.len() && next < BUDGET {
            let mut kids: Vec<Obj> = Vec::new();
            let mut foreign = Vec::new();
            let mut target_refs = 0;
            let mut child = |o: Obj, kids: &mut Vec<Obj>| {
                if matches!((&o, target), (Obj::Tensor(t), Some(x)) if t.ptr_eq(x)) {
                    target_refs += 1;
                    o.release();
                } else {
                    kids.push(o);
                }
            };
            match &r.objs[next] {
                Obj::Tensor(t) => list_tensor(
                    t,
                    own_hooks || next > 0,
                    &mut foreign,
                    &mut kids,
                    &mut child,
                ),
                Obj::Node(n) => list_node(n, &mut foreign, &mut kids, &mut child),
            }
            r.foreign[next] = foreign;
            r.target_refs[next] = target_refs;
            for k in kids {
                let i = r.add(k);
                r.held_inside[i] += 1;
                r.children[next].push(i);
            }
            next += 1;
        }
        r
    }

    fn add(&mut self, o: Obj) -> usize {
        let next = self.objs.len();
        let i = *self.index.entry(o.addr()).or_insert(next);
        if i != next {
            o.release();
        } else {
            self.objs.push(o);
            self.held_inside.push(0);
            self.children.push(Vec::new());
            self.foreign.push(Vec::new());
            self.target_refs.push(0);
        }
        i
    }

    /// Which objects the owner holds alone: all their holders are inside and owned.
    fn owned(&self) -> Vec<bool> {
        let n = self.objs.len();
        let explored = n.min(BUDGET);
        // Held from outside (the root by the owner itself, counted as one).
        let mut owned: Vec<bool> = (0..n)
            .map(|i| {
                let inside = self.held_inside[i] + usize::from(i == 0);
                i < explored && self.objs[i].holders() == inside
            })
            .collect();
        // Whatever something held from outside reaches stays alive with it.
        let mut stack: Vec<usize> = (0..n).filter(|&i| !owned[i]).collect();
        while let Some(i) = stack.pop() {
            for &c in &self.children[i] {
                if owned[c] {
                    owned[c] = false;
                    stack.push(c);
                }
            }
        }
        owned
    }
}

/// Host objects held by a leaf's own hooks (tensor and post-accumulate hooks).
fn leaf_hook_refs(meta: &AutogradMeta, out: &mut Vec<usize>) {
    meta.leaf_hooks.iter().for_each(|h| h.foreign_refs(out));
    meta.post_accumulate_hooks
        .iter()
        .for_each(|h| h.foreign_refs(out));
}

/// A tensor's hooks (when `own_hooks`) and what it points at: gradient, grad_fn, base.
fn list_tensor(
    t: &Tensor,
    own_hooks: bool,
    foreign: &mut Vec<usize>,
    kids: &mut Vec<Obj>,
    child: &mut impl FnMut(Obj, &mut Vec<Obj>),
) {
    let Some(meta) = t.try_meta() else { return };
    if own_hooks {
        leaf_hook_refs(&meta, foreign);
    }
    if let Some(g) = &meta.grad {
        child(Obj::Tensor(g.clone()), kids);
    }
    if let Some(f) = &meta.grad_fn {
        child(Obj::Node(f.clone()), kids);
    }
    drop(meta);
    if let Some(info) = t.view_info() {
        child(Obj::Tensor(info.base.clone()), kids);
    }
}

/// A node's hooks, metadata and user backward, and what it points at: saved values,
/// next nodes, the leaf it accumulates into.
fn list_node(
    n: &Arc<Node>,
    foreign: &mut Vec<usize>,
    kids: &mut Vec<Obj>,
    child: &mut impl FnMut(Obj, &mut Vec<Obj>),
) {
    if let Some(extras) = try_lock(&n.extras) {
        // A hook the engine is running right now is also held by its snapshot.
        for (_, _, h) in &extras.tensor_pre_hooks {
            if Arc::strong_count(h) == 1 {
                h.foreign_refs(foreign);
            }
        }
        for h in extras
            .pre_hooks
            .iter()
            .filter(|h| Arc::strong_count(h) == 1)
        {
            h.foreign_refs(foreign);
        }
        for h in extras
            .post_hooks
            .iter()
            .filter(|h| Arc::strong_count(h) == 1)
        {
            h.foreign_refs(foreign);
        }
        if let Some(m) = &extras.py_metadata {
            m.foreign_refs(foreign);
        }
        if let Some(p) = &extras.anomaly_parent {
            child(Obj::Node(p.clone()), kids);
        }
    }
    match &n.kind {
        NodeKind::Custom(c) => c.foreign_refs(foreign),
        NodeKind::AccumulateGrad(leaf) => child(Obj::Tensor(leaf.clone()), kids),
        NodeKind::CopySlices(cs) => child(Obj::Node(cs.inner.clone()), kids),
        NodeKind::Op(_) => {}
    }
    if let Some(saved) = try_lock(&n.saved) {
        for slot in saved.slots.iter().flatten() {
            slot.foreign_refs(foreign);
            if let Some(t) = slot.held_value() {
                child(Obj::Tensor(t.clone()), kids);
            }
        }
    }
    for e in n.next_edges.iter().flatten() {
        child(Obj::Node(e.node.clone()), kids);
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        self.objs.drain(..).for_each(Obj::release);
    }
}

fn owned_foreign(root: Obj, own_hooks: bool, out: &mut Vec<usize>) {
    let region = Region::explore(root, own_hooks, None);
    for (i, owned) in region.owned().into_iter().enumerate() {
        if owned {
            out.extend_from_slice(&region.foreign[i]);
        }
    }
}

/// Host objects owned by the Python object holding `t`. `canonical`: that object is
/// the tensor's own one, which answers for the tensor's hooks whatever else holds it.
pub fn tensor_refs(t: &Tensor, canonical: bool, out: &mut Vec<usize>) {
    if t.owner_count() == 1 {
        owned_foreign(Obj::Tensor(t.clone()), canonical, out);
    } else if canonical {
        if let Some(meta) = t.try_meta() {
            leaf_hook_refs(&meta, out);
        }
    }
}

/// Host objects owned by the Python object holding `n` (its only holder, or nothing).
pub fn node_refs(n: &Arc<Node>, out: &mut Vec<usize>) {
    if Arc::strong_count(n) == 1 {
        owned_foreign(Obj::Node(n.clone()), true, out);
    }
}

/// The Python object holding `t` is being collected as garbage. The canonical one
/// takes the tensor's hooks with it (as in torch). If nothing else holds the tensor, its
/// gradient and history go too, and so do those of a view's base that only this view
/// holds: nobody can observe them any more, and a cycle that runs through them (a pack
/// hook that kept its tensor, say) is broken here.
pub fn clear_tensor(t: &Tensor, canonical: bool) {
    let unique = t.owner_count() == 1;
    if canonical || unique {
        take_state(t, canonical, unique);
    }
    if let Some(info) = t.view_info().filter(|_| unique) {
        if info.base.owner_count() == 1 {
            take_state(&info.base, true, true);
        }
    }
}

/// Drop a tensor's hooks and/or its gradient and history. Locks are only tried: this
/// thread may itself hold one further up (a write that freed the last reference to the
/// Python object); the state then just stays.
fn take_state(t: &Tensor, hooks: bool, history: bool) {
    let dropped = {
        let Some(mut meta) = t.try_meta() else { return };
        let hooks = if hooks {
            (
                meta.leaf_hooks.take_all(),
                meta.post_accumulate_hooks.take_all(),
            )
        } else {
            Default::default()
        };
        let history = if history {
            (meta.grad_fn.take(), meta.grad.take())
        } else {
            (None, None)
        };
        (hooks, history)
    };
    drop(dropped); // outside the lock: freeing a hook runs host code
}

/// The Python object holding `n` is being collected. If it is the node's only holder,
/// the node's hooks, metadata and saved values go (see `clear_tensor`).
pub fn clear_node(n: &Arc<Node>) {
    if Arc::strong_count(n) != 1 {
        return;
    }
    let hooks = {
        let Some(mut extras) = try_lock(&n.extras) else {
            return;
        };
        (
            std::mem::take(&mut extras.tensor_pre_hooks),
            extras.pre_hooks.take_all(),
            extras.post_hooks.take_all(),
            extras.py_metadata.take(),
        )
    };
    let saved = {
        let Some(mut saved) = try_lock(&n.saved) else {
            return;
        };
        saved.released = true;
        std::mem::take(&mut saved.slots)
    };
    drop((hooks, saved)); // outside the locks: freeing them runs host code
}

/// Tensors whose Python object went away while their `.grad` graph (possibly a cycle
/// back to them) was still reachable from elsewhere: `retry_grad_cycles` looks again.
static GRAD_CYCLE_CANDIDATES: Mutex<Vec<WeakTensor>> = Mutex::new(Vec::new());

/// Called as the Python object of `t` goes away, while it still holds `t`. If every
/// other holder of `t` is inside the graph of its own `.grad` (left there by
/// `backward(create_graph=True)`), which in turn only `t` holds, nothing can reach that
/// cycle any more: drop `.grad` to free it. If the graph is still held from elsewhere
/// (say the loss is freed after the parameter), remember `t` to look again later. torch
/// leaks here; its docs ask users to reset `.grad` themselves.
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

/// Look again at the tensors `break_grad_cycle` could not free (those that have no
/// Python object again: one that does is looked at when that object goes away).
pub fn retry_grad_cycles() {
    let candidates = std::mem::take(
        &mut *GRAD_CYCLE_CANDIDATES
            .lock()
            .unwrap_or_else(|e| e.into_inner()),
    );
    let mut keep = Vec::new();
    for weak in candidates {
        let Some(t) = weak.upgrade() else { continue };
        let has_py_object = t.py_handle().load(std::sync::atomic::Ordering::Acquire) != 0;
        if !has_py_object && try_break_grad_cycle(&t) == Some(false) {
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
    let region = Region::explore(Obj::Tensor(grad), true, Some(t));
    let inside: usize = region
        .owned()
        .into_iter()
        .zip(&region.target_refs)
        .filter(|(owned, _)| *owned)
        .map(|(_, n)| n)
        .sum();
    drop(region);
    // The caller's handle is the one holder left outside.
    if inside > 0 && t.owner_count() == 1 + inside {
        t.set_grad_unchecked(None);
        return Some(true);
    }
    Some(false)
}
