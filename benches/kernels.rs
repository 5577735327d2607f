//! Kernel throughput: the 1024³ float32 matmul (reported as elements = 2·n³ flops), memory-
//! bound ops on 16M float32 values (reported in bytes read + written, so criterion prints
//! GB/s), and the vectorized math of kernels::vmath on 256x256 elements, per function, f32
//! and f64, at every SIMD level this CPU runs (`Scalar` is libm per element).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferrograd::kernels::vmath::{map_at, pow_at, Elem, Level, Unary};
use ferrograd::ops::binary::{add, mul_scalar};
use ferrograd::ops::creation::randn;
use ferrograd::ops::linalg::mm;
use ferrograd::ops::reduce::sum;
use ferrograd::{DType, Scalar};

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

/// `x * 0.5` and `x + y` (a fresh output each call, as in a forward pass) and the sum of
/// all elements, on 16M float32 values: bound by memory bandwidth, so counted in bytes.
fn bench_memory_bound(c: &mut Criterion) {
    let n = 1 << 24;
    let x = randn(&[n], DType::F32).unwrap();
    let y = randn(&[n], DType::F32).unwrap();
    let bytes = |tensors: u64| Throughput::Bytes(tensors * 4 * n as u64);
    let mut group = c.benchmark_group("memory_bound_f32_16M");
    group.sample_size(20);
    group.throughput(bytes(2));
    group.bench_function("mul_scalar", |b| {
        b.iter(|| mul_scalar(&x, Scalar::Float(0.5)).unwrap())
    });
    group.throughput(bytes(3));
    group.bench_function("add", |b| b.iter(|| add(&x, &y).unwrap()));
    group.throughput(bytes(1));
    group.bench_function("sum", |b| b.iter(|| sum(&x, None, false, None).unwrap()));
    group.finish();
}

const N: usize = 256 * 256;

/// N inputs spread over the part of the domain tensors usually hold.
fn inputs<E: Elem>(op: Unary) -> Vec<E> {
    let (lo, hi) = match op {
        Unary::Log | Unary::Sqrt | Unary::Rsqrt => (0.01, 10.0),
        Unary::Log1p => (-0.9, 10.0),
        _ => (-5.0, 5.0),
    };
    (0..N)
        .map(|i| E::from_f64(lo + (hi - lo) * ((i * 7919) % N) as f64 / N as f64))
        .collect()
}

fn bench_vmath_type<E: Elem>(c: &mut Criterion, type_name: &str) {
    let mut group = c.benchmark_group(format!("vmath_{type_name}"));
    group.throughput(Throughput::Elements(N as u64));
    group.sample_size(30);
    for &op in Unary::ALL {
        let x = inputs::<E>(op);
        let mut y = vec![E::default(); N];
        for level in Level::supported() {
            group.bench_function(format!("{op:?}/{level:?}"), |b| {
                b.iter(|| map_at(level, op, &x, &mut y))
            });
        }
    }
    group.finish();
}

fn bench_vmath(c: &mut Criterion) {
    bench_vmath_type::<f32>(c, "f32");
    bench_vmath_type::<f64>(c, "f64");
    let x: Vec<f32> = (0..N).map(|i| 0.01 + (i % 1000) as f32 * 0.01).collect();
    let e: Vec<f32> = (0..N).map(|i| -3.0 + (i % 77) as f32 * 0.1).collect();
    let mut y = vec![0f32; N];
    let mut group = c.benchmark_group("vmath_f32");
    group.throughput(Throughput::Elements(N as u64));
    for level in Level::supported() {
        group.bench_function(format!("Pow/{level:?}"), |b| {
            b.iter(|| pow_at(level, &x, &e, &mut y))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_matmul, bench_memory_bound, bench_vmath);
criterion_main!(benches);
