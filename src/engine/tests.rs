//! Engine tests that need no Python: accumulation over paths, retain_graph, thread-count
//! independence, inputs= capture.

use crate::dtype::{DType, Scalar};
use crate::engine::{backward, run_backward, BackwardOptions, Root};
use crate::ops::binary::{add, mul, mul_scalar};
use crate::ops::reduce::sum;
use crate::ops::unary::{exp, sin};
use crate::tensor::Tensor;

fn leaf(values: Vec<f64>) -> Tensor {
    let n = values.len();
    let t = Tensor::from_vec(values, &[n]).unwrap();
    t.set_requires_grad(true).unwrap();
    t
}

fn grad_of(t: &Tensor) -> Vec<f64> {
    t.grad().expect("grad set").to_vec::<f64>()
}

#[test]
fn c58_two_paths_are_summed() {
    let x = leaf(vec![1.0, 2.0]);
    let y = add(
        &mul_scalar(&x, Scalar::Int(2)).unwrap(),
        &mul_scalar(&x, Scalar::Int(3)).unwrap(),
    )
    .unwrap();
    backward(&sum(&y, None, false, None).unwrap(), false).unwrap();
    assert_eq!(grad_of(&x), vec![5.0, 5.0]);
}

#[test]
fn c38_second_backward_through_freed_graph_fails() {
    let x = leaf(vec![0.5]);
    let y = sum(&exp(&x).unwrap(), None, false, None).unwrap();
    backward(&y, false).unwrap();
    let err = backward(&y, false).unwrap_err().to_string();
    assert!(
        err.starts_with("Trying to backward through the graph a second time"),
        "{err}"
    );
}

#[test]
fn c39_retain_graph_accumulates() {
    let x = leaf(vec![0.5]);
    let y = sum(&exp(&x).unwrap(), None, false, None).unwrap();
    backward(&y, true).unwrap();
    backward(&y, false).unwrap();
    assert!((grad_of(&x)[0] - 2.0 * 0.5f64.exp()).abs() < 1e-12);
}

/// A wide graph: 8 independent branches, each through elementwise ops, a matmul and
/// sums over each dim, added up. Gradients must be bitwise identical whatever the number
/// of intra-op threads (tests/test_thread_settings.py varies the inter-op count too, one
/// process per setting).
fn wide_graph_grads(threads: usize) -> Vec<Vec<f64>> {
    crate::threads::set_num_threads(threads).unwrap();
    let (rows, cols) = (300, 700);
    let leaves: Vec<Tensor> = (0..8)
        .map(|i| {
            leaf(
                (0..rows * cols)
                    .map(|j| ((i * 7 + j) % 13) as f64 * 0.01 + 1e-7 * j as f64)
                    .collect(),
            )
        })
        .collect();
    let mut total: Option<Tensor> = None;
    for l in &leaves {
        let x = crate::ops::view::reshape(l, &[rows, cols]).unwrap();
        let mut y = x.clone();
        for _ in 0..2 {
            y = mul(&sin(&y).unwrap(), &y).unwrap();
        }
        let xt = crate::ops::view::transpose(&x, 0, 1).unwrap();
        let z = crate::ops::linalg::mm(&y, &xt).unwrap();
        let s = add(
            &sum(
                &sum(&z, Some(&[0i64][..]), false, None).unwrap(),
                None,
                false,
                None,
            )
            .unwrap(),
            &sum(
                &sum(&y, Some(&[1i64][..]), false, None).unwrap(),
                None,
                false,
                None,
            )
            .unwrap(),
        )
        .unwrap();
        total = Some(match total {
            Some(t) => add(&t, &s).unwrap(),
            None => s,
        });
    }
    backward(&total.unwrap(), false).unwrap();
    leaves.iter().map(grad_of).collect()
}

#[test]
fn gradients_do_not_depend_on_thread_count() {
    let one = wide_graph_grads(1);
    let two = wide_graph_grads(2);
    let four = wide_graph_grads(4);
    assert_eq!(one, two);
    assert_eq!(one, four);
}

#[test]
fn c63_grad_captures_without_touching_dot_grad() {
    let x = leaf(vec![1.0, 2.0, 3.0]);
    let y = sum(&mul(&x, &x).unwrap(), None, false, None).unwrap();
    let root = Root {
        edge: y.gradient_edge().unwrap(),
        grad: Tensor::scalar(Scalar::Float(1.0), DType::F64),
    };
    let input = crate::autograd::node::Edge {
        node: x.grad_accumulator(),
        input_nr: 0,
    };
    let opts = BackwardOptions {
        retain_graph: false,
        create_graph: false,
        accumulate_grad: false,
    };
    let out = run_backward(vec![root], &[input], opts).unwrap();
    assert_eq!(
        out[0].as_ref().unwrap().to_vec::<f64>(),
        vec![2.0, 4.0, 6.0]
    );
    assert!(x.grad().is_none());
}
