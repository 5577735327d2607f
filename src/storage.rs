//! The element buffer shared (by `Arc`) between a tensor and all of its views.
//!
//! Note: storage mutability. In-place ops and `.grad` accumulation write through shared
//! storage while other tensors (views, detach() aliases) may read it. Options weighed:
//! a `RwLock` per storage costs little but deadlocks on `x.mul_(x)`-style aliasing
//! (read and write of one storage in one op) and on writer-preferring locks when two
//! threads interleave; copying on write would break view semantics. We follow torch and
//! numpy instead: the buffer is an `UnsafeCell`-like raw allocation whose address and
//! length never change after creation, kernels that write compute into a fresh buffer
//! first whenever the destination may alias an input (see `kernels::copy`), and
//! concurrent unsynchronized writes from several user threads to one tensor are the
//! user's race, exactly as in torch: they can give garbage values, never a dangling
//! pointer, because the allocation outlives every tensor that refers to it.

use std::alloc::{alloc_zeroed, dealloc, Layout as AllocLayout};
use std::any::Any;
use std::ptr::NonNull;

use crate::dtype::{DType, Element};
use crate::error::{Error, Result};

const ALIGN: usize = 64;

/// A kernel's output vector, kept as the owner of the storage built on it.
struct SendVec<T>(#[allow(dead_code)] Vec<T>);

/// Fail with torch's allocator error when `count` elements of `itemsize` bytes cannot be
/// allocated, before any kernel tries (Rust's Vec would abort the process instead).
pub fn ensure_allocatable(count: usize, itemsize: usize) -> Result<()> {
    let bytes = count
        .checked_mul(itemsize)
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            Error::runtime(format!(
                "Storage size calculation overflowed with sizes=[{count}]"
            ))
        })?;
    if bytes < (1 << 26) {
        return Ok(());
    }
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(bytes).map_err(|_| {
        Error::runtime(format!(
            "DefaultCPUAllocator: can't allocate memory: you tried to allocate {bytes} bytes. Error code 12 (Cannot allocate memory)"
        ))
    })
}

enum Owner {
    /// Allocated here with `ALIGN`; freed on drop.
    Rust,
    /// Memory owned by someone else (a numpy array); kept alive by this box.
    Foreign(#[allow(dead_code)] Box<dyn Any + Send + Sync>),
}

pub struct Storage {
    ptr: NonNull<u8>,
    bytes: usize,
    dtype: DType,
    owner: Owner,
}

// SAFETY: the allocation is plain numeric data whose address never changes; see the
// note at the top of this file for the (torch-like) aliasing discipline.
unsafe impl Send for Storage {}
unsafe impl Sync for Storage {}

impl Storage {
    /// A zero-filled buffer of `len` elements. Fails cleanly (no abort) when the
    /// allocation cannot be made.
    pub fn zeros(dtype: DType, len: usize) -> Result<Storage> {
        let bytes = len
            .checked_mul(dtype.itemsize())
            .filter(|&b| b <= isize::MAX as usize - ALIGN)
            .ok_or_else(|| {
                Error::runtime(format!(
                    "Storage size calculation overflowed with sizes=[{len}]"
                ))
            })?;
        let ptr = if bytes == 0 {
            NonNull::new(ALIGN as *mut u8).expect("nonzero")
        } else {
            let layout = AllocLayout::from_size_align(bytes, ALIGN)
                .map_err(|e| Error::runtime(e.to_string()))?;
            // SAFETY: layout has nonzero size.
            let p = unsafe { alloc_zeroed(layout) };
            NonNull::new(p).ok_or_else(|| {
                Error::runtime(format!(
                    "DefaultCPUAllocator: can't allocate memory: you tried to allocate {bytes} bytes. Error code 12 (Cannot allocate memory)"
                ))
            })?
        };
        Ok(Storage {
            ptr,
            bytes,
            dtype,
            owner: Owner::Rust,
        })
    }

    /// Adopt a vector's buffer without copying (kernels build their outputs in Vecs).
    pub fn from_vec<T: Element>(mut v: Vec<T>) -> Storage {
        let len = v.len();
        let ptr = v.as_mut_ptr() as *mut u8;
        // SAFETY: the Vec's buffer holds `len` initialized T's and never moves while the
        // Vec (kept in `owner`) is alive; moving the Vec does not move its heap buffer.
        unsafe { Storage::from_foreign(ptr, len, T::DTYPE, Box::new(SendVec(v))) }
    }

    /// Wrap memory owned elsewhere.
    ///
    /// # Safety
    /// `ptr` must point to `len` valid, suitably aligned elements of `dtype` that stay
    /// alive (and do not move) as long as `owner` does.
    pub unsafe fn from_foreign(
        ptr: *mut u8,
        len: usize,
        dtype: DType,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Storage {
        let ptr = NonNull::new(ptr).unwrap_or(NonNull::new(ALIGN as *mut u8).expect("nonzero"));
        Storage {
            ptr,
            bytes: len * dtype.itemsize(),
            dtype,
            owner: Owner::Foreign(owner),
        }
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }
    pub fn len(&self) -> usize {
        self.bytes / self.dtype.itemsize()
    }
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
    pub fn nbytes(&self) -> usize {
        self.bytes
    }
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The elements, typed. Panics only on an internal dtype mismatch (a bug, not input).
    pub fn slice<T: Element>(&self) -> &[T] {
        assert_eq!(T::DTYPE, self.dtype, "storage dtype mismatch");
        // SAFETY: ptr/len describe a live allocation of T (see constructors).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr() as *const T, self.len()) }
    }

    /// Mutable access for in-place kernels.
    ///
    /// # Safety
    /// The caller must not hold another slice of this storage that overlaps the
    /// elements it writes (kernels copy aliased inputs first).
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice_mut<T: Element>(&self) -> &mut [T] {
        assert_eq!(T::DTYPE, self.dtype, "storage dtype mismatch");
        std::slice::from_raw_parts_mut(self.ptr.as_ptr() as *mut T, self.len())
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Owner::Rust = self.owner {
            if self.bytes > 0 {
                // SAFETY: allocated in `zeros` with this exact layout.
                unsafe {
                    dealloc(
                        self.ptr.as_ptr(),
                        AllocLayout::from_size_align_unchecked(self.bytes, ALIGN),
                    )
                }
            }
        }
    }
}
