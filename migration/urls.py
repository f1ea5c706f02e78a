from django.urls import path

app_name = "migration"
urlpatterns: list = []
