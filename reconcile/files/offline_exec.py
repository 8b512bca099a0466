"""Run a program that may open no network socket: `python -I -S offline_exec.py PROGRAM ARGS`.

A seccomp filter refuses, to the program and everything it starts, every socket but a Unix
one (EACCES) and io_uring (which can open sockets of its own); a system call of another
architecture kills the process. The filter is installed with no_new_privs, which the kernel
allows any process, so this works where no namespace can be made (a container's default
seccomp profile, user namespaces turned off). Stdlib only: it runs as a file, before the
program it execs.

Exit status 125 with a line on standard error when the filter cannot be installed (an
architecture other than x86-64 and arm64, a kernel without seccomp filters): the program is
then not run.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

CANNOT = 125

# (AUDIT_ARCH, socket's number, io_uring_setup's number, whether x32 numbers exist)
_ARCHES = {
    "x86_64": (0xC000003E, 41, 425, True),
    "aarch64": (0xC00000B7, 198, 425, False),
}
_AF_UNIX = 1
_EACCES = 13
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000 | _EACCES
_RET_KILL_PROCESS = 0x80000000
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_X32_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def program(machine: str) -> list[tuple[int, int, int, int]]:
    """The filter (code, jump if true, jump if false, k) for this machine's architecture;
    KeyError for one it does not know."""
    arch, socket_nr, uring_nr, x32 = _ARCHES[machine]
    return [
        (_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ_K, 1, 0, arch),
        (_RET_K, 0, 0, _RET_KILL_PROCESS),
        (_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (_JGE_K, 0, 1, _X32_BIT) if x32 else (_JEQ_K, 0, 1, 0xFFFFFFFF),
        (_RET_K, 0, 0, _RET_ERRNO),
        (_JEQ_K, 0, 1, uring_nr),
        (_RET_K, 0, 0, _RET_ERRNO),
        (_JEQ_K, 0, 3, socket_nr),
        (_LD_W_ABS, 0, 0, 16),  # the low half of args[0]: the address family
        (_JEQ_K, 1, 0, _AF_UNIX),
        (_RET_K, 0, 0, _RET_ERRNO),
        (_RET_K, 0, 0, _RET_ALLOW),
    ]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> str | None:
    """Install the filter on this process; None, or why it could not be."""
    try:
        instructions = program(platform.machine())
    except KeyError:
        return f"no filter for the {platform.machine()} architecture"
    data = b"".join(struct.pack("HBBI", *instruction) for instruction in instructions)
    buffer = ctypes.create_string_buffer(data, len(data))
    fprog = _Program(len(instructions), ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}"
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}"
    return None


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write("offline_exec: no program to run\n")
        return CANNOT
    problem = install()
    if problem is not None:
        sys.stderr.write(f"offline_exec: cannot install the seccomp filter: {problem}\n")
        return CANNOT
    try:
        os.execv(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"offline_exec: cannot run {argv[0]}: {exc.strerror}\n")
    return CANNOT


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
