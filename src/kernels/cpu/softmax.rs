//! softmax and log_softmax along one dim on the CPU, and their backward: the rows along
//! that dim, made contiguous when they are not, through the fused row kernels of
//! kernels/vmath.

use std::mem::MaybeUninit;

use smallvec::SmallVec;

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::kernels::reduce::read_as;
use crate::kernels::vmath::{softmax_backward_rows, softmax_rows, Elem};
use crate::kernels::{cast_data, data_from};
use crate::layout::Layout;
use crate::storage::Data;

/// softmax (log_softmax, `log`) of `x` along `dim`.
pub fn softmax(x: &Data, dim: usize, log: bool) -> Result<Data> {
    along_rows(&[x], dim, &Forward { log })
}

/// The gradient of softmax's (log_softmax's) input from `grad`, the gradient of its
/// output `out` (same shape and dtype), along `dim`.
pub fn softmax_backward(grad: &Data, out: &Data, dim: usize, log: bool) -> Result<Data> {
    along_rows(&[grad, out], dim, &Backward { log })
}

/// A kernel over contiguous rows of `len`, writing every element of `dst`.
trait RowKernel {
    fn run<E: Elem>(&self, inputs: &[&[E]], dst: &mut [MaybeUninit<E>], len: usize);
}

struct Forward {
    log: bool,
}

impl RowKernel for Forward {
    fn run<E: Elem>(&self, inputs: &[&[E]], dst: &mut [MaybeUninit<E>], len: usize) {
        softmax_rows(inputs[0], dst, len, self.log);
    }
}

struct Backward {
    log: bool,
}

impl RowKernel for Backward {
    fn run<E: Elem>(&self, inputs: &[&[E]], dst: &mut [MaybeUninit<E>], len: usize) {
        softmax_backward_rows(inputs[0], inputs[1], dst, len, self.log);
    }
}

/// `kernel` over the rows along `dim` of inputs of one floating dtype and shape, the
/// result laid back in the inputs' order of dims, contiguous. Half types compute in
/// float32 and are stored narrow, as torch on CPU.
fn along_rows(inputs: &[&Data], dim: usize, kernel: &impl RowKernel) -> Result<Data> {
    let dtype = inputs[0].dtype();
    let shape = &inputs[0].layout().shape;
    let nd = shape.len();
    // The softmax dim last: then each row is one softmax.
    let perm: SmallVec<[i64; 6]> = (0..nd)
        .filter(|&d| d != dim)
        .chain([dim])
        .map(|d| d as i64)
        .collect();
    let moved_shape: SmallVec<[usize; 6]> = perm.iter().map(|&d| shape[d as usize]).collect();
    let layouts = inputs
        .iter()
        .map(|x| x.layout().permute(&perm))
        .collect::<Result<Vec<Layout>>>()?;
    let len = shape[dim];
    let out = match dtype {
        DType::F64 => data_from(in_rows::<f64>(inputs, &layouts, len, kernel), &moved_shape),
        DType::F32 => data_from(in_rows::<f32>(inputs, &layouts, len, kernel), &moved_shape),
        DType::F16 | DType::BF16 => cast_data(
            &data_from(in_rows::<f32>(inputs, &layouts, len, kernel), &moved_shape),
            dtype,
        ),
        d => return Err(crate::dtype::unsupported("softmax_kernel_impl", d)),
    };
    if dim + 1 == nd {
        return Ok(out);
    }
    // Back to the inputs' order of dims, contiguous.
    let mut inverse: SmallVec<[i64; 6]> = SmallVec::from_elem(0, nd);
    for (i, &p) in perm.iter().enumerate() {
        inverse[p as usize] = i as i64;
    }
    let back: Layout = out.layout().permute(&inverse)?;
    Ok(cast_data(&out.with_layout(back)?, dtype))
}

/// The inputs read as `E` in the row order of `layouts`, and `kernel` over them.
fn in_rows<E: Elem + Element>(
    inputs: &[&Data],
    layouts: &[Layout],
    len: usize,
    kernel: &impl RowKernel,
) -> Vec<E> {
    // SAFETY: read-only; dropped before returning; the output is a fresh Vec.
    let sources: Vec<_> = inputs
        .iter()
        .zip(layouts)
        .map(|(x, l)| unsafe { read_as::<E>(x, l.clone()) })
        .collect();
    let views: Vec<&[E]> = sources.iter().map(|s| &s[..]).collect();
    let n = views[0].len();
    let mut out = Vec::with_capacity(n);
    kernel.run(&views, &mut out.spare_capacity_mut()[..n], len);
    // SAFETY: the row kernels write each of the n elements (whole rows of len > 0; n is
    // 0 when len is).
    unsafe { out.set_len(n) };
    out
}
