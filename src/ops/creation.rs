//! Factories: zeros/ones/full/empty/arange/linspace/eye/rand/randn/randint and *_like.
//! Results are leaves; `requires_grad` is applied by the caller.

use crate::dtype::{default_float_dtype, Category, DType, Element, Scalar};
use crate::error::{Error, Result};
use crate::kernels::random::with_generator;
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

/// Uniform [0, 1).
pub fn rand(shape: &[usize], dtype: DType) -> Result<Tensor> {
    check_float(dtype, "check_uniform_bounds")?;
    let n = checked_numel(shape)?;
    crate::storage::ensure_allocatable(n * 2, 8)?;
    let v: Vec<f64> = with_generator(|g| {
        (0..n * complex_factor(dtype))
            .map(|_| g.uniform())
            .collect()
    });
    from_f64s(v, shape, dtype)
}

/// Standard normal.
pub fn randn(shape: &[usize], dtype: DType) -> Result<Tensor> {
    check_float(dtype, "normal_kernel_cpu")?;
    let n = checked_numel(shape)?;
    crate::storage::ensure_allocatable(n * 2, 8)?;
    let scale = if dtype.is_complex() {
        std::f64::consts::FRAC_1_SQRT_2
    } else {
        1.0
    };
    let v: Vec<f64> = with_generator(|g| {
        (0..n * complex_factor(dtype))
            .map(|_| g.normal() * scale)
            .collect()
    });
    from_f64s(v, shape, dtype)
}

fn complex_factor(dtype: DType) -> usize {
    if dtype.is_complex() {
        2
    } else {
        1
    }
}

fn from_f64s(v: Vec<f64>, shape: &[usize], dtype: DType) -> Result<Tensor> {
    if dtype.is_complex() {
        let c: Vec<num_complex::Complex64> = v
            .chunks(2)
            .map(|p| num_complex::Complex64::new(p[0], p[1]))
            .collect();
        let t = Tensor::from_vec(c, shape)?;
        return Ok(crate::kernels::cast_tensor(&t, dtype));
    }
    let t = Tensor::from_vec(v, shape)?;
    Ok(if dtype == DType::F64 {
        t
    } else {
        crate::kernels::cast_tensor(&t, dtype)
    })
}

pub fn randint(low: i64, high: i64, shape: &[usize], dtype: DType) -> Result<Tensor> {
    if low >= high {
        return Err(Error::runtime(format!(
            "random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )));
    }
    let n = checked_numel(shape)?;
    crate::storage::ensure_allocatable(n, 8)?;
    let v: Vec<i64> = with_generator(|g| (0..n).map(|_| g.int_range(low, high)).collect());
    let t = Tensor::from_vec(v, shape)?;
    Ok(if dtype == DType::I64 {
        t
    } else {
        crate::kernels::cast_tensor(&t, dtype)
    })
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
        return Ok(crate::kernels::cast_tensor(&t, dtype));
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
    crate::with_dtype!(dtype, T => {
        let data = t.data();
        let diag = crate::kernels::access_as::<T>(&data, data.layout().diagonal(0, 0, 1)?);
        for i in 0..n.min(m) {
            // SAFETY: element i of the diagonal layout of a fresh tensor nobody else sees.
            unsafe { diag.write(i * (m + 1), T::one()) };
        }
    });
    Ok(t)
}
