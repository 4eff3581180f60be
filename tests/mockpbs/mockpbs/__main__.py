"""``python -m mockpbs COMMAND [ARGS...]``: run one mock PBS command (see ``commands``)."""
import os
import sys

from mockpbs import commands


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: python -m mockpbs COMMAND [ARGS...]\n")
        return 2
    name = os.path.basename(sys.argv[1])
    try:
        func = commands.resolve(name)
    except (KeyError, ImportError, AttributeError) as exc:
        sys.stderr.write("mockpbs: no such command %s (%s)\n" % (name, exc))
        return 2
    sys.argv = [name] + sys.argv[2:]
    return func(sys.argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
