//! The threads that share a parallel wave's big nodes with the calling thread.
//!
//! Their number is the inter-op count (`threads::num_interop_threads`, torch's
//! `set_num_interop_threads`), the calling thread included.
//!
//! Not rayon, on purpose. A rayon worker that waits (in `join`, `par_iter`, `install`)
//! runs other queued jobs on top of its own stack meanwhile. A node may run Python, and
//! Python may block — on the GIL, on a user's `threading.Lock` — on something held
//! further down that same stack, or by a thread that is itself waiting for the pool:
//! the whole pool then deadlocks. So nodes never run on the intra-op pool, which is left
//! to kernel chunks (pure Rust, blocking on nothing but other chunks). A wave's nodes are
//! claimed one at a time by the caller and by helper threads that never run anything
//! else while they hold one; the caller runs every node nobody else has claimed, so a
//! wave completes even when every helper is busy or blocked elsewhere.

use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::engine::modes::ThreadModes;

/// Stack size of helper threads and of fresh re-entrant backward threads: nodes may run
/// Python, which may itself start a backward.
pub const STACK_SIZE: usize = 16 << 20;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section here is a single push/pop/assignment: a poisoned lock still
    // guards consistent data.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Work a helper can lend a hand with.
trait Help: Send + Sync {
    fn help(&self);
}

struct Pool {
    queue: Mutex<VecDeque<Arc<dyn Help>>>,
    wake: Condvar,
    spawned: AtomicUsize,
}

static POOL: Pool = Pool {
    queue: Mutex::new(VecDeque::new()),
    wake: Condvar::new(),
    spawned: AtomicUsize::new(0),
};

fn helper_loop() {
    loop {
        let ticket = {
            let mut q = lock(&POOL.queue);
            loop {
                if let Some(t) = q.pop_front() {
                    break t;
                }
                q = POOL.wake.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        ticket.help();
    }
}

/// Make sure at least `n` helpers exist (a failed spawn only means less help).
fn ensure_helpers(n: usize) {
    while POOL.spawned.load(Ordering::Acquire) < n {
        let count = POOL.spawned.fetch_add(1, Ordering::AcqRel);
        if count >= n {
            POOL.spawned.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        let spawned = std::thread::Builder::new()
            .name(format!("ferrograd-engine-{count}"))
            .stack_size(STACK_SIZE)
            .spawn(helper_loop);
        if spawned.is_err() {
            POOL.spawned.fetch_sub(1, Ordering::AcqRel);
            return;
        }
    }
}

struct Wave<T, R> {
    jobs: Vec<Mutex<Option<T>>>,
    results: Vec<Mutex<Option<std::thread::Result<R>>>>,
    next: AtomicUsize,
    done: Mutex<usize>,
    all_done: Condvar,
    work: Box<dyn Fn(T) -> R + Send + Sync>,
    /// The caller's modes, for helpers; taken when the wave ends so that a late helper
    /// holds nothing of the caller's (hooks, nodes) past the wave.
    modes: Mutex<Option<ThreadModes>>,
}

impl<T: Send, R: Send> Wave<T, R> {
    /// Claim and run jobs until none is left unclaimed.
    fn run_claimed(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::AcqRel);
            let Some(job) = self.jobs.get(i).and_then(|j| lock(j).take()) else {
                return;
            };
            let result = catch_unwind(AssertUnwindSafe(|| (self.work)(job)));
            *lock(&self.results[i]) = Some(result);
            let mut done = lock(&self.done);
            *done += 1;
            if *done == self.jobs.len() {
                self.all_done.notify_all();
            }
        }
    }
}

impl<T: Send, R: Send> Help for Wave<T, R> {
    fn help(&self) {
        let Some(modes) = lock(&self.modes).clone() else {
            return;
        };
        let _modes = modes.enter();
        self.run_claimed();
    }
}

/// Run `work` on every item, the caller taking part, with up to `helpers` other threads
/// (carrying the caller's thread-local modes); results in item order. A panic in any
/// item is resumed on the caller once every item has finished.
pub fn run_wave<T, R>(
    items: Vec<T>,
    helpers: usize,
    work: impl Fn(T) -> R + Send + Sync + 'static,
) -> Vec<R>
where
    T: Send + 'static,
    R: Send + 'static,
{
    let n = items.len();
    let wave = Arc::new(Wave {
        results: (0..n).map(|_| Mutex::new(None)).collect(),
        jobs: items.into_iter().map(|t| Mutex::new(Some(t))).collect(),
        next: AtomicUsize::new(0),
        done: Mutex::new(0),
        all_done: Condvar::new(),
        work: Box::new(work),
        modes: Mutex::new(Some(ThreadModes::capture())),
    });
    let helpers = helpers.min(n.saturating_sub(1));
    if helpers > 0 {
        // These helpers are torch's inter-op pool: its size is fixed from here on.
        crate::threads::interop_started();
        ensure_helpers(helpers);
        let ticket: Arc<dyn Help> = wave.clone();
        lock(&POOL.queue).extend(std::iter::repeat_n(ticket, helpers));
        for _ in 0..helpers {
            POOL.wake.notify_one();
        }
    }
    wave.run_claimed();
    {
        let mut done = lock(&wave.done);
        while *done < n {
            done = wave.all_done.wait(done).unwrap_or_else(|e| e.into_inner());
        }
    }
    // Tickets nobody picked up yet would keep the wave (and its captures) alive.
    let me = Arc::as_ptr(&wave) as *const ();
    lock(&POOL.queue).retain(|t| Arc::as_ptr(t) as *const () != me);
    lock(&wave.modes).take();
    wave.results
        .iter()
        .map(|r| match lock(r).take() {
            Some(Ok(v)) => v,
            Some(Err(panic)) => resume_unwind(panic),
            None => unreachable!("every job ran before all_done"),
        })
        .collect()
}
