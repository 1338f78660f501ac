"""Write the declarations the field and message tables generate (``make fields``):
``JobBody`` in api/openapi.yaml, ``IJobBody`` in src/tokens.ts, ``SERVER_MESSAGES`` in
src/servermessages.ts."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jupyter_pytorchjob.job.wire_types import GENERATED, with_generated  # noqa: E402


def main() -> None:
    for path, comment, generate in GENERATED:
        file = ROOT / path
        text = file.read_text(encoding="utf-8")
        new = with_generated(text, comment, generate())
        if new != text:
            file.write_text(new, encoding="utf-8")
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
