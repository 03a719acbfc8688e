"""``python -m pyspark_kinesis``: the JARs for spark-submit, the version, what this release supports, the demo, or the
fan-out consumers tool."""

from __future__ import annotations

import argparse
import platform
import sys
from typing import List, Optional

from ._compat import PYTHON_VERSIONS, SPARK_LINES
from ._spark import jar_path, jar_paths
from ._version import __version__


def info() -> str:
    """The package's version, the JARs it attaches to the installed pyspark (if any), and what it supports."""
    lines = [f"pyspark-kinesis {__version__}", f"Python {platform.python_version()} ({sys.executable})"]
    try:
        import pyspark

        lines.append(f"pyspark {pyspark.__version__}: attaches {', '.join(jar_paths(pyspark.__version__))}")
    except ImportError:
        lines.append("pyspark: not installed in this environment")
    except (ValueError, FileNotFoundError) as e:
        lines.append(f"pyspark: {e}")
    lines.append("Supported (Spark | Scala | Java | Python | tested on):")
    python = f"{PYTHON_VERSIONS[0]} - {PYTHON_VERSIONS[-1]}"
    for line in SPARK_LINES:
        java = ", ".join(line.java)
        lines.append(f"  Spark {line.spark} | Scala {line.scala} | Java {java} | {python} | {line.tested}")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyspark_kinesis", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    jar = commands.add_parser("jar", help="print the connector's JARs, comma-separated (for spark-submit --jars)")
    jar.add_argument("--spark-version", help="a Spark version such as 3.5.2 (default: the installed pyspark's)")
    commands.add_parser("version", help="print the version of pyspark-kinesis and of its JARs")
    commands.add_parser("info", help="print the version, the JARs for the installed pyspark, what is supported")
    commands.add_parser("demo", help="run the demo pipeline (python -m pyspark_kinesis.demo --help)", add_help=False)
    commands.add_parser(
        "consumers",
        help="list a stream's fan-out consumers and which query holds each, or prune those none holds "
        "(python -m pyspark_kinesis consumers --help)",
        add_help=False,
    )
    args, rest = parser.parse_known_args(argv)
    if args.command == "demo":
        from .demo import main as demo

        return demo(rest)
    if args.command == "consumers":
        from ._consumers import run

        return run(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "jar":
        try:
            print(jar_path(args.spark_version))
        except (ValueError, FileNotFoundError, ImportError) as e:
            print(f"pyspark_kinesis: {e}", file=sys.stderr)
            return 1
    elif args.command == "info":
        print(info())
    else:
        print(__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
