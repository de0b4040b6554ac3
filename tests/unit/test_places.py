"""Issue 41: the answer processes' places shared fairly between owners (answering/places.py). Before,
a semaphore served waiting runs in arrival order and a full waiting list refused everyone: ten
accounts holding four streams each kept every other user's question at 503."""

from __future__ import annotations

import threading

import pytest

from answering.places import Places, PlacesBusy


def test_a_freed_place_goes_to_the_owner_with_the_fewest_runs_not_to_the_first_in_line() -> None:
    places = Places(capacity=2, queue=4)
    a1, a2 = places.take("a"), places.take("a")
    assert a1.granted.is_set() and a2.granted.is_set()
    heard: dict[str, list[int]] = {"a3": [], "b": []}
    a3 = places.take("a", heard["a3"].append)  # a's third waits first ...
    b = places.take("b", heard["b"].append)  # ... b's first comes later and goes ahead of it
    assert (a3.position, b.position) == (2, 1) and heard == {"a3": [1, 2], "b": [1]}
    a1.release()
    assert b.granted.is_set() and not a3.granted.is_set() and a3.position == 1 and heard["a3"][-1] == 1
    b.release()  # a holds one, nobody else waits: a's third runs
    assert a3.granted.is_set()


def test_a_full_waiting_list_still_takes_an_owners_first_answer_then_refuses() -> None:
    places = Places(capacity=1, queue=2)
    places.take("a")
    places.take("a"), places.take("a")  # the list is full (2)
    with pytest.raises(PlacesBusy):
        places.take("a")  # a's fourth: past the bound, 503
    with pytest.raises(PlacesBusy):
        places.check("a")
    places.check("b")  # b has nothing running or waiting: it may wait
    b, c = places.take("b"), places.take("c")
    assert (b.position, c.position) == (1, 2)  # both ahead of a's second and third
    with pytest.raises(PlacesBusy):
        places.take("b")  # b's second is not a first answer
    with pytest.raises(PlacesBusy):
        places.take("d")  # twice the bound waits: even a first answer is refused
    assert places.snapshot() == (1, 4)


def test_a_caller_that_leaves_gives_its_place_up_waiting_or_granted() -> None:
    places = Places(capacity=1, queue=4)
    first = places.take("a")
    told: list[int] = []
    b, c = places.take("b"), places.take("c", told.append)
    assert c.position == 2
    gone = threading.Event()
    gone.set()
    assert not b.wait(gone.is_set, every_s=0.01)  # the caller left while it waited: out of the list
    assert b.abandoned and c.position == 1 and told == [2, 1]
    first.release()
    assert c.granted.is_set() and places.snapshot() == (1, 0)
    c.abandon()  # granted, then its caller left: the place is given back, once
    c.abandon()
    assert places.snapshot() == (0, 0)


def test_wakers_hear_a_grant_from_the_releasing_thread() -> None:
    places = Places(capacity=1, queue=1)
    held = places.take("a")
    waiting = places.take("b")
    woke = threading.Event()
    waiting.on_grant(woke.set)
    threading.Thread(target=held.release).start()
    assert woke.wait(10) and waiting.granted.is_set()
    done = threading.Event()
    waiting.on_grant(done.set)  # already granted: at once
    assert done.is_set()


def test_an_owner_whose_answer_just_ended_does_not_go_before_one_who_waited() -> None:
    places = Places(capacity=1, queue=4)
    a1 = places.take("a")
    a2, b1 = places.take("a"), places.take("b")  # a's second came first, but b has had no turn
    assert (b1.position, a2.position) == (1, 2)
    a1.release()  # both now have nothing running: the turn goes round to b
    assert b1.granted.is_set() and not a2.granted.is_set()
    b1.release()
    assert a2.granted.is_set()
    a2.release()
    assert places.snapshot() == (0, 0) and not places.served and not places.running  # nothing kept
