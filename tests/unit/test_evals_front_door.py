"""`python -m evals retrieval|answers|load|tools`: every script with a main is behind exactly one of
the commands, and a command runs its script with the arguments as given."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from evals import __main__ as front

EVALS = Path(front.__file__).parent


def scripts_with_a_main() -> set[str]:
    return {p.stem for p in EVALS.glob("*.py")
            if p.stem != "__main__" and re.search(r'^if __name__ == "__main__":', p.read_text(), re.MULTILINE)}


def test_every_script_is_behind_one_command() -> None:
    named = [s for _default, scripts in front.FAMILIES.values() for s in scripts]
    assert len(named) == len(set(named)), "a script is in two families"
    assert set(named) == scripts_with_a_main()
    for default, scripts in front.FAMILIES.values():
        assert default is None or default in scripts


def test_a_command_finds_its_script() -> None:
    assert front.resolve(["retrieval", "--home", "D"]) == ("retrieval", ["--home", "D"])
    assert front.resolve(["retrieval", "cv", "--home", "D"]) == ("cv", ["--home", "D"])
    assert front.resolve(["load"]) == ("loadtest", [])
    assert front.resolve(["answers", "genre", "--resume"]) == ("genre", ["--resume"])
    with pytest.raises(ValueError, match="needs a script"):
        front.resolve(["tools", "--help"])
    with pytest.raises(ValueError, match="name a command"):
        front.resolve(["cv"])  # a script, not a command


def test_the_listing_and_a_dispatched_help(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    assert front.main([]) == 0
    listed = capsys.readouterr().out
    assert "python -m evals tools SCRIPT" in listed and "(default)" in listed
    assert re.search(r"^  cv +Company-grouped cross-validation", listed, re.MULTILINE)
    assert front.main(["tools"]) == 2 and "needs a script" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        front.main(["retrieval", "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("usage: retrieval.py")
    assert sys.argv[0] == "evals/retrieval.py"  # so write_result records the same command as before
