#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    from django.core.management import execute_from_command_line

    from core import rls

    # Commands (seed_demo, shell, ...) act across orgs; a request's thread (runserver) starts unbound.
    rls.use_all_orgs_in_this_context()

    execute_from_command_line(sys.argv)
