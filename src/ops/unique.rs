//! `unique` and `unique_consecutive` (with or without a dim): the distinct elements or
//! slices, with each one's group (`inverse`) and group sizes (`counts`). torch records
//! a node on the values (Unique2Backward0, UniqueDimBackward0,
//! UniqueConsecutiveBackward0) whose backward raises: they have no derivative.

use smallvec::smallvec;

use crate::error::{Error, Result};
use crate::ops::device::backend;
use crate::ops::index::index_select;
use crate::ops::rules::composite;
use crate::ops::shape::movedim;
use crate::ops::view::{contiguous, reshape};
use crate::ops::{apply, Grads, Op, Outputs, VjpCtx};
use crate::shape::wrap_dim;
use crate::tensor::Tensor;

#[derive(Clone, Copy)]
pub struct Unique {
    /// The dim whose slices are compared (wrapped); None: the elements.
    pub dim: Option<usize>,
    pub consecutive: bool,
}

impl Unique {
    /// The ATen function torch names in its error.
    fn aten_name(&self) -> &'static str {
        match (self.consecutive, self.dim) {
            (true, _) => "unique_consecutive",
            (false, Some(_)) => "unique_dim",
            (false, None) => "_unique2",
        }
    }

    fn compute(&self, x: &Tensor) -> Result<Outputs> {
        let (rows_of, dim) = match self.dim {
            None => (reshape(x, &[x.numel()])?, 0),
            Some(d) => (movedim(x, &[d as i64], &[0])?, d),
        };
        let rows = rows_of.shape().first().copied().unwrap_or(1);
        let rows_of = contiguous(&rows_of)?;
        let groups = backend(x)?.unique_rows(&rows_of.data(), rows, self.consecutive)?;
        let n = groups.first.len();
        let first = Tensor::from_vec(groups.first, &[n])?;
        let values = match self.dim {
            None => index_select(&rows_of, 0, &first)?,
            Some(_) => index_select(x, dim as i64, &first)?,
        };
        let inverse_shape = match self.dim {
            None => x.dims(),
            Some(_) => smallvec![rows],
        };
        let inverse = Tensor::from_vec(groups.inverse, &inverse_shape)?;
        Ok(smallvec![
            values,
            inverse,
            Tensor::from_vec(groups.counts, &[n])?
        ])
    }
}

impl Op for Unique {
    fn name(&self) -> &'static str {
        match (self.consecutive, self.dim) {
            (true, _) => "UniqueConsecutiveBackward0",
            (false, Some(_)) => "UniqueDimBackward0",
            (false, None) => "Unique2Backward0",
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |xs| self.compute(&xs[0]))
    }
    fn vjp(&self, _ctx: &VjpCtx) -> Result<Grads> {
        Err(Error::not_implemented(format!(
            "the derivative for '{}' is not implemented.",
            self.aten_name()
        )))
    }
}

/// (values, inverse, counts) of `unique(x, dim=)` or `unique_consecutive(x, dim=)`;
/// values are sorted (torch's CPU unique sorts even when `sorted=False`).
pub fn unique(x: &Tensor, dim: Option<i64>, consecutive: bool) -> Result<(Tensor, Tensor, Tensor)> {
    let dim = dim.map(|d| wrap_dim(d, x.dim())).transpose()?;
    if let Some(d) = dim {
        if x.numel() == 0 && x.shape().get(d).is_some_and(|&s| s != 0) {
            return Err(Error::runtime(
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied",
            ));
        }
    }
    let op = Unique { dim, consecutive };
    let mut out = apply(op, std::slice::from_ref(x))?.into_iter();
    match (out.next(), out.next(), out.next()) {
        (Some(v), Some(i), Some(c)) => Ok((v, i, c)),
        _ => Err(Error::runtime(
            "internal error: unique returned too few outputs",
        )),
    }
}
