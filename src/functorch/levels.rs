//! The vmap levels open on this thread, innermost last.
//!
//! Level ids come from one process-wide counter, so an inner level always has a larger
//! id than the levels around it (the dispatcher opens the largest first) and wrappers
//! made on different threads never share a level. Ops running on engine threads need no
//! stack: a wrapper carries its level.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// What random ops do inside vmap (torch's `randomness=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Randomness {
    Error,
    Different,
    Same,
}

impl Randomness {
    pub fn parse(s: &str) -> Result<Randomness> {
        match s {
            "error" => Ok(Randomness::Error),
            "different" => Ok(Randomness::Different),
            "same" => Ok(Randomness::Same),
            other => Err(Error::runtime(format!(
                "Only allowed values for randomness are 'error', 'different', or 'same'. Got {other}"
            ))),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Level {
    pub id: u64,
    pub batch_size: usize,
    pub randomness: Randomness,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static STACK: RefCell<Vec<Level>> = const { RefCell::new(Vec::new()) };
}

/// Open a level; returns its id.
pub fn push(batch_size: usize, randomness: Randomness) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    STACK.with(|s| {
        s.borrow_mut().push(Level {
            id,
            batch_size,
            randomness,
        })
    });
    id
}

/// Close the innermost level.
pub fn pop() -> Result<Level> {
    STACK
        .with(|s| s.borrow_mut().pop())
        .ok_or_else(|| Error::runtime("vmap: no level to exit"))
}

/// The open levels, outermost first (copied: callers may run ops).
pub fn open() -> Vec<Level> {
    STACK.with(|s| s.borrow().clone())
}

/// Whether any level is open on this thread.
pub fn any_open() -> bool {
    STACK.with(|s| !s.borrow().is_empty())
}
