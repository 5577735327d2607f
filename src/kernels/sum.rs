//! Sums in an order fixed by the lengths alone.
//!
//! # Note: fixed-order reductions
//! A float sum's rounding depends on the order of its additions. Every sum here adds in
//! one order that depends only on the lengths, and is split over threads along that
//! order, so its result is bitwise identical for 1, 2 or N threads (torch's is not):
//! - a *leaf* adds a run of `LEAF` elements into `LANES` independent partial sums
//!   (element i goes to lane i % LANES): the lanes vectorize, but each is a plain scalar
//!   sum, so no SIMD width or instruction set changes the result either;
//! - leaves are paired as a binary counter does (`Cascade`): two partial sums of 2^j
//!   leaves each become one of 2^(j+1), and what is left at the end is folded from the
//!   last one back; this is pairwise summation (error growing with log n, not n);
//! - threads take `CHUNK_LEAVES` consecutive leaves each (a power of two, so a full
//!   chunk is one complete subtree) and their results are paired by the same counter:
//!   the same tree, whoever computed its parts.
//!
//! Column sums (`sum_leading`) are the same with a row of columns in place of the lanes:
//! a leaf adds `LEAF_ROWS` rows, leaves pair up by the counter, threads take fixed
//! blocks of columns and fixed chunks of leaves. Row sums (`sum_rows`, over any `Rows`:
//! a contiguous matrix, rows of a strided view read in place) give each row exactly its
//! `sum_slice`, so a strided view sums bitwise as its contiguous copy does.
//!
//! The order of the *reads* is free: kernels read four leaves or rows side by side (four
//! memory streams are fetched faster than one), each still added in its own order.
//!
//! Half-precision sums accumulate in f32 and round once at the end, as torch's do.

use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use smallvec::SmallVec;

use crate::dtype::Element;
use crate::kernels::traits::Arith;
use crate::kernels::{par_chunks_mut, par_map, PARALLEL_GRAIN};

/// Independent partial sums of a leaf (4 AVX2 registers of f32).
const LANES: usize = 32;
/// Elements one leaf adds (64 per lane).
const LEAF: usize = LANES * 64;
/// Leaves per thread task: 2^6 (a power of two; see the note).
const CHUNK_LEAVES: usize = 1 << CHUNK_LEVEL;
const CHUNK_LEVEL: u32 = 6;
/// Rows one column-sum leaf adds.
const LEAF_ROWS: usize = 16;
/// Columns one column-sum task covers (their partial sums stay in L1).
const COL_BLOCK: usize = 4096;
/// Column sums over fewer columns than this fold groups of rows side by side first, so
/// the inner loop stays long enough to vectorize.
const MIN_WIDTH: usize = 64;

/// An element type and the type its sums accumulate in.
pub trait SumElem: Element {
    type Acc: Arith;
    fn widen(self) -> Self::Acc;
    fn narrow(acc: Self::Acc) -> Self;
}

macro_rules! sum_in_self {
    ($($t:ty),*) => {$(
        impl SumElem for $t {
            type Acc = $t;
            #[inline(always)]
            fn widen(self) -> $t { self }
            #[inline(always)]
            fn narrow(acc: $t) -> $t { acc }
        }
    )*};
}
sum_in_self!(u8, i32, i64, f32, f64, Complex32, Complex64);

macro_rules! sum_in_f32 {
    ($($t:ty),*) => {$(
        impl SumElem for $t {
            type Acc = f32;
            #[inline(always)]
            fn widen(self) -> f32 { self.to_f32() }
            #[inline(always)]
            fn narrow(acc: f32) -> $t { <$t>::from_f32(acc) }
        }
    )*};
}
sum_in_f32!(f16, bf16);

/// Define `fn $name` from one body, compiled three times: for AVX-512 and AVX2 (picked at
/// run time when the CPU has them) and for the baseline. The body is the same safe code
/// each way, so all give the same bits; the instruction sets only make the lanes wider.
macro_rules! simd_dispatch {
    ($(#[$doc:meta])* fn $name:ident<$($g:ident: $bound:path),*>($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        $(#[$doc])*
        fn $name<$($g: $bound),*>($($arg: $ty),*) -> $ret {
            #[inline(always)]
            fn body<$($g: $bound),*>($($arg: $ty),*) -> $ret $body
            #[cfg(target_arch = "x86_64")]
            {
                // AVX-512's 32 registers hold four rows' lanes without spilling.
                #[target_feature(enable = "avx512f")]
                unsafe fn avx512<$($g: $bound),*>($($arg: $ty),*) -> $ret {
                    body::<$($g),*>($($arg),*)
                }
                if std::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU has AVX-512F (checked just above).
                    return unsafe { avx512::<$($g),*>($($arg),*) };
                }
                #[target_feature(enable = "avx2")]
                unsafe fn avx2<$($g: $bound),*>($($arg: $ty),*) -> $ret {
                    body::<$($g),*>($($arg),*)
                }
                if std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2 (checked just above).
                    return unsafe { avx2::<$($g),*>($($arg),*) };
                }
            }
            body::<$($g),*>($($arg),*)
        }
    };
}

/// What each element adds to a sum, in the accumulator type: the element itself
/// (`Plain`), or a function of it fused into the sum's loops (nansum, the 2-norm), so
/// that no intermediate tensor is made. The order of the additions is the same for all.
pub trait Term: Send + Sync + 'static {
    fn term<T: SumElem>(x: T) -> T::Acc;
}

/// The element itself: `sum`.
pub struct Plain;
/// NaN counts as zero: `nansum`.
pub struct NanAsZero;
/// The element squared: the 2-norm's sum for real inputs.
pub struct Square;

impl Term for Plain {
    #[inline(always)]
    fn term<T: SumElem>(x: T) -> T::Acc {
        x.widen()
    }
}

impl Term for NanAsZero {
    #[inline(always)]
    fn term<T: SumElem>(x: T) -> T::Acc {
        let w = x.widen();
        // Only NaN differs from itself; integers never do.
        #[allow(clippy::eq_op)]
        if w == w {
            w
        } else {
            T::Acc::zero()
        }
    }
}

impl Term for Square {
    #[inline(always)]
    fn term<T: SumElem>(x: T) -> T::Acc {
        let w = x.widen();
        w * w
    }
}

/// Partial sums waiting for a partner: a binary counter over leaves, at most one entry
/// per level (see Note: fixed-order reductions).
/// Eight entries stay inline: a chunk's 64 leaves need at most seven, and a sum of fewer
/// than 2^8 chunks at most eight (more spill to the heap). With 24 inline, the cascades of
/// four short rows were 13 KB, moved by memcpy for longer than the rows took to add.
struct Cascade<V> {
    stack: SmallVec<[(u32, V); 8]>,
}

impl<V> Cascade<V> {
    fn new() -> Self {
        Cascade {
            stack: SmallVec::new(),
        }
    }

    /// Add a complete subtree of 2^`level` leaves after everything pushed so far.
    #[inline(always)]
    fn push(&mut self, mut level: u32, mut v: V, add: &impl Fn(V, V) -> V) {
        while let Some((top, _)) = self.stack.last() {
            if *top != level {
                break;
            }
            let (_, earlier) = self.stack.pop().expect("checked above");
            v = add(earlier, v);
            level += 1;
        }
        self.stack.push((level, v));
    }

    /// The total: `last` (an incomplete tail, when there is one), then each waiting
    /// subtree from the most recent back.
    #[inline(always)]
    fn finish(&mut self, last: Option<V>, add: &impl Fn(V, V) -> V) -> Option<V> {
        let mut acc = last.or_else(|| self.stack.pop().map(|(_, v)| v))?;
        while let Some((_, earlier)) = self.stack.pop() {
            acc = add(earlier, acc);
        }
        Some(acc)
    }
}

/// Pair up per-chunk results: full chunks are complete subtrees of `CHUNK_LEVEL`, the
/// last one may be a folded tail.
fn merge_chunks<V>(chunks: Vec<V>, last_is_full: bool, add: impl Fn(V, V) -> V) -> Option<V> {
    let mut cascade = Cascade::new();
    let mut chunks = chunks.into_iter().peekable();
    let mut tail = None;
    while let Some(c) = chunks.next() {
        if chunks.peek().is_none() && !last_is_full {
            tail = Some(c);
        } else {
            cascade.push(CHUNK_LEVEL, c, &add);
        }
    }
    cascade.finish(tail, &add)
}

type Lanes<A> = [A; LANES];

#[inline(always)]
fn add_lanes<A: Arith>(mut a: Lanes<A>, b: Lanes<A>) -> Lanes<A> {
    for i in 0..LANES {
        a[i] = a[i] + b[i];
    }
    a
}

/// The lanes of `N` full leaves (the first `LEAF` elements of each), read side by side: the
/// streams come from different pages, so the memory system fetches them in parallel
/// (about 1.4x faster than one stream). Each leaf's additions stay in its own order.
#[inline(always)]
fn full_leaves<T: SumElem, W: Term, const N: usize>(leaves: [&[T]; N]) -> [Lanes<T::Acc>; N] {
    let leaves: [&[T]; N] = leaves.map(|leaf| &leaf[..LEAF]);
    let mut acc = [[T::Acc::zero(); LANES]; N];
    for r in 0..LEAF / LANES {
        for k in 0..N {
            let row = &leaves[k][r * LANES..(r + 1) * LANES];
            for i in 0..LANES {
                acc[k][i] = acc[k][i] + W::term(row[i]);
            }
        }
    }
    acc
}

/// The lanes of one leaf of up to `LEAF` elements.
#[inline(always)]
fn leaf_lanes<T: SumElem, W: Term>(leaf: &[T]) -> Lanes<T::Acc> {
    let mut acc = [T::Acc::zero(); LANES];
    let mut rows = leaf.chunks_exact(LANES);
    for row in &mut rows {
        for i in 0..LANES {
            acc[i] = acc[i] + W::term(row[i]);
        }
    }
    for (a, &x) in acc.iter_mut().zip(rows.remainder()) {
        *a = *a + W::term(x);
    }
    acc
}

simd_dispatch! {
    /// The lanes of all leaves of `s`, paired by the counter. Leaves are computed up to
    /// four at a time (one per quarter of a group of leaves; the rest two at a time),
    /// then paired in order.
    fn chunk_lanes<T: SumElem, W: Term>(s: &[T]) -> Lanes<T::Acc> {
        let mut cascade = Cascade::new();
        let mut sums: SmallVec<[Lanes<T::Acc>; CHUNK_LEAVES]> = SmallVec::new();
        for group in s.chunks(LEAF * CHUNK_LEAVES) {
            let leaves = group.len().div_ceil(LEAF);
            let full = group.len() / LEAF;
            sums.clear();
            sums.resize(leaves, [T::Acc::zero(); LANES]);
            let quarter = full / 4;
            for j in 0..quarter {
                let at = [j, j + quarter, j + 2 * quarter, j + 3 * quarter];
                let got = full_leaves::<T, W, 4>(at.map(|l| &group[l * LEAF..]));
                for (l, lanes) in at.into_iter().zip(got) {
                    sums[l] = lanes;
                }
            }
            let mut l = 4 * quarter;
            if l + 2 <= full {
                [sums[l], sums[l + 1]] =
                    full_leaves::<T, W, 2>([&group[l * LEAF..], &group[(l + 1) * LEAF..]]);
                l += 2;
            }
            for (l, sum) in sums.iter_mut().enumerate().skip(l) {
                *sum = leaf_lanes::<T, W>(&group[l * LEAF..group.len().min((l + 1) * LEAF)]);
            }
            for lanes in sums.drain(..) {
                cascade.push(0, lanes, &add_lanes);
            }
        }
        cascade.finish(None, &add_lanes).unwrap_or([T::Acc::zero(); LANES])
    }
}

/// The lanes folded in a fixed tree: 16 pairs, then 8, ... then one.
#[inline(always)]
fn fold_lanes<A: Arith>(mut acc: Lanes<A>) -> A {
    let mut width = LANES / 2;
    while width > 0 {
        for i in 0..width {
            acc[i] = acc[i] + acc[i + width];
        }
        width /= 2;
    }
    acc[0]
}

/// The sum of `s`, in the fixed order of Note: fixed-order reductions; long slices are
/// split over the intra-op pool.
pub fn sum_slice<T: SumElem, W: Term>(s: &[T]) -> T {
    if s.len() < LANES {
        // Too short for lanes: one running sum (its order is fixed all the same).
        return T::narrow(s.iter().fold(T::Acc::zero(), |a, &x| a + W::term(x)));
    }
    let chunk = LEAF * CHUNK_LEAVES;
    if s.len() <= chunk {
        return T::narrow(fold_lanes(chunk_lanes::<T, W>(s)));
    }
    let lanes_of = |i: usize| chunk_lanes::<T, W>(&s[i * chunk..s.len().min((i + 1) * chunk)]);
    let count = s.len().div_ceil(chunk);
    let chunks: Vec<Lanes<T::Acc>> = if s.len() >= PARALLEL_GRAIN {
        par_map(count, lanes_of)
    } else {
        (0..count).map(lanes_of).collect()
    };
    let lanes =
        merge_chunks(chunks, s.len().is_multiple_of(chunk), add_lanes).expect("s is not empty");
    T::narrow(fold_lanes(lanes))
}

/// The rows a row-sum kernel reads, all of one length: row `i` as a slice.
pub trait Rows<T>: Sync {
    fn row(&self, i: usize) -> &[T];
}

/// The rows of a row-major matrix of `inner` columns, row `i` starting at `i * pitch`.
pub struct Pitched<'a, T> {
    pub data: &'a [T],
    pub inner: usize,
    pub pitch: usize,
}

impl<T: Sync> Rows<T> for Pitched<'_, T> {
    #[inline(always)]
    fn row(&self, i: usize) -> &[T] {
        &self.data[i * self.pitch..i * self.pitch + self.inner]
    }
}

/// `LANES` elements added into the lanes (a fixed-length array, so the loop vectorizes
/// whatever the rows are read from).
#[inline(always)]
fn add_chunk<T: SumElem, W: Term>(acc: &mut Lanes<T::Acc>, chunk: &[T]) {
    let chunk: &[T; LANES] = chunk.try_into().expect("a chunk of LANES elements");
    for l in 0..LANES {
        acc[l] = acc[l] + W::term(chunk[l]);
    }
}

/// Elements of one chunk of a long sum (see the note).
pub const SUM_CHUNK: usize = LEAF * CHUNK_LEAVES;

/// The sum of `len` elements that `fill(from, to, buf)` puts into `buf` a chunk at a
/// time (a strided tensor's gather, piece by piece: each piece stays in cache), bitwise
/// equal to `sum_slice` of all of them, whose chunks these are.
pub fn sum_in_chunks<T: SumElem, W: Term>(
    len: usize,
    fill: impl Fn(usize, usize, &mut Vec<T>) + Sync,
) -> T {
    let count = len.div_ceil(SUM_CHUNK);
    let lanes_into = |i: usize, buf: &mut Vec<T>| {
        fill(i * SUM_CHUNK, len.min((i + 1) * SUM_CHUNK), buf);
        chunk_lanes::<T, W>(buf)
    };
    if len <= SUM_CHUNK {
        let mut buf = Vec::new();
        fill(0, len, &mut buf);
        return sum_slice::<T, W>(&buf);
    }
    let chunks: Vec<Lanes<T::Acc>> = if len >= PARALLEL_GRAIN && crate::threads::num_threads() > 1 {
        par_map(count, |i| lanes_into(i, &mut Vec::new()))
    } else {
        let mut buf = Vec::new();
        (0..count).map(|i| lanes_into(i, &mut buf)).collect()
    };
    let lanes = merge_chunks(chunks, len.is_multiple_of(SUM_CHUNK), add_lanes).expect("len > 0");
    T::narrow(fold_lanes(lanes))
}

simd_dispatch! {
    /// The lanes of four rows (of `inner` elements, at most one chunk), each exactly as
    /// `chunk_lanes` of that row: the rows' leaves are read side by side, one stream per
    /// row.
    fn four_rows_lanes<T: SumElem, W: Term, R: Rows<T>>(rows: &R, inner: usize, at: [usize; 4]) -> [Lanes<T::Acc>; 4] {
        let rows = at.map(|i| rows.row(i));
        let full = inner / LEAF;
        let mut cascades: [Cascade<Lanes<T::Acc>>; 4] = std::array::from_fn(|_| Cascade::new());
        for l in 0..full {
            let got = full_leaves::<T, W, 4>(rows.map(|row| &row[l * LEAF..]));
            for (cascade, lanes) in cascades.iter_mut().zip(got) {
                cascade.push(0, lanes, &add_lanes);
            }
        }
        if !inner.is_multiple_of(LEAF) {
            for (cascade, row) in cascades.iter_mut().zip(rows) {
                cascade.push(0, leaf_lanes::<T, W>(&row[full * LEAF..inner]), &add_lanes);
            }
        }
        // Finished in place: `array::map` would move the four cascades (a memcpy each).
        let mut out = [[T::Acc::zero(); LANES]; 4];
        for k in 0..4 {
            if let Some(lanes) = cascades[k].finish(None, &add_lanes) {
                out[k] = lanes;
            }
        }
        out
    }
}

simd_dispatch! {
    /// Sums of rows of one leaf or less (`LANES <= inner <= LEAF`): for each `i` from
    /// `from` on, rows i, i + q, i + 2q and i + 3q into `out[i - from]`, each as
    /// `sum_slice` of its row (a cascade of one leaf is that leaf). The four rows are
    /// read side by side, and many quads go through one call: a call per quad, with its
    /// frame and its folds out of line, cost more than the additions of short rows.
    fn short_rows<T: SumElem, W: Term, R: Rows<T>>(rows: &R, q: usize, from: usize, out: &mut [[T; 4]]) -> () {
        for (j, sums) in out.iter_mut().enumerate() {
            let i = from + j;
            // Four named rows: indexed out of an array of slices, the loop went scalar.
            let (r0, r1, r2, r3) = (rows.row(i), rows.row(i + q), rows.row(i + 2 * q), rows.row(i + 3 * q));
            let body = r0.len() / LANES;
            let mut acc = [[T::Acc::zero(); LANES]; 4];
            // Plain loops: inside a closure, as `array::map` takes, they would lose the
            // target features.
            for r in 0..body {
                let at = r * LANES..(r + 1) * LANES;
                add_chunk::<T, W>(&mut acc[0], &r0[at.clone()]);
                add_chunk::<T, W>(&mut acc[1], &r1[at.clone()]);
                add_chunk::<T, W>(&mut acc[2], &r2[at.clone()]);
                add_chunk::<T, W>(&mut acc[3], &r3[at]);
            }
            for (k, row) in [r0, r1, r2, r3].into_iter().enumerate() {
                for (a, &v) in acc[k].iter_mut().zip(&row[body * LANES..]) {
                    *a = *a + W::term(v);
                }
                sums[k] = T::narrow(fold_lanes(acc[k]));
            }
        }
    }
}

/// Sums of the rows of a contiguous `outer`×`inner` matrix (a reduction over trailing
/// dims), each bitwise equal to `sum_slice` of its row.
pub fn sum_trailing<T: SumElem, W: Term>(x: &[T], outer: usize, inner: usize) -> Vec<T> {
    let rows = Pitched {
        data: x,
        inner,
        pitch: inner,
    };
    sum_rows::<T, W, _>(&rows, outer, inner)
}

/// Sums of `outer` rows of `inner` elements each, each bitwise equal to `sum_slice` of
/// its row. Rows that fit one chunk are read four at a time, one from each quarter of
/// the rows (far-apart streams fetch best).
pub fn sum_rows<T: SumElem, W: Term, R: Rows<T>>(rows: &R, outer: usize, inner: usize) -> Vec<T> {
    sum_rows_split::<T, W, R>(rows, outer, inner, outer * inner >= PARALLEL_GRAIN)
}

/// `sum_rows`, split over the intra-op team when `big`.
fn sum_rows_split<T: SumElem, W: Term, R: Rows<T>>(
    rows: &R,
    outer: usize,
    inner: usize,
    big: bool,
) -> Vec<T> {
    let row_sum = |i: usize| sum_slice::<T, W>(rows.row(i));
    if !(LANES..=LEAF * CHUNK_LEAVES).contains(&inner) || outer < 4 {
        return if big && outer > 1 {
            par_map(outer, row_sum)
        } else {
            (0..outer).map(row_sum).collect()
        };
    }
    let q = outer / 4;
    let quads: Vec<[T; 4]> = if inner <= LEAF {
        let mut quads = vec![[T::zero(); 4]; q];
        let per_task = (TASK_ELEMENTS / (4 * inner)).max(1);
        let task = |t: usize, out: &mut [[T; 4]]| short_rows::<T, W, R>(rows, q, t * per_task, out);
        if big {
            par_chunks_mut(&mut quads, per_task, task);
        } else {
            task(0, &mut quads);
        }
        quads
    } else {
        four_row_quads::<T, W, R>(rows, inner, q, big)
    };
    let mut out: Vec<T> = (0..4)
        .flat_map(|k| quads.iter().map(move |s| s[k]))
        .collect();
    out.extend((4 * q..outer).map(row_sum));
    out
}

/// Elements one task of `short_rows` reads.
const TASK_ELEMENTS: usize = 1 << 15;

/// Sums of `outer` rows of `inner` elements (at most one chunk each) that `fill(from, to,
/// buf)` gathers into `buf` a block of whole rows at a time (row-major positions
/// `from..to` of a strided tensor), each bitwise equal to `sum_slice` of its row. Each
/// task gathers and sums its own block, which stays in cache: gathering all the rows
/// first, then summing them, read and wrote the whole tensor once more.
pub fn sum_rows_in_pieces<T: SumElem, W: Term>(
    outer: usize,
    inner: usize,
    fill: impl Fn(usize, usize, &mut Vec<T>) + Sync,
) -> Vec<T> {
    let per_task = (TASK_ELEMENTS / inner.max(1)).max(1);
    let block_sums = |b: usize, buf: &mut Vec<T>| {
        let (first, end) = (b * per_task, outer.min((b + 1) * per_task));
        fill(first * inner, end * inner, buf);
        let rows = Pitched {
            data: buf.as_slice(),
            inner,
            pitch: inner,
        };
        sum_rows_split::<T, W, _>(&rows, end - first, inner, false)
    };
    let blocks = outer.div_ceil(per_task);
    let sums: Vec<Vec<T>> = if outer * inner >= PARALLEL_GRAIN && crate::threads::num_threads() > 1
    {
        par_map(blocks, |b| block_sums(b, &mut Vec::new()))
    } else {
        let mut buf = Vec::new();
        (0..blocks).map(|b| block_sums(b, &mut buf)).collect()
    };
    sums.concat()
}

/// The quads of `sum_rows` for rows longer than a leaf (up to one chunk).
fn four_row_quads<T: SumElem, W: Term, R: Rows<T>>(
    rows: &R,
    inner: usize,
    q: usize,
    big: bool,
) -> Vec<[T; 4]> {
    let quad = |i: usize| {
        let lanes = four_rows_lanes::<T, W, R>(rows, inner, [i, i + q, i + 2 * q, i + 3 * q]);
        lanes.map(|l| T::narrow(fold_lanes(l)))
    };
    if big {
        par_map(q, quad)
    } else {
        (0..q).map(quad).collect()
    }
}

#[inline(always)]
fn add_rows<A: Arith>(mut a: Vec<A>, b: Vec<A>) -> Vec<A> {
    for (x, y) in a.iter_mut().zip(b) {
        *x = *x + y;
    }
    a
}

simd_dispatch! {
    /// Column sums of rows `r0..r1` over columns `c0..c0 + width` of a row-major matrix
    /// with `inner` columns, paired by the counter. A leaf adds its rows in order; four
    /// rows are read side by side (four streams, as in `full_leaves`).
    fn chunk_columns<T: SumElem, W: Term>(x: &[T], inner: usize, r0: usize, r1: usize, c0: usize, width: usize) -> Vec<T::Acc> {
        let mut cascade = Cascade::new();
        let add = add_rows::<T::Acc>;
        let row = |r: usize| &x[r * inner + c0..r * inner + c0 + width];
        let mut start = r0;
        while start < r1 {
            let end = (start + LEAF_ROWS).min(r1);
            let mut acc = vec![T::Acc::zero(); width];
            let mut r = start;
            while r + 4 <= end {
                let (a, b, c, d) = (row(r), row(r + 1), row(r + 2), row(r + 3));
                let acc = &mut acc[..width];
                for j in 0..width {
                    // Left to right: the same order as adding the rows one by one.
                    acc[j] = acc[j] + W::term(a[j]) + W::term(b[j]) + W::term(c[j]) + W::term(d[j]);
                }
                r += 4;
            }
            for r in r..end {
                for (a, &v) in acc.iter_mut().zip(row(r)) {
                    *a = *a + W::term(v);
                }
            }
            cascade.push(0, acc, &add);
            start = end;
        }
        cascade.finish(None, &add).unwrap_or_else(|| vec![T::Acc::zero(); width])
    }
}

/// Column sums of a row-major `outer`×`inner` matrix, in the accumulator type.
fn column_sums<T: SumElem, W: Term>(x: &[T], outer: usize, inner: usize) -> Vec<T::Acc> {
    let rows_per_chunk = LEAF_ROWS * CHUNK_LEAVES;
    let row_chunks = outer.div_ceil(rows_per_chunk).max(1);
    let col_blocks = inner.div_ceil(COL_BLOCK);
    let task = |t: usize| {
        let (rc, cb) = (t % row_chunks, t / row_chunks);
        let c0 = cb * COL_BLOCK;
        let r0 = rc * rows_per_chunk;
        let r1 = (r0 + rows_per_chunk).min(outer);
        chunk_columns::<T, W>(x, inner, r0, r1, c0, COL_BLOCK.min(inner - c0))
    };
    let tasks = row_chunks * col_blocks;
    let parts: Vec<Vec<T::Acc>> = if outer * inner >= PARALLEL_GRAIN && tasks > 1 {
        par_map(tasks, task)
    } else {
        (0..tasks).map(task).collect()
    };
    let last_is_full = outer.is_multiple_of(rows_per_chunk);
    let mut out = Vec::with_capacity(inner);
    let mut parts = parts.into_iter();
    for _ in 0..col_blocks {
        let block: Vec<Vec<T::Acc>> = parts.by_ref().take(row_chunks).collect();
        out.extend(merge_chunks(block, last_is_full, add_rows).expect("one chunk at least"));
    }
    out
}

/// Sum of a contiguous `outer`×`inner` matrix over its rows (a reduction over leading
/// dims, as bias gradients are): out[j] = Σ_i x[i, j], without transposing.
pub fn sum_leading<T: SumElem, W: Term>(x: &[T], outer: usize, inner: usize) -> Vec<T> {
    if inner >= MIN_WIDTH || outer < 2 {
        return column_sums::<T, W>(x, outer, inner)
            .into_iter()
            .map(T::narrow)
            .collect();
    }
    // Narrow rows: view `group` consecutive rows as one wide row, sum those, then add
    // the group's slots and the rows left over, each in row order.
    let group = MIN_WIDTH.div_ceil(inner).min(outer);
    let wide_rows = outer / group;
    let wide = column_sums::<T, W>(&x[..wide_rows * group * inner], wide_rows, group * inner);
    (0..inner)
        .map(|j| {
            let slots = (0..group).map(|g| wide[g * inner + j]);
            let rest = (wide_rows * group..outer).map(|i| W::term(x[i * inner + j]));
            T::narrow(slots.chain(rest).fold(T::Acc::zero(), |a, v| a + v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values whose sum depends on the order of the additions.
    fn data(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 7919) % 1000) as f32 * 1.37e-3 - 0.5 + (i % 3) as f32 * 1e4)
            .collect()
    }

    #[test]
    fn chunks_pair_up_as_one_cascade_would() {
        // The claim of Note: fixed-order reductions: thread chunks do not change the tree.
        let chunk = LEAF * CHUNK_LEAVES;
        let x = data(5 * chunk + LEAF + 7);
        for n in [
            chunk + 1,
            2 * chunk,
            3 * chunk - 5,
            4 * chunk,
            5 * chunk + LEAF + 7,
        ] {
            let whole = fold_lanes(chunk_lanes::<_, Plain>(&x[..n]));
            assert_eq!(
                sum_slice::<_, Plain>(&x[..n]).to_bits(),
                whole.to_bits(),
                "n = {n}"
            );
        }
    }

    #[test]
    fn column_chunks_pair_up_as_one_cascade_would() {
        let rows_per_chunk = LEAF_ROWS * CHUNK_LEAVES;
        let inner = COL_BLOCK + 100;
        let x = data((3 * rows_per_chunk + 5) * inner);
        for outer in [
            rows_per_chunk,
            2 * rows_per_chunk + 1,
            3 * rows_per_chunk + 5,
        ] {
            let whole = chunk_columns::<_, Plain>(&x, inner, 0, outer, 0, inner);
            let got = column_sums::<_, Plain>(&x[..outer * inner], outer, inner);
            assert!(got
                .iter()
                .zip(&whole)
                .all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }

    #[test]
    fn rows_four_at_a_time_sum_as_each_row_alone() {
        let x = data(7 * LEAF * CHUNK_LEAVES);
        for (outer, inner) in [
            (7, LEAF * CHUNK_LEAVES),
            (9, 3 * LEAF + 5),
            (130, 4096),
            (33, 40),
            (20, 1024),
        ] {
            let got = sum_trailing::<_, Plain>(&x[..outer * inner], outer, inner);
            for (i, s) in got.iter().enumerate() {
                let alone = sum_slice::<_, Plain>(&x[i * inner..(i + 1) * inner]);
                assert_eq!(s.to_bits(), alone.to_bits(), "{outer}x{inner}, row {i}");
            }
        }
    }

    #[test]
    fn pitched_rows_sum_as_each_row_alone() {
        let x = data(1 << 20);
        for (outer, inner, pitch) in [(130, 512, 1024), (9, 3 * LEAF + 5, 7000), (21, 40, 41)] {
            let rows = Pitched {
                data: &x[..],
                inner,
                pitch,
            };
            let got = sum_rows::<_, Plain, _>(&rows, outer, inner);
            for (i, s) in got.iter().enumerate() {
                let alone = sum_slice::<_, Plain>(&x[i * pitch..i * pitch + inner]);
                assert_eq!(
                    s.to_bits(),
                    alone.to_bits(),
                    "{outer}x{inner}/{pitch}, row {i}"
                );
            }
        }
    }

    #[test]
    fn sums_do_not_depend_on_thread_count() {
        let x = data(3_000_017);
        let results: Vec<(u32, Vec<u32>, Vec<u32>)> = [1, 2, 3]
            .into_iter()
            .map(|threads| {
                crate::threads::set_num_threads(threads).unwrap();
                let full = sum_slice::<_, Plain>(&x).to_bits();
                let cols = sum_leading::<_, Plain>(&x[..3_000_000], 1000, 3000);
                let narrow = sum_leading::<_, Plain>(&x[..3_000_000], 1_000_000, 3);
                let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect();
                (full, bits(cols), bits(narrow))
            })
            .collect();
        assert!(results.iter().all(|r| *r == results[0]));
        // Not vacuous: another order gives other bits.
        let sequential: f32 = x.iter().sum();
        assert_ne!(sequential.to_bits(), results[0].0);
    }

    #[test]
    fn sums_are_accurate() {
        let x = data(1 << 22);
        let exact: f64 = x.iter().map(|&v| v as f64).sum();
        let got = sum_slice::<_, Plain>(&x) as f64;
        assert!(
            (got - exact).abs() <= exact.abs() * 1e-6,
            "{got} vs {exact}"
        );
        let narrow = sum_leading::<_, Plain>(&x, 1 << 20, 4);
        for (j, &s) in narrow.iter().enumerate() {
            let exact: f64 = x.iter().skip(j).step_by(4).map(|&v| v as f64).sum();
            assert!((s as f64 - exact).abs() <= exact.abs() * 1e-6, "column {j}");
        }
    }

    #[test]
    fn half_precision_accumulates_in_f32() {
        // 2048 + 1 rounds back to 2048 in f16: a sum kept in f16 would never move.
        let mut x = vec![f16::from_f32(2048.0)];
        x.extend(std::iter::repeat_n(f16::ONE, 2048));
        assert_eq!(sum_slice::<_, Plain>(&x).to_f32(), 4096.0);
        // 2048 + 2046 = 4094 is a float16 (4095 is not).
        assert_eq!(
            sum_leading::<_, Plain>(&x[..2047], 2047, 1)[0].to_f32(),
            4094.0
        );
    }

    #[test]
    fn empty_and_short() {
        assert_eq!(sum_slice::<f64, Plain>(&[]), 0.0);
        assert_eq!(sum_slice::<_, Plain>(&[1.5f64, 2.0]), 3.5);
        assert_eq!(sum_leading::<f64, Plain>(&[], 0, 3), vec![0.0; 3]);
        assert_eq!(
            sum_leading::<_, Plain>(&[1.0f64, 2.0, 3.0, 4.0], 2, 2),
            vec![4.0, 6.0]
        );
    }
}
