"""What the disk mode of the lean solve (:mod:`solver.retro.disk`) takes: its partitions
under a memory budget, and the bytes it keeps on disk against the free space.

The budget holds one partition (half of it) and the buffers of a round of updates (the
other half, :data:`UPDATE_BYTES` an update). On disk: the cells (twice with checkpoints:
two slots a partition), the ply logs (:data:`LOG_BYTES` a position), the updates waiting
for their partitions — at most :attr:`DiskPlan.room` bytes, a ply taking more passes
where it would send more — and as many spent ones kept for the next checkpoint.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass
from pathlib import Path

from solver.errors import UsageError
from solver.retro.budget import gb

MB = 1 << 20
UPDATE_BYTES = 64  # an update's share of the buffers: emit8's raw, owner and sorted copies, a taken slot, packed, read
ROOM = 1.0  # update bytes a ply keeps waiting on disk at most, per cell of the group
ROOM_LEAST = 1 / 16  # a disk that holds less room than this a cell does not hold the plan
ROOM_MIN = 1 << 20
LOG_BYTES = 1.0  # ply-log bytes a position, with a margin (measured: 0.8 to 0.9)
DISK_SHARE = 0.9  # of the free space, what the plan may take
MIN_MEMORY = 64 << 10  # the smallest budget (the tests' many partitions of a small solve)


@dataclass
class DiskPlan:
    """How a configuration is cut for the disk mode under a memory budget, and what it
    keeps on disk (``free``: the database folder's free bytes; None: not known)."""

    total: int
    memory: int  # the budget: one partition and the buffers
    parts: int
    cap: int  # updates a partition lists per round at most
    two_slots: bool = True  # with checkpoints: the cells twice
    free: int | None = None

    @property
    def part_bytes(self) -> int:
        return -(-self.total // self.parts)

    @property
    def fixed_bytes(self) -> int:
        """The cells (twice with checkpoints) and the ply logs."""
        return int(((2 if self.two_slots else 1) + LOG_BYTES) * self.total)

    @property
    def room(self) -> int:
        """The update bytes a ply keeps waiting on disk at most: :data:`ROOM` a cell,
        less where the disk's free space would not hold them (and as many spent)."""
        room = int(ROOM * self.total)
        if self.free is not None:
            room = min(room, int((DISK_SHARE * self.free - self.fixed_bytes) / 2))
        return max(ROOM_MIN, room)

    @property
    def fits(self) -> bool:
        """Whether the disk holds the plan with room for updates of at least
        :data:`ROOM_LEAST` a cell (less would take a pass or more per ply and update)."""
        return self.free is None or DISK_SHARE * self.free - self.fixed_bytes >= 2 * max(ROOM_MIN, ROOM_LEAST * self.total)

    @property
    def disk_bytes(self) -> int:
        """The cells, the ply logs, the updates waiting and the spent ones kept for the
        next checkpoint (as many again at most)."""
        return self.fixed_bytes + 2 * self.room

    def summary(self, table_bytes: int) -> str:
        return (
            f"disk mode: {self.parts} partition{'s' if self.parts > 1 else ''} of {gb(self.part_bytes)} "
            f"({gb(self.total)} of cells, up to {gb(self.disk_bytes)} on disk with the ply logs"
            f"{', the second slots' if self.two_slots else ''} and the updates"
            f"{'' if self.free is None else f', {gb(self.free)} free'}); memory: a {mib(self.memory)} budget (a "
            f"partition and {self.cap:,} updates a round) besides {gb(table_bytes)} of index tables; passes: one for "
            f"the counters, then one a ply (a partition read and written where it has work; more where a ply's "
            f"updates would hold more than {gb(self.room)}), two to merge and write"
        )

    def short(self) -> str:
        """The one line for a disk that does not hold the plan."""
        least = self.fixed_bytes + 2 * max(ROOM_MIN, int(ROOM_LEAST * self.total))
        tip = "; --checkpoint off keeps the cells once" if self.two_slots else ""
        return (f"the disk mode needs at least {gb(least)} on disk ({gb(self.total)} of cells"
                f"{' twice' if self.two_slots else ''}, the ply logs, room for updates) and "
                f"{gb(self.free or 0)} are free{tip} (--force to try all the same)")


def mib(n: int) -> str:
    """Bytes in the binary units ``--memory`` takes: ``100 MiB``, ``8.0 GiB``."""
    return f"{n / MB:,.0f} MiB" if n < 10 << 30 else f"{n / (1 << 30):,.1f} GiB"


def disk_plan(total: int, memory: int, two_slots: bool = True, free: int | None = None) -> DiskPlan:
    """The partitions of ``total`` cells under ``memory`` bytes: half the budget for a
    partition, half for the buffers of a round of updates."""
    if memory < MIN_MEMORY:
        raise UsageError(f"--memory {memory:,} bytes is too small for the disk mode: give at least 64K")
    cap = max(1 << 10, memory // 2 // UPDATE_BYTES)
    parts = max(1, math.ceil(total / (memory // 2)))
    return DiskPlan(total, memory, parts, cap, two_slots, free)


def free_bytes(path) -> int | None:
    """The free bytes of the file system that holds ``path`` (or would: its nearest
    existing parent); None where it cannot be read."""
    at = Path(path)
    while not at.exists() and at != at.parent:
        at = at.parent
    try:
        return shutil.disk_usage(at).free
    except OSError:
        return None
