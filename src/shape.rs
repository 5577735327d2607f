//! Dimension lists, dim wrapping, broadcasting and checked element counts.

use smallvec::SmallVec;

use crate::error::{Error, Result};

pub type Dims = SmallVec<[usize; 6]>;

/// Largest byte count a single tensor may describe. Anything above fails before allocation.
pub const MAX_BYTES: u128 = i64::MAX as u128;

pub fn fmt_dims(d: &[usize]) -> String {
    let parts: Vec<String> = d.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// torch.Size's repr, with our module name.
pub fn fmt_size(d: &[usize]) -> String {
    format!("ferrograd.Size({})", fmt_dims(d))
}

/// Number of elements, failing on overflow instead of wrapping.
pub fn checked_numel(shape: &[usize]) -> Result<usize> {
    // A product that overflows only matters when no dim is zero (then it ends at 0).
    let mut n: usize = 1;
    let mut overflowed = false;
    for &s in shape {
        match n.checked_mul(s) {
            Some(v) => n = v,
            None => overflowed = true,
        }
    }
    if n != 0 && (overflowed || n as u128 > MAX_BYTES) {
        return Err(Error::runtime(format!(
            "Storage size calculation overflowed with sizes={}",
            fmt_dims(shape)
        )));
    }
    Ok(n)
}

pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Wrap a possibly negative dim into `0..ndim` with torch's IndexError text.
pub fn wrap_dim(dim: i64, ndim: usize) -> Result<usize> {
    let n = ndim.max(1) as i64; // scalars accept dim 0 and -1
    if dim < -n || dim >= n {
        return Err(Error::index(format!(
            "Dimension out of range (expected to be in range of [{}, {}], but got {})",
            -n,
            n - 1,
            dim
        )));
    }
    Ok(if dim < 0 {
        (dim + n) as usize
    } else {
        dim as usize
    })
}

/// Like `wrap_dim` for an insertion point (unsqueeze): `0..=ndim`.
pub fn wrap_dim_insert(dim: i64, ndim: usize) -> Result<usize> {
    wrap_dim(dim, ndim + 1)
}

pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Dims> {
    let n = a.len().max(b.len());
    let mut out: Dims = SmallVec::from_elem(0, n);
    // From the last dim, as torch checks (its error names the rightmost mismatch).
    for i in (0..n).rev() {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::runtime(format!(
                "The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton dimension {i}"
            )));
        };
    }
    Ok(out)
}

/// Can `from` be broadcast to `to`?
pub fn is_expandable_to(from: &[usize], to: &[usize]) -> bool {
    if from.len() > to.len() {
        return false;
    }
    let off = to.len() - from.len();
    from.iter()
        .enumerate()
        .all(|(i, &s)| s == to[i + off] || s == 1)
}

/// Row-major strides of a contiguous tensor.
pub fn contiguous_strides(shape: &[usize]) -> Dims {
    // Starts as a copy of `shape` only to get the length cheaply; every entry is set.
    let mut strides = Dims::from_slice(shape);
    let mut acc = 1usize;
    for i in (0..shape.len()).rev() {
        strides[i] = acc;
        acc = acc.saturating_mul(shape[i].max(1));
    }
    strides
}

/// Normalize a reduction's dim list: wrapped, deduplicated check, sorted.
pub fn reduction_dims(dims: &[i64], ndim: usize) -> Result<Dims> {
    let mut out: Dims = SmallVec::new();
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if out.contains(&w) {
            return Err(Error::runtime(format!(
                "dim {w} appears multiple times in the list of dims"
            )));
        }
        out.push(w);
    }
    out.sort_unstable();
    Ok(out)
}

/// Infer a `-1` entry of a view/reshape target.
pub fn infer_size(target: &[i64], numel: usize) -> Result<Dims> {
    let mut out: Dims = SmallVec::new();
    let mut infer_at = None;
    let mut known: usize = 1;
    for (i, &s) in target.iter().enumerate() {
        if s == -1 {
            if infer_at.is_some() {
                return Err(Error::runtime("only one dimension can be inferred"));
            }
            infer_at = Some(i);
            out.push(0);
        } else if s < 0 {
            return Err(Error::runtime(format!("invalid shape dimension {s}")));
        } else {
            known = known.checked_mul(s as usize).ok_or_else(|| {
                Error::runtime(format!(
                    "shape '{:?}' is invalid for input of size {numel}",
                    target
                ))
            })?;
            out.push(s as usize);
        }
    }
    let shape_str = || {
        let p: Vec<String> = target.iter().map(|x| x.to_string()).collect();
        format!("[{}]", p.join(", "))
    };
    match infer_at {
        Some(i) => {
            if known == 0 || !numel.is_multiple_of(known) {
                return Err(Error::runtime(format!(
                    "shape '{}' is invalid for input of size {numel}",
                    shape_str()
                )));
            }
            out[i] = numel / known;
        }
        None => {
            if known != numel {
                return Err(Error::runtime(format!(
                    "shape '{}' is invalid for input of size {numel}",
                    shape_str()
                )));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn broadcast_and_errors() {
        assert_eq!(&broadcast_shapes(&[3, 1], &[4]).unwrap()[..], &[3, 4]);
        assert!(broadcast_shapes(&[3], &[4]).is_err());
        assert!(checked_numel(&[1 << 62, 8]).is_err());
        assert_eq!(wrap_dim(-1, 3).unwrap(), 2);
        assert!(wrap_dim(3, 3).is_err());
        assert_eq!(&infer_size(&[-1, 2], 6).unwrap()[..], &[3, 2]);
    }
}
