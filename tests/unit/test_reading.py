"""The question read once (graph/reading.py): what it asks for, by its form, whatever the genre."""

from __future__ import annotations

import json

import pytest

from graph.reading import Reading, kind_of, measure_words, read


@pytest.mark.parametrize(("question", "kind"), [
    ("Does the Technical Committee draw up new policy designs itself?", "yes_no"),
    ("As of latexmk 4.74b, is aux-directory emulation switched on by default?", "yes_no"),
    ("Under MPL 2.0, can I distribute covered software under a newer version?", "yes_no"),
    ("When was the very first Debian constitution ratified?", "date"),
    ("What was the exact release date of Debian 6.0?", "date"),
    ("In what year did the pilot obtain a licence?", "date"),
    ("Who is the principal investigator of the sleep hygiene study?", "name"),
    ("In whose memory is this release of the standard dedicated?", "name"),
    ("Which CD vendor accidentally shipped a development release?", "name"),
    ("In which SQLite release were STRICT tables introduced?", "name"),  # "which" after a preposition
    ("On which dungeon level is the Oracle found?", "name"),
    ("In which year was the X Consortium dissolved?", "date"),
    ("How long is a developers' vote normally open for?", "value"),
    ("If I fix my non-compliance, how long until my rights are permanent?", "value"),
    ("What's the most members the committee can have?", "value"),
    ("What was Aurora Widgets' total revenue in fiscal 2023?", "value"),
    ("How did net revenue change from 2021 to 2022, in USD millions?", "value"),
    ("Why did Debian move its binary package format over to ar?", "explanation"),
    ("Why was the mail spool location changed?", "explanation"),
    ("How is the quorum for developer votes calculated?", "explanation"),
    ("List the exclusion criteria of the trial.", "list"),
    ("What does the protocol require of participants?", "other"),
])
def test_what_a_question_asks_for(question: str, kind: str) -> None:
    assert kind_of(question) == kind


def test_the_measure_is_the_questions_own_words() -> None:
    # not names, numbers, months or the asking ("how long")
    assert measure_words("How long is a developers' vote normally open for?") == {"devel", "vote", "norma", "open"}
    assert measure_words("How many homes did Corning have in backlog at the end of 2020?") == {"homes", "backl"}
    assert "corni" not in measure_words("What was Corning's revenue in May 2020?")


def test_a_reading_survives_the_state() -> None:
    reading = read("What was Nike's revenue as of May 31, 2022, in USD millions, rounded to one decimal?")
    assert reading.names == ("Nike",) and reading.period.years == (2022,) and reading.period.day is not None
    assert reading.unit.scale == 1e6 and reading.unit.decimals == 1 and reading.figure
    kept = json.loads(json.dumps(reading.to_state()))  # JSON-safe, as graph/state.py requires
    assert Reading.from_state(kept) == reading


def test_the_things_a_question_numbers() -> None:
    from graph.reading import numbered, same_number

    assert read("How many packages did the official Debian 1.0 release contain?").numbered == (("debian", "1.0"),)
    assert read("When was version 1.4 of the Debian constitution ratified?").numbered == (("version", "1.4"),)
    # a year, a month's day, a code's part and a count are no thing's number
    assert not read("What was 3M's FY 2018 capex per its Form 10-K, in June 2019?").numbered
    assert not numbered("If a vote is canceled more than 13 days after, it contained 474 packages")
    assert same_number("8", "8.0") and same_number("2.2", "2.2r3") and not same_number("1.0", "1.1")
    reading = read("Under MPL 2.0, may I sublicense?")
    assert Reading.from_state(json.loads(json.dumps(reading.to_state()))) == reading
