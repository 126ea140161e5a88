"""The smallest Flask app: one page, so a GET answers with a status line."""

from flask import Flask

app = Flask(__name__)


@app.get("/")
def index():
    return "ok\n"
