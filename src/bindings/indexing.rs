//! `Tensor.__getitem__` and `__setitem__`. Ints, slices, None and Ellipsis become
//! views first (as torch applies them); index tensors, lists and bool masks that remain
//! then go to `ops::advanced_index` with one entry per dim of that view.

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyList, PySlice, PyTuple};

use crate::autograd::warnings::WarningKind;
use crate::bindings::convert::{as_tensor_ref, index_int, tensor_from_data, Operand};
use crate::bindings::errors::{run, warn};
use crate::bindings::tensor::expect_operand;
use crate::dtype::{Category, DType};
use crate::ops::{advanced_index, creation, inplace, view};
use crate::tensor::Tensor;

enum Item {
    Int(i64),
    Slice(Option<i64>, Option<i64>, Option<i64>),
    NewAxis,
    Ellipsis,
    /// A Python bool or a 0-dim bool tensor: a new dim of size 1 (true) or 0 (false).
    Bool(bool),
    /// An index tensor (from a tensor, list, tuple or array): integers or a mask.
    Tensor(Tensor),
}

impl Item {
    /// How many dims of the indexed tensor the item consumes.
    fn consumes(&self) -> usize {
        match self {
            Item::Int(_) | Item::Slice(..) => 1,
            Item::Tensor(t) if is_mask(t) => t.dim(),
            Item::Tensor(_) => 1,
            Item::NewAxis | Item::Ellipsis | Item::Bool(_) => 0,
        }
    }
}

fn is_mask(t: &Tensor) -> bool {
    matches!(t.dtype(), DType::Bool | DType::U8)
}

/// A list, nested tuple or array as an index tensor; an empty one indexes nothing (int64).
fn sequence_index(obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let t = tensor_from_data(obj, None)?;
    if t.numel() == 0 && t.dtype().is_floating_point() {
        return run(|| crate::ops::unary::to_dtype(&t, DType::I64));
    }
    Ok(t)
}

fn parse_item(it: &Bound<'_, PyAny>) -> PyResult<Item> {
    if it.is_none() {
        return Ok(Item::NewAxis);
    }
    if it.is_instance_of::<PyEllipsis>() {
        return Ok(Item::Ellipsis);
    }
    if let Ok(s) = it.cast::<PySlice>() {
        let get = |name: &str| -> PyResult<Option<i64>> {
            let v = s.getattr(name)?;
            if v.is_none() {
                Ok(None)
            } else {
                index_int(&v).map(Some)
            }
        };
        return Ok(Item::Slice(get("start")?, get("stop")?, get("step")?));
    }
    if let Ok(b) = it.cast::<PyBool>() {
        return Ok(Item::Bool(b.is_true()));
    }
    if let Some(t) = as_tensor_ref(it) {
        if t.dim() == 0 && t.dtype().category() == Category::Integral {
            return Ok(Item::Int(index_int(it)?));
        }
        if t.dim() == 0 && t.dtype() == DType::Bool {
            crate::bindings::tensor::refuse_batched(&t, ERR_VMAP_MASK)?;
            return Ok(Item::Bool(t.to_vec::<bool>()[0]));
        }
        return Ok(Item::Tensor(t));
    }
    if let Ok(i) = it.extract::<i64>() {
        return Ok(Item::Int(i));
    }
    if it.is_instance_of::<PyList>()
        || it.is_instance_of::<PyTuple>()
        || it.hasattr("__array_interface__")?
    {
        return Ok(Item::Tensor(sequence_index(it)?));
    }
    Err(PyIndexError::new_err(format!(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got {})",
        it.get_type().name()?
    )))
}

const ERR_VMAP_MASK: &str = "vmap: We do not support batching operators that can support dynamic shape. Attempting to batch over indexing with a boolean mask.";

const WARN_SEQUENCE_KEY: &str = "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error or a different result";

/// torch (still, with a warning) reads a short list holding a sequence, slice, None,
/// Ellipsis or tensor as a tuple key.
fn list_as_tuple(list: &Bound<'_, PyList>) -> bool {
    list.len() < 32
        && list.iter().any(|it| {
            it.is_none()
                || it.is_instance_of::<PyList>()
                || it.is_instance_of::<PyTuple>()
                || it.is_instance_of::<PySlice>()
                || it.is_instance_of::<PyEllipsis>()
                || as_tensor_ref(&it).is_some()
        })
}

fn parse(key: &Bound<'_, PyAny>) -> PyResult<Vec<Item>> {
    if let Ok(t) = key.cast::<PyTuple>() {
        return t.iter().map(|it| parse_item(&it)).collect();
    }
    if let Ok(list) = key.cast::<PyList>() {
        if list_as_tuple(list) {
            warn(key.py(), WarningKind::User, WARN_SEQUENCE_KEY)?;
            return list.iter().map(|it| parse_item(&it)).collect();
        }
        return Ok(vec![Item::Tensor(sequence_index(key)?)]);
    }
    Ok(vec![parse_item(key)?])
}

/// A key applied: the view its basic items select, and the index tensors (one entry per
/// dim of the view; empty when there are none).
struct Applied {
    view: Tensor,
    changed: bool,
    advanced: Vec<Option<Tensor>>,
}

fn apply(t: &Tensor, key: &Bound<'_, PyAny>) -> PyResult<Applied> {
    let items = parse(key)?;
    let specified: usize = items.iter().map(Item::consumes).sum();
    if specified > t.dim() {
        return Err(PyIndexError::new_err(format!(
            "too many indices for tensor of dimension {}",
            t.dim()
        )));
    }
    if items.iter().filter(|i| matches!(i, Item::Ellipsis)).count() > 1 {
        return Err(PyIndexError::new_err(
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let mut cur = t.clone();
    let mut changed = false;
    let mut advanced: Vec<Option<Tensor>> = Vec::new();
    let mut dim: i64 = 0;
    for item in items {
        match item {
            Item::Int(i) => {
                let size = cur.shape()[dim as usize] as i64;
                if i < -size || i >= size {
                    return Err(PyIndexError::new_err(format!(
                        "index {i} is out of bounds for dimension {dim} with size {size}"
                    )));
                }
                cur = run(|| view::select(&cur, dim, i))?;
                changed = true;
            }
            Item::Slice(start, stop, step) => {
                let step = step.unwrap_or(1);
                if step <= 0 {
                    return Err(PyValueError::new_err("step must be greater than zero"));
                }
                let size = cur.shape()[dim as usize] as i64;
                let (s, e) = (start.unwrap_or(0), stop.unwrap_or(i64::MAX));
                if !(s == 0 && e >= size && step == 1) {
                    cur = run(|| view::slice(&cur, dim, s, e, step))?;
                    changed = true;
                }
                advanced.push(None);
                dim += 1;
            }
            Item::NewAxis => {
                cur = run(|| view::unsqueeze(&cur, dim))?;
                changed = true;
                advanced.push(None);
                dim += 1;
            }
            Item::Ellipsis => {
                let n = t.dim() - specified;
                advanced.extend((0..n).map(|_| None));
                dim += n as i64;
            }
            Item::Bool(b) => {
                // torch: a new dim, indexed by [0] (true) or by nothing (false).
                cur = run(|| view::unsqueeze(&cur, dim))?;
                changed = true;
                let picks: &[i64] = if b { &[0] } else { &[] };
                advanced.push(Some(run(|| {
                    Tensor::from_vec(picks.to_vec(), &[picks.len()])
                })?));
                dim += 1;
            }
            Item::Tensor(index) => {
                dim += if is_mask(&index) { index.dim() } else { 1 } as i64;
                advanced.push(Some(index));
            }
        }
    }
    if advanced.iter().all(Option::is_none) {
        advanced.clear();
    }
    Ok(Applied {
        view: cur,
        changed,
        advanced,
    })
}

/// `t[key]`.
pub fn get(t: &Tensor, key: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let a = apply(t, key)?;
    if !a.advanced.is_empty() {
        return run(|| advanced_index::index(&a.view, &a.advanced));
    }
    if a.changed {
        Ok(a.view)
    } else {
        run(|| view::alias(t))
    }
}

/// `t[key] = value`. Like torch, a lone mask with a number is a `masked_fill_`, a lone
/// int64 index with a number an `index_fill_`, and other advanced keys an `index_put_`.
pub fn set(t: &Tensor, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let a = apply(t, key)?;
    let target = a.view;
    let value = expect_operand(value, "__setitem__")?;
    if a.advanced.is_empty() {
        return match value {
            Operand::S(s) => run(|| inplace::fill_(&target, s)),
            Operand::T(v) => run(|| inplace::copy_checked(&target, &v)),
        };
    }
    let lone = {
        let defined: Vec<(usize, &Tensor)> = a
            .advanced
            .iter()
            .enumerate()
            .filter_map(|(d, i)| i.as_ref().map(|t| (d, t)))
            .collect();
        (defined.len() == 1).then(|| defined[0])
    };
    match (value, lone) {
        (Operand::S(s), Some((dim, mask))) if mask.dtype() == DType::Bool => {
            run(|| advanced_index::masked_fill_at_(&target, dim, mask, s))
        }
        (Operand::S(s), Some((dim, index))) if index.dtype() == DType::I64 => {
            // torch fills along the one indexed dim whatever the index's shape.
            let flat = run(|| view::reshape(index, &[index.numel()]))?;
            run(|| advanced_index::index_fill_(&target, dim as i64, &flat, s))
        }
        (Operand::S(s), _) => {
            let v = run(|| creation::full(&[], s, target.dtype()))?;
            run(|| advanced_index::index_put_(&target, &a.advanced, &v, false))
        }
        (Operand::T(v), _) => run(|| advanced_index::index_put_(&target, &a.advanced, &v, false)),
    }
}
