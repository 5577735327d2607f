//! Reductions over a set of dims. Inputs are viewed with kept dims first and reduced
//! dims last, so every output element reduces one contiguous row.

use std::borrow::Cow;

use smallvec::SmallVec;

use crate::dtype::Element;
use crate::kernels::PARALLEL_GRAIN;
use crate::layout::Layout;
use crate::shape::Dims;
use crate::storage::Data;

/// Shape of the result with `dims` removed (keepdim is a view applied by the caller).
pub fn reduced_shape(shape: &[usize], dims: &[usize]) -> Dims {
    shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !dims.contains(i))
        .map(|(_, &s)| s)
        .collect()
}

/// Apply `row_fn` to each contiguous row of reduced elements; one result per output
/// element, in row-major output order.
pub fn reduce_rows<T: Element, U: Send>(
    x: &Data,
    dims: &[usize],
    row_fn: impl Fn(&[T]) -> U + Sync + Send,
) -> Vec<U> {
    let nd = x.layout().ndim();
    let mut perm: SmallVec<[i64; 6]> = (0..nd)
        .filter(|d| !dims.contains(d))
        .map(|d| d as i64)
        .collect();
    perm.extend(dims.iter().map(|&d| d as i64));
    let layout: Layout = x.layout().permute(&perm).expect("valid permutation");
    let shape = &x.layout().shape;
    let row_len: usize = dims.iter().map(|&d| shape[d]).product();
    let out_len: usize = reduced_shape(shape, dims).iter().product();
    // SAFETY: read-only; `data` is dropped before returning; outputs are fresh Vecs.
    let data = unsafe { read_as::<T>(x, layout) };
    if row_len == 0 {
        return (0..out_len).map(|_| row_fn(&[])).collect();
    }
    if out_len * row_len >= PARALLEL_GRAIN && out_len > 1 {
        crate::kernels::par_map(out_len, |i| row_fn(&data[i * row_len..(i + 1) * row_len]))
    } else {
        data.chunks(row_len).map(&row_fn).collect()
    }
}

/// `x`'s elements in the row-major order of `layout` (a permutation of x's own), as `T`:
/// borrowed when they already lie that way in x's dtype, else gathered and cast.
///
/// # Safety
/// As `contiguous_data`: nothing may write x's storage while the result lives.
pub unsafe fn read_as<T: Element>(x: &Data, layout: Layout) -> Cow<'_, [T]> {
    crate::with_dtype!(x.dtype(), S => {
        let src = crate::kernels::access_as::<S>(x, layout);
        // SAFETY: the caller keeps the storage unwritten while the borrow lives.
        match unsafe { src.contiguous() } {
            Some(s) if S::DTYPE == T::DTYPE => {
                // SAFETY: S and T are the same type (same dtype), so this is a no-op cast.
                Cow::Borrowed(unsafe { std::slice::from_raw_parts(s.as_ptr() as *const T, s.len()) })
            }
            _ => Cow::Owned(crate::kernels::gather_cast::<S, T>(&src)),
        }
    })
}
