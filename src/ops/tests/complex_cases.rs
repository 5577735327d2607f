//! Rule-check entries for issue 11's complex views and ops (see `cases`). Ops that take
//! complex input get it whatever the case's dtype; those that take real input, real.

use crate::dtype::{DType, Scalar};
use crate::ops::complex::{Angle, Complex, ConjPhysical, Polar, ViewAsComplex, ViewAsReal};
use crate::tensor::Tensor;

use super::cases::{c, one, randn, Case};

fn complex_input(d: DType) -> Vec<Tensor> {
    vec![randn(&[3, 4], d.to_complex())]
}

fn pairs(d: DType) -> Vec<Tensor> {
    vec![randn(&[3, 2], d.to_real())]
}

/// Two real operands, broadcast; the first positive (polar's abs).
fn parts(d: DType) -> Vec<Tensor> {
    let d = d.to_real();
    let r = crate::ops::unary::abs(&randn(&[3, 4], d)).expect("abs");
    let r = crate::ops::binary::add_scalar(&r, Scalar::Float(0.5)).expect("shift");
    vec![r, randn(&[4], d)]
}

pub fn cases() -> Vec<Case> {
    vec![
        c(
            "view_as_real",
            false,
            |_| Box::new(ViewAsReal),
            complex_input,
        ),
        c("view_as_complex", false, |_| Box::new(ViewAsComplex), pairs),
        c("complex", false, |_| Box::new(Complex), parts),
        c("polar", false, |_| Box::new(Polar), parts),
        c("angle", true, |_| Box::new(Angle), one),
        c("conj_physical", true, |_| Box::new(ConjPhysical), one),
    ]
}
