"""Splits the two shaded connector JARs into what the wheel carries: each Spark line's own entries once, and the
entries both JARs hold byte for byte (the relocated AWS SDK, Netty, Jackson, ..., and the KPL's native daemons) once.

The two assemblies differ only in the connector's classes compiled for Scala 2.12 or 2.13; everything else is the
same bytes, about 45 MB, which a wheel would otherwise store twice (a zip compresses each file on its own, so two
near-identical JARs do not shrink together). Putting a line's JAR and the shared JAR on one classpath gives exactly the
entries of that line's assembly: this tool checks that before it returns.

    python split_jars.py OUT_DIR VERSION ASSEMBLY_2_12 ASSEMBLY_2_13
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from typing import Dict, List, Tuple

#: Entries every JAR carries, also when both lines hold them byte for byte: each JAR states its licence on its own.
EVERY_JAR = ("META-INF/MANIFEST.MF", "META-INF/LICENSE", "META-INF/NOTICE")


def line_jar_name(scala: str, version: str) -> str:
    """The wheel's JAR of one Spark line: the connector's classes for that Scala version."""
    return f"spark-kinesis-connector_{scala}-{version}.jar"


def shared_jar_name(version: str) -> str:
    """The wheel's JAR both lines share: the relocated dependencies and the KPL's native daemons."""
    return f"spark-kinesis-dependencies-{version}.jar"


def _files(jar: zipfile.ZipFile) -> Dict[str, zipfile.ZipInfo]:
    return {info.filename: info for info in jar.infolist() if not info.is_dir()}


def _same(a: zipfile.ZipInfo, b: zipfile.ZipInfo) -> bool:
    return a.CRC == b.CRC and a.file_size == b.file_size


def _write(source: zipfile.ZipFile, names: List[str], target: Path) -> None:
    """Copies the named entries with their folders, dates and file attributes, as the assembly has them."""
    folders = sorted({name[: i + 1] for name in names for i, c in enumerate(name) if c == "/"})
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for folder in folders:
            out.writestr(zipfile.ZipInfo(folder, date_time=(2010, 1, 1, 0, 0, 0)), b"")
        for name in names:
            info = source.getinfo(name)
            copy = zipfile.ZipInfo(name, date_time=info.date_time)
            copy.external_attr = info.external_attr
            copy.compress_type = zipfile.ZIP_DEFLATED
            out.writestr(copy, source.read(name))


def _entries(*jars: Path) -> Dict[str, Tuple[int, int]]:
    joined: Dict[str, Tuple[int, int]] = {}
    for path in jars:
        with zipfile.ZipFile(path) as jar:
            joined.update((n, (i.CRC, i.file_size)) for n, i in _files(jar).items())
    return joined


def split(out_dir: Path, version: str, assemblies: Dict[str, Path]) -> List[Path]:
    """Writes one JAR per Scala version in ``assemblies`` and the shared JAR into ``out_dir``; returns their paths.

    :raises ValueError: when a line's JAR and the shared JAR together do not hold exactly its assembly's entries.
    """
    scalas = sorted(assemblies)
    jars = {scala: zipfile.ZipFile(assemblies[scala]) for scala in scalas}
    try:
        files = {scala: _files(jar) for scala, jar in jars.items()}
        first = files[scalas[0]]
        shared = sorted(n for n in first if all(n in f and _same(first[n], f[n]) for f in files.values()))
        shared_set = set(shared)
        written = [out_dir / shared_jar_name(version)]
        _write(jars[scalas[0]], shared, written[0])
        for scala in scalas:
            own = sorted(n for n in files[scala] if n not in shared_set or n in EVERY_JAR)
            target = out_dir / line_jar_name(scala, version)
            _write(jars[scala], own, target)
            written.append(target)
            expected = {n: (i.CRC, i.file_size) for n, i in files[scala].items()}
            if _entries(target, written[0]) != expected:
                raise ValueError(f"{target.name} with {written[0].name} does not hold {assemblies[scala].name}")
        return written
    finally:
        for jar in jars.values():
            jar.close()


def main(argv: List[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir, version, jar_212, jar_213 = Path(argv[0]), argv[1], Path(argv[2]), Path(argv[3])
    for path in split(out_dir, version, {"2.12": jar_212, "2.13": jar_213}):
        print(f"split_jars.py: {path.name}: {path.stat().st_size / 1e6:.1f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
