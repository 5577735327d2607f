"""``graph.register_multi_grad_hook``: one callback over the gradients of several tensors,
built on tensor hooks and on the engine's view of the backward call running them."""

import threading

from .. import _C

_MODES = ("all", "any")

# mode "any" remembers which backward calls already fired; ids only grow, so past this
# many it forgets the older half (calls long finished), keeping memory bounded.
_REMEMBERED_CALLS = 1024


class _MultiHandle:
    """Removes every tensor hook a multi-grad hook registered."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()


def _node_ref(tensor):
    """A callable giving the node a tensor's gradient flows into. A leaf's AccumulateGrad
    is held, so the leaf keeps that same node while the hook lives; a grad_fn is held
    weakly, so the hook does not keep the graph alive (once the node is gone it cannot
    run, and the callable gives None)."""
    if not tensor.requires_grad:
        raise AssertionError("Expected gradient function to be set")
    node = _C._gradient_edge(tensor)[0]
    if tensor.grad_fn is None:
        return lambda: node
    return _C._WeakNode(node)


def _will_execute(node_ref):
    node = node_ref()
    return node is not None and _C._will_engine_execute_node(node)


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward call that computes gradients for ``tensors``.

    mode "all": ``fn(grads)`` after the gradient of every tensor this call computes has
    arrived; ``grads[i]`` is None for tensors outside the call's graph or not needed for
    its ``inputs``. mode "any": ``fn(grad)`` with the first gradient computed among the
    tensors (tensors not requiring grad are skipped). The return value of ``fn`` is
    ignored. Returns a handle whose ``remove()`` unregisters everything.
    """
    if mode not in _MODES:
        raise ValueError(f"Expects mode to be one of {_MODES} but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()

    if mode == "any":
        fired = set()  # ids of the backward calls that already called fn

        def any_hook(grad):
            task = _C._current_graph_task_id()
            with lock:
                if task in fired:
                    return
                fired.add(task)
                if len(fired) > _REMEMBERED_CALLS:
                    fired.difference_update(sorted(fired)[: len(fired) // 2])
            fn(grad)

        handles = tuple(t.register_hook(any_hook) for t in tensors if t.requires_grad)
        return _MultiHandle(handles)

    nodes = [_node_ref(t) for t in tensors]
    # Per running backward call: [gradients seen, how many to wait for, buffer].
    pending = {}

    def all_hook_for(position):
        def all_hook(grad):
            task = _C._current_graph_task_id()
            with lock:
                state = pending.get(task)
                if state is None:
                    expected = sum(map(_will_execute, nodes))
                    state = pending[task] = [0, expected, [None] * len(tensors)]
                state[0] += 1
                state[2][position] = grad
                done = state[0] == state[1]
                if done:
                    del pending[task]
            if done:
                fn(state[2])

        return all_hook

    handles = tuple(t.register_hook(all_hook_for(i)) for i, t in enumerate(tensors))
    return _MultiHandle(handles)
