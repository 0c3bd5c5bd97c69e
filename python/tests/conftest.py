import os
import shutil
import subprocess

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (ctest label gpu; run on the device)")


@pytest.fixture(scope="session")
def cli():
    """Runs the `strata` binary of the same build (STRATA_CLI, set by ctest) and returns its stdout."""
    path = os.environ.get("STRATA_CLI") or shutil.which("strata")
    if not path:
        pytest.skip("no strata binary (set STRATA_CLI)")

    def run(*args):
        done = subprocess.run([path, *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout
    return run


@pytest.fixture
def gpu():
    import strata
    if strata.cuda_devices() == 0:
        pytest.skip("no CUDA device")
