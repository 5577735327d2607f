//! The CPU backend: each kind of the `Backend` trait dispatched to the generic kernels
//! of `kernels/` for the element type of its dtype. Per-element closures live here and
//! in the submodules, never in ops.

mod arith;
mod binary_math;
mod complex_math;
mod decomp;
mod random;
mod reduce;
mod scan;
mod scatter_reduce;
mod softmax;
pub(crate) mod sort;
mod unary;
mod unique;

use crate::dtype::{DType, Scalar};
use crate::error::Result;
use crate::kernels::backend::Backend;
use crate::kernels::kinds::{
    Binary, BinaryMath, Bitwise, Compare, Decomp, Extremum, Groups, Random, Reduce, Scan,
    ScatterReduce, SortKind, Ternary, Unary,
};
use crate::kernels::matmul::{batched, MatRef};
use crate::kernels::random::RngHandle;
use crate::kernels::{cast_data, data_from, strided};
use crate::layout::Layout;
use crate::storage::Data;

pub struct Cpu;

impl Backend for Cpu {
    fn unary(&self, x: &Data, op: Unary, dtype: DType) -> Result<Data> {
        unary::unary(x, op, dtype)
    }
    fn binary(&self, a: &Data, b: &Data, op: Binary, dtype: DType) -> Result<Data> {
        arith::binary(a, b, op, dtype)
    }
    fn binary_in_place(&self, dst: &Data, other: &Data, op: Binary, alpha: Scalar) -> Result<bool> {
        Ok(arith::binary_in_place(dst, other, op, alpha))
    }
    fn binary_scalar(
        &self,
        a: &Data,
        s: Scalar,
        op: Binary,
        reversed: bool,
        dtype: DType,
    ) -> Result<Data> {
        arith::binary_scalar(a, s, op, reversed, dtype)
    }
    fn compare(&self, a: &Data, b: &Data, op: Compare, dtype: DType) -> Result<Data> {
        arith::compare(a, b, op, dtype)
    }
    fn extremum(&self, a: &Data, b: &Data, op: Extremum, dtype: DType) -> Result<Data> {
        arith::extremum(a, b, op, dtype)
    }
    fn binary_math(&self, a: &Data, b: &Data, op: BinaryMath, dtype: DType) -> Result<Data> {
        binary_math::binary_math(a, b, op, dtype)
    }
    fn bitwise(&self, a: &Data, b: &Data, op: Bitwise, dtype: DType) -> Result<Data> {
        arith::bitwise(a, b, op, dtype)
    }
    fn ternary(&self, inputs: &[&Data], op: Ternary, dtype: DType) -> Result<Data> {
        arith::ternary(inputs, op, dtype)
    }
    fn select(&self, cond: &Data, a: &Data, b: &Data, dtype: DType) -> Result<Data> {
        crate::with_dtype!(dtype, T => crate::kernels::elementwise::select::<T>(cond, a, b))
    }
    fn clamp(
        &self,
        x: &Data,
        lo: Option<Scalar>,
        hi: Option<Scalar>,
        dtype: DType,
    ) -> Result<Data> {
        arith::clamp(x, lo, hi, dtype)
    }
    fn cast(&self, x: &Data, dtype: DType) -> Result<Data> {
        crate::storage::ensure_allocatable(x.layout().numel(), dtype.itemsize())?;
        Ok(crate::kernels::elementwise::cast(x, dtype))
    }
    fn reduce(&self, x: &Data, dims: &[usize], op: Reduce, dtype: DType) -> Result<Data> {
        reduce::reduce(x, dims, op, dtype)
    }
    fn scan(&self, x: &Data, dim: usize, op: Scan, dtype: DType) -> Result<Data> {
        scan::scan(x, dim, op, dtype)
    }
    fn scan_with_index(&self, x: &Data, dim: usize, op: Scan) -> Result<(Data, Data)> {
        scan::scan_with_index(x, dim, op)
    }
    fn reduce_with_index(&self, x: &Data, dims: &[usize], op: Reduce) -> Result<(Data, Data)> {
        reduce::reduce_with_index(x, dims, op)
    }
    fn matmul(
        &self,
        a: &Data,
        b: &Data,
        a_mats: &[MatRef],
        b_mats: &[MatRef],
        [m, k, n]: [usize; 3],
        out_shape: &[usize],
    ) -> Result<Data> {
        Ok(crate::with_arith!(a.dtype(), "addmm_impl_cpu_", T =>
            data_from(batched::<T>(a, b, a_mats, b_mats, m, k, n)?, out_shape)))
    }
    fn gather(&self, src: &Data, dim: usize, index: &Data) -> Result<Data> {
        Ok(crate::with_dtype!(src.dtype(), T =>
            data_from(crate::kernels::index::gather::<T>(src, dim, index)?, &index.layout().shape)))
    }
    fn scatter_add(&self, shape: &[usize], dim: usize, index: &Data, src: &Data) -> Result<Data> {
        Ok(crate::with_arith!(src.dtype(), "scatter", T =>
            data_from(crate::kernels::index::scatter_add::<T>(shape, dim, index, src)?, shape)))
    }
    fn scatter(
        &self,
        x: &Data,
        dim: usize,
        index: &Data,
        src: &Data,
        accumulate: bool,
    ) -> Result<Data> {
        let shape = x.layout().shape.clone();
        Ok(crate::with_arith!(x.dtype(), "scatter", T => {
            let base = crate::kernels::gather_data::<T>(x);
            data_from(crate::kernels::index::scatter_into::<T>(base, &shape, dim, index, src, accumulate)?, &shape)
        }))
    }
    fn index_select(
        &self,
        src: &Data,
        dim: usize,
        index: &Data,
    ) -> Result<std::result::Result<Data, i64>> {
        let mut shape = src.layout().shape.clone();
        if let Some(n) = shape.get_mut(dim) {
            *n = index.layout().numel();
        }
        // SAFETY: read-only; dropped before returning.
        let index = unsafe { crate::kernels::contiguous_data::<i64>(index) };
        Ok(crate::with_dtype!(src.dtype(), T =>
            crate::kernels::index::select_rows::<T>(src, dim, &index).map(|v| data_from(v, &shape))))
    }
    fn index_write(
        &self,
        x: &Data,
        dim: usize,
        index: &Data,
        src: &Data,
        accumulate: bool,
    ) -> Result<std::result::Result<Data, i64>> {
        let shape = x.layout().shape.clone();
        // SAFETY: read-only; dropped before returning.
        let index = unsafe { crate::kernels::contiguous_data::<i64>(index) };
        // write_rows reads src as x's dtype, casting as it reads (no copy when they match).
        Ok(crate::with_arith!(x.dtype(), "index_add", T => {
            let base = crate::kernels::gather_data::<T>(x);
            crate::kernels::index::write_rows::<T>(base, &shape, dim, &index, src, accumulate)
                .map(|v| data_from(v, &shape))
        }))
    }
    fn index_write_in_place(
        &self,
        x: &Data,
        dim: usize,
        index: &Data,
        src: &Data,
        accumulate: bool,
    ) -> Result<std::result::Result<bool, i64>> {
        let l = x.layout();
        let apart = |d: &Data| !std::sync::Arc::ptr_eq(x.storage(), d.storage());
        let fits = l.is_contiguous() && x.dtype() != DType::Bool && src.dtype() == x.dtype();
        if !fits || !apart(src) || !apart(index) || index.dtype() != DType::I64 {
            return Ok(Ok(false));
        }
        // SAFETY: read-only; dropped before returning (index lives in another storage).
        let index = unsafe { crate::kernels::contiguous_data::<i64>(index) };
        Ok(crate::with_arith!(x.dtype(), "index_add", T => {
            let out = crate::kernels::access::<T>(x);
            // SAFETY: x's one contiguous run, checked against its storage; src and index
            // are in other storages, so nothing else refers to this memory meanwhile.
            match unsafe { out.run_mut(l.offset, l.numel()) } {
                Some(run) => crate::kernels::index::write_rows_into::<T>(
                    run, &l.shape, dim, &index, src, accumulate,
                )
                .map(|()| true),
                None => Ok(true), // no elements
            }
        }))
    }
    fn restride(&self, x: &Data, from: &Layout, to: &Layout) -> Result<Data> {
        Ok(crate::with_arith!(x.dtype(), "as_strided_scatter", T =>
            data_from(crate::kernels::index::restride::<T>(x, from, to)?, &to.shape)))
    }
    fn flip(&self, x: &Data, dims: &[usize]) -> Result<Data> {
        crate::storage::ensure_allocatable(x.layout().numel(), x.dtype().itemsize())?;
        Ok(crate::with_dtype!(x.dtype(), T => data_from(
            strided::gather::<T, T>(&crate::kernels::access::<T>(x), dims), &x.layout().shape)))
    }
    fn cat(&self, parts: &[Data], dim: usize, shape: &[usize], dtype: DType) -> Result<Data> {
        Ok(crate::with_dtype!(dtype, T => data_from(strided::cat::<T>(parts, dim, shape)?, shape)))
    }
    fn embed(&self, x: &Data, into: &Layout, shape: &[usize]) -> Result<Data> {
        Ok(
            crate::with_dtype!(x.dtype(), T => data_from(strided::embed::<T>(x, into, shape)?, shape)),
        )
    }
    fn triangle(&self, x: &Data, diagonal: i64, upper: bool) -> Result<Data> {
        Ok(crate::with_dtype!(x.dtype(), T => data_from(
            strided::triangle::<T>(x, diagonal, upper), &x.layout().shape)))
    }
    fn copy_into(&self, dst: &Data, src: &Data) -> Result<()> {
        crate::kernels::copy::write_into(dst, src)
    }
    fn fill(&self, dst: &Data, value: Scalar) -> Result<()> {
        use crate::dtype::Element;
        crate::with_dtype!(dst.dtype(), T => crate::kernels::copy::fill(dst, T::from_scalar(value)));
        Ok(())
    }
    fn random(&self, shape: &[usize], dtype: DType, kind: Random, gen: &RngHandle) -> Result<Data> {
        random::random(shape, dtype, kind, gen)
    }
    fn sort(&self, x: &Data, dim: usize, kind: SortKind) -> Result<(Data, Data)> {
        sort::sort(x, dim, kind)
    }
    fn scatter_reduce(
        &self,
        x: &Data,
        dim: usize,
        index: &Data,
        src: &Data,
        reduce: ScatterReduce,
        include_self: bool,
    ) -> Result<Data> {
        scatter_reduce::scatter_reduce(x, dim, index, src, reduce, include_self)
    }
    fn unique_rows(&self, x: &Data, rows: usize, consecutive: bool) -> Result<Groups> {
        unique::unique_rows(x, rows, consecutive)
    }
    fn wrap_index(
        &self,
        index: &Data,
        size: usize,
        negative: bool,
    ) -> Result<std::result::Result<Data, i64>> {
        let wrapped = crate::kernels::index::wrap_index(index, size, negative);
        Ok(wrapped.map(|w| data_from(w, &index.layout().shape)))
    }
    fn nonzero(&self, x: &Data) -> Result<Data> {
        let mask = match x.dtype() {
            DType::Bool => x.clone(),
            _ => cast_data(x, DType::Bool),
        };
        let (count, coords) = crate::kernels::index::nonzero(&mask);
        Ok(data_from(coords, &[count, x.layout().shape.len()]))
    }
    fn has_nan(&self, x: &Data) -> Result<bool> {
        Ok(crate::kernels::has_nan(x))
    }
    fn decompose(&self, inputs: &[&Data], kind: Decomp) -> Result<Vec<Data>> {
        decomp::decompose(inputs, kind)
    }
    fn softmax(&self, x: &Data, dim: usize, log: bool) -> Result<Data> {
        crate::storage::ensure_allocatable(x.layout().numel(), x.dtype().itemsize())?;
        softmax::softmax(x, dim, log)
    }
    fn softmax_backward(&self, grad: &Data, out: &Data, dim: usize, log: bool) -> Result<Data> {
        crate::storage::ensure_allocatable(out.layout().numel(), out.dtype().itemsize())?;
        softmax::softmax_backward(grad, out, dim, log)
    }
}
