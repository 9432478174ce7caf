"""The seccomp filter every sandboxed worker (and so every student's process) runs under.

A classic BPF program, handed to bubblewrap with `--seccomp FD`. It refuses, with EPERM, the
system calls that reach the kernel's largest attack surfaces and that no notebook needs:
new user namespaces (the one thing an unprivileged process can still unshare), tracing and
reading other processes' memory, kernel keyrings, eBPF, perf events, userfaultfd, io_uring,
kernel modules and kexec; and the kinds of memory that a process holds outside its
address space (System V shared memory and message queues, memfds, extended attributes on its
tmpfs). `clone3` answers ENOSYS, so that the C library falls back to `clone`, whose flags the
filter can read (clone3 passes them in memory it cannot see).
"""

from __future__ import annotations

import errno
import platform
import struct

# struct seccomp_data: int nr; u32 arch; u64 ip; u64 args[6] (little-endian: low half first)
_NR, _ARCH, _ARG0 = 0, 4, 16
_LD_ABS, _JEQ, _JSET, _JGE, _RET = 0x20, 0x15, 0x45, 0x35, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_KILL = 0x80000000
CLONE_NEWUSER = 0x10000000
X32_BIT = 0x40000000

# (audit arch, syscall numbers) per machine; the names are the same on both.
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
            "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321,
            "perf_event_open": 298, "userfaultfd": 323, "kexec_load": 246,
            "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
            "delete_module": 176, "io_uring_setup": 425, "io_uring_enter": 426,
            "io_uring_register": 427, "unshare": 272, "clone": 56, "clone3": 435,
            "memfd_create": 319, "shmget": 29, "msgget": 68,
            "inotify_init": 253, "inotify_init1": 294, "fanotify_init": 300,
            "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "setxattrat": 463,
            "setsid": 112,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
            "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280,
            "perf_event_open": 241, "userfaultfd": 282, "kexec_load": 104,
            "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
            "delete_module": 106, "io_uring_setup": 425, "io_uring_enter": 426,
            "io_uring_register": 427, "unshare": 97, "clone": 220, "clone3": 435,
            "memfd_create": 279, "shmget": 194, "msgget": 186,
            "inotify_init1": 26, "fanotify_init": 262,  # no inotify_init here
            "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "setxattrat": 463,
            "setsid": 157,
        },
    ),
}  # fmt: skip
REFUSED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "io_uring_setup", "io_uring_enter", "io_uring_register",
    # memory outside the 2 GB address-space limit: unbounded System V shared memory (a new
    # IPC namespace sets no size limit), memfds (16 MB each, in no mounted file system) and
    # message queues (half a GB); /dev/shm and /tmp are bounded file systems instead
    "memfd_create", "shmget", "msgget",
    # extended attributes: on the sandbox's tmpfs (/tmp, /dev/shm) their values are kernel
    # memory that counts against neither the file system's size nor any process (r51: 3.8 GB
    # from one notebook, and a memory group's OOM killer took the worker instead)
    "setxattr", "lsetxattr", "fsetxattr", "setxattrat",
    # watches: 128 instances per user, and every sandbox's user is the host's nobody (or the
    # grader's user): one notebook holding them all would deny them to the rest
    "inotify_init", "inotify_init1", "fanotify_init",
)  # fmt: skip


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def supported() -> bool:
    """Whether a filter can be built for this machine's architecture."""
    return platform.machine() in _ARCHES


def number(name: str, machine: str | None = None) -> int:
    """The number of the system call `name` (one this module knows) on this machine."""
    return _ARCHES[machine or platform.machine()][1][name]


def program(machine: str | None = None) -> bytes:
    """The filter as bytes of `struct sock_filter`, ready for bubblewrap's `--seccomp`."""
    arch, numbers = _ARCHES[machine or platform.machine()]
    eperm, enosys = _ERRNO | errno.EPERM, _ERRNO | errno.ENOSYS
    ops = [_op(_LD_ABS, _ARCH), _op(_JEQ, arch, 1, 0), _op(_RET, _KILL), _op(_LD_ABS, _NR)]
    if arch == _ARCHES["x86_64"][0]:  # the x32 ABI's numbers: none of ours, all refused
        ops += [_op(_JGE, X32_BIT, 0, 1), _op(_RET, eperm)]
    for name in (n for n in REFUSED if n in numbers):  # a call the machine lacks: none
        ops += [_op(_JEQ, numbers[name], 0, 1), _op(_RET, eperm)]
    ops += [_op(_JEQ, numbers["clone3"], 0, 1), _op(_RET, enosys)]
    for name in ("clone", "unshare"):  # allowed, but never with a new user namespace
        ops += [
            _op(_JEQ, numbers[name], 0, 4),
            _op(_LD_ABS, _ARG0),
            _op(_JSET, CLONE_NEWUSER, 0, 1),
            _op(_RET, eperm),
            _op(_LD_ABS, _NR),
        ]
    ops.append(_op(_RET, _ALLOW))
    return b"".join(ops)


def session_program(machine: str | None = None) -> bytes:
    """A second filter, which each student's process adds once it leads the session the
    grader made for it (isolation.set_up_child): `setsid` answers 0, as done, and changes
    nothing. The kernel shares the CPUs among sessions (its autogroups), not processes: a
    notebook whose many processes each made a session of their own would take a share apiece
    and starve a classmate graded beside it; kept in one, they share one. Code that starts a
    program in a new session (`subprocess.Popen(start_new_session=True)`) still runs."""
    arch, numbers = _ARCHES[machine or platform.machine()]
    ops = [_op(_LD_ABS, _ARCH), _op(_JEQ, arch, 0, 3), _op(_LD_ABS, _NR)]
    ops += [_op(_JEQ, numbers["setsid"], 0, 1), _op(_RET, _ERRNO | 0)]
    ops.append(_op(_RET, _ALLOW))
    return b"".join(ops)
