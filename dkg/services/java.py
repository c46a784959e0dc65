"""Java and Maven tooling: version checks, dependency resolution from Maven Central, javac."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from dkg.errors import ConfigError, ServiceError

MIN_JAVA = 17


def _resource(name: str) -> str:
    return resources.files("dkg.services").joinpath("java", name).read_text(encoding="utf-8")


def java_major_version(java_cmd: str) -> int:
    """Return the major version of ``java_cmd``.

    Raises:
        ConfigError: Java is missing or older than 17.
    """
    if shutil.which(java_cmd) is None:
        raise ConfigError(
            f"Java {MIN_JAVA}+ not found (looked for '{java_cmd}'): install openjdk-17-jdk-headless "
            "or set DKG_JAVA_CMD to a java binary"
        )
    out = subprocess.run([java_cmd, "-version"], capture_output=True, text=True, check=False)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        raise ConfigError(f"could not read the version of '{java_cmd}': {out.stderr.strip()[:200]}")
    major = int(match.group(1))
    if major == 1 and match.group(2):  # "1.8" style
        major = int(match.group(2))
    if major < MIN_JAVA:
        raise ConfigError(
            f"Java {major} found at '{java_cmd}', but Neo4j 5.26 needs Java {MIN_JAVA}+: "
            "install openjdk-17-jdk-headless or set DKG_JAVA_CMD"
        )
    return major


def require_tool(cmd: str, what: str, fix: str) -> str:
    """Return the absolute path of ``cmd`` or raise a one-line :class:`ConfigError`."""
    path = shutil.which(cmd)
    if path is None:
        raise ConfigError(f"{what} not found (looked for '{cmd}'): {fix}")
    return path


def resolve_classpath(
    maven_cmd: str, pom_name: str, properties: dict[str, str], work_dir: Path
) -> list[Path]:
    """Resolve a bundled POM's dependencies through Maven and return the jar paths.

    The jars stay in Maven's local repository (fetched once, shared by every checkout);
    the resolved classpath is cached in ``work_dir`` and reused while all jars exist.

    Args:
        maven_cmd: the ``mvn`` executable.
        pom_name: file name of a POM bundled in ``dkg/services/java``.
        properties: Maven properties (e.g. the artifact version) passed as ``-D``.
        work_dir: folder for the rendered POM, the classpath file and the Maven log.

    Raises:
        ServiceError: Maven failed (network, unknown version); the message names the log.
    """
    pom_text = _resource(pom_name)
    key = hashlib.sha256((pom_text + repr(sorted(properties.items()))).encode()).hexdigest()[:12]
    work_dir.mkdir(parents=True, exist_ok=True)
    cp_file = work_dir / f"classpath-{key}.txt"
    if cp_file.exists():
        jars = [Path(p) for p in cp_file.read_text().strip().split(":") if p]
        if jars and all(j.exists() for j in jars):
            return jars
    require_tool(maven_cmd, "Maven", "install maven (apt-get install maven) or set DKG_MAVEN_CMD")
    pom = work_dir / "pom.xml"
    pom.write_text(pom_text, encoding="utf-8")
    log = work_dir / "maven.log"
    cmd = [maven_cmd, "-B", "-q", "-f", str(pom), "dependency:build-classpath",
           f"-Dmdep.outputFile={cp_file}"]
    cmd += [f"-D{k}={v}" for k, v in properties.items()]
    with open(log, "w", encoding="utf-8") as fh:
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0 or not cp_file.exists():
        errors = [ln for ln in log.read_text(errors="replace").splitlines() if "ERROR" in ln]
        first = errors[0].replace("[ERROR]", "").strip() if errors else "no detail"
        raise ServiceError(
            f"Maven could not fetch the jars for {pom_name} {properties} ({first[:300]}); "
            f"check access to Maven Central, full log: {log}"
        )
    return [Path(p) for p in cp_file.read_text().strip().split(":") if p]


def compile_launcher(java_cmd: str, source_name: str, classpath: list[Path], out_root: Path) -> Path:
    """Compile a bundled single-file Java launcher once; return its class folder."""
    source = _resource(source_name)
    key = hashlib.sha256(source.encode()).hexdigest()[:12]
    out = out_root / key
    cls_name = source_name.removesuffix(".java") + ".class"
    if (out / cls_name).exists():
        return out
    javac = str(Path(shutil.which(java_cmd) or java_cmd).resolve().with_name("javac"))
    if not Path(javac).exists():
        javac = require_tool("javac", "javac (a JDK)", "install openjdk-17-jdk-headless")
    src_dir = out_root / f"src-{key}"
    src_dir.mkdir(parents=True, exist_ok=True)
    (src_dir / source_name).write_text(source, encoding="utf-8")
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [javac, "-cp", ":".join(map(str, classpath)), "-d", str(out), str(src_dir / source_name)],
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise ServiceError(f"javac failed on {source_name}: {proc.stderr.strip()[:400]}")
    return out
