//! The element buffer shared (by `Arc`) between a tensor and all of its views, and
//! `Access`, the only way kernels reach its elements.
//!
//! Note: storage mutability. In-place ops and `.grad` accumulation write through shared
//! storage while other tensors (views, detach() aliases) may read it. Options weighed:
//! a `RwLock` per storage costs little but deadlocks on `x.mul_(x)`-style aliasing
//! (read and write of one storage in one op) and on writer-preferring locks when two
//! threads interleave; copying on write would break view semantics. We follow torch and
//! numpy instead: the buffer is a raw allocation whose address and length never change
//! after creation, kernels that write compute into a fresh buffer first whenever the
//! destination may alias an input (see `kernels::copy`), and two threads writing the
//! *same* elements of one tensor without synchronization is the user's race, exactly as
//! in torch. Two threads writing *disjoint* views of one tensor is legal and sound: see
//! the access note below.
//!
//! Note: storage access (the safety invariant, enforced here and nowhere else).
//! `Storage` never hands out a `&[T]` or `&mut [T]`: a whole-buffer slice would make
//! two threads writing disjoint views of one tensor hold overlapping `&mut` (undefined
//! behaviour even when the elements they touch differ). Kernels instead build an
//! `Access` from a tensor's `Data` (a storage and a layout checked, with checked
//! arithmetic, to reach only elements inside the buffer when the `Data` was made) or
//! from a storage and a layout derived from it (`Access::new` checks that one again);
//! both check that the dtype matches. After that:
//! 1. Bounds: a kernel only passes `Access` offsets the layout produces (its runs, or
//!    offsets of a layout it derived by broadcasting/permuting, which reach no further),
//!    so every pointer it forms is inside the allocation.
//! 2. Aliasing: elements are read and written through raw pointers. A reference to
//!    storage memory is formed only by the `unsafe` slice methods below, only over
//!    elements the layout covers, and only for the duration of one kernel, during which
//!    the kernel writes nothing that reference covers (outputs are fresh buffers; an
//!    in-place write copies its source out first). Tensors with disjoint elements,
//!    written from several threads, therefore never alias a reference.
//! 3. Validity: `bool` storage can be written by foreign code (a numpy array shares its
//!    memory), so a bool is read as its byte and normalized (`!= 0`); no `&[bool]` over
//!    storage is ever formed. Every other element type is valid for every bit pattern.
//! 4. Lifetime: `Access` borrows the `Storage`, which frees (or releases its foreign
//!    owner) only when the last `Arc` to it drops.

use std::alloc::{alloc_zeroed, dealloc, Layout as AllocLayout};
use std::any::Any;
use std::borrow::Cow;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::device::Device;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::layout::Layout;

const ALIGN: usize = 64;

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

/// The alignment Rust requires of one element of `dtype` (foreign buffers are checked
/// against it before they become storage).
pub fn align_of(dtype: DType) -> usize {
    crate::with_dtype!(dtype, T => std::mem::align_of::<T>())
}

enum Owner {
    /// Allocated here with `ALIGN`; freed on drop.
    Rust,
    /// A `Vec`'s buffer adopted in place (`from_vec`): freed on drop with the layout the
    /// `Vec` allocated it with, so no box is needed to keep the `Vec` itself.
    Vec(AllocLayout),
    /// Memory owned by someone else (a numpy array); kept alive by this box.
    Foreign(#[allow(dead_code)] Box<dyn Any + Send + Sync>),
}

pub struct Storage {
    ptr: NonNull<u8>,
    bytes: usize,
    dtype: DType,
    /// Where the bytes live; the backend for this device is the only code that reads
    /// them (`kernels::backend_for`). Only `Device::CPU` is made in this build.
    device: Device,
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
        crate::profiler::memory(bytes as i64);
        Ok(Storage {
            ptr,
            bytes,
            dtype,
            device: Device::CPU,
            owner: Owner::Rust,
        })
    }

    /// Adopt a vector's buffer without copying (kernels build their outputs in Vecs).
    pub fn from_vec<T: Element>(v: Vec<T>) -> Storage {
        let mut v = std::mem::ManuallyDrop::new(v);
        let (ptr, len, capacity) = (v.as_mut_ptr(), v.len(), v.capacity());
        // What `Vec<T>` allocated its buffer with, so `Drop` can hand the buffer back as
        // the Vec would have. Without capacity there is no buffer (and no bytes to free).
        let allocated = (capacity > 0 && std::mem::size_of::<T>() > 0)
            .then(|| AllocLayout::array::<T>(capacity).expect("a Vec's own layout"));
        if allocated.is_some() {
            crate::profiler::memory((len * std::mem::size_of::<T>()) as i64);
        }
        Storage {
            // Never null: a Vec's pointer is dangling-but-aligned when it has no buffer.
            ptr: NonNull::new(ptr as *mut u8).expect("a Vec's pointer is not null"),
            bytes: len * std::mem::size_of::<T>(),
            dtype: T::DTYPE,
            device: Device::CPU,
            owner: allocated.map_or(Owner::Rust, Owner::Vec),
        }
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
        debug_assert_eq!(
            ptr.as_ptr() as usize % align_of(dtype),
            0,
            "misaligned storage"
        );
        Storage {
            ptr,
            bytes: len.saturating_mul(dtype.itemsize()),
            dtype,
            device: Device::CPU,
            owner: Owner::Foreign(owner),
        }
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }
    pub fn device(&self) -> Device {
        self.device
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
}

impl Drop for Storage {
    fn drop(&mut self) {
        if !matches!(self.owner, Owner::Foreign(_)) {
            crate::profiler::memory(-(self.bytes as i64));
        }
        match self.owner {
            Owner::Rust if self.bytes > 0 => {
                // SAFETY: allocated in `zeros` with this exact layout.
                unsafe {
                    dealloc(
                        self.ptr.as_ptr(),
                        AllocLayout::from_size_align_unchecked(self.bytes, ALIGN),
                    )
                }
            }
            // SAFETY: the buffer a Vec allocated with `layout` through the global
            // allocator (`from_vec`), owned by this storage alone since.
            Owner::Vec(layout) => unsafe { dealloc(self.ptr.as_ptr(), layout) },
            _ => {}
        }
    }
}

#[cold]
fn dtype_mismatch(have: DType, want: DType) -> Error {
    Error::runtime(format!("internal error: {have:?} storage read as {want:?}"))
}

/// What a tensor's elements are: a storage, the dtype its elements are read as, and a
/// layout that fits it. The fit is checked once, when a `Data` is made (the only ways
/// are below), so `Access::of` reaches memory through it without checking again.
///
/// Note: real views of complex storage. `x.real`, `x.imag` and `view_as_real(x)` of a
/// complex tensor read its storage as the complex dtype's real component (complex128 as
/// float64, complex64 as float32): a complex element is two adjacent components, so the
/// view's layout counts in components (strides and offset doubled, +1 for the imaginary
/// part); `view_as_complex` reads float storage as complex the other way round.
/// `dtype` is the element dtype; it differs from the storage's only for such a pair
/// (`can_reinterpret`; `Data::new_as` refuses any other), and the layout is
/// checked against the storage's bytes in units of `dtype`, so every offset a kernel
/// forms stays inside the buffer. Both dtypes of a pair have the component's alignment
/// (num-complex's types are `repr(C)` pairs), so the typed pointer is aligned too.
#[derive(Clone)]
pub struct Data {
    storage: Arc<Storage>,
    dtype: DType,
    layout: Layout,
}

/// Whether elements of `storage` may be read as `view`: as themselves, or across one
/// complex / real-component pair (complex64 and float32, complex128 and float64), in
/// either direction (`view_as_complex` reads float storage as complex). A complex type
/// is a `repr(C)` pair of its component, so both sides have the same alignment.
pub fn can_reinterpret(storage: DType, view: DType) -> bool {
    matches!(
        (storage, view),
        (DType::C64, DType::F32)
            | (DType::F32, DType::C64)
            | (DType::C128, DType::F64)
            | (DType::F64, DType::C128)
    ) || storage == view
}

impl Data {
    /// `layout` over `storage`, with torch's setStorage check.
    pub fn new(storage: Arc<Storage>, layout: Layout) -> Result<Data> {
        let dtype = storage.dtype;
        Data::new_as(storage, dtype, layout)
    }

    /// `layout` (in elements of `dtype`) over `storage` read as `dtype`: the storage's
    /// own dtype, or the other side of its complex / real-component pair (see Note: real
    /// views of complex storage).
    pub fn new_as(storage: Arc<Storage>, dtype: DType, layout: Layout) -> Result<Data> {
        if !can_reinterpret(storage.dtype, dtype) {
            return Err(dtype_mismatch(storage.dtype, dtype));
        }
        layout.check_in_storage(storage.bytes, dtype.itemsize())?;
        Ok(Data {
            storage,
            dtype,
            layout,
        })
    }

    /// The same storage, read as the same dtype, under another (checked) layout.
    pub fn with_layout(&self, layout: Layout) -> Result<Data> {
        Data::new_as(self.storage.clone(), self.dtype, layout)
    }

    /// How many elements of this data's dtype the storage holds.
    pub fn storage_len(&self) -> usize {
        self.storage.bytes / self.dtype.itemsize()
    }

    /// A contiguous `shape` over exactly the storage's elements (a kernel's fresh
    /// output): fits by construction, so only the element count is compared.
    pub fn whole(storage: Storage, shape: &[usize]) -> Data {
        let layout = Layout::contiguous(shape);
        assert_eq!(layout.numel(), storage.len(), "internal error: output size");
        Data {
            dtype: storage.dtype,
            storage: Arc::new(storage),
            layout,
        }
    }

    pub fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    pub fn device(&self) -> Device {
        self.storage.device
    }
}

/// Typed, bounds-checked access to the elements one layout reaches in one storage (see
/// "Note: storage access" at the top of this file). Cheap to build: O(ndim) checks.
pub struct Access<'a, T> {
    base: *mut T,
    layout: Cow<'a, Layout>,
    _storage: PhantomData<&'a Storage>,
}

// SAFETY: an Access is a typed pointer into a Sync storage plus a plain layout; what may
// be read or written through it from several threads is governed by the access note.
unsafe impl<T: Send> Send for Access<'_, T> {}
unsafe impl<T: Sync> Sync for Access<'_, T> {}

impl<'a, T: Element> Access<'a, T> {
    /// Fails (an internal error: layouts are checked where tensors are made) when the
    /// storage holds another dtype or the layout reaches past its end.
    #[inline]
    pub fn new(storage: &'a Storage, layout: impl Into<Cow<'a, Layout>>) -> Result<Access<'a, T>> {
        let layout = layout.into();
        if storage.dtype != T::DTYPE {
            return Err(dtype_mismatch(storage.dtype, T::DTYPE));
        }
        layout.check_in_storage(storage.bytes, storage.dtype.itemsize())?;
        Ok(Access {
            base: storage.ptr.as_ptr() as *mut T,
            layout,
            _storage: PhantomData,
        })
    }

    /// Like `new`, for a layout over `data`'s storage in units of `data`'s dtype (which
    /// may be the real component of a complex storage: see Note: real views of complex
    /// storage).
    #[inline]
    pub fn within(data: &'a Data, layout: impl Into<Cow<'a, Layout>>) -> Result<Access<'a, T>> {
        let layout = layout.into();
        if data.dtype != T::DTYPE {
            return Err(dtype_mismatch(data.dtype, T::DTYPE));
        }
        layout.check_in_storage(data.storage.bytes, T::DTYPE.itemsize())?;
        Ok(Access {
            base: data.storage.ptr.as_ptr() as *mut T,
            layout,
            _storage: PhantomData,
        })
    }

    /// A tensor's own elements: `data` was checked when it was made, so only the dtype
    /// is (a mismatch is an internal bug).
    #[inline]
    pub fn of(data: &'a Data) -> Access<'a, T> {
        if data.dtype != T::DTYPE {
            panic!("{}", dtype_mismatch(data.dtype, T::DTYPE));
        }
        Access {
            base: data.storage.ptr.as_ptr() as *mut T,
            layout: Cow::Borrowed(&data.layout),
            _storage: PhantomData,
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The storage's first element, for kernels that hand pointers to a library (gemm);
    /// they must respect the access note like the methods below.
    pub fn base_ptr(&self) -> *mut T {
        self.base
    }

    /// Whether slices may be formed over this dtype (not bool: see note, point 3).
    pub const SLICEABLE: bool = !matches!(T::DTYPE, DType::Bool);

    /// The element at storage offset `off`.
    ///
    /// # Safety
    /// `off` is an offset the layout reaches (access note, point 1), and no other
    /// thread writes that element concurrently (the user's race, as in torch).
    #[inline(always)]
    pub unsafe fn read(&self, off: usize) -> T {
        let p = self.base.add(off);
        if Self::SLICEABLE {
            p.read()
        } else {
            T::from_bool(*(p as *const u8) != 0)
        }
    }

    /// Store `v` at storage offset `off`.
    ///
    /// # Safety
    /// As `read`; and no reference to that element is alive (access note, point 2).
    #[inline(always)]
    pub unsafe fn write(&self, off: usize, v: T) {
        self.base.add(off).write(v)
    }

    /// The elements `start..start + len` (one stride-1 run of the layout) as a slice;
    /// None for bool.
    ///
    /// # Safety
    /// The run lies inside the layout (point 1); nothing writes those elements while
    /// the slice lives (point 2), and the slice does not outlive the kernel.
    #[inline(always)]
    pub unsafe fn run(&self, start: usize, len: usize) -> Option<&'a [T]> {
        if len == 0 {
            // An empty layout's offset may lie past the end (torch allows that).
            return Some(&[]);
        }
        if Self::SLICEABLE {
            Some(std::slice::from_raw_parts(self.base.add(start), len))
        } else {
            None
        }
    }

    /// The elements `start..start + len` (one stride-1 run of the layout) as a mutable
    /// slice, for a kernel that updates them in place; None for bool.
    ///
    /// # Safety
    /// The run lies inside the layout (point 1); no other reference to these elements is
    /// alive while the slice lives (point 2), and the slice does not outlive the kernel.
    #[inline]
    pub unsafe fn run_mut(&self, start: usize, len: usize) -> Option<&'a mut [T]> {
        if Self::SLICEABLE && len > 0 {
            Some(std::slice::from_raw_parts_mut(self.base.add(start), len))
        } else {
            None
        }
    }

    /// The bytes of the stride-1 run `start..start + len` of a bool storage (any byte is
    /// a valid u8; a bool is its byte `!= 0`); None for other dtypes. Kernels convert a
    /// run of bools from these without a branch per element.
    ///
    /// # Safety
    /// As `run`.
    #[inline]
    pub unsafe fn bool_bytes(&self, start: usize, len: usize) -> Option<&'a [u8]> {
        if T::DTYPE == DType::Bool {
            Some(std::slice::from_raw_parts(
                self.base.add(start) as *const u8,
                len,
            ))
        } else {
            None
        }
    }

    /// The whole layout as one slice when it is contiguous (and not bool).
    ///
    /// # Safety
    /// As `run`.
    #[inline]
    pub unsafe fn contiguous(&self) -> Option<&'a [T]> {
        if self.layout.is_contiguous() {
            self.run(self.layout.offset, self.layout.numel())
        } else {
            None
        }
    }

    /// Store `v` at each element of the stride-1 run `start..start + len`.
    ///
    /// # Safety
    /// As `write_run`.
    #[inline(always)]
    pub unsafe fn fill_run(&self, start: usize, len: usize, v: T) {
        let p = self.base.add(start);
        for i in 0..len {
            p.add(i).write(v);
        }
    }

    /// Copy `values` into the stride-1 run `start..start + values.len()`.
    ///
    /// # Safety
    /// The run lies inside the layout (point 1); `values` is not storage memory; no
    /// reference to the run is alive (point 2).
    #[inline(always)]
    pub unsafe fn write_run(&self, start: usize, values: &[T]) {
        std::ptr::copy_nonoverlapping(values.as_ptr(), self.base.add(start), values.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // issue 7 §1: the access type is where the bounds invariant is enforced.
    #[test]
    fn access_checks_dtype_and_bounds() {
        let s = Storage::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0]);
        assert!(Access::<f32>::new(&s, Layout::contiguous(&[5])).is_ok());
        assert!(Access::<f64>::new(&s, Layout::contiguous(&[5])).is_err());
        assert!(Access::<f32>::new(&s, Layout::contiguous(&[6])).is_err());
        let wrap = Layout {
            shape: smallvec::smallvec![5, 5],
            strides: smallvec::smallvec![1 << 62, 1],
            offset: 0,
        };
        assert!(Access::<f32>::new(&s, wrap).is_err());
        let strided = Layout {
            shape: smallvec::smallvec![3],
            strides: smallvec::smallvec![2],
            offset: 0,
        };
        let a = Access::<f32>::new(&s, strided).unwrap();
        // SAFETY: offsets 0, 2, 4 belong to the layout; nothing else touches `s`.
        unsafe {
            assert_eq!([a.read(0), a.read(2), a.read(4)], [1.0, 3.0, 5.0]);
            a.write(2, 9.0);
            assert_eq!(a.read(2), 9.0);
            assert!(a.contiguous().is_none());
        }
    }

    // issue 11: a storage is read as the other side of its complex pair only, and the
    // layout is checked in units of what it is read as.
    #[test]
    fn complex_pairs_reinterpret_within_bounds() {
        use num_complex::Complex64;
        let s = Arc::new(Storage::from_vec(vec![Complex64::new(1.0, 2.0); 3]));
        let real = Data::new_as(s.clone(), DType::F64, Layout::contiguous(&[6])).unwrap();
        let a = Access::<f64>::of(&real);
        // SAFETY: offsets 0 and 5 belong to the layout; nothing else touches `s`.
        unsafe { assert_eq!([a.read(0), a.read(5)], [1.0, 2.0]) };
        assert!(Data::new_as(s.clone(), DType::F64, Layout::contiguous(&[7])).is_err());
        assert!(Data::new_as(s.clone(), DType::F32, Layout::contiguous(&[1])).is_err());
        assert!(Data::new_as(s.clone(), DType::I64, Layout::contiguous(&[1])).is_err());
        assert!(Access::<Complex64>::within(&real, Layout::contiguous(&[1])).is_err());
        let f = Arc::new(Storage::from_vec(vec![0.5f32; 5]));
        let c = Data::new_as(f.clone(), DType::C64, Layout::contiguous(&[2])).unwrap();
        assert_eq!(c.storage_len(), 2);
        assert!(c.with_layout(Layout::contiguous(&[3])).is_err());
    }

    #[test]
    fn bool_bytes_are_normalized() {
        let s = Storage::from_vec(vec![0u8, 2, 1, 255]);
        // SAFETY: a u8 buffer reinterpreted as bool storage, the way numpy shares one; the
        // Vec is kept alive by `s`.
        let b = unsafe { Storage::from_foreign(s.as_ptr(), 4, DType::Bool, Box::new(s)) };
        let a = Access::<bool>::new(&b, Layout::contiguous(&[4])).unwrap();
        // SAFETY: offsets 0..4 belong to the layout.
        unsafe {
            assert_eq!(
                [a.read(0), a.read(1), a.read(2), a.read(3)],
                [false, true, true, true]
            );
            assert!(a.contiguous().is_none(), "no &[bool] over storage");
        }
    }
}
