"""What the soak measures of a running JVM and of the folders a query writes: read from /proc and with jcmd, so the
measuring adds nothing to the measured processes but one full GC a minute (which is what "heap after GC" needs)."""

from __future__ import annotations

import collections
import os
import re
import subprocess
from pathlib import Path
from typing import Counter, Iterable, List, Set, Tuple


def descendants(root: int) -> List[int]:
    """Every process below ``root``."""
    children: dict = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def jvms_below(root: int, marker: bytes) -> List[int]:
    pids = []
    for pid in descendants(root):
        try:
            if marker in Path(f"/proc/{pid}/cmdline").read_bytes():
                pids.append(pid)
        except OSError:
            continue
    return sorted(pids)


def heap_after_gc_mb(pid: int) -> float:
    """The JVM's used heap right after a full GC it was asked for (jcmd GC.run, then GC.heap_info)."""
    subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, timeout=60, check=False)
    info = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=60).stdout
    match = re.search(r"total \d+K, used (\d+)K", info)
    return int(match.group(1)) / 1024 if match else float("nan")


def threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


#: Spark's cached pools of at most 100 threads each: the driver's ask pool (BlockManagerMasterEndpoint) and each block
#: manager's async pool (BlockManagerStorageEndpoint). With a batch a second they stay near their cap, higher or lower
#: with the machine's load; a leak elsewhere would hide in their swings, so the soak counts them apart.
CAPPED_POOLS = ("block-manager-ask-thread-pool-N", "block-manager-storage-async-thread-pool-N")


def pool_and_other_threads(names: Counter) -> Tuple[int, int]:
    """A JVM's threads in Spark's capped pools, and every other thread, from one thread dump (``thread_names``): the
    pools change by dozens within a second, so the two counts must come from the same instant."""
    pools = sum(names[pool] for pool in CAPPED_POOLS)
    return pools, sum(names.values()) - pools


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _socket_inodes(pid: int) -> Set[str]:
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def connections_to(pid: int, ports: Iterable[int]) -> int:
    """The process's established TCP connections to any of ``ports`` on any address (the endpoints it calls)."""
    wanted = {f"{p:04X}" for p in ports}
    inodes = _socket_inodes(pid)
    count = 0
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            remote_port, state, inode = fields[2].rsplit(":", 1)[1], fields[3], fields[9]
            if state == "01" and inode in inodes and remote_port in wanted:
                count += 1
    return count


def tree_size(folder: Path) -> Tuple[int, int]:
    """(bytes, files) under ``folder``."""
    total, files = 0, 0
    for base, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.stat(os.path.join(base, name)).st_size
                files += 1
            except OSError:
                continue
    return total, files


def thread_names(pid: int) -> Counter:
    """The JVM's live threads by name, digits folded (``pool-3-thread-7`` counts as ``pool-N-thread-N``), to tell
    which pool grows when the thread count does."""
    dump = subprocess.run(["jcmd", str(pid), "Thread.print"], capture_output=True, text=True, timeout=60).stdout
    names = re.findall(r'^"([^"]*)"', dump, flags=re.M)
    return collections.Counter(re.sub(r"\d+", "N", name) for name in names)
