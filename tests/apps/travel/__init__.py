"""A small travel agency administered through the Django admin: trips with a departure date,
a confirmed flag and the travellers on them. Its settings read where to keep the database
from the environment (see :mod:`tests.apps.servers`)."""
