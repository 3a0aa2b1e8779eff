"""The apps' server processes (``python -m tests.apps.serve django|datasette ...``): each
binds a free loopback port first, prints it on a line of its own, then loads the app and
serves until it is terminated. A request sent as soon as the port is printed waits in the
socket's backlog until the app answers, so the parent needs no polling to know it is up."""

from __future__ import annotations

import asyncio
import socket
import sys


def _listening() -> socket.socket:
    """A socket listening on a free loopback port, whose number is printed."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(sock.getsockname()[1], flush=True)
    return sock


def serve_django() -> None:
    """The travel agency (settings from DJANGO_SETTINGS_MODULE) on Django's threaded WSGI
    server, with the admin's static files served as ``runserver --insecure`` would."""
    import django
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    django.setup()
    server = ThreadedWSGIServer(("127.0.0.1", 0), WSGIRequestHandler)
    server.set_app(StaticFilesHandler(get_wsgi_application()))
    print(server.server_address[1], flush=True)
    server.serve_forever()


def serve_datasette(db_path: str) -> None:
    """Datasette serving the sqlite file ``db_path`` (read-only: the tests only read it)."""
    sock = _listening()
    import uvicorn
    from datasette.app import Datasette

    async def main() -> None:
        ds = Datasette(immutables=[db_path], settings={"sql_time_limit_ms": 5000})
        await ds.invoke_startup()
        config = uvicorn.Config(ds.app(), log_level="warning", lifespan="on")
        await uvicorn.Server(config).serve(sockets=[sock])

    asyncio.run(main())


if __name__ == "__main__":
    if sys.argv[1] == "django":
        serve_django()
    elif sys.argv[1] == "datasette":
        serve_datasette(sys.argv[2])
    else:
        raise SystemExit(f"serve: unknown app {sys.argv[1]!r} (django or datasette)")
