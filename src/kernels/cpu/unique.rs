//! unique / unique_consecutive over the rows of a contiguous `[rows, len]` tensor (a
//! row is one element when no dim is given, else one slice along the dim). The kernel
//! finds the groups; the op gathers the values from each group's first row.

use std::cmp::Ordering;

use crate::error::Result;
use crate::kernels::cpu::sort::ascending;
use crate::kernels::gather_data;
use crate::kernels::kinds::Groups;
use crate::storage::Data;

/// The groups of equal rows (see `kinds::Groups`). Rows compare lexicographically with
/// NaN last; NaN equals nothing, so each NaN is its own group (torch's grouping).
pub fn unique_rows(x: &Data, rows: usize, consecutive: bool) -> Result<Groups> {
    Ok(crate::with_real!(x.dtype(), "unique", T => {
        let v = gather_data::<T>(x);
        let len = v.len().checked_div(rows).unwrap_or(0);
        let row = |r: usize| &v[r * len..(r + 1) * len];
        let mut order: Vec<usize> = (0..rows).collect();
        if !consecutive {
            order.sort_by(|&a, &b| {
                row(a)
                    .iter()
                    .zip(row(b))
                    .map(|(&p, &q)| ascending(p, q))
                    .find(|o| *o != Ordering::Equal)
                    .unwrap_or(Ordering::Equal)
            });
        }
        let same = |a: usize, b: usize| row(a).iter().zip(row(b)).all(|(p, q)| p == q);
        let mut groups = Groups {
            first: Vec::new(),
            inverse: vec![0; rows],
            counts: Vec::new(),
        };
        let mut last: Option<usize> = None;
        for &r in &order {
            match last {
                Some(l) if same(l, r) => {
                    if let Some(c) = groups.counts.last_mut() {
                        *c += 1;
                    }
                }
                _ => {
                    groups.first.push(r as i64);
                    groups.counts.push(1);
                }
            }
            groups.inverse[r] = groups.first.len() as i64 - 1;
            last = Some(r);
        }
        groups
    }))
}
