"""Placeholder: ``functional_call`` and ``stack_module_state`` are written on another
branch; the lead replaces this file when merging."""


def functional_call(
    module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    raise NotImplementedError("functional_call lands with ferrograd.nn")


def stack_module_state(models):
    raise NotImplementedError("stack_module_state lands with ferrograd.nn")
