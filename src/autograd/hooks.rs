//! Backward hooks (spec autograd.md §10). The core only stores and calls them; the
//! bindings implement them over Python callables and do torch's return-value checks.
//!
//! Where they live: a tensor pre-hook of a non-leaf belongs to its grad_fn (keyed by the
//! tensor's output_nr), so after an in-place op earlier hooks keep seeing the gradient
//! of the old value; a leaf's tensor hooks and post-accumulate hooks live on the leaf.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::Result;
use crate::tensor::Tensor;

pub type Grads = Vec<Option<Tensor>>;

/// `t.register_hook(fn)`: may replace the gradient.
pub trait TensorHook: Send + Sync {
    fn call(&self, grad: &Tensor) -> Result<Option<Tensor>>;
    /// Host-language objects this hook holds (see autograd::foreign).
    fn foreign_refs(&self, _out: &mut Vec<usize>) {}
}

/// `node.register_prehook(fn)`: sees (and may replace) the node's incoming gradients.
pub trait NodePreHook: Send + Sync {
    fn call(&self, grad_outputs: &[Option<Tensor>]) -> Result<Option<Grads>>;
    /// Host-language objects this hook holds (see autograd::foreign).
    fn foreign_refs(&self, _out: &mut Vec<usize>) {}
}

/// `node.register_hook(fn)`: sees the node's results and inputs, may replace results.
pub trait NodePostHook: Send + Sync {
    fn call(
        &self,
        grad_inputs: &[Option<Tensor>],
        grad_outputs: &[Option<Tensor>],
    ) -> Result<Option<Grads>>;
    /// Host-language objects this hook holds (see autograd::foreign).
    fn foreign_refs(&self, _out: &mut Vec<usize>) {}
}

/// `leaf.register_post_accumulate_grad_hook(fn)`: runs after `.grad` was updated.
pub trait PostAccumulateHook: Send + Sync {
    fn call(&self, param: &Tensor) -> Result<()>;
    /// Host-language objects this hook holds (see autograd::foreign).
    fn foreign_refs(&self, _out: &mut Vec<usize>) {}
}

static NEXT_HOOK_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh id for a registration (what a removable handle refers to).
pub fn next_hook_id() -> u64 {
    NEXT_HOOK_ID.fetch_add(1, Ordering::Relaxed)
}

/// Hooks in registration order, each with its id.
pub struct HookList<H: ?Sized> {
    items: Vec<(u64, Arc<H>)>,
}

impl<H: ?Sized> Default for HookList<H> {
    fn default() -> Self {
        HookList { items: Vec::new() }
    }
}

impl<H: ?Sized> HookList<H> {
    pub fn push(&mut self, hook: Arc<H>) -> u64 {
        let id = next_hook_id();
        self.items.push((id, hook));
        id
    }
    /// Unregister `id`, handing the hook back: the caller drops it once the lock that
    /// guards this list is released (dropping a host object may run host code).
    #[must_use = "drop the removed hook outside the list's lock"]
    pub fn remove(&mut self, id: u64) -> Option<Arc<H>> {
        let pos = self.items.iter().position(|(i, _)| *i == id)?;
        Some(self.items.remove(pos).1)
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = &Arc<H>> {
        self.items.iter().map(|(_, h)| h)
    }
    /// Remove every hook, handing them to the caller (to drop outside any lock).
    pub fn take_all(&mut self) -> Vec<Arc<H>> {
        self.items.drain(..).map(|(_, h)| h).collect()
    }
    /// A snapshot, so hooks can run without holding the lock that guards the list.
    pub fn snapshot(&self) -> Vec<Arc<H>> {
        self.items.iter().map(|(_, h)| h.clone()).collect()
    }
}

/// Chain tensor hooks: each sees the previous one's result.
pub fn run_tensor_hooks(hooks: &[Arc<dyn TensorHook>], grad: Tensor) -> Result<Tensor> {
    let mut g = grad;
    for h in hooks {
        if let Some(new) = h.call(&g)? {
            g = new;
        }
    }
    Ok(g)
}
