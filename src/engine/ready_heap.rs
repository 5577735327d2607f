//! The ready queue's order, exactly torch's: a binary max-heap on sequence_nr managed
//! like libstdc++'s `std::priority_queue` (push_heap / pop_heap). Nodes with equal
//! sequence_nr (every AccumulateGrad has u64::MAX) come out in the order that heap
//! gives, not FIFO or LIFO, and user-visible hook order (post-accumulate-grad hooks on
//! several leaves) depends on it (issue 7 §6).

/// `(sequence_nr, node index)` entries; larger sequence_nr first.
#[derive(Default)]
pub struct ReadyHeap {
    v: Vec<(u64, usize)>,
}

impl ReadyHeap {
    pub fn new() -> Self {
        ReadyHeap { v: Vec::new() }
    }

    /// `std::push_heap`: sift the new entry up while its parent is strictly smaller.
    pub fn push(&mut self, sequence_nr: u64, idx: usize) {
        let x = (sequence_nr, idx);
        self.v.push(x);
        let hole = self.v.len() - 1;
        self.sift_up(hole, 0, x);
    }

    /// `std::pop_heap` + `pop_back`.
    pub fn pop(&mut self) -> Option<(u64, usize)> {
        let last = self.v.pop()?;
        if self.v.is_empty() {
            return Some(last);
        }
        let top = self.v[0];
        self.adjust_heap(last);
        Some(top)
    }

    /// libstdc++'s `__adjust_heap` from the root: move the hole down along the larger
    /// child (the right one on ties) to a leaf, then sift `value` up from there.
    fn adjust_heap(&mut self, value: (u64, usize)) {
        let len = self.v.len();
        let mut hole = 0usize;
        let mut second = 0usize;
        while second < (len - 1) / 2 {
            second = 2 * (second + 1);
            if self.v[second].0 < self.v[second - 1].0 {
                second -= 1;
            }
            self.v[hole] = self.v[second];
            hole = second;
        }
        if len.is_multiple_of(2) && second == (len - 2) / 2 {
            second = 2 * (second + 1);
            self.v[hole] = self.v[second - 1];
            hole = second - 1;
        }
        self.sift_up(hole, 0, value);
    }

    /// libstdc++'s `__push_heap`: place `value` at `hole`, moving strictly smaller
    /// parents down.
    fn sift_up(&mut self, mut hole: usize, top: usize, value: (u64, usize)) {
        while hole > top {
            let parent = (hole - 1) / 2;
            if self.v[parent].0 < value.0 {
                self.v[hole] = self.v[parent];
                hole = parent;
            } else {
                break;
            }
        }
        self.v[hole] = value;
    }
}

#[cfg(test)]
mod tests {
    use super::ReadyHeap;

    fn order(n: usize) -> Vec<usize> {
        let mut h = ReadyHeap::new();
        for i in 0..n {
            h.push(u64::MAX, i);
        }
        std::iter::from_fn(|| h.pop().map(|(_, i)| i)).collect()
    }

    #[test]
    fn ties_pop_in_libstdcxx_heap_order() {
        // What torch gives for the AccumulateGrad nodes of cat([w0, ..., w{n-1}]).
        assert_eq!(order(3), vec![0, 1, 2]);
        assert_eq!(order(4), vec![0, 2, 1, 3]);
        assert_eq!(order(5), vec![0, 2, 4, 1, 3]);
        assert_eq!(order(9), vec![0, 2, 6, 8, 5, 7, 4, 1, 3]);
    }

    #[test]
    fn larger_sequence_nr_first() {
        let mut h = ReadyHeap::new();
        for (s, i) in [(3, 0), (9, 1), (1, 2), (7, 3), (9, 4)] {
            h.push(s, i);
        }
        let seqs: Vec<u64> = std::iter::from_fn(|| h.pop().map(|(s, _)| s)).collect();
        assert_eq!(seqs, vec![9, 9, 7, 3, 1]);
    }
}
