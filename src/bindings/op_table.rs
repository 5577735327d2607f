//! The op table: one line per op. Each line generates the method `Tensor.op`, its
//! aliases, the in-place method `Tensor.op_` where the line names one (torch has it and
//! the core implements it), the module function `ferrograd.op(input, ...)` and the entry
//! `_C._op_table()` reports (tools/gen_stub.py writes the typed stub from it). Every
//! generated function parses its arguments through the shared helpers below, so the
//! method and the module function of an op cannot disagree.
//!
//! A line reads `KIND name(arg) [aliases] (inplace_name ...) : implementation`, where
//! `(arg)` (the operand's keyword name, as torch spells it) is there for ops with one,
//! and the in-place group is there where the op has one. Ops whose arguments fit no
//! kind (views, `max`/`min` with their overloads, `to`, indexing, ...) keep hand-written
//! methods in `tensor.rs`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::bindings::convert::*;
use crate::bindings::errors::run;
use crate::bindings::tensor::{
    alpha_of, arith_number_first, bound_scalar, cmp_op, expect_operand, mul_scalars, to_py,
    PyTensor,
};
use crate::dtype::Scalar;
use crate::kernels::kinds::{BinaryMath, Extremum};
use crate::ops::binary::{self as bin, Arithmetic, Cmp};
use crate::ops::binary_math as bm;
use crate::ops::clamp::{Bounds, ClampFn};
use crate::ops::{classify, complex, extrema, inplace, reduce, rounding, special, unary};
use crate::tensor::Tensor;

/// The table. `$m` is the macro each line is handed to; `$x` are tokens passed in front
/// of every line (the binding a callback adds to).
macro_rules! op_table {
    ($m:ident $($x:tt)*) => {
        $m!($($x)* unary neg [negative] (neg_ unary::Neg) : unary::neg);
        $m!($($x)* unary exp [] (exp_ unary::Exp) : unary::exp);
        $m!($($x)* unary log [] (log_ unary::Log) : unary::log);
        $m!($($x)* unary sin [] (sin_ unary::Sin) : unary::sin);
        $m!($($x)* unary cos [] (cos_ unary::Cos) : unary::cos);
        $m!($($x)* unary tanh [] (tanh_ unary::Tanh) : unary::tanh);
        $m!($($x)* unary sigmoid [] (sigmoid_ unary::Sigmoid) : unary::sigmoid);
        $m!($($x)* unary relu [] (relu_ unary::Relu) : unary::relu);
        $m!($($x)* unary sqrt [] (sqrt_ unary::Sqrt) : unary::sqrt);
        $m!($($x)* unary rsqrt [] (rsqrt_ unary::Rsqrt) : unary::rsqrt);
        $m!($($x)* unary tan [] (tan_ unary::Tan) : unary::tan);
        $m!($($x)* unary expm1 [] (expm1_ unary::Expm1) : unary::expm1);
        $m!($($x)* unary log1p [] (log1p_ unary::Log1p) : unary::log1p);
        $m!($($x)* unary erf [] (erf_ unary::Erf) : unary::erf);
        $m!($($x)* unary asin [] (asin_ unary::Asin) : unary::asin);
        $m!($($x)* unary acos [] (acos_ unary::Acos) : unary::acos);
        $m!($($x)* unary atan [] (atan_ unary::Atan) : unary::atan);
        $m!($($x)* unary sinh [] (sinh_ unary::Sinh) : unary::sinh);
        $m!($($x)* unary cosh [] (cosh_ unary::Cosh) : unary::cosh);
        $m!($($x)* unary asinh [] (asinh_ unary::Asinh) : unary::asinh);
        $m!($($x)* unary acosh [] (acosh_ unary::Acosh) : unary::acosh);
        $m!($($x)* unary atanh [] (atanh_ unary::Atanh) : unary::atanh);
        $m!($($x)* unary exp2 [] (exp2_ unary::Exp2) : unary::exp2);
        $m!($($x)* unary log2 [] (log2_ unary::Log2) : unary::log2);
        $m!($($x)* unary log10 [] (log10_ unary::Log10) : unary::log10);
        $m!($($x)* unary reciprocal [] (reciprocal_ unary::Reciprocal) : unary::reciprocal);
        $m!($($x)* unary abs [] (abs_ unary::Abs) : unary::abs);
        $m!($($x)* unary sign [] (sign_ fn unary::sign_) : unary::sign);
        $m!($($x)* unary sgn [] (sgn_ fn unary::sgn_) : unary::sgn);
        $m!($($x)* unary floor [] (floor_ fn rounding::floor_) : rounding::floor);
        $m!($($x)* unary ceil [] (ceil_ fn rounding::ceil_) : rounding::ceil);
        $m!($($x)* unary trunc [fix] (trunc_ fn rounding::trunc_) : rounding::trunc);
        $m!($($x)* unary frac [] (frac_ fn rounding::frac_) : rounding::frac);
        $m!($($x)* unary square [] : bin::square);
        $m!($($x)* unary deg2rad [] (deg2rad_ fn unary::deg2rad_) : unary::deg2rad);
        $m!($($x)* unary rad2deg [] (rad2deg_ fn unary::rad2deg_) : unary::rad2deg);
        $m!($($x)* unary isnan [] : classify::isnan);
        $m!($($x)* unary isinf [] : classify::isinf);
        $m!($($x)* unary isfinite [] : classify::isfinite);
        $m!($($x)* unary isposinf [] : classify::isposinf);
        $m!($($x)* unary isneginf [] : classify::isneginf);
        $m!($($x)* unary conj [] : unary::conj);
        $m!($($x)* unary erfc [] (erfc_ special::Erfc) : special::erfc);
        $m!($($x)* unary erfinv [] (erfinv_ special::Erfinv) : special::erfinv);
        $m!($($x)* unary lgamma [] (lgamma_ special::Lgamma) : special::lgamma);
        $m!($($x)* unary digamma [] (digamma_ special::Digamma) : special::digamma);
        $m!($($x)* unary sinc [] (sinc_ special::Sinc) : special::sinc);
        $m!($($x)* unary signbit [] : special::signbit);
        $m!($($x)* arith_alpha add(other) [] (add_) : Arithmetic::Add);
        $m!($($x)* arith_alpha sub(other) [subtract] (sub_) : Arithmetic::Sub);
        $m!($($x)* arith mul(other) [multiply] (mul_) : Arithmetic::Mul);
        $m!($($x)* arith_div div(other) [divide, true_divide] (div_) : Arithmetic::Div);
        $m!($($x)* arith pow(exponent) [] (pow_) : Arithmetic::Pow);
        $m!($($x)* pairwise maximum(other) [] : Extremum::Maximum);
        $m!($($x)* pairwise minimum(other) [] : Extremum::Minimum);
        $m!($($x)* pairwise fmax(other) [] : Extremum::Fmax);
        $m!($($x)* pairwise fmin(other) [] : Extremum::Fmin);
        $m!($($x)* math2 atan2(other) [arctan2] (atan2_) : BinaryMath::Atan2);
        $m!($($x)* math2 hypot(other) [] (hypot_) : BinaryMath::Hypot);
        $m!($($x)* math2 nextafter(other) [] (nextafter_) : BinaryMath::Nextafter);
        $m!($($x)* math2 logaddexp(other) [] : BinaryMath::Logaddexp);
        $m!($($x)* math2 logaddexp2(other) [] : BinaryMath::Logaddexp2);
        $m!($($x)* math2s copysign(other) [] (copysign_) : BinaryMath::Copysign);
        $m!($($x)* math2s xlogy(other) [] (xlogy_) : BinaryMath::Xlogy);
        $m!($($x)* math2s remainder(other) [] (remainder_) : BinaryMath::Remainder);
        $m!($($x)* math2s fmod(other) [] (fmod_) : BinaryMath::Fmod);
        $m!($($x)* compare eq(other) [] (eq_) : Cmp::Eq);
        $m!($($x)* compare ne(other) [not_equal] (ne_) : Cmp::Ne);
        $m!($($x)* compare lt(other) [less] (lt_) : Cmp::Lt);
        $m!($($x)* compare le(other) [less_equal] (le_) : Cmp::Le);
        $m!($($x)* compare gt(other) [greater] (gt_) : Cmp::Gt);
        $m!($($x)* compare ge(other) [greater_equal] (ge_) : Cmp::Ge);
        $m!($($x)* reduce sum [] : reduce::sum);
        $m!($($x)* reduce mean [] : reduce::mean);
        $m!($($x)* clamp clamp [clip] (clamp_) : ClampFn::Clamp);
        $m!($($x)* clamp_side clamp_min(min) [] (clamp_min_) : ClampFn::Min);
        $m!($($x)* clamp_side clamp_max(max) [] (clamp_max_) : ClampFn::Max);
        $m!($($x)* unary angle [] : complex::angle);
        $m!($($x)* unary conj_physical [] : complex::conj_physical);
    };
}

// ---------------------------------------------------------------- shared parsing

type UnaryFn = fn(&Tensor) -> crate::error::Result<Tensor>;
type ReduceFn =
    fn(&Tensor, Option<&[i64]>, bool, Option<crate::dtype::DType>) -> crate::error::Result<Tensor>;

fn type_name(o: &Bound<'_, PyAny>) -> String {
    o.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

/// A module function's `input`, with torch's error for anything but a tensor.
fn input_tensor(input: &Bound<'_, PyAny>, op: &str) -> PyResult<Tensor> {
    as_tensor_ref(input).ok_or_else(|| not_tensor_input(input, op))
}

fn not_tensor_input(input: &Bound<'_, PyAny>, op: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "{op}(): argument 'input' (position 1) must be Tensor, not {}",
        type_name(input)
    ))
}

/// `a ⊕ other` (alpha scales `other`; it is 1 for the kinds without one).
fn arith(
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    kind: Arithmetic,
    alpha: Scalar,
    op: &str,
) -> PyResult<Tensor> {
    match (expect_operand(other, op)?, kind) {
        (Operand::T(b), Arithmetic::Add) => run(|| bin::add_alpha(a, &b, alpha)),
        (Operand::S(s), Arithmetic::Add) => run(|| bin::add_scalar(a, mul_scalars(s, alpha))),
        (Operand::T(b), Arithmetic::Sub) => run(|| bin::sub(a, &b, alpha)),
        (Operand::S(s), Arithmetic::Sub) => run(|| bin::sub_scalar(a, mul_scalars(s, alpha))),
        (Operand::T(b), Arithmetic::Mul) => run(|| bin::mul(a, &b)),
        (Operand::S(s), Arithmetic::Mul) => run(|| bin::mul_scalar(a, s)),
        (Operand::T(b), Arithmetic::Div) => run(|| bin::div(a, &b)),
        (Operand::S(s), Arithmetic::Div) => run(|| bin::div_scalar(a, s)),
        (Operand::T(b), Arithmetic::Pow) => run(|| bin::pow(a, &b)),
        (Operand::S(s), Arithmetic::Pow) => run(|| bin::pow_scalar(a, s)),
    }
}

/// `t ⊕= other`, in place. `op` names the caller in the error for a bad operand.
pub fn arith_(
    t: &Tensor,
    other: &Bound<'_, PyAny>,
    kind: Arithmetic,
    alpha: Scalar,
    op: &str,
) -> PyResult<()> {
    match expect_operand(other, op)? {
        Operand::S(s) => run(|| inplace::scalar_(t, kind, mul_scalars(s, alpha))),
        Operand::T(b) => match kind {
            Arithmetic::Add => run(|| inplace::add_(t, &b, alpha)),
            Arithmetic::Sub => run(|| inplace::sub_(t, &b, alpha)),
            Arithmetic::Mul => run(|| inplace::mul_(t, &b)),
            Arithmetic::Div => run(|| inplace::div_(t, &b)),
            Arithmetic::Pow => run(|| inplace::pow_(t, &b)),
        },
    }
}

/// `ferrograd.add(input, other, *, alpha)` and its kin: `input` may be a Python number
/// when `other` is a tensor (then no alpha).
fn arith_fn(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    other: &Bound<'_, PyAny>,
    kind: Arithmetic,
    alpha: Option<&Bound<'_, PyAny>>,
    op: &str,
) -> PyResult<Py<PyAny>> {
    if let Some(a) = as_tensor_ref(input) {
        return to_py(py, arith(&a, other, kind, alpha_of(alpha)?, op)?);
    }
    match (as_scalar(input), as_tensor_ref(other), alpha) {
        (Some(s), Some(b), None) => to_py(py, run(|| arith_number_first(s, &b, kind))?),
        _ => Err(not_tensor_input(input, op)),
    }
}

/// `lt(2, t)` is `t > 2`: the comparison seen from the other side.
fn mirrored(cmp: Cmp) -> Cmp {
    match cmp {
        Cmp::Eq => Cmp::Eq,
        Cmp::Ne => Cmp::Ne,
        Cmp::Lt => Cmp::Gt,
        Cmp::Le => Cmp::Ge,
        Cmp::Gt => Cmp::Lt,
        Cmp::Ge => Cmp::Le,
    }
}

fn compare_fn(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    other: &Bound<'_, PyAny>,
    cmp: Cmp,
    op: &str,
) -> PyResult<Py<PyAny>> {
    if let Some(a) = as_tensor_ref(input) {
        return cmp_op(py, &a, other, cmp);
    }
    match (as_scalar(input), as_tensor_ref(other)) {
        (Some(_), Some(b)) => cmp_op(py, &b, input, mirrored(cmp)),
        _ => Err(not_tensor_input(input, op)),
    }
}

/// `t.eq_(other)` and kin.
fn compare_(t: &Tensor, other: &Bound<'_, PyAny>, cmp: Cmp, name: &str) -> PyResult<()> {
    match as_operand(other) {
        Some(Operand::T(b)) => run(|| inplace::compare_(t, &b, cmp)),
        Some(Operand::S(s)) => run(|| inplace::compare_scalar_(t, s, cmp)),
        None => Err(no_overload(name, "other", other)),
    }
}

/// torch's TypeError for a method taking `(Tensor arg)` or `(Number arg)` given
/// something else.
fn no_overload(name: &str, arg: &str, given: &Bound<'_, PyAny>) -> PyErr {
    let got = type_name(given);
    let why =
        format!("      didn't match because some of the arguments have invalid types: (!{got}!)");
    PyTypeError::new_err(format!(
        "{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n * (Tensor {arg})\n{why}\n * (Number {arg})\n{why}\n"
    ))
}

/// `maximum(a, other)` and kin: `other` must be a tensor (`position`: where torch's
/// error says it was).
fn pairwise(
    py: Python<'_>,
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    op: Extremum,
    name: &str,
    position: usize,
) -> PyResult<Py<PyAny>> {
    let b = extract_tensor(
        other,
        &format!("{name}(): argument 'other' (position {position})"),
    )?;
    to_py(py, run(|| extrema::pairwise(a, &b, op))?)
}

/// `op(a, other)` of the special-math kinds: `other` a tensor, or (`scalars`) a Python
/// number; anything else is torch's TypeError naming the argument's `position`.
fn math2(
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    op: BinaryMath,
    scalars: bool,
    name: &str,
    position: usize,
) -> PyResult<Tensor> {
    match as_operand(other) {
        Some(Operand::T(b)) => run(|| bm::binary_math(a, &b, op)),
        Some(Operand::S(s)) if scalars => run(|| bm::binary_math_scalar(a, s, op)),
        _ => Err(PyTypeError::new_err(format!(
            "{name}(): argument 'other' (position {position}) must be Tensor, not {}",
            type_name(other)
        ))),
    }
}

/// `div(a, other, rounding_mode=...)`; None is true division.
fn rounded_div(a: &Tensor, other: &Bound<'_, PyAny>, mode: Option<&str>) -> PyResult<Tensor> {
    let Some(m) = mode else {
        return arith(a, other, Arithmetic::Div, Scalar::Int(1), "div");
    };
    let b = match expect_operand(other, "div")? {
        Operand::T(b) => b,
        Operand::S(s) => bin::wrapped_scalar(a, s),
    };
    run(|| bm::div_rounding(a, &b, Some(m)))
}

fn rounded_div_(t: &Tensor, other: &Bound<'_, PyAny>, mode: Option<&str>) -> PyResult<()> {
    let kind = match mode {
        None => return arith_(t, other, Arithmetic::Div, Scalar::Int(1), "div_"),
        Some("trunc") => BinaryMath::DivTrunc,
        Some("floor") => BinaryMath::DivFloor,
        Some(m) => return run(|| bm::div_rounding(t, t, Some(m)).map(|_| ())),
    };
    math2_(t, other, kind, true, "div_")
}

/// The in-place form `t.op_(other)`.
fn math2_(
    t: &Tensor,
    other: &Bound<'_, PyAny>,
    op: BinaryMath,
    scalars: bool,
    name: &str,
) -> PyResult<()> {
    let b = match as_operand(other) {
        Some(Operand::T(b)) => b,
        Some(Operand::S(s)) if scalars => bm::wrapped_scalar_for(t, s),
        _ => {
            return Err(PyTypeError::new_err(format!(
                "{name}(): argument 'other' (position 1) must be Tensor, not {}",
                type_name(other)
            )))
        }
    };
    let scalar = !matches!(as_operand(other), Some(Operand::T(_)));
    run(|| bm::binary_math_(t, &b, op, scalar))
}

/// `ferrograd.op(input, other)`: `input` may be a Python number for the kinds whose
/// torch overloads take one (xlogy, remainder).
fn math2_fn(
    input: &Bound<'_, PyAny>,
    other: &Bound<'_, PyAny>,
    op: BinaryMath,
    scalars: bool,
    name: &str,
) -> PyResult<Tensor> {
    if let Some(a) = as_tensor_ref(input) {
        return math2(&a, other, op, scalars, name, 2);
    }
    let number_first = matches!(
        op,
        BinaryMath::Xlogy | BinaryMath::Xlog1py | BinaryMath::Remainder
    );
    match (as_scalar(input), as_tensor_ref(other)) {
        (Some(s), Some(b)) if number_first => run(|| bm::binary_math_scalar_first(s, &b, op)),
        _ => Err(not_tensor_input(input, name)),
    }
}

fn reduction(
    py: Python<'_>,
    t: &Tensor,
    f: ReduceFn,
    dim: Option<&Bound<'_, PyAny>>,
    keepdim: bool,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let dims = opt_dims(dim)?;
    let dtype = opt_dtype(dtype)?;
    to_py(py, run(|| f(t, dims.as_deref(), keepdim, dtype))?)
}

fn unary_fn(py: Python<'_>, input: &Bound<'_, PyAny>, f: UnaryFn, op: &str) -> PyResult<Py<PyAny>> {
    let t = input_tensor(input, op)?;
    to_py(py, run(|| f(&t))?)
}

fn clamp_bounds(
    min: Option<&Bound<'_, PyAny>>,
    max: Option<&Bound<'_, PyAny>>,
) -> PyResult<Bounds> {
    let tensor = |b: Option<&Bound<'_, PyAny>>| b.and_then(as_tensor_ref);
    let is_number = |b: Option<&Bound<'_, PyAny>>| b.is_some_and(|o| as_scalar(o).is_some());
    let (lo, hi) = (tensor(min), tensor(max));
    // With a number beside it, a 0-dim tensor reads as a number (torch's parser takes
    // the number overload); any other tensor there matches neither overload.
    let mixed = is_number(min) || is_number(max);
    let all_scalars = [&lo, &hi]
        .iter()
        .all(|t| t.as_ref().is_none_or(|t| t.dim() == 0));
    if (lo.is_none() && hi.is_none()) || (mixed && all_scalars) {
        return Ok(Bounds::Numbers(bound_scalar(min)?, bound_scalar(max)?));
    }
    if mixed {
        return Err(PyTypeError::new_err(
            "clamp() received an invalid combination of arguments - got a Tensor and a Number as bounds, but expected one of:\n * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n",
        ));
    }
    Ok(Bounds::Tensors(lo, hi))
}

/// The one bound of `clamp_min` / `clamp_max` (`name`), put on its side: a tensor
/// (of any dim) or a number, else torch's TypeError listing both overloads.
fn side_bound(bound: &Bound<'_, PyAny>, func: ClampFn, name: &str) -> PyResult<Bounds> {
    fn side<B>(func: ClampFn, b: B) -> (Option<B>, Option<B>) {
        match func {
            ClampFn::Max => (None, Some(b)),
            _ => (Some(b), None),
        }
    }
    if let Some(t) = as_tensor_ref(bound) {
        let (lo, hi) = side(func, t);
        return Ok(Bounds::Tensors(lo, hi));
    }
    if let Some(s) = as_scalar(bound) {
        let (lo, hi) = side(func, s);
        return Ok(Bounds::Numbers(lo, hi));
    }
    let arg = if func == ClampFn::Max { "max" } else { "min" };
    Err(no_overload(name, arg, bound))
}

// ---------------------------------------------------------------- generated methods

type Obj<'py> = Bound<'py, PyAny>;
type Out = PyResult<Py<PyAny>>;

/// `Tensor.op`, its aliases and `Tensor.op_` for one line.
macro_rules! tensor_methods {
    (unary $name:ident [$($alias:ident),*] ($ip:ident fn $f_:path) : $f:path) => {
        tensor_methods!(unary $name [$($alias),*] : $f);
        #[pymethods]
        impl PyTensor {
            fn $ip(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
                run(|| $f_(&slf.get().t))?;
                Ok(slf)
            }
        }
    };
    (unary $name:ident [$($alias:ident),*] $(($ip:ident $op:path))? : $f:path) => {
        #[pymethods]
        impl PyTensor {
            fn $name(&self, py: Python<'_>) -> Out {
                to_py(py, run(|| $f(&self.t))?)
            }
            $(fn $alias(&self, py: Python<'_>) -> Out {
                self.$name(py)
            })*
            $(fn $ip(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
                run(|| inplace::unary_($op, &slf.get().t))?;
                Ok(slf)
            })?
        }
    };
    (arith_alpha $name:ident($arg:ident) [$($alias:ident),*] $(($ip:ident))? : $kind:expr) => {
        #[pymethods]
        impl PyTensor {
            #[pyo3(signature = ($arg, *, alpha=None))]
            fn $name(&self, py: Python<'_>, $arg: &Obj<'_>, alpha: Option<&Obj<'_>>) -> Out {
                to_py(py, arith(&self.t, $arg, $kind, alpha_of(alpha)?, stringify!($name))?)
            }
            $(#[pyo3(signature = ($arg, *, alpha=None))]
            fn $alias(&self, py: Python<'_>, $arg: &Obj<'_>, alpha: Option<&Obj<'_>>) -> Out {
                self.$name(py, $arg, alpha)
            })*
            $(#[pyo3(signature = ($arg, *, alpha=None))]
            fn $ip<'py>(
                slf: Bound<'py, Self>,
                $arg: &Obj<'py>,
                alpha: Option<&Obj<'py>>,
            ) -> PyResult<Bound<'py, Self>> {
                arith_(&slf.get().t, $arg, $kind, alpha_of(alpha)?, stringify!($ip))?;
                Ok(slf)
            })?
        }
    };
    (arith $name:ident($arg:ident) [$($alias:ident),*] $(($ip:ident))? : $kind:expr) => {
        #[pymethods]
        impl PyTensor {
            fn $name(&self, py: Python<'_>, $arg: &Obj<'_>) -> Out {
                to_py(py, arith(&self.t, $arg, $kind, Scalar::Int(1), stringify!($name))?)
            }
            $(fn $alias(&self, py: Python<'_>, $arg: &Obj<'_>) -> Out {
                self.$name(py, $arg)
            })*
            $(fn $ip<'py>(slf: Bound<'py, Self>, $arg: &Obj<'py>) -> PyResult<Bound<'py, Self>> {
                arith_(&slf.get().t, $arg, $kind, Scalar::Int(1), stringify!($ip))?;
                Ok(slf)
            })?
        }
    };
    (arith_div $name:ident($arg:ident) [$($alias:ident),*] ($ip:ident) : $kind:expr) => {
        #[pymethods]
        impl PyTensor {
            #[pyo3(signature = ($arg, *, rounding_mode=None))]
            fn $name(&self, py: Python<'_>, $arg: &Obj<'_>, rounding_mode: Option<&str>) -> Out {
                to_py(py, rounded_div(&self.t, $arg, rounding_mode)?)
            }
            $(#[pyo3(signature = ($arg, *, rounding_mode=None))]
            fn $alias(&self, py: Python<'_>, $arg: &Obj<'_>, rounding_mode: Option<&str>) -> Out {
                self.$name(py, $arg, rounding_mode)
            })*
            #[pyo3(signature = ($arg, *, rounding_mode=None))]
            fn $ip<'py>(
                slf: Bound<'py, Self>,
                $arg: &Obj<'py>,
                rounding_mode: Option<&str>,
            ) -> PyResult<Bound<'py, Self>> {
                rounded_div_(&slf.get().t, $arg, rounding_mode)?;
                Ok(slf)
            }
        }
    };
    (compare $name:ident($arg:ident) [$($alias:ident),*] ($ip:ident) : $cmp:expr) => {
        #[pymethods]
        impl PyTensor {
            fn $name(&self, py: Python<'_>, $arg: &Obj<'_>) -> Out {
                cmp_op(py, &self.t, $arg, $cmp)
            }
            $(fn $alias(&self, py: Python<'_>, $arg: &Obj<'_>) -> Out {
                self.$name(py, $arg)
            })*
            fn $ip<'py>(slf: Bound<'py, Self>, $arg: &Obj<'py>) -> PyResult<Bound<'py, Self>> {
                compare_(&slf.get().t, $arg, $cmp, stringify!($ip))?;
                Ok(slf)
            }
        }
    };
    (pairwise $name:ident($arg:ident) [] : $op:expr) => {
        #[pymethods]
        impl PyTensor {
            fn $name(&self, py: Python<'_>, $arg: &Obj<'_>) -> Out {
                pairwise(py, &self.t, $arg, $op, stringify!($name), 1)
            }
        }
    };
    (math2 $name:ident($arg:ident) [$($alias:ident),*] $(($ip:ident))? : $op:expr) => {
        tensor_methods!(@math2 false $name($arg) [$($alias),*] $(($ip))? : $op);
    };
    (math2s $name:ident($arg:ident) [$($alias:ident),*] $(($ip:ident))? : $op:expr) => {
        tensor_methods!(@math2 true $name($arg) [$($alias),*] $(($ip))? : $op);
    };
    (@math2 $scalars:literal $name:ident($arg:ident) [$($alias:ident),*] $(($ip:ident))? : $op:expr) => {
        #[pymethods]
        impl PyTensor {
            fn $name(&self, py: Python<'_>, $arg: &Obj<'_>) -> Out {
                to_py(py, math2(&self.t, $arg, $op, $scalars, stringify!($name), 1)?)
            }
            $(fn $alias(&self, py: Python<'_>, $arg: &Obj<'_>) -> Out {
                self.$name(py, $arg)
            })*
            $(fn $ip<'py>(slf: Bound<'py, Self>, $arg: &Obj<'py>) -> PyResult<Bound<'py, Self>> {
                math2_(&slf.get().t, $arg, $op, $scalars, stringify!($ip))?;
                Ok(slf)
            })?
        }
    };
    (reduce $name:ident [] : $f:path) => {
        #[pymethods]
        impl PyTensor {
            #[pyo3(signature = (dim=None, keepdim=false, *, dtype=None))]
            fn $name(
                &self,
                py: Python<'_>,
                dim: Option<&Obj<'_>>,
                keepdim: bool,
                dtype: Option<&Obj<'_>>,
            ) -> Out {
                reduction(py, &self.t, $f, dim, keepdim, dtype)
            }
        }
    };
    (clamp $name:ident [$($alias:ident),*] ($ip:ident) : $func:expr) => {
        #[pymethods]
        impl PyTensor {
            #[pyo3(signature = (min=None, max=None))]
            fn $name(&self, py: Python<'_>, min: Option<&Obj<'_>>, max: Option<&Obj<'_>>) -> Out {
                let bounds = clamp_bounds(min, max)?;
                to_py(py, run(|| crate::ops::clamp::clamp_with(&self.t, bounds, $func))?)
            }
            $(#[pyo3(signature = (min=None, max=None))]
            fn $alias(&self, py: Python<'_>, min: Option<&Obj<'_>>, max: Option<&Obj<'_>>) -> Out {
                self.$name(py, min, max)
            })*
            #[pyo3(signature = (min=None, max=None))]
            fn $ip<'py>(
                slf: Bound<'py, Self>,
                min: Option<&Obj<'py>>,
                max: Option<&Obj<'py>>,
            ) -> PyResult<Bound<'py, Self>> {
                let bounds = clamp_bounds(min, max)?;
                run(|| crate::ops::clamp::clamp_with_(&slf.get().t, bounds, $func))?;
                Ok(slf)
            }
        }
    };
    (clamp_side $name:ident($arg:ident) [] ($ip:ident) : $func:expr) => {
        #[pymethods]
        impl PyTensor {
            fn $name(&self, py: Python<'_>, $arg: &Obj<'_>) -> Out {
                let bounds = side_bound($arg, $func, stringify!($name))?;
                to_py(py, run(|| crate::ops::clamp::clamp_with(&self.t, bounds, $func))?)
            }
            fn $ip<'py>(slf: Bound<'py, Self>, $arg: &Obj<'py>) -> PyResult<Bound<'py, Self>> {
                let bounds = side_bound($arg, $func, stringify!($ip))?;
                run(|| crate::ops::clamp::clamp_with_(&slf.get().t, bounds, $func))?;
                Ok(slf)
            }
        }
    };
}

op_table!(tensor_methods);

// ---------------------------------------------------------------- module functions

/// `ferrograd.op(input, ...)` for one line (aliases are added as names for it).
macro_rules! module_function {
    (unary $name:ident [$($alias:ident),*] $(($($ip:tt)*))? : $f:path) => {
        #[pyfunction]
        pub fn $name(py: Python<'_>, input: &Obj<'_>) -> Out {
            unary_fn(py, input, $f, stringify!($name))
        }
    };
    (arith_alpha $name:ident($arg:ident) [$($alias:ident),*] $(($ip:ident))? : $kind:expr) => {
        #[pyfunction]
        #[pyo3(signature = (input, $arg, *, alpha=None))]
        pub fn $name(
            py: Python<'_>,
            input: &Obj<'_>,
            $arg: &Obj<'_>,
            alpha: Option<&Obj<'_>>,
        ) -> Out {
            arith_fn(py, input, $arg, $kind, alpha, stringify!($name))
        }
    };
    (arith $name:ident($arg:ident) [$($alias:ident),*] $(($ip:ident))? : $kind:expr) => {
        #[pyfunction]
        pub fn $name(py: Python<'_>, input: &Obj<'_>, $arg: &Obj<'_>) -> Out {
            arith_fn(py, input, $arg, $kind, None, stringify!($name))
        }
    };
    (pairwise $name:ident($arg:ident) [] : $op:expr) => {
        #[pyfunction]
        pub fn $name(py: Python<'_>, input: &Obj<'_>, $arg: &Obj<'_>) -> Out {
            let t = input_tensor(input, stringify!($name))?;
            pairwise(py, &t, $arg, $op, stringify!($name), 2)
        }
    };
    (math2 $name:ident($arg:ident) [$($alias:ident),*] $(($ip:ident))? : $op:expr) => {
        #[pyfunction]
        pub fn $name(py: Python<'_>, input: &Obj<'_>, $arg: &Obj<'_>) -> Out {
            to_py(py, math2_fn(input, $arg, $op, false, stringify!($name))?)
        }
    };
    (math2s $name:ident($arg:ident) [$($alias:ident),*] $(($ip:ident))? : $op:expr) => {
        #[pyfunction]
        pub fn $name(py: Python<'_>, input: &Obj<'_>, $arg: &Obj<'_>) -> Out {
            to_py(py, math2_fn(input, $arg, $op, true, stringify!($name))?)
        }
    };
    (arith_div $name:ident($arg:ident) [$($alias:ident),*] ($ip:ident) : $kind:expr) => {
        #[pyfunction]
        #[pyo3(signature = (input, $arg, *, rounding_mode=None))]
        pub fn $name(
            py: Python<'_>,
            input: &Obj<'_>,
            $arg: &Obj<'_>,
            rounding_mode: Option<&str>,
        ) -> Out {
            match (as_tensor_ref(input), rounding_mode) {
                (Some(a), Some(_)) => to_py(py, rounded_div(&a, $arg, rounding_mode)?),
                _ => arith_fn(py, input, $arg, $kind, None, stringify!($name)),
            }
        }
    };
    (compare $name:ident($arg:ident) [$($alias:ident),*] ($ip:ident) : $cmp:expr) => {
        #[pyfunction]
        pub fn $name(py: Python<'_>, input: &Obj<'_>, $arg: &Obj<'_>) -> Out {
            compare_fn(py, input, $arg, $cmp, stringify!($name))
        }
    };
    (reduce $name:ident [] : $f:path) => {
        #[pyfunction]
        #[pyo3(signature = (input, dim=None, keepdim=false, *, dtype=None))]
        pub fn $name(
            py: Python<'_>,
            input: &Obj<'_>,
            dim: Option<&Obj<'_>>,
            keepdim: bool,
            dtype: Option<&Obj<'_>>,
        ) -> Out {
            let t = input_tensor(input, stringify!($name))?;
            reduction(py, &t, $f, dim, keepdim, dtype)
        }
    };
    (clamp $name:ident [$($alias:ident),*] ($ip:ident) : $func:expr) => {
        #[pyfunction]
        #[pyo3(signature = (input, min=None, max=None))]
        pub fn $name(
            py: Python<'_>,
            input: &Obj<'_>,
            min: Option<&Obj<'_>>,
            max: Option<&Obj<'_>>,
        ) -> Out {
            let t = input_tensor(input, stringify!($name))?;
            let bounds = clamp_bounds(min, max)?;
            to_py(
                py,
                run(|| crate::ops::clamp::clamp_with(&t, bounds, $func))?,
            )
        }
    };
    (clamp_side $name:ident($arg:ident) [] ($ip:ident) : $func:expr) => {
        #[pyfunction]
        pub fn $name(py: Python<'_>, input: &Obj<'_>, $arg: &Obj<'_>) -> Out {
            let t = input_tensor(input, stringify!($name))?;
            let bounds = side_bound($arg, $func, stringify!($name))?;
            to_py(
                py,
                run(|| crate::ops::clamp::clamp_with(&t, bounds, $func))?,
            )
        }
    };
}

/// The generated module functions (a module of their own: their names are torch's,
/// and several are also names of the ops modules).
mod functions {
    use super::*;
    op_table!(module_function);
}

// ---------------------------------------------------------------- registration

/// Adds one line's module function and its aliases to `_C`.
macro_rules! register_line {
    ($m:ident $kind:ident $name:ident $(($arg:ident))? [$($alias:ident),*] $(($($ip:tt)*))? : $($rest:tt)*) => {
        let f = wrap_pyfunction!(functions::$name, $m)?;
        $($m.add(stringify!($alias), &f)?;)*
        $m.add_function(f)?;
    };
}

macro_rules! name_or_none {
    () => {
        None
    };
    ($x:ident) => {
        Some(stringify!($x))
    };
}

/// Appends one line's entry `(name, kind, arg or None, in-place name or None, aliases)`.
macro_rules! describe {
    ($v:ident $kind:ident $name:ident $(($arg:ident))? [$($alias:ident),*] $(($ip:ident $($op:tt)*))? : $($rest:tt)*) => {
        $v((
            stringify!($name),
            stringify!($kind),
            name_or_none!($($arg)?),
            name_or_none!($($ip)?),
            vec![$(stringify!($alias)),*],
        ));
    };
}

/// (name, kind, operand name, in-place name, aliases)
type Line = (
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    Vec<&'static str>,
);

/// `_C._op_table()`: the table's lines, for the stub generator and the tests.
#[pyfunction]
fn _op_table(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let mut lines: Vec<Line> = Vec::new();
    let mut add = |line: Line| lines.push(line);
    op_table!(describe add);
    PyList::new(py, lines)
}

/// `ferrograd.special.xlog1py(input, other)` (torch has it in torch.special only).
#[pyfunction]
fn _special_xlog1py(py: Python<'_>, input: &Obj<'_>, other: &Obj<'_>) -> Out {
    to_py(
        py,
        math2_fn(input, other, BinaryMath::Xlog1py, true, "special_xlog1py")?,
    )
}

/// Adds the table's module functions and `_op_table` to `_C`.
pub fn register_all(m: &Bound<'_, PyModule>) -> PyResult<()> {
    op_table!(register_line m);
    m.add_function(wrap_pyfunction!(_special_xlog1py, m)?)?;
    m.add_function(wrap_pyfunction!(_op_table, m)?)?;
    Ok(())
}
