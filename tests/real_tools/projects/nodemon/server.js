// A plain HTTP server on the port given as its argument, restarted by nodemon when it changes.
const http = require("http");
const port = Number(process.argv[2]);
http.createServer((req, res) => res.end("ok\n")).listen(port, "127.0.0.1");
