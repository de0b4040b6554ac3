"""Does a stopped run stop the local model's generation when the call does not stream? (issue 41)

With the packaged local model (llama.cpp in this process, through the product's LLM chain), one call
that does not stream is stopped by its StopWatch `--stop-after` seconds in; measured: how long the
chain took to return after the stop, the process's CPU seconds over the `--after` seconds that
follow (llama.cpp's threads: near zero once it cancelled the generation, about its threads' worth
each second if it went on), and how long a short call made right then waits (one slot: it queues
behind a generation that goes on). For scale, the same long call run to its end.

    python evals/local_leave.py --model PATH.gguf [--threads 2] [--max-tokens 300] [--out evals/results/local_leave.md]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answering.stopping import Stopped, StopWatch
from evals.common import write_result
from providers.llm import LLMChain
from providers.local_model import LocalServer, LocalServerConfig
from settings import Settings

LONG = "Write the numbers from 1 to 600 in words, separated by commas, and nothing else."
SHORT = "Say yes."


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--stop-after", type=float, default=3.0)
    parser.add_argument("--after", type=float, default=4.0)
    parser.add_argument("--max-tokens", type=int, default=300)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    server = LocalServer(LocalServerConfig(model_path=args.model, threads=args.threads))
    settings = Settings(llm_order="local", local_llm=True, llm_max_tokens=args.max_tokens, local_llm_timeout_s=600)
    chain = LLMChain(settings, local=lambda: server)
    chain.invoke(SHORT)  # warm

    t0 = time.monotonic()
    full = chain.invoke(LONG)
    full_s = time.monotonic() - t0
    print(f"long call: {full_s:.1f} s", file=sys.stderr)

    flag = threading.Event()
    timer = threading.Timer(args.stop_after, flag.set)
    started = time.monotonic()
    timer.start()
    try:
        chain.invoke(LONG, config={"callbacks": [StopWatch(flag.is_set, every_s=0.05)]})
        outcome = "ran to its end (not stopped)"
    except Stopped:
        outcome = "stopped"
    returned_s = time.monotonic() - started - args.stop_after
    before = cpu_s()
    time.sleep(args.after)
    after_cpu = cpu_s() - before
    t1 = time.monotonic()
    chain.invoke(SHORT)
    next_s = time.monotonic() - t1
    t2 = time.monotonic()
    chain.invoke(SHORT)
    idle_s = time.monotonic() - t2
    server.close()

    measured = {"long_call_s": round(full_s, 1), "long_call_chars": len(full.text), "outcome": outcome,
                "returned_after_stop_s": round(returned_s, 2), "cpu_s_after_stop": round(after_cpu, 2),
                "short_call_right_after_s": round(next_s, 2), "short_call_idle_s": round(idle_s, 2),
                "threads": args.threads, "load_average_at_end": round(os.getloadavg()[0], 1)}
    lines = [
        "# A stopped call that does not stream, on the local model (issue 41)",
        "",
        f"Load {measured['load_average_at_end']:.1f} at the end; llama.cpp threads {args.threads}",
        "",
        "| measure | value |",
        "|---|---|",
        f"| the long call run to its end | {full_s:.1f} s, {len(full.text)} characters |",
        f"| the same call stopped {args.stop_after:g} s in | {outcome}, returned {returned_s:.2f} s after the stop |",
        f"| CPU of the process over the {args.after:g} s after the stop | {after_cpu:.2f} s |",
        f"| a short call right after | {next_s:.2f} s |",
        f"| the same short call again (idle) | {idle_s:.2f} s |",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:  # PATH.md: its .md and .json twin, with the command, machine and commit as every result
        write_result(args.out.stem, measured, text, args.out.parent)

if __name__ == "__main__":
    main()
