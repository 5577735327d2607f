//! The autograd profiler's recording side (spec profiler.md): every op, backward node,
//! `record_function` range and tensor allocation passes one of the recording sites below,
//! which append an [`Event`] to the calling thread's buffer. Turning the raw events into
//! torch's `FunctionEvent`s, tables and traces is Python's job (`autograd/profiler_util.py`),
//! done once when the results are first read.
//!
//! Cost when off: one relaxed atomic load per site ([`RUNNING`]). When on: a clock read at
//! each end of a range and a push into an uncontended per-thread buffer; names are static
//! strings resolved to torch's spelling only when the session stops.
//!
//! Who records: the thread that started the session, and every thread working for it
//! (engine helpers get the session through `engine::modes::ThreadModes`, like grad mode).
//! Other threads record nothing, as torch's thread-local profiler.

mod event;
mod names;

pub use event::{Event, Inputs, Kind, Name};

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// How many sessions are running in the process: the one check every site makes first.
static RUNNING: AtomicUsize = AtomicUsize::new(0);
/// Thread ids as the profiler reports them (1, 2, ...), in the order threads first ask.
static NEXT_THREAD_ID: AtomicU64 = AtomicU64::new(1);
/// Session numbers: a thread's buffer belongs to the session with its number (addresses
/// are reused once a session is freed, numbers never).
static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);
/// Supplied by the bindings: the calling Python stack, innermost frame first.
static STACK_PROVIDER: OnceLock<fn() -> Option<Vec<String>>> = OnceLock::new();

/// What a session records besides names and times.
#[derive(Clone, Copy, Debug, Default)]
pub struct Config {
    pub record_shapes: bool,
    pub profile_memory: bool,
    pub with_stack: bool,
}

type Buffer = Arc<Mutex<Vec<Event>>>;

/// One `profile()` run: its options, its clock origin and the buffers of every thread that
/// recorded into it.
pub struct Session {
    number: u64,
    config: Config,
    origin: Instant,
    unix_origin_ns: u128,
    next_id: AtomicU64,
    buffers: Mutex<Vec<Buffer>>,
}

/// `record_function` ranges entered but not yet exited: handle, session, event. Global, as
/// a range may be exited on another thread (`_call_end_callbacks_on_future`); few are open
/// at a time.
static OPEN_USER_RANGES: Mutex<Vec<(u64, Weak<Session>, Event)>> = Mutex::new(Vec::new());
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

impl Session {
    fn now_ns(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

thread_local! {
    /// The session this thread records into.
    static CURRENT: RefCell<Option<Arc<Session>>> = const { RefCell::new(None) };
    /// This thread's buffer and the number of the session it belongs to.
    static BUFFER: RefCell<Option<(u64, Buffer)>> = const { RefCell::new(None) };
    static THREAD_ID: Cell<u64> = const { Cell::new(0) };
}

/// This thread's id as the profiler (and a node's `fwd_thread`) reports it.
pub fn thread_id() -> u64 {
    THREAD_ID.with(|t| {
        if t.get() == 0 {
            t.set(NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

pub fn set_stack_provider(f: fn() -> Option<Vec<String>>) {
    let _ = STACK_PROVIDER.set(f);
}

/// The session this thread records into, if any (cheap when none runs anywhere).
#[inline]
pub fn current() -> Option<Arc<Session>> {
    if RUNNING.load(Ordering::Relaxed) == 0 {
        return None;
    }
    CURRENT.with(|c| c.borrow().clone())
}

/// Install `session` as this thread's (engine helpers), returning the previous one.
pub fn replace_current(session: Option<Arc<Session>>) -> Option<Arc<Session>> {
    CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), session))
}

/// Start recording on this thread.
pub fn start(config: Config) -> Result<()> {
    if CURRENT.with(|c| c.borrow().is_some()) {
        return Err(Error::runtime("Profiler is already enabled on this thread"));
    }
    let session = Arc::new(Session {
        number: NEXT_SESSION.fetch_add(1, Ordering::Relaxed),
        config,
        origin: Instant::now(),
        unix_origin_ns: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
        next_id: AtomicU64::new(1),
        buffers: Mutex::new(Vec::new()),
    });
    replace_current(Some(session));
    RUNNING.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// What a stopped session hands back: its events (in no particular order) and its clock
/// origin as nanoseconds since the Unix epoch.
pub struct Recording {
    pub events: Vec<Event>,
    pub unix_origin_ns: u128,
}

/// Stop this thread's session and collect every thread's events. Ranges still open (a
/// `record_function` never exited) are dropped.
pub fn stop() -> Result<Recording> {
    let Some(session) = replace_current(None) else {
        return Err(Error::runtime(
            "Can't disable the profiler when it's not running",
        ));
    };
    RUNNING.fetch_sub(1, Ordering::Relaxed);
    let buffers = std::mem::take(&mut *lock(&session.buffers));
    let mut events = Vec::new();
    for b in buffers {
        events.append(&mut lock(&b));
    }
    Ok(Recording {
        events,
        unix_origin_ns: session.unix_origin_ns,
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Critical sections are pushes and takes of plain data: a poisoned lock is consistent.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn push(session: &Arc<Session>, event: Event) {
    let key = session.number;
    BUFFER.with(|b| {
        let mut b = b.borrow_mut();
        match &*b {
            Some((k, buf)) if *k == key => lock(buf).push(event),
            _ => {
                let buf: Buffer = Arc::new(Mutex::new(vec![event]));
                lock(&session.buffers).push(buf.clone());
                *b = Some((key, buf));
            }
        }
    });
}

/// An open range: recorded when dropped, with the time it was alive.
pub struct Range {
    session: Arc<Session>,
    event: Event,
}

/// An event of this thread starting now.
fn new_event(session: &Session, name: Name, kind: Kind) -> Event {
    Event::new(session.next_id(), name, kind, thread_id(), session.now_ns())
}

impl Range {
    fn open(session: Arc<Session>, name: Name, kind: Kind) -> Range {
        let event = new_event(&session, name, kind);
        Range { session, event }
    }

    /// The sequence number of the node this op created (or this node has).
    pub fn set_sequence_nr(&mut self, sequence_nr: u64, fwd_thread: u64) {
        self.event.sequence_nr = i64::try_from(sequence_nr).unwrap_or(-1);
        self.event.fwd_thread = fwd_thread;
    }

    fn with_inputs<'a>(mut self, inputs: impl Iterator<Item = Option<&'a Tensor>>) -> Range {
        if self.session.config.record_shapes {
            self.event.inputs = Some(Box::new(Inputs::of(inputs)));
        }
        self
    }
}

impl Drop for Range {
    fn drop(&mut self) {
        self.event.end_ns = self.session.now_ns();
        let event = std::mem::replace(&mut self.event, Event::placeholder());
        push(&self.session, event);
    }
}

/// A forward op's range (`aten::<op>`), named from its backward node's name.
#[inline]
pub fn op_range(backward_name: &'static str, inplace: bool, inputs: &[Tensor]) -> Option<Range> {
    let session = current()?;
    Some(open_op(
        session,
        Name::Op {
            backward_name,
            inplace,
        },
        inputs,
    ))
}

/// A forward op's range under its own torch name (`aten::ones_like`), for ops that have no
/// backward node to be named after.
#[inline]
pub fn named_op_range(name: &'static str, inputs: &[Tensor]) -> Option<Range> {
    let session = current()?;
    Some(open_op(session, Name::Static(name), inputs))
}

#[cold]
fn open_op(session: Arc<Session>, name: Name, inputs: &[Tensor]) -> Range {
    let with_stack = session.config.with_stack;
    let mut range = Range::open(session, name, Kind::CpuOp).with_inputs(inputs.iter().map(Some));
    if with_stack {
        range.event.stack = STACK_PROVIDER.get().and_then(|f| f());
    }
    range
}

/// The engine's ranges around one node: `autograd::engine::evaluate_function: <node>`
/// (`wrapper`) or the node's application itself, with the node's sequence number and the
/// thread that recorded it.
#[inline]
pub fn node_range(
    node: &crate::autograd::node::Node,
    wrapper: bool,
    grads: &[Option<Tensor>],
) -> Option<Range> {
    let session = current()?;
    Some(open_node(session, node, wrapper, grads))
}

#[cold]
fn open_node(
    session: Arc<Session>,
    node: &crate::autograd::node::Node,
    wrapper: bool,
    grads: &[Option<Tensor>],
) -> Range {
    let name = Name::of_node(node);
    let kind = if wrapper {
        Kind::EngineWrapper
    } else {
        Kind::Backward
    };
    let mut range = Range::open(session, name, kind);
    range.set_sequence_nr(node.sequence_nr, node.fwd_thread);
    if wrapper {
        // torch's wrapper records no inputs; the node's own range has the gradients.
        if range.session.config.record_shapes {
            range.event.inputs = Some(Box::default());
        }
        range
    } else {
        range.with_inputs(grads.iter().map(|g| g.as_ref()))
    }
}

/// A tensor buffer of `bytes` was allocated (positive) or freed (negative).
#[inline]
pub fn memory(bytes: i64) {
    if RUNNING.load(Ordering::Relaxed) == 0 || bytes == 0 {
        return;
    }
    record_memory(bytes);
}

#[cold]
fn record_memory(bytes: i64) {
    let Some(session) = CURRENT.with(|c| c.borrow().clone()) else {
        return;
    };
    if !session.config.profile_memory {
        return;
    }
    let mut event = new_event(&session, Name::Static("[memory]"), Kind::Memory);
    event.mem_bytes = bytes;
    push(&session, event);
}

/// Enter a `record_function` range; the handle (0 when not profiling) exits it.
pub fn enter_user_range(name: String, args: Option<String>) -> u64 {
    let Some(session) = current() else {
        return 0;
    };
    let mut event = new_event(&session, Name::Owned(name.into()), Kind::UserAnnotation);
    event.args = args;
    if session.config.record_shapes {
        event.inputs = Some(Box::default());
    }
    let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
    let mut open = lock(&OPEN_USER_RANGES);
    // Ranges of finished sessions will never be recorded.
    open.retain(|(_, s, _)| s.strong_count() > 0);
    open.push((handle, Arc::downgrade(&session), event));
    handle
}

/// Exit the `record_function` range `handle`, from any thread: it is recorded into the
/// session it was entered in, if that still runs. Unknown handles are ignored.
pub fn exit_user_range(handle: u64) {
    if handle == 0 {
        return;
    }
    let entry = {
        let mut open = lock(&OPEN_USER_RANGES);
        let pos = open.iter().position(|(h, _, _)| *h == handle);
        pos.map(|p| open.swap_remove(p))
    };
    let Some((_, session, mut event)) = entry else {
        return;
    };
    let Some(session) = session.upgrade() else {
        return;
    };
    event.end_ns = session.now_ns();
    push(&session, event);
}

#[cfg(test)]
mod tests;
