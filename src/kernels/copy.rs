//! Writing into existing (possibly strided, possibly aliased) storage: in-place ops,
//! `copy_`, `.grad` accumulation.

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::kernels::{access, access_as, at_widest, for_each_inner_run};
use crate::storage::Data;

/// Copy `src` (broadcast to `dst`'s shape, cast to its dtype) into `dst`'s memory.
/// Safe when `src` aliases `dst`: the source is read into a temporary first.
pub fn write_into(dst: &Data, src: &Data) -> Result<()> {
    let src_layout = src.layout().expand_to(&dst.layout().shape)?;
    if src_layout.numel() > 0 && src_layout.strides.iter().all(|&s| s == 0) {
        // One value everywhere (a scalar broadcast, fill_): read it, then fill.
        crate::with_dtype!(dst.dtype(), D => {
            let one = crate::with_dtype!(src.dtype(), S => {
                // SAFETY: the layout's one element, checked against src's storage.
                let v = unsafe { access_as::<S>(src, src_layout.clone()).read(src_layout.offset) };
                crate::dtype::cast::<S, D>(v)
            });
            fill(dst, one);
        });
        return Ok(());
    }
    if copy_contiguous(dst, src, &src_layout) {
        return Ok(());
    }
    crate::with_dtype!(dst.dtype(), D => {
        let values: Vec<D> = crate::with_dtype!(src.dtype(), S =>
            crate::kernels::gather_cast::<S, D>(&access_as::<S>(src, src_layout)));
        write_values(dst, &values);
    });
    Ok(())
}

/// Elements per task when a contiguous write is split over the team.
const WRITE_CHUNK: usize = 1 << 15;

/// The common case of `write_into`, done directly: `dst` and `src` contiguous, of one
/// dtype, in different storages (so they cannot overlap), copied storage to storage in
/// chunks over the team, with no temporary. False (nothing written) otherwise.
fn copy_contiguous(dst: &Data, src: &Data, src_layout: &crate::layout::Layout) -> bool {
    let same_storage = std::sync::Arc::ptr_eq(dst.storage(), src.storage());
    if same_storage || dst.dtype() != src.dtype() || !dst.layout().is_contiguous() {
        return false;
    }
    if !src_layout.is_contiguous() || dst.dtype() == crate::dtype::DType::Bool {
        return false;
    }
    crate::with_dtype!(dst.dtype(), T => {
        let (out, from) = (access::<T>(dst), access_as::<T>(src, src_layout.clone()));
        // SAFETY: both layouts are contiguous and checked against their storages; the
        // storages differ, so the source slice is never written while it lives, and the
        // chunks written are disjoint runs of dst's layout (access note).
        let values = unsafe { from.contiguous() }.expect("a contiguous, non-bool layout");
        in_chunks(dst, |at, range| unsafe { out.write_run(at, &values[range]) });
    });
    true
}

/// `write(storage offset, range)` for the chunks of `dst`'s one run (it is contiguous),
/// each `WRITE_CHUNK` elements at most, over the team when long. Ranges count from the
/// run's start.
fn in_chunks(dst: &Data, write: impl Fn(usize, std::ops::Range<usize>) + Sync) {
    let (n, d0) = (dst.layout().numel(), dst.layout().offset);
    let task = |t: usize| {
        let start = t * WRITE_CHUNK;
        write(d0 + start, start..n.min(start + WRITE_CHUNK));
    };
    let tasks = n.div_ceil(WRITE_CHUNK);
    if n >= crate::kernels::PARALLEL_GRAIN {
        crate::kernels::par_for(tasks, task);
    } else {
        (0..tasks).for_each(task);
    }
}

/// Whether `update_with` can write `dst ⊕= other` straight into dst's memory: dst is
/// contiguous and not bool, `other` has dst's dtype and is one value or dst's shape
/// contiguous, in another storage or exactly dst's own elements (`x.add_(x)`). A partial
/// overlap would read elements already written, so it is refused.
pub fn can_update(dst: &Data, other: &Data) -> bool {
    let (ld, lo) = (dst.layout(), other.layout());
    if !ld.is_contiguous() || dst.dtype() == DType::Bool || other.dtype() != dst.dtype() {
        return false;
    }
    if lo.numel() == 1 {
        return true;
    }
    if lo.shape != ld.shape || !lo.is_contiguous() {
        return false;
    }
    !std::sync::Arc::ptr_eq(dst.storage(), other.storage()) || lo.offset == ld.offset
}

/// `dst[i] = f(dst[i], other[i])` in dst's own memory, in chunks over the team, for
/// operands that pass `can_update` (checked again: false, nothing written, otherwise).
pub fn update_with<T: Element>(dst: &Data, other: &Data, f: impl Fn(T, T) -> T + Sync) -> bool {
    if !can_update(dst, other) || dst.dtype() != T::DTYPE {
        return false;
    }
    let out = access::<T>(dst);
    let lo = other.layout();
    if lo.numel() == 1 {
        // SAFETY: the single element of other's checked layout, read before any write.
        let v = unsafe { access::<T>(other).read(lo.offset) };
        // SAFETY: disjoint chunks of dst's one run; no other reference into it is alive.
        in_chunks(dst, |at, range| {
            if let Some(d) = unsafe { out.run_mut(at, range.len()) } {
                update_scalar_run(d, v, &f);
            }
        });
    } else if std::sync::Arc::ptr_eq(dst.storage(), other.storage()) {
        // Exactly dst's own elements (can_update): each one combined with itself.
        // SAFETY: as above.
        in_chunks(dst, |at, range| {
            if let Some(d) = unsafe { out.run_mut(at, range.len()) } {
                update_self_run(d, &f);
            }
        });
    } else {
        let from = access::<T>(other);
        // SAFETY: other is contiguous in another storage, so its slice never aliases the
        // chunks of dst written here (disjoint runs of dst's checked layout).
        let values = unsafe { from.contiguous() }.expect("a contiguous, non-bool layout");
        in_chunks(dst, |at, range| {
            if let Some(d) = unsafe { out.run_mut(at, range.len()) } {
                update_zip_run(d, &values[range], &f);
            }
        });
    }
    true
}

/// `d[i] = f(d[i], v)`. Out of line, as the two below, so that the compiler sees `d` as
/// the only memory written (see elementwise::map_run): `f`'s captures (alpha) then stay
/// in registers and the loop vectorizes, at the widest SIMD level (`at_widest`).
#[inline(never)]
fn update_scalar_run<T: Copy>(d: &mut [T], v: T, f: &impl Fn(T, T) -> T) {
    at_widest(
        #[inline(always)]
        || d.iter_mut().for_each(|x| *x = f(*x, v)),
    )
}

/// `d[i] = f(d[i], d[i])`.
#[inline(never)]
fn update_self_run<T: Copy>(d: &mut [T], f: &impl Fn(T, T) -> T) {
    at_widest(
        #[inline(always)]
        || d.iter_mut().for_each(|x| *x = f(*x, *x)),
    )
}

/// `d[i] = f(d[i], values[i])` over `d`'s length (out of line, as `update_scalar_run`).
#[inline(never)]
pub(crate) fn update_zip_run<T: Copy>(d: &mut [T], values: &[T], f: &impl Fn(T, T) -> T) {
    at_widest(
        #[inline(always)]
        || {
            for (x, &y) in d.iter_mut().zip(values) {
                *x = f(*x, y);
            }
        },
    )
}

/// Write row-major `values` (already of dst's dtype and numel) into `dst`.
pub fn write_values<T: Element>(dst: &Data, values: &[T]) {
    assert_eq!(
        values.len(),
        dst.layout().numel(),
        "write_values: one value per element"
    );
    let out = access::<T>(dst);
    let mut pos = 0;
    for_each_inner_run(out.layout(), |start, stride, len| {
        let run = &values[pos..pos + len];
        // SAFETY: the run is one of dst's layout runs; `values` is an owned buffer, never
        // storage memory, and no reference into dst's storage is alive here.
        unsafe {
            if stride == 1 {
                out.write_run(start, run);
            } else {
                for (i, &v) in run.iter().enumerate() {
                    out.write(start + i * stride, v);
                }
            }
        }
        pos += len;
    });
}

/// Fill every element of `dst` with one value.
pub fn fill<T: Element>(dst: &Data, value: T) {
    let out = access::<T>(dst);
    if dst.layout().is_contiguous() {
        // One run, filled in chunks by a loop that vectorizes.
        // SAFETY: parts of dst's one run, disjoint; no reference into its storage is alive.
        in_chunks(dst, |at, range| unsafe {
            out.fill_run(at, range.len(), value)
        });
        return;
    }
    for_each_inner_run(out.layout(), |start, stride, len| {
        for i in 0..len {
            // SAFETY: an element of dst's layout; no reference into its storage is alive.
            unsafe { out.write(start + i * stride, value) };
        }
    });
}
