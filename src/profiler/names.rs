//! Event names as torch spells them: a forward op is `aten::<op>`, derived from the name
//! of the backward node it records (`MulBackward0` → `aten::mul`, in place `aten::mul_`),
//! so an op states its name once.

use super::Name;
use crate::autograd::node::{Node, NodeKind};

/// Ops whose aten name is not the snake case of their backward node's name.
const EXCEPTIONS: &[(&str, &str)] = &[
    ("ToCopy", "_to_copy"),
    ("UnsafeView", "_unsafe_view"),
    ("Log1P", "log1p"),
];

impl Name {
    pub fn resolve(&self) -> String {
        match self {
            Name::Op {
                backward_name,
                inplace,
            } => {
                let mut name = String::from("aten::");
                name.push_str(&aten_name(backward_name));
                if *inplace {
                    name.push('_');
                }
                name
            }
            Name::Static(s) => (*s).to_string(),
            Name::Owned(s) => s.to_string(),
        }
    }

    /// A node's name (built-in nodes' names are static; custom Functions' are not).
    pub fn of_node(node: &Node) -> Name {
        match &node.kind {
            NodeKind::Op(op) => Name::Static(op.name()),
            NodeKind::AccumulateGrad(_) => Name::Static("torch::autograd::AccumulateGrad"),
            NodeKind::CopySlices(_) => Name::Static("torch::autograd::CopySlices"),
            NodeKind::Custom(c) => Name::Owned(c.name().into()),
        }
    }
}

/// `MulBackward0` → `mul`, `AsStridedScatterBackward0` → `as_strided_scatter`,
/// `CopyBackwards` → `copy`.
pub fn aten_name(backward_name: &str) -> String {
    let stem = backward_name.trim_end_matches(|c: char| c.is_ascii_digit());
    let stem = stem
        .strip_suffix("Backwards")
        .or_else(|| stem.strip_suffix("Backward"))
        .unwrap_or(stem);
    if let Some((_, name)) = EXCEPTIONS.iter().find(|(s, _)| *s == stem) {
        return (*name).to_string();
    }
    let mut out = String::with_capacity(stem.len() + 4);
    for (i, c) in stem.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
