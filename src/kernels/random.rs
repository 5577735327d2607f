//! The process-wide random generator (xoshiro256**, seeded by `manual_seed`) and the
//! uniform / normal / integer samplers built on it.

use std::sync::Mutex;

pub struct Generator {
    s: [u64; 4],
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Generator {
    pub fn seeded(seed: u64) -> Generator {
        let mut x = seed;
        Generator {
            s: [
                splitmix(&mut x),
                splitmix(&mut x),
                splitmix(&mut x),
                splitmix(&mut x),
            ],
        }
    }
    pub fn next_u64(&mut self) -> u64 {
        let r = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }
    /// Uniform in [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
    /// Uniform integer in [low, high).
    pub fn int_range(&mut self, low: i64, high: i64) -> i64 {
        let span = (high - low) as u64;
        low + (self.next_u64() % span) as i64
    }
}

pub static GENERATOR: Mutex<Option<Generator>> = Mutex::new(None);
static INITIAL_SEED: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(67280421310721);

pub fn manual_seed(seed: u64) {
    INITIAL_SEED.store(seed, std::sync::atomic::Ordering::Relaxed);
    *GENERATOR.lock().unwrap_or_else(|e| e.into_inner()) = Some(Generator::seeded(seed));
}

pub fn initial_seed() -> u64 {
    INITIAL_SEED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Run `f` with the global generator.
pub fn with_generator<R>(f: impl FnOnce(&mut Generator) -> R) -> R {
    let mut g = GENERATOR.lock().unwrap_or_else(|e| e.into_inner());
    let gen = g.get_or_insert_with(|| Generator::seeded(initial_seed()));
    f(gen)
}

/// Size in bytes of the state `get_state` returns: the four xoshiro words, then the
/// initial seed, all little-endian.
pub const STATE_BYTES: usize = 40;

/// The generator's whole state (`ferrograd.get_rng_state()`), seeding it first if no
/// number was drawn yet, so that restoring it replays the same numbers.
pub fn get_state() -> [u8; STATE_BYTES] {
    let seed = initial_seed();
    let words = with_generator(|g| g.s);
    let mut out = [0u8; STATE_BYTES];
    for (chunk, w) in out.chunks_exact_mut(8).zip(words.iter().chain([&seed])) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// Restore a state from `get_state`. An all-zero xoshiro state would only ever produce
/// zeros, so it is refused as torch refuses an invalid mt19937 state.
pub fn set_state(bytes: &[u8]) -> crate::error::Result<()> {
    if bytes.len() != STATE_BYTES {
        return Err(crate::error::Error::runtime(format!(
            "Expected a CPUGeneratorImplState of size {STATE_BYTES} but found the input RNG state size to be {}",
            bytes.len()
        )));
    }
    let mut words = [0u64; 5];
    for (w, chunk) in words.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        *w = u64::from_le_bytes(b);
    }
    if words[..4].iter().all(|&w| w == 0) {
        return Err(crate::error::Error::runtime("Invalid xoshiro256** state"));
    }
    INITIAL_SEED.store(words[4], std::sync::atomic::Ordering::Relaxed);
    *GENERATOR.lock().unwrap_or_else(|e| e.into_inner()) = Some(Generator {
        s: [words[0], words[1], words[2], words[3]],
    });
    Ok(())
}

#[cfg(test)]
mod state_tests {
    use super::*;

    #[test]
    fn state_round_trips() {
        let saved = get_state();
        let a: Vec<u64> = (0..4).map(|_| with_generator(|g| g.next_u64())).collect();
        set_state(&saved).unwrap();
        let b: Vec<u64> = (0..4).map(|_| with_generator(|g| g.next_u64())).collect();
        assert_eq!(a, b);
        assert!(set_state(&[0u8; 3]).is_err());
        assert!(set_state(&[0u8; STATE_BYTES]).is_err());
    }
}
