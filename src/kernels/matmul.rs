//! Matrix products on strided operands: the `gemm` crate for f16/f32/f64/complex, a
//! plain loop for integers (bfloat16 products arrive as float32 ones: `ops::linalg`).

use smallvec::smallvec;

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::kernels::traits::Arith;
use crate::layout::Layout;
use crate::storage::Access;
use crate::storage::Data;

/// A matrix operand: base slice plus offset and row/column strides (in elements).
#[derive(Clone, Copy)]
pub struct MatRef {
    pub offset: usize,
    pub rs: usize,
    pub cs: usize,
}

impl MatRef {
    /// The `rows`×`cols` matrix this describes, as a layout of its storage.
    fn layout(self, rows: usize, cols: usize) -> Layout {
        Layout {
            shape: smallvec![rows, cols],
            strides: smallvec![self.rs, self.cs],
            offset: self.offset,
        }
    }
}

/// A buffer shared by the threads that each write a disjoint block of it (the output)
/// or only read it (the operands).
#[derive(Clone, Copy)]
struct OutPtr<T>(*mut T);
// SAFETY: output blocks handed to different threads never overlap (see `blocks`);
// operand pointers are only read.
unsafe impl<T> Send for OutPtr<T> {}
unsafe impl<T> Sync for OutPtr<T> {}

impl<T> OutPtr<T> {
    /// A method (not field access), so closures capture the whole Send wrapper.
    fn get(self) -> *mut T {
        self.0
    }
}

/// A rectangle of one output matrix: rows `r0..r0+rows`, columns `c0..c0+cols`.
#[derive(Clone, Copy)]
struct Block {
    r0: usize,
    rows: usize,
    c0: usize,
    cols: usize,
}

/// Split an m×n product into blocks along its longer side, so each block packs the
/// smaller operand again rather than the larger one. The blocks depend on the sizes
/// only, never on the thread count: gemm picks its kernel and its blocking of k from
/// each call's own m and n, so a thread-count split would change the rounding. Small
/// products stay whole.
fn blocks(m: usize, n: usize, k: usize) -> Vec<Block> {
    let whole = Block {
        r0: 0,
        rows: m,
        c0: 0,
        cols: n,
    };
    if m.saturating_mul(n).saturating_mul(k) < 64 * 64 * 64 {
        return vec![whole];
    }
    // Blocks of equal size (give or take one), as many as `BLOCK_MIN` allows: many
    // small blocks share out evenly over any thread count.
    let split = |len: usize| -> Vec<(usize, usize)> {
        let count = (len / BLOCK_MIN).clamp(1, MAX_BLOCKS);
        let step = len.div_ceil(count);
        (0..len)
            .step_by(step)
            .map(|s| (s, step.min(len - s)))
            .collect()
    };
    if n >= m {
        split(n)
            .into_iter()
            .map(|(c0, cols)| Block { c0, cols, ..whole })
            .collect()
    } else {
        split(m)
            .into_iter()
            .map(|(r0, rows)| Block { r0, rows, ..whole })
            .collect()
    }
}

/// Narrowest block side (unless the side itself is shorter). Each block repacks the
/// other operand, so fewer, wider blocks repack less: 128 against 64 took a 1024³ f32
/// product from 5.8 to 5.55 ms on two threads (2-core Xeon), and still splits the MLP
/// benchmark's products (sides 128, 512, 784) into an even number of blocks.
const BLOCK_MIN: usize = 128;
/// Most blocks per product.
const MAX_BLOCKS: usize = 64;
/// Multiply-adds from which a batched product runs over the team: below, the wake-up
/// costs more than a second thread saves.
const PARALLEL_WORK: u128 = 64 * 64 * 64;

/// out[b] = a[b] @ b[b] for `batch` products of (m×k)·(k×n); `a_mats`/`b_mats` give
/// each operand's storage offset and strides per batch entry (stride 0 broadcasting
/// allowed). Threads take the products' blocks (see `blocks`); every gemm call is
/// single-threaded, which on small core counts scales better than gemm's own threading.
#[allow(clippy::too_many_arguments)]
pub fn batched<T: Element + Arith>(
    a: &Data,
    b: &Data,
    a_mats: &[MatRef],
    b_mats: &[MatRef],
    m: usize,
    k: usize,
    n: usize,
) -> Result<Vec<T>> {
    let batch = a_mats.len();
    let total = crate::shape::checked_numel(&[batch, m, n])?;
    crate::storage::ensure_allocatable(total, std::mem::size_of::<T>())?;
    if k == 0 || m == 0 || n == 0 {
        return Ok(vec![T::zero(); total]);
    }
    // Every element is written below (gemm with read_dst=false, or the plain loop), so
    // the buffer is not zero-filled first.
    let mut out: Vec<T> = Vec::with_capacity(total);
    let gemm_native = matches!(
        T::DTYPE,
        DType::F16 | DType::F32 | DType::F64 | DType::C64 | DType::C128
    );
    let plan = blocks(m, n, k);
    // Each operand matrix as a layout, checked against its storage (access note), all
    // before any product starts.
    let mut operands = Vec::with_capacity(batch);
    for (am, bm) in a_mats.iter().zip(b_mats) {
        let sa = Access::<T>::within(a, am.layout(m, k))?;
        let sb = Access::<T>::within(b, bm.layout(k, n))?;
        operands.push((OutPtr(sa.base_ptr()), OutPtr(sb.base_ptr())));
    }
    let base = OutPtr(out.as_mut_ptr());
    let run = |bi: usize, blk: &Block| {
        let (am, bm) = (a_mats[bi], b_mats[bi]);
        let (pa, pb) = operands[bi];
        let dst = OutPtr(base.get().wrapping_add(bi * m * n));
        // SAFETY: the block lies inside product bi's m×n output, disjoint from the
        // blocks other tasks write; operand reads stay inside the m×k and k×n layouts
        // checked above, through raw pointers only (access note).
        unsafe {
            let out_blk = dst.get().add(blk.r0 * n + blk.c0);
            let a_blk = pa.get().add(am.offset + blk.r0 * am.rs) as *const T;
            let b_blk = pb.get().add(bm.offset + blk.c0 * bm.cs) as *const T;
            if gemm_native {
                gemm::gemm(
                    blk.rows,
                    blk.cols,
                    k,
                    out_blk,
                    1,
                    n as isize,
                    false,
                    a_blk,
                    am.cs as isize,
                    am.rs as isize,
                    b_blk,
                    bm.cs as isize,
                    bm.rs as isize,
                    T::zero(),
                    T::one(),
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
            } else {
                for i in 0..blk.rows {
                    for j in 0..blk.cols {
                        let mut acc = T::zero();
                        for p in 0..k {
                            acc = acc
                                + *a_blk.add(i * am.rs + p * am.cs)
                                    * *b_blk.add(p * bm.rs + j * bm.cs);
                        }
                        *out_blk.add(i * n + j) = acc;
                    }
                }
            }
        }
    };
    // One team job for all blocks of all products: a batch of small products (each one
    // block) spreads over the threads too, and the team wakes once, not per product.
    let tasks = batch * plan.len();
    let work = (batch as u128) * (m as u128) * (n as u128) * (k as u128);
    if tasks > 1 && work >= PARALLEL_WORK {
        crate::kernels::par_for(tasks, |t| run(t / plan.len(), &plan[t % plan.len()]));
    } else {
        (0..tasks).for_each(|t| run(t / plan.len(), &plan[t % plan.len()]));
    }
    // SAFETY: the blocks of every product cover all `total` elements, each written above.
    unsafe { out.set_len(total) };
    Ok(out)
}
