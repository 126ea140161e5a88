// The api workspace's own dev server: a plain HTTP server on the port its dev script passes.
const http = require("http");
const port = Number(process.argv[2]);
http.createServer((req, res) => res.end("api ok\n")).listen(port, "127.0.0.1");
