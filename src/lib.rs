//! ferrograd: PyTorch's autograd on a Rust tensor core. Module map only; see DESIGN.md.

pub mod alloc;
pub mod autograd;
pub mod device;
pub mod dtype;
pub mod engine;
pub mod error;
pub mod functorch;
pub mod kernels;
pub mod layout;
pub mod ops;
pub mod profiler;
pub mod shape;
pub mod storage;
pub mod tensor;
pub mod threads;

#[cfg(feature = "python")]
mod bindings;

/// Large blocks are cached for reuse (see alloc.rs).
#[global_allocator]
static ALLOCATOR: alloc::CachingAllocator = alloc::CachingAllocator;

pub use dtype::{DType, Scalar};
pub use error::{Error, Result};
pub use tensor::Tensor;
