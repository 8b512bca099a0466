# The reconcile image: `docker build -t reconcile .`
#
# Two stages: wheels are built in the first (pip, no compiler needed: every dependency ships
# pure-Python or manylinux wheels), only the installed package reaches the final one.

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY reconcile ./reconcile
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
# git and ssh for --git sources; certificates for https
RUN apt-get update \
 && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 reconcile \
 && useradd --uid 65532 --gid 65532 --home-dir /home/reconcile --create-home reconcile \
 && mkdir -p /var/cache/reconcile \
 && chown 65532:65532 /var/cache/reconcile
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels reconcile-batch \
 && rm -rf /wheels
# The CronJob mounts emptyDirs here and on /tmp: the root filesystem stays read-only.
ENV HOME=/home/reconcile \
    XDG_CACHE_HOME=/var/cache/reconcile \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
WORKDIR /home/reconcile
ENTRYPOINT ["reconcile"]
