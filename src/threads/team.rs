//! The intra-op team: the threads that big kernels split their work over.
//!
//! # Note: a team instead of a rayon pool
//! A rayon pool runs `install`ed work on one of its own threads while the caller blocks,
//! and an idle rayon worker falls asleep within microseconds. A kernel of a few hundred
//! microseconds then paid two or three thread wake-ups (tens of microseconds each on a
//! virtual machine) and left the calling thread's core idle: measured on 2 cores, `neg`
//! of 2^18 floats took 75 µs on two threads against 45 µs on one. A team works as
//! OpenMP's does: the calling thread runs tasks too, and the other members stay awake for
//! a while after their last task before they sleep, so back-to-back kernels (one op after
//! another from Python) start without a wake-up.
//!
//! A job is `tasks` indices and one `Fn(usize)`. Each thread of the team owns an equal
//! run of the indices, the same run in every job of that size: a kernel run again on the
//! same data (a training loop) finds its part in that core's own cache, which with two
//! cores made a 4 MB reduction three times faster than handing indices out first come,
//! first served. A thread done with its run takes indices from the others' (a member
//! asleep or slow to start does not hold the job up). Which thread runs an index thus
//! varies, but what an index computes does not: results depend on how a kernel splits
//! its work, never on the thread count or timing.
//!
//! One job runs at a time. A job started while another runs (from a second thread, or
//! from inside a task) runs on its calling thread alone, so nesting cannot deadlock. The
//! caller never waits for a member that has not joined its job: a caller whose members
//! are all asleep, or gone (a forked child), simply runs every task itself.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a member waits awake for the next job before it sleeps, about as long as
/// torch's OpenMP threads do. A member asleep costs the next job far more than its wake-up
/// call: measured on a 2-core virtual machine, with 1 ms of Python between two softmaxes
/// of 1024x1024 floats, members that slept after 150 µs made each softmax take 580 µs
/// (440 on one thread), and members awake for 5 ms kept it at 220, as back to back.
const MEMBER_AWAKE: Duration = Duration::from_millis(3);

/// For this long a waiting member spins flat out; after it, it yields the core between
/// looks, so that a waiting member costs other threads (the engine's, another process)
/// little.
const MEMBER_SPIN: Duration = Duration::from_micros(50);

/// How long the caller spins for its members to finish before it sleeps: they usually
/// finish together, as the tasks are of one size.
const CALLER_SPIN: Duration = Duration::from_micros(50);

type Task<'a> = dyn Fn(usize) + Sync + 'a;

/// A run's cursor, alone in its cache line: the threads claim from their own cursors at
/// once, and cursors sharing a line would bounce it between cores at every claim.
#[repr(align(128))]
struct Cursor(AtomicUsize);

/// One job, on the stack of the thread that started it.
struct Job<'a> {
    task: &'a Task<'a>,
    /// Per thread of the team (the caller first): the next index of its run to claim,
    /// and the run's end. A run is used up once its cursor reaches the end.
    cursors: Vec<Cursor>,
    ends: Vec<usize>,
    /// Members (the caller not counted) that joined and have not left yet.
    active: AtomicUsize,
    /// The first panic of a task, rethrown on the calling thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl<'a> Job<'a> {
    /// `tasks` indices split in equal runs over `threads` threads.
    fn new(task: &'a Task<'a>, tasks: usize, threads: usize) -> Job<'a> {
        let start = |t: usize| (tasks as u128 * t as u128 / threads as u128) as usize;
        Job {
            task,
            cursors: (0..threads)
                .map(|t| Cursor(AtomicUsize::new(start(t))))
                .collect(),
            ends: (0..threads).map(|t| start(t + 1)).collect(),
            active: AtomicUsize::new(0),
            panic: Mutex::new(None),
        }
    }

    /// As thread `me` of the team: run the indices of its own run, then those left in
    /// the others'. A panic ends the claiming, for every thread, and is kept for the
    /// caller.
    fn work(&self, me: usize) {
        let threads = self.cursors.len();
        for run in (0..threads).map(|k| (me + k) % threads) {
            let (cursor, end) = (&self.cursors[run], self.ends[run]);
            loop {
                let i = cursor.0.fetch_add(1, Ordering::Relaxed);
                if i >= end {
                    break;
                }
                if let Err(payload) = catch_unwind(AssertUnwindSafe(|| (self.task)(i))) {
                    for (cursor, &end) in self.cursors.iter().zip(&self.ends) {
                        cursor.0.store(end, Ordering::Relaxed);
                    }
                    lock(&self.panic).get_or_insert(payload);
                    return;
                }
            }
        }
    }
}

/// A job's address, handed to the members while it is on offer.
#[derive(Clone, Copy)]
struct JobRef(*const Job<'static>);

// SAFETY: a `JobRef` is dereferenced only by a member that joined the job while it was on
// offer; the caller withdraws the offer and waits for every joined member to leave before
// the job goes out of scope (`Team::run`). `Job` itself is Sync.
unsafe impl Send for JobRef {}

/// What the members read under the lock.
struct Offer {
    job: Option<JobRef>,
    /// Bumped with every job offered.
    generation: usize,
    /// Members asleep on `Shared::wake`.
    sleepers: usize,
    shutdown: bool,
}

struct Shared {
    offer: Mutex<Offer>,
    /// Wakes sleeping members: a job is offered, or the team is shut down.
    wake: Condvar,
    /// `Offer::generation`, for spinning members to watch without the lock.
    generation: AtomicUsize,
    /// The caller sleeps here until the last member leaves its job.
    left: Mutex<()>,
    left_cv: Condvar,
}

/// A calling thread plus `members` threads.
pub struct Team {
    shared: Arc<Shared>,
    members: usize,
    /// Held by the thread whose job runs.
    busy: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks but a task's payload store; the data
    // stays valid either way.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Team {
    /// A team for `threads` threads in all: the caller and `threads - 1` members (fewer if
    /// the system refuses to start some).
    pub fn new(threads: usize) -> Team {
        let shared = Arc::new(Shared {
            offer: Mutex::new(Offer {
                job: None,
                generation: 0,
                sleepers: 0,
                shutdown: false,
            }),
            wake: Condvar::new(),
            generation: AtomicUsize::new(0),
            left: Mutex::new(()),
            left_cv: Condvar::new(),
        });
        let mut members = 0;
        for i in 1..threads {
            let shared = shared.clone();
            // A member's place in the team is fixed: the runs it owns stay its own.
            let me = members + 1;
            let started = std::thread::Builder::new()
                .name(format!("ferrograd-intra-op-{i}"))
                .spawn(move || member(&shared, me));
            if started.is_ok() {
                members += 1;
            }
        }
        Team {
            shared,
            members,
            busy: AtomicBool::new(false),
        }
    }

    /// Run `task(0)`, ..., `task(tasks - 1)`, each once, on the team, and return when all
    /// have run. A panic in a task is rethrown here once every member has left the job.
    pub fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        if tasks <= 1 || self.members == 0 || self.busy.swap(true, Ordering::Acquire) {
            (0..tasks).for_each(task);
            return;
        }
        let job = Job::new(task, tasks, self.members + 1);
        let shared = &*self.shared;
        {
            let mut offer = lock(&shared.offer);
            // SAFETY (the lifetime erased): see `JobRef`; the offer is withdrawn and the
            // joined members waited for below, before `job` is dropped, and nothing in
            // between can unwind (`work` catches task panics).
            let erased = unsafe {
                std::mem::transmute::<*const Job<'_>, *const Job<'static>>(&job as *const Job<'_>)
            };
            offer.job = Some(JobRef(erased));
            offer.generation = offer.generation.wrapping_add(1);
            shared.generation.store(offer.generation, Ordering::Release);
            if offer.sleepers > 0 {
                shared.wake.notify_all();
            }
        }
        job.work(0);
        lock(&shared.offer).job = None;
        wait_until_left(shared, &job);
        self.busy.store(false, Ordering::Release);
        if let Some(payload) = job.panic.into_inner().unwrap_or_else(|e| e.into_inner()) {
            resume_unwind(payload);
        }
    }
}

/// Wait (spinning, then asleep) until every member that joined `job` has left it.
fn wait_until_left(shared: &Shared, job: &Job<'_>) {
    let start = Instant::now();
    let mut spins = 0u32;
    while job.active.load(Ordering::Acquire) != 0 {
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(64) && start.elapsed() > CALLER_SPIN {
            let mut guard = lock(&shared.left);
            // A member takes `left` before it notifies, so it cannot notify between this
            // check and the wait.
            while job.active.load(Ordering::Acquire) != 0 {
                guard = shared
                    .left_cv
                    .wait(guard)
                    .unwrap_or_else(|e| e.into_inner());
            }
            return;
        }
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        lock(&self.shared.offer).shutdown = true;
        self.shared.wake.notify_all();
    }
}

/// A member's life: wait for a job (spinning, then asleep), join it, work, leave.
fn member(shared: &Shared, me: usize) {
    let mut seen = 0usize;
    loop {
        let start = Instant::now();
        let mut spins = 0u32;
        let mut yielding = false;
        while shared.generation.load(Ordering::Acquire) == seen {
            spins = spins.wrapping_add(1);
            if yielding {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
            if spins.is_multiple_of(64) {
                let waited = start.elapsed();
                if waited > MEMBER_AWAKE {
                    break;
                }
                yielding = waited > MEMBER_SPIN;
            }
        }
        let job = {
            let mut offer = lock(&shared.offer);
            while offer.generation == seen && !offer.shutdown {
                offer.sleepers += 1;
                offer = shared.wake.wait(offer).unwrap_or_else(|e| e.into_inner());
                offer.sleepers -= 1;
            }
            if offer.shutdown {
                return;
            }
            seen = offer.generation;
            let Some(job) = offer.job else {
                continue; // withdrawn before this member came: its caller did the work
            };
            // SAFETY: the job is on offer, so its caller has not withdrawn it, and it
            // cannot return before this member leaves (`active` counts it from here).
            unsafe { &*job.0 }.active.fetch_add(1, Ordering::Relaxed);
            job
        };
        // SAFETY: joined above; the job stays alive until `active` drops back.
        let job = unsafe { &*job.0 };
        job.work(me);
        if job.active.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The last to leave: wake the caller if it sleeps. `job` may be gone from
            // here on (a spinning caller returns at once), so only `shared` is touched.
            let _guard = lock(&shared.left);
            shared.left_cv.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn every_task_runs_once() {
        let team = Team::new(3);
        for tasks in [0, 1, 2, 7, 1000] {
            let hits: Vec<AtomicU64> = (0..tasks).map(|_| AtomicU64::new(0)).collect();
            team.run(tasks, &|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        }
    }

    #[test]
    fn nested_and_concurrent_jobs_run_inline() {
        let team = Arc::new(Team::new(2));
        let total = AtomicU64::new(0);
        team.run(4, &|_| {
            team.run(5, &|_| {
                total.fetch_add(1, Ordering::Relaxed);
            })
        });
        assert_eq!(total.load(Ordering::Relaxed), 20);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let team = team.clone();
                std::thread::spawn(move || {
                    let sum = AtomicU64::new(0);
                    for _ in 0..200 {
                        team.run(16, &|i| {
                            sum.fetch_add(i as u64, Ordering::Relaxed);
                        });
                    }
                    sum.load(Ordering::Relaxed)
                })
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().unwrap(), 200 * 120);
        }
    }

    #[test]
    fn a_panic_reaches_the_caller_and_the_team_goes_on() {
        let team = Team::new(2);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            team.run(64, &|i| {
                if i == 33 {
                    panic!("task 33");
                }
            })
        }));
        let payload = caught.expect_err("the panic comes back");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"task 33"));
        let count = AtomicU64::new(0);
        team.run(10, &|_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(count.load(Ordering::Relaxed), 10);
    }

    #[test]
    fn members_asleep_wake_for_the_next_job() {
        let team = Team::new(2);
        std::thread::sleep(MEMBER_AWAKE * 2);
        let count = AtomicU64::new(0);
        team.run(100, &|_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(count.load(Ordering::Relaxed), 100);
    }
}
