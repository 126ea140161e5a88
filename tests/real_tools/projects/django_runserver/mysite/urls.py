from django.http import HttpResponse
from django.urls import path


def index(request):
    return HttpResponse("ok\n")


urlpatterns = [path("", index)]
