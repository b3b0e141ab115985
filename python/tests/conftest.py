"""Shared helpers: the repository's examples and its `stiction` CLI (to compare against)."""

import csv
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def _cli() -> Path:
    """The CLI binary of this checkout: $STICTION_CLI, else target/release/stiction, brought
    up to date by cargo (a no-op after `cargo test --release --workspace`; a stale binary
    would compare against an older CLI)."""
    env = os.environ.get("STICTION_CLI")
    if env:
        return Path(env)
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--bin", "stiction"], cwd=REPO, check=True, timeout=1800
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "release" / "stiction"


@pytest.fixture(scope="session")
def cli() -> Path:
    return _cli()


def read_csv(path):
    """A CSV as {column: list}: numbers by Python's float() (correctly rounded, so the
    CLI's shortest round-trip text gives back the very same double), other text as is."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    out = {}
    for j, name in enumerate(header):
        col = [r[j] for r in body]
        try:
            out[name] = [float(x) for x in col]
        except ValueError:
            out[name] = col
    return out


@pytest.fixture
def sigint_handler():
    """Python's own Ctrl-C handler for the test. A process started in the background by a
    non-interactive shell inherits SIGINT ignored, and then Python installs no handler and
    `_thread.interrupt_main()` does nothing."""
    import signal

    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
