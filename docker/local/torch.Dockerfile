# The Python stand-in with torch 2.13.0 installed from a wheel in this build context (the CPU
# wheel this machine has, or PyPI's), for images whose own `pip install torch==2.13.0` then finds
# the requirement satisfied and fetches nothing from PyTorch's index.
ARG PYTHON_IMAGE=heraldbench-local/python:3.11-bookworm
FROM ${PYTHON_IMAGE}

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY torch-*.whl /tmp/wheels/
RUN pip install /tmp/wheels/torch-*.whl \
    && rm -rf /tmp/wheels \
    && python -c "import torch; print('torch', torch.__version__)"
