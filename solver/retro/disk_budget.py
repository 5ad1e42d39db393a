"""What the disk mode of the lean solve (:mod:`solver.retro.disk`) takes: its partitions
under a memory budget, and the bytes it keeps on disk against the free space.

The budget holds one partition (half of it) and the buffers of a round of updates (the
other half, :data:`UPDATE_BYTES` an update). On disk, during the plies: the cells, one
partition more with checkpoints (a partition's new slot is written before the checkpoint
that removes its old one), the ply logs (:data:`LOG_BYTES` a position), the updates
waiting for their partitions — at most :attr:`DiskPlan.room` bytes, a ply taking more
passes where it would send more — and as many spent ones kept for the next checkpoint.
In the merge, the database (:data:`DB_BYTES` a position) grows as the partitions written
to it are removed, so that it needs no room of its own beyond a partition's share.
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
DB_BYTES = 0.6  # database bytes a position, with a margin (hex(3) 5v5: 0.57, 6v6: 0.53, 7v7: 0.48, 12v12: 0.17)
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
    two_slots: bool = True  # with checkpoints: one partition twice
    free: int | None = None

    @property
    def part_bytes(self) -> int:
        return -(-self.total // self.parts)

    @property
    def fixed_bytes(self) -> int:
        """The cells (and one partition more with checkpoints) and the ply logs."""
        return int((1 + LOG_BYTES) * self.total) + (self.part_bytes if self.two_slots else 0)

    @property
    def db_bytes(self) -> int:
        """The database the merge writes (an estimate: :data:`DB_BYTES` a position)."""
        return int(DB_BYTES * self.total)

    @property
    def merge_bytes(self) -> int:
        """On disk at most in the merge: the cells and the ply logs, and the database of
        a partition's positions before the partition is removed (then the database grows
        by less than the partitions it replaces free)."""
        return int((1 + LOG_BYTES) * self.total + DB_BYTES * self.part_bytes)

    @property
    def room(self) -> int:
        """The update bytes a ply keeps waiting on disk at most: :data:`ROOM` a cell,
        less where the disk's free space would not hold them (and as many spent)."""
        room = int(ROOM * self.total)
        if self.free is not None:
            room = min(room, int((DISK_SHARE * self.free - self.fixed_bytes) / 2))
        return max(ROOM_MIN, room)

    @property
    def least(self) -> int:
        """The least the disk must hold: the plies' need with room for updates of
        :data:`ROOM_LEAST` a cell (less would take a pass or more per ply and update), or
        the merge's, the larger."""
        return max(self.fixed_bytes + 2 * max(ROOM_MIN, int(ROOM_LEAST * self.total)), self.merge_bytes)

    @property
    def fits(self) -> bool:
        """Whether :data:`DISK_SHARE` of the free space holds :attr:`least`."""
        return self.free is None or DISK_SHARE * self.free >= self.least

    @property
    def disk_bytes(self) -> int:
        """At most on disk: in the plies, the cells (a partition twice), the ply logs, the
        updates waiting and the spent ones kept for the next checkpoint (as many again at
        most); in the merge, :attr:`merge_bytes`."""
        return max(self.fixed_bytes + 2 * self.room, self.merge_bytes)

    def summary(self, table_bytes: int) -> str:
        return (
            f"disk mode: {self.parts} partition{'s' if self.parts > 1 else ''} of {gb(self.part_bytes)} "
            f"({gb(self.total)} of cells, up to {gb(self.disk_bytes)} on disk with the ply logs"
            f"{', a partition twice' if self.two_slots else ''} and the updates"
            f"{'' if self.free is None else f', {gb(self.free)} free'}; the database, about {gb(self.db_bytes)}, "
            f"takes the partitions' room as the merge writes it); memory: a {mib(self.memory)} budget (a "
            f"partition and {self.cap:,} updates a round) besides {gb(table_bytes)} of index tables; passes: one for "
            f"the counters, then one a ply (a partition read and written where it has work; more where a ply's "
            f"updates would hold more than {gb(self.room)}), two to merge and write"
        )

    def short(self) -> str:
        """The one line for a disk that does not hold the plan."""
        return (f"the disk mode needs at least {gb(self.least)} on disk ({gb(self.total)} of cells"
                f"{', a partition twice' if self.two_slots else ''}, the ply logs, room for updates; "
                f"the database, about {gb(self.db_bytes)}, replaces the cells) and {gb(self.free or 0)} are free, "
                f"of which it takes {DISK_SHARE:.0%} (--force to try all the same)")


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
