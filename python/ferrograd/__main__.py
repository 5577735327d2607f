"""A short tour of ferrograd: ``python -m ferrograd``.

Everything below is written as it would be for torch; only the import differs.
"""

import ferrograd as torch


def heading(title):
    print(f"\n== {title} ==")


def flat(values):
    """tolist() of any shape, flattened."""
    if not isinstance(values, list):
        return [values]
    return [v for item in values for v in flat(item)]


def show(values, n=4):
    values = flat(values)
    more = ", ..." if len(values) > n else ""
    return "[" + ", ".join(f"{v:+.4f}" for v in values[:n]) + more + "]"


def norm(t):
    return ((t**2).sum().item()) ** 0.5


def main():
    torch.manual_seed(0)

    heading("a 2-layer MLP, built by hand (4 -> 8 -> 1)")
    x = torch.randn(16, 4)
    target = torch.randn(16, 1).sigmoid()
    w1 = torch.randn(4, 8, requires_grad=True)
    b1 = torch.zeros(8, requires_grad=True)
    w2 = torch.randn(8, 1, requires_grad=True)
    b2 = torch.zeros(1, requires_grad=True)

    hidden = (x @ w1 + b1).relu()
    pred = (hidden @ w2 + b2).sigmoid()
    loss = ((pred - target) ** 2).mean()
    print(f"loss = {loss.item():.6f}")

    heading("the recorded graph")
    print(f"hidden.grad_fn.name() = {hidden.grad_fn.name()}")
    print(f"pred.grad_fn.name()   = {pred.grad_fn.name()}")
    print(f"loss.grad_fn          = {loss.grad_fn}")
    print(f"x.grad_fn             = {x.grad_fn}  (a leaf: no history)")

    heading("loss.backward()")
    loss.backward()
    for name, p in [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)]:
        print(f"|d loss / d {name}| = {norm(p.grad):.6f}   {name}.grad = {show(p.grad.tolist())}")

    heading("second derivative with create_graph=True")
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (t**3).sum()
    (dy,) = torch.autograd.grad(y, t, create_graph=True)
    (d2y,) = torch.autograd.grad(dy.sum(), t)
    print(f"t          = {t.tolist()}")
    print(f"dy/dt      = {dy.tolist()}   (3 t^2, grad_fn {dy.grad_fn.name()})")
    print(f"d2y/dt2    = {d2y.tolist()}   (6 t)")

    heading("your own math and observers: a custom Function and hooks")

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, u):
            ctx.save_for_backward(u)
            return u**3

        @staticmethod
        def backward(ctx, g):
            (u,) = ctx.saved_tensors
            return g * 3 * u**2

    u = torch.tensor([1.0, 2.0], requires_grad=True)
    v = Cube.apply(u)
    seen = []
    v.register_hook(lambda g: g * 10)  # scales the gradient flowing into v
    torch.autograd.graph.register_multi_grad_hook(
        (u, v), lambda grads: seen.append([g.tolist() for g in grads])
    )
    v.sum().backward()
    print(f"v.grad_fn          = {type(v.grad_fn).__name__}")
    print(f"u.grad             = {u.grad.tolist()}   (10 * 3 u^2: the hook scaled it)")
    print(f"multi-grad hook saw {seen[0]}   (grads of u and v, once)")

    heading("no_grad: nothing is recorded")
    with torch.no_grad():
        z = (t * 2).tanh() + t.exp()
    print(f"z.grad_fn inside no_grad = {z.grad_fn}")
    print(f"(t * 2).grad_fn outside  = {(t * 2).grad_fn.name()}")


if __name__ == "__main__":
    main()
