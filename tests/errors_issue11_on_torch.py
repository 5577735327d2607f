"""Write tests/ERRORS_issue11.md: torch 2.15's exception class and message for bad inputs
to issue 11's ops (not collected by pytest).

    /root/torchvenv/bin/python tests/errors_issue11_on_torch.py

Every call below runs on torch; the note records what it raised (or that it did not).
Names in the calls: x float64 (3, 4), x3 float64 (2, 3, 4), s float64 0-dim, e float64
(0, 3), i int64 (3, 4), b bool (3, 4), z complex128 (3, 4), f float32 (3, 4), and
idx int64 [[0, 1], [2, 3], [1, 0]].
"""

import warnings
from pathlib import Path

import torch

NAMES = {
    "torch": torch,
    "x": torch.randn(3, 4, dtype=torch.float64),
    "x3": torch.randn(2, 3, 4, dtype=torch.float64),
    "s": torch.tensor(1.5, dtype=torch.float64),
    "e": torch.zeros(0, 3, dtype=torch.float64),
    "i": torch.arange(12).reshape(3, 4),
    "b": torch.arange(12).reshape(3, 4) > 5,
    "z": torch.randn(3, 4, dtype=torch.complex128),
    "f": torch.randn(3, 4),
    "idx": torch.tensor([[0, 1], [2, 3], [1, 0]]),
}

CASES = {
    "amax": [
        "torch.amax(x, 2)",
        "torch.amax(e, 0)",
        "torch.amax(e)",
        "torch.amax(x, (1, -1))",
    ],
    "amin": ["torch.amin(x, -3)", "torch.amin(e, 0)", "torch.amin(z)"],
    "argmax": ["torch.argmax(x, 2)", "torch.argmax(e)", "torch.argmax(e, 0)", "torch.argmax(z)"],
    "argmin": ["torch.argmin(x, -3)", "torch.argmin(e)", "torch.argmin(e, 0)"],
    "prod": [
        "torch.prod(x, 2)",
        "torch.prod(x, (0, 1))",
        "torch.prod(x, dtype=torch.int64)",
        "torch.prod(b, 0, dtype=torch.bool)",
        "torch.prod(b).dtype",
    ],
    "logsumexp": ["torch.logsumexp(x)", "torch.logsumexp(x, 2)", "torch.logsumexp(x, (0, 0))",
                  "torch.logsumexp(z, 0)"],
    "softmax": ["torch.softmax(x)", "torch.softmax(x, 2)", "torch.softmax(i, 0)",
                "torch.softmax(x, 0, dtype=torch.int64)"],
    "log_softmax": ["torch.log_softmax(x)", "torch.log_softmax(x, -3)",
                    "torch.log_softmax(i, 0)"],
    "var": [
        "torch.var(x, 2)",
        "torch.var(i)",
        "torch.var(x, 1, correction=1, unbiased=True)",
        "torch.var(x, (0, 0))",
        "torch.var(e, 0)",
    ],
    "std": ["torch.std(x, -3)", "torch.std(b)", "torch.std(x, dim=1, correction=0.5)"],
    "var_mean": ["torch.var_mean(x, 2)", "torch.var_mean(i)"],
    "std_mean": ["torch.std_mean(x, -3)", "torch.std_mean(b, 0)"],
    "cumsum": ["torch.cumsum(x)", "torch.cumsum(x, 2)", "torch.cumsum(b, 0, dtype=torch.bool)",
               "torch.cumsum(x, 0, dtype=torch.int64)", "torch.cumsum(b, 0).dtype"],
    "cumprod": ["torch.cumprod(x)", "torch.cumprod(x, -3)", "torch.cumprod(s, 1)"],
    "floor": ["torch.floor(z)", "torch.floor(i).dtype", "torch.floor(b)"],
    "ceil": ["torch.ceil(z)", "torch.ceil(b)"],
    "trunc": ["torch.trunc(z)", "torch.trunc(b)"],
    "frac": ["torch.frac(z)", "torch.frac(i)", "torch.frac(b)"],
    "round": ["torch.round(z)", "torch.round(i, decimals=2)", "torch.round(x, decimals=2.5)",
              "torch.round(b)"],
    "square": ["torch.square(b).dtype", "torch.square('a')"],
    "sign": ["torch.sign(z)", "torch.sign(b).dtype"],
    "sgn": ["torch.sgn(b).dtype", "torch.sgn(i).dtype"],
    "deg2rad": ["torch.deg2rad(z)", "torch.deg2rad(i).dtype", "torch.deg2rad(b)"],
    "rad2deg": ["torch.rad2deg(z)", "torch.rad2deg(b)"],
    "maximum": ["torch.maximum(x, 2.0)", "torch.maximum(x, x3[:, :2])", "torch.maximum(z, z)",
                "torch.maximum(x, f).dtype"],
    "minimum": ["torch.minimum(2.0, x)", "torch.minimum(x, torch.zeros(4, 3))",
                "torch.minimum(z, x)"],
    "fmax": ["torch.fmax(x, 2.0)", "torch.fmax(z, z)", "torch.fmax(x, torch.zeros(2, 4))"],
    "fmin": ["torch.fmin(z, z)", "torch.fmin(x, torch.zeros(2, 4))"],
    "isnan": ["torch.isnan(1.0)", "torch.isnan(z).dtype"],
    "isinf": ["torch.isinf([1.0])", "torch.isinf(i).dtype"],
    "isfinite": ["torch.isfinite(None)", "torch.isfinite(b).dtype"],
    "isposinf": ["torch.isposinf(z)", "torch.isposinf(i).dtype"],
    "isneginf": ["torch.isneginf(z)", "torch.isneginf(b).dtype"],
    "signbit": ["torch.signbit(z)", "torch.signbit(i).dtype", "torch.signbit(b).dtype"],
    "stack": ["torch.stack([])", "torch.stack([x, x.T])", "torch.stack([x, x], 3)",
              "torch.stack(x)", "torch.stack([x, f]).dtype"],
    "hstack": ["torch.hstack([])", "torch.hstack([x, x3])", "torch.hstack([x, torch.zeros(2, 4)])"],
    "vstack": ["torch.vstack([])", "torch.vstack([x, torch.zeros(3, 3)])"],
    "dstack": ["torch.dstack([])", "torch.dstack([x, torch.zeros(3, 3)])"],
    "column_stack": ["torch.column_stack([])", "torch.column_stack([x, torch.zeros(4)])"],
    "flip": ["torch.flip(x, [0, 0])", "torch.flip(x, [2])", "torch.flip(x, 0).shape",
             "torch.flip(x)"],
    "fliplr": ["torch.fliplr(x[0])", "torch.fliplr(s)"],
    "flipud": ["torch.flipud(s)", "torch.flipud(e).shape"],
    "movedim": ["torch.movedim(x, (0, 1), (0,))", "torch.movedim(x, 0, 2)",
                "torch.movedim(x, (0, 0), (0, 1))", "torch.movedim(x, (0, 1), (1, 1))"],
    "moveaxis": ["torch.moveaxis(x, (0, 1), (0,))", "torch.moveaxis(x, 2, 0)"],
    "swapaxes": ["torch.swapaxes(x, 0, 2)", "torch.swapaxes(x, -3, 0)"],
    "repeat": ["x.repeat(2)", "x.repeat(-1, 1)", "x.repeat(2.0, 1)", "s.repeat()"],
    "tile": ["torch.tile(x, (-1,))", "torch.tile(x, 2)", "torch.tile(x, ()).shape"],
    "tril": ["torch.tril(x[0])", "torch.tril(s)", "torch.tril(x, 1.5)"],
    "triu": ["torch.triu(x[0])", "torch.triu(x, diagonal=None)"],
    "gather": [
        "torch.gather(x, 1, idx.float())",
        "torch.gather(x, 1, idx + 3)",
        "torch.gather(x, 1, idx[0])",
        "torch.gather(x, 2, idx)",
        "torch.gather(x, 1, idx.int())",
        "torch.gather(x, 0, torch.zeros(4, 4, dtype=torch.int64))",
    ],
    "scatter": [
        "torch.scatter(x, 1, idx.float(), x)",
        "torch.scatter(x, 1, idx + 3, x)",
        "torch.scatter(x, 1, idx, f)",
        "torch.scatter(x, 1, torch.zeros(3, 5, dtype=torch.int64), x)",
        "torch.scatter(x, 1, idx, x[:, :1])",
        # src bigger than the index: forward takes it, backward fails
        "torch.scatter(x.clone().requires_grad_(), 1, idx, x.clone().requires_grad_()).sum()"
        ".backward()",
    ],
    "scatter_add": [
        "torch.scatter_add(x, 1, idx.int(), x)",
        "torch.scatter_add(x, 1, idx - 5, x)",
        "torch.scatter_add(x, 1, idx, 1.5)",
        "torch.scatter_add(x, 2, idx, x)",
    ],
    "index_select": [
        "torch.index_select(x, 0, torch.tensor([0.0]))",
        "torch.index_select(x, 0, torch.tensor([3]))",
        "torch.index_select(x, 0, idx)",
        "torch.index_select(x, 2, torch.tensor([0]))",
        "torch.index_select(x, 0, torch.tensor([-1]))",
    ],
    "masked_fill": [
        "torch.masked_fill(x, x, 1.0)",
        "torch.masked_fill(x, b[:2], 1.0)",
        "torch.masked_fill(x, b, torch.ones(2))",
        "torch.masked_fill(x, b, 1 + 2j)",
        "torch.masked_fill(i, b, 1.5).dtype",
        "x.masked_fill_(b[0, :2], 1.0)",
    ],
    "getitem (advanced)": [
        "x[idx]",
        "x[:, idx + 2]",
        "x[x]",
        "x[b[:2]]",
        "x[:, b[0, :3]]",
        "x[[0], [0], [0]]",
        "x[[[0, 1]]].shape",
        "x[[0, slice(None)]].shape",
        "torch.vmap(lambda q: q[q > 0])(x)",
    ],
    "index_put": [
        "x.index_put((idx,), s)",
        "x.index_put((idx[0],), f[0, :1])",
        "x.index_put((x,), s)",
        "x.index_put((idx[0], idx[0], idx[0]), s)",
        "x.index_put((None, idx[0]), s)",
        "x.index_put((idx[0],), s, accumulate=1)",
        "x.index_put((idx[0],), x3)",
    ],
    "index_fill": [
        "x.index_fill(0, idx, 1.0)",
        "x.index_fill(2, idx[0], 1.0)",
        "x.index_fill(0, idx[0].float(), 1.0)",
        "x.index_fill(0, idx[0] + 3, 1.0)",
        "x.index_fill(0, idx[0], s).grad_fn",
        "torch.index_fill(s, 0, idx[0, :1], 1.0)",
    ],
    "nonzero / argwhere": [
        "torch.nonzero(x, as_tuple=1)",
        "torch.nonzero(s, as_tuple=True)",
        "torch.vmap(torch.nonzero)(x)",
        "torch.vmap(torch.argwhere)(x).shape",
    ],
}


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def outcome(call: str) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = eval(call, dict(NAMES))  # our own literal calls
        except Exception as ex:
            lines = str(ex).strip().splitlines() or [""]
            more = f" (+{len(lines) - 1} lines: the overload list)" if len(lines) > 1 else ""
            return f"**{type(ex).__name__}**: {_code(lines[0])}{more}"
    said = "no error" + ("" if isinstance(result, torch.Tensor) else f": {_code(repr(result))}")
    for w in caught:
        said += f"; warns {w.category.__name__}: {_code(str(w.message).split(' (Triggered')[0])}"
    return said


def main() -> None:
    out = [
        "# Issue 11: torch 2.15's errors for bad inputs",
        "",
        "A working note for the lead, written by `tests/errors_issue11_on_torch.py` (run with",
        "torch 2.15; edit the script, not this file). Names: x float64 (3, 4), x3 float64",
        "(2, 3, 4), s float64 0-dim, e float64 (0, 3), i int64, b bool, z complex128, f float32",
        "(all (3, 4)), idx int64 [[0, 1], [2, 3], [1, 0]]. A TypeError from torch's argument",
        "parser is followed by its overload list, left out here. \"no error\" rows are behaviour",
        "worth matching too (a dtype, or an input torch accepts).",
    ]
    for op, calls in CASES.items():
        out += ["", f"## {op}", ""]
        out += [f"- `{call}` → {outcome(call)}" for call in calls]
    path = Path(__file__).resolve().parent / "ERRORS_issue11.md"
    path.write_text("\n".join(out) + "\n")
    print(f"wrote {path.name} ({sum(map(len, CASES.values()))} calls)")


if __name__ == "__main__":
    main()
