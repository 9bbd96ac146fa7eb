"""The package layers and the absence of import cycles (style.md: folders that show the layers).

Every ``import`` statement is read from the source with ``ast``, at any depth (imports inside
functions count: a lazy import is still a dependency), and resolved to the project's modules:
``from pkg import name`` depends on the submodule ``pkg.name`` when there is one and on
``pkg`` (its ``__init__``) otherwise.
Rules (docs/internals.md, "Layers"):
- the scoring core (`leaderboard.core`) imports nothing of the server, the harness, the judges
  (a rubric, the causes and the cases a judge reads are benchmark definitions and live in the
  core; a judge is handed to the core, never imported by it), the builders or the demo
  generators, and no Flask, SQLAlchemy, Redis, RQ, Docker SDK, torch or transformers;
- the submission client and the core CLI import nothing of the server; the demo generators
  import nothing of the builders (which sit above them);
- the harness imports nothing of `leaderboard`;
- in the server, `access/` (policy: who may do what, agreements, the audit log) is below
  `services/` and imports nothing of it; services, access and boards import no web code; jobs
  import no web code;
- the web's HTML page modules and its API (`web/api/`) never import each other: what both need
  (request helpers) lives in `web/requests.py` and the other shared web modules, which
  import neither;
- no import cycle between project modules. A package's ``__init__`` importing its own submodule
  (a re-export) is no cycle by itself, but it is one when that submodule leads back to the package.
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


def _resolve(name: str, modules=MODULES) -> str | None:
    """The longest project module that ``name`` is or lies inside."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(mod: str, source: str, *, is_pkg: bool, modules=MODULES) -> set[str]:
    """Every absolute module name ``mod`` depends on (project and third-party).

    ``from X import a`` names ``X.a`` when that is a module and ``X`` otherwise (``a`` is then
    defined or re-exported by ``X``'s ``__init__``), so ``from . import sibling`` is no edge to
    the package while ``from pkg import re_exported_name`` is.
    """
    tree = ast.parse(source, mod)
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
            for alias in node.names:
                sub = f"{prefix}.{alias.name}"
                out.add(sub if sub in modules else prefix)
    return out


def _graph(modules=MODULES) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    project, external = defaultdict(set), defaultdict(set)
    for mod, path in modules.items():
        for name in _imports(mod, path.read_text(), is_pkg=path.name == "__init__.py",
                             modules=modules):
            target = _resolve(name, modules)
            if target is None:
                external[mod].add(name.split(".")[0])
            elif target != mod:
                project[mod].add(target)
    return project, external


GRAPH, EXTERNAL = _graph()


def _edges_from(prefix: str, graph=GRAPH):
    for mod, targets in graph.items():
        if mod == prefix or mod.startswith(prefix + "."):
            for t in targets:
                yield mod, t


def _within(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


S = "leaderboard.server."
RULES = [
    ("leaderboard.core", ["leaderboard.server", "harness", "leaderboard.builders", "leaderboard.demo",
                          "leaderboard.client", "leaderboard.judges", "leaderboard.features"]),
    ("leaderboard.client", ["leaderboard.server", "harness"]),
    ("leaderboard.verify", ["leaderboard.server", "harness"]),
    ("leaderboard.judges", ["leaderboard.server", "harness"]),
    ("leaderboard.builders", ["leaderboard.server", "harness"]),
    ("leaderboard.demo", ["leaderboard.server", "harness", "leaderboard.builders"]),
    ("harness", ["leaderboard"]),
    (S + "errors", [S + "services", S + "access", S + "boards", S + "jobs", S + "web"]),
    (S + "models", [S + "services", S + "access", S + "boards", S + "jobs", S + "web", S + "cli"]),
    (S + "access", [S + "services", S + "web", S + "cli", S + "jobs"]),
    (S + "services", [S + "web", S + "cli", S + "jobs"]),
    (S + "boards", [S + "web", S + "cli", S + "jobs"]),
    (S + "jobs", [S + "web", S + "cli"]),
    ("leaderboard.features", ["leaderboard.server", "harness", "leaderboard.builders",
                              "leaderboard.demo", "leaderboard.judges", "leaderboard.client"]),
]

# The web's HTML page modules: none of them imports the API package (`web/api/`) or the other
# way round; what both need lives in the shared web modules (`WEB_SHARED`).
WEB_PAGES = [S + "web." + m for m in (
    "public", "robustness", "submit", "compare", "challenges", "team", "access", "account", "auth",
    "participate", "admin", "admin_base", "admin_builds", "admin_challenges", "admin_judges",
    "admin_identity", "admin_outbox", "admin_reruns", "mail", "two_factor", "ops", "analysis",
    "decay")]
WEB_SHARED = [S + "web." + m for m in ("requests", "intake", "inputs", "uploads", "errors",
                                       "extensions", "hardening")]
RULES += [(page, [S + "web.api"]) for page in WEB_PAGES]
RULES += [(S + "web.api", WEB_PAGES)]
RULES += [(shared, WEB_PAGES + [S + "web.api"]) for shared in WEB_SHARED]

HEAVY = {"flask", "flask_login", "flask_wtf", "flask_limiter", "sqlalchemy", "alembic", "redis", "rq",
         "psycopg", "docker", "torch", "transformers", "gunicorn", "cv2", "skimage", "pyarrow"}


@pytest.mark.parametrize("source,forbidden", RULES, ids=[r[0] for r in RULES])
def test_layer_rule(source, forbidden):
    assert source in MODULES or any(m.startswith(source + ".") for m in MODULES), source
    bad = sorted(f"{m} -> {t}" for m, t in _edges_from(source) if _within(t, forbidden))
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_every_web_module_is_classified():
    """A new web module is a page, part of the API or a shared module (the app factory,
    ``web/__init__``, wires them all)."""
    web = {m for m in MODULES if _within(m, [S + "web"]) and not _within(m, [S + "web.api"])}
    unknown = sorted(web - set(WEB_SHARED) - set(WEB_PAGES) - {S + "web"})
    assert not unknown, f"classify these web modules in tests/test_layers.py: {unknown}"


def test_core_imports_no_heavy_library():
    bad = sorted(f"{m} -> {lib}" for m, libs in EXTERNAL.items()
                 if _within(m, ["leaderboard.core", "leaderboard.client", "leaderboard.verify"])
                 for lib in libs & HEAVY)
    assert not bad, "the scoring core must stay light:\n" + "\n".join(bad)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan).

    Nothing is dropped: an edge from a package to its own submodule closes a cycle exactly when
    the submodule leads back to the package, and is then reported with the rest of the loop.
    """
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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

    nodes = set(graph) | {w for ws in graph.values() for w in ws}
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    cycles = [" <-> ".join(c) for c in _cycles(GRAPH)]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_a_cycle_through_a_package_reexport_is_reported(tmp_path):
    """The loop the old rule missed: ``pkg/__init__`` re-exports ``pkg.a``, which imports
    ``other``, which imports a name from ``pkg`` (the re-export)."""
    files = {
        "pkg/__init__.py": "from pkg.a import thing\n",
        "pkg/a.py": "def thing():\n    from other import helper\n    return helper()\n",
        "other.py": "from pkg import thing\n\ndef helper():\n    return 1\n",
        "pkg/b.py": "from . import a\n",
        "ok/__init__.py": "from ok.c import name\n",
        "ok/c.py": "from other2 import x\n",
        "other2.py": "x = 1\n",
    }
    modules = {}
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        modules[_module_name_in(tmp_path, path)] = path
    graph, _ = _graph(modules)
    assert graph["pkg"] == {"pkg.a"} and graph["other"] == {"pkg"}
    assert graph["pkg.b"] == {"pkg.a"}                  # `from . import a` is no edge to `pkg`
    assert _cycles(graph) == [["other", "pkg", "pkg.a"]]  # ok -> ok.c does not lead back


def _module_name_in(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
