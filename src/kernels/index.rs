//! Gather / scatter-add along one dim (used by max/min along a dim and their rules).

use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::kernels::contiguous_data;
use crate::kernels::traits::Arith;
use crate::shape::contiguous_strides;
use crate::storage::Data;

fn check_index(i: i64, size: usize, dim: usize) -> Result<usize> {
    if i < 0 || i as usize >= size {
        return Err(Error::runtime(format!(
            "index {i} is out of bounds for dimension {dim} with size {size}"
        )));
    }
    Ok(i as usize)
}

/// out[..., i, ...] = src[..., index[..., i, ...], ...] along `dim`; out has index's shape.
pub fn gather<T: Element>(src: &Data, dim: usize, index: &Data) -> Result<Vec<T>> {
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let (idx, data) = unsafe { (contiguous_data::<i64>(index), contiguous_data::<T>(src)) };
    let ishape = &index.layout().shape;
    let sshape = &src.layout().shape;
    let sstrides = contiguous_strides(sshape);
    let istrides = contiguous_strides(ishape);
    let mut out = Vec::with_capacity(idx.len());
    for (flat, &ix) in idx.iter().enumerate() {
        let mut off = 0;
        for d in 0..ishape.len() {
            let c = (flat / istrides[d]) % ishape[d].max(1);
            let c = if d == dim {
                check_index(ix, sshape[d], d)?
            } else {
                c
            };
            off += c * sstrides[d];
        }
        out.push(data[off]);
    }
    Ok(out)
}

/// zeros(`bshape`) with out[..., index[i], ...] += src[i] along `dim`.
pub fn scatter_add<T: Arith>(
    bshape: &[usize],
    dim: usize,
    index: &Data,
    src: &Data,
) -> Result<Vec<T>> {
    let n = crate::shape::checked_numel(bshape)?;
    crate::storage::ensure_allocatable(n, std::mem::size_of::<T>())?;
    scatter_into(vec![T::zero(); n], bshape, dim, index, src, true)
}

/// `out` (row-major over `bshape`) with src[i] written at out[..., index[i], ...] along
/// `dim` (added when `accumulate`, else the last write wins). The callers have checked
/// that index fits in both `src` and `bshape` apart from `dim`.
pub fn scatter_into<T: Arith>(
    mut out: Vec<T>,
    bshape: &[usize],
    dim: usize,
    index: &Data,
    src: &Data,
    accumulate: bool,
) -> Result<Vec<T>> {
    // SAFETY: read-only; dropped before returning; `out` is the caller's fresh Vec.
    let vals = unsafe { contiguous_data::<T>(src) };
    for (off, voff) in scatter_offsets(index, bshape, &src.layout().shape, dim)? {
        out[off] = if accumulate {
            out[off] + vals[voff]
        } else {
            vals[voff]
        };
    }
    Ok(out)
}

/// For each element of `index` in row-major order: where it writes in a row-major
/// `bshape` (its value along `dim`, checked against the size there) and where its value
/// sits in a row-major `src_shape`. Index fits both apart from `dim` (callers check).
pub fn scatter_offsets(
    index: &Data,
    bshape: &[usize],
    src_shape: &[usize],
    dim: usize,
) -> Result<Vec<(usize, usize)>> {
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let idx = unsafe { contiguous_data::<i64>(index) };
    let ishape = &index.layout().shape;
    let ostrides = contiguous_strides(bshape);
    let istrides = contiguous_strides(ishape);
    let vstrides = contiguous_strides(src_shape);
    idx.iter()
        .enumerate()
        .map(|(flat, &ix)| {
            let (mut off, mut voff) = (0, 0);
            for d in 0..ishape.len() {
                let c = (flat / istrides[d]) % ishape[d].max(1);
                voff += c * vstrides[d];
                let c = if d == dim {
                    check_index(ix, bshape[d], d)?
                } else {
                    c
                };
                off += c * ostrides[d];
            }
            Ok((off, voff))
        })
        .collect()
}

/// Move values between two layouts over one virtual storage: scatter-add `x` (row-major,
/// shape `from.shape`) at `from`'s offsets into zeros, then read `to` row-major. With
/// `to` the input's layout and `from` a view's, this is the adjoint of every view op.
pub fn restride<T: Arith>(
    x: &Data,
    from: &crate::layout::Layout,
    to: &crate::layout::Layout,
) -> Result<Vec<T>> {
    let extent = from.storage_extent()?.max(to.storage_extent()?);
    crate::storage::ensure_allocatable(extent + to.numel(), std::mem::size_of::<T>())?;
    let mut buf = vec![T::zero(); extent];
    // SAFETY: read-only; dropped before returning; `buf` is a fresh Vec.
    let vals = unsafe { contiguous_data::<T>(x) };
    for (off, &v) in from.offsets().zip(vals.iter()) {
        buf[off] = buf[off] + v;
    }
    Ok(to.offsets().map(|o| buf[o]).collect())
}

/// An int64 index checked against a dim of `size` and wrapped (a negative index counts
/// from the end, where `negative` allows it), contiguous; `Err(i)` is the first index out
/// of range (each caller words its own error).
pub fn wrap_index(index: &Data, size: usize, negative: bool) -> std::result::Result<Vec<i64>, i64> {
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let idx = unsafe { contiguous_data::<i64>(index) };
    let n = size as i64;
    idx.iter()
        .map(|&i| match i {
            _ if (0..n).contains(&i) => Ok(i),
            _ if negative && (-n..0).contains(&i) => Ok(i + n),
            _ => Err(i),
        })
        .collect()
}

/// How many elements of a bool `mask` are true, and their coordinates, row-major,
/// as a flat `[count, mask.dim()]` list (a 0-dim mask has a count and no coordinates).
pub fn nonzero(mask: &Data) -> (usize, Vec<i64>) {
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let vals = unsafe { contiguous_data::<bool>(mask) };
    let shape = &mask.layout().shape;
    let strides = contiguous_strides(shape);
    let (mut count, mut out) = (0, Vec::new());
    for (flat, _) in vals.iter().enumerate().filter(|(_, &v)| v) {
        count += 1;
        out.extend(
            strides
                .iter()
                .zip(shape.iter())
                .map(|(&s, &n)| ((flat / s) % n.max(1)) as i64),
        );
    }
    (count, out)
}
