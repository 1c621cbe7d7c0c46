# A stand-in for python:3.11-slim where Docker Hub cannot be reached: Debian bookworm (a
# debootstrap root filesystem that docker/local-images.sh imports as BOOKWORM_IMAGE) with Debian's
# Python 3.11 in a virtual environment first on PATH, so that `python` and `pip install` behave as
# in the official image (Debian's own Python refuses pip installs outside a virtual environment).
ARG BOOKWORM_IMAGE=heraldbench-local/bookworm:minbase
FROM ${BOOKWORM_IMAGE}

# The CA bundle of the machine that builds it (local-images.sh puts it in the context): where a
# proxy re-signs TLS, pip reaches PyPI only with that proxy's CA, which Debian's bundle lacks.
COPY ca-certificates.crt /etc/ssl/certs/build-host-ca-certificates.crt
ENV LANG=C.UTF-8 \
    PATH=/usr/local/python/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PIP_CERT=/etc/ssl/certs/build-host-ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/build-host-ca-certificates.crt

RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /usr/local/python \
    && python --version && pip --version

CMD ["python3"]
