"""Certificates and keys as paths OpenSSL can open, without writing them to a disk.

OpenSSL takes a client certificate and key by path only. On Linux they go to anonymous memory
files (`memfd_create`), opened by OpenSSL through `/proc/self/fd/N`: nothing is left behind
however the process ends (a second SIGTERM, SIGKILL). Elsewhere they go to files in a private
temporary directory (0700, files 0600) removed when closed or at exit.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading


class SecretFiles:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._descriptors: list[int] = []
        self._directory: str | None = None

    def path_of(self, content: bytes, name: str) -> str:
        with self._lock:
            if hasattr(os, "memfd_create"):
                descriptor = os.memfd_create(name, os.MFD_CLOEXEC)
                view = memoryview(content)
                while view:
                    view = view[os.write(descriptor, view) :]
                self._descriptors.append(descriptor)
                return f"/proc/self/fd/{descriptor}"
            if self._directory is None:
                self._directory = tempfile.mkdtemp(prefix="reconcile-tls-")
                atexit.register(shutil.rmtree, self._directory, ignore_errors=True)
            handle, path = tempfile.mkstemp(dir=self._directory, suffix=f"-{name}")
            with os.fdopen(handle, "wb") as out:
                out.write(content)
            return path

    def close(self) -> None:
        with self._lock:
            descriptors, self._descriptors = self._descriptors, []
            directory, self._directory = self._directory, None
        for descriptor in descriptors:
            os.close(descriptor)
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
