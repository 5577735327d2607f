//! The caching allocator: every heap allocation of the library goes through it (it is the
//! global allocator), and large blocks freed are kept for reuse instead of going back to
//! the system.
//!
//! Why: a kernel's output is a fresh buffer. Above glibc's mmap threshold each one is a
//! new mapping whose pages fault in on first touch, and freeing it unmaps it again, so a
//! training loop pays the page faults of every output on every step (several times the
//! arithmetic for cheap elementwise ops). Kept blocks stay mapped and warm.
//!
//! How: blocks of at least `MIN_CACHED` bytes are rounded up to a size class (eight
//! classes per power of two, so at most 12.5% is wasted) and allocated 64-byte aligned;
//! freeing one pushes it on its class's free list, allocating pops from it. Nothing is
//! zeroed on reuse unless the caller asked for zeroed memory (`alloc_zeroed`). The cache
//! is bounded (`LIMIT` bytes, `SLOTS` blocks a class); `empty_cache` returns everything to
//! the system. The free lists are fixed arrays, so the allocator never allocates itself,
//! and its lock is held only for a push or a pop.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Smaller blocks come from glibc's arenas, which already reuse them without faults.
const MIN_CACHED: usize = 64 << 10;
/// Alignment of cached blocks (a cache line; enough for every SIMD width we use).
const ALIGN: usize = 64;
/// Size classes: 8 per power of two from 64 KiB up to 2^47 bytes.
const CLASSES: usize = 8 * 32;
/// Blocks kept per class: enough for a graph that keeps a thousand same-sized outputs
/// for its backward (a wide graph of 256x256 activations: 128 dropped ~14% of them back
/// to the system each step). The lists are 2 MiB of zeroed static memory, touched only
/// as far as they fill.
const SLOTS: usize = 1024;
/// Bytes kept in all, at most.
const LIMIT: usize = 1 << 30;

struct FreeList {
    blocks: [usize; SLOTS],
    len: usize,
}

struct Cache {
    lists: [FreeList; CLASSES],
    bytes: usize,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    lists: [const {
        FreeList {
            blocks: [0; SLOTS],
            len: 0,
        }
    }; CLASSES],
    bytes: 0,
});

static HITS: AtomicUsize = AtomicUsize::new(0);
static MISSES: AtomicUsize = AtomicUsize::new(0);

fn cache() -> MutexGuard<'static, Cache> {
    // Every critical section is a push or a pop: a poisoned lock still guards a
    // consistent cache.
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The class of a `size`-byte request and the bytes a block of that class has; None for
/// sizes the cache does not serve.
fn class_of(size: usize) -> Option<(usize, usize)> {
    if size < MIN_CACHED {
        return None;
    }
    // size = 2^e * (1 + m/8 + ...): round up to the next eighth of the power of two.
    let e = usize::BITS - 1 - size.leading_zeros();
    let step = 1usize << (e - 3);
    let rounded = size.checked_add(step - 1)? & !(step - 1);
    let e2 = usize::BITS - 1 - rounded.leading_zeros();
    let m = (rounded >> (e2 - 3)) & 7;
    let class = (e2 as usize - MIN_CACHED.trailing_zeros() as usize) * 8 + m;
    (class < CLASSES).then_some((class, rounded))
}

/// The allocator (installed as `#[global_allocator]` in lib.rs).
pub struct CachingAllocator;

unsafe impl GlobalAlloc for CachingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match cached_layout(layout) {
            Some((class, block)) => take(class).unwrap_or_else(|| {
                MISSES.fetch_add(1, Ordering::Relaxed);
                System.alloc(block)
            }),
            None => System.alloc(layout),
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match cached_layout(layout) {
            Some((class, block)) => match take(class) {
                Some(p) => {
                    std::ptr::write_bytes(p, 0, layout.size());
                    p
                }
                None => {
                    MISSES.fetch_add(1, Ordering::Relaxed);
                    System.alloc_zeroed(block)
                }
            },
            None => System.alloc_zeroed(layout),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match cached_layout(layout) {
            Some((class, block)) => {
                if !give(class, ptr, block.size()) {
                    System.dealloc(ptr, block)
                }
            }
            None => System.dealloc(ptr, layout),
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        match (cached_layout(layout), cached_layout(new_layout)) {
            // Neither side is cached: the system may grow in place.
            (None, None) => System.realloc(ptr, layout, new_size),
            // Same class: the block already has room.
            (Some((a, _)), Some((b, _))) if a == b => ptr,
            _ => {
                let new = self.alloc(new_layout);
                if !new.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new
            }
        }
    }
}

/// The class and the real block layout of a request the cache serves.
fn cached_layout(layout: Layout) -> Option<(usize, Layout)> {
    if layout.align() > ALIGN {
        return None;
    }
    let (class, bytes) = class_of(layout.size())?;
    Some((class, Layout::from_size_align(bytes, ALIGN).ok()?))
}

fn take(class: usize) -> Option<*mut u8> {
    let mut c = cache();
    let Cache { lists, bytes } = &mut *c;
    let list = &mut lists[class];
    if list.len == 0 {
        return None;
    }
    list.len -= 1;
    let p = list.blocks[list.len] as *mut u8;
    *bytes -= class_of_bytes(class);
    drop(c);
    HITS.fetch_add(1, Ordering::Relaxed);
    Some(p)
}

/// Keep a freed block; false when its class or the cache is full.
fn give(class: usize, ptr: *mut u8, size: usize) -> bool {
    let mut c = cache();
    let Cache { lists, bytes } = &mut *c;
    let list = &mut lists[class];
    if list.len == SLOTS || *bytes + size > LIMIT {
        return false;
    }
    list.blocks[list.len] = ptr as usize;
    list.len += 1;
    *bytes += size;
    true
}

/// The block size of a class (the inverse of `class_of`).
fn class_of_bytes(class: usize) -> usize {
    let e = class / 8 + MIN_CACHED.trailing_zeros() as usize;
    (8 + class % 8) << (e - 3)
}

/// Return every kept block to the system (torch's `empty_cache`).
pub fn empty_cache() {
    loop {
        // One block at a time, freed outside the lock.
        let block = {
            let mut c = cache();
            let Cache { lists, bytes } = &mut *c;
            let Some((class, list)) = lists.iter_mut().enumerate().find(|(_, l)| l.len > 0) else {
                break;
            };
            list.len -= 1;
            let size = class_of_bytes(class);
            *bytes -= size;
            (list.blocks[list.len] as *mut u8, size)
        };
        // SAFETY: the block was allocated by `System` with this size and ALIGN, and the
        // cache held the only pointer to it.
        unsafe { System.dealloc(block.0, Layout::from_size_align_unchecked(block.1, ALIGN)) }
    }
}

/// Bytes kept now, reuses and fresh allocations since start (for tests and benchmarks).
pub fn stats() -> (usize, usize, usize) {
    (
        cache().bytes,
        HITS.load(Ordering::Relaxed),
        MISSES.load(Ordering::Relaxed),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_by_at_most_an_eighth_and_invert() {
        assert_eq!(class_of(MIN_CACHED - 1), None);
        let mut last = 0;
        for size in (MIN_CACHED..(64 << 20)).step_by(4093) {
            let (class, bytes) = class_of(size).expect("served");
            assert!(
                bytes >= size && bytes - size <= size / 8,
                "{size} -> {bytes}"
            );
            assert_eq!(class_of_bytes(class), bytes);
            assert_eq!(class_of(bytes), Some((class, bytes)));
            assert!(class >= last);
            last = class;
        }
    }

    #[test]
    fn a_freed_block_is_reused() {
        // Other tests' threads allocate and empty the cache concurrently and may take
        // the freed block in between: the reuse must show within a few tries.
        let n = 300_000usize;
        let reused = (0..50).any(|_| {
            // black_box: the optimizer must not elide these allocations.
            let a: Vec<u8> = std::hint::black_box(Vec::with_capacity(n));
            let p = a.as_ptr() as usize;
            drop(a);
            // Another size of the same class gets the same block back, and a zeroed
            // request reads zeros even from a reused block.
            let b: Vec<u8> = std::hint::black_box(Vec::with_capacity(n + 1000));
            let z = std::hint::black_box(vec![0u8; n]);
            assert!(z.iter().all(|&v| v == 0));
            b.as_ptr() as usize == p || z.as_ptr() as usize == p
        });
        assert!(reused);
    }
}
