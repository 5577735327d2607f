//! The argument checks of the factories, with torch's classes and texts: sizes, dtypes,
//! fill values that do not fit the dtype, `arange` bounds, `randint` bounds.

use pyo3::exceptions::{PyNotImplementedError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PyTuple};

use crate::bindings::convert::{as_scalar, as_tensor_ref, dtype_of, to_shape};
use crate::bindings::device::torch_type_name;
use crate::dtype::{DType, Element, Scalar};
use crate::shape::Dims;

/// A double as C++'s `ostream <<` prints it (`%g`: 6 significant digits), which is how
/// torch's messages show bounds (`0`, `1.5`, `1e+20`, `nan`, `-inf`).
pub fn fmt_g(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let exp = format!("{x:.5e}");
    let (mantissa, e) = exp.split_once('e').unwrap_or((&exp, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-4..6).contains(&e) {
        let decimals = (5 - e).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    } else {
        let sign = if e < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), e.abs())
    }
}

/// `dtype=`: a ferrograd dtype, a Python number type, or None.
pub fn dtype_arg(fname: &str, o: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    match o.filter(|o| !o.is_none()) {
        None => Ok(None),
        Some(o) => dtype_of(o).map(Some).map_err(|_| {
            PyTypeError::new_err(format!(
                "{fname}(): argument 'dtype' must be ferrograd.dtype, not {}",
                torch_type_name(o)
            ))
        }),
    }
}

fn is_int(o: &Bound<'_, PyAny>) -> bool {
    o.is_instance_of::<PyInt>() && !o.is_instance_of::<PyBool>()
        || (!o.is_instance_of::<PyBool>()
            && as_tensor_ref(o).is_none()
            && o.hasattr("__index__").unwrap_or(false))
}

/// An `int` argument (`eye(n)`, `randint(high)`).
pub fn int_arg(fname: &str, name: &str, pos: usize, o: &Bound<'_, PyAny>) -> PyResult<i64> {
    if !is_int(o) {
        return Err(PyTypeError::new_err(format!(
            "{fname}(): argument '{name}' (position {pos}) must be int, not {}",
            torch_type_name(o)
        )));
    }
    o.extract::<i64>()
}

/// `*size` of zeros/ones/empty/rand/randn: ints, or one sequence of ints.
pub fn size_arg(fname: &str, args: &Bound<'_, PyTuple>) -> PyResult<Dims> {
    let seq = match args.len() {
        1 if !is_int(&args.get_item(0)?) => args.get_item(0)?,
        _ => args.clone().into_any(),
    };
    size_value(fname, &seq, 1)
}

/// A size given as one argument (`full(size, ...)`, `randint(..., size)`).
pub fn size_value(fname: &str, seq: &Bound<'_, PyAny>, pos: usize) -> PyResult<Dims> {
    let is_seq = seq.is_instance_of::<PyTuple>() || seq.is_instance_of::<PyList>();
    if !is_seq {
        return Err(PyTypeError::new_err(format!(
            "{fname}(): argument 'size' (position {pos}) must be tuple of ints, not {}",
            torch_type_name(seq)
        )));
    }
    let mut dims = Vec::new();
    for (i, item) in seq.try_iter()?.enumerate() {
        let item = item?;
        // torch's size parser takes bools as 0/1 inside a list.
        if !(is_int(&item) || item.is_instance_of::<PyBool>()) {
            return Err(PyTypeError::new_err(format!(
                "{fname}(): argument 'size' failed to unpack the object at pos {} with error \"type must be tuple of ints,but got {}\"",
                i + 1,
                torch_type_name(&item)
            )));
        }
        dims.push(item.extract::<i64>()?);
    }
    if fname == "zeros" && dims.iter().any(|&d| d < 0) {
        return Err(PyRuntimeError::new_err(
            "zeros: Dimension size must be non-negative.",
        ));
    }
    to_shape(&dims)
}

/// A Python number or a one-element tensor; `None` for anything else. A Python int
/// beyond int64 overflows, as in torch.
fn number(o: &Bound<'_, PyAny>) -> PyResult<Option<Scalar>> {
    if let Some(s) = as_scalar(o) {
        return Ok(Some(s));
    }
    if let Some(t) = as_tensor_ref(o).filter(|t| t.numel() == 1) {
        return Ok(Some(crate::with_dtype!(t.dtype(), T =>
            t.to_vec::<T>()[0].to_scalar())));
    }
    if o.is_instance_of::<PyInt>() && !o.is_instance_of::<PyBool>() {
        return Err(overflow("int64_t"));
    }
    Ok(None)
}

/// A fill value: a Python number or a one-element tensor.
pub fn number_arg(fname: &str, pos: usize, o: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    if let Some(s) = number(o)? {
        return Ok(s);
    }
    Err(PyTypeError::new_err(format!(
        "{fname}(): argument 'fill_value' (position {pos}) must be Number, not {}",
        torch_type_name(o)
    )))
}

fn overflow(type_name: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "value cannot be converted to type {type_name} without overflow"
    ))
}

/// torch converts a fill value to the dtype with an overflow check (`checked_convert`):
/// out-of-range or NaN for integers, finite values beyond the range of float32,
/// a non-zero imaginary part for real dtypes. Unsigned bytes take negatives that fit
/// once wrapped (`-1` becomes 255), as in torch.
pub fn check_fill(v: Scalar, dtype: DType) -> PyResult<()> {
    let (re, im) = match v {
        Scalar::Bool(b) => (b as i64 as f64, 0.0),
        Scalar::Int(i) => (i as f64, 0.0),
        Scalar::Float(f) => (f, 0.0),
        Scalar::Complex(c) => (c.re, c.im),
    };
    let in_range = |lo: f64, hi: f64| !re.is_nan() && re >= lo && re <= hi;
    let (fits, name) = match dtype {
        DType::Bool | DType::C128 => (true, ""),
        DType::U8 => (im == 0.0 && in_range(-255.0, 255.0), "uint8_t"),
        DType::I32 => (
            im == 0.0 && in_range(i32::MIN as f64, i32::MAX as f64),
            "int",
        ),
        DType::I64 => (
            im == 0.0
                && (matches!(v, Scalar::Int(_) | Scalar::Bool(_))
                    || in_range(-9.223372036854776e18, 9.223372036854775e18)),
            "int64_t",
        ),
        DType::F16 | DType::BF16 | DType::F64 => (im == 0.0, "double"),
        DType::F32 => (
            im == 0.0 && !(re.is_finite() && re.abs() > f32::MAX as f64),
            "float",
        ),
        DType::C64 => {
            let ok = |x: f64| !(x.is_finite() && x.abs() > f32::MAX as f64);
            (ok(re) && ok(im), "c10::complex<float>")
        }
    };
    if fits {
        Ok(())
    } else {
        Err(overflow(name))
    }
}

/// `tensor(data, dtype=...)` checks each number against the dtype as torch's data
/// conversion does: integers must fit (unsigned bytes wrap small negatives), a complex
/// number cannot become a real one; floats saturate to infinity without error.
pub fn check_data_value(v: Scalar, dtype: DType) -> PyResult<()> {
    let (re, complex) = match v {
        Scalar::Bool(b) => (b as i64 as f64, false),
        Scalar::Int(i) => (i as f64, false),
        Scalar::Float(f) => (f, false),
        Scalar::Complex(c) => (c.re, true),
    };
    let int_range = match dtype {
        DType::U8 => Some((-255.0, 255.0, "uint8")),
        DType::I32 => Some((i32::MIN as f64, i32::MAX as f64, "int32")),
        DType::I64 => Some((-9.223372036854776e18, 9.223372036854775e18, "int64")),
        _ => None,
    };
    match (int_range, complex) {
        (_, true) if matches!(dtype, DType::C64 | DType::C128 | DType::Bool) => Ok(()),
        (Some(_), true) => Err(PyTypeError::new_err(
            "'complex' object cannot be interpreted as an integer",
        )),
        (None, true) => Err(PyTypeError::new_err("must be real number, not complex")),
        (Some((lo, hi, name)), false) => {
            let fits = matches!(v, Scalar::Int(_) | Scalar::Bool(_)) && dtype == DType::I64
                || (!re.is_nan() && re >= lo && re <= hi);
            if fits {
                Ok(())
            } else {
                Err(overflow(name))
            }
        }
        (None, false) => Ok(()),
    }
}

/// torch's `arange` checks, in its order, before anything is allocated.
pub fn check_arange(start: Scalar, end: Scalar, step: Scalar, dtype: DType) -> PyResult<()> {
    if matches!(dtype, DType::Bool | DType::C64 | DType::C128) {
        return Err(PyNotImplementedError::new_err(format!(
            "\"arange_cpu\" not implemented for '{}'",
            dtype.scalar_type_name()
        )));
    }
    for s in [start, end, step] {
        if matches!(s, Scalar::Complex(c) if c.im != 0.0) {
            return Err(overflow("double"));
        }
    }
    let (s, e, st) = (start.to_f64(), end.to_f64(), step.to_f64());
    let fail = |m: String| Err(PyRuntimeError::new_err(m));
    if !st.is_finite() {
        return fail(format!("step must be finite but got {}", fmt_g(st)));
    }
    if st == 0.0 {
        return fail("step must be nonzero".into());
    }
    if !(s.is_finite() && e.is_finite()) {
        return fail(format!("unsupported range: {} -> {}", fmt_g(s), fmt_g(e)));
    }
    if !((st > 0.0 && e >= s) || (st < 0.0 && e <= s)) {
        return fail("upper bound and lower bound inconsistent with step sign".into());
    }
    let size = ((e - s) / st).ceil();
    if !(size >= 0.0 && size <= i64::MAX as f64) {
        return fail("invalid size, possible overflow?".into());
    }
    Ok(())
}

/// `arange`'s bounds.
pub fn arange_bound(o: &Bound<'_, PyAny>, name: &str, pos: usize) -> PyResult<Scalar> {
    if let Some(s) = number(o)? {
        return Ok(s);
    }
    Err(PyTypeError::new_err(format!(
        "arange(): argument '{name}' (position {pos}) must be Number, not {}",
        torch_type_name(o)
    )))
}

/// torch's `check_random_bounds` for `randint(low, high)` in `dtype`.
pub fn check_randint(low: i64, high: i64, dtype: DType) -> PyResult<()> {
    let (lo, hi, name): (i64, i64, &str) = match dtype {
        DType::Bool => (0, 1, "bool"),
        DType::U8 => (0, 255, "unsigned char"),
        DType::I32 => (i32::MIN as i64, i32::MAX as i64, "int"),
        DType::I64 => (i64::MIN, i64::MAX, "long"),
        DType::F16 => (-(1 << 11), 1 << 11, "c10::Half"),
        DType::C64 | DType::C128 => {
            return Err(PyRuntimeError::new_err(
                "check_random_bounds handles only integral, floating-point and boolean types",
            ))
        }
        // float32/64 and bfloat16 only warn in torch.
        DType::BF16 | DType::F32 | DType::F64 => return Ok(()),
    };
    if low < lo || low > hi {
        return Err(PyRuntimeError::new_err(format!(
            "from is out of bounds for {name}"
        )));
    }
    let top = high.saturating_sub(1);
    if top < lo || top > hi {
        return Err(PyRuntimeError::new_err(format!(
            "to - 1 is out of bounds for {name}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::fmt_g;

    #[test]
    fn prints_like_cpp_ostream() {
        for (x, s) in [
            (0.0, "0"),
            (1.5, "1.5"),
            (1e20, "1e+20"),
            (0.1234567, "0.123457"),
            (100000.0, "100000"),
            (1e6, "1e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-3.0, "-3"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(fmt_g(x), s);
        }
    }
}
