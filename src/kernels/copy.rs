//! Writing into existing (possibly strided, possibly aliased) storage: in-place ops,
//! `copy_`, `.grad` accumulation.

use crate::dtype::Element;
use crate::error::Result;
use crate::kernels::{access, access_as, for_each_inner_run};
use crate::storage::Data;

/// Copy `src` (broadcast to `dst`'s shape, cast to its dtype) into `dst`'s memory.
/// Safe when `src` aliases `dst`: the source is read into a temporary first.
pub fn write_into(dst: &Data, src: &Data) -> Result<()> {
    let src_layout = src.layout().expand_to(&dst.layout().shape)?;
    crate::with_dtype!(dst.dtype(), D => {
        let values: Vec<D> = crate::with_dtype!(src.dtype(), S =>
            crate::kernels::gather_cast::<S, D>(&access_as::<S>(src, src_layout)));
        write_values(dst, &values);
    });
    Ok(())
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
    for_each_inner_run(out.layout(), |start, stride, len| {
        for i in 0..len {
            // SAFETY: an element of dst's layout; no reference into its storage is alive.
            unsafe { out.write(start + i * stride, value) };
        }
    });
}
