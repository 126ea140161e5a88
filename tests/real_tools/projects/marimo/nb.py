import marimo

__generated_with = "0.25.2"
app = marimo.App()


@app.cell
def _():
    import marimo as mo
    return (mo,)


@app.cell
def _(mo):
    mo.md("# A notebook left open in its editor")
    return


if __name__ == "__main__":
    app.run()
