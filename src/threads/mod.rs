//! How many threads ferrograd uses, with torch's four knobs: `set_num_threads` (intra-op:
//! the team that big kernels split their work over) and `set_num_interop_threads` (the
//! engine's helper threads, which run independent backward nodes side by side; see
//! engine/workers.rs). Results never depend on either count: kernels split work in
//! chunks fixed by the sizes alone (see Note: fixed-order reductions in
//! kernels/reduce.rs), and the engine sums a buffer's contributions in edge order.
//!
//! # Note: the intra-op team
//! torch lets `set_num_threads` change the count at any time, so kernels run on a team
//! (team.rs) held as an `Arc<Team>` in a slot: a kernel launch clones the Arc (the lock is
//! held for that clone only, never while work runs) and runs on it, so a kernel still
//! running keeps its team alive after `set_num_threads` has replaced it; the old team's
//! threads exit once its last kernel returns. Only kernels big enough to split come here
//! (`kernels::par_for`): small ops never touch the slot, and reading the count is one
//! atomic load.

mod team;

pub use team::Team;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result};

/// The intra-op count; 0 until first read or set (then the environment decides).
static INTRA_OP: AtomicUsize = AtomicUsize::new(0);

/// The team kernels run on, with the count it was built for.
static TEAM: Mutex<Option<(usize, Arc<Team>)>> = Mutex::new(None);

/// Most threads one team is built with, whatever the count says: torch accepts any int32
/// count (and reports it back), but thousands of threads only cost memory here.
const MAX_TEAM_THREADS: usize = 1024;

/// The machine's logical CPU count (1 if unknown), asked once: the engine reads the
/// inter-op count on every backward, and asking means reading cgroup files.
fn cpu_count() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A positive thread count from an environment variable. OpenMP's list form ("4,2":
/// one count per nesting level) gives its first entry; anything else is ignored.
fn env_count(var: &str) -> Option<usize> {
    let value = std::env::var(var).ok()?;
    let first = value.split(',').next()?.trim();
    first.parse::<usize>().ok().filter(|&n| n > 0)
}

/// The intra-op count before any `set_num_threads`: `OMP_NUM_THREADS` (torch's knob),
/// else `RAYON_NUM_THREADS`, else one per logical CPU.
fn default_num_threads() -> usize {
    env_count("OMP_NUM_THREADS")
        .or_else(|| env_count("RAYON_NUM_THREADS"))
        .unwrap_or_else(cpu_count)
}

/// torch's `get_num_threads()`.
pub fn num_threads() -> usize {
    match INTRA_OP.load(Ordering::Relaxed) {
        0 => {
            // A concurrent `set_num_threads` wins over the environment.
            let _ = INTRA_OP.compare_exchange(
                0,
                default_num_threads(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            INTRA_OP.load(Ordering::Relaxed)
        }
        n => n,
    }
}

/// torch's `set_num_threads(n)`: later kernel launches run on a team of `n` threads.
pub fn set_num_threads(n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::runtime("set_num_threads expects a positive integer"));
    }
    INTRA_OP.store(n, Ordering::Relaxed);
    // Let the old team's threads go now rather than at the next big kernel; one still
    // running a kernel is kept alive by that kernel's Arc.
    let old = lock_team().take_if(|(built_for, _)| *built_for != n);
    drop(old);
    Ok(())
}

fn lock_team() -> std::sync::MutexGuard<'static, Option<(usize, Arc<Team>)>> {
    // The slot is only ever assigned whole: a poisoned lock still guards a valid value.
    TEAM.lock().unwrap_or_else(|e| e.into_inner())
}

/// The team for the current count, built on first use after a change.
pub fn intra_op_team() -> Arc<Team> {
    let n = num_threads();
    let mut slot = lock_team();
    if let Some((built_for, team)) = slot.as_ref() {
        if *built_for == n {
            return team.clone();
        }
    }
    let team = Arc::new(Team::new(n.min(MAX_TEAM_THREADS)));
    let old = slot.replace((n, team.clone()));
    drop(slot);
    drop(old);
    team
}

/// The inter-op setting: unset, set by the user, or frozen by the engine's first use.
static INTEROP: AtomicUsize = AtomicUsize::new(INTEROP_UNSET);
const INTEROP_UNSET: usize = 0;
const INTEROP_STARTED: usize = usize::MAX;

/// torch's `get_num_interop_threads()`: the threads a backward wave may use, the
/// calling thread included. One per logical CPU unless set.
pub fn num_interop_threads() -> usize {
    match INTEROP.load(Ordering::Relaxed) {
        INTEROP_UNSET | INTEROP_STARTED => cpu_count(),
        n => n,
    }
}

/// torch's `set_num_interop_threads(n)`: allowed once, and only before the engine has
/// started its helper threads (torch: before its inter-op pool exists).
pub fn set_num_interop_threads(n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::runtime(
            "set_num_interop_threads expects a positive integer",
        ));
    }
    INTEROP
        .compare_exchange(INTEROP_UNSET, n, Ordering::AcqRel, Ordering::Relaxed)
        .map(|_| ())
        .map_err(|_| {
            Error::runtime(
                "Error: cannot set number of interop threads after parallel work has started or set_num_interop_threads called",
            )
        })
}

/// The engine is about to start helper threads: from now on the inter-op count is fixed.
pub fn interop_started() {
    let _ = INTEROP.compare_exchange(
        INTEROP_UNSET,
        INTEROP_STARTED,
        Ordering::AcqRel,
        Ordering::Relaxed,
    );
}
