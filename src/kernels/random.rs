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
