//! `Tensor` (a cheap handle) and `TensorImpl` (storage, layout, version counter,
//! autograd metadata). Ops live in `ops/`; this file only owns the data structure.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::autograd::grad_mode;
use crate::autograd::node::{Edge, Node};
use crate::dtype::{DType, Element, Scalar};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::shape::{checked_numel, Dims};
use crate::storage::{Data, Storage};

static LIVE_TENSORS: AtomicUsize = AtomicUsize::new(0);

/// Number of `TensorImpl`s alive in the process (for leak tests).
pub fn live_tensor_count() -> usize {
    LIVE_TENSORS.load(Ordering::Relaxed)
}

/// How a view was made; decides which in-place ops on it are allowed (spec §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreationMeta {
    Default,
    /// Made under no_grad from a tensor that requires grad.
    NoGradMode,
    /// Made in inference mode from a normal tensor.
    InferenceMode,
    /// One of several views returned by one op (`unbind`, `split`...); holds the op name.
    MultipleOutputs(&'static str, usize),
    /// Output `n` of a custom Function that is a view (made inside `forward`, or an input
    /// returned as is); `true` when the Function returns several differentiable outputs.
    /// Its grad_fn is the Function's node, which an in-place op must not override.
    CustomFunction(usize, bool),
}

pub struct ViewInfo {
    /// The tensor that owns the memory (never itself a view).
    pub base: Tensor,
    pub creation: CreationMeta,
}

/// Mutable autograd state of a tensor. Guarded by a mutex: it changes when a tensor is
/// modified in place (history rebase), when `.grad` is written and when flags are set.
#[derive(Default)]
pub struct AutogradMeta {
    /// The user-set flag; only meaningful for leaves (non-leaves require grad through
    /// their grad_fn).
    pub requires_grad: bool,
    pub grad: Option<Tensor>,
    pub grad_fn: Option<Arc<Node>>,
    pub output_nr: usize,
    /// The leaf's AccumulateGrad node, alive while some graph points at it.
    pub grad_accumulator: Weak<Node>,
    pub retains_grad: bool,
    /// For views: the version at which `grad_fn` was last set; a mismatch means the
    /// base changed in place and the view's grad_fn must be regenerated.
    pub attr_version: u64,
    /// A leaf's tensor hooks (a non-leaf's live on its grad_fn; see autograd::hooks).
    pub leaf_hooks: crate::autograd::hooks::HookList<dyn crate::autograd::hooks::TensorHook>,
    pub post_accumulate_hooks:
        crate::autograd::hooks::HookList<dyn crate::autograd::hooks::PostAccumulateHook>,
    /// Forward-mode tangents per dual level (see autograd::forward_ad); boxed so that a
    /// tensor without any costs one pointer.
    pub fw_grads: Option<Box<crate::autograd::forward_ad::FwGrads>>,
    /// A view that must not read its base's tangent (`unpack_dual`'s primal).
    pub fw_view_cut: bool,
}

pub struct TensorImpl {
    /// The elements as the tensor was made. Never changed: readers borrow it freely.
    data: Data,
    /// What `x.data = y` put in its place (see `set_data`): once `replaced` is set, it
    /// is the tensor's data, and `data` only serves readers that started before.
    replaced: Mutex<Option<Arc<Data>>>,
    is_replaced: AtomicBool,
    /// Shared by a base, its views and detach() aliases; bumped by every in-place write.
    version: Arc<AtomicU64>,
    inference: bool,
    view: Option<ViewInfo>,
    autograd: Mutex<AutogradMeta>,
    /// Opaque slot owned by the bindings: the address of this tensor's live Python
    /// object (0 when none), so the same tensor always maps to the same Python object.
    pub py_handle: AtomicUsize,
    /// Serializes gradient accumulation into this tensor (see `accumulate`): only ever
    /// taken there, so it never nests with another lock.
    accumulating: Mutex<()>,
    /// Set for a vmap wrapper (see functorch::batched): the physical value it stands
    /// for. `data` is then the logical view (the batch dim left out) of that value's
    /// memory, which every shape query reads; ops never run kernels on it.
    batch: Option<Box<BatchInfo>>,
}

/// What a vmap wrapper wraps: the physical value, where its batch dim is, and the
/// vmap level that dim belongs to.
pub struct BatchInfo {
    pub value: Tensor,
    pub bdim: usize,
    pub level: u64,
}

/// Freed without recursion (see autograd::teardown): history, gradient and a view's
/// base are queued rather than freed inside this call.
impl Drop for TensorImpl {
    fn drop(&mut self) {
        use crate::autograd::teardown::{defer_node, defer_tensor};
        LIVE_TENSORS.fetch_sub(1, Ordering::Relaxed);
        let meta = self.autograd.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = meta.grad_fn.take() {
            defer_node(f);
        }
        if let Some(g) = meta.grad.take() {
            defer_tensor(g);
        }
        if let Some(view) = self.view.take() {
            defer_tensor(view.base);
        }
    }
}

#[derive(Clone)]
pub struct Tensor(Arc<TensorImpl>);

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Tensor(shape={:?}, dtype={:?})",
            self.shape(),
            self.dtype()
        )
    }
}

impl Tensor {
    fn from_parts(
        data: Data,
        version: Arc<AtomicU64>,
        view: Option<ViewInfo>,
        inference: bool,
    ) -> Tensor {
        Self::from_parts_batched(data, version, view, inference, None)
    }

    fn from_parts_batched(
        data: Data,
        version: Arc<AtomicU64>,
        view: Option<ViewInfo>,
        inference: bool,
        batch: Option<Box<BatchInfo>>,
    ) -> Tensor {
        LIVE_TENSORS.fetch_add(1, Ordering::Relaxed);
        let attr_version = version.load(Ordering::Acquire);
        Tensor(Arc::new(TensorImpl {
            data,
            replaced: Mutex::new(None),
            is_replaced: AtomicBool::new(false),
            version,
            inference,
            view,
            autograd: Mutex::new(AutogradMeta {
                attr_version,
                ..AutogradMeta::default()
            }),
            py_handle: AtomicUsize::new(0),
            accumulating: Mutex::new(()),
            batch,
        }))
    }

    /// A vmap wrapper over `value` whose dim `bdim` is the batch dim of `level`: shaped
    /// like one example, sharing `value`'s memory and version counter. `view_of` makes it
    /// a view (for autograd) of another wrapper, as a view op's result is of its input.
    pub fn batched(
        value: Tensor,
        bdim: usize,
        level: u64,
        view_of: Option<&Tensor>,
    ) -> Result<Tensor> {
        let data = {
            let vd = value.data();
            let l = vd.layout();
            if bdim >= l.ndim() {
                return Err(Error::runtime(format!(
                    "internal error: batch dim {bdim} of a {}-d value",
                    l.ndim()
                )));
            }
            let mut layout = l.clone();
            layout.shape.remove(bdim);
            layout.strides.remove(bdim);
            if l.shape[bdim] == 0 {
                // No example to point at: the logical view reads one (never used) zero
                // through zero strides, so it costs nothing whatever its shape.
                let storage = Storage::zeros(vd.dtype(), 1)?;
                layout.strides.iter_mut().for_each(|s| *s = 0);
                layout.offset = 0;
                Data::new(Arc::new(storage), layout)?
            } else {
                vd.with_layout(layout)?
            }
        };
        let view = view_of.map(|v| ViewInfo {
            base: v.view_base().unwrap_or_else(|| v.clone()),
            creation: CreationMeta::Default,
        });
        let (version, inference) = (value.0.version.clone(), value.0.inference);
        Ok(Self::from_parts_batched(
            data,
            version,
            view,
            inference,
            Some(Box::new(BatchInfo { value, bdim, level })),
        ))
    }

    /// The physical value behind a vmap wrapper (None for a plain tensor).
    #[inline]
    pub fn batch_info(&self) -> Option<&BatchInfo> {
        self.0.batch.as_deref()
    }
    #[inline]
    pub fn is_batched(&self) -> bool {
        self.0.batch.is_some()
    }

    /// Refuse layout-level access to a wrapper: its layout is one example's.
    fn check_not_batched(&self, what: &str) -> Result<()> {
        if self.is_batched() {
            return Err(Error::runtime(format!(
                "vmap: {what} is not supported on a batched tensor"
            )));
        }
        Ok(())
    }

    /// A fresh tensor over `storage` (not a view of anything). The layout must fit the
    /// storage (torch's setStorage check).
    pub fn from_storage(storage: Storage, layout: Layout) -> Result<Tensor> {
        Ok(Self::fresh(Data::new(Arc::new(storage), layout)?))
    }

    /// A new tensor (no view, its own version counter) over a kernel's fresh result.
    pub fn from_data(data: Data) -> Tensor {
        Self::fresh(data)
    }

    /// A new tensor (no view, its own version counter) over `data`.
    fn fresh(data: Data) -> Tensor {
        Self::from_parts(
            data,
            Arc::new(AtomicU64::new(0)),
            None,
            grad_mode::is_inference_mode(),
        )
    }

    pub fn zeros(shape: &[usize], dtype: DType) -> Result<Tensor> {
        let n = checked_numel(shape)?;
        Ok(Self::fresh(Data::whole(Storage::zeros(dtype, n)?, shape)))
    }

    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        let n = checked_numel(shape)?;
        if n != data.len() {
            return Err(Error::runtime(format!(
                "shape {:?} does not match {} elements",
                shape,
                data.len()
            )));
        }
        Ok(Self::fresh(Data::whole(Storage::from_vec(data), shape)))
    }

    pub fn scalar(value: Scalar, dtype: DType) -> Tensor {
        crate::with_dtype!(dtype, T => Self::from_vec(vec![T::from_scalar(value)], &[])
            .expect("one element fits"))
    }

    pub fn full(shape: &[usize], value: Scalar, dtype: DType) -> Result<Tensor> {
        let t = Self::zeros(shape, dtype)?;
        if !value.is_zero() {
            crate::ops::device::fill(&t, value)?;
        }
        Ok(t)
    }

    /// A new tensor sharing storage and version counter with `self`, with another layout.
    /// Every view is made here, so every view's layout is checked against the storage.
    pub fn make_view(&self, layout: Layout, creation: CreationMeta) -> Result<Tensor> {
        self.make_view_as(layout, self.dtype(), creation)
    }

    /// `make_view` reading the elements as `dtype`: this tensor's dtype, or the other
    /// side of a complex / real-component pair (see Note: real views of complex storage
    /// in storage.rs); `layout` counts in elements of `dtype`.
    pub fn make_view_as(
        &self,
        layout: Layout,
        dtype: DType,
        creation: CreationMeta,
    ) -> Result<Tensor> {
        self.check_not_batched("a strided view")?;
        let data = Data::new_as(self.data().storage().clone(), dtype, layout)?;
        let base = self.view_base().unwrap_or_else(|| self.clone());
        // A view of a normal tensor stays normal even when made in inference mode.
        let inference = self.0.inference;
        Ok(Self::from_parts(
            data,
            self.0.version.clone(),
            Some(ViewInfo { base, creation }),
            inference,
        ))
    }

    /// A tensor sharing storage AND version counter but no autograd history
    /// (`detach()`; a view in torch's sense but not tracked as one for autograd).
    pub fn alias_detached(&self) -> Tensor {
        if let Some(b) = self.batch_info() {
            // Detached at every level: the physical value too.
            return Self::batched(b.value.alias_detached(), b.bdim, b.level, None)
                .expect("same layout as the wrapper's value");
        }
        Self::from_parts(
            self.data().clone(),
            self.0.version.clone(),
            None,
            self.0.inference,
        )
    }

    /// The same contiguous data under another shape, as a new non-view tensor. Only for
    /// results a kernel just produced (nobody else can observe the sharing).
    pub fn fresh_with_shape(&self, shape: &[usize]) -> Tensor {
        debug_assert!(self.is_contiguous() && crate::shape::numel(shape) == self.numel());
        let mut layout = Layout::contiguous(shape);
        layout.offset = self.offset();
        self.alias_with_layout(layout)
            .unwrap_or_else(|e| panic!("internal error: {e}"))
    }

    /// A non-view tensor over this tensor's memory with `layout` and its own version
    /// counter: deepcopy and unpickling rebuild a layout over copied memory this way.
    /// The layout may come from a pickle, so its reach is checked.
    pub fn alias_with_layout(&self, layout: Layout) -> Result<Tensor> {
        self.check_not_batched("a strided alias")?;
        let data = self.data().with_layout(layout)?;
        Ok(Self::from_parts(
            data,
            Arc::new(AtomicU64::new(0)),
            None,
            self.0.inference,
        ))
    }

    /// Same memory, fresh version counter (`.data`).
    pub fn alias_fresh_version(&self) -> Tensor {
        if let Some(b) = self.batch_info() {
            return Self::batched(b.value.alias_fresh_version(), b.bdim, b.level, None)
                .expect("same layout as the wrapper's value");
        }
        Self::from_parts(
            self.data().clone(),
            Arc::new(AtomicU64::new(0)),
            None,
            self.0.inference,
        )
    }

    /// `x.data = other` (torch's `set_data`): from now on this tensor's elements are
    /// `other`'s (its storage, layout and dtype), while its version counter, autograd
    /// metadata and identity stay. Views made before keep the old memory; saved
    /// references to this tensor see the new elements when next read.
    pub fn set_data(&self, other: &Tensor) -> Result<()> {
        self.check_not_batched("setting .data")?;
        other.check_not_batched("setting .data")?;
        let new = other.data().clone();
        let dtype_changed = new.dtype() != self.dtype();
        {
            let mut m = self.meta();
            if m.requires_grad && !new.dtype().is_differentiable() {
                return Err(Error::runtime(
                    "data set to a tensor that requires gradients must be floating point or complex dtype",
                ));
            }
            // torch drops the leaf's accumulator when the type changes: gradients of
            // graphs built from now on are checked against the new dtype.
            if dtype_changed {
                m.grad_accumulator = Weak::new();
            }
        }
        let old = self
            .0
            .replaced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace(Arc::new(new));
        self.0.is_replaced.store(true, Ordering::Release);
        drop(old); // outside the lock: freeing memory takes time
        Ok(())
    }

    // ----- plain accessors -----

    /// This tensor's elements (storage and layout), valid while the result lives even
    /// if `set_data` replaces them meanwhile.
    #[inline]
    pub fn data(&self) -> DataRef<'_> {
        if !self.0.is_replaced.load(Ordering::Acquire) {
            return DataRef::Own(&self.0.data);
        }
        self.replaced_data()
    }
    #[cold]
    fn replaced_data(&self) -> DataRef<'_> {
        let replaced = self.0.replaced.lock().unwrap_or_else(|e| e.into_inner());
        DataRef::Replaced(replaced.clone().expect("set before the flag"))
    }
    pub fn layout(&self) -> LayoutRef<'_> {
        LayoutRef(self.data())
    }
    pub fn shape(&self) -> ShapeRef<'_> {
        ShapeRef(self.data())
    }
    pub fn dims(&self) -> Dims {
        Dims::from_slice(&self.data().layout().shape)
    }
    pub fn strides(&self) -> Dims {
        Dims::from_slice(&self.data().layout().strides)
    }
    pub fn offset(&self) -> usize {
        self.data().layout().offset
    }
    pub fn dim(&self) -> usize {
        self.data().layout().ndim()
    }
    pub fn numel(&self) -> usize {
        self.data().layout().numel()
    }
    pub fn dtype(&self) -> DType {
        self.data().dtype()
    }
    /// The elements in row-major order as `T` (a host copy: for the bindings' conversions
    /// and tests; ops never read elements themselves).
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        crate::kernels::gather_data(&self.data())
    }
    /// Where the elements live: the storage's device (a tensor has no device of its own).
    pub fn device(&self) -> crate::device::Device {
        self.data().device()
    }
    pub fn is_contiguous(&self) -> bool {
        self.data().layout().is_contiguous()
    }
    pub fn data_ptr(&self) -> usize {
        let data = self.data();
        data.storage().as_ptr() as usize + data.layout().offset * data.dtype().itemsize()
    }
    pub fn is_inference(&self) -> bool {
        self.0.inference
    }
    /// Nobody else can observe this tensor or its memory (the engine may then hand it
    /// over as a leaf's `.grad` instead of copying it).
    pub fn is_uniquely_owned(&self) -> bool {
        self.owner_count() == 1
            && Arc::strong_count(self.data().storage()) == 1
            && self.0.view.is_none()
    }
    /// Identity of the shared tensor (the same for every handle to it).
    pub fn impl_addr(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
    /// Give up this handle; if it was the last one, hand back the tensor itself instead
    /// of freeing it here (see `autograd::foreign::release`).
    pub fn into_last(self) -> Option<Box<dyn Send>> {
        Arc::into_inner(self.0).map(|t| Box::new(t) as Box<dyn Send>)
    }
    /// How many handles share this tensor (Arc strong count).
    pub fn owner_count(&self) -> usize {
        Arc::strong_count(&self.0)
    }
    /// The autograd metadata, unless another thread holds it right now.
    /// Held for the whole of one gradient accumulation into this tensor.
    pub fn accumulation_guard(&self) -> MutexGuard<'_, ()> {
        self.0
            .accumulating
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
    pub fn try_meta(&self) -> Option<MutexGuard<'_, AutogradMeta>> {
        crate::autograd::foreign::try_lock(&self.0.autograd)
    }
    pub fn ptr_eq(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    pub fn py_handle(&self) -> &AtomicUsize {
        &self.0.py_handle
    }
    pub fn downgrade(&self) -> WeakTensor {
        WeakTensor(Arc::downgrade(&self.0))
    }

    // ----- views -----

    pub fn is_view(&self) -> bool {
        self.0.view.is_some()
    }
    pub fn view_base(&self) -> Option<Tensor> {
        self.0.view.as_ref().map(|v| v.base.clone())
    }
    pub fn view_info(&self) -> Option<&ViewInfo> {
        self.0.view.as_ref()
    }

    // ----- version counter -----

    pub fn version(&self) -> u64 {
        self.0.version.load(Ordering::Acquire)
    }
    pub fn bump_version(&self) {
        if !self.0.inference {
            self.0.version.fetch_add(1, Ordering::AcqRel);
        }
    }

    // ----- autograd metadata -----

    /// See the lock rule in `autograd` (module docs): never held over ops or Python.
    pub fn meta(&self) -> MutexGuard<'_, AutogradMeta> {
        // A poisoned lock only means a panic happened while it was held elsewhere;
        // the metadata itself stays consistent (every write is a single assignment).
        self.0.autograd.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A view also requires grad when its base does (even one made under no_grad).
    pub fn requires_grad(&self) -> bool {
        {
            let m = self.meta();
            if m.requires_grad || m.grad_fn.is_some() {
                return true;
            }
        }
        self.0.view.as_ref().is_some_and(|v| v.base.requires_grad())
    }

    pub fn is_leaf(&self) -> bool {
        self.grad_fn().is_none()
    }

    pub fn grad_fn(&self) -> Option<Arc<Node>> {
        if self.is_view() {
            crate::autograd::view::refresh_view_grad_fn(self);
        }
        self.meta().grad_fn.clone()
    }

    pub fn output_nr(&self) -> usize {
        self.meta().output_nr
    }

    pub fn grad(&self) -> Option<Tensor> {
        self.meta().grad.clone()
    }

    pub fn set_grad_unchecked(&self, g: Option<Tensor>) {
        self.meta().grad = g;
    }

    pub fn retains_grad(&self) -> bool {
        self.meta().retains_grad
    }

    /// Attach history: this tensor becomes output `output_nr` of `node`.
    pub fn set_grad_fn(&self, node: Arc<Node>, output_nr: usize) {
        let v = self.version();
        let (old, old_nr, retains) = {
            let mut m = self.meta();
            let old = m.grad_fn.replace(node.clone());
            let old_nr = std::mem::replace(&mut m.output_nr, output_nr);
            m.attr_version = v;
            (old, old_nr, m.retains_grad)
        };
        if retains {
            self.move_retained_grad(old, old_nr, &node, output_nr);
        }
    }

    /// A tensor that retains its grad keeps doing so across a history rebase (in-place
    /// op): like torch, the retained slot moves to the new grad_fn, so `.grad` is the
    /// gradient of the modified tensor. Plain tensor hooks stay on the old node.
    fn move_retained_grad(
        &self,
        old: Option<Arc<Node>>,
        old_nr: usize,
        new: &Arc<Node>,
        nr: usize,
    ) {
        let me = self.downgrade();
        if let Some(old) = old {
            if Arc::ptr_eq(&old, new) && old_nr == nr {
                return;
            }
            if let Some(mut extras) = old.extras_if_any() {
                extras.retained.retain(|(_, w)| !w.ptr_eq(&me));
            }
        }
        new.extras().retained.push((nr, me));
    }

    /// Set the leaf flag with torch's checks (C1–C6, C127). torch words the dtype error
    /// differently for the attribute setter and for `requires_grad_()`.
    pub fn set_requires_grad(&self, requires_grad: bool) -> Result<()> {
        self.set_requires_grad_with(
            requires_grad,
            "only Tensors of floating point dtype can require gradients",
        )
    }

    pub fn set_requires_grad_with(&self, requires_grad: bool, dtype_error: &str) -> Result<()> {
        if !self.is_leaf() {
            if !requires_grad {
                return Err(Error::runtime(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
                ));
            }
            return Ok(());
        }
        if requires_grad {
            if !self.dtype().is_differentiable() {
                return Err(Error::runtime(dtype_error));
            }
            if self.is_inference() && !grad_mode::is_inference_mode() {
                return Err(Error::runtime(
                    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
                ));
            }
        }
        self.meta().requires_grad = requires_grad;
        Ok(())
    }

    /// The edge gradients for this tensor flow into: its grad_fn, or for a leaf that
    /// requires grad its AccumulateGrad node; None when it needs no gradient.
    pub fn gradient_edge(&self) -> Option<Edge> {
        if let Some(f) = self.grad_fn() {
            return Some(Edge {
                node: f,
                input_nr: self.output_nr(),
            });
        }
        if self.meta().requires_grad {
            return Some(Edge {
                node: self.grad_accumulator(),
                input_nr: 0,
            });
        }
        None
    }

    /// The leaf's AccumulateGrad node (created on first use, shared while alive).
    pub fn grad_accumulator(&self) -> Arc<Node> {
        if let Some(n) = self.meta().grad_accumulator.upgrade() {
            return n;
        }
        // Made outside the lock: making a node may call Python (anomaly mode's stack).
        let node = Node::accumulate_grad(self.clone());
        let mut m = self.meta();
        if let Some(n) = m.grad_accumulator.upgrade() {
            return n; // another thread made it first
        }
        m.grad_accumulator = Arc::downgrade(&node);
        node
    }

    /// `detach_()`: drop history in place (C24, C25).
    pub fn detach_(&self) -> Result<()> {
        if self.is_view() {
            return Err(Error::runtime("Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP), you should detach only the output of the DDP module and not the view, which is in this case an outgoing variable of the forward pass."));
        }
        // Forward-mode tangents go too (torch); freed after the lock is released.
        let tangents = {
            let mut m = self.meta();
            m.grad_fn = None;
            m.output_nr = 0;
            m.requires_grad = false;
            m.fw_grads.take()
        };
        drop(tangents);
        Ok(())
    }
}

#[derive(Clone)]
pub struct WeakTensor(Weak<TensorImpl>);

impl WeakTensor {
    pub fn upgrade(&self) -> Option<Tensor> {
        self.0.upgrade().map(Tensor)
    }
    pub fn ptr_eq(&self, other: &WeakTensor) -> bool {
        Weak::ptr_eq(&self.0, &other.0)
    }
}

/// A tensor's elements, borrowed (the common case) or, after `set_data`, shared.
pub enum DataRef<'a> {
    Own(&'a Data),
    Replaced(Arc<Data>),
}

impl std::ops::Deref for DataRef<'_> {
    type Target = Data;
    #[inline]
    fn deref(&self) -> &Data {
        match self {
            DataRef::Own(d) => d,
            DataRef::Replaced(d) => d,
        }
    }
}

/// A tensor's layout (see `DataRef`).
pub struct LayoutRef<'a>(DataRef<'a>);

impl std::ops::Deref for LayoutRef<'_> {
    type Target = Layout;
    #[inline]
    fn deref(&self) -> &Layout {
        self.0.layout()
    }
}

/// A tensor's shape (see `DataRef`).
pub struct ShapeRef<'a>(DataRef<'a>);

impl std::ops::Deref for ShapeRef<'_> {
    type Target = [usize];
    #[inline]
    fn deref(&self) -> &[usize] {
        &self.0.layout().shape
    }
}

impl PartialEq for ShapeRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl PartialEq<[usize]> for ShapeRef<'_> {
    fn eq(&self, other: &[usize]) -> bool {
        **self == *other
    }
}

impl PartialEq<&[usize]> for ShapeRef<'_> {
    fn eq(&self, other: &&[usize]) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for ShapeRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}
