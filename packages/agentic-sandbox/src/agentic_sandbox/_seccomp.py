"""A seccomp filter that forbids new user namespaces, for the jail's programs.

Run as root, ProcessSandbox keeps no user namespace of its own (one made by root would map the
program back to uid 0), so bwrap's ``--disable-userns`` cannot apply; the kernel would still let
uid 65534 make user namespaces — and, root in one, mount an unbounded tmpfs (RAM past
``memory_mb`` and ``max_disk_mb``) and reach much more of the kernel. This classic-BPF program,
loaded by bwrap (``--seccomp FD``) or by ``LOADER`` before the ``unshare`` jail is set up,
answers ``EPERM`` to ``unshare`` and ``clone`` asking for ``CLONE_NEWUSER``, ``ENOSYS`` to
``clone3`` (whose flags it cannot see: the C library falls back to ``clone``) and ``EPERM`` to
any system call of another ABI (i386, x32), which would dodge the numbers checked here.

``user_namespace_filter`` is pure: it returns the filter's bytes for a machine, or ``None``
where the syscall numbers are not known here (then nothing is filtered: the README says so).
"""

from __future__ import annotations

import errno
import struct
from dataclasses import dataclass

CLONE_NEWUSER = 0x10000000
_X32_SYSCALL_BIT = 0x40000000

# classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h)
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR = 0
_ARCH = 4
_ARG0_LOW = 16  # little-endian: the low half of args[0] (clone and unshare flags fit in it)


@dataclass(frozen=True)
class _Abi:
    audit_arch: int
    clone: int
    unshare: int
    clone3: int


_ABIS = {
    "x86_64": _Abi(audit_arch=0xC000003E, clone=56, unshare=272, clone3=435),
    "aarch64": _Abi(audit_arch=0xC00000B7, clone=220, unshare=97, clone3=435),
}


def user_namespace_filter(machine: str) -> bytes | None:
    """The filter for ``machine`` (``platform.machine()``), as ``struct sock_filter`` array."""
    abi = _ABIS.get(machine)
    if abi is None:
        return None
    deny = _RET_ERRNO | errno.EPERM
    program = [
        # 0: another ABI (i386, x32 numbers) would dodge the checks below
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 1, 0, abi.audit_arch),
        (_RET_K, 0, 0, deny),
        # 3: the system call
        (_LD_W_ABS, 0, 0, _NR),
        (_JGE_K, 0, 1, _X32_SYSCALL_BIT),
        (_RET_K, 0, 0, deny),
        (_JEQ_K, 0, 1, abi.clone3),
        (_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS),
        (_JEQ_K, 1, 0, abi.clone),
        (_JEQ_K, 0, 3, abi.unshare),
        # 10: clone or unshare: their flags are the first argument
        (_LD_W_ABS, 0, 0, _ARG0_LOW),
        (_JSET_K, 0, 1, CLONE_NEWUSER),
        (_RET_K, 0, 0, deny),
        # 13:
        (_RET_K, 0, 0, _RET_ALLOW),
    ]
    return b"".join(struct.pack("<HBBI", code, jt, jf, k) for code, jt, jf, k in program)


LOADER = """\
import ctypes, os, sys
code = bytes.fromhex(sys.argv[1])
count = len(code) // 8
buffer = ctypes.create_string_buffer(code)
class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
program = Program(count, ctypes.cast(buffer, ctypes.c_void_p))
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
    sys.exit(f"agentic-sandbox: cannot load the seccomp filter: {os.strerror(ctypes.get_errno())}")
os.execv(sys.argv[2], sys.argv[2:])
"""
"""``python -I -S -c LOADER <filter as hex> <program> <args>``: loads the filter (as root, so no
``no_new_privs`` is needed) and execs the program under it."""
