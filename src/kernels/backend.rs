//! The `Backend` trait: every kernel kind a device must provide, in kinds and dtypes
//! only (no element types, no closures), so a device is one module implementing this
//! trait and `backend_for` naming it; ops never change.
//!
//! Contract: inputs are `Data` (a storage and a layout checked against it) on the
//! backend's device. Kernels that return `Data` give a fresh contiguous result nobody
//! else sees; `copy_into` and `fill` write into an existing destination, which may alias
//! the source (the backend makes that safe). Errors use torch's classes and wording.

use crate::device::{Device, DeviceType, Unavailable, Use};
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::kinds::{
    Binary, BinaryMath, Bitwise, Compare, Decomp, Extremum, Groups, Random, Reduce, Scan,
    ScatterReduce, SortKind, Ternary, Unary,
};
use crate::kernels::matmul::MatRef;
use crate::layout::Layout;
use crate::storage::Data;

pub trait Backend: Send + Sync {
    /// `op(x)` elementwise, computed in `dtype` (`x` is cast first when it differs);
    /// the result has `op.out_dtype(dtype)`.
    fn unary(&self, x: &Data, op: Unary, dtype: DType) -> Result<Data>;

    /// `a op b` with broadcasting, both cast to `dtype` first. `Pow` on integral
    /// dtypes refuses negative exponents (torch's error).
    fn binary(&self, a: &Data, b: &Data, op: Binary, dtype: DType) -> Result<Data>;

    /// `dst = dst op alpha * other` (alpha only for Add and Sub) written into dst's own
    /// memory. Only for operands that pass `kernels::copy::can_update`; false (nothing
    /// written) when the backend has no kernel for them.
    fn binary_in_place(&self, dst: &Data, other: &Data, op: Binary, alpha: Scalar) -> Result<bool>;

    /// `a op s` (or `s op a` when `reversed`), computed in `dtype`.
    fn binary_scalar(
        &self,
        a: &Data,
        s: Scalar,
        op: Binary,
        reversed: bool,
        dtype: DType,
    ) -> Result<Data>;

    /// `a op b` with broadcasting, compared in `dtype`; a bool result.
    fn compare(&self, a: &Data, b: &Data, op: Compare, dtype: DType) -> Result<Data>;

    /// The larger / smaller of `a` and `b` with broadcasting, in the real `dtype`.
    fn extremum(&self, a: &Data, b: &Data, op: Extremum, dtype: DType) -> Result<Data>;

    /// `op(a, b)` with broadcasting, both cast to `dtype` first (a real float dtype, or
    /// an integral one for the integral kinds).
    fn binary_math(&self, a: &Data, b: &Data, op: BinaryMath, dtype: DType) -> Result<Data>;

    /// `a op b` bitwise with broadcasting, in the integral or bool `dtype`.
    fn bitwise(&self, a: &Data, b: &Data, op: Bitwise, dtype: DType) -> Result<Data>;

    /// A fused pointwise op of `inputs` (three, or two for `Ternary::LerpScalar`) with
    /// broadcasting, all cast to `dtype` first.
    fn ternary(&self, inputs: &[&Data], op: Ternary, dtype: DType) -> Result<Data>;

    /// `where(cond, a, b)` with broadcasting, in `dtype` (cond is bool or uint8).
    fn select(&self, cond: &Data, a: &Data, b: &Data, dtype: DType) -> Result<Data>;

    /// `x` clamped to `[lo, hi]` (either may be absent), computed in `dtype`; NaN kept.
    fn clamp(&self, x: &Data, lo: Option<Scalar>, hi: Option<Scalar>, dtype: DType)
        -> Result<Data>;

    /// A contiguous copy of `x` in `dtype` (a plain copy when the dtype is the same).
    fn cast(&self, x: &Data, dtype: DType) -> Result<Data>;

    /// `op` over `dims` (the result drops them; keepdim is a view for the caller),
    /// computed in `dtype`.
    fn reduce(&self, x: &Data, dims: &[usize], op: Reduce, dtype: DType) -> Result<Data>;

    /// The inclusive scan `op` along `dim`, computed in `dtype`: a contiguous result of
    /// `x`'s shape.
    fn scan(&self, x: &Data, dim: usize, op: Scan, dtype: DType) -> Result<Data>;

    /// The running `Max` / `Min` along `dim` with the index (int64) each value came from.
    fn scan_with_index(&self, x: &Data, dim: usize, op: Scan) -> Result<(Data, Data)>;

    /// `Max`/`Min` over `dims` with the position of the chosen element in each reduced
    /// row (int64); a row of no elements gives (0, 0).
    fn reduce_with_index(&self, x: &Data, dims: &[usize], op: Reduce) -> Result<(Data, Data)>;

    /// `batch` products (m×k)·(k×n) of the matrices `a_mats[i]` of `a` and `b_mats[i]`
    /// of `b` (both in one dtype), as one contiguous result of `out_shape`.
    #[allow(clippy::too_many_arguments)]
    fn matmul(
        &self,
        a: &Data,
        b: &Data,
        a_mats: &[MatRef],
        b_mats: &[MatRef],
        mkn: [usize; 3],
        out_shape: &[usize],
    ) -> Result<Data>;

    /// `out[.., i, ..] = src[.., index[.., i, ..], ..]` along `dim` (index is int64).
    fn gather(&self, src: &Data, dim: usize, index: &Data) -> Result<Data>;

    /// zeros(`shape`) with `src` added at `index` along `dim`.
    fn scatter_add(&self, shape: &[usize], dim: usize, index: &Data, src: &Data) -> Result<Data>;

    /// A copy of `x` with `src` written at `index` along `dim` (added when `accumulate`;
    /// else the last write wins). `index` fits in `src` and in `x` apart from `dim`.
    fn scatter(
        &self,
        x: &Data,
        dim: usize,
        index: &Data,
        src: &Data,
        accumulate: bool,
    ) -> Result<Data>;

    /// `index_select`: the slices of `src` along `dim` at a 1-d int64 `index`, in its
    /// order; the inner `Err` is the first index out of range (negatives included).
    fn index_select(
        &self,
        src: &Data,
        dim: usize,
        index: &Data,
    ) -> Result<std::result::Result<Data, i64>>;

    /// `index_copy` / `index_add`: a copy of `x` with the slices of `src` along `dim`
    /// written (added when `accumulate`) at a 1-d int64 `index`, in index order; the
    /// inner `Err` is the first index out of range.
    fn index_write(
        &self,
        x: &Data,
        dim: usize,
        index: &Data,
        src: &Data,
        accumulate: bool,
    ) -> Result<std::result::Result<Data, i64>>;

    /// `index_write` into x's own memory (the in-place `index_add_` / `index_copy_`),
    /// for a contiguous x whose source and index live in other storages: `Ok(true)` once
    /// written, `Ok(false)` (nothing written) when the backend has no such kernel or the
    /// operands do not qualify, `Err(i)` for the first index out of range (checked
    /// before anything is written).
    fn index_write_in_place(
        &self,
        x: &Data,
        dim: usize,
        index: &Data,
        src: &Data,
        accumulate: bool,
    ) -> Result<std::result::Result<bool, i64>>;

    /// What `kind` keeps of each line of `x` along `dim` (the sorted line, its top k, its
    /// k-th value or median), with the source indices (see `kinds::SortKind`). The
    /// one-element kinds need nonempty lines.
    fn sort(&self, x: &Data, dim: usize, kind: SortKind) -> Result<(Data, Data)>;

    /// A copy of `x` with `src` combined in at `index` along `dim` (see
    /// `kinds::ScatterReduce`); `include_self` false: x's own values at the written
    /// positions left out. `src` has x's dtype; `index` fits as for `scatter`.
    fn scatter_reduce(
        &self,
        x: &Data,
        dim: usize,
        index: &Data,
        src: &Data,
        reduce: ScatterReduce,
        include_self: bool,
    ) -> Result<Data>;

    /// The groups of equal rows of `x`, read as `rows` rows of its elements in row-major
    /// order (see `kinds::Groups`): all equal rows, or runs when `consecutive`.
    fn unique_rows(&self, x: &Data, rows: usize, consecutive: bool) -> Result<Groups>;

    /// An int64 index checked against a dim of `size` and wrapped (negatives count from
    /// the end where `negative` allows them); the inner `Err` is the first index out of
    /// range (see `kernels::index::wrap_index`).
    fn wrap_index(
        &self,
        index: &Data,
        size: usize,
        negative: bool,
    ) -> Result<std::result::Result<Data, i64>>;

    /// The `[count, ndim]` int64 coordinates of the nonzero elements of `x`.
    fn nonzero(&self, x: &Data) -> Result<Data>;

    /// `x` (row-major over `from.shape`) added at `from`'s offsets into zeros, read back
    /// row-major through `to` (the adjoint of a view; see ops::view::Restride).
    fn restride(&self, x: &Data, from: &Layout, to: &Layout) -> Result<Data>;

    /// `x` with the order along each of `dims` reversed, as a fresh contiguous tensor.
    fn flip(&self, x: &Data, dims: &[usize]) -> Result<Data>;

    /// `parts` joined along `dim` into a fresh contiguous `shape` of `dtype` (each part
    /// cast; their sizes along `dim` add up to shape's).
    fn cat(&self, parts: &[Data], dim: usize, shape: &[usize], dtype: DType) -> Result<Data>;

    /// Zeros of `shape` in x's dtype with x's elements (row-major) at the offsets of
    /// `into`, a layout of x's shape over that tensor (diag_embed).
    fn embed(&self, x: &Data, into: &Layout, shape: &[usize]) -> Result<Data>;

    /// `x` with the elements above its `diagonal`-th diagonal of the last two dims
    /// (`upper`: below it) zeroed (tril / triu).
    fn triangle(&self, x: &Data, diagonal: i64, upper: bool) -> Result<Data>;

    /// `src`, broadcast to `dst`'s shape and cast to its dtype, written into `dst`.
    fn copy_into(&self, dst: &Data, src: &Data) -> Result<()>;

    /// Every element of `dst` set to `value`.
    fn fill(&self, dst: &Data, value: Scalar) -> Result<()>;

    /// A fresh contiguous `shape` of `dtype` filled by `kind`, drawn from `gen`.
    fn random(
        &self,
        shape: &[usize],
        dtype: DType,
        kind: Random,
        gen: &crate::kernels::random::RngHandle,
    ) -> Result<Data>;

    /// Whether a floating or complex `x` holds a NaN (false for other dtypes).
    fn has_nan(&self, x: &Data) -> Result<bool>;

    /// The dense matrix kernel `kind` (see `kinds::Decomp`) over batches of matrices of
    /// one float or complex dtype, sharing their batch dims.
    fn decompose(&self, inputs: &[&Data], kind: Decomp) -> Result<Vec<Data>>;

    /// softmax (or log_softmax, `log`) of a floating `x` along `dim`, contiguous, in x's
    /// dtype (half types compute in float32).
    fn softmax(&self, x: &Data, dim: usize, log: bool) -> Result<Data>;

    /// The gradient of softmax's (log_softmax's, `log`) input from `grad`, the gradient
    /// of its output `out` (same shape and floating dtype), along `dim`, contiguous.
    fn softmax_backward(&self, grad: &Data, out: &Data, dim: usize, log: bool) -> Result<Data>;
}

static CPU: crate::kernels::cpu::Cpu = crate::kernels::cpu::Cpu;

/// The backend that owns memory on `device`: one match, no allocation, so ops pay a
/// single virtual call per kernel. Devices without a backend in this build fail with
/// torch's error for them.
#[inline]
pub fn backend_for(device: Device) -> Result<&'static dyn Backend> {
    match device.kind {
        DeviceType::Cpu => Ok(&CPU),
        _ => Err(unavailable(device)),
    }
}

#[cold]
fn unavailable(device: Device) -> Error {
    match device.check_available(Use::Copy) {
        Err(Unavailable::Other(e)) => e,
        Err(Unavailable::NotCompiled(m)) => Error::runtime(m),
        Ok(()) => Error::runtime(format!("no backend for device {device}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // issue 8 §2: a device without a backend fails with torch's error, never runs on CPU.
    #[test]
    fn only_the_cpu_has_a_backend() {
        assert!(backend_for(Device::CPU).is_ok());
        assert!(backend_for(Device::parse("cpu:0").unwrap()).is_ok());
        let cuda = backend_for(Device::parse("cuda:1").unwrap()).err().unwrap();
        assert_eq!(cuda.to_string(), "Torch not compiled with CUDA enabled");
        let mps = backend_for(Device::parse("mps").unwrap()).err().unwrap();
        assert_eq!(
            mps.to_string(),
            "PyTorch is not linked with support for mps devices"
        );
    }

    /// The Rust files under `src/<dir>`, recursively, with their text.
    fn sources(dir: &str) -> Vec<(std::path::PathBuf, String)> {
        let mut out = Vec::new();
        let mut todo = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src")
            .join(dir)];
        while let Some(d) = todo.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let p = entry.unwrap().path();
                if p.is_dir() {
                    todo.push(p);
                } else if p.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    out.push((p, text));
                }
            }
        }
        out
    }

    // issue 8 §2: kernels know storages and layouts only; ops reach elements only
    // through a backend (their Rust tests may read values).
    #[test]
    fn kernels_hold_no_tensor_and_ops_read_no_memory() {
        for (path, text) in sources("kernels") {
            // Spelled in two parts so this file does not match itself.
            assert!(
                !text.contains(concat!("crate::", "tensor")),
                "{path:?} uses Tensor"
            );
        }
        let host_reads = [
            "with_dtype!",
            "with_arith!",
            "with_float!",
            "with_real!",
            "gather_data",
            "access_as",
            "contiguous_data",
            "Access::",
            "kernels::elementwise",
            "kernels::cpu",
        ];
        for (path, text) in sources("ops") {
            if path.components().any(|c| c.as_os_str() == "tests") {
                continue;
            }
            for pattern in host_reads {
                assert!(!text.contains(pattern), "{path:?} uses {pattern}");
            }
        }
    }
}
