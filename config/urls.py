from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/claims/", include("claims.api.urls")),
    path("api/migration/", include("migration.api.urls")),
    path("api/", include("inventory.api.urls")),
    path("claims/", include("claims.urls")),
    path("migration/", include("migration.urls")),
    path("", include("inventory.ops_urls")),
    path("", include("inventory.urls")),
]
