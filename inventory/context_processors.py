from .models import Cluster


def clusters(request):
    """Cluster names for the cluster switcher in the header (one small query, lazily)."""
    return {"all_clusters": Cluster.objects.only("name").order_by("name")}
