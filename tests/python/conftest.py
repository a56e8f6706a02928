"""Shared fixtures. Each test file runs in its own process (one CTest test per file), so
the runtime state one file sets (backend, config) never leaks into another."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import hwrt  # noqa: E402  (PYTHONPATH points at the build tree's python/ directory)


@pytest.fixture
def sim():
    """The simulated NPU, device 0, as the current device."""
    hwrt.set_device("sim", 0)
    return hwrt


def figures(dev=0):
    return hwrt.runtime.get_memory_info(dev)
