//! Rule checks over every op (issue 8 §1): one table entry per op ([`cases`]), and for
//! each entry, in float64 and (where the op takes it) complex128:
//! - the transpose identity `<vjp(g), t> == <g, jvp(t)>` with the real inner product
//!   `<a, b> = Re(sum(conj(a) * b))` (torch's conjugate-Wirtinger convention);
//! - jvp against central differences (in complex too: a jvp is a directional
//!   derivative, which needs no convention);
//! - batching rules against a loop over the batch.

mod cases;
mod checks;
mod complex_cases;
mod norm_cases;

use crate::dtype::DType;
use crate::error::Error;
use crate::ops::{JvpCtx, Op, Outputs, VjpCtx};

use cases::{cases, Case};
use checks::{batch_check, central_difference_check, transpose_check, BatchOutcome};

fn dtypes(case: &Case) -> Vec<DType> {
    if case.complex {
        vec![DType::F64, DType::C128]
    } else {
        vec![DType::F64]
    }
}

#[test]
fn transpose_identity_every_op() {
    let mut checked = 0;
    for case in cases() {
        for dtype in dtypes(&case) {
            transpose_check(&case, dtype);
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} (op, dtype) pairs checked");
}

#[test]
fn jvp_matches_central_differences() {
    for case in cases() {
        for dtype in dtypes(&case) {
            central_difference_check(&case, dtype);
        }
    }
}

#[test]
fn batching_rules_match_a_loop() {
    let (mut with_rule, mut without) = (0, 0);
    for case in cases() {
        for dtype in dtypes(&case) {
            match batch_check(&case, dtype) {
                BatchOutcome::Checked => with_rule += 1,
                BatchOutcome::NoRule => without += 1,
            }
        }
    }
    assert!(
        with_rule >= 50,
        "{with_rule} checked, {without} without a rule"
    );
}

/// Conjugate-Wirtinger convention, pinned on exp and mul at one complex point with
/// torch's numbers: for z = 0.3+0.7i, g = 1-2i, torch.autograd.grad(exp(z), z, g) is
/// g * conj(exp(z)), and for mul(z, w) the grad of z is g * conj(w).
#[test]
fn complex_convention_exp_mul() {
    use num_complex::Complex64 as C;
    let z = C::new(0.3, 0.7);
    let (w, g) = (C::new(-1.1, 0.4), C::new(1.0, -2.0));
    let zt = crate::Tensor::from_vec(vec![z], &[1]).unwrap();
    let wt = crate::Tensor::from_vec(vec![w], &[1]).unwrap();
    let gt = crate::Tensor::from_vec(vec![g], &[1]).unwrap();
    let value = |t: &crate::Tensor| t.to_vec::<C>()[0];
    let exp_out = crate::ops::unary::exp(&zt).unwrap();
    let ctx = VjpCtx {
        grads: &[Some(gt.clone())],
        saved: &[Some(exp_out.clone())],
        needs: &[true],
        inputs: &[crate::autograd::node::TensorMeta::of(&zt)],
        outputs: &[crate::autograd::node::TensorMeta::of(&exp_out)],
    };
    let got = value(
        crate::ops::unary::Exp.vjp(&ctx).unwrap()[0]
            .as_ref()
            .unwrap(),
    );
    assert!((got - g * z.exp().conj()).norm() < 1e-14, "{got}");
    let jctx = JvpCtx {
        primals: std::slice::from_ref(&zt),
        outputs: std::slice::from_ref(&exp_out),
        tangents: &[Some(gt.clone())],
    };
    let got = value(
        crate::ops::unary::Exp.jvp(&jctx).unwrap()[0]
            .as_ref()
            .unwrap(),
    );
    assert!((got - g * z.exp()).norm() < 1e-14, "{got}");
    let prod = crate::ops::binary::mul(&zt, &wt).unwrap();
    let ctx = VjpCtx {
        grads: &[Some(gt)],
        saved: &[Some(wt.clone()), Some(zt.clone())],
        needs: &[true, true],
        inputs: &[
            crate::autograd::node::TensorMeta::of(&zt),
            crate::autograd::node::TensorMeta::of(&wt),
        ],
        outputs: &[crate::autograd::node::TensorMeta::of(&prod)],
    };
    let grads = crate::ops::binary::Mul.vjp(&ctx).unwrap();
    let got = value(grads[0].as_ref().unwrap());
    assert!((got - g * w.conj()).norm() < 1e-14, "{got}");
}

/// An op that states no jvp and no batching rule gets the typed errors, with the op's
/// name and torch's texts.
#[test]
fn missing_rules_are_typed_not_implemented() {
    struct Bare;
    impl Op for Bare {
        fn name(&self) -> &'static str {
            "FooBarBackward0"
        }
        fn forward(&self, inputs: &[crate::Tensor]) -> crate::Result<Outputs> {
            Ok(smallvec::smallvec![inputs[0].clone()])
        }
        fn vjp(&self, _ctx: &VjpCtx) -> crate::Result<crate::ops::Grads> {
            Ok(smallvec::smallvec![None])
        }
    }
    let x = crate::Tensor::zeros(&[2], DType::F64).unwrap();
    let ctx = JvpCtx {
        primals: std::slice::from_ref(&x),
        outputs: std::slice::from_ref(&x),
        tangents: &[None],
    };
    match Bare.jvp(&ctx) {
        Err(Error::NotImplemented(m)) => assert_eq!(
            m,
            "Trying to use forward AD with foobar that does not support it because it has not been implemented yet."
        ),
        other => panic!("{:?}", other.map(|_| ())),
    }
    let inputs = [(x.clone(), Some(0))];
    match Bare.batch(&crate::ops::BatchCtx { inputs: &inputs }) {
        Err(Error::NotImplemented(m)) => {
            assert_eq!(m, "Batching rule not implemented for FooBarBackward0")
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// once_differentiable's node refuses forward mode as it refuses backward.
#[test]
fn error_node_jvp_refuses() {
    let x = crate::Tensor::zeros(&[2], DType::F64).unwrap();
    let op = crate::ops::unary::ErrorNode {
        message: "no".into(),
    };
    let ctx = JvpCtx {
        primals: std::slice::from_ref(&x),
        outputs: std::slice::from_ref(&x),
        tangents: &[Some(x.clone())],
    };
    assert!(matches!(op.jvp(&ctx), Err(Error::Runtime(m)) if m == "no"));
}
