//! Objects of the host language (Python hooks, packed saved values, Function contexts,
//! node metadata) that the core holds, and which host object answers for each of them to
//! the host's cycle collector.
//!
//! # What the collector needs
//!
//! Python's collector takes each object it examines, counts `gc_refs = refcount - the
//! number of times examined objects report it` from their traverse, treats an object
//! left with `gc_refs > 0` as held from outside, and keeps alive everything reported
//! from an object it keeps alive. Two rules make that sound:
//! - (a) every report stands for its own real reference. Reporting one reference twice
//!   can bring `gc_refs` to 0 for an object that is held from outside: it is cleared
//!   while in use (a crash). Reporting too little only keeps things alive (a leak).
//! - (b) whenever the referent is reached through that reference, its reporter is
//!   reached first. Otherwise a live path runs through a reference nobody alive
//!   reports, and the referent is freed under it.
//!
//! The core holds host objects from tensors and nodes shared by `Arc`, and the host
//! objects standing for tensors and nodes (the bindings' tensor and node objects,
//! *owners* here) each hold one handle. One core reference to a host object (a
//! `HeldPy`) is reported by at most one owner, one that *dominates* it.
//!
//! # The walk
//!
//! A walk from an owner P (the *root*) follows references: an owner's handle and its
//! `__dict__`, what tensors and nodes hold (gradient, history, a view's base, saved
//! values, next nodes, hooks), and what host objects refer to (their traverse, asked
//! through `Host`). An object is *owned* by P when it was looked into and each of its
//! holders (`Arc` count, or host reference count) is an owned object or P, counted
//! against the references found; then every path from anywhere else to it passes
//! through P. Ownership is decided from the counts once the walk ends, so the order in
//! which objects are looked into only decides how much is found, never whether what is
//! found is right.
//!
//! Within the owned part, every core reference held by an owned tensor or node R goes
//! to the owner nearest above R in the dominator tree from P: the owner W that every
//! path from P to R passes through, closest to R. Every path from anywhere to R enters
//! the owned part through P and then passes through W, so W dominates the reference:
//! rule (b) holds by induction along any live path. (Answering from P alone for what
//! several owners reach, a tempting shortcut, breaks (b): with P garbage and another
//! owner alive, the hooks P reports would be cleared while the live one still runs them.)
//!
//! Rule (a) across walks: during a pass of the collector an owner's answer is computed
//! once and kept (`bindings::gc`). A walk answers at once for every owner it owns that
//! has no answer yet (P and others, empty answers included), and hands out a reference
//! only to one of those. A later walk starts from an owner Q no earlier walk owned, so
//! it can enter an earlier walk's owned part only through that walk's root: every
//! object on the dominator chain between the root and anything inside is inside too,
//! and every owner inside already has an answer. So the nearest owner above a reference
//! handed out before always has an answer, and the reference is skipped. Owners that
//! own each other (a garbage cycle, where dominance from outside means nothing) are
//! answered for by the first walk that meets one of them, all in one piece.
//!
//! A leaf's own hooks are the exception, as in torch: its canonical host object reports
//! them whatever else holds the leaf, and takes them away when it is collected
//! (`clear_tensor`). Walks never hand them out while that object exists.
//!
//! # Changes during a collection
//!
//! Threads without the GIL can give new holders only to objects they already hold
//! (which are not owned, then); they can only take holders away from owned objects,
//! which leaves every kept answer true. Host objects do not change while the collector
//! runs a pass; between its passes Python code may run (finalizers), and answers are
//! then dropped (`bindings::gc`).
//!
//! # Cost
//!
//! A walk looks into at most `BUDGET` objects; what lies further is not owned and stays
//! alive. Objects whose holders are all known are looked into first. Tensors, nodes and
//! owners with a holder not met yet (and what is reached through them) are looked into
//! only as a chance, at most `CHANCES` of them: that is how a cycle through a shared node
//! is found, but in a live graph the missing holders never turn up. Ordinary host objects
//! are looked into only once all their holders are found, so shared ones (a module's
//! globals) cost nothing. Locks are only tried: a structure another thread is using is
//! skipped.

mod dominators;
mod grad_cycle;
mod region;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use crate::autograd::node::Node;
use crate::tensor::Tensor;

pub use grad_cycle::{break_grad_cycle, retry_grad_cycles};
use region::{leaf_hook_refs, Obj, Region, Root, CHANCES};

/// A host object held by the core, for `NodeExtras::py_metadata`.
pub trait Foreign: Send + Sync {
    /// Push the address of each host object held (one entry per reference).
    fn foreign_refs(&self, out: &mut Vec<usize>);
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A tensor or node, as an owner holds it.
pub enum Handle {
    Tensor(Tensor),
    Node(Arc<Node>),
}

/// What a host object is to a walk.
pub enum HostKind {
    /// An ordinary object: the walk looks at what it refers to.
    Plain,
    /// An owner (the bindings' tensor or node object); its key names its answer.
    Owner(usize),
    /// Not to be looked into.
    Opaque,
}

/// The host's objects as a walk sees them (implemented by the bindings). Called only
/// while the host is stopped (inside its collector), so none of it changes meanwhile.
pub trait Host {
    /// Every reference held to `obj`.
    fn refcount(&self, obj: usize) -> usize;
    fn kind(&self, obj: usize) -> HostKind;
    /// An owner's tensor or node (a new handle).
    fn handle(&self, obj: usize) -> Option<Handle>;
    /// Push what `obj` refers to, one entry per reference, at most `limit` entries (for
    /// an owner: what its host side holds, not its handle).
    fn referents(&self, obj: usize, limit: usize, out: &mut Vec<usize>);
}

/// A lock, unless another holder has it right now (a poisoned one is still usable: every
/// write under these locks is a single assignment).
pub fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
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

/// How a walk's answers are used.
pub enum Answers<'a> {
    /// Kept for a pass of the collector: answer for every owner the walk owns that has
    /// no answer yet (`answered` says which have one).
    Kept(&'a dyn Fn(usize) -> bool),
    /// Given once and dropped (outside a pass: `gc.get_referents`, or a collection that
    /// does not call `gc.callbacks`, as CPython's last ones at exit). Fresh walks know
    /// nothing of each other, so the root reports a share only if it owns no other owner:
    /// two walks that own the same object own each other's roots (the holders of what
    /// they own are owned), so no reference is reported twice.
    Fresh,
}

/// The answers of a walk from the owner `key` holding `handle`, by owner key: the host
/// objects each reports (see `Answers`). `canonical`: the owner's address, when it is
/// its tensor's (or node's) canonical host object.
pub fn owned_refs(
    key: usize,
    handle: Handle,
    canonical: Option<usize>,
    host: &dyn Host,
    answers_are: Answers<'_>,
) -> Vec<(usize, Vec<usize>)> {
    let region = Region::explore(
        Root::Owner(key, canonical, handle),
        Some(host),
        None,
        CHANCES,
    );
    let owned = region.owned();
    let edges: Vec<Vec<usize>> = (0..owned.len())
        .map(|i| match owned[i] {
            true => region
                .children(i)
                .iter()
                .copied()
                .filter(|&c| owned[c])
                .collect(),
            false => Vec::new(),
        })
        .collect();
    let (rpo, idom) = dominators::immediate_dominators(&edges, 0);
    // The owner nearest above each object (rpo puts it first), and the answers made now.
    let mut nearest = vec![0; edges.len()];
    let mut answers: HashMap<usize, Vec<usize>> = HashMap::new();
    for &i in &rpo {
        let e = &region.entries[i];
        nearest[i] = match e.owner_key {
            Some(_) => i,
            None => nearest[idom[i]],
        };
        let unanswered = |k| match &answers_are {
            Answers::Kept(answered) => !answered(k),
            Answers::Fresh => i == 0,
        };
        if let Some(k) = e.owner_key.filter(|&k| i == 0 || unanswered(k)) {
            let mut refs = Vec::new();
            own_hooks(&region, i, k == key && canonical.is_some(), &mut refs);
            answers.insert(i, refs);
        }
    }
    let alone = rpo
        .iter()
        .all(|&i| i == 0 || region.entries[i].owner_key.is_none());
    if matches!(answers_are, Answers::Kept(_)) || alone {
        for &i in &rpo {
            if let Some(a) = answers.get_mut(&nearest[i]) {
                a.extend_from_slice(region.reportable(i));
            }
        }
    }
    answers
        .into_iter()
        .filter_map(|(i, refs)| Some((region.entries[i].owner_key?, refs)))
        .collect()
}

/// An owner's share of its leaf's hooks: all of them if it is the leaf's canonical host
/// object (the root says so itself; another owner is canonical if the tensor names it).
fn own_hooks(region: &Region<'_>, i: usize, root_canonical: bool, out: &mut Vec<usize>) {
    let e = &region.entries[i];
    let Some(&h) = region.children(i).first() else {
        return;
    };
    let Obj::Tensor(t) = &region.entries[h].obj else {
        return;
    };
    let canonical = match &e.obj {
        _ if i == 0 => root_canonical,
        Obj::Host(addr) => t.py_handle().load(std::sync::atomic::Ordering::Acquire) == *addr,
        _ => false,
    };
    if canonical {
        if let Some(meta) = t.try_meta() {
            leaf_hook_refs(&meta, out);
        }
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
    let hooks = match n.extras_cell() {
        None => Default::default(),
        Some(cell) => {
            let Some(mut extras) = try_lock(cell) else {
                return;
            };
            (
                std::mem::take(&mut extras.tensor_pre_hooks),
                extras.pre_hooks.take_all(),
                extras.post_hooks.take_all(),
                extras.py_metadata.take(),
            )
        }
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
