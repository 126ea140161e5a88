// esbuild's live reload: the page keeps an EventSource on /esbuild open.
new EventSource("/esbuild").addEventListener("change", () => location.reload());
document.body.append("hello from esbuild");
