"""The README's per-sample-gradients example runs as printed (func.md §11, C366)."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def _section_code(title):
    text = README.read_text()
    section = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, f"no python block under '{title}'"
    return blocks[0]


def test_per_sample_gradients_example_runs(capsys):
    code = _section_code("Per-sample gradients (torch.func)")
    exec(compile(code, str(README), "exec"), {})
    assert capsys.readouterr().out.strip() == "ferrograd.Size([3, 5])"
