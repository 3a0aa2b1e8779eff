"""Settings of the travel agency: everything it writes lives in ``TRAVEL_DIR`` (a temporary
folder), it answers on loopback only, and it runs as deployed (DEBUG off), its static files
served by the launcher."""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR = Path(os.environ["TRAVEL_DIR"])

# A test fixture's key: nothing it signs outlives the temporary folder.
SECRET_KEY = "handrail-tests-travel-agency-not-a-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "tests.apps.travel",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
ROOT_URLCONF = "tests.apps.travel.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
DATABASES = {
    "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(DATA_DIR / "travel.sqlite3")}
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# One fast hash: the only password is the fixture's own.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Other fixture servers share the host 127.0.0.1 (cookies ignore ports): names of our own.
SESSION_COOKIE_NAME = "travel_session"
CSRF_COOKIE_NAME = "travel_csrftoken"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "/static/"

# With DEBUG off Django logs a server error nowhere by default: write it to stderr, which the
# launcher keeps in a file beside the database.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR"}},
}
