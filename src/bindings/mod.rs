//! The `ferrograd._C` extension module. The only place that knows PyO3; no math here.

pub mod autograd;
pub mod complex_methods;
pub mod convert;
pub mod device;
pub mod dtype;
pub mod errors;
pub mod factory_args;
pub mod forward_ad;
pub mod func;
pub mod function;
pub mod functions;
pub mod gc;
pub mod hooks;
pub mod index_methods;
pub mod indexing;
pub mod inplace_methods;
pub mod linalg_methods;
pub mod matrix_methods;
pub mod memory;
pub mod misc_methods;
pub mod norm_methods;
pub mod op_table;
pub mod profiler;
pub mod random_methods;
pub mod sort_methods;
pub mod tensor;
pub mod tensor_ops;
pub mod threads;
pub mod view_fns;

use pyo3::prelude::*;

#[pymodule]
#[pyo3(name = "_C")]
fn ferrograd_c(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::install_panic_hook();
    m.add_function(wrap_pyfunction!(errors::_test_panic, m)?)?;
    m.add(
        "LinAlgError",
        m.py().get_type::<linalg_methods::LinAlgError>(),
    )?;
    m.add_class::<tensor::PyTensor>()?;
    forward_ad::register(m)?;
    func::register(m)?;
    profiler::register(m)?;
    op_table::register_all(m)?;
    m.add_class::<autograd::PyWeakNode>()?;
    m.add_class::<dtype::PyDType>()?;
    m.add_class::<device::PyDevice>()?;
    m.add_function(wrap_pyfunction!(device::get_default_device, m)?)?;
    m.add_class::<autograd::PyNode>()?;
    m.add_class::<convert::ArrayView>()?;
    m.add_class::<function::PyFunctionCtx>()?;
    m.add_class::<hooks::RemovableHandle>()?;
    m.add_class::<hooks::PySavedTensor>()?;
    m.add_function(wrap_pyfunction!(function::_function_record, m)?)?;
    m.add_function(wrap_pyfunction!(function::_error_node, m)?)?;
    for d in crate::dtype::ALL_DTYPES {
        m.add(d.name(), dtype::dtype_object(m.py(), d))?;
    }
    m.add_function(wrap_pyfunction!(functions::tensor, m)?)?;
    m.add_function(wrap_pyfunction!(functions::as_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(functions::from_numpy_py, m)?)?;
    m.add_function(wrap_pyfunction!(functions::zeros, m)?)?;
    m.add_function(wrap_pyfunction!(functions::ones, m)?)?;
    m.add_function(wrap_pyfunction!(functions::empty, m)?)?;
    m.add_function(wrap_pyfunction!(functions::full, m)?)?;
    m.add_function(wrap_pyfunction!(functions::rand, m)?)?;
    m.add_function(wrap_pyfunction!(functions::randn, m)?)?;
    m.add_function(wrap_pyfunction!(functions::randint, m)?)?;
    m.add_function(wrap_pyfunction!(functions::zeros_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::ones_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::empty_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::full_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::rand_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::randn_like, m)?)?;
    m.add_function(wrap_pyfunction!(functions::arange, m)?)?;
    m.add_function(wrap_pyfunction!(functions::linspace, m)?)?;
    m.add_function(wrap_pyfunction!(functions::eye, m)?)?;
    m.add_function(wrap_pyfunction!(functions::manual_seed, m)?)?;
    m.add_function(wrap_pyfunction!(functions::initial_seed, m)?)?;
    m.add_function(wrap_pyfunction!(functions::get_rng_state, m)?)?;
    m.add_function(wrap_pyfunction!(functions::set_rng_state, m)?)?;
    m.add_class::<random_methods::PyGenerator>()?;
    m.add("default_generator", random_methods::default_generator())?;
    m.add_function(wrap_pyfunction!(random_methods::randperm, m)?)?;
    m.add_function(wrap_pyfunction!(random_methods::normal, m)?)?;
    m.add_function(wrap_pyfunction!(random_methods::bernoulli, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_is_checkpoint_valid, m)?)?;
    m.add_function(wrap_pyfunction!(functions::where_py, m)?)?;
    m.add_function(wrap_pyfunction!(functions::cat, m)?)?;
    m.add_function(wrap_pyfunction!(functions::stack, m)?)?;
    m.add_function(wrap_pyfunction!(functions::allclose, m)?)?;
    m.add_function(wrap_pyfunction!(functions::equal, m)?)?;
    m.add_function(wrap_pyfunction!(functions::promote_types, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_run_backward, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_gradient_edge, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_increment_version, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_current_graph_task_id, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_will_engine_execute_node, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::is_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_set_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::is_inference_mode_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_set_inference_mode, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::is_multithreading_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_set_multithreading_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_set_warn_always, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_get_warn_always, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_live_tensor_count, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::_set_anomaly_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::_push_saved_tensors_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(
        hooks::_push_saved_tensors_hooks_disabled,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(hooks::_pop_saved_tensors_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(hooks::_set_inplace_observer, m)?)?;
    m.add_function(wrap_pyfunction!(gc::_gc_callback, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::is_anomaly_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(autograd::is_anomaly_check_nan_enabled, m)?)?;
    crate::autograd::anomaly::set_stack_provider(autograd::python_stack);
    crate::kernels::set_pool_wait_hook(autograd::release_gil_while);
    m.add_function(wrap_pyfunction!(memory::_empty_cache, m)?)?;
    m.add_function(wrap_pyfunction!(memory::_cache_stats, m)?)?;
    m.add_function(wrap_pyfunction!(threads::set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(threads::get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(threads::set_num_interop_threads, m)?)?;
    m.add_function(wrap_pyfunction!(threads::get_num_interop_threads, m)?)?;
    m.add_function(wrap_pyfunction!(complex_methods::real, m)?)?;
    m.add_function(wrap_pyfunction!(complex_methods::imag, m)?)?;
    m.add_function(wrap_pyfunction!(complex_methods::view_as_real, m)?)?;
    m.add_function(wrap_pyfunction!(complex_methods::view_as_complex, m)?)?;
    m.add_function(wrap_pyfunction!(complex_methods::complex_py, m)?)?;
    m.add_function(wrap_pyfunction!(complex_methods::polar, m)?)?;
    m.add_function(wrap_pyfunction!(view_fns::reshape_untracked, m)?)?;
    let functions = PyModule::new(m.py(), "_functions")?;
    functions.add_class::<autograd::PyUndefinedGrad>()?;
    m.add_submodule(&functions)?;
    Ok(())
}
