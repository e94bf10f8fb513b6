from rest_framework.pagination import CursorPagination


class CreatedCursorPagination(CursorPagination):
    """Newest first, stable under inserts; page_size up to 500, every row reachable by cursor."""

    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


class IdCursorPagination(CreatedCursorPagination):
    ordering = ("-id",)
