"""The smallest WSGI app: one page, so a GET answers with a status line."""


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok\n"]
