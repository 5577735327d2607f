//! Factories: zeros/ones/full/empty/arange/linspace/eye/rand/randn/randint and *_like.
//! Results are leaves; `requires_grad` is applied by the caller.

use crate::device::Device;
use crate::dtype::{default_float_dtype, Category, DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::backend::backend_for;
use crate::kernels::kinds::Random;
use crate::kernels::random::RngHandle;
use crate::ops::device::wrap;
use crate::shape::checked_numel;
use crate::tensor::Tensor;

pub fn zeros(shape: &[usize], dtype: DType) -> Result<Tensor> {
    Tensor::zeros(shape, dtype)
}

pub fn full(shape: &[usize], value: Scalar, dtype: DType) -> Result<Tensor> {
    Tensor::full(shape, value, dtype)
}

pub fn zeros_like(t: &Tensor) -> Result<Tensor> {
    Tensor::zeros(&t.shape(), t.dtype())
}

pub fn ones_like(t: &Tensor) -> Result<Tensor> {
    Tensor::full(&t.shape(), Scalar::Int(1), t.dtype())
}

fn check_float(dtype: DType, what: &str) -> Result<()> {
    if dtype.category() < Category::Floating {
        return Err(Error::not_implemented(format!(
            "\"{what}\" not implemented for '{}'",
            dtype.scalar_type_name()
        )));
    }
    Ok(())
}

/// `shape` of `dtype` filled by `kind` from `gen` (factories make CPU tensors).
/// Inside vmap the draw follows the levels' `randomness` (functorch::batched::random).
fn random(shape: &[usize], dtype: DType, kind: Random, gen: &RngHandle) -> Result<Tensor> {
    let draw = |s: &[usize]| Ok(wrap(backend_for(Device::CPU)?.random(s, dtype, kind, gen)?));
    if crate::functorch::levels::any_open() {
        return crate::functorch::batched::random(shape, draw);
    }
    draw(shape)
}

/// The largest value of a small integer dtype.
fn dtype_max(dtype: DType) -> usize {
    match dtype {
        DType::U8 => u8::MAX as usize,
        _ => i32::MAX as usize,
    }
}

/// Uniform [0, 1) from the default generator.
pub fn rand(shape: &[usize], dtype: DType) -> Result<Tensor> {
    rand_from(shape, dtype, RngHandle::default_cpu())
}

/// Uniform [0, 1) from `gen`.
pub fn rand_from(shape: &[usize], dtype: DType, gen: &RngHandle) -> Result<Tensor> {
    check_float(dtype, "check_uniform_bounds")?;
    random(shape, dtype, Random::Uniform, gen)
}

/// Standard normal from the default generator.
pub fn randn(shape: &[usize], dtype: DType) -> Result<Tensor> {
    randn_from(shape, dtype, RngHandle::default_cpu())
}

/// Standard normal from `gen`.
pub fn randn_from(shape: &[usize], dtype: DType, gen: &RngHandle) -> Result<Tensor> {
    check_float(dtype, "normal_kernel_cpu")?;
    random(shape, dtype, Random::Normal, gen)
}

/// A random permutation of `0..n` as `dtype` (`randperm`).
pub fn randperm(n: usize, dtype: DType, gen: &RngHandle) -> Result<Tensor> {
    let largest = n.saturating_sub(1);
    let refused = match dtype {
        DType::Bool | DType::C64 | DType::C128 => {
            return Err(Error::not_implemented(format!(
                "\"randperm\" not implemented for '{}'",
                dtype.scalar_type_name()
            )))
        }
        DType::U8 | DType::I32 if largest > dtype_max(dtype) => Some(format!(
            "value cannot be converted to type {} without overflow",
            if dtype == DType::U8 { "uint8_t" } else { "int" }
        )),
        DType::F16 if n > 2049 => Some("n cannot be greater than 2049 for Half type.".into()),
        DType::F32 if n > (1 << 24) + 1 => {
            Some("n cannot be greater than 2^24+1 for Float type.".into())
        }
        _ => None,
    };
    if let Some(message) = refused {
        return Err(Error::runtime(message));
    }
    let perm = random(&[n], DType::I64, Random::Permutation, gen)?;
    if dtype == DType::I64 {
        return Ok(perm);
    }
    crate::ops::device::cast(&perm, dtype)
}

/// Real values computed here (arange, linspace) as a tensor of `dtype`.
fn from_f64s(v: Vec<f64>, shape: &[usize], dtype: DType) -> Result<Tensor> {
    let t = Tensor::from_vec(v, shape)?;
    if dtype == DType::F64 {
        return Ok(t);
    }
    crate::ops::device::cast(&t, dtype)
}

pub fn randint(low: i64, high: i64, shape: &[usize], dtype: DType) -> Result<Tensor> {
    randint_from(low, high, shape, dtype, RngHandle::default_cpu())
}

/// Integers uniform on [low, high) from `gen`.
pub fn randint_from(
    low: i64,
    high: i64,
    shape: &[usize],
    dtype: DType,
    gen: &RngHandle,
) -> Result<Tensor> {
    if low >= high {
        return Err(Error::runtime(format!(
            "random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )));
    }
    random(shape, dtype, Random::Int { low, high }, gen)
}

/// arange(start, end, step): integer dtype when all three are integers.
pub fn arange(start: Scalar, end: Scalar, step: Scalar, dtype: Option<DType>) -> Result<Tensor> {
    let all_int = [start, end, step]
        .iter()
        .all(|s| matches!(s, Scalar::Int(_) | Scalar::Bool(_)));
    let dtype = dtype.unwrap_or(if all_int {
        DType::I64
    } else {
        default_float_dtype()
    });
    let (s, e, st) = (start.to_f64(), end.to_f64(), step.to_f64());
    if st == 0.0 {
        return Err(Error::runtime("step must be nonzero"));
    }
    if (st > 0.0 && s > e) || (st < 0.0 && s < e) {
        return Err(Error::runtime(
            "upper bound and lower bound inconsistent with step sign",
        ));
    }
    let n = ((e - s) / st).ceil().max(0.0);
    if !n.is_finite() || n > (i64::MAX as f64) {
        return Err(Error::runtime(format!(
            "Storage size calculation overflowed with sizes=[{n}]"
        )));
    }
    let n = n as usize;
    checked_numel(&[n])?;
    crate::storage::ensure_allocatable(n, 8)?;
    if all_int {
        let (si, sti) = (start_int(start), start_int(step));
        let v: Vec<i64> = (0..n as i64).map(|i| si + i * sti).collect();
        let t = Tensor::from_vec(v, &[n])?;
        return crate::ops::device::cast(&t, dtype);
    }
    let v: Vec<f64> = (0..n).map(|i| s + i as f64 * st).collect();
    from_f64s(v, &[n], dtype)
}

fn start_int(s: Scalar) -> i64 {
    match s {
        Scalar::Int(i) => i,
        Scalar::Bool(b) => b as i64,
        other => other.to_f64() as i64,
    }
}

pub fn linspace(start: f64, end: f64, steps: i64, dtype: DType) -> Result<Tensor> {
    if steps < 0 {
        return Err(Error::runtime("number of steps must be non-negative"));
    }
    let n = steps as usize;
    checked_numel(&[n])?;
    crate::storage::ensure_allocatable(n, 8)?;
    let step = if n > 1 {
        (end - start) / (n - 1) as f64
    } else {
        0.0
    };
    if n == 1 {
        return from_f64s(vec![start], &[1], dtype);
    }
    let half = n / 2;
    // Fill from both ends, as torch does, so the last element is exactly `end`.
    let v: Vec<f64> = (0..n)
        .map(|i| {
            if i < half {
                start + step * i as f64
            } else {
                end - step * (n - 1 - i) as f64
            }
        })
        .collect();
    from_f64s(v, &[n], dtype)
}

pub fn eye(n: usize, m: usize, dtype: DType) -> Result<Tensor> {
    let t = Tensor::zeros(&[n, m], dtype)?;
    let data = t.data();
    let diag = data.with_layout(data.layout().diagonal(0, 0, 1)?)?;
    crate::ops::device::backend(&t)?.fill(&diag, Scalar::Int(1))?;
    drop(data);
    Ok(t)
}
