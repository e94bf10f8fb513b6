"""The MCP endpoint's ASGI app (workspace.mcp), served by uvicorn in a process of its own:

    uvicorn config.mcp:application --host 127.0.0.1 --port 8001

`./engram run` starts and supervises it and the web server forwards /api/v1/mcp to it (ENGRAM_MCP_URL);
behind nginx, route /api/v1/mcp to it directly (docker-compose.yml, deploy/nginx.conf). One process: the
sessions of the handshake revisions live in its memory.
"""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
django.setup()

from workspace.mcp import mcp_asgi_app  # noqa: E402

application = mcp_asgi_app()
