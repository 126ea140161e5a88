"""The smallest FastAPI app: one page, so a GET answers with a status line."""

from fastapi import FastAPI

app = FastAPI()


@app.get("/")
def index():
    return {"ok": True}
