#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""
import os
import sys
import threading


def main():
    """Run administrative tasks."""
    os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings')
    try:
        from django.core.management import execute_from_command_line
    except ImportError as exc:
        raise ImportError(
            "Couldn't import Django. Are you sure it's installed and "
            "available on your PYTHONPATH environment variable? Did you "
            "forget to activate a virtual environment?"
        ) from exc
    code = 0
    try:
        execute_from_command_line(sys.argv)
    except SystemExit as exc:
        code = exc.code
    _exit(code)


def _exit(code):
    """End the process without freeing what it holds object by object: a command that held a
    whole cluster model (``sync_cluster``) spends seconds on that (5,000 nodes: 3.6 s of a
    13 s command); the operating system takes the memory back at once. Output, logs and
    database connections are closed first. A process with other threads still running ends
    the usual way (they are joined)."""
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    code = 0 if code is None else code
    if any(t is not threading.main_thread() and not t.daemon for t in threading.enumerate()):
        sys.exit(code)
    import logging

    from django.db import connections

    connections.close_all()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code if isinstance(code, int) else 1)


if __name__ == '__main__':
    main()
