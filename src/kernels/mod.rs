//! Math only: no `Tensor`, no autograd, no Python. Kernels take `Data` (a storage and a
//! layout), layouts and dtypes, and are named by kind (`kinds`); the `Backend` trait
//! (`backend`) is what ops call, through `backend_for(device)`, and `cpu` implements it
//! over the kernel functions here. Kernels reach storage only through
//! `storage::Access` (see the access note in storage.rs): inputs are read in place when
//! contiguous, gathered otherwise, and every kernel writes a fresh contiguous output;
//! in-place ops then copy that output into the destination (see `copy::write_into`).

pub mod backend;
pub mod copy;
pub mod cpu;
pub mod elementwise;
pub mod index;
pub mod kinds;
pub mod matmul;
pub mod random;
pub mod reduce;
pub mod special;
pub mod strided;
pub mod sum;
pub mod traits;
pub mod vmath;

use std::borrow::Cow;

use crate::dtype::{DType, Element};
use crate::layout::Layout;
use crate::shape::Dims;
use crate::storage::{Access, Data, Storage};
use smallvec::{smallvec, SmallVec};

/// `f()` compiled for the widest SIMD level this CPU has (pulp's runtime dispatch: AVX-512
/// or AVX2 + FMA on x86-64), for the loops the compiler vectorizes by itself. The crate
/// is built for the x86-64 baseline, where those loops get SSE2's 4 lanes; `f` should be
/// an `#[inline(always)]` closure, so that its body is compiled inside the dispatched
/// function. Results do not depend on the level: the loops do the same IEEE operations
/// in the same order per element (Rust never contracts a * b + c into an FMA).
#[inline(always)]
pub(crate) fn at_widest<R>(f: impl FnOnce() -> R) -> R {
    pulp::Arch::new().dispatch(f)
}

/// Elements below this count run on the calling thread; above it, the intra-op team
/// (threads/team.rs) splits the work.
pub const PARALLEL_GRAIN: usize = 1 << 15;

/// What a job on the intra-op team runs inside (set once by the embedder).
static POOL_WAIT: std::sync::OnceLock<fn(&mut (dyn FnMut() + Send))> = std::sync::OnceLock::new();

/// Install the wrapper every team job runs in: the Python bindings release the GIL
/// there, since threads running Python nodes of a backward pass may need it meanwhile.
pub fn set_pool_wait_hook(hook: fn(&mut (dyn FnMut() + Send))) {
    let _ = POOL_WAIT.set(hook);
}

/// `task(0)`, ..., `task(tasks - 1)` on the intra-op team (threads/team.rs), returning
/// when all have run. Every kernel splits its work through here (and only once its work
/// is big enough to split), so small ops pay nothing for it. The calling thread works
/// too, outside the GIL (the wait hook), since members may wait on threads needing it.
pub fn par_for(tasks: usize, task: impl Fn(usize) + Sync) {
    if tasks <= 1 || crate::threads::num_threads() == 1 {
        return in_wait_hook(|| (0..tasks).for_each(&task));
    }
    let team = crate::threads::intra_op_team();
    in_wait_hook(|| team.run(tasks, &task));
}

/// `f(0), f(1), ... f(n - 1)`, in order, computed over the intra-op team.
pub fn par_map<R: Send>(n: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let slots: Vec<std::sync::Mutex<Option<R>>> = (0..n).map(|_| Default::default()).collect();
    par_for(n, |i| {
        let value = f(i);
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(value);
    });
    slots
        .into_iter()
        .map(|slot| slot.into_inner().unwrap_or_else(|e| e.into_inner()))
        .map(|value| value.expect("par_for runs every task"))
        .collect()
}

/// `f(i, chunk)` for the `i`-th `chunk_len`-long chunk of `dst` (the last may be shorter),
/// the chunks split over the intra-op team; the results in chunk order (so collecting
/// them into a `Result` reports the first error in that order, whatever the timing).
pub fn par_chunks_map<T: Send, R: Send>(
    dst: &mut [T],
    chunk_len: usize,
    f: impl Fn(usize, &mut [T]) -> R + Sync,
) -> Vec<R> {
    par_map_owned(dst.chunks_mut(chunk_len.max(1)).collect(), f)
}

/// `f(i, item)` for the `i`-th of `items` (disjoint parts of an output, say), each item
/// handed to one task on the intra-op team; the results in item order.
pub fn par_map_owned<I: Send, R: Send>(items: Vec<I>, f: impl Fn(usize, I) -> R + Sync) -> Vec<R> {
    let slots: Vec<std::sync::Mutex<Option<I>>> = items
        .into_iter()
        .map(|item| std::sync::Mutex::new(Some(item)))
        .collect();
    par_map(slots.len(), |i| {
        let item = slots[i].lock().unwrap_or_else(|e| e.into_inner()).take();
        f(i, item.expect("par_for runs every task once"))
    })
}

/// `par_chunks_map` for work that returns nothing.
pub fn par_chunks_mut<T: Send>(
    dst: &mut [T],
    chunk_len: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    par_chunks_map(dst, chunk_len, f);
}

/// Run `f` inside the pool-wait hook.
fn in_wait_hook<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let Some(hook) = POOL_WAIT.get() else {
        return f();
    };
    let mut f = Some(f);
    let mut out = None;
    hook(&mut || {
        if let Some(f) = f.take() {
            out = Some(f());
        }
    });
    match (out, f) {
        (Some(v), _) => v,
        // A hook that did not call its closure: run the work here.
        (None, Some(f)) => f(),
        (None, None) => unreachable!("the closure ran, so it set `out` or unwound"),
    }
}

/// Typed access to a tensor's elements under `layout` (its own, or one derived from it
/// by broadcasting or permuting, which is checked again). A failure is an internal bug,
/// never input.
#[inline]
pub fn access_as<T: Element>(data: &Data, layout: Layout) -> Access<'_, T> {
    Access::within(data, layout).unwrap_or_else(|e| internal_error(e))
}

/// Typed access to a tensor's elements under its own layout (checked when made).
#[inline]
pub fn access<T: Element>(data: &Data) -> Access<'_, T> {
    Access::of(data)
}

#[cold]
fn internal_error(e: crate::error::Error) -> ! {
    panic!("{e}")
}

/// The tensor's elements in row-major order as `T`, borrowing when possible.
///
/// # Safety
/// A borrowed result is storage memory (access note, point 2 in storage.rs): the caller
/// drops it before its kernel returns and writes no tensor that shares `t`'s storage
/// while holding it.
pub unsafe fn contiguous_data<T: Element>(data: &Data) -> Cow<'_, [T]> {
    if data.layout().numel() == 0 {
        return Cow::Owned(Vec::new());
    }
    if data.dtype() == T::DTYPE {
        if let Some(s) = access::<T>(data).contiguous() {
            return Cow::Borrowed(s);
        }
    }
    Cow::Owned(gather_data::<T>(data))
}

/// Copy strided elements into a new row-major Vec, casting to `T`.
pub fn gather_data<T: Element>(data: &Data) -> Vec<T> {
    crate::with_dtype!(data.dtype(), S => gather_cast::<S, T>(&access::<S>(data)))
}

/// Row-major gather of `src`'s layout, casting each element (see Note: strided copies).
pub fn gather_cast<S: Element, T: Element>(src: &Access<'_, S>) -> Vec<T> {
    strided::gather(src, &[])
}

/// Calls `f(start_offset, inner_stride, inner_len)` for each row of the innermost dim,
/// in row-major order (after merging dims that are contiguous with each other).
pub fn for_each_inner_run(layout: &Layout, mut f: impl FnMut(usize, usize, usize)) {
    let (shape, strides) = coalesce(&layout.shape, &[&layout.strides]);
    let strides = &strides[0];
    if shape.contains(&0) {
        return;
    }
    let nd = shape.len();
    if nd == 0 {
        f(layout.offset, 1, 1);
        return;
    }
    let inner = shape[nd - 1];
    let inner_stride = strides[nd - 1];
    let outer: usize = shape[..nd - 1].iter().product();
    let mut idx: Dims = smallvec![0; nd.saturating_sub(1)];
    let mut off = layout.offset;
    for _ in 0..outer {
        f(off, inner_stride, inner);
        for d in (0..nd - 1).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                off += strides[d];
                break;
            }
            off -= (shape[d] - 1) * strides[d];
            idx[d] = 0;
        }
    }
}

/// Merge adjacent dims that every operand walks contiguously, so kernels see long inner
/// runs. Size-1 dims are dropped. Small vectors: this runs once per kernel call.
pub fn coalesce(shape: &[usize], strides: &[&[usize]]) -> (Dims, SmallVec<[Dims; 3]>) {
    coalesce_with(shape, strides, 1, |s, n| s.checked_mul(n))
}

/// `coalesce` over strides of any integer type (signed ones walk a dim backwards):
/// dim d merges into the one before it when, for every operand, that one's stride is
/// `times(stride of d, size of d)` (None: an overflow, never merged); `one` is the
/// stride of the single dim left when every dim has size 1.
pub fn coalesce_with<I: Copy + PartialEq>(
    shape: &[usize],
    strides: &[&[I]],
    one: I,
    times: impl Fn(I, usize) -> Option<I>,
) -> (Dims, SmallVec<[SmallVec<[I; 6]>; 3]>) {
    if shape.contains(&0) {
        return (
            smallvec![0],
            strides.iter().map(|_| smallvec![one]).collect(),
        );
    }
    let mut out_shape = Dims::new();
    let mut out_strides: SmallVec<[SmallVec<[I; 6]>; 3]> =
        strides.iter().map(|_| SmallVec::new()).collect();
    for (d, &n) in shape.iter().enumerate() {
        if n == 1 {
            continue;
        }
        let mergeable = !out_shape.is_empty()
            && strides.iter().zip(&out_strides).all(|(s, out)| {
                let prev = *out.last().expect("nonempty");
                times(s[d], n) == Some(prev)
            });
        if mergeable {
            let last = out_shape.len() - 1;
            out_shape[last] *= n;
            for (s, out) in strides.iter().zip(out_strides.iter_mut()) {
                out[last] = s[d];
            }
        } else {
            out_shape.push(n);
            for (s, out) in strides.iter().zip(out_strides.iter_mut()) {
                out.push(s[d]);
            }
        }
    }
    if out_shape.is_empty() {
        out_shape.push(1);
        for s in out_strides.iter_mut() {
            s.push(one);
        }
    }
    (out_shape, out_strides)
}

/// A fresh contiguous result from a vector.
pub fn data_from<T: Element>(values: Vec<T>, shape: &[usize]) -> Data {
    Data::whole(Storage::from_vec(values), shape)
}

/// A contiguous copy of `x` in `dtype` (new storage).
pub fn cast_data(x: &Data, dtype: DType) -> Data {
    crate::with_dtype!(dtype, T => data_from(gather_data::<T>(x), &x.layout().shape))
}

/// Whether a floating or complex `x` holds a NaN (anomaly mode's check).
pub fn has_nan(x: &Data) -> bool {
    // SAFETY: read-only scan; the borrowed data is dropped before returning.
    unsafe { has_nan_in(x) }
}

/// # Safety
/// As `contiguous_data`.
unsafe fn has_nan_in(t: &Data) -> bool {
    use crate::kernels::traits::Float;
    match t.dtype() {
        DType::F16 => contiguous_data::<half::f16>(t).iter().any(|v| v.is_nan_()),
        DType::BF16 => contiguous_data::<half::bf16>(t).iter().any(|v| v.is_nan_()),
        DType::F32 => contiguous_data::<f32>(t).iter().any(|v| v.is_nan()),
        DType::F64 => contiguous_data::<f64>(t).iter().any(|v| v.is_nan()),
        DType::C64 => contiguous_data::<num_complex::Complex32>(t)
            .iter()
            .any(|v| v.is_nan_()),
        DType::C128 => contiguous_data::<num_complex::Complex64>(t)
            .iter()
            .any(|v| v.is_nan_()),
        _ => false,
    }
}
