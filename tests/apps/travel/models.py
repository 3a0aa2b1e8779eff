from __future__ import annotations

from django.db import models


class Traveller(models.Model):
    name = models.CharField(max_length=100, unique=True)
    email = models.EmailField(blank=True)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


class Trip(models.Model):
    destination = models.CharField(max_length=100)
    departs = models.DateField("departure date")
    confirmed = models.BooleanField(default=False)
    travellers = models.ManyToManyField(Traveller, blank=True, related_name="trips")

    class Meta:
        ordering = ("departs", "destination")

    def __str__(self) -> str:
        return f"{self.destination} ({self.departs:%d %b %Y})"
