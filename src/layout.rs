//! Shape + strides + storage offset as a plain value. Every view transform is a pure
//! function from one Layout to another (or a typed error); storage is never touched here.
//! Strides are in elements and never negative (torch forbids negative steps).
//! Every layout a tensor holds fits its storage: `check_in_storage` is torch's check,
//! made whenever a `storage::Data` (a tensor's storage and layout) is made; a layout a
//! kernel derives from it is checked again by `storage::Access::new`.

use smallvec::SmallVec;

use crate::error::{Error, Result};
use crate::shape::{checked_numel, contiguous_strides, wrap_dim, wrap_dim_insert, Dims};

#[derive(Debug, PartialEq, Eq)]
pub struct Layout {
    pub shape: Dims,
    pub strides: Dims,
    pub offset: usize,
}

// By hand: SmallVec's own `clone` copies element by element; layouts are cloned on
// every op (node metadata, views), and a plain copy of the slice is several times faster.
impl Clone for Layout {
    fn clone(&self) -> Layout {
        Layout {
            shape: Dims::from_slice(&self.shape),
            strides: Dims::from_slice(&self.strides),
            offset: self.offset,
        }
    }
}

impl Layout {
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            shape: Dims::from_slice(shape),
            strides: contiguous_strides(shape),
            offset: 0,
        }
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// One past the largest storage element this layout touches (0 for empty tensors),
    /// computed with checked arithmetic: a layout whose extent does not fit in an i64
    /// byte count is torch's "Storage size calculation overflowed" error, never a
    /// wrapped number.
    /// This layout with a new leading dim of `size` and stride `stride`: one copy per
    /// example, side by side over a storage `size` times longer (batched rules).
    pub fn with_leading_dim(&self, size: usize, stride: usize) -> Layout {
        Layout {
            shape: std::iter::once(size)
                .chain(self.shape.iter().copied())
                .collect(),
            strides: std::iter::once(stride)
                .chain(self.strides.iter().copied())
                .collect(),
            offset: self.offset,
        }
    }

    pub fn storage_extent(&self) -> Result<usize> {
        self.extent_bytes(1)
    }

    /// Bytes from the storage start to one past the last element for items of
    /// `itemsize` bytes: torch's `computeStorageNbytes` (an overflow above `i64::MAX` is
    /// its error; 0 when any size is 0). Any usize overflow is above `i64::MAX` too.
    #[inline]
    fn extent_bytes(&self, itemsize: usize) -> Result<usize> {
        let (shape, strides) = (self.shape.as_slice(), self.strides.as_slice());
        let mut end = self.offset.checked_add(1);
        for (&n, &s) in shape.iter().zip(strides) {
            if n == 0 {
                return Ok(0);
            }
            end = end.and_then(|e| e.checked_add((n - 1).checked_mul(s)?));
        }
        match end.and_then(|e| e.checked_mul(itemsize)) {
            Some(b) if b <= i64::MAX as usize => Ok(b),
            _ => Err(self.overflow()),
        }
    }

    #[cold]
    fn overflow(&self) -> Error {
        overflow_error(
            &self.shape.iter().map(|&n| n as i64).collect::<Vec<_>>(),
            &self.strides.iter().map(|&s| s as i64).collect::<Vec<_>>(),
        )
    }

    /// torch's `checkInBoundsForStorage`: this layout must only reach elements of a
    /// storage of `storage_nbytes` bytes holding items of `itemsize` bytes.
    #[inline]
    pub fn check_in_storage(&self, storage_nbytes: usize, itemsize: usize) -> Result<()> {
        let required = self.extent_bytes(itemsize)?;
        if required > storage_nbytes {
            return Err(self.out_of_bounds(itemsize, required, storage_nbytes));
        }
        Ok(())
    }

    #[cold]
    fn out_of_bounds(&self, itemsize: usize, required: usize, storage_nbytes: usize) -> Error {
        out_of_bounds_error(
            &fmt_i64s(self.shape.iter().map(|&n| n as i64)),
            &fmt_i64s(self.strides.iter().map(|&s| s as i64)),
            self.offset as i64,
            itemsize,
            required as u64,
            storage_nbytes,
        )
    }

    /// Row-major contiguous (size-1 dims may have any stride).
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1usize;
        for i in (0..self.ndim()).rev() {
            let n = self.shape[i];
            if n == 0 {
                return true;
            }
            if n != 1 {
                if self.strides[i] != expected {
                    return false;
                }
                expected *= n;
            }
        }
        true
    }

    /// Strides describe a permutation of a contiguous block: no gaps, no overlap.
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        if self.is_contiguous() {
            return true;
        }
        let mut perm: SmallVec<[usize; 6]> = (0..self.ndim()).collect();
        perm.sort_by_key(|&i| (self.strides[i], self.shape[i]));
        let mut expected = 1usize;
        for &i in &perm {
            let n = self.shape[i];
            if n == 1 {
                continue;
            }
            if self.strides[i] != expected {
                return false;
            }
            expected *= n;
        }
        true
    }

    /// Strides for a fresh dense tensor with the same dim ordering as `self`
    /// (torch's `infer_dense_strides`), used by the `.grad` layout rules and `*_like`.
    pub fn dense_strides_like(&self) -> Dims {
        let nd = self.ndim();
        let mut perm: SmallVec<[usize; 6]> = (0..nd).collect();
        // Innermost first: smaller stride is "more inner"; ties keep the later dim inner.
        perm.sort_by(|&a, &b| {
            let (sa, sb) = (self.strides[a], self.strides[b]);
            if self.shape[a] == 1 || self.shape[b] == 1 || sa == sb {
                b.cmp(&a)
            } else {
                sa.cmp(&sb)
            }
        });
        let mut strides: Dims = SmallVec::from_elem(0, nd);
        let mut acc = 1usize;
        for &i in &perm {
            strides[i] = acc;
            acc *= self.shape[i].max(1);
        }
        strides
    }

    pub fn permute(&self, dims: &[i64]) -> Result<Layout> {
        let nd = self.ndim();
        if dims.len() != nd {
            return Err(Error::runtime(format!(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
                nd,
                dims.len()
            )));
        }
        let mut seen: SmallVec<[bool; 6]> = SmallVec::from_elem(false, nd);
        let mut out = Layout {
            shape: Dims::new(),
            strides: Dims::new(),
            offset: self.offset,
        };
        for &d in dims {
            let w = wrap_dim(d, nd)?;
            if seen[w] {
                return Err(Error::runtime("permute(): duplicate dims are not allowed."));
            }
            seen[w] = true;
            out.shape.push(self.shape[w]);
            out.strides.push(self.strides[w]);
        }
        Ok(out)
    }

    pub fn transpose(&self, d0: i64, d1: i64) -> Result<Layout> {
        let nd = self.ndim();
        let (a, b) = (wrap_dim(d0, nd)?, wrap_dim(d1, nd)?);
        let mut out = self.clone();
        if nd > 0 {
            out.shape.swap(a, b);
            out.strides.swap(a, b);
        }
        Ok(out)
    }

    /// Broadcast to `shape` (which may have more leading dims); new/size-1 dims get stride 0.
    /// `-1` in `target` keeps the existing size.
    pub fn expand(&self, target: &[i64]) -> Result<Layout> {
        let nd = self.ndim();
        if target.len() < nd {
            // ops::view::expand_sizes reports this with the tensor's type first.
            return Err(Error::runtime(format!(
                "expand: the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({nd})",
                target.len()
            )));
        }
        let off = target.len() - nd;
        let mut shape: Dims = smallvec::smallvec![0; target.len()];
        let mut strides: Dims = smallvec::smallvec![0; target.len()];
        // Walk from the last dim, as torch does, so errors name the same dim.
        for i in (0..target.len()).rev() {
            let t = target[i];
            if i < off {
                if t < 0 {
                    return Err(Error::runtime(format!(
                        "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                    )));
                }
                shape[i] = t as usize;
                continue;
            }
            let (n, s) = (self.shape[i - off], self.strides[i - off]);
            if t == -1 || t as usize == n {
                shape[i] = n;
                strides[i] = s;
            } else if n == 1 && t >= 0 {
                shape[i] = t as usize;
            } else {
                return Err(Error::runtime(format!(
                    "The expanded size of the tensor ({t}) must match the existing size ({n}) at non-singleton dimension {i}.  Target sizes: [{}].  Tensor sizes: {}",
                    target.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "),
                    crate::shape::fmt_dims(&self.shape)
                )));
            }
        }
        checked_numel(&shape)?;
        Ok(Layout {
            shape,
            strides,
            offset: self.offset,
        })
    }

    pub fn expand_to(&self, shape: &[usize]) -> Result<Layout> {
        let t: SmallVec<[i64; 6]> = shape.iter().map(|&s| s as i64).collect();
        self.expand(&t)
    }

    /// Python-style slice along `dim`: start/end already clamped by the caller or here.
    pub fn slice(&self, dim: usize, start: i64, end: i64, step: i64) -> Result<Layout> {
        if step <= 0 {
            return Err(Error::value("step must be greater than zero"));
        }
        let n = self.shape[dim] as i64;
        let clamp = |v: i64| -> i64 {
            let v = if v < 0 { v + n } else { v };
            v.clamp(0, n)
        };
        let (s, e) = (clamp(start), clamp(end));
        let len = if e > s { (e - s + step - 1) / step } else { 0 };
        let mut out = self.clone();
        if len > 0 {
            out.offset += s as usize * self.strides[dim];
        }
        out.shape[dim] = len as usize;
        out.strides[dim] = self.strides[dim] * step as usize;
        Ok(out)
    }

    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Result<Layout> {
        let d = wrap_dim(dim, self.ndim())?;
        let n = self.shape[d] as i64;
        let start = if start < 0 { start + n } else { start };
        if start < 0 || start > n {
            return Err(Error::index(format!(
                "start out of range (expected to be in range of [{}, {}], but got {})",
                -n, n, start
            )));
        }
        if length < 0 || start + length > n {
            return Err(Error::runtime(format!(
                "start ({start}) + length ({length}) exceeds dimension size ({n})."
            )));
        }
        self.slice(d, start, start + length, 1)
    }

    pub fn select(&self, dim: i64, index: i64) -> Result<Layout> {
        if self.ndim() == 0 {
            return Err(Error::index(
                "select() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let n = self.shape[d] as i64;
        if index < -n || index >= n {
            return Err(Error::index(format!(
                "select(): index {index} out of range for tensor of size {} at dimension {d}",
                crate::shape::fmt_dims(&self.shape)
            )));
        }
        let i = if index < 0 { index + n } else { index } as usize;
        let mut out = self.clone();
        out.offset += i * self.strides[d];
        out.shape.remove(d);
        out.strides.remove(d);
        Ok(out)
    }

    /// `unfold(dim, size, step)`: the windows of `size` elements `step` apart along
    /// `dim` (a new last dim walks a window); a 0-dim tensor is one window of its value.
    pub fn unfold(&self, dim: i64, size: i64, step: i64) -> Result<Layout> {
        let nd = self.ndim();
        let d = wrap_dim(dim, nd)?;
        let max = if nd == 0 { 1 } else { self.shape[d] as i64 };
        if size > max {
            return Err(Error::runtime(format!(
                "maximum size for tensor at dimension {d} is {max} but size is {size}"
            )));
        }
        if size < 0 {
            return Err(Error::runtime(format!("size is {size} but must be >= 0")));
        }
        if step <= 0 {
            return Err(Error::runtime(format!("step is {step} but must be > 0")));
        }
        let mut out = self.clone();
        let along = if nd == 0 { 1 } else { self.strides[d] };
        if nd > 0 {
            out.shape[d] = ((max - size) / step + 1) as usize;
            out.strides[d] = along * step as usize;
        }
        out.shape.push(size as usize);
        out.strides.push(along);
        Ok(out)
    }

    pub fn unsqueeze(&self, dim: i64) -> Result<Layout> {
        let d = wrap_dim_insert(dim, self.ndim())?;
        let mut out = self.clone();
        let stride = if d < self.ndim() {
            self.shape[d] * self.strides[d]
        } else {
            1
        };
        out.shape.insert(d, 1);
        out.strides.insert(d, stride.max(1));
        Ok(out)
    }

    /// Remove the given size-1 dims (all size-1 dims when `dims` is None).
    pub fn squeeze(&self, dims: Option<&[usize]>) -> Layout {
        let mut out = Layout {
            shape: Dims::new(),
            strides: Dims::new(),
            offset: self.offset,
        };
        for i in 0..self.ndim() {
            let drop = self.shape[i] == 1 && dims.is_none_or(|d| d.contains(&i));
            if !drop {
                out.shape.push(self.shape[i]);
                out.strides.push(self.strides[i]);
            }
        }
        out
    }

    pub fn diagonal(&self, offset: i64, d1: i64, d2: i64) -> Result<Layout> {
        let nd = self.ndim();
        let (a, b) = (wrap_dim(d1, nd)?, wrap_dim(d2, nd)?);
        if a == b {
            return Err(Error::runtime(format!(
                "diagonal dimensions cannot be identical {d1}, {d2}"
            )));
        }
        let (na, nb) = (self.shape[a] as i64, self.shape[b] as i64);
        let (len, start) = if offset >= 0 {
            (
                (na.min(nb - offset)).max(0),
                offset as usize * self.strides[b],
            )
        } else {
            (
                (nb.min(na + offset)).max(0),
                (-offset) as usize * self.strides[a],
            )
        };
        let mut out = Layout {
            shape: Dims::new(),
            strides: Dims::new(),
            offset: self.offset,
        };
        if len > 0 {
            out.offset += start;
        }
        for i in 0..nd {
            if i != a && i != b {
                out.shape.push(self.shape[i]);
                out.strides.push(self.strides[i]);
            }
        }
        out.shape.push(len as usize);
        out.strides.push(self.strides[a] + self.strides[b]);
        Ok(out)
    }

    /// `view`: reuse the storage with new sizes when the strides allow it (torch's
    /// computeStride), else None (reshape then copies).
    pub fn view(&self, shape: &[usize]) -> Option<Layout> {
        let numel = self.numel();
        if numel <= 1 || self.shape.as_slice() == shape {
            let mut l = Layout::contiguous(shape);
            l.offset = self.offset;
            if self.shape.as_slice() == shape {
                l.strides = self.strides.clone();
            }
            return Some(l);
        }
        let mut new_strides: Dims = SmallVec::from_elem(0, shape.len());
        let old_nd = self.ndim();
        let mut view_d = shape.len() as i64 - 1;
        let mut chunk_base_stride = *self.strides.last().unwrap_or(&1);
        let mut tensor_numel = 1usize;
        let mut view_numel = 1usize;
        for tensor_d in (0..old_nd).rev() {
            tensor_numel *= self.shape[tensor_d];
            if tensor_d == 0
                || (self.shape[tensor_d - 1] != 1
                    && self.strides[tensor_d - 1] != tensor_numel * chunk_base_stride)
            {
                while view_d >= 0 && (view_numel < tensor_numel || shape[view_d as usize] == 1) {
                    new_strides[view_d as usize] = view_numel * chunk_base_stride;
                    view_numel *= shape[view_d as usize];
                    view_d -= 1;
                }
                if view_numel != tensor_numel {
                    return None;
                }
                if tensor_d > 0 {
                    chunk_base_stride = self.strides[tensor_d - 1];
                    tensor_numel = 1;
                    view_numel = 1;
                }
            }
        }
        if view_d != -1 {
            return None;
        }
        Some(Layout {
            shape: shape.into(),
            strides: new_strides,
            offset: self.offset,
        })
    }

    /// torch's `as_strided` checks, in torch's order, on the raw (signed) arguments:
    /// lengths, negative strides, negative offset, storage size overflow, bounds against
    /// a storage of `storage_size` bytes, then the element count.
    pub fn as_strided(
        sizes: &[i64],
        strides: &[i64],
        offset: i64,
        itemsize: usize,
        storage_size: usize,
    ) -> Result<Layout> {
        if sizes.len() != strides.len() {
            return Err(Error::runtime("mismatch in length of strides and shape"));
        }
        if strides.iter().any(|&s| s < 0) {
            return Err(Error::runtime(format!(
                "as_strided: Negative strides are not supported at the moment, got strides: {}",
                fmt_i64s(strides.iter().copied())
            )));
        }
        if offset < 0 {
            return Err(Error::runtime(format!(
                "Tensor: invalid storage offset {offset}"
            )));
        }
        let nbytes = storage_nbytes(sizes, strides, offset, itemsize)?;
        if nbytes > storage_size as u64 {
            return Err(out_of_bounds_error(
                &fmt_i64s(sizes.iter().copied()),
                &fmt_i64s(strides.iter().copied()),
                offset,
                itemsize,
                nbytes,
                storage_size,
            ));
        }
        if sizes.iter().any(|&n| n < 0) {
            return Err(Error::runtime("numel: integer multiplication overflow"));
        }
        let shape: Dims = sizes.iter().map(|&n| n as usize).collect();
        checked_numel(&shape)?;
        Ok(Layout {
            shape,
            strides: strides.iter().map(|&s| s as usize).collect(),
            offset: offset as usize,
        })
    }

    /// Storage offsets of every element in row-major order (for generic strided kernels).
    pub fn offsets(&self) -> OffsetIter<'_> {
        OffsetIter::new(self)
    }
}

// Kernels take a layout owned (derived: broadcast, permuted) or borrowed (the tensor's).
impl From<Layout> for std::borrow::Cow<'_, Layout> {
    fn from(l: Layout) -> Self {
        std::borrow::Cow::Owned(l)
    }
}
impl<'a> From<&'a Layout> for std::borrow::Cow<'a, Layout> {
    fn from(l: &'a Layout) -> Self {
        std::borrow::Cow::Borrowed(l)
    }
}

fn fmt_i64s(v: impl Iterator<Item = i64>) -> String {
    let parts: Vec<String> = v.map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

fn overflow_error(sizes: &[i64], strides: &[i64]) -> Error {
    Error::runtime(format!(
        "Storage size calculation overflowed with sizes={} and strides={}",
        fmt_i64s(sizes.iter().copied()),
        fmt_i64s(strides.iter().copied())
    ))
}

fn out_of_bounds_error(
    sizes: &str,
    strides: &str,
    offset: i64,
    itemsize: usize,
    required: u64,
    storage_nbytes: usize,
) -> Error {
    Error::runtime(format!(
        "setStorage: sizes {sizes}, strides {strides}, storage offset {offset}, and itemsize {itemsize} requiring a storage size of {required} are out of bounds for storage of size {storage_nbytes}"
    ))
}

/// torch's `computeStorageNbytes`, bit for bit: bytes from the storage start to one past
/// the last element, in wrapping-checked u64 arithmetic on the signed arguments (so a
/// negative size with a nonzero stride overflows, as in torch); 0 when any size is 0;
/// above `i64::MAX` is the overflow error.
pub fn storage_nbytes(sizes: &[i64], strides: &[i64], offset: i64, itemsize: usize) -> Result<u64> {
    let mut overflowed = false;
    let mut size = (offset as u64).overflowing_add(1);
    overflowed |= size.1;
    for (&n, &s) in sizes.iter().zip(strides) {
        if n == 0 {
            return Ok(0);
        }
        let (strided, o1) = (s as u64).overflowing_mul(n.wrapping_sub(1) as u64);
        let (sum, o2) = size.0.overflowing_add(strided);
        overflowed |= o1 | o2;
        size.0 = sum;
    }
    let (bytes, o3) = size.0.overflowing_mul(itemsize as u64);
    overflowed |= o3 || bytes > i64::MAX as u64;
    if overflowed {
        return Err(overflow_error(sizes, strides));
    }
    Ok(bytes)
}

/// Walks a layout's elements in row-major order yielding storage offsets.
pub struct OffsetIter<'a> {
    layout: &'a Layout,
    index: Dims,
    next: usize,
    remaining: usize,
}

impl<'a> OffsetIter<'a> {
    fn new(layout: &'a Layout) -> Self {
        OffsetIter {
            layout,
            index: SmallVec::from_elem(0, layout.ndim()),
            next: layout.offset,
            remaining: layout.numel(),
        }
    }
}

impl Iterator for OffsetIter<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let cur = self.next;
        let l = self.layout;
        for d in (0..l.ndim()).rev() {
            self.index[d] += 1;
            if self.index[d] < l.shape[d] {
                self.next += l.strides[d];
                break;
            }
            self.next -= (l.shape[d] - 1) * l.strides[d];
            self.index[d] = 0;
        }
        Some(cur)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn views_are_pure_layout_math() {
        let l = Layout::contiguous(&[2, 3]);
        let t = l.transpose(0, 1).unwrap();
        assert_eq!(&t.strides[..], &[1, 3]);
        assert!(!t.is_contiguous());
        assert!(t.is_non_overlapping_and_dense());
        assert!(t.view(&[6]).is_none());
        assert_eq!(&l.view(&[3, 2]).unwrap().strides[..], &[2, 1]);
        let s = Layout::contiguous(&[3, 6]).slice(1, 0, 6, 2).unwrap();
        assert_eq!(&s.strides[..], &[6, 2]);
        assert!(!s.is_non_overlapping_and_dense());
        let offs: Vec<usize> = t.offsets().collect();
        assert_eq!(offs, vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(&t.dense_strides_like()[..], &[1, 3]);
        let e = Layout::contiguous(&[3])
            .unsqueeze(0)
            .unwrap()
            .expand(&[4, 3])
            .unwrap();
        assert_eq!(&e.strides[..], &[0, 1]);
    }

    // issue 7 §1: extents are checked, never wrapped.
    #[test]
    fn storage_extent_is_checked() {
        let l = Layout {
            shape: smallvec::smallvec![5, 5],
            strides: smallvec::smallvec![1 << 62, 1],
            offset: 0,
        };
        let e = l.storage_extent().unwrap_err().to_string();
        assert_eq!(e, "Storage size calculation overflowed with sizes=[5, 5] and strides=[4611686018427387904, 1]");
        assert_eq!(Layout::contiguous(&[2, 3]).storage_extent().unwrap(), 6);
        assert_eq!(Layout::contiguous(&[0, 3]).storage_extent().unwrap(), 0);
        let huge = Layout {
            shape: smallvec::smallvec![2],
            strides: smallvec::smallvec![usize::MAX],
            offset: 0,
        };
        assert!(huge.storage_extent().is_err());
        // Fits in elements, overflows in bytes.
        let bytes = Layout {
            shape: smallvec::smallvec![2],
            strides: smallvec::smallvec![1 << 61],
            offset: 0,
        };
        assert_eq!(bytes.storage_extent().unwrap(), (1 << 61) + 1);
        assert!(bytes
            .check_in_storage(1 << 62, 4)
            .unwrap_err()
            .to_string()
            .starts_with("Storage size calculation overflowed"));
    }

    #[test]
    fn check_in_storage_uses_torchs_text() {
        let l = Layout {
            shape: smallvec::smallvec![3],
            strides: smallvec::smallvec![2],
            offset: 4,
        };
        assert_eq!(
            l.check_in_storage(20, 4).unwrap_err().to_string(),
            "setStorage: sizes [3], strides [2], storage offset 4, and itemsize 4 requiring a storage size of 36 are out of bounds for storage of size 20"
        );
        assert!(l.check_in_storage(36, 4).is_ok());
        // An empty layout needs no storage, whatever its offset.
        let empty = Layout {
            shape: smallvec::smallvec![0],
            strides: smallvec::smallvec![1],
            offset: 100,
        };
        assert!(empty.check_in_storage(0, 4).is_ok());
    }

    #[test]
    fn as_strided_checks_in_torchs_order() {
        let err = |s: &[i64], st: &[i64], o: i64| {
            Layout::as_strided(s, st, o, 4, 20).unwrap_err().to_string()
        };
        assert_eq!(
            err(&[3], &[1, 1], 0),
            "mismatch in length of strides and shape"
        );
        assert!(err(&[3], &[-1], -1).starts_with("as_strided: Negative strides"));
        assert_eq!(err(&[-3], &[1], -1), "Tensor: invalid storage offset -1");
        assert!(
            err(&[-3], &[1], 0).starts_with("Storage size calculation overflowed with sizes=[-3]")
        );
        assert!(err(&[3], &[2], i64::MAX).starts_with("Storage size calculation overflowed"));
        assert!(err(&[6], &[1], 0).starts_with("setStorage: sizes [6]"));
        assert_eq!(
            err(&[-1, 2], &[0, 1], 0),
            "numel: integer multiplication overflow"
        );
        let ok = Layout::as_strided(&[2, 2], &[1, 2], 1, 4, 20).unwrap();
        assert_eq!(
            (&ok.shape[..], &ok.strides[..], ok.offset),
            (&[2, 2][..], &[1, 2][..], 1)
        );
        assert!(Layout::as_strided(&[0, 5], &[1 << 62, 1], 0, 4, 20).is_ok());
    }
}
