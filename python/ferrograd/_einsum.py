"""einsum, built from views, sum, mul and bmm as torch builds it (CompositeImplicitAutograd).

Every operand is brought to one common dim order: the output's dims (an ellipsis
expanded in place), then the contracted ones; a label an operand lacks is a size-1 dim
there. Repeated labels within one operand become a diagonal first. One operand: a
permute, then a sum over the contracted dims. Several: contracted pairwise left to
right; a pair multiplies and sums the dims no later operand has (a bmm when both sides
have such a dim, a broadcast mul otherwise), keeping them as size-1 dims, which the last
step drops. The graph ends as torch's does for the same equation (PermuteBackward0 for
one operand, SumBackward1 when it sums, MulBackward0 for products, ViewBackward0 after
a bmm).
"""

from ._C import Tensor as _T
from ._functional import _C_TYPE

_ELLIPSIS = "..."


def _error(msg):
    return RuntimeError(f"einsum(): {msg}")


def _sublist_equation(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [out]): the equation string it means
    (labels 0-25 are 'a'-'z', 26-51 'A'-'Z', Ellipsis is '...')."""

    def letters(sublist):
        out = []
        for s in sublist:
            if s is Ellipsis:
                out.append(_ELLIPSIS)
            elif isinstance(s, int) and 0 <= s < 52:
                out.append(chr(ord("a") + s) if s < 26 else chr(ord("A") + s - 26))
            else:
                raise ValueError(
                    f"einsum(): expected subscript to be within the range [0, 52), but got {s}"
                )
        return "".join(out)

    pairs = len(args) // 2
    operands = list(args[0 : 2 * pairs : 2])
    equation = ",".join(letters(s) for s in args[1 : 2 * pairs : 2])
    if len(args) % 2:  # a last sublist: the output's
        equation += "->" + letters(args[-1])
    return equation, operands


def _parse_side(text, offset, who):
    """Labels of one operand's (or the output's) subscripts; an ellipsis is _ELLIPSIS."""
    labels, i = [], 0
    while i < len(text):
        c = text[i]
        if c == ".":
            if _ELLIPSIS in labels:
                raise _error(f"found '.' for {who} for which an ellipsis was already found")
            if text[i : i + 3] != _ELLIPSIS:
                what = "(...)" if who == "output" else ""
                raise _error(
                    f"found '.' for {who} that is not part of any ellipsis {what}".rstrip()
                )
            labels.append(_ELLIPSIS)
            i += 3
            continue
        if c != " ":
            if not ("a" <= c <= "z" or "A" <= c <= "Z"):
                raise _error(
                    f"invalid subscript given at index {offset + i} in the equation string, "
                    "subscripts must be in [a-zA-Z]"
                )
            labels.append(c)
        i += 1
    return labels


def _parse(equation, n_operands):
    lhs, arrow, rhs = equation.partition("->")
    inputs, offset = [], 0
    for k, part in enumerate(lhs.split(",")):
        inputs.append(_parse_side(part, offset, f"operand {k}"))
        offset += len(part) + 1
    if len(inputs) > n_operands:
        raise _error("fewer operands were provided than specified in the equation")
    if len(inputs) < n_operands:
        raise _error("more operands were provided than specified in the equation")
    if arrow:
        output = _parse_side(rhs, len(lhs) + 2, "output")
        seen = {label for labels in inputs for label in labels}
        for i, label in enumerate(output):
            if label == _ELLIPSIS:
                continue
            if label not in seen:
                raise _error(
                    f"output subscript {label} does not appear in the equation for any input "
                    "operand"
                )
            if label in output[:i]:
                raise _error(f"output subscript {label} appears more than once in the output")
    else:
        # implicit output: the ellipsis, then the labels seen once, in ASCII order
        counts = {}
        for labels in inputs:
            for label in labels:
                counts[label] = counts.get(label, 0) + 1
        once = sorted(label for label, n in counts.items() if n == 1 and label != _ELLIPSIS)
        output = ([_ELLIPSIS] if _ELLIPSIS in counts else []) + once
    return inputs, output


def _dim_labels(labels, t, k):
    """One label per dim of operand k: an ellipsis becomes (_ELLIPSIS, j) labels, j
    counted from the right so that ellipses of different lengths broadcast."""
    named = len(labels) - (_ELLIPSIS in labels)
    if _ELLIPSIS not in labels:
        if named != t.dim():
            raise _error(
                f"the number of subscripts in the equation ({named}) does not match the number "
                f"of dimensions ({t.dim()}) for operand {k} and no ellipsis was given"
            )
        return list(labels)
    if named > t.dim():
        raise _error(
            f"the number of subscripts in the equation ({named}) is more than the number of "
            f"dimensions ({t.dim()}) for operand {k}"
        )
    n_ell = t.dim() - named
    at = labels.index(_ELLIPSIS)
    ell = [(_ELLIPSIS, n_ell - 1 - j) for j in range(n_ell)]
    return labels[:at] + ell + labels[at + 1 :]


def _take_diagonals(t, dims, k):
    """Operand k with each repeated label's dims replaced by their diagonal (which
    `diagonal` puts last)."""
    i = 0
    while i < len(dims):
        j = dims.index(dims[i], i + 1) if dims[i] in dims[i + 1 :] else -1
        if j < 0:
            i += 1
            continue
        if t.shape[j] != t.shape[i]:
            raise _error(
                f"subscript {dims[i]} is repeated for operand {k} but the sizes don't match, "
                f"{t.shape[j]} != {t.shape[i]}"
            )
        t = t.diagonal(0, i, j)
        dims = dims[:i] + dims[i + 1 : j] + dims[j + 1 :] + [dims[i]]
    return t, dims


def _check_sizes(operands, dims):
    """Each label's size agrees across operands, up to broadcasting of size 1."""
    sizes = {}
    for k, (t, labels) in enumerate(zip(operands, dims)):
        for size, label in zip(t.shape, labels):
            seen = sizes.get(label)
            if seen is None or seen == 1:
                sizes[label] = size
            elif size not in (1, seen):
                if isinstance(label, tuple):
                    # torch counts the dim from the start of this operand's ellipsis
                    at = sum(1 for d in labels if isinstance(d, tuple)) - 1 - label[1]
                    raise _error(  # (sic: no space before "has")
                        f"dimension {at} covered by ellipsis in operand {k}has size {size} which "
                        "does not broadcast with previously seen ellipsis with size "
                        f"{seen} for the respective dimension"
                    )
                raise _error(
                    f"subscript {label} has size {size} for operand {k} which does not "
                    f"broadcast with previously seen size {seen}"
                )
    return sizes


def _aligned(t, dims, order):
    """Operand t with its dims in `order`, size-1 dims where it lacks a label."""
    t = t.permute(*[dims.index(label) for label in order if label in dims])
    for i, label in enumerate(order):
        if label not in dims:
            t = t.unsqueeze(i)
    return t


def _sum_product(left, right, sum_dims):
    """left * right summed over `sum_dims`, which stay as size-1 dims (both operands in
    the common dim order)."""
    only_left = [d for d in sum_dims if left.shape[d] != 1 and right.shape[d] == 1]
    only_right = [d for d in sum_dims if right.shape[d] != 1 and left.shape[d] == 1]
    if only_left:
        left = left.sum(only_left, keepdim=True)
    if only_right:
        right = right.sum(only_right, keepdim=True)
    both = [d for d in sum_dims if left.shape[d] != 1 and right.shape[d] != 1]
    if not both:
        return left * right
    if left.dtype != right.dtype:
        raise RuntimeError(
            f"expected scalar type {_C_TYPE[left.dtype]} but found {_C_TYPE[right.dtype]}"
        )
    rest = [d for d in range(left.dim()) if d not in both]
    batch = [d for d in rest if left.shape[d] != 1 and right.shape[d] != 1]
    lo = [d for d in rest if left.shape[d] != 1 and right.shape[d] == 1]
    ro = [d for d in rest if right.shape[d] != 1 and left.shape[d] == 1]
    ones = [d for d in range(left.dim()) if d not in batch + lo + ro]  # size 1 in the result

    def size(t, ds):
        n = 1
        for d in ds:
            n *= t.shape[d]
        return n

    b, m, s, n = size(left, batch), size(left, lo), size(left, both), size(right, ro)
    lhs = left.permute(*batch, *lo, *both, *[d for d in ones + ro if d not in both])
    rhs = right.permute(*batch, *both, *ro, *[d for d in ones + lo if d not in both])
    out = lhs.reshape(b, m, s).bmm(rhs.reshape(b, s, n))
    order = batch + lo + ro + ones
    out = out.reshape(
        [left.shape[d] for d in batch + lo] + [right.shape[d] for d in ro] + [1] * len(ones)
    )
    if order != sorted(order):
        out = out.permute(*[order.index(d) for d in range(len(order))])
    return out


def einsum(*args):
    """Sums of products of the operands' elements as the equation says (torch's
    einsum: explicit and implicit output, ellipsis broadcasting, repeated subscripts
    within an operand as its diagonal; the sublist form too)."""
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at "
            "least one operand and its subscripts list"
        )
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    else:
        equation, operands = _sublist_equation(args)
    for t in operands:
        if not isinstance(t, _T):
            raise TypeError(
                f"einsum(): argument 'operands' must be tuple of Tensors, not {type(t).__name__}"
            )
    inputs, output = _parse(equation, len(operands))

    dims = [_dim_labels(labels, t, k) for k, (labels, t) in enumerate(zip(inputs, operands))]
    diagonal = [_take_diagonals(t, d, k) for k, (t, d) in enumerate(zip(operands, dims))]
    operands, dims = [t for t, _ in diagonal], [d for _, d in diagonal]
    _check_sizes(operands, dims)

    n_ell = 0
    for d in dims:
        n = sum(1 for label in d if isinstance(label, tuple))
        n_ell = n if n > n_ell else n_ell
    ellipsis = [(_ELLIPSIS, j) for j in reversed(range(n_ell))]
    out_dims = []
    for label in output:
        out_dims.extend(ellipsis if label == _ELLIPSIS else [label])
    contracted = []
    for d in dims:
        contracted.extend(label for label in d if label not in out_dims + contracted)
    order = out_dims + contracted
    aligned = [_aligned(t, d, order) for t, d in zip(operands, dims)]
    n_out, contracted_at = len(out_dims), range(len(out_dims), len(order))

    if len(aligned) == 1:
        result = aligned[0]
        return result.sum(tuple(contracted_at)) if contracted else result
    result = aligned[0]
    for k in range(1, len(aligned)):
        later = {label for d in dims[k + 1 :] for label in d}
        sum_dims = [i for i in contracted_at if order[i] not in later]
        result = _sum_product(result, aligned[k], sum_dims)
    if not contracted:
        return result
    return result.reshape(result.shape[:n_out])
