"""``python -m pyspark_kinesis``: the JAR's path for spark-submit, the version, or the demo pipeline."""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from ._spark import jar_path
from ._version import __version__


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyspark_kinesis", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    jar = commands.add_parser("jar", help="print the connector JAR's path (for spark-submit --jars)")
    jar.add_argument("--spark-version", help="a Spark version such as 3.5.2 (default: the installed pyspark's)")
    commands.add_parser("version", help="print the version of pyspark-kinesis and of its JARs")
    commands.add_parser("demo", help="run the demo pipeline (python -m pyspark_kinesis.demo --help)", add_help=False)
    args, rest = parser.parse_known_args(argv)
    if args.command == "demo":
        from .demo import main as demo

        return demo(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "jar":
        try:
            print(jar_path(args.spark_version))
        except (ValueError, FileNotFoundError, ImportError) as e:
            print(f"pyspark_kinesis: {e}", file=sys.stderr)
            return 1
    else:
        print(__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
