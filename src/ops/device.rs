//! The one place ops meet backends: the backend of a tensor's device, and `Data` from a
//! kernel wrapped as a fresh tensor. Also the non-differentiable tensor-level kernels
//! the engine and bindings need (cast, copy into, fill, NaN check).

use crate::dtype::{DType, Scalar};
use crate::error::Result;
use crate::kernels::backend::{backend_for, Backend};
use crate::storage::Data;
use crate::tensor::Tensor;

/// The backend that owns `t`'s memory.
#[inline]
pub fn backend(t: &Tensor) -> Result<&'static dyn Backend> {
    // A vmap wrapper's layout is one example's: a kernel on it would be wrong, so every
    // op must have gone through the batched dispatch first.
    if t.is_batched() {
        return Err(crate::error::Error::runtime(
            "internal error: a kernel was given a vmap wrapper (an op bypassed the batched dispatch)",
        ));
    }
    backend_for(t.device())
}

/// Whether a bool tensor holds a true element: one reduction on its device, and one
/// value read back (for the data-dependent branches of a few rules and checks).
pub fn any_true(mask: &Tensor) -> Result<bool> {
    // Under vmap: any element of any example, so the whole physical tensor is read.
    let mut mask = mask.clone();
    while let Some(value) = mask.batch_info().map(|b| b.value.clone()) {
        mask = value;
    }
    let dims: Vec<usize> = (0..mask.dim()).collect();
    let any = backend(&mask)?.reduce(
        &mask.data(),
        &dims,
        crate::kernels::kinds::Reduce::Sum,
        DType::Bool,
    )?;
    Ok(wrap(any).to_vec::<bool>()[0])
}

/// A kernel's fresh result as a new tensor (no view, its own version counter).
#[inline]
pub fn wrap(d: Data) -> Tensor {
    Tensor::from_data(d)
}

/// A contiguous copy of `t` in `dtype`, without history (the kernel behind `.to`,
/// `clone` and the engine's gradient copies).
pub fn cast(t: &Tensor, dtype: DType) -> Result<Tensor> {
    Ok(wrap(backend(t)?.cast(&t.data(), dtype)?))
}

/// `src` broadcast to `dst`'s shape and cast to its dtype, written into `dst`'s memory
/// (no version bump, no history: callers do that).
pub fn write_into(dst: &Tensor, src: &Tensor) -> Result<()> {
    backend(dst)?.copy_into(&dst.data(), &src.data())
}

/// Every element of `t` set to `value` (no version bump, no history).
pub fn fill(t: &Tensor, value: Scalar) -> Result<()> {
    backend(t)?.fill(&t.data(), value)
}

/// Whether a floating or complex `t` holds a NaN (anomaly mode's check).
pub fn has_nan(t: &Tensor) -> Result<bool> {
    backend(t)?.has_nan(&t.data())
}
