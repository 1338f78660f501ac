"""``ptjob``: the command line over the shared parser and job model.

Exit status: 0 on success, 2 on invalid input (one line per problem, naming the
flag), 1 on any other failure with a message a person can act on - never a
traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from .arguments import Invocation, UsageError, describe, parse
from .job.errors import JobSpecInvalid
from .job.manifest import build_manifest, manifest_to_yaml
from .job.spec import JobSpec

EXIT_INVALID = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ptjob`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        invocation = parse(args)
    except UsageError as err:
        print(str(err), file=sys.stderr)
        return EXIT_INVALID
    try:
        return _run(invocation)
    except JobSpecInvalid as err:
        for line in describe(err).splitlines():
            print(f"ptjob {invocation.command}: error: {line}", file=sys.stderr)
        return EXIT_INVALID
    except UsageError as err:
        print(str(err), file=sys.stderr)
        return EXIT_INVALID


def _run(invocation: Invocation) -> int:
    if invocation.command == "render":
        spec = JobSpec.from_wire(invocation.job)
        manifest = build_manifest(spec, namespace=invocation.options.namespace)
        if invocation.options.output == "json":
            print(json.dumps(manifest, indent=2))
        else:
            sys.stdout.write(manifest_to_yaml(manifest))
        return 0
    raise UsageError(f"unknown command {invocation.command!r}")  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
