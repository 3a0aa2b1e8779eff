from django.apps import AppConfig


class TravelConfig(AppConfig):
    name = "tests.apps.travel"
    label = "travel"
    verbose_name = "Travel agency"
