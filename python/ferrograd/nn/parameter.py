"""``nn.Parameter``: a leaf tensor that requires grad by default."""

from .. import _C


class Parameter(_C.Tensor):
    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        t = _C.Tensor.__new__(cls, data)
        t._fg_register()
        t.requires_grad_(requires_grad)
        return t

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (Parameter, (self.detach(), self.requires_grad))
