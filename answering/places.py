"""Fair places in the answer processes: who runs next when a place frees, who may wait, and where.

A plain semaphore served waiting runs in arrival order, so ten accounts holding four streams each
took every place and filled the waiting list: everyone else's question answered 503 for as long as
they held, and a newcomer who got in waited behind their second, third and fourth answers. Here a
freed place goes to the waiting owner with the fewest runs in progress, ties to the one served
longest ago (round robin), then to the run waiting longest: a user's first answer runs before
anyone's second, their second before anyone's third, and an owner whose answer just ended does not
go before one who was waiting. `queue` runs may wait; an owner with nothing running or waiting may
wait even when the list is full, up to `queue` more (a first answer is never refused behind others'
later ones). Past that `AnswersBusy` (503 with Retry-After). A waiting run knows its position (1:
next) and hears of each change; one whose caller leaves gives up its place in the list
(`Place.abandon`).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections import Counter
from collections.abc import Callable, Hashable

Owner = Hashable
Notify = Callable[[int], None]


class PlacesBusy(Exception):
    """Every place is taken and this run may not wait (the waiting list is full for it)."""


class Place:
    """One run's claim: granted at once, or waiting (`position`) until `Places` grants it."""

    def __init__(self, places: Places, owner: Owner, seq: int, notify: Notify | None) -> None:
        self.places, self.owner, self.seq, self.notify = places, owner, seq, notify
        self.granted = threading.Event()
        self.position = 0  # 0: granted (or given up); n: the nth to run once places free
        self.abandoned = False
        self.released = False
        self._wakers: list[Callable[[], None]] = []

    def on_grant(self, wake: Callable[[], None]) -> None:
        """Call `wake` (from whichever thread grants) once this place is granted or given up."""
        with self.places.lock:
            if not (self.granted.is_set() or self.abandoned):
                self._wakers.append(wake)
                return
        wake()

    def wait(self, gone: Callable[[], bool] | None = None, every_s: float = 0.25) -> bool:
        """Block until granted (True), or until `gone()` says the caller left (False: the place is
        given up, or given back when it was granted meanwhile)."""
        while not self.granted.wait(every_s if gone is not None else None):
            if gone is not None and gone():
                self.abandon()
                return False
        return True

    def abandon(self) -> None:
        """The caller left: out of the waiting list, or the place given back if it had been granted."""
        if not self.places.withdraw(self):
            self.release()

    def release(self) -> None:
        """The run ended: its place goes to the next (once, however often it is called)."""
        self.places.release(self)


class Places:
    def __init__(self, capacity: int, queue: int) -> None:
        self.capacity, self.queue = capacity, queue
        self.lock = threading.Lock()
        self.running: Counter[Owner] = Counter()
        self.waiting: list[Place] = []
        self._seq = itertools.count()
        self._turns = itertools.count()
        self.served: dict[Owner, int] = {}  # when each owner with runs in progress or waiting was last granted

    # -- read under the lock ---------------------------------------------------------------------
    def _in_use(self) -> int:
        return sum(self.running.values())

    def _may_wait(self, owner: Owner) -> bool:
        if len(self.waiting) < self.queue:
            return True
        first = self.running[owner] == 0 and not any(p.owner == owner for p in self.waiting)
        return first and len(self.waiting) < 2 * self.queue

    def _order(self) -> list[Place]:
        """The waiting runs in the order free places would go to them if nothing else came."""
        running, served = Counter(self.running), dict(self.served)
        left, order = list(self.waiting), []
        turn = 0
        while left:
            nxt = min(left, key=lambda p: (running[p.owner], served.get(p.owner, -1), p.seq))
            running[nxt.owner] += 1
            turn += 1
            served[nxt.owner] = 1 << 62 | turn  # after every real grant
            order.append(nxt)
            left.remove(nxt)
        return order

    def _grant(self, place: Place) -> None:
        self.running[place.owner] += 1
        self.served[place.owner] = next(self._turns)
        place.position = 0
        place.granted.set()

    def _forget(self, owner: Owner) -> None:
        """An owner with nothing running or waiting: its turn is no longer remembered (bounded memory)."""
        if not self.running[owner] and not any(p.owner == owner for p in self.waiting):
            self.running.pop(owner, None)
            self.served.pop(owner, None)

    def _renumber(self) -> list[tuple[Notify, int]]:
        told = []
        for n, place in enumerate(self._order(), 1):
            if place.position != n:
                place.position = n
                if place.notify is not None:
                    told.append((place.notify, n))
        return told

    # -- changes -------------------------------------------------------------------------------
    def check(self, owner: Owner) -> None:
        """PlacesBusy now if a run of `owner` would be refused (advisory: `take` decides again)."""
        with self.lock:
            if self._in_use() >= self.capacity and not self._may_wait(owner):
                raise PlacesBusy

    def take(self, owner: Owner, notify: Notify | None = None) -> Place:
        """A place for a run of `owner`: granted now, or waiting (`notify(position)` at each change of
        its position, from whichever thread changes it), or PlacesBusy."""
        with self.lock:
            place = Place(self, owner, next(self._seq), notify)
            if self._in_use() < self.capacity and not self.waiting:
                self._grant(place)
                return place
            if not self._may_wait(owner):
                raise PlacesBusy
            self.waiting.append(place)
            told = self._renumber()
        _tell(told)
        return place

    def withdraw(self, place: Place) -> bool:
        """Take a waiting place out of the list (True), or False when it was granted already."""
        with self.lock:
            if place.granted.is_set():
                return False
            if place in self.waiting:
                self.waiting.remove(place)
            place.abandoned, place.position = True, 0
            self._forget(place.owner)
            wakers, place._wakers = place._wakers, []
            told = self._renumber()
        _tell(told)
        for wake in wakers:
            wake()
        return True

    def release(self, place: Place) -> None:
        with self.lock:
            if place.released or not place.granted.is_set():
                return
            place.released = True
            self.running[place.owner] -= 1
            granted: list[Place] = []
            while self.waiting and self._in_use() < self.capacity:
                nxt = self._order()[0]
                self.waiting.remove(nxt)
                self._grant(nxt)
                granted.append(nxt)
            self._forget(place.owner)
            wakers = [w for p in granted for w in p._wakers]
            for p in granted:
                p._wakers = []
            told = self._renumber()
        _tell(told)
        for wake in wakers:
            wake()

    def snapshot(self) -> tuple[int, int]:
        """(runs in progress, runs waiting)."""
        with self.lock:
            return self._in_use(), len(self.waiting)


def _tell(told: list[tuple[Notify, int]]) -> None:
    for notify, n in told:
        with contextlib.suppress(Exception):  # a progress note must never break the scheduling
            notify(n)
