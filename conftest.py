"""Stops a pytest run early, with the command to use, when the test environment is missing.

The tests need the packages of `.venv` (langbot-plugin and the test extras), which
`bash scripts/test.sh` creates and uses. `python3 -m pytest` with another interpreter
would otherwise end in an ImportError deep inside a fixture module.
"""

from __future__ import annotations

import sys

TEST_COMMAND = "bash scripts/test.sh"

try:
    import langbot_plugin  # noqa: F401
except ImportError:
    # Printed and raised as SystemExit, not pytest.exit(): pytest reports the latter as an
    # "ImportError while loading conftest" with a traceback, which hides the message.
    sys.stderr.write(
        f"\nERROR: langbot_plugin is not importable by {sys.executable}: run the tests with `{TEST_COMMAND}` "
        f"(README, Set up), which creates .venv with every test dependency, or afterwards with "
        f"`.venv/bin/python -m pytest <paths>`.\n\n"
    )
    raise SystemExit(4) from None
