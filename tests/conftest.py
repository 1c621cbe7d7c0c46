"""Test options: ``slow`` tests run only with --runslow; ``gpu`` tests only where CUDA exists;
``stack`` tests (the compose stack in a container engine) only with --runstack."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")
    parser.addoption(
        "--runstack", action="store_true", help="also run tests marked stack (a container engine)"
    )


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--runslow"):
        skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip_slow)
    if not config.getoption("--runstack"):
        skip_stack = pytest.mark.skip(reason="stack: builds images; run with --runstack")
        for item in items:
            if item.get_closest_marker("stack"):  # not keywords: tests/stack is one
                item.add_marker(skip_stack)
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if gpu_items and not _cuda_available():
        skip_gpu = pytest.mark.skip(reason="gpu: no CUDA device")
        for item in gpu_items:
            item.add_marker(skip_gpu)
