//! Dense decompositions on the CPU with faer (sequential kernels): each matrix of a
//! batch is factored on its own, and large batches are split over the intra-op team; a
//! single large matrix uses the team too (see Note: one large matrix on several
//! threads). Matrices are read from the row-major input as views and written back
//! row-major.
//!
//! # Note: one large matrix on several threads
//! torch's LAPACK factors one large matrix on every core. faer can run its own kernels
//! over rayon, but measured on 2 cores (n = 256, float64) that made LU, Cholesky and QR
//! slower than sequential (every blocked update wakes the pool); eigh and svd gained 15%
//! and 6% with the pool's threads held spinning through the decomposition
//! (`spindle::with_lock`), but became five times slower than sequential while another
//! process (a build) held a core. So faer stays sequential, and the parts of a single
//! matrix's work that split into independent pieces run over the intra-op team, which
//! degrades to the calling thread alone when its members are busy: LU solves, `inv`
//! (`U^-1 L^-1`, as torch's solve of the identity) and QR's Q in blocks of `COL_BLOCK`
//! columns (of B, of the identity), each block sequentially. The LU itself of a matrix
//! of order `LU_BLOCKED_FROM` or more is our own right-looking blocked one
//! (`blocked_lu`): faer factors each panel of `LU_PANEL` columns sequentially, and the
//! update of the columns on its right runs over the team in blocks of `LU_BLOCK`
//! columns, with the next panel updated and factored first in one of those tasks (a
//! look-ahead), so the team wakes once per panel rather than at every step of faer's
//! recursion (n = 256, float64, 2 cores: det 0.54 -> 0.44 ms). The pieces are fixed by
//! the sizes alone, so the results never depend on the thread count (checked bit for bit
//! at 1 and 2 threads in tests/test_linalg_speed.py).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::lu::partial_pivoting as plu;
use faer::linalg::solvers::{ColPivQr, Llt, Qr, SelfAdjointEigen, SolveLstsqCore, Svd};
use faer::perm::PermRef;
use faer::{Conj, Mat, MatMut, MatRef, Par, Side};
use num_complex::{Complex32, Complex64};

use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::kernels::kinds::Decomp;
use crate::kernels::{data_from, gather_data, par_map};
use crate::storage::Data;

/// The element types faer factors, with their real counterparts.
trait Field: Element + faer::traits::ComplexField {
    type Re: Element;
}
impl Field for f32 {
    type Re = f32;
}
impl Field for f64 {
    type Re = f64;
}
impl Field for Complex32 {
    type Re = f32;
}
impl Field for Complex64 {
    type Re = f64;
}

/// Matrix `i` of a row-major batch of `m × n` matrices, as a view (faer's solvers copy
/// their input into their own column-major storage anyway).
fn matrix<T: Field>(v: &[T], i: usize, m: usize, n: usize) -> MatRef<'_, T> {
    let base = i * m * n;
    MatRef::from_row_major_slice(&v[base..base + m * n], m, n)
}

fn write_row_major<T: Field>(out: &mut [T], a: MatRef<'_, T>) {
    MatMut::from_row_major_slice_mut(out, a.nrows(), a.ncols()).copy_from(a);
}

/// A square matrix's LU factorization with partial pivoting, kept in one column-major
/// `n × n` buffer (L's strict lower part, its unit diagonal implied, and U's upper
/// triangle; faer's `PartialPivLu` copies them apart), with the row permutation: row `i`
/// of `P A` is row `fwd[i]` of `A`, and `bwd` is its inverse.
struct Lu<T> {
    lu: Vec<T>,
    n: usize,
    fwd: Vec<usize>,
    bwd: Vec<usize>,
}

/// Order from which one matrix's LU is blocked over the team (see Note: one large
/// matrix on several threads); below it one sequential faer call is faster than the
/// team's wake-ups are worth.
const LU_BLOCKED_FROM: usize = 128;
/// Columns per panel of the blocked LU. Fixed, like `LU_BLOCK`, so that the results
/// depend on the sizes only.
const LU_PANEL: usize = 64;
/// Trailing columns per task of the blocked LU's update (a divisor of `LU_PANEL`, so
/// that a later panel starts on a block's edge).
const LU_BLOCK: usize = 32;

/// One task of a blocked LU step: whole columns of the column-major buffer.
enum LuPart<'a, T> {
    /// The next panel: updated, then factored at once (the look-ahead).
    Next(&'a mut [T]),
    /// Trailing columns: updated.
    Block(&'a mut [T]),
    /// The factored columns left of the panel (L's): the panel's row swaps applied.
    Left(&'a mut [T]),
}

impl<T: Field> Lu<T> {
    fn new(a: MatRef<'_, T>) -> Self {
        let n = a.nrows();
        let mut lu = vec![T::zero(); n * n];
        MatMut::from_column_major_slice_mut(&mut lu, n, n).copy_from(a);
        let (mut fwd, mut bwd) = (vec![0usize; n], vec![0usize; n]);
        if n < LU_BLOCKED_FROM {
            let par = Par::Seq;
            let req = plu::factor::lu_in_place_scratch::<usize, T>(n, n, par, Default::default());
            let mut buffer = MemBuffer::new(req);
            plu::factor::lu_in_place(
                MatMut::from_column_major_slice_mut(&mut lu, n, n),
                &mut fwd,
                &mut bwd,
                par,
                MemStack::new(&mut buffer),
                Default::default(),
            );
        } else {
            fwd = blocked_lu(&mut lu, n);
            for (i, &f) in fwd.iter().enumerate() {
                bwd[f] = i;
            }
        }
        Lu { lu, n, fwd, bwd }
    }
    fn lu(&self) -> MatRef<'_, T> {
        MatRef::from_column_major_slice(&self.lu, self.n, self.n)
    }
    fn perm(&self) -> PermRef<'_, usize> {
        PermRef::new_checked(&self.fwd, &self.bwd, self.fwd.len())
    }
    /// `A^-1 = U^-1 L^-1 P`, written row-major into `dst`. `U^-1 L^-1` is computed in
    /// blocks of `COL_BLOCK` columns over the team: a block of `L^-1` (zero above the
    /// block's first column) from the trailing part of L, then `U^-1` applied to it.
    fn inverse_into(&self, dst: &mut [T]) {
        use faer::linalg::triangular_solve as ts;
        let n = self.n;
        let lu = self.lu();
        let parts = column_blocks(n, |c0, w| {
            let mut x = Mat::zeros(n, w);
            for j in 0..w {
                x[(c0 + j, j)] = T::one();
            }
            let tail = lu.submatrix(c0, c0, n - c0, n - c0);
            ts::solve_unit_lower_triangular_in_place(
                tail,
                x.as_mut().subrows_mut(c0, n - c0),
                Par::Seq,
            );
            ts::solve_upper_triangular_in_place(lu, x.as_mut(), Par::Seq);
            x
        });
        let mut x = Mat::zeros(n, n);
        for (b, part) in parts.iter().enumerate() {
            x.as_mut()
                .subcols_mut(b * COL_BLOCK, part.ncols())
                .copy_from(part);
        }
        let out = MatMut::from_row_major_slice_mut(dst, n, n);
        faer::perm::permute_cols(out, x.as_ref(), self.perm().inverse());
    }
    /// `A^-1 B` in place of `B`.
    fn solve_in_place(&self, b: MatMut<'_, T>) {
        let par = Par::Seq;
        let (n, k) = (self.n, b.ncols());
        let stack = &mut MemBuffer::new(plu::solve::solve_in_place_scratch::<usize, T>(n, k, par));
        let lu = self.lu();
        let stack = MemStack::new(stack);
        plu::solve::solve_in_place_with_conj(lu, lu, self.perm(), Conj::No, b, par, stack);
    }
}

/// The LU factorization with partial pivoting of the column-major `n × n` matrix in
/// `lu`, in place, right-looking in panels of `LU_PANEL` columns (see Note: one large
/// matrix on several threads); returns the row permutation (`Lu::fwd`).
///
/// Each panel's rows from its diagonal down are factored by faer, sequentially: as they
/// are all the rows left, its pivots (the largest |a| of each column) are the unblocked
/// algorithm's, LAPACK's. One team job per panel then updates the columns on its right
/// with it (row swaps, `U12 = L11^-1 A12`, `A22 -= L21 U12`), the next panel's columns
/// first, factored in the same task as soon as they are updated, so that the next
/// panel's sequential factorization overlaps this update of the rest instead of waiting
/// for all of it; and the swaps reach the L columns on the left. Every task's work is
/// fixed by `n` alone, so the bits do not depend on the thread count or timing.
fn blocked_lu<T: Field>(lu: &mut [T], n: usize) -> Vec<usize> {
    let mut fwd: Vec<usize> = (0..n).collect();
    let first = LU_PANEL.min(n);
    let mut swaps = factor_panel(&mut lu[..first * n], n, 0, first);
    let mut k = 0;
    loop {
        let w = LU_PANEL.min(n - k);
        apply_swaps(&mut fwd, n, k, &swaps);
        let (left, rest) = lu.split_at_mut(k * n);
        let (panel, trailing) = rest.split_at_mut(w * n);
        let next_w = LU_PANEL.min(n - k - w);
        let (next, blocks) = trailing.split_at_mut(next_w * n);
        let mut parts = Vec::new();
        if next_w > 0 {
            parts.push(LuPart::Next(next));
        }
        parts.extend(blocks.chunks_mut(LU_BLOCK * n).map(LuPart::Block));
        if k > 0 {
            parts.push(LuPart::Left(left));
        }
        let (panel, swaps_now) = (&*panel, &swaps);
        let factored = crate::kernels::par_map_owned(parts, |_, part| match part {
            LuPart::Next(cols) => {
                update_columns(cols, panel, n, k, w, swaps_now);
                Some(factor_panel(cols, n, k + w, next_w))
            }
            LuPart::Block(cols) => {
                update_columns(cols, panel, n, k, w, swaps_now);
                None
            }
            LuPart::Left(cols) => {
                apply_swaps(cols, n, k, swaps_now);
                None
            }
        });
        match factored.into_iter().flatten().next() {
            Some(next_swaps) => swaps = next_swaps,
            None => return fwd,
        }
        k += w;
    }
}

/// Factor rows `k..n` of the `w` columns in `cols` (column-major, `n` rows each) in
/// place with faer; returns the row swaps it made, LAPACK's ipiv: row `k + i` was
/// swapped with row `swaps[i]` (`>= k + i`), for `i = 0, 1, ...` in turn.
fn factor_panel<T: Field>(cols: &mut [T], n: usize, k: usize, w: usize) -> Vec<usize> {
    let m = n - k;
    let panel = MatMut::from_column_major_slice_mut(cols, n, w).subrows_mut(k, m);
    let (mut perm, mut inv) = (vec![0usize; m], vec![0usize; m]);
    let req = plu::factor::lu_in_place_scratch::<usize, T>(m, w, Par::Seq, Default::default());
    let mut buffer = MemBuffer::new(req);
    let stack = MemStack::new(&mut buffer);
    plu::factor::lu_in_place(
        panel,
        &mut perm,
        &mut inv,
        Par::Seq,
        stack,
        Default::default(),
    );
    // faer returns the permutation (row `i` of the result is row `perm[i]`), which its
    // swaps built; w swaps applied to each trailing column cost less than permuting all
    // its m rows. Replay: at step i, bring row perm[i] (from where it is now) to i.
    let (mut at, mut row_at): (Vec<usize>, Vec<usize>) = ((0..m).collect(), (0..m).collect());
    (0..w.min(m))
        .map(|i| {
            let j = at[perm[i]];
            row_at.swap(i, j);
            at[row_at[i]] = i;
            at[row_at[j]] = j;
            k + j
        })
        .collect()
}

/// The panel's row swaps (rows `k + i` and `swaps[i]`) applied to each `n`-long column
/// of `cols`.
fn apply_swaps<T>(cols: &mut [T], n: usize, k: usize, swaps: &[usize]) {
    for col in cols.chunks_mut(n) {
        for (i, &j) in swaps.iter().enumerate() {
            col.swap(k + i, j);
        }
    }
}

/// One trailing block's update by the factored panel (the `w` columns from `k` in
/// `panel`): its swaps, then `U12 = L11^-1 A12` in rows `k..k + w` and `A22 -= L21 U12`
/// below them.
fn update_columns<T: Field>(
    cols: &mut [T],
    panel: &[T],
    n: usize,
    k: usize,
    w: usize,
    swaps: &[usize],
) {
    apply_swaps(cols, n, k, swaps);
    let c = cols.len() / n;
    let b = MatMut::from_column_major_slice_mut(cols, n, c).subrows_mut(k, n - k);
    let (mut top, bottom) = b.split_at_row_mut(w);
    let p = MatRef::from_column_major_slice(panel, n, w);
    faer::linalg::triangular_solve::solve_unit_lower_triangular_in_place(
        p.submatrix(k, 0, w, w),
        top.as_mut(),
        Par::Seq,
    );
    faer::linalg::matmul::matmul(
        bottom,
        faer::Accum::Add,
        p.submatrix(k + w, 0, n - k - w, w),
        top.as_ref(),
        T::zero() - T::one(),
        Par::Seq,
    );
}

/// `f(i, chunk)` for each matrix `i` of the batch and its chunk of `out` (`out.len() /
/// batch` long), over the pool when the work is large; the results in order.
fn per_chunk<T: Send, R: Send>(
    out: &mut [T],
    batch: usize,
    work: usize,
    f: impl Fn(usize, &mut [T]) -> R + Sync + Send,
) -> Vec<R> {
    if out.is_empty() {
        return (0..batch).map(|i| f(i, &mut [])).collect();
    }
    let len = out.len() / batch;
    if batch > 1 && batch.saturating_mul(work) >= 1 << 15 {
        crate::kernels::par_chunks_map(out, len, f)
    } else {
        out.chunks_mut(len)
            .enumerate()
            .map(|(i, c)| f(i, c))
            .collect()
    }
}

/// Run `f` on every matrix index of the batch, over the pool when the work is large.
fn per_matrix<R: Send>(batch: usize, work: usize, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
    if batch > 1 && batch.saturating_mul(work) >= 1 << 15 {
        par_map(batch, f)
    } else {
        (0..batch).map(f).collect()
    }
}

/// The batch size and the trailing `(m, n)` of a batch of matrices.
fn dims(x: &Data) -> Result<(usize, usize, usize)> {
    let shape = &x.layout().shape;
    if shape.len() < 2 {
        return Err(Error::runtime("internal error: decompose needs matrices"));
    }
    let (m, n) = (shape[shape.len() - 2], shape[shape.len() - 1]);
    Ok((shape[..shape.len() - 2].iter().product(), m, n))
}

fn batch_shape(x: &Data) -> Vec<usize> {
    let shape = &x.layout().shape;
    shape[..shape.len() - 2].to_vec()
}

/// Columns per task where a result is computed column block by column block (solves,
/// Q): fixed, so that the results depend on the sizes only, never on the thread count.
const COL_BLOCK: usize = 64;

/// A result of `k` columns as `block(c0, w)` computes them (its columns `c0 .. c0 + w`),
/// in blocks of `COL_BLOCK` columns, over the team when there are several.
fn column_blocks<T: Field>(k: usize, block: impl Fn(usize, usize) -> Mat<T> + Sync) -> Vec<Mat<T>> {
    let blocks = k.div_ceil(COL_BLOCK);
    let one = |b: usize| block(b * COL_BLOCK, COL_BLOCK.min(k - b * COL_BLOCK));
    if blocks > 1 {
        crate::kernels::par_map(blocks, one)
    } else {
        (0..blocks).map(one).collect()
    }
}

/// The column blocks of an `m × k` matrix written row-major into `dst`.
fn write_blocks_row_major<T: Field>(dst: &mut [T], m: usize, k: usize, parts: &[Mat<T>]) {
    let mut out = MatMut::from_row_major_slice_mut(dst, m, k);
    for (b, part) in parts.iter().enumerate() {
        out.as_mut()
            .subcols_mut(b * COL_BLOCK, part.ncols())
            .copy_from(part);
    }
}

/// Columns `c0 .. c0 + w` of the `m × m` identity.
fn identity_cols<T: Field>(m: usize, c0: usize, w: usize) -> Mat<T> {
    Mat::from_fn(m, w, |r, c| if r == c0 + c { T::one() } else { T::zero() })
}

pub fn decompose(inputs: &[&Data], kind: Decomp) -> Result<Vec<Data>> {
    let dtype = inputs[0].dtype();
    match dtype {
        DType::F32 => run::<f32>(inputs, kind),
        DType::F64 => run::<f64>(inputs, kind),
        DType::C64 => run::<Complex32>(inputs, kind),
        DType::C128 => run::<Complex64>(inputs, kind),
        d => Err(crate::dtype::unsupported("linalg", d)),
    }
}

fn run<T: Field>(inputs: &[&Data], kind: Decomp) -> Result<Vec<Data>> {
    let a = inputs[0];
    let (batch, m, n) = dims(a)?;
    // The square factors of a full SVD / complete QR can dwarf the input: refuse what
    // cannot be allocated before trying.
    if matches!(
        kind,
        Decomp::Svd { full: true } | Decomp::Qr { complete: true }
    ) {
        let side = m.max(n);
        let count = side.checked_mul(side).and_then(|c| c.checked_mul(batch));
        let count = count.ok_or_else(|| Error::runtime("linalg: output size overflows"))?;
        crate::storage::ensure_allocatable(count, T::DTYPE.itemsize())?;
    }
    let bshape = batch_shape(a);
    let work = n.saturating_mul(n).saturating_mul(n.max(1));
    let av = gather_data::<T>(a);
    let with = |extra: &[usize]| -> Vec<usize> { bshape.iter().chain(extra).copied().collect() };
    Ok(match kind {
        Decomp::Inv => {
            let mut out = vec![T::zero(); batch * n * n];
            let info = per_chunk(&mut out, batch, work, |i, dst| {
                let lu = Lu::new(matrix(&av, i, n, n));
                lu.inverse_into(dst);
                zero_pivot(lu.lu())
            });
            vec![data_from(out, &with(&[n, n])), data_from(info, &bshape)]
        }
        Decomp::Det | Decomp::Slogdet => {
            let parts = per_matrix(batch, work, |i| lu_det(matrix(&av, i, n, n)));
            if kind == Decomp::Det {
                let det: Vec<T> = parts
                    .iter()
                    .map(|(sign, logabs)| T::from_c64(*sign * logabs.exp()))
                    .collect();
                vec![data_from(det, &bshape)]
            } else {
                let sign: Vec<T> = parts.iter().map(|(s, _)| T::from_c64(*s)).collect();
                let logabs: Vec<T::Re> = parts.iter().map(|(_, l)| T::Re::from_f64(*l)).collect();
                vec![data_from(sign, &bshape), data_from(logabs, &bshape)]
            }
        }
        Decomp::Solve => {
            let b = inputs[1];
            let (_, _, k) = dims(b)?;
            let bv = gather_data::<T>(b);
            let mut out = vec![T::zero(); batch * n * k];
            let info = per_chunk(&mut out, batch, work.saturating_add(n * n * k), |i, dst| {
                let lu = Lu::new(matrix(&av, i, n, n));
                let b = matrix(&bv, i, n, k);
                let x = column_blocks(k, |c0, w| {
                    let mut x = b.subcols(c0, w).to_owned();
                    lu.solve_in_place(x.as_mut());
                    x
                });
                write_blocks_row_major(dst, n, k, &x);
                zero_pivot(lu.lu())
            });
            vec![data_from(out, &with(&[n, k])), data_from(info, &bshape)]
        }
        Decomp::SolveTriangular {
            upper,
            unitriangular,
        } => {
            use faer::linalg::triangular_solve as ts;
            let b = inputs[1];
            let (_, _, k) = dims(b)?;
            let bv = gather_data::<T>(b);
            let parts = per_matrix(batch, n * n * k.max(1), |i| {
                let t = matrix(&av, i, n, n);
                let mut x = matrix(&bv, i, n, k).to_owned();
                let (t, xm) = (t.as_ref(), x.as_mut());
                match (upper, unitriangular) {
                    (false, false) => ts::solve_lower_triangular_in_place(t, xm, Par::Seq),
                    (false, true) => ts::solve_unit_lower_triangular_in_place(t, xm, Par::Seq),
                    (true, false) => ts::solve_upper_triangular_in_place(t, xm, Par::Seq),
                    (true, true) => ts::solve_unit_upper_triangular_in_place(t, xm, Par::Seq),
                }
                x
            });
            let mut out = vec![T::zero(); batch * n * k];
            for (i, x) in parts.iter().enumerate() {
                write_row_major(&mut out[i * n * k..(i + 1) * n * k], x.as_ref());
            }
            vec![data_from(out, &with(&[n, k]))]
        }
        Decomp::Cholesky => {
            let parts = per_matrix(batch, work, |i| {
                let a = matrix(&av, i, n, n);
                match Llt::new(a.as_ref(), Side::Lower) {
                    Ok(llt) => {
                        let l = llt.L();
                        (
                            Mat::from_fn(n, n, |r, c| if r >= c { l[(r, c)] } else { T::zero() }),
                            0,
                        )
                    }
                    Err(faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot {
                        index,
                    }) => (Mat::zeros(n, n), index as i32 + 1),
                }
            });
            let mut out = vec![T::zero(); batch * n * n];
            let mut info = Vec::with_capacity(batch);
            for (i, (l, f)) in parts.iter().enumerate() {
                write_row_major(&mut out[i * n * n..(i + 1) * n * n], l.as_ref());
                info.push(*f);
            }
            vec![data_from(out, &with(&[n, n])), data_from(info, &bshape)]
        }
        Decomp::Eigh { upper } => {
            let side = if upper { Side::Upper } else { Side::Lower };
            let parts = per_matrix(batch, work, |i| {
                let a = matrix(&av, i, n, n);
                SelfAdjointEigen::new(a.as_ref(), side).map(|e| {
                    let s = e.S().column_vector();
                    let w: Vec<T::Re> = (0..n).map(|k| T::Re::from_f64(s[k].to_c64().re)).collect();
                    (w, e.U().to_owned())
                })
            });
            let mut w = Vec::with_capacity(batch * n);
            let mut v = vec![T::zero(); batch * n * n];
            for (i, part) in parts.into_iter().enumerate() {
                let (wi, vi) = part.map_err(|_| no_convergence("linalg.eigh"))?;
                w.extend(wi);
                write_row_major(&mut v[i * n * n..(i + 1) * n * n], vi.as_ref());
            }
            vec![data_from(w, &with(&[n])), data_from(v, &with(&[n, n]))]
        }
        Decomp::Svd { full } => {
            let k = m.min(n);
            let (ucols, vrows) = if full { (m, n) } else { (k, k) };
            let parts = per_matrix(batch, m.saturating_mul(n).saturating_mul(k.max(1)), |i| {
                let a = matrix(&av, i, m, n);
                let svd = if full {
                    Svd::new(a.as_ref())
                } else {
                    Svd::new_thin(a.as_ref())
                };
                svd.map(|d| {
                    let s = d.S().column_vector();
                    let sv: Vec<T::Re> =
                        (0..k).map(|j| T::Re::from_f64(s[j].to_c64().re)).collect();
                    (d.U().to_owned(), sv, d.V().to_owned())
                })
            });
            let mut u = vec![T::zero(); batch * m * ucols];
            let mut sv = Vec::with_capacity(batch * k);
            let mut vh = vec![T::zero(); batch * vrows * n];
            for (i, part) in parts.into_iter().enumerate() {
                let (ui, si, vi) = part.map_err(|_| no_convergence("linalg.svd"))?;
                write_row_major(&mut u[i * m * ucols..(i + 1) * m * ucols], ui.as_ref());
                sv.extend(si);
                // Vh = V^H.
                let out = &mut vh[i * vrows * n..(i + 1) * vrows * n];
                for r in 0..vrows {
                    for c in 0..n {
                        out[r * n + c] = T::from_c64(vi[(c, r)].to_c64().conj());
                    }
                }
            }
            vec![
                data_from(u, &with(&[m, ucols])),
                data_from(sv, &with(&[k])),
                data_from(vh, &with(&[vrows, n])),
            ]
        }
        Decomp::Eig => eig::<T>(&av, batch, n, &bshape)?,
        Decomp::LstsqQr => {
            let b = inputs[1];
            let (_, _, k) = dims(b)?;
            if m < n {
                return Err(Error::runtime("internal error: LstsqQr needs m >= n"));
            }
            let bv = gather_data::<T>(b);
            let qr_work = m.saturating_mul(n).saturating_mul(n.max(1));
            let parts = per_matrix(batch, qr_work.saturating_add(m * n * k), |i| {
                let qr = ColPivQr::new(matrix(&av, i, m, n).as_ref());
                let r = qr.R();
                let diag: Vec<f64> = (0..n).map(|j| r[(j, j)].to_c64().norm()).collect();
                let mut x = matrix(&bv, i, m, k).to_owned();
                qr.solve_lstsq_in_place_with_conj(Conj::No, x.as_mut());
                (x, diag)
            });
            let mut out = vec![T::zero(); batch * n * k];
            let mut diag = Vec::with_capacity(batch * n);
            for (i, (x, d)) in parts.into_iter().enumerate() {
                write_row_major(
                    &mut out[i * n * k..(i + 1) * n * k],
                    x.as_ref().subrows(0, n),
                );
                diag.extend(d);
            }
            vec![data_from(out, &with(&[n, k])), data_from(diag, &with(&[n]))]
        }
        Decomp::Qr { complete } => {
            let k = m.min(n);
            let (qcols, rrows) = if complete { (m, m) } else { (k, k) };
            let parts = per_matrix(batch, m.saturating_mul(n).saturating_mul(k.max(1)), |i| {
                if T::DTYPE.is_complex() {
                    let (q, r) = householder_qr(matrix(&av, i, m, n), complete);
                    return (vec![q], r);
                }
                let qr = Qr::new(matrix(&av, i, m, n).as_ref());
                // Real reflectors: faer's are LAPACK's (R's diagonal -sign(alpha) |x|).
                // Q's columns: the reflectors applied to the identity's, block by block.
                let q = column_blocks(qcols, |c0, w| {
                    use faer::linalg::householder as hh;
                    let mut q = identity_cols::<T>(m, c0, w);
                    let (basis, coeff) = (qr.Q_basis(), qr.Q_coeff());
                    let req = hh::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(
                        m,
                        coeff.nrows(),
                        w,
                    );
                    hh::apply_block_householder_sequence_on_the_left_in_place_with_conj(
                        basis,
                        coeff,
                        Conj::No,
                        q.as_mut(),
                        Par::Seq,
                        MemStack::new(&mut MemBuffer::new(req)),
                    );
                    q
                });
                let rf = qr.R();
                let r = Mat::from_fn(rrows, n, |a, b| {
                    if a <= b && a < k {
                        rf[(a, b)]
                    } else {
                        T::zero()
                    }
                });
                (q, r)
            });
            let mut qv = vec![T::zero(); batch * m * qcols];
            let mut rv = vec![T::zero(); batch * rrows * n];
            for (i, (q, r)) in parts.iter().enumerate() {
                write_blocks_row_major(&mut qv[i * m * qcols..(i + 1) * m * qcols], m, qcols, q);
                write_row_major(&mut rv[i * rrows * n..(i + 1) * rrows * n], r.as_ref());
            }
            vec![
                data_from(qv, &with(&[m, qcols])),
                data_from(rv, &with(&[rrows, n])),
            ]
        }
    })
}

/// Complex QR as LAPACK's zgeqr2 / zung2r compute it (faer's complex reflectors take
/// another phase, and R is only unique up to a unit diagonal): reflector j maps the
/// column below the diagonal to `beta e1`, `beta = -sign(Re alpha) |(alpha, x)|` (real),
/// or is the identity when that column is already `(real alpha, 0)`. In complex128.
// The row-major nested Vecs are walked column by column.
#[allow(clippy::needless_range_loop)]
fn householder_qr<T: Field>(a: MatRef<'_, T>, complete: bool) -> (Mat<T>, Mat<T>) {
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    let mut w: Vec<Vec<Complex64>> = (0..m)
        .map(|r| (0..n).map(|c| a[(r, c)].to_c64()).collect())
        .collect();
    let mut taus = vec![Complex64::new(0.0, 0.0); k];
    let mut vs: Vec<Vec<Complex64>> = Vec::with_capacity(k);
    for j in 0..k {
        let alpha = w[j][j];
        let xnorm = (j + 1..m).map(|r| w[r][j].norm_sqr()).sum::<f64>().sqrt();
        let mut v = vec![Complex64::new(0.0, 0.0); m];
        v[j] = Complex64::new(1.0, 0.0);
        if xnorm == 0.0 && alpha.im == 0.0 {
            vs.push(v);
            continue; // tau = 0: H = I, the diagonal keeps alpha
        }
        let norm = (alpha.norm_sqr() + xnorm * xnorm).sqrt();
        let beta = if alpha.re >= 0.0 { -norm } else { norm };
        let tau = Complex64::new((beta - alpha.re) / beta, -alpha.im / beta);
        let scale = Complex64::new(1.0, 0.0) / (alpha - beta);
        for r in j + 1..m {
            v[r] = w[r][j] * scale;
            w[r][j] = Complex64::new(0.0, 0.0);
        }
        w[j][j] = Complex64::new(beta, 0.0);
        // Apply H^H = I - conj(tau) v v^H to the columns on the right.
        for c in j + 1..n {
            let dot: Complex64 = (j..m).map(|r| v[r].conj() * w[r][c]).sum();
            let f = tau.conj() * dot;
            for r in j..m {
                w[r][c] -= f * v[r];
            }
        }
        taus[j] = tau;
        vs.push(v);
    }
    // Q = H_0 H_1 ... H_{k-1} applied to the first columns of the identity.
    let qcols = if complete { m } else { k };
    let mut q: Vec<Vec<Complex64>> = (0..m)
        .map(|r| {
            (0..qcols)
                .map(|c| Complex64::new(if r == c { 1.0 } else { 0.0 }, 0.0))
                .collect()
        })
        .collect();
    for j in (0..k).rev() {
        let (v, tau) = (&vs[j], taus[j]);
        for c in 0..qcols {
            let dot: Complex64 = (j..m).map(|r| v[r].conj() * q[r][c]).sum();
            let f = tau * dot;
            for r in j..m {
                q[r][c] -= f * v[r];
            }
        }
    }
    let rrows = if complete { m } else { k };
    let r = Mat::from_fn(rrows, n, |a, b| {
        if a <= b && a < k {
            T::from_c64(w[a][b])
        } else {
            T::zero()
        }
    });
    (Mat::from_fn(m, qcols, |a, b| T::from_c64(q[a][b])), r)
}

/// The eigendecompositions of a batch of `n × n` matrices (computed in float64 /
/// complex128), normalized as LAPACK's geev does.
fn eig<T: Field>(av: &[T], batch: usize, n: usize, bshape: &[usize]) -> Result<Vec<Data>> {
    if av.iter().any(|v| {
        let c = v.to_c64();
        !(c.re.is_finite() && c.im.is_finite())
    }) {
        return Err(Error::runtime(
            "torch.linalg.eig: input tensor should not contain infs or NaNs.",
        ));
    }
    let parts = per_matrix(batch, n.saturating_mul(n).saturating_mul(n.max(1)), |i| {
        let base = i * n * n;
        let decomposed = if T::DTYPE.is_complex() {
            let a = Mat::from_fn(n, n, |r, c| av[base + r * n + c].to_c64());
            faer::linalg::solvers::Eigen::<f64>::new(a.as_ref())
        } else {
            let a = Mat::from_fn(n, n, |r, c| av[base + r * n + c].to_c64().re);
            faer::linalg::solvers::Eigen::<f64>::new_from_real(a.as_ref())
        };
        decomposed.map(|e| {
            let s = e.S().column_vector();
            let w: Vec<Complex64> = (0..n).map(|k| s[k]).collect();
            let u = e.U();
            let mut v = vec![Complex64::new(0.0, 0.0); n * n];
            for c in 0..n {
                let norm = (0..n).map(|r| u[(r, c)].norm_sqr()).sum::<f64>().sqrt();
                let scale = if norm > 0.0 { 1.0 / norm } else { 1.0 };
                // A complex vector is turned so that its largest component (the first of
                // the largest) is real: positive (zgeev), or with the sign of its real part
                // for a real A's complex pair (dgeev's rotation, dlartg).
                let turn = if T::DTYPE.is_complex() || w[c].im != 0.0 {
                    let mut k = 0;
                    for r in 1..n {
                        if u[(r, c)].norm_sqr() > u[(k, c)].norm_sqr() {
                            k = r;
                        }
                    }
                    let big = u[(k, c)];
                    let sign = if !T::DTYPE.is_complex() && big.re < 0.0 {
                        -1.0
                    } else {
                        1.0
                    };
                    if big.norm() > 0.0 {
                        big.conj() / big.norm() * sign
                    } else {
                        Complex64::new(1.0, 0.0)
                    }
                } else {
                    Complex64::new(1.0, 0.0)
                };
                for r in 0..n {
                    v[r * n + c] = u[(r, c)] * turn * scale;
                }
            }
            (w, v)
        })
    });
    let mut w = Vec::with_capacity(batch * n);
    let mut v = Vec::with_capacity(batch * n * n);
    for part in parts {
        let (wi, vi) = part.map_err(|_| {
            Error::linalg(
                "linalg.eig: The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues.",
            )
        })?;
        w.extend(wi);
        v.extend(vi);
    }
    let with = |extra: &[usize]| -> Vec<usize> { bshape.iter().chain(extra).copied().collect() };
    Ok(if matches!(T::DTYPE, DType::F32 | DType::C64) {
        let narrow = |x: Vec<Complex64>| -> Vec<Complex32> {
            x.into_iter().map(Complex32::from_c64).collect()
        };
        vec![
            data_from(narrow(w), &with(&[n])),
            data_from(narrow(v), &with(&[n, n])),
        ]
    } else {
        vec![data_from(w, &with(&[n])), data_from(v, &with(&[n, n]))]
    })
}

fn no_convergence(name: &str) -> Error {
    Error::linalg(format!(
        "{name}: The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated singular values."
    ))
}

/// LAPACK's getrf info: the 1-based position of the first exactly zero pivot, else 0.
fn zero_pivot<T: Field>(u: MatRef<'_, T>) -> i32 {
    let n = u.nrows().min(u.ncols());
    (0..n)
        .find(|&i| u[(i, i)] == T::zero())
        .map_or(0, |i| i as i32 + 1)
}

/// `(sign, log|det|)` of a square matrix from its LU factorization: the sign is a unit
/// complex number (±1 for real input; 0 when singular, with log|det| = -inf).
fn lu_det<T: Field>(a: MatRef<'_, T>) -> (Complex64, f64) {
    let n = a.nrows();
    if n == 0 {
        return (Complex64::new(1.0, 0.0), 0.0);
    }
    let lu = Lu::new(a);
    let (u, fwd) = (lu.lu(), &lu.fwd);
    // The permutation's parity: n minus its number of cycles.
    let mut seen = vec![false; n];
    let mut swaps = 0usize;
    for start in 0..n {
        let mut j = start;
        let mut len = 0usize;
        while !seen[j] {
            seen[j] = true;
            j = fwd[j];
            len += 1;
        }
        swaps += len.saturating_sub(1);
    }
    let mut sign = Complex64::new(if swaps.is_multiple_of(2) { 1.0 } else { -1.0 }, 0.0);
    let mut logabs = 0.0f64;
    for i in 0..n {
        let d = u[(i, i)].to_c64();
        let r = d.norm();
        if r == 0.0 {
            return (Complex64::new(0.0, 0.0), f64::NEG_INFINITY);
        }
        sign *= d / r;
        logabs += r.ln();
    }
    (sign, logabs)
}
