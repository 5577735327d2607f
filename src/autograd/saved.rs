//! A tensor saved for backward: the value plus the version it had, checked on unpack.
//!
//! Saved *outputs* of a node are stored without their grad_fn (the node would otherwise
//! own itself through them) and get it back on unpack; saved inputs are stored as the
//! tensor itself, so `_saved_self is x` holds.

use std::sync::Arc;

use crate::autograd::node::Node;
use crate::autograd::saved_hooks::{self, Packed};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// E-FREED: one shared text for every "graph already freed" path.
pub const ERR_FREED: &str = "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.";

pub const ERR_HOOKS_TWICE: &str = "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair of hooks is allowed at a time.";

/// Cloned (cheaply) out of a node's saved slots so that unpacking, which may run an
/// unpack hook, never happens under the slots' lock.
#[derive(Clone)]
pub struct SavedTensor {
    data: Option<Tensor>,
    /// Set instead of `data` when saved-tensor hooks were active at save time.
    packed: Option<Arc<dyn Packed>>,
    is_output: bool,
    output_nr: usize,
    version: u64,
}

impl SavedTensor {
    pub fn input(t: &Tensor) -> Result<SavedTensor> {
        Self::new(t, t.clone(), false, 0)
    }

    pub fn output(t: &Tensor, output_nr: usize) -> Result<SavedTensor> {
        let stored = t.alias_detached();
        // A saved output keeps its tangent (forward-over-reverse reads it in backward).
        if crate::autograd::forward_ad::active() {
            crate::autograd::forward_ad::copy_tangents(t, &stored);
        }
        Self::new(t, stored, true, output_nr)
    }

    /// Save `stored` (the tensor itself, or for outputs an alias without history),
    /// through the active saved-tensor hooks if there are any.
    fn new(t: &Tensor, stored: Tensor, is_output: bool, output_nr: usize) -> Result<SavedTensor> {
        check_not_inference(t)?;
        let version = t.version();
        let (data, packed) = match saved_hooks::for_saving()? {
            Some(hooks) => (None, Some(Arc::from(hooks.pack(t)?))),
            None => (Some(stored), None),
        };
        Ok(SavedTensor {
            data,
            packed,
            is_output,
            output_nr,
            version,
        })
    }

    /// The stored value, for `SavedTensor.register_hooks` (None when already packed or
    /// released).
    pub fn stored_value(&self) -> Option<Tensor> {
        self.data.clone()
    }

    /// Replace the stored value by what a pack hook made of it.
    pub fn set_packed(&mut self, packed: Box<dyn Packed>) -> Result<()> {
        if self.packed.is_some() {
            return Err(Error::runtime(ERR_HOOKS_TWICE));
        }
        self.data = None;
        self.packed = Some(Arc::from(packed));
        Ok(())
    }

    /// The value held as is (not packed, not released), for ownership walks.
    pub fn held_value(&self) -> Option<&Tensor> {
        self.data.as_ref()
    }

    /// Give up the value held as is (for freeing a node without recursion).
    pub fn take_value(&mut self) -> Option<Tensor> {
        self.data.take()
    }

    /// Host-language objects a pack hook turned this value into.
    pub fn foreign_refs(&self, out: &mut Vec<usize>) {
        if let Some(p) = &self.packed {
            p.foreign_refs(out);
        }
    }

    pub fn has_hooks(&self) -> bool {
        self.packed.is_some()
    }

    pub fn release(&mut self) {
        self.data = None;
        self.packed = None;
    }

    pub fn is_released(&self) -> bool {
        self.data.is_none() && self.packed.is_none()
    }

    /// The saved value, with its history (`node` is the node that saved it).
    pub fn unpack(&self, node: &Arc<Node>) -> Result<Tensor> {
        if let Some(packed) = &self.packed {
            // The hooks own the value now: no version check (torch does none either).
            let t = packed.unpack()?;
            if self.is_output && t.dtype().is_differentiable() && t.grad_fn().is_none() {
                let t = t.alias_detached();
                t.set_grad_fn(node.clone(), self.output_nr);
                return Ok(t);
            }
            return Ok(t);
        }
        let data = self
            .data
            .as_ref()
            .ok_or_else(|| Error::runtime(ERR_FREED))?;
        let current = data.version();
        if current != self.version {
            return Err(Error::runtime(inplace_message(data, self, node, current)));
        }
        if !self.is_output {
            return Ok(data.clone());
        }
        let t = data.alias_detached();
        if data.dtype().is_differentiable() {
            t.set_grad_fn(node.clone(), self.output_nr);
        }
        if crate::autograd::forward_ad::active() {
            crate::autograd::forward_ad::copy_tangents(data, &t);
        }
        Ok(t)
    }
}

fn check_not_inference(t: &Tensor) -> Result<()> {
    if t.is_inference() && !crate::autograd::grad_mode::is_inference_mode() {
        return Err(Error::runtime("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."));
    }
    Ok(())
}

/// E-INPLACE, naming the tensor's current producer (or the saving node for outputs).
fn inplace_message(data: &Tensor, saved: &SavedTensor, node: &Arc<Node>, current: u64) -> String {
    let dims: Vec<String> = data.shape().iter().map(|d| d.to_string()).collect();
    let producer = if saved.is_output {
        Some((node.name().to_string(), saved.output_nr))
    } else {
        data.grad_fn()
            .map(|f| (f.name().to_string(), data.output_nr()))
    };
    let which = match producer {
        Some((name, nr)) => {
            let short = name
                .rfind("Backward")
                .map_or(name.as_str(), |i| &name[..i])
                .to_string();
            format!(", which is output {nr} of {short},")
        }
        None => String::new(),
    };
    format!(
        "one of the variables needed for gradient computation has been modified by an inplace operation: [ferrograd.{} [{}]]{} is at version {}; expected version {} instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).",
        data.dtype().legacy_type_name(),
        dims.join(", "),
        which,
        current,
        saved.version
    )
}
