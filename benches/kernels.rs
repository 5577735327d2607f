//! Kernel throughput: the 1024³ float32 matmul (reported as elements = 2·n³ flops).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferrograd::ops::creation::randn;
use ferrograd::ops::linalg::mm;
use ferrograd::DType;

fn bench_matmul(c: &mut Criterion) {
    let n = 1024;
    let a = randn(&[n, n], DType::F32).unwrap();
    let b = randn(&[n, n], DType::F32).unwrap();
    let mut group = c.benchmark_group("matmul");
    group.throughput(Throughput::Elements(2 * (n * n * n) as u64));
    group.sample_size(20);
    group.bench_function("mm_f32_1024", |bench| bench.iter(|| mm(&a, &b).unwrap()));
    group.finish();
}

criterion_group!(benches, bench_matmul);
criterion_main!(benches);
