//! Reverse-mode bookkeeping: graph nodes, saved tensors, leaf accumulation, views.

pub mod accumulate;
pub mod anomaly;
pub mod foreign;
pub mod grad_mode;
pub mod hooks;
pub mod mutation;
pub mod node;
pub mod saved;
pub mod saved_hooks;
pub mod teardown;
pub mod view;
pub mod warnings;

pub use node::{Edge, Node, NodeKind, TensorMeta};
