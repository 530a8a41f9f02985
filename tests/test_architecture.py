"""Every module of the four apps sits in a layer of its app's own layers contract
(``pyproject.toml``'s import-linter contracts; ``make lint`` checks that each contract holds):
a module in no layer could import anything of its app unseen. The contract between the apps
puts whole apps in its layers, so it does not count here, nor does a layer naming a whole
package that a contract of its own splits into layers; migrations are Django's."""

import ast
import re
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
APPS = ("docplatform", "integrations", "webhooks", "marketplace")


def _layer_modules() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    named: set[str] = set()
    for contract in config["contracts"]:
        if contract["type"] != "layers":
            continue
        for layer in contract["layers"]:
            for module in re.split(r"[:|]", layer.replace("\\", " ")):
                module = module.strip()
                if module and module not in APPS:  # whole apps: the contract between them
                    named.add(module)
    # A package some contract splits into layers (a feature, the runtime host) places its
    # modules only through that contract, not through the layer naming it whole.
    return {m for m in named if not any(other.startswith(m + ".") for other in named)}


def _holds_nothing(package: str) -> bool:
    """A package whose ``__init__`` is empty or a docstring alone (its modules are placed)."""
    body = ast.parse((ROOT / Path(*package.split(".")) / "__init__.py").read_text()).body
    return all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in body)


def test_every_module_of_the_apps_is_in_a_layer():
    graph = grimp.build_graph(*APPS)
    named = _layer_modules()
    unplaced = sorted(
        module
        for module in graph.modules
        if module not in APPS
        and ".migrations" not in module
        and not any(module == layer or module.startswith(layer + ".") for layer in named)
        and not (graph.find_children(module) and _holds_nothing(module))
    )
    assert unplaced == [], f"modules in no layer of their app's contract: {unplaced}"
