//! The per-call arena of one backward pass (see the engine module docs).

use std::collections::BinaryHeap;

use crate::engine::addr_map::AddrMap;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::autograd::node::{Edge, Node, NodeKind};
use crate::autograd::{anomaly, grad_mode};
use crate::engine::current::{self, TaskView};
use crate::engine::modes::{self, ThreadModes};
use crate::engine::workers;
use crate::engine::{apply_node, validate_output, BackwardOptions, Root};
use crate::error::Result;
use crate::ops::Grads;
use crate::tensor::Tensor;

/// A node is worth a parallel task when its incoming gradients hold this many elements.
const PARALLEL_NODE_GRAIN: usize = 1 << 14;
/// At most this many big nodes run in one parallel wave (bounds peak memory).
const MAX_PARALLEL_BATCH: usize = 32;
/// Nested (re-entrant) backward calls one thread runs on its own stack; a deeper one
/// runs on a fresh thread (torch's limit too), so a custom Function whose backward calls
/// backward thousands of levels deep needs no deep stack (neither Rust's nor Python's).
const MAX_REENTRANT_DEPTH: usize = 60;

/// Sort key of one contribution to an input buffer: (producer rank, output position).
type Key = (usize, usize);

struct Slot {
    contributions: SmallVec<[(Key, Tensor); 1]>,
}

struct GraphTask {
    nodes: Vec<Arc<Node>>,
    /// Child indices per node, aligned with `next_edges` (None: no edge or not reached).
    children: Vec<SmallVec<[Option<usize>; 2]>>,
    exec: Vec<bool>,
    captured: Vec<bool>,
    deps: Vec<usize>,
    buffers: Vec<SmallVec<[Slot; 1]>>,
}

fn node_key(n: &Arc<Node>) -> usize {
    Arc::as_ptr(n) as usize
}

impl GraphTask {
    /// Discover every node reachable from the roots (iterative DFS).
    fn discover(roots: &[Root]) -> (GraphTask, AddrMap<usize, usize>) {
        let mut index: AddrMap<usize, usize> = AddrMap::default();
        let mut nodes: Vec<Arc<Node>> = Vec::new();
        let mut stack: Vec<Arc<Node>> = Vec::new();
        let mut visit = |node: &Arc<Node>, stack: &mut Vec<Arc<Node>>| {
            if let std::collections::hash_map::Entry::Vacant(slot) = index.entry(node_key(node)) {
                slot.insert(nodes.len());
                nodes.push(node.clone());
                stack.push(node.clone());
            }
        };
        for r in roots {
            visit(&r.edge.node, &mut stack);
        }
        while let Some(n) = stack.pop() {
            for e in n.next_edges.iter().flatten() {
                visit(&e.node, &mut stack);
            }
        }
        let children = nodes
            .iter()
            .map(|n| {
                n.next_edges
                    .iter()
                    .map(|e| e.as_ref().map(|e| index[&node_key(&e.node)]))
                    .collect()
            })
            .collect();
        let count = nodes.len();
        let buffers = nodes
            .iter()
            .map(|n| {
                (0..n.num_inputs())
                    .map(|_| Slot {
                        contributions: SmallVec::new(),
                    })
                    .collect()
            })
            .collect();
        let task = GraphTask {
            nodes,
            children,
            exec: vec![false; count],
            captured: vec![false; count],
            deps: vec![0; count],
            buffers,
        };
        (task, index)
    }

    /// Post-order of the reachable DAG (children before parents).
    fn post_order(&self, roots: &[usize]) -> Vec<usize> {
        let n = self.nodes.len();
        let mut state = vec![0u8; n]; // 0 new, 1 open, 2 done
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for &r in roots {
            if state[r] != 0 {
                continue;
            }
            state[r] = 1;
            stack.push((r, 0));
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                let kids = &self.children[node];
                if *next < kids.len() {
                    let c = kids[*next];
                    *next += 1;
                    if let Some(c) = c {
                        if state[c] == 0 {
                            state[c] = 1;
                            stack.push((c, 0));
                        }
                    }
                } else {
                    state[node] = 2;
                    order.push(node);
                    stack.pop();
                }
            }
        }
        order
    }

    /// Elements waiting in a node's input buffer (its work estimate).
    fn buffered_numel(&self, idx: usize) -> usize {
        self.buffers[idx]
            .iter()
            .flat_map(|s| s.contributions.iter())
            .map(|(_, t)| t.numel())
            .sum()
    }

    /// Sum one node's buffered contributions, in key order.
    fn take_inputs(&mut self, idx: usize) -> Result<Vec<Option<Tensor>>> {
        let slots = std::mem::take(&mut self.buffers[idx]);
        let mut out = Vec::with_capacity(slots.len());
        for mut slot in slots {
            slot.contributions.sort_by_key(|(k, _)| *k);
            let mut it = slot.contributions.into_iter().map(|(_, t)| t);
            let mut acc = it.next();
            for t in it {
                acc = Some(crate::ops::binary::add(&acc.expect("set above"), &t)?);
            }
            out.push(acc);
        }
        Ok(out)
    }
}

/// Nodes whose gradients are all in, highest sequence number first (later ops run
/// first, as in torch). With parallelism on, nodes are split by the size of their
/// incoming gradients: small ones run inline first (they are cheap and usually release
/// more work), then every big ready node runs at once in a wave (see `workers`).
/// Serially, one heap keeps torch's exact order.
struct ReadySet {
    small: crate::engine::ready_heap::ReadyHeap,
    big: BinaryHeap<(u64, usize)>,
    parallel: bool,
}

impl ReadySet {
    fn new(parallel: bool) -> Self {
        ReadySet {
            small: crate::engine::ready_heap::ReadyHeap::new(),
            big: BinaryHeap::new(),
            parallel,
        }
    }

    fn push(&mut self, sequence_nr: u64, idx: usize, numel: usize) {
        if self.parallel && numel >= PARALLEL_NODE_GRAIN {
            self.big.push((sequence_nr, idx));
        } else {
            self.small.push(sequence_nr, idx);
        }
    }

    fn next_batch(&mut self) -> SmallVec<[usize; 8]> {
        if let Some((_, i)) = self.small.pop() {
            return smallvec::smallvec![i];
        }
        let mut batch = SmallVec::new();
        while batch.len() < MAX_PARALLEL_BATCH {
            match self.big.pop() {
                Some((_, i)) => batch.push(i),
                None => break,
            }
        }
        batch
    }
}

/// Run backward from `roots`. `inputs` (may be empty for "all leaves") are the edges whose
/// gradients are requested; the result has one entry per input (None when unreached).
pub fn run_backward(
    roots: Vec<Root>,
    inputs: &[Edge],
    opts: BackwardOptions,
) -> Result<Vec<Option<Tensor>>> {
    if modes::reentrant_depth() >= MAX_REENTRANT_DEPTH {
        return run_on_fresh_thread(roots, inputs, opts);
    }
    let _depth = modes::Reentrant::enter();
    run_backward_here(roots, inputs, opts)
}

/// A deep re-entrant backward: run it on a new thread with a fresh stack (and the
/// caller's modes), the caller waiting. Callers from Python have released the GIL.
fn run_on_fresh_thread(
    roots: Vec<Root>,
    inputs: &[Edge],
    opts: BackwardOptions,
) -> Result<Vec<Option<Tensor>>> {
    let modes = ThreadModes::capture().on_fresh_stack();
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("ferrograd-reentrant".into())
            .stack_size(workers::STACK_SIZE)
            .spawn_scoped(scope, move || {
                let _modes = modes.enter();
                run_backward(roots, inputs, opts)
            })
            .map_err(|e| {
                crate::error::Error::runtime(format!(
                    "could not start a thread for a re-entrant backward: {e}"
                ))
            })?;
        thread
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

fn run_backward_here(
    roots: Vec<Root>,
    inputs: &[Edge],
    opts: BackwardOptions,
) -> Result<Vec<Option<Tensor>>> {
    let (mut task, index) = GraphTask::discover(&roots);
    let root_idx: Vec<usize> = roots
        .iter()
        .map(|r| index[&node_key(&r.edge.node)])
        .collect();

    // Which (node, input slot) pairs are captured for which requested input.
    let mut captures: AddrMap<(usize, usize), SmallVec<[usize; 1]>> = AddrMap::default();
    let mut results: Vec<Option<Tensor>> = vec![None; inputs.len()];
    if inputs.is_empty() {
        task.exec.iter_mut().for_each(|e| *e = true);
    } else {
        for (pos, e) in inputs.iter().enumerate() {
            let Some(&i) = index.get(&node_key(&e.node)) else {
                continue;
            };
            let is_leaf = matches!(e.node.kind, NodeKind::AccumulateGrad(_));
            if opts.accumulate_grad && is_leaf {
                task.exec[i] = true;
            } else {
                task.captured[i] = true;
                captures.entry((i, e.input_nr)).or_default().push(pos);
            }
        }
        for &n in &task.post_order(&root_idx) {
            if task.children[n]
                .iter()
                .flatten()
                .any(|&c| task.exec[c] || task.captured[c])
            {
                task.exec[n] = true;
            }
        }
    }
    for n in 0..task.nodes.len() {
        if !task.exec[n] {
            continue;
        }
        for &c in task.children[n].iter().flatten() {
            if task.exec[c] || task.captured[c] {
                task.deps[c] += 1;
            }
        }
    }

    for (r, root) in roots.into_iter().enumerate() {
        let i = root_idx[r];
        task.buffers[i][root.edge.input_nr]
            .contributions
            .push(((r, 0), root.grad));
    }
    // The plan is fixed from here on; hooks may consult it (see engine::current).
    let view = TaskView::new(
        index,
        std::mem::take(&mut task.exec),
        std::mem::take(&mut task.captured),
        !inputs.is_empty(),
    );
    let _current = current::Enter::new(&view);
    let n_roots = root_idx.len();
    // The inter-op count (torch's set_num_interop_threads) bounds a wave's threads.
    let threads = crate::threads::num_interop_threads();
    let parallel = grad_mode::is_multithreading_enabled() && threads > 1;
    let mut ready = ReadySet::new(parallel);
    let mut queued = vec![false; task.nodes.len()];
    for &i in &root_idx {
        if task.deps[i] == 0 && !queued[i] && view.reached(i) {
            queued[i] = true;
            ready.push(task.nodes[i].sequence_nr, i, task.buffered_numel(i));
        }
    }

    loop {
        let batch_idx = ready.next_batch();
        if batch_idx.is_empty() {
            break;
        }
        let mut batch: Vec<(usize, Vec<Option<Tensor>>)> = Vec::with_capacity(batch_idx.len());
        {
            // Hooks run with grad mode = create_graph (spec §10.2), in torch's order:
            // tensor hooks, then captured/retained grads, then node pre-hooks (§10.3).
            let _mode = grad_mode::GradModeGuard::new(opts.create_graph);
            for idx in batch_idx {
                let inputs = task.take_inputs(idx)?;
                let node = &task.nodes[idx];
                let grads = crate::engine::run_tensor_pre_hooks(node, inputs)?;
                if view.captured[idx] {
                    record_captures(idx, &grads, &captures, &mut results);
                }
                retain_grads(node, &grads, opts.create_graph)?;
                let grads = if view.exec[idx] {
                    crate::engine::run_node_pre_hooks(node, grads)?
                } else {
                    grads
                };
                batch.push((idx, grads));
            }
        }
        let outputs: Vec<(usize, Result<Grads>)> = if batch.len() > 1 {
            let items = batch
                .into_iter()
                .map(|(idx, grads)| (idx, task.nodes[idx].clone(), view.exec[idx], grads))
                .collect();
            let view = view.clone();
            workers::run_wave(items, threads - 1, move |(idx, node, exec, grads)| {
                let _current = current::Enter::new(&view);
                (idx, run_one(&node, exec, grads, opts))
            })
        } else {
            batch
                .into_iter()
                .map(|(idx, grads)| (idx, run_one(&task.nodes[idx], view.exec[idx], grads, opts)))
                .collect()
        };

        for (idx, out) in outputs {
            let out = out?;
            if !view.exec[idx] {
                continue;
            }
            let node = task.nodes[idx].clone();
            for (i, child) in task.children[idx].clone().into_iter().enumerate() {
                let Some(c) = child else { continue };
                if !view.reached(c) {
                    continue;
                }
                if let Some(Some(g)) = out.get(i) {
                    let g = validate_output(&node, i, g.clone())?;
                    let input_nr = node.next_edges[i]
                        .as_ref()
                        .expect("child implies edge")
                        .input_nr;
                    task.buffers[c][input_nr]
                        .contributions
                        .push(((n_roots + idx, i), g));
                }
                task.deps[c] -= 1;
                if task.deps[c] == 0 && !queued[c] {
                    queued[c] = true;
                    ready.push(task.nodes[c].sequence_nr, c, task.buffered_numel(c));
                }
            }
        }
    }
    Ok(results)
}

fn run_one(
    node: &Arc<Node>,
    exec: bool,
    grads: Vec<Option<Tensor>>,
    opts: BackwardOptions,
) -> Result<Grads> {
    if !exec {
        return Ok(Grads::new());
    }
    let _evaluate = crate::profiler::node_range(node, true, &[]);
    let no_post_hooks = node.extras_if_any().is_none_or(|e| e.post_hooks.is_empty());
    let kept = if no_post_hooks {
        None
    } else {
        Some(grads.clone())
    };
    let out = {
        let _executing = anomaly::Executing::new(node);
        let _apply = crate::profiler::node_range(node, false, &grads);
        apply_node(node, grads, opts.create_graph)
    };
    if !opts.retain_graph {
        node.release_saved();
    }
    let out = match kept {
        Some(grads) => {
            let _mode = grad_mode::GradModeGuard::new(opts.create_graph);
            out.and_then(|o| crate::engine::run_node_post_hooks(node, o, &grads))
        }
        None => out,
    };
    if anomaly::is_enabled() {
        let out = out.and_then(|o| check_nan(node, o));
        if out.is_err() {
            anomaly::warn_error_in(node);
        }
        return out;
    }
    out
}

/// Anomaly mode: a NaN in any result of a node is an error naming the node and output.
fn check_nan(node: &Node, out: Grads) -> Result<Grads> {
    if !anomaly::check_nan() {
        return Ok(out);
    }
    for (i, g) in out.iter().enumerate() {
        if let Some(g) = g {
            if crate::ops::device::has_nan(g)? {
                return Err(crate::error::Error::runtime(format!(
                    "Function '{}' returned nan values in its {}th output.",
                    node.name(),
                    i
                )));
            }
        }
    }
    Ok(out)
}

/// `autograd.grad`: store the gradients arriving at captured node `idx`.
fn record_captures(
    idx: usize,
    grads: &[Option<Tensor>],
    captures: &AddrMap<(usize, usize), SmallVec<[usize; 1]>>,
    results: &mut [Option<Tensor>],
) {
    for (slot, g) in grads.iter().enumerate() {
        if let Some(positions) = captures.get(&(idx, slot)) {
            for &p in positions {
                results[p] = g.clone();
            }
        }
    }
}

/// `retain_grad()`: non-leaf tensors produced by this node get the incoming gradient.
fn retain_grads(node: &Arc<Node>, grads: &[Option<Tensor>], create_graph: bool) -> Result<()> {
    let retained: SmallVec<[(usize, crate::tensor::WeakTensor); 1]> = node
        .extras_if_any()
        .map(|e| e.retained.clone())
        .unwrap_or_default();
    for (slot, weak) in retained {
        let (Some(t), Some(Some(g))) = (weak.upgrade(), grads.get(slot)) else {
            continue;
        };
        accumulate_retained(&t, g, create_graph)?;
    }
    Ok(())
}

/// Add `g` into a non-leaf's `.grad` (retained grads and `backward(inputs=[nonleaf])`).
/// Like leaf accumulation, the sum is computed outside `t`'s metadata lock and published
/// only if `.grad` did not change meanwhile (else recomputed), so concurrent passes into
/// one retained tensor lose nothing.
fn accumulate_retained(t: &Tensor, g: &Tensor, create_graph: bool) -> Result<()> {
    let _mode = grad_mode::GradModeGuard::new(create_graph);
    loop {
        let old = t.grad();
        let new = match &old {
            None => {
                if create_graph {
                    crate::ops::unary::clone(g)?
                } else {
                    crate::ops::device::cast(g, g.dtype())?
                }
            }
            Some(old) => crate::ops::binary::add(old, g)?,
        };
        let mut meta = t.meta();
        let unchanged = match (&meta.grad, &old) {
            (None, None) => true,
            (Some(now), Some(old)) => now.ptr_eq(old),
            _ => false,
        };
        if unchanged {
            meta.grad = Some(new);
            return Ok(());
        }
    }
}
