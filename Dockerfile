# The reconcile image: `docker build --build-arg VERSION=0.1.0 -t reconcile:0.1.0 .`
#
# Three stages: wheels are built in the first (pip, no compiler needed: every dependency ships
# pure-Python or manylinux wheels), kustomize is fetched and checked in the second; only the
# installed package and the kustomize binary reach the final one.
#
# The base image is pinned by digest (a tag moves; a digest is the image, for every stage):
# python:3.11-slim's multi-platform index. To move to a newer one, read its digest with
# `docker buildx imagetools inspect python:3.11-slim` (or let Renovate or Dependabot do it)
# and replace the value below; the tag before `@` is only for people.
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY reconcile ./reconcile
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

# kustomize renders directories holding a kustomization (`--manifests`, `--local`,
# `--controllers`). A pinned release, checked against the SHA256 the release publishes in its
# checksums.txt: a new version needs its own checksum.
FROM ${PYTHON_IMAGE} AS kustomize
ARG KUSTOMIZE_VERSION=v5.4.3
ARG KUSTOMIZE_SHA256=3669470b454d865c8184d6bce78df05e977c9aea31c30df3c669317d43bcc7a7
RUN python -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
      "https://github.com/kubernetes-sigs/kustomize/releases/download/kustomize%2F${KUSTOMIZE_VERSION}/kustomize_${KUSTOMIZE_VERSION}_linux_amd64.tar.gz" \
      /tmp/kustomize.tar.gz \
 && echo "${KUSTOMIZE_SHA256}  /tmp/kustomize.tar.gz" | sha256sum -c - \
 && tar -xzf /tmp/kustomize.tar.gz -C /usr/local/bin kustomize \
 && /usr/local/bin/kustomize version

FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=""
LABEL org.opencontainers.image.title="reconcile" \
      org.opencontainers.image.description="Metacontroller's declarative controller APIs as a one-shot, GitOps-style batch reconciler" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="docker.io/library/python:3.11-slim" \
      org.opencontainers.image.source="https://github.com/acme/reconcile"
# git and ssh for --git sources; certificates for https
RUN apt-get update \
 && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 reconcile \
 && useradd --uid 65532 --gid 65532 --home-dir /home/reconcile --create-home reconcile \
 && mkdir -p /var/cache/reconcile \
 && chown 65532:65532 /var/cache/reconcile
COPY --from=kustomize /usr/local/bin/kustomize /usr/local/bin/kustomize
COPY --from=build /wheels /wheels
COPY scripts/prune_schemas.py /tmp/prune_schemas.py
# kubernetes_validate ships every release's schemas in several forms; --local reads one file
# per release (108 MB -> 18 MB on disk)
RUN pip install --no-cache-dir --no-index --find-links=/wheels reconcile-batch \
 && python /tmp/prune_schemas.py \
 && rm -rf /wheels /tmp/prune_schemas.py
# The CronJob mounts emptyDirs here and on /tmp: the root filesystem stays read-only.
ENV HOME=/home/reconcile \
    XDG_CACHE_HOME=/var/cache/reconcile \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
WORKDIR /home/reconcile
ENTRYPOINT ["reconcile"]
