//! torch.func's machinery below Python: vmap levels and batched wrappers.
//!
//! # How vmap works here
//! `vmap` pushes a level (batch size, randomness) on this thread's stack and wraps each
//! mapped input as a *batched wrapper*: a `Tensor` whose `BatchInfo` holds the physical
//! value and the batch dim, and whose own layout is one example's view of that value,
//! so every shape query sees the per-example shape. The dispatcher (`ops::apply`) sends
//! an op with a wrapper among its inputs to [`batched::dispatch`]: the wrappers of the
//! innermost level are opened, the op's batching rule runs on the physical values (its
//! ops dispatch again, so outer levels and plain autograd see ordinary tensors), and the
//! results are wrapped back. `vmap` unwraps its outputs when it returns.
//!
//! # Autograd at two levels
//! A wrapper has autograd metadata of its own, like any tensor: an op whose wrapper
//! inputs require grad records a node over the wrappers (per-example gradients:
//! `vmap(grad(f))`), while the ops the batching rule runs record over the physical
//! values (gradients of the batched computation: `grad(vmap(f))`). Each graph is
//! complete for its level; the one nobody differentiates is dropped with its tensors.
//! Forward-mode tangents live at the two levels the same way.

pub mod batched;
pub mod levels;
