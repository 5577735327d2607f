"""Small modules shared by test_nn_module.py and test_functional_call.py (not a test
file; importable under tests/run_nn_on_torch.py too, where ``ferrograd`` is torch)."""

from ferrograd import nn


class Tied(nn.Module):
    """Two Linear layers sharing one weight (``b.weight = a.weight``)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(self.a(x))
