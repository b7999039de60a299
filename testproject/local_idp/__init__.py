"""A local OpenID Connect provider (django-oauth-toolkit) for the tests and the demo.

A standalone Django project, run as its own process with ``python -m testproject.local_idp``
(see ``__main__``). It is never part of the demo's or the tests' INSTALLED_APPS: the relying
party under test must talk to it over HTTP exactly as it would to a real provider.
"""

# Shared by __main__ (which creates the files) and settings (which reads them).
DATA_DIR_ENV = "LOCAL_IDP_DATA_DIR"
# "1": PKCE is optional (`--pkce-optional`); otherwise every authorization needs it.
PKCE_OPTIONAL_ENV = "LOCAL_IDP_PKCE_OPTIONAL"
DB_FILE = "db.sqlite3"
SECRET_KEY_FILE = "secret-key"
RSA_KEY_FILE = "oidc-rsa-private-key.pem"
