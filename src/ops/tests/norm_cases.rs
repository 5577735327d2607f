//! Rule-check entries for issue 11's norms (and dist), scatter_reduce and unfold (see `cases`).

use crate::dtype::DType;
use crate::kernels::kinds::ScatterReduce;
use crate::ops::norm::{Dist, VectorNorm};
use crate::ops::scatter_reduce::ScatterReduceOp;
use crate::ops::view::{ViewKind, ViewOp};
use crate::ops::Op;
use crate::tensor::Tensor;

use super::cases::{c, one, randn, Case};

fn norm(ord: f64, dims: &[usize], keepdim: bool) -> Box<dyn Op> {
    Box::new(VectorNorm {
        ord,
        dims: dims.into(),
        keepdim,
        dtype: None,
        given_dims: None,
    })
}

fn reduce(reduce: ScatterReduce, include_self: bool) -> Box<dyn Op> {
    Box::new(ScatterReduceOp {
        dim: 0,
        reduce,
        include_self,
    })
}

/// x [3, 4], an index [2, 4] into dim 0 (two values land on some positions) and src.
fn scattered(d: DType) -> Vec<Tensor> {
    let index = Tensor::from_vec(vec![0i64, 2, 1, 0, 0, 1, 1, 2], &[2, 4]).expect("index");
    vec![randn(&[3, 4], d), index, randn(&[2, 4], d)]
}

/// dist's operands: [3, 4] and [4] (broadcast).
fn pair(d: DType) -> Vec<Tensor> {
    vec![randn(&[3, 4], d), randn(&[4], d)]
}

pub fn cases() -> Vec<Case> {
    vec![
        c("dist_2", true, |_| Box::new(Dist { p: 2.0 }), pair),
        c("dist_3", false, |_| Box::new(Dist { p: 3.0 }), pair),
        c("vector_norm_2", true, |_| norm(2.0, &[0, 1], false), one),
        c("vector_norm_1_dim", true, |_| norm(1.0, &[1], true), one),
        c("vector_norm_3_dim", false, |_| norm(3.0, &[0], false), one),
        c("vector_norm_half", false, |_| norm(0.5, &[1], false), one),
        c(
            "vector_norm_inf",
            false,
            |_| norm(f64::INFINITY, &[1], false),
            one,
        ),
        c(
            "scatter_reduce_sum",
            true,
            |_| reduce(ScatterReduce::Sum, true),
            scattered,
        ),
        c(
            "scatter_reduce_mean",
            false,
            |_| reduce(ScatterReduce::Mean, false),
            scattered,
        ),
        c(
            "scatter_reduce_prod",
            false,
            |_| reduce(ScatterReduce::Prod, true),
            scattered,
        ),
        c(
            "scatter_reduce_amax",
            false,
            |_| reduce(ScatterReduce::Amax, false),
            scattered,
        ),
        c(
            "unfold",
            true,
            |_| {
                Box::new(ViewOp {
                    name: "UnfoldBackward0",
                    kind: ViewKind::Unfold {
                        dim: 1,
                        size: 2,
                        step: 1,
                    },
                    tracked_view: true,
                })
            },
            one,
        ),
    ]
}
