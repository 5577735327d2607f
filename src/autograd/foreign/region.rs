//! The walk behind `autograd::foreign`: everything reachable from one root (up to
//! `BUDGET` objects), the references between, and which of it the root owns.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::{try_lock, Handle, Host, HostKind, DEFERRED};
use crate::autograd::node::{Node, NodeKind};
use crate::tensor::{AutogradMeta, Tensor};

/// At most this many objects are looked into per walk: bounds the collector's pauses on
/// long graphs (what lies further is not owned, so it stays alive).
pub const BUDGET: usize = 1024;
/// Of those, at most this many are looked into as a chance (see `Region::explore`).
pub const CHANCES: usize = 256;
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
    /// Of those, references from objects looked into as sure.
    held_surely: usize,
    state: State,
    /// What it refers to (a range of `Region::edges`), once looked into.
    children: (usize, usize),
    /// Host objects this core object holds that its owner may report (a range of
    /// `Region::reports`; not a leaf's own hooks while the leaf has a canonical host
    /// object: those are that object's).
    reportable: (usize, usize),
    /// References to the walk's `target` tensor (see `grad_cycle`).
    pub target_refs: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Seen, not queued (an ordinary host object with holders still unknown).
    Seen,
    /// Queued as a chance: some holders are unknown, or only reached through chances.
    Chance,
    /// Queued: every holder is known and was itself looked into as sure.
    Sure,
    /// Looked into (as sure or not).
    Explored(bool),
}

/// Where a walk starts.
pub enum Root {
    /// A host owner object: its key, its address when known, and its handle. Always
    /// owned (its own holders are the collector's business).
    Owner(usize, Option<usize>, Handle),
    /// A tensor the caller holds once (owned if nothing else holds it).
    Tensor(Tensor),
}

/// Addresses as hash keys: a multiply and a fold spread them (no hostile input here).
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0.rotate_left(8) ^ u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        let h = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub struct Region<'h> {
    pub entries: Vec<Entry>,
    index: HashMap<usize, usize, BuildHasherDefault<AddrHasher>>,
    edges: Vec<usize>,
    reports: Vec<usize>,
    sure: VecDeque<usize>,
    chance: VecDeque<usize>,
    explored: usize,
    host: Option<&'h dyn Host>,
    /// Not entered; references to it are counted instead (see `grad_cycle`).
    target: Option<&'h Tensor>,
    root_is_owner: bool,
    /// The object being looked into was sure.
    from_sure: bool,
    /// Scratch lists, kept between objects looked into.
    kids: Vec<Obj>,
    foreign: Vec<usize>,
    referents: Vec<usize>,
}

impl<'h> Region<'h> {
    /// Walk from `root`. Without a `host`, host objects are neither entered nor reported.
    ///
    /// Objects whose holders are all known (and sure themselves) are looked into first.
    /// The others (tensors, nodes and owners with a holder not met yet, and whatever is
    /// reached through them) are looked into as a chance, at most `chances` of them: the
    /// missing holders may turn up further on (a cycle through a hook, say), but in a
    /// live graph they never do, and each walk would otherwise cover the whole budget.
    pub fn explore(
        root: Root,
        host: Option<&'h dyn Host>,
        target: Option<&'h Tensor>,
        chances: usize,
    ) -> Self {
        let mut r = Region {
            entries: Vec::with_capacity(64),
            index: HashMap::with_capacity_and_hasher(64, Default::default()),
            edges: Vec::with_capacity(128),
            reports: Vec::new(),
            sure: VecDeque::new(),
            chance: VecDeque::new(),
            explored: 0,
            host,
            target,
            root_is_owner: matches!(root, Root::Owner(..)),
            from_sure: true,
            kids: Vec::new(),
            foreign: Vec::new(),
            referents: Vec::new(),
        };
        match root {
            Root::Owner(key, addr, handle) => {
                r.entries
                    .push(Entry::new(Obj::Host(addr.unwrap_or(0)), Some(key), 0));
                r.entries[0].state = State::Explored(true);
                r.explored = 1;
                let from = r.edges.len();
                r.link(handle.into());
                if let (Some(addr), Some(host)) = (addr, host) {
                    r.index.insert(addr, 0);
                    r.link_referents(host, addr);
                }
                r.entries[0].children = (from, r.edges.len());
            }
            Root::Tensor(t) => {
                let obj = Obj::Tensor(t);
                r.index.insert(obj.addr(), 0);
                r.entries.push(Entry::new(obj, None, 0));
                r.entries[0].state = State::Sure;
                r.sure.push_back(0);
            }
        }
        let mut chances_left = chances;
        while r.explored < BUDGET {
            let (i, sure) = match r.sure.pop_front() {
                Some(i) => (i, true),
                None if chances_left > 0 => match r.chance.pop_front() {
                    Some(i) => {
                        chances_left -= 1;
                        (i, false)
                    }
                    None => break,
                },
                None => break,
            };
            if matches!(r.entries[i].state, State::Explored(_)) {
                continue;
            }
            r.explored += 1;
            r.entries[i].state = State::Explored(sure);
            r.from_sure = sure;
            r.look_into(i);
        }
        r
    }

    /// The objects `i` refers to (empty unless looked into).
    pub fn children(&self, i: usize) -> &[usize] {
        let (a, b) = self.entries[i].children;
        &self.edges[a..b]
    }

    /// The host objects `i` holds that its owner may report.
    pub fn reportable(&self, i: usize) -> &[usize] {
        let (a, b) = self.entries[i].reportable;
        &self.reports[a..b]
    }

    fn look_into(&mut self, i: usize) {
        let from = self.edges.len();
        let mut kids = std::mem::take(&mut self.kids);
        let mut foreign = std::mem::take(&mut self.foreign);
        let reports_from = self.reports.len();
        match &self.entries[i].obj {
            Obj::Tensor(t) => list_tensor(t, &mut kids, &mut foreign, &mut self.reports),
            Obj::Node(n) => {
                list_node(n, &mut kids, &mut foreign);
                self.reports.extend_from_slice(&foreign);
            }
            Obj::Host(addr) => {
                let addr = *addr;
                if let Some(host) = self.host {
                    // An owner's handle comes first (see `owned_refs`), then what its
                    // host side holds (its `__dict__`, say).
                    if self.entries[i].owner_key.is_some() {
                        if let Some(h) = host.handle(addr) {
                            self.link(h.into());
                        }
                    }
                    self.link_referents(host, addr);
                }
            }
        }
        if self.host.is_some() {
            kids.extend(foreign.drain(..).map(Obj::Host));
        } else {
            foreign.clear();
            self.reports.truncate(reports_from);
        }
        for k in kids.drain(..) {
            if let Some(t) = self.target_ref(&k) {
                self.entries[i].target_refs += t;
                k.release();
            } else {
                self.link(k);
            }
        }
        self.kids = kids;
        self.foreign = foreign;
        let e = &mut self.entries[i];
        e.children = (from, self.edges.len());
        e.reportable = (reports_from, self.reports.len());
    }

    fn target_ref(&self, obj: &Obj) -> Option<usize> {
        match (obj, self.target) {
            (Obj::Tensor(t), Some(x)) if t.ptr_eq(x) => Some(1),
            _ => None,
        }
    }

    fn link_referents(&mut self, host: &dyn Host, addr: usize) {
        let mut refs = std::mem::take(&mut self.referents);
        host.referents(addr, BUDGET, &mut refs);
        for r in refs.drain(..) {
            self.link(Obj::Host(r));
        }
        self.referents = refs;
    }

    /// Record a reference to `obj` from the object being looked into.
    fn link(&mut self, obj: Obj) {
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
        self.edges.push(i);
        let e = &mut self.entries[i];
        e.held_inside += 1;
        e.held_surely += usize::from(self.from_sure);
        if matches!(e.state, State::Seen | State::Chance) {
            let holders = e.holders();
            if e.held_surely >= holders {
                e.state = State::Sure;
                self.sure.push_back(i);
            } else if e.state == State::Seen && e.held_inside >= holders {
                // An ordinary host object all of whose holders are known, some only
                // through chances.
                e.state = State::Chance;
                self.chance.push_back(i);
            }
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
        // Tensors, nodes and owners may be looked into as a chance (owners cost little:
        // a handle and a `__dict__`, and they can hold themselves through the core).
        // An ordinary host object waits until every holder is known: looking into
        // shared ones (a module's globals, say) would only spend the budget.
        let chance = !matches!(obj, Obj::Host(_)) || owner_key.is_some();
        let mut e = Entry::new(obj, owner_key, refcount);
        if chance {
            e.state = State::Chance;
            self.chance.push_back(i);
        }
        self.entries.push(e);
        self.index.insert(addr, i);
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
                matches!(e.state, State::Explored(_))
                    && match &e.obj {
                        Obj::Host(_) => i == 0 || e.refcount == inside,
                        _ => e.holders() == inside,
                    }
            })
            .collect();
        // Whatever something held from outside reaches stays alive with it.
        let mut stack: Vec<usize> = (0..owned.len()).filter(|&i| !owned[i]).collect();
        while let Some(i) = stack.pop() {
            for &c in self.children(i) {
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
            held_surely: 0,
            state: State::Seen,
            children: (0, 0),
            reportable: (0, 0),
            target_refs: 0,
        }
    }
    /// Every holder of the object now, other than the region's own handle.
    fn holders(&self) -> usize {
        match &self.obj {
            Obj::Tensor(t) => t.owner_count() - 1,
            Obj::Node(n) => Arc::strong_count(n) - 1,
            Obj::Host(_) => self.refcount,
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
    if let Some(extras) = n.extras_cell().and_then(try_lock) {
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
