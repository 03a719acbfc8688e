#!/usr/bin/env python3
"""Summarises a JFR recording's CPU samples: the methods most samples stand in (top frame, "self"), and the
methods most samples pass through (anywhere on the stack, "total"), each as a share of all samples.

    jfr print --events jdk.ExecutionSample rec.jfr | bench/jfr-top.py [--top 25] [--match io.github.sparkkinesis]

--match limits the "total" table to frames whose method contains the text (the connector's own methods, say).
--within keeps only the samples with a frame whose method contains the text (one decoder's work, say), and counts
shares of those.
"""

import argparse
import collections
import re
import sys

FRAME = re.compile(r"^\s+([\w$.<>/]+)\(.*\)\s+line:")


def samples(lines):
    """Yields each sample's stack, top frame first."""
    stack, in_stack = [], False
    for line in lines:
        if line.startswith("jdk.ExecutionSample"):
            if stack:
                yield stack
            stack, in_stack = [], False
        elif "stackTrace = [" in line:
            in_stack = True
        elif in_stack:
            match = FRAME.match(line)
            if match:
                stack.append(match.group(1))
            elif line.strip() == "]":
                in_stack = False
    if stack:
        yield stack


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--match", default="io.github.sparkkinesis")
    parser.add_argument("--within", default="")
    args = parser.parse_args()
    own, through, count = collections.Counter(), collections.Counter(), 0
    for stack in samples(sys.stdin):
        if args.within and not any(args.within in method for method in stack):
            continue
        count += 1
        own[stack[0]] += 1
        for method in set(stack):
            if args.match in method:
                through[method] += 1
    if count == 0:
        sys.exit("jfr-top: no jdk.ExecutionSample events on stdin" + (f" within {args.within}" if args.within else ""))
    print(f"{count} samples (JFR's stacks are cut at 64 frames)")
    print("self (top frame):")
    for method, n in own.most_common(args.top):
        print(f"  {100.0 * n / count:5.1f}%  {method}")
    print(f"total (anywhere on the stack, methods matching '{args.match}'):")
    for method, n in through.most_common(args.top):
        print(f"  {100.0 * n / count:5.1f}%  {method}")


if __name__ == "__main__":
    main()
