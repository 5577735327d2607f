//! The three checks run on every table entry.

use num_complex::Complex64;

use super::cases::Case;
use crate::autograd::node::TensorMeta;
use crate::dtype::{DType, Scalar};
use crate::error::Error;
use crate::ops::binary::{add, mul_scalar};
use crate::ops::view::{permute, select};
use crate::ops::{BatchCtx, JvpCtx, Op, SaveRef, VjpCtx};
use crate::tensor::Tensor;

fn randn_like(t: &Tensor) -> Tensor {
    crate::ops::creation::randn(&t.dims(), t.dtype()).unwrap()
}

fn differentiable(t: &Tensor) -> bool {
    t.dtype().is_differentiable()
}

/// Random values for the differentiable tensors, None for the others.
fn random_for(ts: &[Tensor]) -> Vec<Option<Tensor>> {
    ts.iter()
        .map(|t| differentiable(t).then(|| randn_like(t)))
        .collect()
}

fn values(t: &Tensor) -> Vec<Complex64> {
    t.to_vec::<Complex64>()
}

/// `Re(sum(conj(a) * b))`.
fn inner(a: &Tensor, b: &Tensor) -> f64 {
    assert_eq!(a.dims(), b.dims());
    values(a)
        .iter()
        .zip(values(b))
        .map(|(x, y)| (x.conj() * y).re)
        .sum()
}

/// What the engine does to a rule's gradient before it reaches an input: sum broadcast
/// dims away, cast to the input's dtype (real part for a real input).
fn fit_grad(g: &Tensor, input: &Tensor) -> Tensor {
    let mut g = crate::ops::reduce::sum_to_size(g, &input.dims()).unwrap();
    if g.dtype().is_complex() && !input.dtype().is_complex() {
        g = crate::ops::unary::real(&g).unwrap();
    }
    crate::ops::unary::to_dtype(&g, input.dtype()).unwrap()
}

fn jvp(
    op: &dyn Op,
    inputs: &[Tensor],
    outputs: &[Tensor],
    tangents: &[Option<Tensor>],
) -> Vec<Option<Tensor>> {
    let ctx = JvpCtx {
        primals: inputs,
        outputs,
        tangents,
    };
    let out = op
        .jvp(&ctx)
        .unwrap_or_else(|e| panic!("{}: jvp: {e}", op.name()));
    assert_eq!(
        out.len(),
        outputs.len(),
        "{}: one tangent per output",
        op.name()
    );
    for (t, o) in out.iter().zip(outputs) {
        if let Some(t) = t {
            assert_eq!(t.dims(), o.dims(), "{}: tangent shape", op.name());
            assert_eq!(t.dtype(), o.dtype(), "{}: tangent dtype", op.name());
        }
    }
    out.into_vec()
}

pub fn transpose_check(case: &Case, dtype: DType) {
    let op = (case.op)(dtype);
    let inputs = (case.inputs)(dtype);
    let outputs = op.forward(&inputs).unwrap();
    let needs: Vec<bool> = inputs.iter().map(differentiable).collect();
    let saved: Vec<Option<Tensor>> = op
        .save(&needs)
        .iter()
        .map(|s| {
            s.map(|s| match s {
                SaveRef::Input(i) => inputs[i].clone(),
                SaveRef::Output(j) => outputs[j].clone(),
            })
        })
        .collect();
    let grads = random_for(&outputs);
    let input_meta: Vec<TensorMeta> = inputs.iter().map(TensorMeta::of).collect();
    let output_meta: Vec<TensorMeta> = outputs.iter().map(TensorMeta::of).collect();
    let vjp = op
        .vjp(&VjpCtx {
            grads: &grads,
            saved: &saved,
            needs: &needs,
            inputs: &input_meta,
            outputs: &output_meta,
        })
        .unwrap();
    let tangents = random_for(&inputs);
    let jvp = jvp(op.as_ref(), &inputs, &outputs, &tangents);
    let lhs: f64 = vjp
        .iter()
        .zip(&inputs)
        .zip(&tangents)
        .filter_map(|((g, x), t)| Some(inner(&fit_grad(g.as_ref()?, x), t.as_ref()?)))
        .sum();
    let rhs: f64 = grads
        .iter()
        .zip(&jvp)
        .filter_map(|(g, t)| Some(inner(g.as_ref()?, t.as_ref()?)))
        .sum();
    assert!(
        (lhs - rhs).abs() <= 1e-10 * (1.0 + lhs.abs().max(rhs.abs())),
        "{} ({dtype:?}): <vjp(g), t> = {lhs} but <g, jvp(t)> = {rhs}",
        case.name
    );
}

fn shifted(inputs: &[Tensor], tangents: &[Option<Tensor>], h: f64) -> Vec<Tensor> {
    inputs
        .iter()
        .zip(tangents)
        .map(|(x, t)| match t {
            Some(t) => add(x, &mul_scalar(t, Scalar::Float(h)).unwrap()).unwrap(),
            None => x.clone(),
        })
        .collect()
}

pub fn central_difference_check(case: &Case, dtype: DType) {
    if case.name == "undefined_grad" {
        // An identity whose stated derivative is zero on purpose (gradcheck's helper):
        // only its transpose identity means anything.
        return;
    }
    let op = (case.op)(dtype);
    let inputs = (case.inputs)(dtype);
    let outputs = op.forward(&inputs).unwrap();
    let tangents = random_for(&inputs);
    let jvp = jvp(op.as_ref(), &inputs, &outputs, &tangents);
    let h = 1e-6;
    let plus = op.forward(&shifted(&inputs, &tangents, h)).unwrap();
    let minus = op.forward(&shifted(&inputs, &tangents, -h)).unwrap();
    for (j, out) in outputs.iter().enumerate() {
        if !differentiable(out) {
            continue;
        }
        let fd: Vec<Complex64> = values(&plus[j])
            .iter()
            .zip(values(&minus[j]))
            .map(|(p, m)| (p - m) / (2.0 * h))
            .collect();
        let got = match &jvp[j] {
            Some(t) => values(t),
            None => vec![Complex64::new(0.0, 0.0); out.numel()],
        };
        let scale = 1.0 + fd.iter().map(|v| v.norm()).fold(0.0, f64::max);
        for (k, (a, b)) in got.iter().zip(&fd).enumerate() {
            assert!(
                (a - b).norm() <= 1e-6 * scale,
                "{} ({dtype:?}) output {j}[{k}]: jvp {a} vs central difference {b}",
                case.name
            );
        }
    }
}

/// `ts` stacked along a new dim at `bdim` (a non-contiguous value when bdim > 0).
fn stack(ts: &[Tensor], bdim: usize) -> Tensor {
    let mut shape = vec![ts.len()];
    shape.extend(ts[0].dims());
    let flat = crate::with_dtype!(ts[0].dtype(), T => {
        let v: Vec<T> = ts.iter().flat_map(|t| t.to_vec::<T>()).collect();
        Tensor::from_vec(v, &shape).unwrap()
    });
    let mut perm: Vec<i64> = (1..shape.len() as i64).collect();
    perm.insert(bdim, 0);
    permute(&flat, &perm).unwrap()
}

fn assert_close(got: &Tensor, want: &Tensor, what: &str) {
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    for (a, b) in values(got).iter().zip(values(want)) {
        assert!(
            (a - b).norm() <= 1e-12 * (1.0 + b.norm()),
            "{what}: {a} vs {b}"
        );
    }
}

pub enum BatchOutcome {
    Checked,
    NoRule,
}

/// Which inputs are batched, and where: all (at varying dims), only the first (at its
/// last dim), only the last (in front).
fn variants(examples: &[Tensor]) -> Vec<Vec<Option<usize>>> {
    let n = examples.len();
    let mut out = vec![examples
        .iter()
        .enumerate()
        .map(|(i, x)| Some((i + 1) % (x.dim() + 1)))
        .collect::<Vec<_>>()];
    if n > 1 {
        let mut first = vec![None; n];
        first[0] = Some(examples[0].dim());
        out.push(first);
        let mut last = vec![None; n];
        last[n - 1] = Some(0);
        out.push(last);
    }
    out
}

pub fn batch_check(case: &Case, dtype: DType) -> BatchOutcome {
    const B: usize = 3;
    let op = (case.op)(dtype);
    let examples: Vec<Vec<Tensor>> = (0..B).map(|_| (case.inputs)(dtype)).collect();
    for bdims in variants(&examples[0]) {
        let pick = |i: usize, b: usize| match bdims[i] {
            Some(_) => examples[b][i].clone(),
            None => examples[0][i].clone(),
        };
        let batched: Vec<(Tensor, Option<usize>)> = (0..bdims.len())
            .map(|i| match bdims[i] {
                Some(d) => {
                    let column: Vec<Tensor> = (0..B).map(|b| examples[b][i].clone()).collect();
                    (stack(&column, d), Some(d))
                }
                None => (examples[0][i].clone(), None),
            })
            .collect();
        let result = match op.batch(&BatchCtx { inputs: &batched }) {
            Ok(r) => r,
            Err(Error::NotImplemented(_)) => return BatchOutcome::NoRule,
            Err(e) => panic!("{} ({dtype:?}) {bdims:?}: {e}", case.name),
        };
        for b in 0..B {
            let inputs: Vec<Tensor> = (0..bdims.len()).map(|i| pick(i, b)).collect();
            let want = op.forward(&inputs).unwrap();
            assert_eq!(result.len(), want.len(), "{}: outputs", case.name);
            for (j, ((y, bd), w)) in result.iter().zip(&want).enumerate() {
                let got = match bd {
                    Some(d) => select(y, *d as i64, b as i64).unwrap(),
                    None => y.clone(),
                };
                let what = format!("{} ({dtype:?}) {bdims:?} example {b} output {j}", case.name);
                assert_close(&got, w, &what);
            }
        }
    }
    BatchOutcome::Checked
}
