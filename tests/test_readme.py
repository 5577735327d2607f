"""The README's examples run as printed: per-sample gradients (func.md §11, C366) and
profiling (profiler.md, C391 table layout, C399 trace)."""

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


def test_profiling_example_runs(capsys, tmp_path, monkeypatch):
    import json
    import xml.etree.ElementTree as ET

    monkeypatch.chdir(tmp_path)
    code = _section_code("Profiling")
    exec(compile(code, str(README), "exec"), {})
    lines = capsys.readouterr().out.strip().splitlines()
    assert "Self CPU %" in lines[1] and "Total KFLOPs" in lines[1]
    assert lines[-1].startswith("Self CPU time total: ")
    assert len(lines) == 3 + 8 + 2  # header, row_limit rows, separator and total
    trace = json.loads((tmp_path / "mlp_trace.json").read_text())
    assert any(e.get("name") == "AddmmBackward0" for e in trace["traceEvents"])
    svg = ET.parse(tmp_path / "mlp_flamegraph.svg").getroot()
    assert svg.tag.endswith("svg")
    assert "aten::mm" in "".join(svg.itertext())
