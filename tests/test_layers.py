"""The package layers and the absence of import cycles (style.md: folders that show the layers).

Every ``import`` statement is read from the source with ``ast``, at any depth (imports inside
functions count: a lazy import is still a dependency), and resolved to the project's modules.
Rules:
- the scoring core (`leaderboard.core`) imports nothing of the server, the harness, the judges
  (a rubric, the causes and the cases a judge reads are benchmark definitions and live in the
  core; a judge is handed to the core, never imported by it), the builders or the demo
  generators, and no Flask, SQLAlchemy, Redis, RQ, Docker SDK, torch or transformers;
- the submission client and the core CLI import nothing of the server;
- the harness imports nothing of `leaderboard`;
- services, access and boards import no web code; jobs import no web code;
- no import cycle between project modules (an ``__init__`` counts as its package).
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("leaderboard", "harness")


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            found[_module_name(path)] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The longest project module that ``name`` is or lies inside."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(mod: str, path: Path) -> set[str]:
    """Every absolute module name imported by ``mod`` (project and third-party)."""
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".")
                base = base if is_pkg else base[:-1]
                base = base[:len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            out.add(prefix)
            out.update(f"{prefix}.{a.name}" for a in node.names)
    return out


def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    project, external = defaultdict(set), defaultdict(set)
    for mod, path in MODULES.items():
        for name in _imports(mod, path):
            target = _resolve(name)
            if target is None:
                external[mod].add(name.split(".")[0])
            elif target != mod:
                project[mod].add(target)
    return project, external


GRAPH, EXTERNAL = _graph()


def _edges_from(prefix: str):
    for mod, targets in GRAPH.items():
        if mod == prefix or mod.startswith(prefix + "."):
            for t in targets:
                yield mod, t


def _within(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


RULES = [
    ("leaderboard.core", ["leaderboard.server", "harness", "leaderboard.builders", "leaderboard.demo",
                          "leaderboard.client", "leaderboard.judges"]),
    ("leaderboard.client", ["leaderboard.server", "harness"]),
    ("leaderboard.verify", ["leaderboard.server", "harness"]),
    ("leaderboard.judges", ["leaderboard.server", "harness"]),
    ("leaderboard.builders", ["leaderboard.server", "harness"]),
    ("leaderboard.demo", ["leaderboard.server", "harness"]),
    ("harness", ["leaderboard"]),
    ("leaderboard.server.models", ["leaderboard.server.services", "leaderboard.server.access",
                                   "leaderboard.server.boards", "leaderboard.server.jobs",
                                   "leaderboard.server.web", "leaderboard.server.cli"]),
    ("leaderboard.server.services", ["leaderboard.server.web", "leaderboard.server.cli",
                                     "leaderboard.server.jobs"]),
    ("leaderboard.server.access", ["leaderboard.server.web", "leaderboard.server.cli",
                                   "leaderboard.server.jobs"]),
    ("leaderboard.server.boards", ["leaderboard.server.web", "leaderboard.server.cli",
                                   "leaderboard.server.jobs"]),
    ("leaderboard.server.jobs", ["leaderboard.server.web", "leaderboard.server.cli"]),
]

HEAVY = {"flask", "flask_login", "flask_wtf", "flask_limiter", "sqlalchemy", "alembic", "redis", "rq",
         "psycopg", "docker", "torch", "transformers", "gunicorn", "cv2", "skimage", "pyarrow"}


@pytest.mark.parametrize("source,forbidden", RULES, ids=[r[0] for r in RULES])
def test_layer_rule(source, forbidden):
    bad = sorted(f"{m} -> {t}" for m, t in _edges_from(source) if _within(t, forbidden))
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_core_imports_no_heavy_library():
    bad = sorted(f"{m} -> {lib}" for m, libs in EXTERNAL.items()
                 if _within(m, ["leaderboard.core", "leaderboard.client", "leaderboard.verify"])
                 for lib in libs & HEAVY)
    assert not bad, "the scoring core must stay light:\n" + "\n".join(bad)


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(GRAPH.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return out


def _is_package_init_edge(a: str, b: str) -> bool:
    # a package importing its own submodule (to re-export it) is not a cycle by itself
    return b.startswith(a + ".")


def test_no_import_cycles():
    cycles = []
    for comp in _cycles():
        members = set(comp)
        # drop package->own-submodule edges and look again within the component
        inner = {m: {t for t in GRAPH[m] if t in members and not _is_package_init_edge(m, t)}
                 for m in comp}
        if _has_cycle(inner):
            cycles.append(" <-> ".join(comp))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def _has_cycle(graph: dict[str, set[str]]) -> bool:
    state = {}

    def dfs(v):
        state[v] = 1
        for w in graph.get(v, ()):
            if state.get(w) == 1 or (w not in state and dfs(w)):
                return True
        state[v] = 2
        return False

    return any(v not in state and dfs(v) for v in graph)
