//! Saved-tensor hooks (spec autograd.md §11): a thread-local stack of (pack, unpack) pairs.
//! While a pair is active, every tensor a node saves is replaced by whatever `pack`
//! returns, and `unpack` turns it back into a tensor when backward needs it. The
//! bindings implement the pairs over Python callables.

use std::cell::RefCell;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// What `pack` produced; turned back into a tensor by `unpack`.
pub trait Packed: Send + Sync {
    fn unpack(&self) -> Result<Tensor>;
    /// Host-language objects the packed value holds (see autograd::foreign).
    fn foreign_refs(&self, _out: &mut Vec<usize>) {}
}

pub trait SavedTensorHooks: Send + Sync {
    fn pack(&self, t: &Tensor) -> Result<Box<dyn Packed>>;
}

#[derive(Clone)]
enum Entry {
    Hooks(Arc<dyn SavedTensorHooks>),
    /// `disable_saved_tensors_hooks(message)`.
    Disabled(String),
}

thread_local! {
    static STACK: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// This thread's whole stack, to carry to a thread working for it.
#[derive(Clone, Default)]
pub struct Stack(Vec<Entry>);

pub fn snapshot() -> Stack {
    STACK.with(|s| Stack(s.borrow().clone()))
}

/// Install `stack` on this thread, returning the one replaced.
pub fn replace(stack: Stack) -> Stack {
    STACK.with(|s| Stack(std::mem::replace(&mut *s.borrow_mut(), stack.0)))
}

/// The innermost active pair, if any (a disabled region hides outer pairs).
pub fn current() -> Option<Arc<dyn SavedTensorHooks>> {
    STACK.with(|s| match s.borrow().last() {
        Some(Entry::Hooks(h)) => Some(h.clone()),
        _ => None,
    })
}

/// The message of the innermost disabled region, if hooks are disabled.
pub fn disabled_message() -> Option<String> {
    STACK.with(|s| {
        s.borrow().iter().rev().find_map(|e| match e {
            Entry::Disabled(m) => Some(m.clone()),
            Entry::Hooks(_) => None,
        })
    })
}

pub fn push_hooks(hooks: Arc<dyn SavedTensorHooks>) -> Result<()> {
    if let Some(msg) = disabled_message() {
        return Err(Error::runtime(msg));
    }
    STACK.with(|s| s.borrow_mut().push(Entry::Hooks(hooks)));
    Ok(())
}

/// Entering a disabled region while a pair is registered fails with the region's own
/// message, as torch's `disable_saved_tensors_hooks` does (issue 7 §6).
pub fn push_disabled(message: String) -> Result<()> {
    if any_hooks().is_some() {
        return Err(Error::runtime(message));
    }
    STACK.with(|s| s.borrow_mut().push(Entry::Disabled(message)));
    Ok(())
}

pub fn pop() {
    STACK.with(|s| {
        s.borrow_mut().pop();
    });
}

/// Hooks active where a tensor is being saved. Saving while a pair is registered inside
/// (or around) a disabled region fails with that region's message.
pub fn for_saving() -> Result<Option<Arc<dyn SavedTensorHooks>>> {
    let innermost = STACK.with(|s| {
        s.borrow().iter().rev().find_map(|e| match e {
            Entry::Hooks(h) => Some(h.clone()),
            Entry::Disabled(_) => None,
        })
    });
    let Some(hooks) = innermost.or_else(any_hooks) else {
        return Ok(None);
    };
    if let Some(msg) = disabled_message() {
        return Err(Error::runtime(msg));
    }
    Ok(Some(hooks))
}

fn any_hooks() -> Option<Arc<dyn SavedTensorHooks>> {
    STACK.with(|s| {
        s.borrow().iter().rev().find_map(|e| match e {
            Entry::Hooks(h) => Some(h.clone()),
            Entry::Disabled(_) => None,
        })
    })
}
