//! The caching allocator's Python surface (see src/alloc.rs).

use pyo3::prelude::*;

/// Return the blocks the allocator keeps for reuse to the system.
#[pyfunction]
pub fn _empty_cache(py: Python<'_>) {
    py.detach(crate::alloc::empty_cache)
}

/// (bytes kept, reuses, fresh allocations) of the cached size classes.
#[pyfunction]
pub fn _cache_stats() -> (usize, usize, usize) {
    crate::alloc::stats()
}
