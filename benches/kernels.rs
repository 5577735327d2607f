//! Kernel throughput: the 1024³ float32 matmul (reported as elements = 2·n³ flops), memory-
//! bound ops on 16M float32 values (reported in bytes read + written, so criterion prints
//! GB/s), the vectorized math of kernels::vmath on 256x256 elements, per function, f32
//! and f64, at every SIMD level this CPU runs (`Scalar` is libm per element), and issue
//! 11's large ops: reductions, scans, sort / topk, gather / scatter / index_add on
//! 1024x1024 float32 (bytes of the input), and the float64 decompositions of 256x256
//! (elements = n³, so criterion prints n³ per second).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferrograd::kernels::vmath::{map_at, pow_at, Elem, Level, Unary};
use ferrograd::ops::binary::{add, mul_scalar};
use ferrograd::ops::creation::{randint, randn};
use ferrograd::ops::decomp::{cholesky::cholesky, lu, qr::qr, spectral};
use ferrograd::ops::extrema::amax;
use ferrograd::ops::index::{gather, index_select, scatter};
use ferrograd::ops::index_write::index_add;
use ferrograd::ops::linalg::{matmul, mm};
use ferrograd::ops::prod::prod;
use ferrograd::ops::reduce::{sum, Extreme};
use ferrograd::ops::scan::cumsum;
use ferrograd::ops::softmax::{logsumexp, softmax};
use ferrograd::ops::sort::{sort, topk};
use ferrograd::ops::view::transpose;
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

/// Issue 11's reductions, scans, sorts and index ops on a 1024x1024 float32 matrix, along
/// its rows unless named otherwise, in bytes of the input read.
fn bench_reductions_and_indexing(c: &mut Criterion) {
    let n = 1024;
    let x = randn(&[n, n], DType::F32).unwrap();
    let rows = randint(0, n as i64, &[n], DType::I64).unwrap();
    let per_row = randint(0, n as i64, &[n, n], DType::I64).unwrap();
    let base = randn(&[n, n], DType::F32).unwrap();
    let mut group = c.benchmark_group("rows_f32_1024x1024");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(4 * (n * n) as u64));
    group.bench_function("sum_dim1", |b| {
        b.iter(|| sum(&x, Some(&[1]), false, None).unwrap())
    });
    group.bench_function("amax_dim1", |b| {
        b.iter(|| amax(&x, Extreme::Max, Some(&[1]), false).unwrap())
    });
    group.bench_function("amax_dim0", |b| {
        b.iter(|| amax(&x, Extreme::Max, Some(&[0]), false).unwrap())
    });
    group.bench_function("prod_dim1", |b| {
        b.iter(|| prod(&x, Some(1), false, None).unwrap())
    });
    group.bench_function("logsumexp_dim1", |b| {
        b.iter(|| logsumexp(&x, &[1], false).unwrap())
    });
    group.bench_function("softmax_dim1", |b| {
        b.iter(|| softmax(&x, 1, false, None).unwrap())
    });
    group.bench_function("cumsum_dim0", |b| b.iter(|| cumsum(&x, 0, None).unwrap()));
    group.bench_function("cumsum_dim1", |b| b.iter(|| cumsum(&x, 1, None).unwrap()));
    group.bench_function("sort_dim1", |b| b.iter(|| sort(&x, 1, false).unwrap()));
    group.bench_function("topk10_dim1", |b| b.iter(|| topk(&x, 10, 1, true).unwrap()));
    group.bench_function("gather_dim1", |b| {
        b.iter(|| gather(&x, 1, &per_row).unwrap())
    });
    group.bench_function("scatter_add_dim1", |b| {
        b.iter(|| scatter(&base, 1, &per_row, Some(&x), None, true).unwrap())
    });
    group.bench_function("index_select_dim0", |b| {
        b.iter(|| index_select(&x, 0, &rows).unwrap())
    });
    group.bench_function("index_add_dim0", |b| {
        b.iter(|| index_add(&base, 0, &rows, &x, Scalar::Int(1)).unwrap())
    });
    group.finish();
}

/// The float64 decompositions of one 256x256 matrix (symmetric positive definite, for all
/// of them alike), in elements = n³ per call.
fn bench_decompositions(c: &mut Criterion) {
    let n = 256;
    let r = randn(&[n, n], DType::F64).unwrap();
    let spd = add(
        &mul_scalar(
            &matmul(&r, &transpose(&r, 0, 1).unwrap()).unwrap(),
            Scalar::Float(1.0 / n as f64),
        )
        .unwrap(),
        &ferrograd::ops::creation::eye(n, n, DType::F64).unwrap(),
    )
    .unwrap();
    let mut group = c.benchmark_group("decomp_f64_256");
    group.sample_size(20);
    group.throughput(Throughput::Elements((n * n * n) as u64));
    group.bench_function("inv", |b| b.iter(|| lu::inv(&spd).unwrap()));
    group.bench_function("det", |b| b.iter(|| lu::det(&spd).unwrap()));
    group.bench_function("cholesky", |b| b.iter(|| cholesky(&spd, false).unwrap()));
    group.bench_function("qr", |b| b.iter(|| qr(&spd, "reduced").unwrap()));
    group.bench_function("eigh", |b| b.iter(|| spectral::eigh(&spd, "L").unwrap()));
    group.bench_function("svd", |b| b.iter(|| spectral::svd(&spd, false).unwrap()));
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

criterion_group!(
    benches,
    bench_matmul,
    bench_memory_bound,
    bench_vmath,
    bench_reductions_and_indexing,
    bench_decompositions
);
criterion_main!(benches);
