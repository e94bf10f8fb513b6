import os
import threading

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
application = get_wsgi_application()

if settings.SEARCH_CROSS_LINGUAL_TERMS:
    # The search's dictionary of translations takes about 0.8 s to read: read it beside the first requests of
    # this process rather than inside its first search (each gunicorn worker imports this module after the fork).
    from memory.search.crosslingual import warm_up

    threading.Thread(target=warm_up, name="dictionary-warm-up", daemon=True).start()
