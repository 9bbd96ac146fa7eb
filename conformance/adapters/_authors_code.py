"""Loading the authors' code from their checkout for the SynCred and VCT² adapters.

`load_module` imports a whole file whose top level only defines things (``evaluate_mllm.py``).
`load_functions` takes named top-level functions and constants out of a script whose top level
also *runs* (``feature_extraction_agid.py`` walks a placeholder folder when imported) or imports
what we do not have (``universal_fake_detect_validate_sd35_new.py`` imports a model zoo): it
compiles only those definitions, from the authors' own source text, with the file's import
statements that bind names the definitions use. Nothing of theirs is copied into the project.
"""
from __future__ import annotations

import ast
import importlib.util
import sys
import types
from pathlib import Path


def _need(authors_dir: Path, rel: str) -> Path:
    path = Path(authors_dir) / rel
    if not path.is_file():
        raise FileNotFoundError(f"the authors' file {path} is missing: is {authors_dir} their "
                                "checkout?")
    return path


def load_module(authors_dir: Path, rel: str, name: str) -> types.ModuleType:
    """Import the authors' file ``rel`` as module ``name`` (a fresh module object)."""
    path = _need(authors_dir, rel)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_functions(authors_dir: Path, rel: str, names: set[str]) -> types.ModuleType:
    """A module holding only the top-level functions and assignments of ``rel`` named in
    ``names`` (KeyError naming the ones the file lacks), plus the imports they use."""
    path = _need(authors_dir, rel)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    keep = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            keep.append(node)
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in names for t in node.targets):
            keep.append(node)
    found = {n.name if not isinstance(n, ast.Assign) else n.targets[0].id for n in keep}
    if names - found:
        raise KeyError(f"{path} defines no {sorted(names - found)}")
    used = {n.id for k in keep for n in ast.walk(k) if isinstance(n, ast.Name)}
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
               and any((a.asname or a.name.split(".")[0]) in used for a in node.names)]
    module = types.ModuleType(f"authors:{rel}")
    module.__file__ = str(path)
    code = compile(ast.Module(body=imports + keep, type_ignores=[]), str(path), "exec")
    exec(code, module.__dict__)  # noqa: S102 - the authors' own definitions, by design
    return module
