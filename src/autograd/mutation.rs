//! An observer told about each in-place write just before it happens, on the writing
//! thread (like torch's thread-local dispatch modes). `allow_mutation_on_saved_tensors`
//! uses it to copy saved tensors before they are overwritten.

use std::cell::RefCell;
use std::sync::Arc;

use crate::error::Result;
use crate::tensor::Tensor;

pub trait MutationObserver: Send + Sync {
    /// `target` is about to be written in place; an error cancels the write.
    fn before_write(&self, target: &Tensor) -> Result<()>;
}

thread_local! {
    static OBSERVER: RefCell<Option<Arc<dyn MutationObserver>>> = const { RefCell::new(None) };
}

/// Install `observer` on this thread (None removes it).
pub fn set_observer(observer: Option<Arc<dyn MutationObserver>>) {
    OBSERVER.with(|o| *o.borrow_mut() = observer);
}

/// Install `observer` on this thread, returning the one replaced (to carry the observer
/// to a thread working for this one).
pub fn replace_observer(
    observer: Option<Arc<dyn MutationObserver>>,
) -> Option<Arc<dyn MutationObserver>> {
    OBSERVER.with(|o| std::mem::replace(&mut *o.borrow_mut(), observer))
}

pub fn observer() -> Option<Arc<dyn MutationObserver>> {
    OBSERVER.with(|o| o.borrow().clone())
}

/// Tell the observer (if any) that `target` is about to be written in place.
pub fn before_write(target: &Tensor) -> Result<()> {
    // Cloned out of the cell so the observer may itself run ops (it clones tensors).
    let observer = OBSERVER.with(|o| o.borrow().clone());
    match observer {
        Some(o) => o.before_write(target),
        None => Ok(()),
    }
}
