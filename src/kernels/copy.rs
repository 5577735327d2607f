//! Writing into existing (possibly strided, possibly aliased) storage: in-place ops,
//! `copy_`, `.grad` accumulation.

use crate::dtype::Element;
use crate::error::Result;
use crate::kernels::for_each_inner_run;
use crate::layout::Layout;
use crate::tensor::Tensor;

/// Copy `src` (broadcast to `dst`'s shape, cast to its dtype) into `dst`'s memory.
/// Safe when `src` aliases `dst`: the source is read into a temporary first.
pub fn write_into(dst: &Tensor, src: &Tensor) -> Result<()> {
    let src_layout = src.layout().expand_to(dst.shape())?;
    crate::with_dtype!(dst.dtype(), D => {
        let values: Vec<D> = crate::with_dtype!(src.dtype(), S =>
            crate::kernels::gather_cast::<S, D>(src.storage().slice::<S>(), &src_layout));
        write_values(dst, &values);
    });
    Ok(())
}

/// Write row-major `values` (already of dst's dtype and numel) into `dst`.
pub fn write_values<T: Element>(dst: &Tensor, values: &[T]) {
    debug_assert_eq!(values.len(), dst.numel());
    // SAFETY: `values` is an owned buffer, never a slice of dst's storage.
    let out = unsafe { dst.storage().slice_mut::<T>() };
    scatter_rows(out, dst.layout(), values);
}

fn scatter_rows<T: Copy>(out: &mut [T], layout: &Layout, values: &[T]) {
    let mut pos = 0;
    for_each_inner_run(layout, |start, stride, len| {
        if stride == 1 {
            out[start..start + len].copy_from_slice(&values[pos..pos + len]);
        } else {
            for i in 0..len {
                out[start + i * stride] = values[pos + i];
            }
        }
        pos += len;
    });
}

/// Fill every element of `dst` with one value.
pub fn fill<T: Element>(dst: &Tensor, value: T) {
    // SAFETY: no other slice of this storage is held during the fill.
    let out = unsafe { dst.storage().slice_mut::<T>() };
    for_each_inner_run(dst.layout(), |start, stride, len| {
        for i in 0..len {
            out[start + i * stride] = value;
        }
    });
}
