//! Complex kernels for the vector-kernel functions that num-complex lacks: expm1 and
//! log1p, written to keep their accuracy near 0 (where exp(z) - 1 and ln(1 + z) cancel);
//! and logaddexp of complex numbers (torch's formula: the operand with the larger real
//! part taken out, log1p of the exp of the rest; torch has no complex logaddexp2).

use num_complex::{Complex32, Complex64};

use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::elementwise::{map, zip};
use crate::kernels::kinds::{BinaryMath, Math, Unary};
use crate::storage::Data;

macro_rules! complex_fns {
    ($expm1:ident, $log1p:ident, $c:ty, $f:ty) => {
        /// exp(z) - 1 = (expm1(x) cos y - 2 sin^2(y/2)) + i exp(x) sin y.
        fn $expm1(z: $c) -> $c {
            let half = (z.im / 2.0).sin();
            <$c>::new(
                z.re.exp_m1() * z.im.cos() - 2.0 * half * half,
                z.re.exp() * z.im.sin(),
            )
        }
        /// ln(1 + z) = ln|1 + z| + i arg(1 + z), with |1 + z|^2 - 1 = x (2 + x) + y^2
        /// through log1p.
        fn $log1p(z: $c) -> $c {
            let (x, y) = (z.re, z.im);
            let big = x.abs().max(y.abs()) > 1.0e4 as $f;
            let re = if big {
                (1.0 + x).hypot(y).ln()
            } else {
                0.5 * (x * (2.0 + x) + y * y).ln_1p()
            };
            <$c>::new(re, y.atan2(1.0 + x))
        }
    };
}
complex_fns!(expm1_32, log1p_32, Complex32, f32);
complex_fns!(expm1_64, log1p_64, Complex64, f64);

macro_rules! complex_logaddexp {
    ($name:ident, $log1p:ident, $c:ty, $f:ty) => {
        /// ln(e^x + e^y): the operand with the larger real part plus log1p of the exp of
        /// the difference. NaN in, NaN out; two equal infinite real parts give that
        /// operand back.
        fn $name(x: $c, y: $c) -> $c {
            if x.re.is_nan() || x.im.is_nan() || y.re.is_nan() || y.im.is_nan() {
                return <$c>::new(<$f>::NAN, <$f>::NAN);
            }
            let (big, small) = if x.re >= y.re { (x, y) } else { (y, x) };
            if big.re.is_infinite() && big.re == small.re {
                return big;
            }
            big + $log1p((small - big).exp())
        }
    };
}
complex_logaddexp!(logaddexp_32, log1p_32, Complex32, f32);
complex_logaddexp!(logaddexp_64, log1p_64, Complex64, f64);

/// logaddexp of two complex tensors (broadcast by `zip`).
pub fn logaddexp(a: &Data, b: &Data, dtype: DType) -> Result<Data> {
    match dtype {
        DType::C64 => zip::<Complex32, Complex32>(a, b, logaddexp_32),
        DType::C128 => zip::<Complex64, Complex64>(a, b, logaddexp_64),
        d => Err(crate::dtype::unsupported(
            BinaryMath::Logaddexp.kernel_name(),
            d,
        )),
    }
}
/// `m` over a complex tensor (`dtype` is complex64 or complex128), where this module has it.
pub fn math(x: &Data, m: Math, dtype: DType) -> Result<Data> {
    Ok(match (m, dtype) {
        (Math::Expm1, DType::C64) => map::<Complex32, Complex32>(x, expm1_32),
        (Math::Expm1, DType::C128) => map::<Complex64, Complex64>(x, expm1_64),
        (Math::Log1p, DType::C64) => map::<Complex32, Complex32>(x, log1p_32),
        (Math::Log1p, DType::C128) => map::<Complex64, Complex64>(x, log1p_64),
        (m, d) => return Err(crate::dtype::unsupported(Unary::Math(m).name(), d)),
    })
}
