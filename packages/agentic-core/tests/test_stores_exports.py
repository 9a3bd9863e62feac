"""agentic_core.stores exports exactly its sorted ``__all__`` and never imports pytest."""

import subprocess
import sys
import types

import agentic_core.stores


def test_stores_all_is_sorted_and_unique() -> None:
    assert list(agentic_core.stores.__all__) == sorted(set(agentic_core.stores.__all__))


def test_stores_public_names_are_exactly_all() -> None:
    public = {
        name
        for name, value in vars(agentic_core.stores).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(agentic_core.stores.__all__)


def test_importing_the_stores_does_not_import_pytest() -> None:
    code = "import sys, agentic_core.stores, agentic_core.testing; print('pytest' in sys.modules)"

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )

    assert result.stdout.strip() == "False"
