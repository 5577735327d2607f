//! Engine throughput: per-node cost of a long chain, and the parallel scheduler on a wide
//! graph of independent branches at 1 and 2 intra-op threads (the engine's own helpers
//! follow the inter-op count, which a process fixes once).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ferrograd::dtype::Scalar;
use ferrograd::engine::backward;
use ferrograd::ops::binary::{add, mul, mul_scalar};
use ferrograd::ops::creation::randn;
use ferrograd::ops::reduce::sum;
use ferrograd::ops::unary::{sin, tanh};
use ferrograd::{DType, Tensor};

const CHAIN: usize = 10_000;

fn chain_graph() -> Tensor {
    let x = Tensor::full(&[1], Scalar::Float(1.0), DType::F32).unwrap();
    x.set_requires_grad(true).unwrap();
    let mut y = x;
    for _ in 0..CHAIN {
        y = mul_scalar(&y, Scalar::Float(1.0001)).unwrap();
    }
    sum(&y, None, false, None).unwrap()
}

fn bench_chain(c: &mut Criterion) {
    c.bench_function("chain_backward_10k_nodes", |b| {
        b.iter_batched(
            chain_graph,
            |root| backward(&root, false).unwrap(),
            BatchSize::PerIteration,
        )
    });
}

/// 16 branches, each a chain of elementwise ops on its own 256×256 leaf, summed.
fn wide_graph() -> Tensor {
    let mut total: Option<Tensor> = None;
    for _ in 0..16 {
        let w = randn(&[256, 256], DType::F32).unwrap();
        w.set_requires_grad(true).unwrap();
        let mut y = w.clone();
        for _ in 0..4 {
            y = mul(&tanh(&y).unwrap(), &sin(&y).unwrap()).unwrap();
        }
        let s = sum(&y, None, false, None).unwrap();
        total = Some(match total {
            Some(t) => add(&t, &s).unwrap(),
            None => s,
        });
    }
    total.unwrap()
}

fn bench_wide(c: &mut Criterion) {
    for threads in [1, 2] {
        ferrograd::threads::set_num_threads(threads).unwrap();
        c.bench_function(
            &format!("wide_graph_16x256x256_backward_{threads}_threads"),
            |b| {
                b.iter_batched(
                    wide_graph,
                    |root| backward(&root, false).unwrap(),
                    BatchSize::PerIteration,
                )
            },
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_chain, bench_wide
}
criterion_main!(benches);
