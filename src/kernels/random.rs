//! Random generators (xoshiro256**): the process-wide one (seeded by `manual_seed`) and
//! the `ferrograd.Generator` objects, and the uniform / normal / integer samplers.

use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

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

/// torch's default seed, which a generator starts from until it is seeded.
const DEFAULT_SEED: u64 = 67280421310721;

/// A generator's numbers and the seed they started from; the numbers are seeded lazily
/// from it on first use.
struct GenState {
    gen: Option<Generator>,
    seed: u64,
}

/// A random generator shared by the Python objects that name it (`ferrograd.Generator`)
/// and the ops that draw from it; `RngHandle::default_cpu()` is the process-wide one.
///
/// Its lock is a leaf: it is held only while numbers are drawn, never across an op,
/// another lock or a Python call.
#[derive(Clone)]
pub struct RngHandle(Arc<Mutex<GenState>>);

impl Default for RngHandle {
    fn default() -> Self {
        RngHandle(Arc::new(Mutex::new(GenState {
            gen: None,
            seed: DEFAULT_SEED,
        })))
    }
}

impl RngHandle {
    /// The process-wide CPU generator (`ferrograd.default_generator`).
    pub fn default_cpu() -> &'static RngHandle {
        static DEFAULT: LazyLock<RngHandle> = LazyLock::new(RngHandle::default);
        &DEFAULT
    }

    fn lock(&self) -> MutexGuard<'_, GenState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn manual_seed(&self, seed: u64) {
        let mut s = self.lock();
        s.seed = seed;
        s.gen = Some(Generator::seeded(seed));
    }

    pub fn initial_seed(&self) -> u64 {
        self.lock().seed
    }

    /// Run `f` with the generator (only to draw numbers: see the lock note above).
    pub fn with<R>(&self, f: impl FnOnce(&mut Generator) -> R) -> R {
        let mut s = self.lock();
        let seed = s.seed;
        f(s.gen.get_or_insert_with(|| Generator::seeded(seed)))
    }

    /// The whole state (`get_rng_state()`, `Generator.get_state()`), seeding the
    /// generator first if no number was drawn yet, so restoring it replays the same
    /// numbers: the four xoshiro words, then the initial seed, all little-endian.
    pub fn get_state(&self) -> [u8; STATE_BYTES] {
        let seed = self.initial_seed();
        let words = self.with(|g| g.s);
        let mut out = [0u8; STATE_BYTES];
        for (chunk, w) in out.chunks_exact_mut(8).zip(words.iter().chain([&seed])) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// Restore a state from `get_state`. An all-zero xoshiro state would only ever
    /// produce zeros, so it is refused as torch refuses an invalid mt19937 state.
    pub fn set_state(&self, bytes: &[u8]) -> crate::error::Result<()> {
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
        let mut s = self.lock();
        s.seed = words[4];
        s.gen = Some(Generator {
            s: [words[0], words[1], words[2], words[3]],
        });
        Ok(())
    }

    /// Whether two handles name the same generator.
    pub fn same(&self, other: &RngHandle) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Size in bytes of a generator's state (see `RngHandle::get_state`).
pub const STATE_BYTES: usize = 40;

pub fn manual_seed(seed: u64) {
    RngHandle::default_cpu().manual_seed(seed)
}

pub fn initial_seed() -> u64 {
    RngHandle::default_cpu().initial_seed()
}

pub fn get_state() -> [u8; STATE_BYTES] {
    RngHandle::default_cpu().get_state()
}

pub fn set_state(bytes: &[u8]) -> crate::error::Result<()> {
    RngHandle::default_cpu().set_state(bytes)
}

#[cfg(test)]
mod state_tests {
    use super::*;

    #[test]
    fn state_round_trips() {
        let saved = get_state();
        let draw = || RngHandle::default_cpu().with(|g| g.next_u64());
        let a: Vec<u64> = (0..4).map(|_| draw()).collect();
        set_state(&saved).unwrap();
        let b: Vec<u64> = (0..4).map(|_| draw()).collect();
        assert_eq!(a, b);
        assert!(set_state(&[0u8; 3]).is_err());
        assert!(set_state(&[0u8; STATE_BYTES]).is_err());
    }

    #[test]
    fn generators_are_independent() {
        let (a, b) = (RngHandle::default(), RngHandle::default());
        a.manual_seed(7);
        b.manual_seed(7);
        let x = a.with(|g| g.next_u64());
        assert_eq!(x, b.with(|g| g.next_u64()));
        assert_ne!(a.with(|g| g.next_u64()), x);
        assert!(a.same(&a.clone()) && !a.same(&b));
    }
}
