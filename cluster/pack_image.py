"""Pack a root folder as a docker-archive tarball that `ctr images import` takes.

There is no image registry on this machine, so the cluster tier's images (the pod
sandbox's pause image and the job image) are built from Debian's and PyPI's packages
into a folder and packed here: one uncompressed layer, a config, a manifest.
"""

import argparse
import hashlib
import json
import tarfile
import tempfile
from pathlib import Path


def pack(root: Path, ref: str, out: Path, env: list[str], cmd: list[str]) -> None:
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        layer = Path(tmp) / "layer.tar"
        with tarfile.open(layer, "w", format=tarfile.PAX_FORMAT) as tar:
            for entry in sorted(root.iterdir()):
                tar.add(entry, arcname=entry.name)
        digest = hashlib.sha256()
        with layer.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        config = {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Env": env, "Cmd": cmd},
            "rootfs": {"type": "layers", "diff_ids": [f"sha256:{digest.hexdigest()}"]},
        }
        config_bytes = json.dumps(config).encode()
        config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
        manifest = [{"Config": config_name, "RepoTags": [ref], "Layers": ["layer.tar"]}]
        with tarfile.open(out, "w") as tar:
            tar.add(layer, arcname="layer.tar")
            meta = ((config_name, config_bytes), ("manifest.json", json.dumps(manifest).encode()))
            for name, data in meta:
                (Path(tmp) / name).write_bytes(data)
                tar.add(Path(tmp) / name, arcname=name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("ref")
    parser.add_argument("out", type=Path)
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--cmd", nargs="+", default=[])
    args = parser.parse_args()
    pack(args.root, args.ref, args.out, args.env, args.cmd)


if __name__ == "__main__":
    main()
