from django.contrib.auth import views as auth_views
from django.urls import path

from . import views
from .login_throttle import ThrottledAuthenticationForm

urlpatterns = [
    path("", views.home, name="home"),
    path(
        "login/", auth_views.LoginView.as_view(authentication_form=ThrottledAuthenticationForm), name="login"
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("org/switch/", views.switch_org, name="switch-org"),
    path("projects/", views.project_list, name="project-list"),
    path("projects/<slug:slug>/members/add/", views.member_add, name="project-member-add"),
    path("projects/<slug:slug>/members/<int:pk>/role/", views.member_role, name="project-member-role"),
    path("projects/<slug:slug>/members/<int:pk>/remove/", views.member_remove, name="project-member-remove"),
    path("keys/", views.key_list, name="key-list"),
    path("keys/<int:pk>/revoke/", views.key_revoke, name="key-revoke"),
]
