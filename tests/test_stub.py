"""The typed stub python/ferrograd/_C.pyi (issue 8 §3) is what tools/gen_stub.py writes
and names exactly what ferrograd._C exports: module functions, classes and their members."""

import ast
import importlib.util
import pathlib

from ferrograd import _C

ROOT = pathlib.Path(__file__).resolve().parent.parent
STUB = ROOT / "python" / "ferrograd" / "_C.pyi"
BOOKKEEPING = {"__dict__", "__doc__", "__module__", "__weakref__", "__qualname__"}


def _gen_stub():
    spec = importlib.util.spec_from_file_location("gen_stub", ROOT / "tools" / "gen_stub.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _is_api(name):
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _stub_names():
    top, classes = set(), {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {
                n.name if isinstance(n, ast.FunctionDef) else n.target.id
                for n in node.body
                if isinstance(n, (ast.FunctionDef, ast.AnnAssign))
            }
            top.add(node.name)
        elif isinstance(node, ast.FunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
    return top, classes


def test_stub_is_what_gen_stub_writes():
    assert STUB.read_text() == _gen_stub().render(_C), "stale stub: run python tools/gen_stub.py"


def test_stub_names_every_module_attribute():
    top, _ = _stub_names()
    assert top == {n for n in vars(_C) if not (n.startswith("__") and n.endswith("__"))}


def test_stub_names_every_public_class_member():
    _, classes = _stub_names()
    for name, members in classes.items():
        cls = vars(getattr(_C, name))
        python = {n for n, raw in cls.items() if _gen_stub().from_python(raw)}
        real = {n for n in cls if _is_api(n)} - BOOKKEEPING - python
        assert {n for n in members if _is_api(n)} == real, name


def test_stub_types_the_op_table():
    text = STUB.read_text()
    assert "def add(input: Union[Tensor, Number], other: Union[Tensor, Number], *, alpha" in text
    assert "    def exp_(self) -> Tensor: ..." in text


def test_stub_is_marked_typed():
    assert (STUB.parent / "py.typed").exists()
