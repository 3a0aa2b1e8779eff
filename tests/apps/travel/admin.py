from __future__ import annotations

from django.contrib import admin

from tests.apps.travel.models import Traveller, Trip


@admin.register(Trip)
class TripAdmin(admin.ModelAdmin):
    list_display = ("destination", "departs", "confirmed")
    list_filter = ("confirmed",)
    search_fields = ("destination",)
    date_hierarchy = "departs"
    filter_horizontal = ("travellers",)


@admin.register(Traveller)
class TravellerAdmin(admin.ModelAdmin):
    list_display = ("name", "email")
    search_fields = ("name",)
