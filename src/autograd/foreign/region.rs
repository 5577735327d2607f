//! The walk behind `autograd::foreign`: everything reachable from one root (up to
//! `BUDGET` objects), the references between, and which of it the root owns.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::{try_lock, Handle, Host, HostKind, DEFERRED};
use crate::autograd::node::{Node, NodeKind};
use crate::tensor::{AutogradMeta, Tensor};

/// At most this many objects are looked into per walk: bounds the collector's pauses on
/// long graphs (what lies further is not owned, so it stays alive).
pub const BUDGET: usize = 1024;
/// At most this many objects are recorded per walk (looked into or only seen).
const MAX_SEEN: usize = 8 * BUDGET;

pub enum Obj {
    Tensor(Tensor),
    Node(Arc<Node>),
    /// A host object, by address (borrowed: the walk runs while the host is stopped).
    Host(usize),
}

impl Obj {
    fn addr(&self) -> usize {
        match self {
            Obj::Tensor(t) => t.impl_addr(),
            Obj::Node(n) => Arc::as_ptr(n) as usize,
            Obj::Host(a) => *a,
        }
    }
    /// Give up the region's handle without freeing anything here: freeing a tensor or
    /// node may free host objects, which must not happen inside the host's collector
    /// (the bindings free them later with `drop_deferred`).
    pub fn release(self) {
        let last = match self {
            Obj::Tensor(t) => t.into_last(),
            Obj::Node(n) => Arc::into_inner(n).map(|n| Box::new(n) as Box<dyn Send>),
            Obj::Host(_) => None,
        };
        if let Some(last) = last {
            DEFERRED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(last);
        }
    }
}

impl From<Handle> for Obj {
    fn from(h: Handle) -> Obj {
        match h {
            Handle::Tensor(t) => Obj::Tensor(t),
            Handle::Node(n) => Obj::Node(n),
        }
    }
}

pub struct Entry {
    pub obj: Obj,
    /// For an owner (a host object holding a tensor or node): its key.
    pub owner_key: Option<usize>,
    /// For a host object: its reference count when first seen (it cannot change while
    /// the walk runs: the host is stopped).
    refcount: usize,
    /// References to this object from looked-into objects.
    held_inside: usize,
    queued: bool,
    explored: bool,
    pub children: Vec<usize>,
    /// Host objects this core object holds that its owner may report (not a leaf's own
    /// hooks while the leaf has a canonical host object: those are that object's).
    pub reportable: Vec<usize>,
    /// References to the walk's `target` tensor (see `grad_cycle`).
    pub target_refs: usize,
}

/// Where a walk starts.
pub enum Root {
    /// A host owner object: its key, its address when known, and its handle. Always
    /// owned (its own holders are the collector's business).
    Owner(usize, Option<usize>, Handle),
    /// A tensor the caller holds once (owned if nothing else holds it).
    Tensor(Tensor),
}

pub struct Region<'h> {
    pub entries: Vec<Entry>,
    index: HashMap<usize, usize>,
    queue: VecDeque<usize>,
    explored: usize,
    host: Option<&'h dyn Host>,
    /// Not entered; references to it are counted instead (see `grad_cycle`).
    target: Option<&'h Tensor>,
    root_is_owner: bool,
}

impl<'h> Region<'h> {
    /// Walk from `root`. Without a `host`, host objects are neither entered nor reported.
    pub fn explore(root: Root, host: Option<&'h dyn Host>, target: Option<&'h Tensor>) -> Self {
        let mut r = Region {
            entries: Vec::new(),
            index: HashMap::new(),
            queue: VecDeque::new(),
            explored: 0,
            host,
            target,
            root_is_owner: matches!(root, Root::Owner(..)),
        };
        match root {
            Root::Owner(key, addr, handle) => {
                r.entries
                    .push(Entry::new(Obj::Host(addr.unwrap_or(0)), Some(key), 0));
                r.entries[0].explored = true;
                r.explored = 1;
                r.link(0, handle.into());
                if let (Some(addr), Some(host)) = (addr, host) {
                    r.index.insert(addr, 0);
                    r.link_referents(0, host, addr);
                }
            }
            Root::Tensor(t) => {
                let obj = Obj::Tensor(t);
                r.index.insert(obj.addr(), 0);
                r.entries.push(Entry::new(obj, None, 0));
                r.queue.push_back(0);
            }
        }
        while r.explored < BUDGET {
            let Some(i) = r.queue.pop_front() else { break };
            r.explored += 1;
            r.entries[i].explored = true;
            r.look_into(i);
        }
        r
    }

    fn look_into(&mut self, i: usize) {
        let mut kids: Vec<Obj> = Vec::new();
        let mut foreign: Vec<usize> = Vec::new();
        let mut reportable: Vec<usize> = Vec::new();
        match &self.entries[i].obj {
            Obj::Tensor(t) => list_tensor(t, &mut kids, &mut foreign, &mut reportable),
            Obj::Node(n) => list_node(n, &mut kids, &mut foreign),
            Obj::Host(addr) => {
                let Some(host) = self.host else { return };
                // An owner's handle comes first (see `owned_refs`), then what its host
                // side holds (its `__dict__`, say).
                let addr = *addr;
                if self.entries[i].owner_key.is_some() {
                    if let Some(h) = host.handle(addr) {
                        self.link(i, h.into());
                    }
                }
                self.link_referents(i, host, addr);
                return;
            }
        }
        if matches!(self.entries[i].obj, Obj::Node(_)) {
            reportable.extend_from_slice(&foreign);
        }
        if self.host.is_some() {
            self.entries[i].reportable = reportable;
            kids.extend(foreign.into_iter().map(Obj::Host));
        }
        for k in kids {
            self.link(i, k);
        }
    }

    fn link_referents(&mut self, i: usize, host: &dyn Host, addr: usize) {
        let mut refs = Vec::new();
        host.referents(addr, BUDGET, &mut refs);
        for r in refs {
            self.link(i, Obj::Host(r));
        }
    }

    /// Record the reference `from -> obj`.
    fn link(&mut self, from: usize, obj: Obj) {
        if matches!((&obj, self.target), (Obj::Tensor(t), Some(x)) if t.ptr_eq(x)) {
            self.entries[from].target_refs += 1;
            obj.release();
            return;
        }
        let i = match self.index.get(&obj.addr()) {
            Some(&i) => {
                obj.release();
                i
            }
            None => match self.add(obj) {
                Some(i) => i,
                None => return,
            },
        };
        self.entries[i].held_inside += 1;
        self.entries[from].children.push(i);
        // An ordinary host object is looked into once every holder is known to be inside:
        // looking into shared ones (a module's globals, say) would only spend the budget.
        let e = &mut self.entries[i];
        if matches!(e.obj, Obj::Host(_)) && !e.queued && e.held_inside == e.refcount {
            e.queued = true;
            self.queue.push_back(i);
        }
    }

    fn add(&mut self, obj: Obj) -> Option<usize> {
        if self.entries.len() >= MAX_SEEN {
            obj.release();
            return None;
        }
        let addr = obj.addr();
        let (owner_key, refcount) = match (&obj, self.host) {
            (Obj::Host(a), Some(host)) => match host.kind(*a) {
                // The root itself, met again through a cycle.
                HostKind::Owner(key)
                    if self.root_is_owner && Some(key) == self.entries[0].owner_key =>
                {
                    self.index.insert(addr, 0);
                    return Some(0);
                }
                HostKind::Owner(key) => (Some(key), host.refcount(*a)),
                HostKind::Plain => (None, host.refcount(*a)),
                // Never looked into (its holder count cannot be reached).
                HostKind::Opaque => (None, usize::MAX),
            },
            _ => (None, 0),
        };
        let i = self.entries.len();
        // Core objects and owners are looked into at once (owners cost little: a handle
        // and a `__dict__`, and they can hold themselves through the core).
        let queued = !matches!(obj, Obj::Host(_)) || owner_key.is_some();
        self.entries.push(Entry::new(obj, owner_key, refcount));
        self.index.insert(addr, i);
        if queued {
            self.entries[i].queued = true;
            self.queue.push_back(i);
        }
        Some(i)
    }

    /// Which objects the root owns: every holder of each is owned or is the root, so
    /// nothing reaches them without passing through the root. Only looked-into objects
    /// qualify (the references they hold are all known).
    pub fn owned(&self) -> Vec<bool> {
        let root_held = usize::from(!self.root_is_owner);
        let mut owned: Vec<bool> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let inside = e.held_inside + if i == 0 { root_held } else { 0 };
                e.explored
                    && match &e.obj {
                        Obj::Host(_) => i == 0 || e.refcount == inside,
                        Obj::Tensor(t) => t.owner_count() - 1 == inside,
                        Obj::Node(n) => Arc::strong_count(n) - 1 == inside,
                    }
            })
            .collect();
        // Whatever something held from outside reaches stays alive with it.
        let mut stack: Vec<usize> = (0..owned.len()).filter(|&i| !owned[i]).collect();
        while let Some(i) = stack.pop() {
            for &c in &self.entries[i].children {
                if owned[c] {
                    owned[c] = false;
                    stack.push(c);
                }
            }
        }
        owned
    }
}

impl Entry {
    fn new(obj: Obj, owner_key: Option<usize>, refcount: usize) -> Entry {
        Entry {
            obj,
            owner_key,
            refcount,
            held_inside: 0,
            queued: false,
            explored: false,
            children: Vec::new(),
            reportable: Vec::new(),
            target_refs: 0,
        }
    }
}

impl Drop for Region<'_> {
    fn drop(&mut self) {
        self.entries.drain(..).for_each(|e| e.obj.release());
    }
}

/// Host objects held by a leaf's own hooks (tensor and post-accumulate hooks), except
/// those the engine is running right now (also held by its snapshot, so not the leaf's
/// alone).
pub fn leaf_hook_refs(meta: &AutogradMeta, out: &mut Vec<usize>) {
    for h in meta.leaf_hooks.iter().filter(|h| Arc::strong_count(h) == 1) {
        h.foreign_refs(out);
    }
    for h in meta
        .post_accumulate_hooks
        .iter()
        .filter(|h| Arc::strong_count(h) == 1)
    {
        h.foreign_refs(out);
    }
}

/// What a tensor holds: gradient, grad_fn, a view's base, and its hooks (reportable
/// by whoever owns the tensor only while no canonical host object answers for them).
fn list_tensor(
    t: &Tensor,
    kids: &mut Vec<Obj>,
    foreign: &mut Vec<usize>,
    reportable: &mut Vec<usize>,
) {
    if let Some(meta) = t.try_meta() {
        let before = foreign.len();
        leaf_hook_refs(&meta, foreign);
        if t.py_handle().load(std::sync::atomic::Ordering::Acquire) == 0 {
            reportable.extend_from_slice(&foreign[before..]);
        }
        if let Some(g) = &meta.grad {
            kids.push(Obj::Tensor(g.clone()));
        }
        if let Some(f) = &meta.grad_fn {
            kids.push(Obj::Node(f.clone()));
        }
    }
    if let Some(info) = t.view_info() {
        kids.push(Obj::Tensor(info.base.clone()));
    }
}

/// What a node holds: hooks, metadata and user backward, saved values, next nodes, the
/// leaf it accumulates into.
fn list_node(n: &Arc<Node>, kids: &mut Vec<Obj>, foreign: &mut Vec<usize>) {
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
            kids.push(Obj::Node(p.clone()));
        }
    }
    match &n.kind {
        NodeKind::Custom(c) => c.foreign_refs(foreign),
        NodeKind::AccumulateGrad(leaf) => kids.push(Obj::Tensor(leaf.clone())),
        NodeKind::CopySlices(cs) => kids.push(Obj::Node(cs.inner.clone())),
        NodeKind::Op(_) => {}
    }
    if let Some(saved) = try_lock(&n.saved) {
        for slot in saved.slots.iter().flatten() {
            slot.foreign_refs(foreign);
            if let Some(t) = slot.held_value() {
                kids.push(Obj::Tensor(t.clone()));
            }
        }
    }
    for e in n.next_edges.iter().flatten() {
        kids.push(Obj::Node(e.node.clone()));
    }
}
