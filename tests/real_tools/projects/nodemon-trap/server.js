// A plain HTTP server on the port given as its argument that ignores SIGTERM (a developer's
// "graceful shutdown" that never ends); nodemon takes it down itself when it is stopped.
const http = require("http");
const port = Number(process.argv[2]);
process.on("SIGTERM", () => console.log("SIGTERM ignored"));
http.createServer((req, res) => res.end("ok\n")).listen(port, "127.0.0.1");
