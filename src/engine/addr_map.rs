//! Hash maps keyed by node addresses. The engine looks every node up once or twice per
//! backward; std's default SipHash (built against adversarial keys) costs more there
//! than the node's own bookkeeping. Addresses are not attacker-chosen, so one multiply
//! and a fold (mixing the high bits back into the low ones the table indexes by, since
//! aligned addresses end in zero bits) spread them well enough.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Maps from an address (or a tuple of them) to `V`.
pub type AddrMap<K, V> = HashMap<K, V, BuildHasherDefault<AddrHasher>>;

#[derive(Default)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, n: u64) {
        // Golden-ratio multiply (as FxHash); rotating first keeps a tuple's fields apart.
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_addresses_spread_over_low_bits() {
        use std::hash::BuildHasher;
        let build = BuildHasherDefault::<AddrHasher>::default();
        let mut buckets = [0usize; 64];
        for i in 0..6400usize {
            let addr = 0x7f00_0000_0000 + i * 64;
            buckets[(build.hash_one(addr) & 63) as usize] += 1;
        }
        assert!(buckets.iter().all(|&n| n > 50 && n < 150), "{buckets:?}");
    }
}
