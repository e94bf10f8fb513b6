from .base import *  # noqa: F401,F403

# DEBUG follows ENGRAM_DEBUG (off unless set): `./engram run --dev` turns it on.
