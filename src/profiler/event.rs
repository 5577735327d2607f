//! One recorded event, as the recording sites store it (cheap to make: static names,
//! shapes only when asked for).

use crate::tensor::Tensor;

/// What an event is; the Python side maps these to torch's categories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A forward op (`aten::mul`).
    CpuOp,
    /// A backward node's application (`MulBackward0`).
    Backward,
    /// The engine's range around a node (`autograd::engine::evaluate_function: ...`).
    EngineWrapper,
    /// A `record_function` range.
    UserAnnotation,
    /// A tensor allocation (positive bytes) or free (negative), at one instant.
    Memory,
}

impl Kind {
    /// The kind as the Python side reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::CpuOp => "cpu_op",
            Kind::Backward | Kind::EngineWrapper => "backward",
            Kind::UserAnnotation => "user_annotation",
            Kind::Memory => "memory",
        }
    }
}

/// An event's name, spelled as torch spells it only when the session stops.
#[derive(Clone, Debug)]
pub enum Name {
    /// A forward op, named after its backward node (`MulBackward0` → `aten::mul`).
    Op {
        backward_name: &'static str,
        inplace: bool,
    },
    Static(&'static str),
    Owned(Box<str>),
}

/// The tensor inputs of an op (`record_shapes`): one entry per input, `None` for an
/// undefined one (an absent gradient), which torch shows as `[]`.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    pub shapes: Vec<Vec<i64>>,
    pub dtypes: Vec<&'static str>,
    pub strides: Vec<Vec<i64>>,
}

impl Inputs {
    pub fn of<'a>(tensors: impl Iterator<Item = Option<&'a Tensor>>) -> Inputs {
        let mut inputs = Inputs::default();
        for t in tensors {
            match t {
                Some(t) => {
                    inputs
                        .shapes
                        .push(t.shape().iter().map(|&d| d as i64).collect());
                    inputs.dtypes.push(t.dtype().cpp_name());
                    inputs
                        .strides
                        .push(t.strides().iter().map(|&s| s as i64).collect());
                }
                None => {
                    inputs.shapes.push(Vec::new());
                    inputs.dtypes.push("");
                    inputs.strides.push(Vec::new());
                }
            }
        }
        inputs
    }
}

#[derive(Clone, Debug)]
pub struct Event {
    /// Unique in the session; increasing in the order events started.
    pub id: u64,
    pub name: Name,
    pub kind: Kind,
    pub thread: u64,
    /// Nanoseconds since the session started.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The node's sequence number (-1: no node).
    pub sequence_nr: i64,
    /// The thread that recorded the node (0: not a backward event).
    pub fwd_thread: u64,
    pub inputs: Option<Box<Inputs>>,
    pub mem_bytes: i64,
    /// The Python stack, innermost frame first (`with_stack`).
    pub stack: Option<Vec<String>>,
    /// `record_function`'s `args`.
    pub args: Option<String>,
}

impl Event {
    /// An event starting (and, until a range ends it, ending) at `now_ns`.
    pub fn new(id: u64, name: Name, kind: Kind, thread: u64, now_ns: u64) -> Event {
        Event {
            id,
            name,
            kind,
            thread,
            start_ns: now_ns,
            end_ns: now_ns,
            sequence_nr: -1,
            fwd_thread: 0,
            inputs: None,
            mem_bytes: 0,
            stack: None,
            args: None,
        }
    }

    /// What a range leaves behind once its event is taken.
    pub(super) fn placeholder() -> Event {
        Event::new(0, Name::Static(""), Kind::CpuOp, 0, 0)
    }

    /// The name as torch spells it.
    pub fn name(&self) -> String {
        let base = self.name.resolve();
        match self.kind {
            Kind::EngineWrapper => format!("autograd::engine::evaluate_function: {base}"),
            _ => base,
        }
    }
}
