//! ferrograd: PyTorch's autograd on a Rust tensor core. Module map only; see DESIGN.md.

pub mod autograd;
pub mod device;
pub mod dtype;
pub mod engine;
pub mod error;
pub mod kernels;
pub mod layout;
pub mod ops;
pub mod shape;
pub mod storage;
pub mod tensor;
pub mod threads;

#[cfg(feature = "python")]
mod bindings;

pub use dtype::{DType, Scalar};
pub use error::{Error, Result};
pub use tensor::Tensor;
