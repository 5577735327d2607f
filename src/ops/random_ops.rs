//! Ops that draw random numbers from tensor arguments or into a tensor: `normal` with a
//! tensor mean or std, `bernoulli`, and the in-place fills `normal_`, `uniform_`,
//! `exponential_`, `random_` and `bernoulli_`. Their gradients are zero, as torch's: a
//! draw is not reparameterized (torch.distributions writes `mean + std * eps` itself).

use smallvec::{smallvec, SmallVec};

use crate::dtype::{Category, DType, Scalar};
use crate::error::{Error, Result};
use crate::kernels::random::RngHandle;
use crate::ops::binary::{
    add, add_scalar, compare, compare_scalar, div_scalar, mul, mul_scalar, Cmp,
};
use crate::ops::creation::{rand_from, randint_from, randn_from, zeros_like};
use crate::ops::device::any_true;
use crate::ops::rules::composite;
use crate::ops::unary::{log1p, neg, to_dtype};
use crate::ops::view::expand;
use crate::ops::{
    apply1, no_batch_rule, BatchCtx, Batched, Grads, JvpCtx, Op, Outputs, SaveRef, Tangents, VjpCtx,
};
use crate::shape::{broadcast_shapes, Dims};
use crate::tensor::Tensor;

/// What an op draws. The tensor arguments are its inputs, in the order named.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Draw {
    /// `normal(mean, std)` with at least one tensor (NormalBackward1/2/3): a `None` is
    /// an input (mean first).
    Normal { mean: Option<f64>, std: Option<f64> },
    /// `bernoulli(p)` (BernoulliBackward0): 1 with the input's probability.
    Bernoulli,
    /// `x.normal_(mean, std)` (NormalBackward0).
    NormalFill { mean: f64, std: f64 },
    /// `x.uniform_(from, to)` (UniformBackward0).
    UniformFill { from: f64, to: f64 },
    /// `x.exponential_(lambd)` (ExponentialBackward0).
    ExponentialFill { lambd: f64 },
    /// `x.random_(from, to)`: integers on [from, to); `overload` is torch's node
    /// suffix (0: from and to, 1: to only, 2: no bounds).
    RandomFill { from: i64, to: i64, overload: u8 },
    /// `x.bernoulli_(p)`: a number (BernoulliBackward2) or the tensor input 1
    /// (BernoulliBackward1).
    BernoulliFill { p: Option<f64> },
}

/// A draw from `gen`; inputs `[x or mean/std/p tensors...]`.
#[derive(Clone)]
pub struct RandomDraw {
    pub draw: Draw,
    pub gen: RngHandle,
}

impl Op for RandomDraw {
    fn name(&self) -> &'static str {
        match self.draw {
            Draw::Normal {
                mean: None,
                std: Some(_),
            } => "NormalBackward1",
            Draw::Normal {
                mean: Some(_),
                std: None,
            } => "NormalBackward2",
            Draw::Normal { .. } => "NormalBackward3",
            Draw::Bernoulli => "BernoulliBackward0",
            Draw::NormalFill { .. } => "NormalBackward0",
            Draw::UniformFill { .. } => "UniformBackward0",
            Draw::ExponentialFill { .. } => "ExponentialBackward0",
            Draw::RandomFill { overload: 1, .. } => "RandomBackward1",
            Draw::RandomFill { overload: 2, .. } => "RandomBackward2",
            Draw::RandomFill { .. } => "RandomBackward0",
            Draw::BernoulliFill { p: Some(_) } => "BernoulliBackward2",
            Draw::BernoulliFill { p: None } => "BernoulliBackward1",
        }
    }
    fn forward(&self, inputs: &[Tensor]) -> Result<Outputs> {
        composite(inputs, |inputs| Ok(smallvec![self.sample(inputs)?]))
    }
    fn save(&self, _needs: &[bool]) -> SmallVec<[Option<SaveRef>; 2]> {
        smallvec![]
    }
    /// Zero for every input (see the module note).
    fn vjp(&self, ctx: &VjpCtx) -> Result<Grads> {
        let g = ctx.grad(0)?;
        (0..ctx.inputs.len())
            .map(|i| {
                if !ctx.needs(i) {
                    return Ok(None);
                }
                let zero = Tensor::zeros(&ctx.inputs[i].shape, g.dtype())?;
                Ok(Some(zero))
            })
            .collect()
    }
    fn jvp(&self, ctx: &JvpCtx) -> Result<Tangents> {
        Ok(smallvec![Some(zeros_like(&ctx.outputs[0])?)])
    }
    fn batch(&self, _ctx: &BatchCtx) -> Result<Batched> {
        Err(no_batch_rule(self.name()))
    }
}

impl RandomDraw {
    fn sample(&self, inputs: &[Tensor]) -> Result<Tensor> {
        let gen = &self.gen;
        match self.draw {
            Draw::Normal { mean, std } => {
                let mut tensors = inputs.iter();
                let mean_t = if mean.is_none() { tensors.next() } else { None };
                let std_t = if std.is_none() { tensors.next() } else { None };
                let first = mean_t.or(std_t);
                let first = first.ok_or_else(|| Error::runtime("normal: no tensor argument"))?;
                let shape = match (mean_t, std_t) {
                    (Some(m), Some(s)) => broadcast_shapes(&m.shape(), &s.shape())?,
                    _ => Dims::from_slice(&first.shape()),
                };
                if let Some(s) = std_t {
                    if any_true(&compare_scalar(s, Scalar::Float(0.0), Cmp::Lt)?)? {
                        return Err(Error::runtime("normal expects all elements of std >= 0.0"));
                    }
                }
                check_std(std)?;
                let eps = randn_from(&shape, first.dtype(), gen)?;
                let scaled = match (std_t, std) {
                    (Some(s), _) => mul(&eps, s)?,
                    (None, Some(s)) => mul_scalar(&eps, Scalar::Float(s))?,
                    (None, None) => eps,
                };
                match (mean_t, mean) {
                    (Some(m), _) => add(&scaled, m),
                    (None, Some(m)) => add_scalar(&scaled, Scalar::Float(m)),
                    (None, None) => Ok(scaled),
                }
            }
            Draw::Bernoulli => {
                let p = &inputs[0];
                check_float(p.dtype(), "bernoulli_tensor_cpu_p_")?;
                let outside = compare_scalar(p, Scalar::Float(0.0), Cmp::Lt)?;
                let above = compare_scalar(p, Scalar::Float(1.0), Cmp::Gt)?;
                if any_true(&outside)? || any_true(&above)? {
                    return Err(Error::runtime(
                        "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)",
                    ));
                }
                below(p, &rand_from(&p.shape(), p.dtype(), gen)?)
            }
            Draw::NormalFill { mean, std } => {
                let (shape, dtype) = shape_dtype(&inputs[0]);
                check_float(dtype, "normal_kernel_cpu")?;
                check_std(Some(std))?;
                let eps = randn_from(&shape, dtype, gen)?;
                add_scalar(&mul_scalar(&eps, Scalar::Float(std))?, Scalar::Float(mean))
            }
            Draw::UniformFill { from, to } => {
                let (shape, dtype) = shape_dtype(&inputs[0]);
                check_float(dtype, "check_uniform_bounds")?;
                if from > to {
                    return Err(Error::runtime(format!(
                        "uniform_ expects to return a [from, to) range, but found from={from} > to={to}"
                    )));
                }
                let u = rand_from(&shape, dtype, gen)?;
                add_scalar(
                    &mul_scalar(&u, Scalar::Float(to - from))?,
                    Scalar::Float(from),
                )
            }
            Draw::ExponentialFill { lambd } => {
                let (shape, dtype) = shape_dtype(&inputs[0]);
                if dtype.category() < Category::Floating || dtype.is_complex() {
                    return Err(Error::runtime(format!(
                        "Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified {}",
                        dtype.scalar_type_name()
                    )));
                }
                if lambd <= 0.0 {
                    return Err(Error::runtime(format!(
                        "exponential_ expects lambda > 0.0, but found lambda={lambd}"
                    )));
                }
                // -log(1 - u) / lambda, with u on [0, 1).
                let u = rand_from(&shape, dtype, gen)?;
                let tail = log1p(&neg(&u)?)?;
                div_scalar(&neg(&tail)?, Scalar::Float(lambd))
            }
            Draw::RandomFill { from, to, .. } => {
                let (shape, dtype) = shape_dtype(&inputs[0]);
                randint_from(from, to, &shape, dtype, gen)
            }
            Draw::BernoulliFill { p } => {
                let (shape, dtype) = shape_dtype(&inputs[0]);
                let u = rand_from(&shape, DType::F64, gen)?;
                let hit = match p {
                    Some(p) => {
                        if !(0.0..=1.0).contains(&p) {
                            return Err(Error::runtime(format!(
                                "bernoulli_ expects p to be in [0, 1], but got p={p}"
                            )));
                        }
                        compare_scalar(&u, Scalar::Float(p), Cmp::Lt)?
                    }
                    None => {
                        let p = expand(&to_dtype(&inputs[1], DType::F64)?, &shape)?;
                        compare(&u, &p, Cmp::Lt)?
                    }
                };
                to_dtype(&hit, dtype)
            }
        }
    }
}

fn shape_dtype(x: &Tensor) -> (Dims, DType) {
    (Dims::from_slice(&x.shape()), x.dtype())
}

/// 1 where `u < p`, else 0, in p's dtype.
fn below(p: &Tensor, u: &Tensor) -> Result<Tensor> {
    to_dtype(&compare(u, p, Cmp::Lt)?, p.dtype())
}

fn check_std(std: Option<f64>) -> Result<()> {
    match std {
        Some(s) if s < 0.0 => Err(Error::runtime(format!(
            "normal expects std >= 0.0, but found std {s}"
        ))),
        _ => Ok(()),
    }
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

/// `normal(mean, std)` with a tensor mean and/or std (the numbers given as `Some`).
pub fn normal(
    mean: (Option<&Tensor>, f64),
    std: (Option<&Tensor>, f64),
    gen: &RngHandle,
) -> Result<Tensor> {
    let inputs: Vec<Tensor> = [mean.0, std.0].into_iter().flatten().cloned().collect();
    let draw = Draw::Normal {
        mean: mean.0.is_none().then_some(mean.1),
        std: std.0.is_none().then_some(std.1),
    };
    let gen = gen.clone();
    apply1(RandomDraw { draw, gen }, &inputs)
}

/// `bernoulli(p)`.
pub fn bernoulli(p: &Tensor, gen: &RngHandle) -> Result<Tensor> {
    let gen = gen.clone();
    apply1(
        RandomDraw {
            draw: Draw::Bernoulli,
            gen,
        },
        std::slice::from_ref(p),
    )
}

/// `x.normal_(...)`, `x.uniform_(...)`, ... : `draw` written into `x` (plus the tensor
/// probability of `bernoulli_`).
pub fn fill_(x: &Tensor, draw: Draw, p: Option<&Tensor>, gen: &RngHandle) -> Result<()> {
    let mut inputs = vec![x.clone()];
    inputs.extend(p.cloned());
    let gen = gen.clone();
    crate::ops::inplace::apply_inplace(RandomDraw { draw, gen }, &inputs)
}
