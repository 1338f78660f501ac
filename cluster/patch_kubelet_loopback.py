"""Let kubelet 1.20 accept a loopback --node-ip when an env var says so.

kubelet 1.20's validateNodeIP refuses 127.0.0.1 ("nodeIP can't be loopback address"),
and then publishes no address, so the API server cannot reach it for logs. The cluster
test tier must keep all traffic on 127.0.0.0/8, so the check is lifted behind
PTJOB_KUBELET_LOOPBACK_NODE_IP=1. Idempotent.
"""

import sys
from pathlib import Path

ORIGINAL = "\tif nodeIP.IsLoopback() {\n"
PATCHED = '\tif nodeIP.IsLoopback() && os.Getenv("PTJOB_KUBELET_LOOPBACK_NODE_IP") != "1" {\n'


def main(path: str) -> None:
    source = Path(path)
    text = source.read_text()
    if PATCHED in text:
        return
    if text.count(ORIGINAL) != 1:
        sys.exit(f"{path}: the loopback check is not where kubelet 1.20 has it")
    text = text.replace(ORIGINAL, PATCHED)
    if '\t"os"\n' not in text:
        text = text.replace("import (\n", 'import (\n\t"os"\n', 1)
    source.write_text(text)


if __name__ == "__main__":
    main(sys.argv[1])
